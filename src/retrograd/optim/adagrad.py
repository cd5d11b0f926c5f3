"""Adagrad, with learning-rate decay, weight decay and maximize."""

from ..backend import get_array_module
from ..backend.functions import functions
from .optimizer import (Optimizer, _bump, _check_fused, _check_lr, _count_step, _directed_grad,
                        _new_state, _real, _scalar, _step_tensor)

__all__ = ["Adagrad", "adagrad_update"]


def adagrad_update(param, grad, state, group):
    """One parameter's Adagrad step, in PyTorch's order of operations::

        step += 1;  g = -grad if maximize else grad;  g = g + weight_decay * param
        clr = lr / (1 + (step - 1) * lr_decay);  sum += g * g
        param -= clr * g / (sqrt(sum) + eps)
    """
    lr, wd = _scalar(group["lr"]), group["weight_decay"]
    p, g = param._data, grad._data
    xp = get_array_module(p)
    step_t = _count_step(state)
    g = _directed_grad(p, g, group["maximize"], wd)
    clr = lr / (1 + (float(step_t._data) - 1) * group["lr_decay"])
    state_sum = state["sum"]
    s, p, g = _real(state_sum._data), _real(p), _real(g)
    functions(xp).fused_mul_add(g, g, s, out=s)  # (addcmul_ of value 1)
    tmp = xp.sqrt(s, out=xp.empty_like(s))
    tmp += group["eps"]
    p += xp.divide(xp.multiply(g, -clr), tmp, out=tmp)  # (addcdiv_'s order)
    _bump(param, state_sum)


def _full_like(p, value):
    d = p._data
    if d.dtype.kind == "c":
        value = complex(value, value)
    xp = get_array_module(d)
    return _new_state(xp.full_like(d, value))


class Adagrad(Optimizer):
    """Adagrad, as ``torch.optim.Adagrad`` (its state is made for every parameter at
    construction, as PyTorch makes it).

    >>> opt = retrograd.optim.Adagrad(params, lr=1e-2)
    """

    _update = staticmethod(adagrad_update)
    _group_defaults = (("foreach", None), ("maximize", False), ("differentiable", False),
                       ("fused", None))
    _has_step = True

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0,
                 initial_accumulator_value=0, eps=1e-10, foreach=None, *, maximize=False,
                 differentiable=False, fused=None):
        _check_lr(lr)
        if not 0.0 <= lr_decay:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= initial_accumulator_value:
            raise ValueError(f"Invalid initial_accumulator_value value: "
                             f"{initial_accumulator_value}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        defaults = {"lr": lr, "lr_decay": lr_decay, "eps": eps, "weight_decay": weight_decay,
                    "initial_accumulator_value": initial_accumulator_value,
                    "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable, "fused": fused}
        super().__init__(params, defaults)
        _check_fused(fused, foreach, differentiable)
        for group in self.param_groups:
            for p in group["params"]:
                state = self.state[p]
                state["step"] = _step_tensor(fused=group["fused"])
                state["sum"] = _full_like(p, initial_accumulator_value)

    def _init_state(self, p, group):
        state = self.state[p]
        if len(state) == 0:
            state["step"] = _step_tensor(fused=group["fused"])
            state["sum"] = _full_like(p, self.defaults["initial_accumulator_value"])
        return state

    def step(self, closure=None):
        """Perform one optimization step; ``closure`` re-evaluates the loss."""
        return self._run_step(closure)
