"""Rprop (resilient backpropagation): per-element step sizes adapted by the sign of the
gradient, with maximize."""

from ..backend import get_array_module
from .optimizer import (Optimizer, _bump, _check_lr, _count_step, _real, _scalar,
                        _step_tensor, _zeros_like)

__all__ = ["Rprop", "rprop_update"]


def rprop_update(param, grad, state, group):
    """One parameter's Rprop step, in PyTorch's order of operations::

        step += 1;  g = -grad if maximize else grad;  s = sign(g * prev)
        step_size = clamp(step_size * (etaplus if s > 0, etaminus if s < 0, else 1),
                          step_size_min, step_size_max)
        g = 0 where s < 0;  param -= sign(g) * step_size;  prev = g
    """
    etaminus, etaplus = group["etas"]
    size_min, size_max = group["step_sizes"]
    _count_step(state)
    g = grad._data
    xp = get_array_module(param._data)
    if group["maximize"]:
        g = xp.negative(g)
    prev_t, size_t = state["prev"], state["step_size"]
    p, g, prev, size = _real(param._data), _real(g), _real(prev_t._data), _real(size_t._data)
    sign = xp.multiply(g, prev, out=xp.empty_like(prev))  # (0-d inputs give no array)
    xp.sign(sign, out=sign)
    down = sign < 0
    # (a NaN product keeps its NaN factor, as in PyTorch)
    size *= xp.select([sign > 0, down, sign == 0], [etaplus, etaminus, 1.0], sign)
    xp.clip(size, size_min, size_max, out=size)
    xp.copyto(prev, g)
    prev[down] = 0
    xp.sign(prev, out=sign)
    sign *= size
    p -= sign
    _bump(param, prev_t, size_t)


class Rprop(Optimizer):
    """Rprop, as ``torch.optim.Rprop``.

    >>> opt = retrograd.optim.Rprop(params, lr=1e-2, etas=(0.5, 1.2))
    """

    _update = staticmethod(rprop_update)
    _group_defaults = (("foreach", None), ("maximize", False), ("differentiable", False),
                       ("capturable", False))
    _has_step = True

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        _check_lr(lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = {"lr": lr, "etas": etas, "step_sizes": step_sizes, "foreach": foreach,
                    "maximize": maximize, "differentiable": differentiable,
                    "capturable": capturable}
        super().__init__(params, defaults)

    def _init_state(self, p, group):
        state = self.state[p]
        if len(state) == 0:
            state["step"] = _step_tensor()
            state["prev"] = _zeros_like(p)
            state["step_size"] = size = _zeros_like(p)
            _real(size._data).fill(_scalar(group["lr"]))
        return state

    def step(self, closure=None):
        """Perform one optimization step; ``closure`` re-evaluates the loss."""
        return self._run_step(closure)
