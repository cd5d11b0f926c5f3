"""Adadelta, with weight decay and maximize."""

from ..backend import get_array_module
from ..backend.functions import functions
from .optimizer import (Optimizer, _bump, _check_lr, _count_step, _directed_grad, _real,
                        _scalar, _step_tensor, _zeros_like)

__all__ = ["Adadelta", "adadelta_update"]


def adadelta_update(param, grad, state, group):
    """One parameter's Adadelta step, in PyTorch's order of operations::

        step += 1;  g = -grad if maximize else grad;  g = g + weight_decay * param
        square_avg = rho * square_avg + (1 - rho) * g * g
        delta = sqrt(acc_delta + eps) / sqrt(square_avg + eps) * g
        acc_delta = rho * acc_delta + (1 - rho) * delta * delta;  param -= lr * delta

    Two temporaries the size of the parameter (three with maximize or weight decay).
    """
    rho, eps = group["rho"], group["eps"]
    lr = _scalar(group["lr"])
    p, g = param._data, grad._data
    xp = get_array_module(p)
    _count_step(state)
    g = _directed_grad(p, g, group["maximize"], group["weight_decay"])
    square_avg, acc_delta = state["square_avg"], state["acc_delta"]
    sq, acc, p, g = _real(square_avg._data), _real(acc_delta._data), _real(p), _real(g)
    sq *= rho
    std = xp.multiply(g, 1 - rho, out=xp.empty_like(sq))  # (0-d inputs give no array)
    functions(xp).fused_mul_add(std, g, sq, out=sq)  # (addcmul_)
    xp.add(sq, eps, out=std)
    xp.sqrt(std, out=std)
    delta = xp.add(acc, eps, out=xp.empty_like(acc))
    xp.sqrt(delta, out=delta)
    delta /= std
    delta *= g
    acc *= rho
    xp.multiply(delta, 1 - rho, out=std)
    functions(xp).fused_mul_add(std, delta, acc, out=acc)
    functions(xp).fused_mul_add(delta, -lr, p, out=p)
    _bump(param, square_avg, acc_delta)


class Adadelta(Optimizer):
    """Adadelta, as ``torch.optim.Adadelta``.

    >>> opt = retrograd.optim.Adadelta(params, lr=1.0, rho=0.9)
    """

    _update = staticmethod(adadelta_update)
    _group_defaults = (("foreach", None), ("maximize", False), ("differentiable", False),
                       ("capturable", False))
    _has_step = True

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *,
                 capturable=False, maximize=False, differentiable=False):
        _check_lr(lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "rho": rho, "eps": eps, "weight_decay": weight_decay,
                    "maximize": maximize, "capturable": capturable, "foreach": foreach,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def _init_state(self, p, group):
        state = self.state[p]
        if len(state) == 0:
            state["step"] = _step_tensor()
            state["square_avg"] = _zeros_like(p)
            state["acc_delta"] = _zeros_like(p)
        return state

    def _check_group(self, group):
        if group.get("capturable") and not group.get("differentiable"):
            raise AssertionError("If capturable=True, params and state_steps must be on "
                                 "supported devices: ['cuda', 'xpu', 'hpu', 'privateuseone'].")
        super()._check_group(group)

    def step(self, closure=None):
        """Perform one optimization step; ``closure`` re-evaluates the loss."""
        return self._run_step(closure)
