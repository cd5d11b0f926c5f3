"""Adamax (Adam with the infinity norm), with weight decay and maximize."""

from ..backend import get_array_module
from .adam import _lerp_into
from .optimizer import (Optimizer, _bump, _check_adam_args, _check_lr, _count_step,
                        _directed_grad, _real, _scalar, _scalar_keep_dtype, _step_tensor,
                        _zeros_like)

__all__ = ["Adamax", "adamax_update"]


def adamax_update(param, grad, state, group):
    """One parameter's Adamax step, in PyTorch's order of operations::

        step += 1;  g = -grad if maximize else grad;  g = g + weight_decay * param
        exp_avg.lerp_(g, 1 - beta1);  exp_inf = max(beta2 * exp_inf, |g| + eps)
        param -= lr / (1 - beta1**step) * exp_avg / exp_inf

    One temporary the size of the parameter (two with maximize or weight decay).
    """
    beta1, beta2 = group["betas"]
    beta1, beta2 = _scalar(beta1), _scalar(beta2)
    lr = _scalar_keep_dtype(group["lr"])
    p, g = param._data, grad._data
    xp = get_array_module(p)
    step = float(_count_step(state)._data)
    g = _directed_grad(p, g, group["maximize"], group["weight_decay"])
    exp_avg, exp_inf = state["exp_avg"], state["exp_inf"]
    m, u, p, g = _real(exp_avg._data), _real(exp_inf._data), _real(p), _real(g)
    tmp = xp.subtract(g, m, out=xp.empty_like(m))  # (0-d inputs give no array)
    _lerp_into(xp, m, g, tmp, 1 - beta1)
    u *= beta2
    xp.abs(g, out=tmp)
    tmp += group["eps"]
    xp.maximum(u, tmp, out=u)
    p += xp.divide(xp.multiply(m, -lr / (1 - beta1 ** step)), u, out=tmp)  # (addcdiv_)
    _bump(param, exp_avg, exp_inf)


class Adamax(Optimizer):
    """Adamax, as ``torch.optim.Adamax``.

    >>> opt = retrograd.optim.Adamax(params, lr=2e-3)
    """

    _update = staticmethod(adamax_update)
    _group_defaults = (("foreach", None), ("maximize", False), ("differentiable", False),
                       ("capturable", False))
    _has_step = True

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 foreach=None, *, maximize=False, differentiable=False, capturable=False):
        _check_lr(lr)
        _check_adam_args(betas, eps, weight_decay)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable, "capturable": capturable}
        super().__init__(params, defaults)

    def _init_state(self, p, group):
        state = self.state[p]
        if len(state) == 0:
            state["step"] = _step_tensor()
            state["exp_avg"] = _zeros_like(p)
            state["exp_inf"] = _zeros_like(p)
        return state

    def step(self, closure=None):
        """Perform one optimization step; ``closure`` re-evaluates the loss."""
        return self._run_step(closure)
