"""Evenly spaced values as PyTorch's CPU linspace kernel makes them, bit for bit.

The kernel takes the step in the output's dtype (in float64 for integer dtypes), counts
the first half of the values up from the start and the rest down from the end, each
value ``start + step * i`` (or ``end - step * k``) compiled into one fused multiply-add:
one rounding. NumPy has no fused multiply-add, so the float32 and float64 ones are
emulated exactly with error-free transformations; half precision multiplies and adds
with a rounding to its dtype after each, as PyTorch's ``Half`` and ``BFloat16``
operators do. PyTorch's logspace loop is compiled without fused multiply-adds.
"""

import math

import numpy

from .. import _dtype
from . import cpu_kernels

_F32 = numpy.dtype(numpy.float32)
_F64 = numpy.dtype(numpy.float64)


def linspace_array(xp, start, end, steps, dtype):
    """``steps`` values from ``start`` to ``end`` (Python numbers) in NumPy ``dtype``."""
    dtype = numpy.dtype(dtype)
    if dtype.kind == "b":
        raise NotImplementedError("\"linspace_cpu\" not implemented for 'Bool'")
    if dtype.kind == "c":  # (its complex multiply-add is no one fused operation)
        return xp.linspace(start, end, steps).astype(dtype)
    if steps:  # (no values, no conversion)
        _dtype.checked_convert(start, dtype), _dtype.checked_convert(end, dtype)
    if dtype.itemsize < 4 and _dtype.is_float(dtype):
        lo, hi, values = _half_values(xp, start, end, steps, dtype)
    elif dtype == _F32:
        lo, hi = numpy.float32(start), numpy.float32(end)
        with numpy.errstate(over="ignore"):
            step = float((hi - lo) / numpy.float32(steps - 1)) if steps > 1 else 0.0
        values = _fused_values(xp, lo, hi, step, steps, _F32)
    else:  # float64, and integers: their ends in the dtype, the step and values float64
        lo, hi = (int(start), int(end)) if dtype.kind in "iu" else (start, end)
        step = (float(hi) - float(lo)) / float(steps - 1) if steps > 1 else 0.0
        values = _fused_values(xp, float(lo), float(hi), step, steps, _F64)
    if steps == 1:  # (filled with the start: the step would divide by zero)
        return xp.reshape(xp.asarray(lo).astype(dtype), (1,))
    return values.astype(dtype, copy=False)


def logspace_array(xp, start, end, steps, base, dtype):
    """``base`` to the powers of ``steps`` exponents from ``start`` to ``end``, as PyTorch's
    CPU logspace: the ends in ``dtype`` and their difference too, the step and exponents
    in float64 (counted up from the start for the first half and down from the end for
    the rest, multiplied and added with two roundings: this loop is compiled without
    fused multiply-adds), each power the C library's on the CPU (NumPy's vectorized power
    can differ from it in the last bit)."""
    dtype = numpy.dtype(dtype)
    if dtype.kind == "c":  # (its complex multiply-add is no one fused operation)
        return xp.logspace(start, end, steps, base=base).astype(dtype)
    if steps == 0:  # (no values, no conversion)
        return xp.zeros(0, dtype=dtype)
    base = float(base)
    half = dtype.itemsize < 4 and _dtype.is_float(dtype)  # (C++ converts through float)
    if steps == 1:  # (a fill with the start's power: it checks the value fits the dtype,
        value = _c_pow(base, float(start))  # but for half precision)
        if not half:
            _dtype.checked_convert(value, dtype)
        values = xp.full(1, value, dtype=_F64)
    else:
        lo, hi = (int(start), int(end)) if dtype.kind in "iu" else (start, end)
        _dtype.checked_convert(lo, dtype), _dtype.checked_convert(hi, dtype)
        lo, hi = numpy.asarray(lo).astype(dtype), numpy.asarray(hi).astype(dtype)
        with numpy.errstate(over="ignore"):
            step = float(numpy.asarray(hi - lo).astype(_F64)) / float(steps - 1)
        i = xp.arange(steps, dtype=_F64)
        exponents = xp.where(i < steps // 2, float(lo) + step * i,
                             float(hi) - step * (steps - 1 - i))
        if xp is numpy:
            values = numpy.array([_c_pow(base, x) for x in exponents.tolist()], dtype=_F64)
        else:  # (another device's power is its own, as PyTorch's kernels there are)
            values = xp.power(base, exponents)
    return (values.astype(_F32) if half else values).astype(dtype)


def _c_pow(base, x):
    """C's ``pow``: Python's, but for the overflow and domain errors it raises where C
    gives an infinity or a NaN."""
    try:
        return math.pow(base, x)
    except (OverflowError, ValueError):
        with numpy.errstate(over="ignore", invalid="ignore"):
            return float(numpy.power(base, x))


def _halves(xp, steps):
    """The indices, whether each is in the first half (counted up from the start) and
    each one's count down from the end."""
    i = xp.arange(steps, dtype=_F64)
    return i, i < steps // 2, steps - 1 - i


def _fused_values(xp, lo, hi, step, steps, dtype):
    """In float32 or float64 ``dtype``: ``step * i + lo`` for the first half of the
    indices, ``-step * k + hi`` for the rest, each one fused multiply-add, the index
    converted to ``dtype`` first. The compiled kernel's on NumPy (numba installed); else
    emulated exactly, one pass over both halves (meta's concatenate of the halves would
    allocate)."""
    if xp is numpy and cpu_kernels.ready():
        return cpu_kernels.linspace(lo, hi, step, steps, dtype)
    i, first, k = _halves(xp, steps)
    n, sign = xp.where(first, i, k), xp.where(first, 1.0, -1.0)
    ends = xp.where(first, float(lo), float(hi))
    if dtype == _F32:  # (an index past 2**24 is rounded to float32 first)
        return _fma32(xp, sign * step, n.astype(_F32).astype(_F64), ends)
    return fma(xp, step, sign, n, ends)


def _half_values(xp, start, end, steps, dtype):
    """Half precision's ends and values: each product and sum computed in float32,
    rounded to ``dtype`` (the ends and the step too, the ends through float32 first)."""
    def r(x):
        return xp.asarray(x, dtype=_F32).astype(dtype).astype(_F32)

    lo, hi = r(start), r(end)
    step = r(r(hi - lo) / r(float(steps - 1)))
    i, first, k = _halves(xp, steps)
    return lo, hi, xp.where(first, r(lo + r(step * r(i))), r(hi - r(step * r(k))))


def fma(xp, a, sign, n, c):
    """``sign * a * n + c`` rounded once, for a float64 number ``a``, signs ``sign`` (an
    array of 1 and -1), whole numbers ``n`` below 2**26 and float64 numbers ``c`` (arrays):
    Boldo and Melquiond's emulation, the product and its sum with ``c`` split exactly in
    two, the two low parts added rounding to odd, the result rounded once (proved for low
    parts that stay normal; subnormal ends matched PyTorch in every case tried); a
    non-finite case is the plain expression's."""
    a, a_hi = sign * a, sign * _high_bits(a)
    p = a * n
    p_err = (a_hi * n - p) + (a - a_hi) * n
    s, s_err = _two_sum(c, p)
    out = s + _sum_to_odd(xp, s_err, p_err)
    return xp.where(xp.isfinite(out), out, p + c)


def _fma32(xp, a, n, c):
    """``a * n + c`` rounded once to float32 for float32 values ``a``, ``n`` and ``c``
    (given as float64): the product is exact in float64, the sum is rounded to odd there,
    from which one rounding to float32 is the right one."""
    return _sum_to_odd(xp, a * n, c).astype(_F32)


def _high_bits(a):
    """``a`` with the low 27 of its 53 significant bits cleared: its product with a whole
    number below 2**26 is exact, as is the rest's (PyTorch's kernel sees no overflow the
    usual split by 2**27 + 1 would make of a huge step)."""
    bits = numpy.float64(a).view(numpy.int64) & ~numpy.int64((1 << 27) - 1)
    return float(bits.view(numpy.float64))


def _two_sum(x, y):
    """``x + y`` rounded and its rounding error, exactly (Knuth)."""
    s = x + y
    b = s - x
    return s, (x - (s - b)) + (y - b)


def _sum_to_odd(xp, x, y):
    """``x + y`` rounded to odd: toward zero, its last bit set when inexact, so that a
    later rounding to fewer bits is as if from the exact sum. A finite rounded sum with
    its last bit clear that is not exact steps one unit toward the exact sum (both
    neighbours are odd), on its bits: one integer add (a float's bits are ordered as its
    magnitude)."""
    s, err = _two_sum(x, y)
    bits = s.view(numpy.int64)
    inexact_even = (err != 0) & ((bits & 1) == 0) & xp.isfinite(s)
    step = xp.where((err > 0) == (s > 0), 1, -1) * inexact_even
    return (bits + step).view(numpy.float64)
