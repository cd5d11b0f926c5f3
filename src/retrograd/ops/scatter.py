"""The gather/scatter family: gather, scatter, scatter_add, take_along_dim.

Gradients of gathering ops scatter back with ``numpy.add.at``, so repeated
indices accumulate. Scatter-style ops are written once as ``_*_into(xp, out,
...)`` functions that write into ``out``: the op runs them on a copy of its
input, its gradient's gradient on fresh zeros.
"""

import warnings

import numpy

from .._tensor import Tensor, _wrap_dim, wrap
from ._registry import apply, apply_inplace, defop, register
from .shape import call

__all__ = ["gather", "scatter", "scatter_", "scatter_add", "scatter_add_", "take_along_dim"]


# ---- gather / scatter -------------------------------------------------------------------------

def _along(xp, index, dim):
    """The fancy index reaching, for each position of ``index``, the element
    ``index[pos]`` along ``dim`` and ``pos`` along the other dims."""
    nd = index.ndim
    idx = []
    for d in range(nd):
        if d == dim:
            idx.append(index)
        else:
            shape = [1] * nd
            shape[d] = index.shape[d]
            idx.append(xp.arange(index.shape[d]).reshape(shape))
    return tuple(idx)


def _fit(src, index):
    """``src`` cut to the shape of ``index`` (scatter reads only that corner)."""
    if getattr(src, "shape", index.shape) == index.shape:
        return src
    return src[tuple(slice(0, n) for n in index.shape)]


def _gather_forward(xp, self, index, dim):
    if self.ndim == 0 or index.ndim == 0:  # 0-d self or index: a flat lookup
        return self.reshape(-1)[index]
    return self[_along(xp, index, dim)]


def _scatter_into(xp, out, index, src, dim, reduce):
    if out.ndim and index.ndim:
        flat, at, src = out, _along(xp, index, dim), _fit(src, index)
    else:  # 0-d self or index: a flat write
        flat, at = out.reshape(-1), index
        if hasattr(src, "shape"):
            src = src.reshape(-1)[:index.size].reshape(index.shape)
    if reduce is None:
        flat[at] = src
    elif reduce == "add":
        xp.add.at(flat, at, src)
    else:
        xp.multiply.at(flat, at, src)
    return out


def _gather_grad(xp, grad, index, self_shape, dim):
    return call(xp, _gather_backward, grad, index, attrs=(self_shape, dim))


def _src_grad(xp, grad, index, dim, src_shape):
    """``grad`` gathered at ``index``, zero-padded when ``src`` is larger than ``index``."""
    g = call(xp, _gather, grad, index, attrs=(dim,))
    if tuple(g.shape) != tuple(src_shape):
        g = call(xp, _corner, g, attrs=(src_shape,))
    return g


def _corner_forward(xp, self, size):
    out = xp.zeros(size, dtype=self.dtype)
    out[tuple(slice(0, n) for n in self.shape)] = self
    return out


_corner = defop("corner", _corner_forward,
                vjp={"self": lambda grad, self_shape: grad[tuple(slice(0, n)
                                                                 for n in self_shape)]},
                jvp="linear")


def _not_implemented(name):
    def rule():
        raise RuntimeError(f"derivative for aten::{name} is not implemented")
    return rule


_gather = defop("gather", _gather_forward, inputs=("self", "index"),
                vjp={"self": _gather_grad}, jvp="linear")
_gather_backward = defop(
    "gather_backward",
    lambda xp, self, index, size, dim: _scatter_into(xp, xp.zeros(size, dtype=self.dtype),
                                                     index, self, dim, "add"),
    inputs=("self", "index"),
    vjp={"self": lambda xp, grad, index, dim: call(xp, _gather, grad, index, attrs=(dim,))},
                         jvp="linear")
_scatter = defop(
    "scatter",
    lambda xp, self, index, src, dim: _scatter_into(xp, self.copy(), index, src, dim, None),
    inputs=("self", "index", "src"),
    vjp={"self": lambda xp, grad, index, dim: call(xp, _scatter_value, grad, index,
                                                   attrs=(dim, 0)),
         "src": _src_grad}, jvp="linear")
_scatter_value = defop(
    "scatter",
    lambda xp, self, index, dim, value: _scatter_into(xp, self.copy(), index, value, dim, None),
    inputs=("self", "index"),
    vjp={"self": lambda xp, grad, index, dim: call(xp, _scatter_value, grad, index,
                                                   attrs=(dim, 0))},
    node="ScatterBackward1", jvp="elementwise")
_scatter_reduce = defop(
    "scatter_reduce",
    lambda xp, self, index, src, dim, reduce: _scatter_into(xp, self.copy(), index, src, dim,
                                                            reduce),
    inputs=("self", "index", "src"),
    vjp={"self": _not_implemented("scatter"), "src": _not_implemented("scatter")},
    node="NotImplemented")
_scatter_add = defop(
    "scatter_add",
    lambda xp, self, index, src, dim: _scatter_into(xp, self.copy(), index, src, dim, "add"),
    inputs=("self", "index", "src"),
    vjp={"self": lambda grad: grad, "src": _src_grad}, jvp="linear")


def _index_dtype(index, fn):
    if not isinstance(index, Tensor):
        raise TypeError(f"{fn}(): argument 'index' must be Tensor, not {type(index).__name__}")
    if index._data.dtype.kind != "i":
        raise RuntimeError(f"{fn}(): Expected dtype int32/int64 for index")


def _check_along(self, dim, index, fn, src=None):
    """PyTorch's shape and bounds checks of gather/scatter; returns the wrapped dim."""
    _index_dtype(index, fn)
    a, i = self._data, index._data
    d = _wrap_dim(dim, a.ndim)
    if i.ndim != a.ndim and (i.ndim > 1 or a.ndim > 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as input "
                           "tensor")
    ashape, ishape = a.shape or (1,), i.shape or (1,)
    for k in range(len(ishape)):
        if k != d and ishape[k] > ashape[k]:
            raise RuntimeError(f"Size does not match at dimension {k} expected index "
                               f"{list(i.shape)} to be no larger than self {list(a.shape)} "
                               f"apart from dimension {d}")
    sshape = (src._data.shape or (1,)) if src is not None else ishape
    if any(n > m for n, m in zip(ishape, sshape, strict=False)):
        raise RuntimeError(f"Expected index {list(i.shape)} to be no larger than self "
                           f"{list(a.shape)} apart from dimension {d} and to be no larger "
                           f"size than src {list(src._data.shape)}")
    if i.size:
        lo, hi = int(i.min()), int(i.max())
        if lo < 0 or hi >= ashape[d]:
            bad = lo if lo < 0 else hi
            raise RuntimeError(f"index {bad} is out of bounds for dimension {d} with size "
                               f"{ashape[d]}")
    return d


@register
def gather(input, dim, index, *, sparse_grad=False):
    """``out[i][j] = input[index[i][j]][j]`` for dim 0 (and so on for other dims)."""
    d = _check_along(input, dim, index, "gather")
    return apply(_gather, (input, index), (d,))


def _scatter_args(self, dim, index, src, value, reduce):
    if src is None:
        src = value
    if isinstance(src, Tensor):
        if src._data.dtype != self._data.dtype:
            raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
        d = _check_along(self, dim, index, "scatter", src)
    else:
        d = _check_along(self, dim, index, "scatter")
    if reduce is not None:
        if reduce not in ("add", "multiply"):
            raise RuntimeError("reduce argument must be either add or multiply.")
        if isinstance(src, Tensor):
            warnings.warn("The reduce argument of torch.scatter with Tensor src is deprecated "
                          "and will be removed in a future PyTorch release. Use "
                          "torch.scatter_reduce instead for more reduction options.",
                          UserWarning, stacklevel=3)
        else:
            src = wrap(numpy.full(index._data.shape, src, dtype=self._data.dtype))
        return _scatter_reduce, (index, src), (d, reduce)
    if isinstance(src, Tensor):
        return _scatter, (index, src), (d,)
    return _scatter_value, (index,), (d, src)


@register
def scatter(input, dim, index, src=None, value=None, *, reduce=None):
    """A copy with ``out[index[i][j]][j] = src[i][j]`` (dim 0), or a value; ``reduce`` 'add'
    or 'multiply' combines with the present element instead."""
    op, values, attrs = _scatter_args(input, dim, index, src, value, reduce)
    return apply(op, (input, *values), attrs)


@register(function=False)
def scatter_(self, dim, index, src=None, value=None, *, reduce=None):
    op, values, attrs = _scatter_args(self, dim, index, src, value, reduce)
    return apply_inplace(op, self, values, attrs)


def _scatter_add_args(self, dim, index, src):
    if src._data.dtype != self._data.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    return _check_along(self, dim, index, "scatter_add", src)


@register
def scatter_add(input, dim, index, src):
    """A copy with ``src`` added at the positions ``index`` names (repeats add up)."""
    return apply(_scatter_add, (input, index, src), (_scatter_add_args(input, dim, index, src),))


@register(function=False)
def scatter_add_(self, dim, index, src):
    return apply_inplace(_scatter_add, self, (index, src),
                         (_scatter_add_args(self, dim, index, src),))


@register
def take_along_dim(input, indices, dim=None):
    """``gather`` after broadcasting ``input`` and ``indices`` (or on both flattened)."""
    if dim is None:
        return gather(input.reshape(-1), 0, indices.reshape(-1))
    a, i = input._data, indices._data
    if a.ndim != i.ndim:
        raise RuntimeError(f"torch.take_along_dim(): input and indices should have the same "
                           f"number of dimensions, but got {a.ndim} dimensions for input, and "
                           f"{i.ndim} dimensions for indices")
    d = _wrap_dim(dim, a.ndim)
    sa, si = list(a.shape), list(i.shape)
    sa[d] = si[d] = 1
    shape = list(numpy.broadcast_shapes(tuple(sa), tuple(si)))
    shape[d] = a.shape[d]
    if tuple(shape) != a.shape:
        input = input.expand(shape)
    shape[d] = i.shape[d]
    if tuple(shape) != i.shape:
        indices = indices.expand(shape)
    return gather(input, d, indices)
