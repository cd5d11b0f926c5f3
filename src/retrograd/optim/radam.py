"""RAdam (Adam with the variance of the adaptive rate rectified), with decoupled weight
decay and maximize."""

from ..backend import get_array_module
from .adam import _adam_moments
from .optimizer import (Optimizer, _bump, _check_adam_args, _check_lr, _count_step,
                        _scalar, _step_tensor, _zeros_like)

__all__ = ["RAdam", "radam_update"]


def radam_update(param, grad, state, group):
    """One parameter's RAdam step, in PyTorch's order of operations::

        step += 1;  g = -grad if maximize else grad
        param *= 1 - lr * weight_decay (decoupled) or g = g + weight_decay * param
        exp_avg.lerp_(g, 1 - beta1);  exp_avg_sq = beta2 * exp_avg_sq + (1 - beta2) * g * g
        rho_inf = 2 / (1 - beta2) - 1;  rho = rho_inf - 2 step beta2**step / (1 - beta2**step)
        rho > 5:  param -= lr * exp_avg / (1 - beta1**step) * rect
                           * sqrt(1 - beta2**step) / (sqrt(exp_avg_sq) + eps)
        else:     param -= lr * exp_avg / (1 - beta1**step)

    with ``rect = sqrt((rho - 4)(rho - 2) rho_inf / ((rho_inf - 4)(rho_inf - 2) rho))``.
    One temporary the size of the parameter (two with maximize or coupled weight decay).
    """
    beta1, beta2 = group["betas"]
    beta1, beta2 = _scalar(beta1), _scalar(beta2)
    lr = _scalar(group["lr"])
    step = float(_count_step(state)._data)
    xp = get_array_module(param._data)
    p, _, m, v, tmp = _adam_moments(xp, param, grad, state, group, lr, beta1, beta2)
    bias_correction1 = 1 - beta1 ** step
    bias_correction2 = 1 - beta2 ** step
    rho_inf = 2 / (1 - beta2) - 1
    rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
    step_ = xp.multiply(xp.divide(m, bias_correction1), lr)  # PyTorch's order of operations
    if rho_t > 5.0:
        rect = ((rho_t - 4) * (rho_t - 2) * rho_inf
                / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
        xp.sqrt(v, out=tmp)
        tmp += group["eps"]
        step_ *= xp.divide(bias_correction2 ** 0.5, tmp, out=tmp)
        step_ *= rect
    p -= step_
    _bump(param, state["exp_avg"], state["exp_avg_sq"])


class RAdam(Optimizer):
    """RAdam, as ``torch.optim.RAdam`` (``decoupled_weight_decay=True`` is RAdamW).

    >>> opt = retrograd.optim.RAdam(params, lr=1e-3)
    """

    _update = staticmethod(radam_update)
    _group_defaults = (("foreach", None), ("maximize", False), ("differentiable", False),
                       ("decoupled_weight_decay", False), ("capturable", False))
    _has_step = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False,
                 capturable=False, differentiable=False):
        _check_lr(lr)
        _check_adam_args(betas, eps, weight_decay)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "maximize": maximize, "foreach": foreach, "capturable": capturable,
                    "decoupled_weight_decay": decoupled_weight_decay,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def _init_state(self, p, group):
        state = self.state[p]
        if len(state) == 0:
            state["step"] = _step_tensor()
            state["exp_avg"] = _zeros_like(p)
            state["exp_avg_sq"] = _zeros_like(p)
        return state

    def step(self, closure=None):
        """Perform one optimization step; ``closure`` re-evaluates the loss."""
        return self._run_step(closure)
