"""The gather/scatter family: gather, scatter, scatter_add, scatter_reduce, take_along_dim.

Gradients of gathering ops scatter back with the backend's unbuffered add
(``functions(xp).ufunc_at``), so repeated indices accumulate. Scatter-style ops are
written once as ``_*_into(xp, out, ...)`` functions that write into ``out``: the op
runs them on a copy of its input, its gradient's gradient on fresh zeros.
"""

import functools
import math
import warnings

import numpy

from .._dtype import float64, int64, is_float, is_inexact, np_iinfo
from .._tensor import Tensor, _wrap_dim, wrap
from ..backend import get_array_module
from ..backend.functions import functions
from ._registry import _pretty, apply, apply_inplace, defop, register
from .shape import call

# Gathers and scatters are exact, and PyTorch's scatter reductions reduce in the
# tensor's dtype: float16 stays float16.
defop = functools.partial(defop, upcast=False)

__all__ = ["gather", "scatter", "scatter_", "scatter_add", "scatter_add_", "scatter_reduce",
           "scatter_reduce_", "take_along_dim", "index_reduce", "index_reduce_"]


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
    flat, at, src = _targets(xp, out, index, src, dim)
    if reduce is None:
        flat[at] = src
    elif reduce == "add":
        functions(xp).ufunc_at("add", flat, at, src)
    else:
        functions(xp).ufunc_at("multiply", flat, at, src)
    return out if flat is out else flat.reshape(out.shape)


def _scatter_onto(xp, self, index, src, dim, reduce):
    """``self`` with ``src`` scattered in: on its copy for writes (under vmap a batch even
    where ``self`` is not)."""
    return _scatter_into(xp, functions(xp).copy_for_writes(self, index, src), index, src, dim,
                         reduce)


def _targets(xp, out, index, src, dim):
    """(array to write, where, values): ``out`` itself, or for a 0-d ``out`` or index
    its flat form (a copy when ``out`` is a NumPy scalar, as 0-d arithmetic gives)."""
    if out.ndim and index.ndim:
        return out, _along(xp, index, dim), _fit(src, index)
    if hasattr(src, "shape"):
        src = src.reshape(-1)[:index.size].reshape(index.shape)
    return out.reshape(-1), index, src


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
    lambda xp, self, index, src, dim: _scatter_onto(xp, self, index, src, dim, None),
    inputs=("self", "index", "src"),
    vjp={"self": lambda xp, grad, index, dim: call(xp, _scatter_value, grad, index,
                                                   attrs=(dim, 0)),
         "src": _src_grad}, jvp="linear")
_scatter_value = defop(
    "scatter",
    lambda xp, self, index, dim, value: _scatter_onto(xp, self, index, value, dim, None),
    inputs=("self", "index"),
    vjp={"self": lambda xp, grad, index, dim: call(xp, _scatter_value, grad, index,
                                                   attrs=(dim, 0))},
    node="ScatterBackward1", jvp="elementwise")
_scatter_reduce = defop(
    "scatter_reduce",
    lambda xp, self, index, src, dim, reduce: _scatter_onto(xp, self, index, src, dim, reduce),
    inputs=("self", "index", "src"),
    vjp={"self": _not_implemented("scatter"), "src": _not_implemented("scatter")},
    node="NotImplemented")
_scatter_add = defop(
    "scatter_add",
    lambda xp, self, index, src, dim: _scatter_onto(xp, self, index, src, dim, "add"),
    inputs=("self", "index", "src"),
    vjp={"self": lambda grad: grad, "src": _src_grad}, jvp="linear")


# ---- scatter_reduce ---------------------------------------------------------------------------
# The gradients follow PyTorch's scatter_reduce_backward: the multiplicative factors that do not
# depend on ``grad`` (counts, tie masks, zero masks) are constants computed on the arrays.

_UFUNC = {"sum": "add", "mean": "add", "prod": "multiply", "amax": "maximum",
          "amin": "minimum"}


def _identity(reduce, dtype):
    """The reduction's neutral element, written over the targets when include_self=False."""
    if reduce == "prod":
        return 1
    if reduce in ("amax", "amin"):
        if is_float(dtype):
            return -math.inf if reduce == "amax" else math.inf
        if dtype.kind == "b":
            return reduce == "amin"
        info = np_iinfo(dtype)
        return info.min if reduce == "amax" else info.max
    return 0


def _counts(xp, index, shape, dim, include_self, dtype):
    """How many values each position of the result reduces (at least 1)."""
    n = xp.full(shape, 1 if include_self else 0, dtype=dtype)
    flat, at, _ = _targets(xp, n, index, None, dim)
    functions(xp).ufunc_at("add", flat, at, 1)
    return xp.maximum(flat.reshape(shape), 1)


def _scatter_reduce_forward(xp, self, index, src, dim, reduce, include_self):
    out = functions(xp).copy_for_writes(self, index, src)
    flat, at, src = _targets(xp, out, index, src, dim)
    if not include_self:
        flat[at] = _identity(reduce, out.dtype)
    functions(xp).ufunc_at(_UFUNC[reduce], flat, at, src)
    if flat is not out:
        out = flat.reshape(out.shape)
    if reduce == "mean":
        n = _counts(xp, index, out.shape, dim, include_self, out.dtype)
        if is_inexact(out.dtype):
            out /= n
        else:
            out //= n
    return out


def _array(x):
    return x._data if isinstance(x, Tensor) else x


def _constants_module(result):
    """The module of a rule's constants (never differentiated): the result's arrays', which
    hold every input's batch dims under vmap (the index's may hold none of them)."""
    return get_array_module(_array(result))


def _const(xp, a):
    """A constant factor of a rule, as the rule's values are (a Tensor under create_graph)."""
    return functions(xp).constant(a)


def _self_part(xp, g, index, dim, include_self):
    """The gradient of ``self``: none reaches the targets when they were overwritten."""
    return g if include_self else call(xp, _scatter_value, g, index, attrs=(dim, 0))


def _src_part(xp, g, index, dim, src_shape, factor=None):
    """``g`` gathered at ``index`` (times ``factor``), padded to ``src``'s shape."""
    g = call(xp, _gather, g, index, attrs=(dim,))
    if factor is not None:
        g = g * factor
    if tuple(g.shape) != tuple(src_shape):
        g = call(xp, _corner, g, attrs=(src_shape,))
    return g


def _mean_self_grad(xp, grad, index, self_shape, dim, include_self):
    i = _array(index)
    n = _counts(get_array_module(i), i, self_shape, dim, include_self, float64.np)
    return _self_part(xp, grad, index, dim, include_self) * _const(xp, 1 / n)


def _mean_src_grad(xp, grad, index, self_shape, src_shape, dim, include_self):
    i = _array(index)
    n = _counts(get_array_module(i), i, self_shape, dim, include_self, float64.np)
    return _src_part(xp, grad * _const(xp, 1 / n), index, dim, src_shape)


def _prod_self_grad(xp, grad, self, index, src, dim, include_self):
    masked = xp.where(xp.equal(self, 0), 1, self)
    masked_result = call(xp, _scatter_prod, masked, index, src, attrs=(dim, "prod",
                                                                        include_self))
    return _self_part(xp, grad, index, dim, include_self) * masked_result / masked


def _prod_src_grad(xp, grad, self, index, src, result, dim, include_self, src_shape):
    """Where a value is the only zero reaching its target, the product of the others
    (the result with it replaced by 1); elsewhere ``result / value``."""
    s = _fit(src, index)
    i = _array(index)
    am = _constants_module(result)
    zero = am.asarray(_array(s) == 0)
    n_zeros = _scatter_into(am, am.zeros(_array(self).shape), i, zero.astype(float), dim,
                            "add")
    single = zero & (_gather_forward(am, n_zeros, i, dim) == 1)
    single_t = _const(xp, single)
    masked_result = call(xp, _scatter_prod, self, index, xp.where(single_t, 1, s),
                         attrs=(dim, "prod", include_self))
    g = xp.where(single_t, call(xp, _gather, grad * masked_result, index, attrs=(dim,)),
                 call(xp, _gather, grad * result, index, attrs=(dim,))
                 / xp.where(_const(xp, zero), 1, s))
    if tuple(g.shape) != tuple(src_shape):
        g = call(xp, _corner, g, attrs=(src_shape,))
    if functions(am).any_true(n_zeros > 1):  # a wrong second derivative in the graph
        g = functions(xp).once_differentiable(
            g, "scatter_reduce(): Double backward is unsupported for src when >1 zeros in src "
               "are scattered to the same position in self")
    return g


def _ties(self, index, src, result, dim):
    """PyTorch's even split among ties of amax/amin: (self's share, src's share) of each
    result element's gradient, as factors of ``grad`` and of ``grad`` gathered."""
    self, i, src, result = _array(self), _array(index), _array(_fit(src, index)), _array(result)
    am = _constants_module(result)
    self_is = am.asarray(self == result, dtype=result.dtype)
    src_is = am.asarray(src == _gather_forward(am, result, i, dim), dtype=result.dtype)
    n = _scatter_into(am, self_is.copy(), i, src_is, dim, "add")
    return self_is / n, src_is / _gather_forward(am, n, i, dim)


def _minmax_self_grad(xp, grad, self, index, src, result, dim, include_self):
    return (_self_part(xp, grad, index, dim, include_self)
            * _const(xp, _ties(self, index, src, result, dim)[0]))


def _minmax_src_grad(xp, grad, self, index, src, result, dim, src_shape):
    return _src_part(xp, grad, index, dim, src_shape,
                     _const(xp, _ties(self, index, src, result, dim)[1]))


def _scatter_reduce_op(vjp, jvp, node="ScatterReduceBackward0"):
    return defop("scatter_reduce", _scatter_reduce_forward, inputs=("self", "index", "src"),
                 vjp=vjp, jvp=jvp, node=node)


_scatter_sum = _scatter_reduce_op(
    {"self": lambda xp, grad, index, dim, include_self: _self_part(xp, grad, index, dim,
                                                                   include_self),
     "src": lambda xp, grad, index, dim, src_shape: _src_part(xp, grad, index, dim,
                                                              src_shape)}, "linear")
_MEAN_RULES = {"self": _mean_self_grad, "src": _mean_src_grad}
_scatter_mean = _scatter_reduce_op(_MEAN_RULES, "linear")


def _prod_jvp(xp, self_t, src_t, self, index, src, result, dim, include_self, src_shape):
    """Each output's tangent: every contributor's tangent times the product of the other
    contributors, the factors the vjp rules apply to ``grad`` (ones here); the tangent sent
    to each target with gather's adjoint."""
    ones = xp.ones_like(result)
    t = 0
    if self_t is not None:
        t = self_t * _prod_self_grad(xp, ones, self, index, src, dim, include_self)
    if src_t is not None:
        factor = _prod_src_grad(xp, ones, self, index, src, result, dim, include_self,
                                src_shape)
        t = t + call(xp, _gather_backward, src_t * factor, index, attrs=(result.shape, dim))
    return t


_PROD_RULES = {"self": _prod_self_grad, "src": _prod_src_grad}
_scatter_prod = _scatter_reduce_op(_PROD_RULES, _prod_jvp)
def _minmax_jvp(xp, self_t, src_t, self, index, src, result, dim, include_self):
    """PyTorch's scatter_reduce_jvp: the mean of the tangents of the values equal to the
    result (self counted only with include_self, unlike the gradient)."""
    s, i, r = _array(_fit(src, index)), _array(index), _array(result)
    am = _constants_module(result)
    self_is = am.asarray(_array(self) == r)
    src_is = am.asarray(s == _gather_forward(am, r, i, dim))
    n = _scatter_reduce_forward(am, self_is.astype(r.dtype), i, src_is.astype(r.dtype), dim,
                                "sum", include_self)
    a = xp.zeros_like(self) if self_t is None else self_t * _const(xp, self_is)
    b = (xp.zeros_like(_fit(src, index)) if src_t is None
         else _fit(src_t, index) * _const(xp, src_is))
    return call(xp, _scatter_sum, a, index, b, attrs=(dim, "sum", include_self)) \
        * _const(xp, 1 / n)


_MINMAX_RULES = {"self": _minmax_self_grad, "src": _minmax_src_grad}
_scatter_minmax = _scatter_reduce_op(_MINMAX_RULES, _minmax_jvp)
_SCATTER_REDUCE = {"sum": _scatter_sum, "mean": _scatter_mean, "prod": _scatter_prod,
                   "amax": _scatter_minmax, "amin": _scatter_minmax, "max": _scatter_minmax,
                   "min": _scatter_minmax}
# index_reduce is scatter_reduce with its index vector spread over the source (values and
# gradients alike, ties included), recorded as IndexReduceBackward0
_index_minmax = _scatter_reduce_op(_MINMAX_RULES, _minmax_jvp, "IndexReduceBackward0")
_INDEX_REDUCE = {"prod": _scatter_reduce_op(_PROD_RULES, _prod_jvp, "IndexReduceBackward0"),
                 "mean": _scatter_reduce_op(_MEAN_RULES, "linear", "IndexReduceBackward0"),
                 "amax": _index_minmax, "amin": _index_minmax}


def _scatter_reduce_args(self, dim, index, src, reduce, include_self, src_pos):
    if not isinstance(src, Tensor):
        raise TypeError(f"scatter_reduce(): argument 'src' (position {src_pos}) must be Tensor, "
                        f"not {type(src).__name__}")
    if not isinstance(include_self, bool):
        raise TypeError(f"scatter_reduce(): argument 'include_self' must be bool, not "
                        f"{type(include_self).__name__}")
    d = _check_along(self, dim, index, "scatter", src)
    if src._data.dtype != self._data.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    op = _SCATTER_REDUCE.get(reduce)
    if op is None:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got "
                           f"{reduce}")
    reduce = {"max": "amax", "min": "amin"}.get(reduce, reduce)
    if reduce == "mean" and self._data.dtype.kind == "b":
        raise NotImplementedError('"scatter_gather_tensor_cpu_reduce_mean" not implemented for '
                                  "'Bool'")
    return op, (d, reduce, include_self)


@register(method=False)
def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    """A copy with ``src`` reduced ("sum", "prod", "mean", "amax", "amin") into the positions
    ``index`` names, together with the present element unless ``include_self=False``."""
    op, attrs = _scatter_reduce_args(input, dim, index, src, reduce, include_self, 4)
    return apply(op, (input, index, src), attrs)


@register(function=False, name="scatter_reduce")
def _scatter_reduce_method(self, dim, index, src, reduce, *, include_self=True):
    op, attrs = _scatter_reduce_args(self, dim, index, src, reduce, include_self, 3)
    return apply(op, (self, index, src), attrs)


@register(function=False)
def scatter_reduce_(self, dim, index, src, reduce, *, include_self=True):
    op, attrs = _scatter_reduce_args(self, dim, index, src, reduce, include_self, 3)
    return apply_inplace(op, self, (index, src), attrs)


_BETA = []  # index_reduce's beta warning, once per process as PyTorch's


def _index_reduce_args(self, dim, index, source, reduce, include_self):
    """PyTorch's checks, then the index spread over the source along ``dim``."""
    if reduce not in _INDEX_REDUCE:
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or "
                           f"amin but got {reduce}.")
    if not isinstance(include_self, bool):
        raise TypeError(f"index_reduce_(): argument 'include_self' must be bool, not "
                        f"{type(include_self).__name__}")
    if not _BETA:
        _BETA.append(True)
        warnings.warn("index_reduce() is in beta and the API may change at any time.",
                      UserWarning, stacklevel=3)
    a, s, i = self._data, source._data, index._data
    d = _wrap_dim(dim, a.ndim)
    if i.dtype.kind not in "iu" or i.dtype.itemsize < 4 or i.dtype.kind == "u":
        raise RuntimeError(f"index_reduce_(): Expected dtype int32/int64 for index but got: "
                           f"{_pretty(i.dtype)}")
    if i.ndim > 1:
        raise IndexError(f"index_reduce_(): Index is supposed to be a vector, but got dim: "
                         f"{i.ndim} with type: {_pretty(i.dtype)} and size: {list(i.shape)}")
    n = i.size
    source_n = s.shape[d] if s.ndim else 1
    if n != source_n:
        raise RuntimeError(f"index_reduce_(): Number of indices ({n}) should be equal to "
                           f"source.size(dim): ({source_n}), for dim: {d}")
    if s.dtype != a.dtype:
        raise RuntimeError(f"index_reduce_(): self ({_pretty(a.dtype)}) and source "
                           f"({_pretty(s.dtype)}) must have the same scalar type")
    if s.ndim != a.ndim or any(p != q for k, (p, q) in
                               enumerate(zip(a.shape, s.shape, strict=True)) if k != d):
        raise RuntimeError(f"source tensor shape must match self tensor shape, excluding the "
                           f"specified dimension. Got self.shape = {list(a.shape)} "
                           f"source.shape = {list(s.shape)}")
    size = a.shape[d] if a.ndim else 1
    if n and functions(get_array_module(i)).any_true((i < 0) | (i >= size)):
        raise IndexError("index out of range in self")
    kind = a.dtype.kind  # (PyTorch's kernels: their dispatch refusals)
    if kind in "bc" and not include_self:
        raise NotImplementedError(f'"index_reduce_func_exclude_input_init" not implemented '
                                  f"for '{_pretty(a.dtype)}'")
    if kind == "b" and reduce == "mean":
        raise NotImplementedError("\"div_floor_cpu\" not implemented for 'Bool'")
    if kind == "c" and reduce in ("amax", "amin"):
        raise NotImplementedError(f'"{reduce[1:]}imum_cpu" not implemented for '
                                  f"'{_pretty(a.dtype)}'")
    xp = get_array_module(i)
    spread = xp.broadcast_to(xp.reshape(i, (-1,) + (1,) * (s.ndim - d - 1)), s.shape) \
        if s.ndim else xp.reshape(i, ())
    return _INDEX_REDUCE[reduce], wrap(xp.ascontiguousarray(spread).astype(int64.np)), \
        (d, reduce, include_self)


@register
def index_reduce(input, dim, index, source, reduce, *, include_self=True):
    """A copy of ``input`` with each slice ``source[..., k, ...]`` reduced ("prod", "mean",
    "amax", "amin") into the slice ``index[k]`` along ``dim``, together with the present
    slice unless ``include_self=False``."""
    op, spread, attrs = _index_reduce_args(input, dim, index, source, reduce, include_self)
    return apply(op, (input, spread, source), attrs)


@register(function=False)
def index_reduce_(self, dim, index, source, reduce, *, include_self=True):
    op, spread, attrs = _index_reduce_args(self, dim, index, source, reduce, include_self)
    return apply_inplace(op, self, (spread, source), attrs)


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
        raise RuntimeError(f"Index tensor must have the same number of dimensions as "
                           f"{'input' if fn == 'gather' else 'self'} tensor")
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
    if i.size and functions(get_array_module(i)).any_true((i < 0) | (i >= ashape[d])):
        lo, hi = int(i.min()), int(i.max())
        if lo < 0 or hi >= ashape[d]:
            bad = lo if lo < 0 else hi
            raise RuntimeError(f"index {bad} is out of bounds for dimension {d} with size "
                               f"{ashape[d]}")
    return d


@register
def gather(input, dim, index, *, sparse_grad=False, out=None):
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
            a = self._data
            src = wrap(get_array_module(a).full(index._data.shape, src, dtype=a.dtype))
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
def take_along_dim(input, indices, dim=None, *, out=None):
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
