"""Stochastic gradient descent, with momentum, dampening, Nesterov momentum, weight decay."""

from ..backend import get_array_module
from ..backend.functions import functions
from .optimizer import (Optimizer, _bump, _check_fused, _check_lr, _directed_grad, _new_state,
                        _scalar)

__all__ = ["SGD", "sgd_update"]


def sgd_update(param, grad, state, group):
    """One parameter's SGD step, in PyTorch's order of operations::

        g = -grad if maximize else grad;  g = g + weight_decay * param
        buf = g (first step) or momentum * buf + (1 - dampening) * g
        g = g + momentum * buf (nesterov) or buf;  param -= lr * g

    each ``x + a * y`` an fma, as PyTorch's ``add`` with an alpha computes it.
    """
    p, g = param._data, grad._data
    xp = get_array_module(p)
    wd, momentum = group["weight_decay"], group["momentum"]
    lr = _scalar(group["lr"])
    g = _directed_grad(p, g, group["maximize"], wd)
    owned = g is not grad._data  # a temporary this function may overwrite
    if momentum != 0:
        buf = state.get("momentum_buffer")
        if buf is None:
            buf = _new_state(g if owned else g.copy())
            state["momentum_buffer"] = buf
        else:
            b = buf._data
            b *= momentum
            dampening = group["dampening"]
            if dampening != 0:
                functions(xp).fused_mul_add(g, 1 - dampening, b, out=b)
            else:
                b += g
            _bump(buf)
        g = functions(xp).fused_mul_add(buf._data, momentum, g) if group["nesterov"] else buf._data
    functions(xp).fused_mul_add(g, -lr, p, out=p)
    _bump(param)


class SGD(Optimizer):
    """Stochastic gradient descent (optionally with momentum), as ``torch.optim.SGD``.

    >>> opt = retrograd.optim.SGD([w], lr=0.1, momentum=0.9)
    """

    _update = staticmethod(sgd_update)
    _group_defaults = (("nesterov", False), ("maximize", False), ("foreach", None),
                       ("differentiable", False), ("fused", False))

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0,
                 nesterov=False, *, maximize=False, foreach=None, differentiable=False,
                 fused=None):
        _check_lr(lr)
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "momentum": momentum, "dampening": dampening,
                    "weight_decay": weight_decay, "nesterov": nesterov, "maximize": maximize,
                    "foreach": foreach, "differentiable": differentiable, "fused": fused}
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)
        _check_fused(fused, foreach, differentiable)

    def _init_state(self, p, group):
        return self.state[p] if group["momentum"] != 0 else _NO_STATE

    def step(self, closure=None):
        """Perform one optimization step; ``closure`` re-evaluates the loss."""
        return self._run_step(closure)


_NO_STATE = {}  # SGD without momentum keeps no state (and, as PyTorch, no empty entries)
