"""Finite differences and the trapezoid rule: diff, trapezoid (trapz) and
cumulative_trapezoid, composites of slicing and sums as in PyTorch."""



from .._tensor import Tensor, _wrap_dim
from ._registry import register
from .joining import cat

__all__ = ["diff", "trapezoid", "trapz", "cumulative_trapezoid"]


@register
def diff(input, n=1, dim=-1, prepend=None, append=None):
    """The ``n``-th forward difference along ``dim``, after joining ``prepend``/``append``."""
    if input._data.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    d = _wrap_dim(dim, input._data.ndim)
    if prepend is not None or append is not None:
        parts = [prepend, input, append]
        input = cat([p if p._data.ndim else p.expand(*(1 if k == d else s for k, s in
                                                        enumerate(input._data.shape)))
                     for p in parts if p is not None], d)
    for _ in range(n):
        size = input._data.shape[d]
        if size == 0:
            break
        input = input.narrow(d, 1, size - 1) - input.narrow(d, 0, size - 1)
    return input


# ---- trapezoid ------------------------------------------------------------------------------

def _dx_along(x, y, d):
    if x._data.ndim == 1:
        dx = x[1:] - x[:-1]
        return dx.reshape(*(-1 if k == d else 1 for k in range(y._data.ndim)))
    return x.narrow(d, 1, x._data.shape[d] - 1) - x.narrow(d, 0, x._data.shape[d] - 1)


@register(method=False)
def trapezoid(y, x=None, *, dx=None, dim=-1):
    """The trapezoidal rule along ``dim``, with sample points ``x`` or spacing ``dx``."""
    d = _wrap_dim(dim, y._data.ndim)
    n = y._data.shape[d]
    if isinstance(x, Tensor):
        if dx is not None:
            raise RuntimeError("trapezoid: received both x and dx")
        if n == 0:
            return y.sum(d)
        return ((y.narrow(d, 1, n - 1) + y.narrow(d, 0, n - 1)) * _dx_along(x, y, d)).sum(d) / 2
    step = 1 if dx is None and x is None else (dx if dx is not None else x)
    if n == 0:
        return y.sum(d)
    return (y.sum(d) - (y.select(d, 0) + y.select(d, -1)) * 0.5) * step


@register(method=False)
def trapz(y, x=None, *, dx=None, dim=-1):
    """Alias of :func:`trapezoid`."""
    return trapezoid(y, x, dx=dx, dim=dim)


@register(method=False)
def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """The running trapezoidal integral along ``dim`` (one element shorter)."""
    d = _wrap_dim(dim, y._data.ndim)
    n = y._data.shape[d]
    pair = y.narrow(d, 1, max(n - 1, 0)) + y.narrow(d, 0, max(n - 1, 0))
    if isinstance(x, Tensor):
        return (pair * _dx_along(x, y, d)).cumsum(d) / 2
    step = 1 if dx is None and x is None else (dx if dx is not None else x)
    return (pair * (step / 2)).cumsum(d)
