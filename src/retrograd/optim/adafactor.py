"""Adafactor: second moments factored into row and column means for parameters of two or
more dimensions (memory O(rows + cols) instead of O(rows * cols)), with the relative step
size, update clipping and decoupled weight decay of PyTorch's version."""

from .. import _dtype
from .._tensor import Tensor
from ..backend import get_array_module
from .adam import _lerp_into
from .optimizer import (Optimizer, _bump, _count_step, _new_state, _scalar, _step_tensor,
                        _zeros_like)

__all__ = ["Adafactor", "adafactor_update"]


def adafactor_update(param, grad, state, group):
    """One parameter's Adafactor step, in PyTorch's order of operations::

        step += 1;  g = -grad if maximize else grad;  beta2_t = step ** beta2_decay
        alpha = max(eps2, rms(param)) * min(lr, 1 / sqrt(step))
        param *= 1 - lr * weight_decay
        >= 2-D: row_var.lerp_(mean(g*g, -1), beta2_t);  col_var.lerp_(mean(g*g, -2), beta2_t)
                var = row_var @ col_var / max(mean(row_var, -2), eps1)
        else:   variance.lerp_(g*g, beta2_t);  var = variance
        u = g / sqrt(max(var, eps1**2));  param -= alpha / max(1, rms(u) / d) * u

    (``rms(x) = norm(x) / sqrt(numel)``; ``eps1`` None is the dtype's machine epsilon.)
    """
    lr = _scalar(group["lr"])
    eps1, eps2 = group["eps"]
    p, g = param._data, grad._data
    xp = get_array_module(p)
    if eps1 is None:
        eps1 = float(_dtype.np_finfo(p.dtype).eps)
    if group["maximize"]:
        g = xp.negative(g)
    step = float(_count_step(state)._data)
    beta2_t = step ** group["beta2_decay"]
    rho_t = min(lr, 1 / (step ** 0.5))
    alpha = max(eps2, float(xp.linalg.norm(p.ravel())) / (p.size ** 0.5)) * rho_t
    wd = group["weight_decay"]
    if wd != 0:
        p *= 1 - lr * wd
    sq = xp.multiply(g, g, out=xp.empty_like(p))
    if g.ndim > 1:
        row_t, col_t = state["row_var"], state["col_var"]
        row, col = row_t._data, col_t._data
        for var_t, axis in ((row_t, -1), (col_t, -2)):
            mean = xp.sum(sq, axis=axis, keepdims=True)
            mean /= g.shape[axis]
            _lerp_into(xp, var_t._data, mean, xp.subtract(mean, var_t._data), beta2_t)
        var = xp.matmul(row, col, out=sq)
        var /= xp.maximum(xp.mean(row, axis=-2, keepdims=True), eps1)
        _bump(row_t, col_t)
    else:
        v_t = state["variance"]
        v = v_t._data
        _lerp_into(xp, v, sq, xp.subtract(sq, v), beta2_t)
        var = xp.copy(v)
        _bump(v_t)
    xp.maximum(var, eps1 * eps1, out=var)
    xp.sqrt(var, out=var)
    update = xp.divide(g, var, out=var)
    denom = max(1.0, float(xp.linalg.norm(update.ravel())) / ((update.size ** 0.5)
                                                                  * group["d"]))
    update *= -alpha / denom
    p += update
    _bump(param)


class Adafactor(Optimizer):
    """Adafactor, as ``torch.optim.Adafactor``.

    >>> opt = retrograd.optim.Adafactor(params, lr=1e-2)
    """

    _update = staticmethod(adafactor_update)
    _group_defaults = (("foreach", None),)
    _has_step = True

    def __init__(self, params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0,
                 weight_decay=0.0, *, foreach=None, maximize=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = {"lr": lr, "beta2_decay": beta2_decay, "eps": eps, "d": d,
                    "weight_decay": weight_decay, "foreach": foreach, "maximize": maximize}
        super().__init__(params, defaults)

    def _init_state(self, p, group):
        state = self.state[p]
        if len(state) == 0:
            if p.is_complex():
                raise RuntimeError("Adafactor does not support complex parameters")
            state["step"] = _step_tensor()
            shape = p._grad.shape
            if len(shape) > 1:
                dt, xp = p._data.dtype, get_array_module(p._data)
                state["row_var"] = _new_state(xp.zeros(shape[:-1] + (1,), dt))
                state["col_var"] = _new_state(xp.zeros(shape[:-2] + (1,) + shape[-1:], dt))
            else:
                state["variance"] = _zeros_like(p)
        return state

    def step(self, closure=None):
        """Perform one optimization step; ``closure`` re-evaluates the loss."""
        return self._run_step(closure)
