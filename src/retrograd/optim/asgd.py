"""ASGD (averaged stochastic gradient descent), with weight decay and maximize."""

from .. import _dtype
from .._tensor import Tensor
from ..backend import get_array_module
from ..backend.functions import functions
from .optimizer import (Optimizer, _bump, _check_lr, _count_step, _directed_grad, _real,
                        _scalar, _step_tensor, _zeros_like)

__all__ = ["ASGD", "asgd_update"]


def asgd_update(param, grad, state, group):
    """One parameter's ASGD step, in PyTorch's order of operations::

        step += 1;  g = -grad if maximize else grad;  g = g + weight_decay * param
        param *= 1 - lambd * eta;  param -= eta * g
        ax += mu * (param - ax)  (ax = param while mu is 1)
        eta = lr / (1 + lambd * lr * step) ** alpha;  mu = 1 / max(1, step - t0)

    ``eta`` and ``mu`` are 0-d tensors, as PyTorch keeps them. ``foreach=True`` runs the
    arithmetic of PyTorch's multi-tensor ASGD, which differs from its one-at-a-time form
    (``param -= eta * (g + lambd * param)``, ``ax`` always averaged, ``eta`` computed in
    the step's dtype), so that either matches PyTorch's with the same option.
    """
    lambd, lr = group["lambd"], _scalar(group["lr"])
    step_t = _count_step(state)
    eta_t, mu_t, ax_t = state["eta"], state["mu"], state["ax"]
    p = param._data
    xp = get_array_module(p)
    g = _real(_directed_grad(p, grad._data, group["maximize"], group["weight_decay"]))
    p, ax = _real(p), _real(ax_t._data)
    eta, mu = float(eta_t._data), float(mu_t._data)
    foreach = group["foreach"]
    if foreach:  # PyTorch's multi-tensor arithmetic: param -= eta * (g + lambd * param)
        t = xp.multiply(p, lambd, out=xp.empty_like(p))
        t += g
        t *= eta
        p -= t
    else:
        p *= 1 - lambd * eta
        functions(xp).fused_mul_add(g, -eta, p, out=p)
    if foreach or mu != 1:
        t = xp.subtract(p, ax, out=xp.empty_like(ax))
        t *= mu
        ax += t
    else:
        xp.copyto(ax, p)
    step = float(step_t._data)
    if foreach:  # eta in the step's dtype, as PyTorch's ``lr / tensor`` (``1 / t * lr``)
        eta_t._data[()] = xp.reciprocal((1 + lambd * lr * step_t._data[()])
                                        ** group["alpha"]) * lr
    else:  # in Python floats, made a tensor of the default dtype, then copied
        eta_t._data[()] = _as_default(lr / ((1 + lambd * lr * step) ** group["alpha"]))
    mu_t._data[()] = _as_default(1 / max(1, step - group["t0"]))
    _bump(param, ax_t, eta_t, mu_t)


def _as_default(x):
    """``x`` rounded as ``torch.as_tensor(x)`` rounds it (to the default dtype): a state
    loaded in float64 still gets values of that precision, as PyTorch's does."""
    dt = (_dtype.float64 if _dtype.get_default_dtype() is _dtype.float64
          else _dtype.float32).np
    return dt.type(x)


class ASGD(Optimizer):
    """Averaged SGD, as ``torch.optim.ASGD``; the average is ``state[p]["ax"]``.

    >>> opt = retrograd.optim.ASGD(params, lr=1e-2, t0=100)
    """

    _update = staticmethod(asgd_update)
    _group_defaults = (("foreach", None), ("maximize", False), ("differentiable", False),
                       ("capturable", False))
    _has_step = True

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0,
                 foreach=None, maximize=False, differentiable=False, capturable=False):
        _check_lr(lr)
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "lambd": lambd, "alpha": alpha, "t0": t0,
                    "weight_decay": weight_decay, "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable, "capturable": capturable}
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            for p in group["params"]:
                p_state = self.state.get(p, [])
                for key in ("eta", "mu") if len(p_state) != 0 else ():
                    if not isinstance(p_state[key], Tensor):
                        p_state[key] = _step_tensor(float(p_state[key]), device=p.device)

    def _init_state(self, p, group):
        state = self.state[p]
        if len(state) == 0:
            state["step"] = _step_tensor(device=p.device)
            state["eta"] = _step_tensor(_scalar(group["lr"]), device=p.device)
            state["mu"] = _step_tensor(1.0, device=p.device)
            state["ax"] = _zeros_like(p)
        return state

    def _check_group(self, group):
        if group.get("capturable") and not group.get("differentiable"):
            raise AssertionError("If capturable=True, params, mus, etas, and state_steps must "
                                 "be on supported devices: ['cuda', 'xpu', 'hpu', "
                                 "'privateuseone', 'xla'].")
        super()._check_group(group)

    def step(self, closure=None):
        """Perform one optimization step; ``closure`` re-evaluates the loss."""
        return self._run_step(closure)
