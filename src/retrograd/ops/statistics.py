"""Counting and statistics: histc, histogram, histogramdd, bincount, cov and corrcoef."""

import math
import operator
import warnings

from .._dtype import checked_convert, is_float
from .. import _dtype, return_types
from ..backend.spacing import linspace_array
from .._tensor import Tensor, wrap
from ..autograd._batched import Batched
from ..backend import get_array_module
from ..backend.functions import functions
from ._registry import _pretty, register
from .binary import where

__all__ = ["histc", "histogram", "histogramdd", "bincount", "cov", "corrcoef"]


_INT64 = _dtype.int64.np


def _bound(x):
    """A range bound as PyTorch's messages print it (C++'s ``%g``; a NaN keeps its sign)."""
    x = float(x)
    if math.isnan(x):
        return "-nan" if math.copysign(1.0, x) < 0 else "nan"
    return f"{x:g}"


def _check_finite(message, lows, highs):
    """PyTorch's RuntimeError for bins over a range with an infinite or NaN end (one pair
    per batch member under vmap, none on meta)."""
    for lo, hi in zip(lows, highs, strict=True):
        if not (math.isfinite(lo) and math.isfinite(hi)):
            raise RuntimeError(message.format(_bound(lo), _bound(hi)))


def _host_range(xp, lo, hi):
    """Range ends (0-d arrays, such as the data's smallest and largest value) as host
    numbers for the checks."""
    f = functions(xp)
    return f.checked_values(lo), f.checked_values(hi)


@register
def histc(input, bins=100, min=0, max=0, *, out=None):
    """Histogram of ``bins`` equal bins over [min, max] (the data's range when both are 0);
    elements outside are ignored."""
    a = input._data
    if not is_float(a.dtype):
        raise NotImplementedError(f"\"histogram_cpu\" not implemented for '{_pretty(a.dtype)}'")
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for "
                           f"dimension 0")
    if min > max:
        raise RuntimeError("torch.histc: max must be larger than min")
    for bound in (min, max):  # the range is a Scalar of input's dtype
        checked_convert(bound, a.dtype)
    xp = get_array_module(a)
    lo, hi = float(min), float(max)
    message = "torch.histc: range of [{}, {}] is not finite"
    if lo == hi and a.size:  # the data's range, as arrays (no values on meta)
        lo, hi = a.min(), a.max()
        _check_finite(message, *_host_range(xp, lo, hi))
        lo, hi = lo.astype(_dtype.float64.np), hi.astype(_dtype.float64.np)
        same = lo == hi
        lo, hi = xp.where(same, lo - 1, lo), xp.where(same, hi + 1, hi)
    elif lo == hi:
        lo, hi = lo - 1, hi + 1
    else:
        _check_finite(message, [lo], [hi])
    return wrap(_linear_bins(xp, a, bins, lo, hi).astype(a.dtype))


def _linear_bins(xp, a, bins, lo, hi):
    """Counts of ``a`` in ``bins`` equal bins over [lo, hi] as PyTorch's histc kernel bins
    them: ``(x - lo) * bins / (hi - lo)`` in the input's dtype, each step rounded (NumPy's
    histogram, in float64, puts values near a bin edge into the other bin). Elements
    outside count 0 in bin 0, so the counts' length needs no values."""
    lo, hi = xp.asarray(lo).astype(a.dtype), xp.asarray(hi).astype(a.dtype)
    inside = (a >= lo) & (a <= hi)
    with functions(xp).errstate(invalid="ignore"):  # (a NaN range: nothing inside)
        pos = xp.floor(((a - lo) * bins / (hi - lo)).astype(_dtype.float64.np)).astype(_INT64)
    pos = xp.where(inside, xp.minimum(pos, bins - 1), 0)
    return functions(xp).bincount(pos.reshape(-1), inside.reshape(-1).astype(_dtype.float64.np),
                                  bins)


@register
def histogram(input, bins, *, range=None, weight=None, density=False, out=None):
    """``(hist, bin_edges)``: ``bins`` equal bins over ``range`` (the data's by default) or
    the given edges; the last bin includes its right edge. Binned as a one-dimensional
    histogramdd, as PyTorch's kernel does (NumPy's float64 binning puts values next to an
    edge into the other bin)."""
    a = input._data
    if not is_float(a.dtype):
        raise NotImplementedError(f"\"histogram_cpu\" not implemented for '{_pretty(a.dtype)}'")
    edges = bins._data if isinstance(bins, Tensor) else bins
    if not isinstance(bins, Tensor) and bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for "
                           f"dimension 0")
    xp = get_array_module(a)
    if not isinstance(bins, Tensor):
        _check_range(xp, a, range)
    w = None if weight is None else weight._data
    if any(isinstance(v, Batched) for v in (a, edges, w)):  # (vmap: NumPy's, batched)
        hist, edges = xp.histogram(a, bins=edges, range=range, density=density, weights=w)
        return return_types.histogram((wrap(hist.astype(a.dtype)),
                                       wrap(edges.astype(a.dtype))))
    points = a.reshape(-1, 1)
    if not isinstance(bins, Tensor):
        edges = _equal_bin_edges(xp, points, [bins], None if range is None else
                                 [float(range[0]), float(range[1])])[0]
    hist = _histogramdd_counts(xp, points, [edges], None if w is None else w.reshape(-1),
                               density)
    return return_types.histogram((wrap(hist), wrap(edges.astype(a.dtype))))


def _check_range(xp, a, range):
    """PyTorch's checks of equal bins' range: the given one, else the data's (an empty
    input's is [0, 1])."""
    if range is None:
        lows, highs = _host_range(xp, a.min(), a.max()) if a.size else ([], [])
    else:
        lows, highs = [float(range[0])], [float(range[1])]
    if range is not None and lows[0] > highs[0]:
        raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min "
                           f"{_bound(lows[0])} max {_bound(highs[0])} for dimension 0")
    if range is not None:  # each end a Scalar of the input's dtype
        checked_convert(lows[0], a.dtype), checked_convert(highs[0], a.dtype)
    _check_finite("torch.histogramdd: dimension 0's range [{}, {}] is not finite", lows, highs)


@register(method=False)
def histogramdd(input, bins, *, range=None, weight=None, density=False):
    """``(hist, bin_edges)``: the N-dimensional histogram of the points in ``input``'s rows
    (its last dim holds a point's N coordinates). ``bins`` gives each dimension its edges
    (a sequence of 1-D tensors), its number of equal bins (ints; over ``range``, a
    ``(min, max)`` pair per dimension, or the data's), or one number for all. Every bin
    includes its left edge; the last of a dimension its right edge too.

    >>> retrograd.histogramdd(retrograd.tensor([[0., 1.], [2., 0.]]), bins=2).hist
    tensor([[0., 1.],
            [1., 0.]])
    """
    a = input._data
    counts, edges = _parse_bins(bins, input, range, weight, density)
    if weight is not None and not isinstance(weight, Tensor):
        raise _invalid_histogramdd(input, bins, range, weight, density)
    if range is not None:
        range = _parse_range(range, input, bins, weight, density)
    if isinstance(counts, int):
        if a.ndim == 0:
            raise IndexError("Dimension specified as -1 but tensor has no dimensions")
        counts = [counts] * a.shape[-1]
    if a.ndim < 2:
        raise RuntimeError("torch.histogramdd: input tensor should have at least 2 dimensions")
    xp = get_array_module(a)
    points = a.reshape(math.prod(a.shape[:-1]), a.shape[-1])
    if edges is None:
        edges = [wrap(e) for e in _equal_bin_edges(xp, points, counts, range)]
    _check_histogramdd(a, edges, weight)
    hist = _histogramdd_counts(xp, points, [e._data for e in edges],
                               None if weight is None else weight._data.reshape(-1), density)
    return return_types.histogramdd((wrap(hist), tuple(edges)))


_HISTOGRAMDD_SIGNATURES = tuple(
    f"Tensor input, {b} bins, tuple of floats range = None, Tensor weight = None, "
    f"bool density = False" for b in ("int", "tuple of ints", "tuple of Tensors"))


def _invalid_histogramdd(input, bins, range, weight, density):
    """PyTorch's TypeError for arguments no overload takes (the keywords not at their
    defaults are listed, last first, as PyTorch lists those passed in that order)."""
    name = lambda v: "Tensor" if isinstance(v, Tensor) else type(v).__name__  # noqa: E731
    given = [name(input), name(bins)] + [
        f"{k}={name(v)}" for k, v in (("density", density), ("weight", weight),
                                      ("range", range)) if v is not None and v is not False]
    return TypeError(f"histogramdd() received an invalid combination of arguments - got "
                     f"({', '.join(given)}), but expected one of:\n" +
                     "".join(f" * ({s})\n" for s in _HISTOGRAMDD_SIGNATURES))


def _as_int(v):
    """``v`` as a Python int where PyTorch's parser takes it for an ``int`` (a bool is
    not), else None."""
    if isinstance(v, bool):
        return None
    try:
        return operator.index(v)
    except TypeError:
        return None


def _parse_bins(bins, *call):
    """``(counts, None)`` for an int or a sequence of ints, ``(None, edges)`` for a
    sequence of tensors, with PyTorch's TypeErrors for anything else."""
    if isinstance(bins, (list, tuple)):
        if bins and isinstance(bins[0], Tensor):
            for i, b in enumerate(bins):
                if not isinstance(b, Tensor):
                    raise TypeError(f"expected Tensor as element {i} in argument 1, but got "
                                    f"{type(b).__name__}")
            return None, list(bins)
        counts = [_as_int(b) for b in bins]
        for i, (b, c) in enumerate(zip(bins, counts, strict=True)):
            if c is None:
                if i == 0:
                    raise TypeError(f"expected Tensor as element 0 in argument 1, but got "
                                    f"{type(b).__name__}")
                raise TypeError(f"histogramdd(): argument 'bins' failed to unpack the object at "
                                f"pos {i + 1} with error \"type must be tuple of ints,but got "
                                f"{'Tensor' if isinstance(b, Tensor) else type(b).__name__}\"")
        return counts, None
    count = _as_int(bins)
    if count is None:
        raise _invalid_histogramdd(call[0], bins, *call[1:])
    return count, None


def _parse_range(range, input, bins, weight, density):
    if isinstance(range, Tensor) or not isinstance(range, (list, tuple)):
        raise _invalid_histogramdd(input, bins, range, weight, density)
    for i, v in enumerate(range):
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise TypeError(f"histogramdd(): argument 'range' must be tuple of floats, but "
                            f"found element of type {type(v).__name__} at pos {i + 1}")
    return [float(v) for v in range]


def _equal_bin_edges(xp, points, counts, bounds):
    """Each dimension's ``count + 1`` edges of equal bins over ``bounds`` (the data's
    smallest and largest coordinate by default), as PyTorch's checks and linspace make
    them; a range of one value widens by 0.5 either side."""
    n = points.shape[1]
    if bounds is not None:
        if len(bounds) != 2 * n:
            raise RuntimeError(f"torch.histogramdd: for a {n}-dimensional histogram range "
                               f"should have {2 * n} elements, but got {len(bounds)}")
        lows, highs = bounds[0::2], bounds[1::2]
    elif points.size:
        if points.dtype.name not in ("float32", "float64"):  # (its min and max kernel's)
            raise NotImplementedError(f"\"histogramdd\" not implemented for "
                                      f"'{_pretty(points.dtype)}'")
        ends = [_host_range(xp, points[:, d].min(), points[:, d].max()) for d in range(n)]
        # (no values on meta: edges of the right length are all it needs)
        lows, highs = ([float(lo[0]) if lo else 0.0 for lo, _ in ends],
                       [float(hi[0]) if hi else 1.0 for _, hi in ends])
    else:
        lows, highs = [0.0] * n, [1.0] * n
    for d, (lo, hi) in enumerate(zip(lows, highs, strict=True)):
        _check_finite(f"torch.histogramdd: dimension {d}'s range [{{}}, {{}}] is not finite",
                      [lo], [hi])
        if lo > hi:
            raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min "
                               f"{_bound(lo)} max {_bound(hi)} for dimension {d}")
    if len(counts) != n:
        raise RuntimeError("histogramdd: The size of bins must be equal to the innermost "
                           "dimension of the input.")
    if any(c + 1 < 0 for c in counts):
        raise RuntimeError("number of steps must be non-negative")
    return [linspace_array(xp, lo - 0.5 * (lo == hi), hi + 0.5 * (lo == hi), c + 1,
                           points.dtype)
            for lo, hi, c in zip(lows, highs, counts, strict=True)]


def _check_histogramdd(a, edges, weight):
    """PyTorch's checks of the bin edges and weight against the input, then of each
    dimension's number of bins, then of the dtype its kernel takes."""
    n = a.shape[-1]
    if len(edges) != n:
        raise RuntimeError(f"torch.histogramdd: expected {n} sequences of bin edges for a "
                           f"{n}-dimensional histogram but got {len(edges)}")
    names = _dtype.CPP_NAMES
    for d, e in enumerate(edges):
        e = e._data
        if e.dtype != a.dtype:
            raise RuntimeError(f"torch.histogramdd: input tensor and bins tensors should have "
                               f"the same dtype, but got input with dtype {names[a.dtype.name]} "
                               f"and bins for dimension {d} with dtype {names[e.dtype.name]}")
        if e.ndim != 1:
            raise RuntimeError(f"torch.histogramdd: bins tensor should have one dimension, but "
                               f"got {e.ndim} dimensions in the bins tensor for dimension {d}")
        if e.size == 0:
            raise RuntimeError(f"torch.histogramdd: bins tensor should have at least 1 element, "
                               f"but got 0 elements in the bins tensor for dimension {d}")
    if weight is not None:
        w = weight._data
        if w.dtype != a.dtype:
            raise RuntimeError(f"torch.histogramdd: if weight tensor is provided, input tensor "
                               f"and weight tensor should have the same dtype, but got "
                               f"input({names[a.dtype.name]}), and weight({names[w.dtype.name]})")
        if tuple(w.shape or (1,)) != a.shape[:-1]:
            raise RuntimeError(f"torch.histogramdd: if weight tensor is provided it should have "
                               f"the same shape as the input tensor excluding its innermost "
                               f"dimension, but got input with shape {list(a.shape)} and "
                               f"weight with shape {list(w.shape)}")
    for d, e in enumerate(edges):
        if e._data.size < 2:
            raise RuntimeError(f"torch.histogram(): bins must be > 0, but got 0 for "
                               f"dimension {d}")
    if a.dtype.name not in ("float16", "bfloat16", "float32", "float64"):
        raise NotImplementedError(f"\"histogram_cpu\" not implemented for "
                                  f"'{_pretty(a.dtype)}'")


def _histogramdd_counts(xp, points, edges, weight, density):
    """The count (or summed weight) of ``points`` in each bin of the grid the ``edges``
    make, as PyTorch's kernel bins them: a point outside (or NaN) in any dimension counts
    nowhere; in a dimension, its bin is the last edge at or below it, found among the
    edges in the input's dtype, the last edge belonging to the last bin. Half precision
    is compared and divided in float32 (which holds its values exactly) and rounded once."""
    shape = tuple(e.shape[0] - 1 for e in edges)
    f = functions(xp)
    if not edges:  # (no dimensions: one empty bin)
        return xp.zeros((), dtype=points.dtype)
    dtype = points.dtype
    if dtype.itemsize < 4:
        points, edges = points.astype(_dtype.float32.np), [e.astype(_dtype.float32.np)
                                                           for e in edges]
    flat = xp.zeros(points.shape[0], dtype=_INT64)
    inside = xp.ones(points.shape[0], dtype=bool)
    for d, e in enumerate(edges):
        x = points[:, d]
        inside &= (x >= e[0]) & (x <= e[-1])
        pos = xp.minimum(xp.searchsorted(e, x, side="right") - 1, shape[d] - 1)
        flat = flat * shape[d] + xp.where(inside, pos, 0)
    if weight is None:
        hist = f.bincount(xp.where(inside, flat, 0), inside.astype(_dtype.float64.np),
                          math.prod(shape)).astype(points.dtype)
    else:  # (summed one by one in the dtype, in the input's order, as the kernel does)
        hist = xp.zeros(math.prod(shape), dtype=points.dtype)
        f.index_add(hist, xp.where(inside, flat, 0),
                    xp.where(inside, weight.astype(points.dtype), 0))
    hist = hist.reshape(shape)
    if density:
        with f.errstate(invalid="ignore", divide="ignore"):
            hist = hist / hist.sum()
            for d, e in enumerate(edges):
                hist = hist / xp.reshape(e[1:] - e[:-1], [-1 if k == d else 1
                                                           for k in range(len(shape))])
    return hist.astype(dtype)


@register
def bincount(input, weights=None, minlength=0):
    """Occurrences of each non-negative integer (summed ``weights`` when given)."""
    a = input._data
    if a.dtype.kind not in "iub":
        raise NotImplementedError(f"\"bincount_cpu\" not implemented for '{_pretty(a.dtype)}'")
    xp = get_array_module(a)
    if a.ndim != 1 or functions(xp).any_true(a < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is None:  # (the length is the largest value's: meta refuses, as PyTorch's)
        return wrap(xp.bincount(a, minlength=minlength).astype(_INT64))
    w = weights._data
    dt = w.dtype if is_float(w.dtype) else _dtype.float64.np
    return wrap(xp.bincount(a, w, minlength=minlength).astype(dt))


def _few_degrees():
    warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less "
                  "than the number of observations.", UserWarning, stacklevel=3)


@register
def cov(input, *, correction=1, fweights=None, aweights=None):
    """Covariance of the variables in the rows of ``input`` (observations in columns),
    with integer frequency and float importance weights, as PyTorch computes it."""
    if input._data.dtype.kind in "biu":  # integers are averaged in the default float type
        input = input.to(_dtype.get_default_dtype())
    x = input if input._data.ndim == 2 else input.reshape(1, -1)
    if input._data.ndim > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an "
                           f"input with {input._data.ndim} dimensions")
    n = x._data.shape[1]
    w = None
    if fweights is not None:
        w = fweights
    if aweights is not None:
        w = aweights if w is None else w * aweights
    if w is None:
        avg = x.mean(1)
        w_sum = n
        norm = w_sum - correction
    else:
        w_sum = w.sum()
        avg = (x * w).sum(1) / w_sum
        if aweights is None or correction == 0:
            norm = w_sum - correction
        else:
            norm = w_sum - correction * (w * aweights).sum() / w_sum
    if isinstance(norm, Tensor):  # the weights' count: a value, none on meta
        nonpositive = norm <= 0
        if functions(get_array_module(nonpositive._data)).any_true(nonpositive._data):
            _few_degrees()
        norm = where(nonpositive, 0, norm)
    elif norm <= 0:
        _few_degrees()
        norm = 0
    x = x - avg.unsqueeze(1)
    c = x.mm((x if w is None else x * w).t())
    return (c / norm).squeeze()


@register
def corrcoef(input):
    """Pearson correlation coefficients of the rows of ``input``, clipped to [-1, 1]."""
    c = cov(input)
    if c._data.ndim == 0:
        return c / c
    std = c.diagonal().sqrt()
    c = c / std.reshape(-1, 1)
    c = c / std.reshape(1, -1)
    return c.clip(-1, 1)
