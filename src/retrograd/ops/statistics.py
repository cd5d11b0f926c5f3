"""Counting and statistics: histc, histogram, bincount, cov and corrcoef."""

import math
import warnings

from .._dtype import checked_convert, is_float
from .. import _dtype, return_types
from .._tensor import Tensor, wrap
from ..backend import get_array_module
from ..backend.functions import functions
from ._registry import _pretty, register
from .binary import where

__all__ = ["histc", "histogram", "bincount", "cov", "corrcoef"]


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
    the given edges; the last bin includes its right edge."""
    a = input._data
    if not is_float(a.dtype):
        raise NotImplementedError(f"\"histogram_cpu\" not implemented for '{_pretty(a.dtype)}'")
    edges = bins._data if isinstance(bins, Tensor) else bins
    if not isinstance(bins, Tensor) and bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for "
                           f"dimension 0")
    if not isinstance(bins, Tensor):
        _check_range(get_array_module(a), a, range)
    hist, edges = get_array_module(a).histogram(a, bins=edges, range=range, density=density,
                                                weights=None if weight is None else weight._data)
    return return_types.histogram((wrap(hist.astype(a.dtype)), wrap(edges.astype(a.dtype))))


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
