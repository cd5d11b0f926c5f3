"""Sorting and order statistics: sort, argsort, topk, kthvalue, median, mode, quantile,
unique, and the running extrema (cummax, cummin) and logcumsumexp.

Every selecting op is one stable NumPy argsort along ``dim`` (descending order is the
ascending sort of the flipped array, flipped back, so ties keep their original order as
PyTorch's stable sort does), then ``take_along_axis``. Gradients go back to the selected
positions with the scatter-add of ``gather``'s backward, so they are differentiable again.
"""

import math
import numbers
import operator

import numpy

from .._dtype import int64, is_float, is_inexact, is_low
from .. import _autocast, return_types
from .._tensor import Tensor, wrap
from ..backend import get_array_module
from ..backend.functions import functions
from ._registry import _pretty, apply, defop, register
from .reduction import NO_DIM, _dim1, _evenly_distribute, _missing_dim
from .scatter import _gather_backward
from .shape import call

__all__ = ["sort", "argsort", "msort", "topk", "kthvalue", "median", "nanmedian", "mode",
           "quantile", "nanquantile", "unique", "unique_consecutive", "cummax", "cummin",
           "logcumsumexp"]

_INT64 = int64.np


def _order(xp, a, dim, descending):
    """Stable argsort along ``dim``; NaN sorts as the largest value, as in PyTorch."""
    if not descending:
        return xp.argsort(a, axis=dim, kind="stable")
    i = xp.argsort(xp.flip(a, dim), axis=dim, kind="stable")
    return (a.shape[dim] - 1) - xp.flip(i, dim)


def _scatter_back(xp, grad, indices, self_shape, dim):
    """The gradient of selecting ``indices`` along ``dim``: ``grad`` added at them."""
    if not self_shape:
        return grad
    return call(xp, _gather_backward, grad, indices, attrs=(tuple(self_shape), dim))


def _select_back(xp, grad, indices, self_shape, dim, keepdim):
    """Like :func:`_scatter_back` for a reduction that may have dropped ``dim``."""
    if not self_shape:
        return grad
    if not keepdim:
        grad, indices = xp.expand_dims(grad, dim), xp.expand_dims(indices, dim)
    return _scatter_back(xp, grad, indices, self_shape, dim)


def _take(xp, a, idx, dim, keepdim):
    """``a`` at ``idx`` (one position per slice, keepdim-shaped) along ``dim``."""
    out = xp.take_along_axis(a, idx, dim)
    return (out, idx) if keepdim else (xp.squeeze(out, dim), xp.squeeze(idx, dim))


def _scalar_pair(xp, a):
    return xp.copy(a), xp.zeros((), _INT64)


_VI = ("values", "indices")
_NONDIFF = ("indices",)


def _sort_fwd(xp, self, dim, descending):
    if self.ndim == 0:
        return _scalar_pair(xp, self)
    idx = _order(xp, self, dim, descending)
    return xp.take_along_axis(self, idx, dim), idx


_SORT_VJP = {"self": lambda xp, grad, indices, self_shape, dim:
             _scatter_back(xp, grad, indices, self_shape, dim)}
_sort = defop("sort", _sort_fwd, vjp=_SORT_VJP, outputs=_VI, nondiff_outputs=_NONDIFF,
              jvp="transpose")
_sort_stable = defop("sort", _sort_fwd, vjp=_SORT_VJP, outputs=_VI, nondiff_outputs=_NONDIFF,
                     node="SortBackward1", jvp="transpose")


def _topk_fwd(xp, self, k, dim, largest, sorted):
    if self.ndim == 0:
        return _scalar_pair(xp, self)
    idx = _order(xp, self, dim, largest)
    idx = idx[(slice(None),) * dim + (slice(0, k),)]
    return xp.take_along_axis(self, idx, dim), idx


_topk = defop("topk", _topk_fwd, vjp=_SORT_VJP, outputs=_VI, nondiff_outputs=_NONDIFF,
              jvp="transpose")


def _kth_fwd(xp, self, k, dim, keepdim):
    if self.ndim == 0:
        return _scalar_pair(xp, self)
    idx = _order(xp, self, dim, False)[(slice(None),) * dim + (slice(k - 1, k),)]
    return _take(xp, self, idx, dim, keepdim)


_SELECT_VJP = {"self": lambda xp, grad, indices, self_shape, dim, keepdim:
               _select_back(xp, grad, indices, self_shape, dim, keepdim)}
_kthvalue = defop("kthvalue", _kth_fwd, vjp=_SELECT_VJP, outputs=_VI, nondiff_outputs=_NONDIFF,
                  jvp="transpose")


def _median_all_fwd(xp, self, ignore_nan):
    """The lower median of all elements; nanmedian's takes the flattened input's along its
    one dim (how many values are not NaN is a count on values, none on meta)."""
    flat = xp.reshape(self, (-1,))
    if flat.size == 0:  # NaN, cast to the dtype as C casts it (int64's minimum), as PyTorch
        with numpy.errstate(invalid="ignore"):
            return xp.asarray(numpy.asarray(math.nan).astype(self.dtype))
    if ignore_nan:
        return _median_dim_fwd(xp, flat, 0, False, True)[0]
    mid = (flat.size - 1) // 2
    lower = xp.asarray(xp.partition(flat, mid)[mid])
    if self.dtype.kind not in "fc":
        return lower
    # NaN where any is (a choice per value, not a branch: one batch member's NaN under
    # vmap must not decide the others')
    return functions(xp).where(xp.any(xp.isnan(flat)), xp.asarray(xp.nan, dtype=self.dtype),
                               lower)


def _median_dim_fwd(xp, self, dim, keepdim, ignore_nan):
    """The lower median along ``dim``: with NaN, PyTorch's median gives the first NaN and
    nanmedian the lower median of the other values (the middle NaN when all are NaN)."""
    if self.ndim == 0:
        return _scalar_pair(xp, self)
    order = _order(xp, self, dim, False)
    nan = self != self
    if ignore_nan:
        count = self.shape[dim] - nan.sum(axis=dim, keepdims=True)
        pos = xp.where(count == 0, (self.shape[dim] - 1) // 2, (count - 1) // 2)
        idx = xp.take_along_axis(order, pos, dim)
    else:
        mid = (self.shape[dim] - 1) // 2
        idx = order[(slice(None),) * dim + (slice(mid, mid + 1),)]
        has_nan = nan.any(axis=dim, keepdims=True)
        idx = xp.where(has_nan, xp.argmax(nan, axis=dim, keepdims=True), idx)
    return _take(xp, self, idx, dim, keepdim)


_MEDIAN_ALL_VJP = {"self": _evenly_distribute}
_median = defop("median", lambda xp, self: _median_all_fwd(xp, self, False),
                vjp=_MEDIAN_ALL_VJP, jvp="transpose")
_nanmedian = defop("nanmedian", lambda xp, self: _median_all_fwd(xp, self, True),
                   vjp=_MEDIAN_ALL_VJP, jvp="transpose")
_median_dim = defop("median_dim", lambda xp, self, dim, keepdim:
                    _median_dim_fwd(xp, self, dim, keepdim, False),
                    vjp=_SELECT_VJP, outputs=_VI, nondiff_outputs=_NONDIFF,
                    node="MedianBackward1", jvp="transpose")
_nanmedian_dim = defop("nanmedian_dim", lambda xp, self, dim, keepdim:
                       _median_dim_fwd(xp, self, dim, keepdim, True),
                       vjp=_SELECT_VJP, outputs=_VI, nondiff_outputs=_NONDIFF,
                       node="NanmedianBackward1", jvp="transpose")


def _mode_fwd(xp, self, dim, keepdim):
    """The most frequent value along ``dim`` (the smallest of equally frequent ones) and
    the last index where it occurs, as PyTorch's CPU kernel: run lengths in sorted order."""
    if self.ndim == 0:
        return _scalar_pair(xp, self)
    order = xp.moveaxis(_order(xp, self, dim, False), dim, -1)
    s = xp.take_along_axis(xp.moveaxis(self, dim, -1), order, -1)
    n = s.shape[-1]
    pos = xp.arange(n)
    change = s[..., 1:] != s[..., :-1]
    edge = xp.ones(s.shape[:-1] + (1,), dtype=bool)
    start = functions(xp).accumulate(
        "maximum", xp.where(xp.concatenate([edge, change], -1), pos, 0), -1)
    last = xp.concatenate([change, edge], -1)
    end = xp.flip(functions(xp).accumulate("minimum", xp.flip(xp.where(last, pos, n - 1), -1), -1),
                  -1)
    best = xp.argmax(end - start, axis=-1)[..., None]
    idx = xp.moveaxis(xp.take_along_axis(order, xp.take_along_axis(end, best, -1), -1), -1, dim)
    return _take(xp, self, idx, dim, keepdim)


_mode = defop("mode", _mode_fwd, vjp=_SELECT_VJP, outputs=_VI, nondiff_outputs=_NONDIFF,
              jvp="transpose")


def _cum_fwd(ufunc):
    def forward(xp, self, dim):
        """Running extremum and the index where it was reached (the last of equal values,
        or of NaNs), as PyTorch's cummax/cummin."""
        if self.ndim == 0:
            return _scalar_pair(xp, self)
        values = functions(xp).accumulate(ufunc, self, dim)
        pos = xp.reshape(xp.arange(self.shape[dim]), (-1,) + (1,) * (self.ndim - dim - 1))
        hit = self == values
        if is_inexact(self.dtype):
            hit = hit | (self != self)
        idx = functions(xp).accumulate("maximum", xp.where(hit, pos, 0), dim).astype(_INT64)
        return values, idx
    return forward


_CUM_VJP = {"self": lambda xp, grad, indices, self_shape, dim:
            _scatter_back(xp, grad, indices, self_shape, dim)}
_cummax = defop("cummax", _cum_fwd("maximum"), vjp=_CUM_VJP, outputs=_VI,
                nondiff_outputs=_NONDIFF, jvp="transpose")
_cummin = defop("cummin", _cum_fwd("minimum"), vjp=_CUM_VJP, outputs=_VI,
                nondiff_outputs=_NONDIFF, jvp="transpose")


def _logcumsumexp_fwd(xp, self, dim):
    if self.ndim == 0:
        return xp.copy(self)
    return functions(xp).accumulate("logaddexp", self, dim)


def _rev_lcse(xp, a, dim):
    """logcumsumexp from the end of ``dim``."""
    return xp.flip(call(xp, _logcumsumexp, xp.flip(a, dim), attrs=(dim,)), dim)


def _logcumsumexp_rule(xp, grad, self, result, dim):
    """d x_i = sum_{j >= i} g_j exp(x_i - r_j), summed in log space for the positive and
    the negative parts of ``g`` apart (PyTorch's formula), so no exp overflows. That is
    not differentiable in ``g`` at 0, so under create_graph (Tensors) the sum is taken
    as an (n, n) matrix per slice instead."""
    if self.ndim == 0:
        return grad
    if isinstance(self, Tensor):
        return _logcumsumexp_grad_exact(xp, grad, self, result, dim)
    out = 0
    for sign in (1, -1):
        g = sign * grad
        pos = g > 0
        log_g = xp.where(pos, xp.log(xp.where(pos, g, 1)), -math.inf)
        out = out + sign * xp.exp(_rev_lcse(xp, log_g - result, dim) + self)
    return out


def _logcumsumexp_grad_exact(xp, grad, self, result, dim):
    x, r, g = (xp.moveaxis(a, dim, -1) for a in (self, result, grad))
    pos = xp.arange(x.shape[-1])
    upper = xp.expand_dims(pos, -1) <= pos  # j >= i
    w = xp.exp(xp.where(upper, xp.expand_dims(x, -1) - xp.expand_dims(r, -2), -math.inf))
    return xp.moveaxis(xp.sum(w * xp.expand_dims(g, -2), axis=-1), -1, dim)


_logcumsumexp = defop("logcumsumexp", _logcumsumexp_fwd, vjp={"self": _logcumsumexp_rule},
                      jvp="transpose")


# ---- public functions -------------------------------------------------------------------

def _sort_dim(input, dim):
    return _dim1(dim, input._data.ndim)


@register
def sort(input, dim=-1, descending=False, *, stable=None):
    """``(values, indices)`` sorted along ``dim``; always stable (ties keep their order).
    Passing ``stable`` (either way) records PyTorch's other overload, SortBackward1.

    >>> retrograd.tensor([3., 1., 2.]).sort()
    torch.return_types.sort(
    values=tensor([1., 2., 3.]),
    indices=tensor([1, 2, 0]))
    """
    op = _sort if stable is None else _sort_stable
    return return_types.sort(apply(op, (input,), (_sort_dim(input, dim), descending)))


@register
def argsort(input, dim=-1, descending=False, *, stable=False):
    """The indices that sort ``input`` along ``dim`` (stable)."""
    d = _sort_dim(input, dim)
    a = input._data
    xp = get_array_module(a)
    if a.ndim == 0:
        return wrap(xp.zeros((), _INT64))
    return wrap(_order(xp, a, d, descending))


@register
def msort(input):
    """``input`` sorted along its first dim."""
    return sort(input, 0).values


@register
def topk(input, k, dim=-1, largest=True, sorted=True):
    """The ``k`` largest (``largest=False``: smallest) elements along ``dim``, in order."""
    d = _sort_dim(input, dim)
    n = input._data.shape[d] if input._data.ndim else 1
    k = operator.index(k)
    if not 0 <= k <= n:
        raise RuntimeError("selected index k out of range")
    if input._data.dtype.kind == "b":  # checked after dim and k, as PyTorch does
        raise RuntimeError("topk does not support bool dtypes on CPU")
    return return_types.topk(apply(_topk, (input,), (k, d, largest, sorted)))


def _no_bool(input, kernel):
    """Selection kernels PyTorch defines for every dtype but bool."""
    if input._data.dtype.kind == "b":
        raise NotImplementedError(f'"{kernel}" not implemented for \'Bool\'')


def _nonempty_dim(input, d, name):
    if input._data.ndim and input._data.shape[d] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")


@register
def kthvalue(input, k, dim=-1, keepdim=False):
    """The ``k``-th smallest element along ``dim`` (1-based) and its index."""
    _no_bool(input, "kthvalue_cpu")
    d = _sort_dim(input, dim)
    _nonempty_dim(input, d, "kthvalue")
    n = input._data.shape[d] if input._data.ndim else 1
    k = operator.index(k)
    if not 1 <= k <= n:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    return return_types.kthvalue(apply(_kthvalue, (input,), (k, d, keepdim)))


def _median_fn(name, full, by_dim, named):
    def fn(input, dim=NO_DIM, keepdim=None):
        # PyTorch checks the dtype after the shape: an empty bool tensor has a median
        if dim is None:  # the dim overload takes an int
            raise TypeError(f"{name}(): argument 'dim' must be int, not NoneType")
        if dim is NO_DIM:
            if keepdim is not None:  # the dim-less overload takes no keepdim
                _missing_dim(name)
            if input._data.size:
                _no_bool(input, "median_cpu")
            return apply(full, (input,))
        d = _sort_dim(input, dim)
        _nonempty_dim(input, d, "median")  # nanmedian's message says median() too
        _no_bool(input, "median_out")
        return named(apply(by_dim, (input,), (d, bool(keepdim))))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"The lower median (of all elements, or ``(values, indices)`` along "
                  f"``dim``){' ignoring NaN' if name == 'nanmedian' else '; NaN if any is'}.")
    return register(fn)


median = _median_fn("median", _median, _median_dim, return_types.median)
nanmedian = _median_fn("nanmedian", _nanmedian, _nanmedian_dim, return_types.nanmedian)


@register
def mode(input, dim=-1, keepdim=False):
    """The most frequent value along ``dim`` (smallest on ties) and its last index."""
    if dim is None:
        raise TypeError("mode(): argument 'dim' must be int, not NoneType")
    d = _sort_dim(input, dim)
    _nonempty_dim(input, d, "mode")
    return return_types.mode(apply(_mode, (input,), (d, keepdim)))


def _cum(name, op, named):
    def fn(input, dim):
        if not isinstance(dim, numbers.Integral):
            raise TypeError(f"{name}(): argument 'dim' (position 2) must be int, not "
                            f"{type(dim).__name__}")
        if input._data.ndim == 0 and dim not in (0, -1):  # (PyTorch's own message here)
            raise IndexError(f"{name}(): Expected reduction dim -1 or 0 for scalar but got "
                             f"{dim}")
        return named(apply(op, (input,), (_sort_dim(input, dim),)))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"Running {name[3:]}imum along ``dim`` and the index where it was reached "
                  "(the last of equal values).")
    return register(fn)


cummax = _cum("cummax", _cummax, return_types.cummax)
cummin = _cum("cummin", _cummin, return_types.cummin)


@register
def logcumsumexp(input, dim):
    """``log(cumsum(exp(input), dim))`` without overflow."""
    d = _sort_dim(input, dim)  # PyTorch checks the dim before the dtype
    if not is_inexact(input._data.dtype):
        raise NotImplementedError(f'"logcumsumexp_out_cpu" not implemented for '
                                  f"'{_pretty(input._data.dtype)}'")
    return apply(_logcumsumexp, (input,), (d,))


# ---- quantile -------------------------------------------------------------------------------

_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(input, q, dim, keepdim, interpolation, ignore_nan):
    """PyTorch's algorithm, composite: sort, gather the neighbouring ranks, lerp."""
    name = "quantile"  # PyTorch's messages say so for nanquantile too
    a = input._data
    xp = get_array_module(a)
    if not is_float(a.dtype) or is_low(a.dtype):
        raise RuntimeError(f"{name}() input tensor must be either float or double dtype")
    if a.size == 0:
        raise RuntimeError(f"{name}() input tensor must be non-empty")
    if isinstance(q, Tensor):
        if q._data.ndim > 1:
            raise RuntimeError(f"{name}() q must be a scalar or 1D tensor")
        if q._data.dtype != a.dtype:
            raise RuntimeError(f"{name}() q tensor must be same dtype as the input tensor")
        qs, scalar = q._data, q._data.ndim == 0
    else:
        qs, scalar = xp.asarray(q, dtype=a.dtype), True
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(f"{name}() interpolation must be one of linear, lower, higher, "
                           f"midpoint or nearest, but got {interpolation}")
    # a number is checked on the host (on meta too); a tensor where it has values
    check = qs if isinstance(q, Tensor) else numpy.asarray(q, dtype=a.dtype)
    outside = ~((check >= 0) & (check <= 1))
    if check.size and functions(get_array_module(check)).any_true(outside):
        bad = check.reshape(-1)[outside.reshape(-1)][0]
        raise RuntimeError(f"{name}() q values must be in the range [0, 1]" if not scalar
                           else f"{name}() q must be in the range [0, 1] but got {bad.item()}")
    qs = qs.reshape(-1)
    if dim is None:
        x = input.reshape(-1)
        d = 0
        out_shape = (1,) * a.ndim if keepdim else ()
    else:
        d = _dim1(dim, a.ndim)
        x = input if a.ndim else input.reshape(1)
        out_shape = tuple(1 if i == d else n for i, n in enumerate(a.shape)) if keepdim else \
            tuple(n for i, n in enumerate(a.shape) if i != d)
    x = x.movedim(d, -1)
    values = sort(x, -1).values  # NaN last
    n = values._data.shape[-1]
    nan = xp.isnan(x._data)
    if ignore_nan:  # ranks among the non-NaN values; all NaN: position 0 (a NaN)
        ranks = xp.maximum(n - 1 - nan.sum(-1, keepdims=True), 0) * qs
    else:  # a slice with NaN gives NaN: its last (sorted) position
        ranks = xp.where(nan.any(-1, keepdims=True), n - 1, (n - 1) * qs)
    if interpolation == "lower":
        ranks = xp.floor(ranks)
    elif interpolation == "higher":
        ranks = xp.ceil(ranks)
    elif interpolation == "nearest":
        ranks = xp.round(ranks)
    below = ranks.astype(_INT64)
    out = values.gather(-1, wrap(below))
    if interpolation in ("linear", "midpoint"):
        above = xp.ceil(ranks).astype(_INT64)
        weights = xp.full_like(ranks, 0.5) if interpolation == "midpoint" else ranks - below
        weights = wrap(weights.astype(a.dtype))
        if interpolation == "linear" and isinstance(q, Tensor) and q.requires_grad:
            weights = _rank_weights(q, nan, n, ignore_nan, below, a.dtype)
        out = out.lerp(values.gather(-1, wrap(above)), weights)
    out = out.movedim(-1, 0)  # (Q, ...)
    q_shape = () if scalar else (qs.size,)
    return out.reshape(q_shape + out_shape)


def _rank_weights(q, nan, n, ignore_nan, below, dtype):
    """The linear weights ``rank - below`` as PyTorch's ops on ``q`` (the same values),
    so that ``q`` gets PyTorch's gradient: the slope of the ranks times the gap between
    neighbours, none where a mask fixes the rank."""
    q = q.reshape(-1)
    if ignore_nan:  # all NaN: the rank -q, masked to 0
        count = wrap((n - 1 - nan.sum(-1, keepdims=True)).astype(dtype))
        rank = q * count
        rank = rank.masked_fill(rank < 0, 0)
    else:  # a slice with NaN: the last position
        has_nan = nan.any(-1, keepdims=True)
        rank = (q * (n - 1)).expand(*has_nan.shape[:-1], q.shape[0])
        rank = rank.masked_fill(wrap(has_nan), n - 1)
    return rank - wrap(below.astype(dtype))


@register
@_autocast.policy("quantile")
def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    """The ``q``-th quantiles (scalar or 1-D ``q``) over ``dim`` (all elements when None)."""
    return _quantile(input, q, dim, keepdim, interpolation, False)


@register
@_autocast.policy("nanquantile")
def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    """:func:`quantile` ignoring NaN (NaN where a slice is all NaN)."""
    return _quantile(input, q, dim, keepdim, interpolation, True)


# ---- unique ---------------------------------------------------------------------------------

def _no_derivative(name):
    def rule(grad):
        raise NotImplementedError(f"the derivative for '{name}' is not implemented.")

    def jvp(self_t):
        raise NotImplementedError(f"the derivative for '{name}' is not implemented.")
    return {"vjp": {"self": rule}, "jvp": jvp}


def _unique_fwd(xp, self, dim, consecutive):
    """(values, inverse, counts): NumPy's unique, or runs for ``consecutive``."""
    if dim is None:
        flat = xp.reshape(self, (-1,))
        if consecutive:
            keep = xp.concatenate([xp.ones(min(flat.size, 1), bool), flat[1:] != flat[:-1]])
            values = flat[keep]
            inverse = xp.cumsum(keep) - 1
            counts = xp.diff(xp.append(xp.flatnonzero(keep), flat.size))
        else:
            values, inverse, counts = xp.unique(flat, return_inverse=True, return_counts=True,
                                                equal_nan=False)  # NaNs stay apart, as torch
        return (values, xp.reshape(inverse, self.shape).astype(_INT64),
                counts.astype(_INT64))
    moved = xp.moveaxis(self, dim, 0)
    rows = xp.reshape(moved, (moved.shape[0], -1))
    if consecutive:
        keep = xp.ones(rows.shape[0], bool)
        keep[1:] = (rows[1:] != rows[:-1]).any(axis=1)
        values = moved[keep]
        inverse = xp.cumsum(keep) - 1
        counts = xp.diff(xp.append(xp.flatnonzero(keep), rows.shape[0]))
    else:
        _, first, inverse, counts = xp.unique(rows, axis=0, return_index=True,
                                              return_inverse=True, return_counts=True)
        values = moved[first]
    return (xp.moveaxis(values, 0, dim), xp.reshape(inverse, -1).astype(_INT64),
            counts.astype(_INT64))


_UNIQUE_OUT = ("values", "inverse", "counts")
_unique2 = defop("_unique2", _unique_fwd, outputs=_UNIQUE_OUT,
                 nondiff_outputs=("inverse", "counts"), node="Unique2Backward0",
                 **_no_derivative("_unique2"))
_unique_dim = defop("unique_dim", _unique_fwd, outputs=_UNIQUE_OUT,
                    nondiff_outputs=("inverse", "counts"), node="UniqueDimBackward0",
                    **_no_derivative("unique_dim"))
_unique_consecutive = defop("unique_consecutive", _unique_fwd, outputs=_UNIQUE_OUT,
                            nondiff_outputs=("inverse", "counts"),
                            **_no_derivative("unique_consecutive"))


def _unique_result(outs, return_inverse, return_counts):
    values, inverse, counts = outs
    if return_inverse and return_counts:
        return values, inverse, counts
    if return_inverse:
        return values, inverse
    if return_counts:
        return values, counts
    return values


@register
def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """The distinct elements (slices along ``dim``), sorted; optionally the index of each
    element's value (``return_inverse``) and how often each occurs (``return_counts``)."""
    if dim is None:
        outs = apply(_unique2, (input,), (None, False))
    else:
        outs = apply(_unique_dim, (input,), (_dim1(dim, input._data.ndim), False))
    return _unique_result(outs, return_inverse, return_counts)


@register
def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """Collapse runs of equal consecutive elements (slices along ``dim``)."""
    d = None if dim is None else _dim1(dim, input._data.ndim)
    outs = apply(_unique_consecutive, (input,), (d, True))
    return _unique_result(outs, return_inverse, return_counts)

