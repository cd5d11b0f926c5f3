"""NAdam (Adam with Nesterov momentum), with momentum decay, decoupled weight decay and
maximize."""

from .._tensor import Tensor
from ..backend import get_array_module
from .adam import _adam_moments
from .optimizer import (Optimizer, _bump, _check_adam_args, _check_lr, _count_step,
                        _scalar, _scalar_keep_dtype, _step_tensor,
                        _zeros_like)

__all__ = ["NAdam", "nadam_update"]


def nadam_update(param, grad, state, group):
    """One parameter's NAdam step, in PyTorch's order of operations::

        step += 1;  g = -grad if maximize else grad
        param *= 1 - lr * weight_decay (decoupled) or g = g + weight_decay * param
        mu = beta1 * (1 - 0.96 ** (step * momentum_decay) / 2);  mu_next likewise at step + 1
        mu_product *= mu  (in the step counter's dtype, as PyTorch keeps it)
        exp_avg.lerp_(g, 1 - beta1);  exp_avg_sq = beta2 * exp_avg_sq + (1 - beta2) * g * g
        denom = sqrt(exp_avg_sq / (1 - beta2**step)) + eps
        param -= lr * (1 - mu) / (1 - mu_product) * g / denom
        param -= lr * mu_next / (1 - mu_product * mu_next) * exp_avg / denom
    """
    beta1, beta2 = group["betas"]
    beta1, beta2 = _scalar(beta1), _scalar(beta2)
    lr, md = _scalar_keep_dtype(group["lr"]), group["momentum_decay"]
    step = float(_count_step(state)._data)
    mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * md)))
    mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * md)))
    mu_product_t = state["mu_product"]
    mu_product_t._data *= mu
    mu_product = float(mu_product_t._data)
    xp = get_array_module(param._data)
    p, g, m, v, denom = _adam_moments(xp, param, grad, state, group, lr, beta1, beta2)
    xp.divide(v, 1 - beta2 ** step, out=denom)
    xp.sqrt(denom, out=denom)
    denom += group["eps"]
    tmp = xp.multiply(g, -lr * (1.0 - mu) / (1.0 - mu_product), out=xp.empty_like(m))
    tmp /= denom
    p += tmp
    xp.multiply(m, -lr * mu_next / (1.0 - mu_product * mu_next), out=tmp)
    tmp /= denom
    p += tmp
    _bump(param, state["exp_avg"], state["exp_avg_sq"], mu_product_t)


class NAdam(Optimizer):
    """NAdam, as ``torch.optim.NAdam`` (``decoupled_weight_decay=True`` is NAdamW).

    >>> opt = retrograd.optim.NAdam(params, lr=2e-3, momentum_decay=4e-3)
    """

    _update = staticmethod(nadam_update)
    _group_defaults = (("maximize", False), ("foreach", None), ("capturable", False),
                       ("differentiable", False), ("decoupled_weight_decay", False))
    _has_step = True

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 momentum_decay=4e-3, decoupled_weight_decay=False, *, foreach=None,
                 maximize=False, capturable=False, differentiable=False):
        _check_lr(lr)
        _check_adam_args(betas, eps, weight_decay)
        if not 0.0 <= momentum_decay:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "momentum_decay": momentum_decay,
                    "decoupled_weight_decay": decoupled_weight_decay, "maximize": maximize,
                    "foreach": foreach, "capturable": capturable,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            for p in group["params"]:
                p_state = self.state.get(p, [])
                if len(p_state) != 0 and not isinstance(p_state["mu_product"], Tensor):
                    p_state["mu_product"] = _step_tensor(float(p_state["mu_product"]))

    def _init_state(self, p, group):
        state = self.state[p]
        if len(state) == 0:
            state["step"] = _step_tensor()
            state["mu_product"] = _step_tensor(1.0)
            state["exp_avg"] = _zeros_like(p)
            state["exp_avg_sq"] = _zeros_like(p)
        return state

    def _check_group(self, group):
        if group.get("capturable") and not group.get("differentiable"):
            raise AssertionError("If capturable=True, params, mu_products and state_steps must "
                                 "be on supported devices: ['cuda', 'xpu', 'hpu', "
                                 "'privateuseone', 'xla'].")
        super()._check_group(group)

    def step(self, closure=None):
        """Perform one optimization step; ``closure`` re-evaluates the loss."""
        return self._run_step(closure)

