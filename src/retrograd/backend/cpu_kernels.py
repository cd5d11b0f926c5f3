"""Compiled CPU kernels (numba, an optional extra) for the passes of a training step that
NumPy can only write as chains of whole-array passes, or runs far below memory speed: GELU,
layer norm, softmax and log-softmax over the last axis, batch norm by channel (by row on
BatchNorm1d's (N, C)), each way, ReLU each way, the outer product, ``x + alpha * y``, add,
sub, mul and div of a row or a column of the other operand (or of two of one shape, on
OpenBLAS's threads), in-place addcmul, addcdiv and sqrt, a bias's gradient's column sums,
in float32; Adam's update, in float32 and float64; 2-D max pools and a max pool's gradient
scatter, in float32 (NumPy's need a pass per comparison, and a fancy-index assignment,
several times slower);
linspace's fused multiply-adds and ``a * b - c`` rounded once, float32 and float64
(addcmul's and layer norm's: NumPy has no FMA, and its exact emulation takes some twenty
to forty-five passes); the transforms of Winograd's 3x3 convolution
(:mod:`._numba_winograd`), col2im's adds at a stride (:mod:`._numba_col2im`), the direct
sums of convolutions of few taps (:mod:`._numba_direct`, which also multiply batches of
small matrices) and a test for infinities and NaN.

A NumPy chain reads and writes every element once per operation (GELU's is fifteen
passes); these loops do each element's arithmetic in registers, one pass over memory,
vectorized by LLVM. NumPy stays the default and the fallback: without numba,
:func:`ready` is false and the ops run their NumPy kernels. The kernels
(:mod:`._numba_kernels`) compile on first use and numba caches them on disk; the large
calls of some run in parts on OpenBLAS's threads (:mod:`.blas_threads`).
"""

import array
import functools
import importlib.util
import itertools
import math
import operator
import os
import struct

import numpy

from . import blas_threads

__all__ = ["ready", "native_float32", "takes", "gelu", "gelu_grad", "layer_norm", "layer_norm_dx",
           "layer_norm_dw", "column_sum", "softmax", "causal_softmax", "causal_softmax_grad",
           "masked_softmax", "masked_softmax_grad", "mask_takes", "softmax_grad", "log_softmax",
           "log_softmax_grad", "adam_step", "relu", "relu_grad", "outer", "add_scaled", "scale",
           "addcmul", "addcdiv", "sqrt_", "mul_sub", "mul_add", "max_pool_2d", "max_pool_grad",
           "linspace",
           "copy_into", "copies", "contiguous", "pad_planes", "pays",
           "channel_runs_pay",
           "broadcasts", "broadcast", "batch_norm", "channel_affine",
           "batch_norm_backward", "sums_columns", "column_sums", "winograd_weights",
           "winograd_weights_grad", "winograd_positions",
           "winograd_tiles", "winograd_untile", "winograd_grad_tiles", "col2im", "all_finite",
           "direct_conv", "direct_conv_dw", "phase_planes", "interleave_columns", "matmuls",
           "concatenate"]


@functools.cache
def ready():
    """Whether numba is installed and compiling (``NUMBA_DISABLE_JIT=1``, set to step
    through code in a debugger, turns these kernels off: they need the compiler). Its
    import is deferred to the first kernel call."""
    return (importlib.util.find_spec("numba") is not None
            and os.environ.get("NUMBA_DISABLE_JIT", "0") in ("", "0"))


_FLOAT32 = numpy.dtype(numpy.float32)  # (native byte order: ">f4" is not equal to it)


def native_float32(*arrays):
    """Whether each array is float32 in this machine's byte order (a big-endian one,
    which ``retrograd.tensor`` keeps, is read by NumPy, not by the kernels)."""
    return all(a.dtype == _FLOAT32 for a in arrays)


def takes(first, *others):
    """Whether the kernels take these arrays (None: an absent optional one): non-empty,
    native float32, C-contiguous. A loop, not a generator: it runs on every call of the ops."""
    if not (ready() and first.size):
        return False
    for x in (first, *others):
        if x is not None and (x.dtype != _FLOAT32 or not x.flags.c_contiguous):
            return False
    return True


@functools.cache
def _kernels():
    """Compile (or load from numba's cache) every kernel: {name: function}."""
    # (numba loads on the first kernel call)
    from . import _numba_col2im, _numba_direct, _numba_kernels, _numba_winograd
    return {**_numba_kernels.KERNELS,
            "jobs": {**_numba_kernels.JOBS, **_numba_winograd.JOBS, **_numba_col2im.JOBS,
                     **_numba_direct.JOBS}}


def _flat(x):
    return x.reshape(-1)


def _rows(x, n):
    """A C-contiguous array as rows of its last ``n`` elements (a view)."""
    return x.reshape(-1, n)


# Work from which a kernel runs on OpenBLAS's threads, in elements of its first array:
# where two threads win with the worker awake, as in a training step (each GEMM leaves it
# spinning some 0.1 s, and it takes a job at once). A call after a longer idle pays its
# wake-up: ReLU on 128K float32 after 0.3 s asleep took 0.43-0.51 ms against 0.22 on one
# thread, where PyTorch's two OpenMP threads took 4.6-6.4 ms. In w2's step (128 x 1024
# activations) ReLU, its gradient and the bias adds in parts took 100-180 us less a step.
_SPLIT_MIN = {"relu": 1 << 17, "relu_grad": 1 << 17, "gelu": 1 << 15, "gelu_grad": 1 << 15,
              "max_pool_2x2": 1 << 16, "max_pool_2d": 1 << 15, "index_add_rows": 1 << 17,
              "pad_planes": 1 << 16, "add_scaled": 1 << 18, "scale": 1 << 18,
              "elementwise": 1 << 17, "by_number": 1 << 17, "addcmul": 1 << 16,
              "addcdiv": 1 << 16, "sqrt": 1 << 16,
              "by_row": 1 << 17, "by_column": 1 << 17, "batch_norm": 1 << 16,
              "channel_affine": 1 << 16, "batch_norm_backward": 1 << 16,
              "softmax": 1 << 15, "log_softmax": 1 << 15, "causal_softmax": 1 << 15,
              "masked_softmax": 1 << 15,
              "masked_softmax_grad": 1 << 17, "row_reduce": 1 << 16,
              "softmax_grad": 1 << 17, "log_softmax_grad": 1 << 17, "layer_norm": 1 << 17,
              "layer_norm_dx": 1 << 17, "winograd_tiles": 1 << 16, "winograd_untile": 1 << 16,
              "winograd_grad_tiles": 1 << 16, "winograd_weights": 1 << 16,
              "winograd_weights_grad": 1 << 16, "col2im": 1 << 16, "direct_conv": 1 << 14,
              "direct_conv_dw": 1 << 14, "phase_planes": 1 << 16,
              "interleave_columns": 1 << 16,
              "largest_exponent": 1 << 18, "column_parts": 1 << 16, "batch_norm_band": 1 << 16,
              "channel_affine_band": 1 << 16, "batch_norm_dx_band": 1 << 16,
              "batch_norm_columns": 1 << 16, "batch_norm_dx_columns": 1 << 16,
              "column_sums_columns": 1 << 16}
# Bytes a part of a flat array starts on a multiple of: its elements then meet the same
# vector and scalar loops as when one job takes them all, so the result is the same bit
# for bit whatever the number of threads. (A kernel over rows or planes does the same
# work on each: its parts are whole ones.)
_ALIGN = 4096
# A kernel's job entry and the kernel called from Python may differ in the last bit (LLVM
# compiles their loops apart, as softmax's did), so a large call runs through the job
# even on one thread, and its bits do not change with the thread count. These run through
# it at any size: their small calls must round as their large ones.
_ROUNDED = frozenset(("gelu", "gelu_grad"))


def splits(name, first):
    """Whether kernel ``name`` runs on ``first`` (its first array) in parts on
    OpenBLAS's threads."""
    return first.size >= _SPLIT_MIN[name] and blas_threads.threads() > 1


def _run(name, arrays, *sizes, args=()):
    """Kernel ``name`` on ``arrays`` and ``args``; when large, its job entry (which takes
    the arrays' ``sizes`` too, a float32 as its bits) in parts along the arrays' first
    axis (all C-contiguous), one per OpenBLAS thread (:mod:`.blas_threads`), one part
    on one thread. (Lean: it runs after each large pass, on cold caches.)"""
    kernels = _kernels()
    first = arrays[0]
    split = first.size >= _SPLIT_MIN[name]
    if not split and name not in _ROUNDED:  # (small: no more work)
        kernels[name](*arrays, *args)
        return
    for a in arrays:
        if not a.flags.c_contiguous:
            kernels[name](*arrays, *args)
            return
    n = len(first)
    step = _ALIGN // first.itemsize if first.ndim == 1 else 1
    units = -(-n // step)
    k = min(blas_threads.threads(), units) if split else 1
    tail = [_bits(v) if type(v) is numpy.float32 else v for v in sizes]
    at = [(kernels["address"](a), a.strides[0]) for a in arrays]
    jobs = array.array("q")
    lo = 0
    for i in range(1, k + 1):
        hi = units * i // k * step if i < k else n
        jobs.extend([base + lo * stride for base, stride in at])
        jobs.append(hi - lo)
        jobs.extend(tail)
        lo = hi
    blas_threads.run_flat(kernels["jobs"][name], jobs, len(jobs) // k)


_COPY_MIN = 1 << 16  # elements from which a copy runs in parts on OpenBLAS's threads


def copy_into(dst, src):
    """``dst[...] = src``; a large float32 copy between views of one shape (up to 6-D, not
    overlapping, steps whole and non-negative) in parts on OpenBLAS's threads, along its
    longest axis but the last, or the last (NumPy's ``copyto`` runs on one). A transpose
    (dst's last axis a run, src's not) is copied in tiles even on one thread."""
    if not (dst.size >= _COPY_MIN and ready() and _copies(dst, src)):
        numpy.copyto(dst, src)
        return
    shape, dsteps, ssteps = _merged(dst.shape, *(tuple(s // 4 for s in a.strides)
                                                 for a in (dst, src)))
    k = blas_threads.threads()
    if k == 1 and not (dsteps[-1] == 1 != ssteps[-1] and 1 in ssteps):
        numpy.copyto(dst, src)
        return
    lead = 6 - len(shape)
    shape, dsteps, ssteps = ((1,) * lead + shape, (0,) * lead + dsteps,
                             (0,) * lead + ssteps)
    axis = max(range(5), key=shape.__getitem__)
    if shape[axis] < k:  # (one long run: cut it)
        axis = 5
    n = shape[axis]
    k = min(k, n)
    bases = [address(a) for a in (dst, src)]
    rows = []
    for i in range(k):
        lo, hi = n * i // k, n * (i + 1) // k
        part = list(shape)
        part[axis] = hi - lo
        rows.append([bases[0] + 4 * lo * dsteps[axis], bases[1] + 4 * lo * ssteps[axis],
                     *part, *dsteps, *ssteps])
    blas_threads.run_jobs(_kernels()["jobs"]["strided_copy"], numpy.array(rows, numpy.int64))


def concatenate(arrays, axis):
    """``numpy.concatenate(arrays, axis)``; float32 pieces of one shape but along ``axis``,
    large in all, each copied into its slice of the result by :func:`copy_into` (a
    transposed one in tiles, on OpenBLAS's threads). Only where NumPy's result is
    row-major, as it is when a piece is and has no axis of one element (NumPy lays the
    result out as the pieces are when they all agree: channels-last ones stay so)."""
    first = arrays[0] if len(arrays) else None
    if not (ready() and type(first) is numpy.ndarray and first.dtype == numpy.float32
            and type(axis) is int and -first.ndim <= axis < first.ndim
            and all(type(a) is numpy.ndarray and a.dtype == first.dtype
                    and a.ndim == first.ndim for a in arrays)
            and sum(a.size for a in arrays) >= _COPY_MIN):
        return numpy.concatenate(arrays, axis=axis)
    axis %= first.ndim
    rest = first.shape[:axis] + first.shape[axis + 1:]
    if not (all(a.shape[:axis] + a.shape[axis + 1:] == rest for a in arrays)
            and any(a.flags.c_contiguous and 1 not in a.shape for a in arrays)):
        return numpy.concatenate(arrays, axis=axis)
    out = numpy.empty(first.shape[:axis] + (sum(a.shape[axis] for a in arrays),) + rest[axis:],
                      numpy.float32)
    start = 0
    for a in arrays:
        copy_into(out[(slice(None),) * axis + (slice(start, start + a.shape[axis]),)], a)
        start += a.shape[axis]
    return out


def copies(x):
    """Whether :func:`contiguous` copies ``x`` by :func:`copy_into`: a large float32 view
    that is not C-contiguous."""
    return (type(x) is numpy.ndarray and x.dtype == _FLOAT32 and x.size >= _COPY_MIN
            and not x.flags.c_contiguous and ready())


def contiguous(x):
    """``numpy.ascontiguousarray(x)``, by :func:`copy_into` where :func:`copies` takes it
    (a GEMM computed transposed is laid out back so)."""
    if not copies(x):
        return numpy.ascontiguousarray(x)
    out = numpy.empty(x.shape, x.dtype)
    copy_into(out, x)
    return out


def _merged(shape, *steps):
    """``shape`` and the views' ``steps`` without its axes of one element, each run of axes
    that every view steps through as one merged into one (a copy's runs are then long)."""
    keep = [i for i, n in enumerate(shape) if n != 1] or [len(shape) - 1]
    shape = [shape[i] for i in keep]
    steps = [[st[i] for i in keep] for st in steps]
    i = len(shape) - 1
    while i > 0:
        if all(st[i - 1] == st[i] * shape[i] for st in steps):
            shape[i - 1:i + 1] = [shape[i - 1] * shape[i]]
            for st in steps:
                st[i - 1:i + 1] = [st[i]]
        i -= 1
    return (tuple(shape), *(tuple(st) for st in steps))


def pad_planes(x, hb, r, top, left):
    """A new (..., hb, r) array holding each (h, w) plane of ``x`` at row ``top``, column
    ``left``, zeros around it: written once (zeros, then a copy, write it twice)."""
    h, w = x.shape[-2:]
    if not (0 <= top <= hb - h and 0 <= left <= r - w):  # (the kernel writes unchecked)
        raise ValueError(f"a ({h}, {w}) plane does not fit a ({hb}, {r}) one at ({top}, {left})")
    out = numpy.empty(x.shape[:-2] + (hb, r), x.dtype)
    if not (takes(x) and out.size):
        out.fill(0)
        copy_into(out[..., top:top + h, left:left + w], x)
        return out
    _run("pad_planes", (x.reshape(-1, h, w), out.reshape(-1, hb, r)), h, w, hb, r, top, left,
         args=(top, left))
    return out


def _copies(dst, src):
    """Whether the job copies ``src`` into ``dst``: no element of ``dst`` written twice
    (by two parts at once), none read after it was written."""
    return (type(dst) is type(src) is numpy.ndarray
            and dst.dtype == src.dtype == _FLOAT32 and dst.shape == src.shape
            and dst.ndim <= 6 and dst.flags.writeable
            and all(s >= 0 and s % 4 == 0 for s in dst.strides + src.strides)
            and all(s or n == 1 for s, n in zip(dst.strides, dst.shape, strict=True))
            and not numpy.may_share_memory(dst, src))


def _elementwise(name, *arrays):
    """Kernel ``name`` on ``arrays`` and a new output shaped as the last of them, all
    flat."""
    out = numpy.empty_like(arrays[-1])
    _run(name, [*(_flat(a) for a in arrays), _flat(out)])
    return out


def gelu(x):
    """The exact (erf) GELU, ``x (1 + erf(x / sqrt 2)) / 2``, in one pass."""
    return _elementwise("gelu", x)


def gelu_grad(grad, x):
    """``grad * (Phi(x) + x phi(x))``, in one pass."""
    return _elementwise("gelu_grad", grad, x)


def layer_norm(x, n, eps, weight, bias):
    """Layer norm of each run of the last ``n`` elements of ``x``, and the rows' means
    and reciprocal deviations (flat): one read for each statistic, one write; when large,
    in parts of whole rows on OpenBLAS's threads."""
    out = numpy.empty_like(x)
    rows = x.size // n
    mean, rstd = numpy.empty(rows, x.dtype), numpy.empty(rows, x.dtype)
    w, b = (v if v is None else _flat(v) for v in (weight, bias))
    _run("layer_norm", (_rows(x, n), _rows(out, n), mean, rstd), n, _address(w),
         _address(b), numpy.float32(eps), args=(w, b, numpy.float32(eps)))
    return out, mean, rstd


def layer_norm_dx(grad, x, weight, mean, rstd, n):
    """The input gradient of :func:`layer_norm` (PyTorch's form, as the rule's): both row
    sums in one pass, the result in another."""
    out = numpy.empty_like(x)
    w = weight if weight is None else _flat(weight)
    _run("layer_norm_dx", (_rows(grad, n), _rows(x, n), _flat(mean), _flat(rstd),
                           _rows(out, n)), n, _address(w), args=(w,))
    return out


def address(a):
    """The address of NumPy array ``a``'s first element, read by numba's dispatch in C:
    NumPy's ``ctypes.data`` makes a Python object for it, 4 us on the cold caches a large
    pass leaves (1.3 us this way), and ``__array_interface__`` a dict."""
    return _kernels()["address"](a)


def _address(a):
    """A job row's reference to an optional array: its address, 0 for None."""
    return 0 if a is None else address(a)


def layer_norm_dw(grad, x, mean, rstd, n):
    """``sum over rows of grad * (x - mean) * rstd``: the weight's gradient, reduced."""
    out = numpy.empty(n, x.dtype)
    _kernels()["layer_norm_dw"](_rows(grad, n), _rows(x, n), _flat(mean), _flat(rstd), out)
    return out


def column_sum(grad, n):
    """The sum of the runs of the last ``n`` elements of ``grad`` (a bias's gradient)."""
    out = numpy.empty(n, grad.dtype)
    _kernels()["column_sum"](_rows(grad, n), out)
    return out


def _by_channel(name, arrays, *tail):
    """Kernel ``name``'s job entry on ``arrays`` (the first viewed as (N, C, S)), each job
    row ending with ``tail``; when large, its channels in parts, one per OpenBLAS thread.
    A channel's result is the same in any part; always the job entry, as LLVM compiles
    the kernel called from Python to round differently in the last bit. One value per
    channel and sample (S = 1) splits in whole cache lines of each row."""
    n, c, s = arrays[0].shape
    bounds = _bands(name, arrays[0], c, 16 if s == 1 else 1)  # (float32s to a cache line)
    addresses = _addresses(*arrays)
    jobs = numpy.array([[*addresses, n, c, s, lo, hi, *tail]
                        for lo, hi in itertools.pairwise(bounds)], numpy.int64)
    blas_threads.run_jobs(_kernels()["jobs"][name], jobs)


def _bands(name, first, n, step):
    """The bounds of the parts of ``range(n)`` that kernel ``name`` takes on ``first``:
    one part per OpenBLAS thread when it :func:`splits`, else one; each part a whole
    multiple of ``step`` long but the last."""
    units = -(-n // step)
    k = min(blas_threads.threads(), units) if splits(name, first) else 1
    return [min(n, units * i // k * step) for i in range(k)] + [n]


def channel_runs_pay(x):
    """Whether the per-channel kernels pay on ``x`` (N, C, ...): runs of at least 16
    elements per channel and sample, or one (BatchNorm1d's (N, C): the row kernels). A
    run of 2 to 15 shares its cache lines with the next channel's, read again a channel
    later (5-15x NumPy's time at one)."""
    spatial = math.prod(x.shape[2:])
    return x.ndim >= 2 and (spatial == 1 or spatial >= 16)


def _planes(x):
    """A C-contiguous (N, C, ...) array as (N, C, S)."""
    return x.reshape(x.shape[0], x.shape[1], -1)


def _per_channel(v, c, fill):
    """A channel's weight or bias vector (C-contiguous), ``fill`` for each when None."""
    return numpy.full(c, fill, numpy.float32) if v is None else v.reshape(c)


def batch_norm(x, weight, bias, eps):
    """Training batch norm of ``x`` (N, C, ...): the result, and each channel's mean and
    1/std, each channel's three passes while it is in cache (NumPy's chain makes eight
    passes over the whole batch, its broadcasts at a third of memory speed)."""
    c = x.shape[1]
    out = numpy.empty_like(x)
    mean, invstd = numpy.empty(c, x.dtype), numpy.empty(c, x.dtype)
    w, b, e = _per_channel(weight, c, 1), _per_channel(bias, c, 0), numpy.float32(eps)
    rows = _batch_rows(x)
    if rows is None:
        _by_channel("batch_norm", (_planes(x), w, b, _planes(out), mean, invstd), _bits(e))
    elif _in_row_bands(rows):
        kernels = _kernels()
        kernels["column_means"](_column_parts(rows), len(rows), mean, 0, c)
        kernels["column_invstd"](_column_parts(rows, mean), len(rows), e, invstd, 0, c)
        _by_rows("batch_norm_band", rows, _addresses(rows, w, b, out, mean, invstd))
    else:
        parts = _parts(rows)  # (kept here while the jobs run)
        _by_columns("batch_norm_columns", rows,
                    _addresses(rows, w, b, out, mean, invstd, parts), _bits(e))
    return out, mean, invstd


# BatchNorm1d's (N, C): bands of rows or of columns (see _numba_kernels.column_parts).

def _batch_rows(x):
    """A batch norm's input of one value per channel and sample (BatchNorm1d's) as
    (N, C), else None (a channel's values in runs: the per-channel kernels)."""
    return x.reshape(x.shape[:2]) if math.prod(x.shape[2:]) == 1 else None


def _in_row_bands(rows):
    """Whether (N, C) is cut in bands of rows, each pass in turn: a chunk of rows or more
    per thread. Else a job per band of columns makes all its passes at once."""
    return splits("column_parts", rows) and _chunks(rows) >= blas_threads.threads()


def _chunks(rows):
    """The chunks of rows whose float32 sums (N, C)'s column sums add up."""
    return -(-len(rows) // _chunk())


@functools.cache
def _chunk():
    """The rows a float32 partial sum adds (``_numba_kernels._CHUNK``)."""
    from ._numba_kernels import _CHUNK
    return _CHUNK


def _parts(rows):
    """The (chunks, C) float32 buffer of the column sums of each chunk of rows."""
    return numpy.empty((_chunks(rows), rows.shape[1]), numpy.float32)


def _addresses(*arrays):
    """Job row references to ``arrays`` (see :func:`_address`): the caller keeps them."""
    return [_address(a) for a in arrays]


def _column_parts(a, m=None, g=None):
    """The float32 column sums of each chunk of rows of ``a`` (N, C) (of ``(a - m)**2``,
    or of ``(a - m) * g``, with ``g``'s too: a pair), in bands of whole chunks of rows."""
    parts = _parts(a)
    gparts = None if g is None else numpy.empty_like(parts)
    _by_rows("column_parts", a, _addresses(a, m, g, parts, gparts), len(parts), 0,
             a.shape[1], chunk=_chunk())
    return parts if g is None else (parts, gparts)


def _by_rows(name, first, head, *tail, chunk=1):
    """Job ``name`` on bands of the rows of ``first`` (N, C), whole multiples of ``chunk``
    rows, one per OpenBLAS thread when large: each job row is ``head`` (the arrays'
    addresses), N and C, ``tail``, and its band's first and last row."""
    n = len(first)
    jobs = numpy.array([[*head, n, first.shape[1], *tail, lo, hi]
                        for lo, hi in itertools.pairwise(_bands(name, first, n, chunk))],
                       numpy.int64)
    blas_threads.run_jobs(_kernels()["jobs"][name], jobs)


def _by_columns(name, rows, head, *tail):
    """Job ``name`` on bands of whole cache lines (16 float32s) of the columns of ``rows``
    (N, C), one per OpenBLAS thread when large: each job row is ``head``, N, C, the
    chunks of rows, ``tail``, and its band's first and last column."""
    n, c = rows.shape
    head = [*head, n, c, _chunks(rows), *tail]
    jobs = numpy.array([[*head, c0, c1]
                        for c0, c1 in itertools.pairwise(_bands(name, rows, c, 16))],
                       numpy.int64)
    blas_threads.run_jobs(_kernels()["jobs"][name], jobs)


def winograd_weights(w, flipped=False):
    """Winograd F(2x2, 3x3)'s transformed 3x3 kernels ``w`` (K, C, 3, 3): (16, K, C),
    each of the 16 positions a matrix for its GEMM (a view of a (K, 16, C) array: each
    channel's transforms in one block). ``flipped``: of the kernels flipped and the channel
    axes swapped, (16, C, K), the input gradient's as a convolution, read from ``w`` as it
    is (NumPy's copy of that view took as long as the transform)."""
    k, c = w.shape[1::-1] if flipped else w.shape[:2]
    u = winograd_positions(k, c)
    _by_channel("winograd_weights", (numpy.ascontiguousarray(w).reshape(1, k, c * 9),
                                     u.transpose(1, 0, 2)), c, int(flipped))
    return u


def winograd_weights_grad(du):
    """The gradient of 3x3 kernels from that of their transforms ``du`` (16, K, C), read
    as :func:`winograd_weights` lays its result out (a copy otherwise)."""
    k, c = du.shape[1:]
    dw = numpy.empty((k, c, 3, 3), numpy.float32)
    _by_channel("winograd_weights_grad",
                (dw.reshape(1, k, c * 9), contiguous(du.transpose(1, 0, 2))), c)
    return dw


def winograd_positions(k, c):
    """An uninitialized (16, K, C) array laid out as :func:`winograd_weights`'s result."""
    return numpy.empty((k, 16, c), numpy.float32).transpose(1, 0, 2)


def winograd_tiles(x, th, tw, padding, out=None):
    """The transformed 4x4 tiles, two rows and columns apart, of the planes of ``x`` (N, C,
    H, W) padded with ``padding`` (top, left) zeros and as many as th by tw tiles reach
    past the others: (16, C, N * th * tw), into ``out`` if given."""
    n, c, h, w = x.shape
    v = numpy.empty((16, c, n * th * tw), numpy.float32) if out is None else out
    _by_channel("winograd_tiles", (_planes(numpy.ascontiguousarray(x)), v), th, tw, h, w,
                *padding)
    return v


def winograd_untile(m, bias, out):
    """``out`` (N, K, OH, OW) from the products ``m`` (16, K, tiles) and a ``bias`` (K,);
    False where a value is not finite."""
    n, k, oh, ow = out.shape
    bad = numpy.empty(k, numpy.float32)
    _by_channel("winograd_untile", (_planes(out), m, bias, bad), oh, ow, -(-oh // 2),
                -(-ow // 2))
    return not bad.any()


def winograd_grad_tiles(g, out=None):
    """The gradient of the products from that of the output ``g`` (N, K, OH, OW): the
    adjoint of :func:`winograd_untile`, (16, K, tiles), into ``out`` if given."""
    n, k, oh, ow = g.shape
    th, tw = -(-oh // 2), -(-ow // 2)
    dm = numpy.empty((16, k, n * th * tw), numpy.float32) if out is None else out
    _by_channel("winograd_grad_tiles", (_planes(g), dm), oh, ow, th, tw)
    return dm


def direct_conv(xp, offs, w, bias, out, own=0, stride=(1, 1)):
    """``out`` (N, K, OH, OW): the convolution of the padded planes ``xp`` (N, C, hp, wp)
    by the weights ``w`` (K, T) of the taps at offsets ``offs`` (T, int64) in an image's
    planes, plus ``bias`` (K,); float32, C-contiguous, K >= 4 and OW >= 8
    (:mod:`._numba_direct`). ``own``: a depthwise convolution's, output channel k reading
    its taps ``k * own`` further (its own input planes). ``stride``: output (y, z) reads
    the planes from row y sh, column z sw (sw 1, or 2 for a depthwise convolution). In
    parts by output rows."""
    n, c, hp, wp = xp.shape
    k, oh, ow = out.shape[1:]
    _direct_fits(xp, offs, out, own, stride, ow >= 8 and w.shape == (k, offs.size)
                 and bias.shape == (k,), w, bias)
    rows = n * oh
    parts = min(blas_threads.threads(), rows) if splits("direct_conv", out) else 1
    addresses = [address(a) for a in (xp, offs, w, bias, out)]
    jobs = numpy.array([[*addresses, rows * i // parts, rows * (i + 1) // parts, n, c, hp, wp,
                         k, oh, ow, offs.size, own, *stride] for i in range(parts)],
                       numpy.int64)
    blas_threads.run_jobs(_kernels()["jobs"]["direct_conv"], jobs)
    return out


def matmuls(a, b):
    """``a @ b`` for a batch of small matrices, ``a`` (..., M, K) and ``b`` (..., K, N) of
    the same batch shape (at most two dims, or dims that merge into two), float32, M >= 4,
    N >= 8, K >= 1: the direct convolution's tiles (:func:`._numba_direct.matmuls`), the
    batch in parts on OpenBLAS's threads (NumPy runs such a batch one matrix at a time on
    one thread, each below OpenBLAS's threading threshold). The operands are read in
    place wherever each row is a run (attention's heads, views of one (N, L, 3E) array),
    ``a`` also where each column is (a transposed matrix: a product's gradient); others
    are laid out row-major first. The result is row-major. Each value is the sum of
    its products in order, one fused multiply-add each, the same bits in any number of
    parts and any layout: NumPy's to rounding (its bits where N is a multiple of 16, with
    NumPy's OpenBLAS 0.3.31; it sums a row's last columns otherwise)."""
    batch = a.shape[:-2]
    m, k = a.shape[-2:] if a.ndim >= 3 else (0, 0)
    n = b.shape[-1] if b.ndim >= 3 else 0
    if not (m >= 4 and n >= 8 and k >= 1 and b.shape == (*batch, k, n)
            and a.dtype == b.dtype == numpy.float32 and a.dtype.isnative and ready()):
        raise ValueError(f"batched small products: {a.dtype} {a.shape} @ {b.dtype} {b.shape} "
                         f"(float32, (..., M >= 4, K) @ (..., K, N >= 8))")
    out = numpy.empty((*batch, m, n), numpy.float32)
    if out.size == 0:
        return out
    a = a if _in_place(a, -2) else _rows_in_place(a)
    a, b, o = (_batch_of_two(x) for x in (a, _rows_in_place(b), out))
    h = a.shape[1]
    steps = [s // 4 for x in (a, b, o) for s in x.strides[:2]] + [s // 4 for s in a.strides[2:]]
    offs = numpy.arange(k, dtype=numpy.int64) * (b.strides[2] // 4)
    z = a.shape[0] * h
    parts = min(blas_threads.threads(), z)
    head = [address(x) for x in (a, b, offs, _ZEROS, o)]
    tail = [m, k, n, h, *(_extent(x) for x in (a, b, o)), *steps]
    jobs = numpy.array([[*head, z * i // parts, z * (i + 1) // parts, *tail]
                        for i in range(parts)], numpy.int64)
    blas_threads.run_jobs(_kernels()["jobs"]["matmuls"], jobs)
    return out


def _rows_in_place(x):
    """``x`` where the tiles read it in place (each row a run), else laid out row-major."""
    return x if _in_place(x, -1) else contiguous(x)


def _in_place(x, axis):
    """Whether ``x``'s ``axis`` is a run and no step is negative or part of an element:
    the tiles read ``b``'s rows (axis -1) in place, and ``a`` whose rows (-1) or whose
    columns (-2: a transposed matrix) are runs."""
    return x.strides[axis] == 4 and all(s >= 0 and s % 4 == 0 for s in x.strides)


def _batch_of_two(x):
    """``x`` (..., R, C) with its batch dims as exactly two (a view where they merge)."""
    if x.ndim == 3:
        return x[:, None]
    if x.ndim == 2:
        return x[None, None]
    if x.ndim > 4:
        x = x.reshape(-1, *x.shape[-3:])  # (a copy where they do not merge)
    return x


def _extent(x):
    """The elements a view spans, from its first (steps non-negative)."""
    return 1 + sum((d - 1) * s // x.itemsize for d, s in zip(x.shape, x.strides, strict=True))


_ZEROS = numpy.zeros(4, numpy.float32)  # (the tiles' bias: a product adds none)


def direct_conv_dw(g, xp, offs, own=0, stride=(1, 1)):
    """The weights' gradient (K, T) of :func:`direct_conv` from the output's ``g`` (N, K,
    OH, OW), OW >= 8, T >= 2, the planes read as :func:`direct_conv` reads them (``own``,
    ``stride``). In parts by output channels, four at least."""
    n, c, hp, wp = xp.shape
    k, oh, ow = g.shape[1:]
    _direct_fits(xp, offs, g, own, stride, ow >= 8 and offs.size >= 2)
    dw = numpy.empty((k, offs.size), numpy.float32)
    units = k // 4
    parts = min(blas_threads.threads(), units) if splits("direct_conv_dw", g) else 1
    bounds = [units * i // parts * 4 for i in range(parts)] + [k]
    addresses = [address(a) for a in (g, xp, offs, dw)]
    jobs = numpy.array([[*addresses, lo, hi, n, c, hp, wp, k, oh, ow, offs.size, own, *stride]
                        for lo, hi in itertools.pairwise(bounds)], numpy.int64)
    blas_threads.run_jobs(_kernels()["jobs"]["direct_conv_dw"], jobs)
    return dw


def phase_planes(x, stride, padding, phases, hq, wq):
    """The planes of ``x`` (N, C, H, W; float32, C-contiguous) zero-padded by ``padding``,
    cut into the stride's ``phases`` (P, 2; int64): (N, P * C, hq, wq), phase (a, b)'s
    rows a, a + sh, ... and columns b, b + sw, ... of the padded planes. One pass over the
    result, in parts by channel (NumPy's zeros and strided copies took 4 ms for MobileNet's
    (8, 144, 56, 56) at stride 2). The kernel reads only inside ``x`` whatever the
    phases."""
    n, c, h, w = x.shape
    if not (takes(x) and phases.dtype == numpy.int64 and phases.ndim == 2
            and phases.shape[1] == 2 and len(phases) and phases.flags.c_contiguous):
        raise ValueError(f"phase planes: {x.dtype} planes {x.shape} (float32, C-contiguous) "
                         f"at phases {phases.dtype} {phases.shape} (int64, (P, 2))")
    out = numpy.empty((n, len(phases) * c, hq, wq), numpy.float32)
    _by_channel("phase_planes", (_planes(x), out, phases), h, w, len(phases), hq, wq,
                *stride, *padding)
    return out


def interleave_columns(dx, even, odd, a, sh, ph, pw, u0, rows):
    """Write rows ``a + u sh - ph`` of ``dx`` (N, C, H, W) for u in ``u0:u0 + rows``, each
    from row u of ``even`` and ``odd`` (N, C, U, V): column x is ``even``'s (x + pw) // 2
    where x + pw is even, else ``odd``'s (a row phase of a depthwise input gradient at a
    column stride of 2, from its two column phases). All float32, C-contiguous; in parts by
    channel."""
    n, c, h, w = dx.shape
    a, sh, ph, pw, u0, rows = (operator.index(v) for v in (a, sh, ph, pw, u0, rows))
    if not (takes(dx, even, odd) and even.ndim == 4 and even.shape == odd.shape
            and even.shape[:2] == (n, c) and dx.flags.writeable
            and not (numpy.may_share_memory(dx, even) or numpy.may_share_memory(dx, odd))
            and sh >= 1 and rows >= 1 and u0 >= 0 and pw >= 0
            and u0 + rows <= even.shape[2] and (w - 1 + pw) // 2 < even.shape[3]
            and 0 <= a + u0 * sh - ph and a + (u0 + rows - 1) * sh - ph < h):
        raise ValueError(f"interleave columns: rows {u0}:{u0 + rows} of {even.shape} do not "
                         f"fit {dx.shape} at row {a} of stride {sh}, padding ({ph}, {pw})")
    _by_channel("interleave_columns", tuple(v.reshape(n, c, -1) for v in (dx, even, odd)), h,
                w, *even.shape[2:], a, sh, ph, pw, u0, rows)


def _direct_fits(xp, offs, out, own, stride, shapes_fit, *arrays):
    """Raise unless the direct kernels, which index unchecked, stay inside the arrays: an
    output (N, K >= 4, OH, OW) of ``xp``'s images whose every tap reads inside an image's
    planes (channel k's ``k * own`` further; at a column stride of 2, a row's 2 OW values
    from its first), ``shapes_fit`` (the caller's own conditions), all C-contiguous,
    float32 (the offsets int64, summed as Python's integers: no wrap-around), ``arrays``
    too."""
    n, c, hp, wp = xp.shape
    k, oh, ow = out.shape[1:]
    own = operator.index(own)
    sh, sw = (operator.index(s) for s in stride)
    if not (shapes_fit and out.shape[0] == n and k >= 4 and oh > 0
            and (sw == 1 or sw == 2 and own) and sh >= 1 and 0 < ow and (ow - 1) * sw < wp
            and offs.dtype == numpy.int64 and offs.ndim == 1 and offs.size and own >= 0
            and offs.min() >= 0
            and (k - 1) * own + int(offs.max()) + (oh - 1) * sh * wp + ow * sw <= c * hp * wp
            and takes(xp, out, *arrays) and offs.flags.c_contiguous):
        raise ValueError(f"direct convolution: an output {out.shape} does not fit input planes "
                         f"{xp.shape} at taps {offs.size}")


def col2im(cols, out, first, stride, dilation):
    """``out[c, first + n, oy * sh + i * dh, ox * sw + j * dw] += cols[c, i, j, n, oy, ox]``:
    columns (C, kh, kw, images, OH, Wq) added into the planes (C, N, rows, columns) of
    ``out``, all float32 and C-contiguous, in parts by channel."""
    _by_channel("col2im", (out.reshape(1, out.shape[0], -1), cols), *out.shape[1:],
                *cols.shape[1:], first, *stride, *dilation)


def channel_affine(x, alpha, beta):
    """``x * alpha + beta`` for ``x`` (N, C, ...) and a factor and a term per channel (an
    evaluation batch norm), in one pass: NumPy's two broadcasts run at a third of memory
    speed."""
    out = numpy.empty_like(x)
    rows = _batch_rows(x)
    if rows is None:
        _by_channel("channel_affine", (_planes(x), alpha, beta, _planes(out)))
    else:
        _by_rows("channel_affine_band", rows, _addresses(rows, alpha, beta, out))
    return out


def batch_norm_backward(grad, x, weight, mean, invstd, training, mask):
    """Batch norm's gradients of the input, weight and bias, None where ``mask`` does not
    ask (the rule's order): each channel's sums of ``grad`` and ``(x - mean) * grad`` in
    one pass, for all three, and the input's in another. ``x`` may be in any layout (a
    transposed batch): copied C-contiguous first."""
    want_x, want_w, want_b = mask
    x = numpy.ascontiguousarray(x)
    c = x.shape[1]
    w, mean, invstd = _per_channel(weight, c, 1), mean.reshape(c), invstd.reshape(c)
    out = numpy.empty_like(x) if want_x else None
    sums = want_w or want_b or want_x and training
    dw, db = (numpy.empty(c, x.dtype), numpy.empty(c, x.dtype)) if sums else (None, None)
    rows = _batch_rows(x)
    if rows is None:
        _by_channel("batch_norm_backward", (_planes(grad), _planes(x), w, mean, invstd,
                                            _planes(out) if want_x else None, dw, db),
                    int(training))
    else:
        _batch_rows_backward(grad.reshape(rows.shape), rows, w, mean, invstd, training, out,
                             dw, db)
    return out, dw if want_w else None, db if want_b else None


def _batch_rows_backward(g, rows, w, mean, invstd, training, out, dw, db):
    """:func:`batch_norm_backward` of BatchNorm1d's (N, C), into ``out`` (None: not asked)
    and the sums into ``dw`` and ``db`` (None: not asked)."""
    c = rows.shape[1]
    if out is not None and not training:
        _by_rows("batch_norm_dx_band", rows, _addresses(g, rows, w, mean, invstd, None, None,
                                                        out))
    if out is None or not training:
        if dw is not None:
            _column_sums(rows, mean, g, invstd, dw)
            _column_sums(g, None, None, None, db)
        return
    mg, f = numpy.empty(c, rows.dtype), numpy.empty(c, rows.dtype)
    if _in_row_bands(rows):
        parts, gparts = _column_parts(rows, mean, g)
        kernels = _kernels()
        kernels["batch_norm_dx_factors"](parts, gparts, len(rows), invstd, mg, f, 0, c)
        if dw is not None:
            kernels["column_sums_scaled"](parts, invstd, dw, 0, c)
            kernels["column_sums_scaled"](gparts, None, db, 0, c)
        _by_rows("batch_norm_dx_band", rows, _addresses(g, rows, w, mean, invstd, mg, f, out))
    else:
        parts, gparts = _parts(rows), _parts(rows)
        _by_columns("batch_norm_dx_columns", rows,
                    _addresses(g, rows, w, mean, invstd, mg, f, out, parts, gparts, dw, db))


_COLUMN_SUMS_MIN = (512, 1 << 16)  # rows and elements from which column_sums pays


def sums_columns(a, lead):
    """Whether :func:`column_sums` takes the sum of ``a`` over its ``lead`` leading axes
    (a bias's gradient): float32, C-contiguous, many rows (NumPy's row-by-row adds win on
    few: 12 us on (128, 1024), 18 here)."""
    rows = math.prod(a.shape[:lead])
    return (rows >= _COLUMN_SUMS_MIN[0] and a.size >= _COLUMN_SUMS_MIN[1]
            and a.ndim > lead and takes(a))


def column_sums(a):
    """The column sums of ``a`` (N, C) (float32, C-contiguous): float32 sums of chunks of
    rows added in float64, in parts on OpenBLAS's threads, the same bits however cut, as
    batch norm's sums (NumPy adds row after row on one thread: on w4's (2048, 768) bias
    gradient 308 us and 8x the error, 154 us here)."""
    out = numpy.empty(a.shape[1], numpy.float32)
    _column_sums(a, None, None, None, out)
    return out


def _column_sums(a, m, g, scale, out):
    """Into ``out``: the column sums of ``a`` (N, C), or of ``(a - m) * g``, times
    ``scale``'s (None: 1)."""
    if not _in_row_bands(a):
        parts, gparts = _parts(a), None if g is None else _parts(a)
        _by_columns("column_sums_columns", a, _addresses(a, m, g, parts, gparts, scale, out))
        return
    parts = _column_parts(a, m, g)  # (with g: the pair, of which the first)
    _kernels()["column_sums_scaled"](parts if g is None else parts[0], scale, out, 0,
                                     a.shape[1])


def _rowwise(name, log, *arrays, args=()):
    """Kernel ``name`` on the rows (last axis) of ``arrays`` and of a new output shaped
    as the last of them, and ``args``; when large, in parts of whole rows on OpenBLAS's
    threads (the job entry shared with the log form, told by ``log``)."""
    out = numpy.empty_like(arrays[-1])
    n = out.shape[-1]
    _run(name, [*(_rows(a, n) for a in arrays), _rows(out, n)], n, log, args=args)
    return out


_ROW_KINDS = {"sum": 0, "max": 1, "min": 2, "logsumexp": 3}
_TOTAL_ROW = 4096  # elements of the rows a reduction of everything sums first


def reduce_trailing(kind, x, lead, shape=None):
    """The sum, maximum, minimum or logsumexp (``kind``) over the dims of ``x`` after its
    first ``lead`` (C-contiguous float32; non-empty), shaped as those first dims (or as
    ``shape``, of as many elements: a new array, not a view, as NumPy's); in parts of
    whole rows on OpenBLAS's threads when large. NumPy reduces a row at a time in a
    scalar loop (a sum at a fifth of memory speed, a maximum at a twentieth: (4096, 64)
    392 us, PyTorch's 21)."""
    rows = x.reshape(math.prod(x.shape[:lead]), -1)
    out = numpy.empty(x.shape[:lead] if shape is None else shape, numpy.float32)
    _run("row_reduce", (rows, _flat(out)), rows.shape[1], _ROW_KINDS[kind],
         args=(_ROW_KINDS[kind],))
    return out


def reduce_all(kind, x, shape=()):
    """:func:`reduce_trailing` over all of ``x`` (C-contiguous float32, non-empty), shaped
    as ``shape``: of rows of ``_TOTAL_ROW`` elements and the rest, then of those results,
    so its bits do not depend on the thread count."""
    flat = _flat(x)
    if flat.size <= _TOTAL_ROW:  # (one row: its result is the whole one's)
        return reduce_trailing(kind, flat, 0, shape)
    whole = flat.size - flat.size % _TOTAL_ROW
    parts = [reduce_trailing(kind, flat[:whole].reshape(-1, _TOTAL_ROW), 1)]
    if whole < flat.size:
        parts.append(reduce_trailing(kind, flat[whole:], 0, (1,)))
    partial = numpy.concatenate(parts) if len(parts) > 1 else parts[0]
    return reduce_trailing(kind, partial, 0, shape)


def softmax(x, safe=False):
    """Softmax over the last axis: the maximum, the exponentials and their sum, the
    scaling, each row in cache. ``safe``: a row of -inf alone gives zeros, not NaN."""
    return _rowwise("softmax", 2 if safe else 0, x, args=(safe,))


def causal_softmax(x):
    """Softmax over the last axis of each (L, S) matrix of ``x`` (its last two axes),
    row i over its first i + 1 keys, zeros after them (PyTorch's ``is_causal``: no mask
    to build, fill and take the gradient of), a row whose keys are all -inf zeros (the
    safe softmax); when large, in parts of whole matrices on OpenBLAS's threads."""
    queries, keys = x.shape[-2:]
    out = numpy.empty_like(x)
    _run("causal_softmax", (x.reshape(-1, queries, keys), out.reshape(-1, queries, keys)),
         queries, keys)
    return out


def causal_softmax_grad(grad, y):
    """:func:`causal_softmax`'s input gradient from its result ``y``: the masked
    softmax's (:func:`masked_softmax_grad`) with the causal mask, query i seeing keys 0
    to i."""
    return masked_softmax_grad(grad, y, numpy.tril(numpy.ones(y.shape[-2:], bool)))


def mask_takes(x, keep):
    """Whether :func:`masked_softmax` takes scores ``x`` with the boolean mask ``keep``:
    one (L, S) mask for every matrix of the scores (float32, C-contiguous)."""
    return (type(keep) is _ndarray and keep.dtype == numpy.bool_ and x.ndim > 1
            and keep.shape == x.shape[-2:] and takes(x))


def _kept(keep):
    """A mask as the kernels read it: float32, 1 where kept."""
    return numpy.ascontiguousarray(keep, numpy.float32)


def masked_softmax(x, keep):
    """Softmax over the last axis of each (L, S) matrix of ``x`` over the keys ``keep``
    (L, S, boolean) marks, 0 for the others, the safe softmax's zeros for a row that keeps
    none or only -inf (sdpa's boolean mask: no mask to fill in, nor its fill's gradient);
    when large, in parts of whole matrices on OpenBLAS's threads."""
    queries, keys = x.shape[-2:]
    out = numpy.empty_like(x)
    kept = _kept(keep)
    _run("masked_softmax", (x.reshape(-1, queries, keys), out.reshape(-1, queries, keys)),
         queries, keys, address(kept), args=(kept,))
    return out


def masked_softmax_grad(grad, y, keep):
    """:func:`masked_softmax`'s input gradient from its result ``y``."""
    queries, keys = y.shape[-2:]
    out = numpy.empty_like(y)
    kept = _kept(keep)
    _run("masked_softmax_grad", tuple(a.reshape(-1, queries, keys) for a in (grad, y, out)),
         queries, keys, address(kept), args=(kept,))
    return out


def softmax_grad(grad, y):
    """``y * (grad - sum(grad * y))`` over the last axis."""
    return _rowwise("softmax_grad", 0, grad, y)


def log_softmax(x):
    """Log-softmax over the last axis: the maximum, the sum of exponentials, the shift."""
    return _rowwise("log_softmax", 1, x)


def log_softmax_grad(grad, y):
    """``grad - exp(y) * sum(grad)`` over the last axis."""
    return _rowwise("log_softmax_grad", 1, grad, y)


def adam_step(p, g, m, v, *, decay, wd, weight, beta2, bc2_sqrt, eps, step_size):
    """One Adam update of ``p``, ``m``, ``v`` (in place) from gradient ``g``, all of one
    real float dtype and shape, in ``optim.adam``'s order of operations, so the result is
    its chain's bit for bit (the GPU's ``gpu_kernels.adam_step`` has the same contract).
    Arrays not C-contiguous are updated through contiguous copies."""
    t = p.dtype.type
    arrays = (p, g, m, v)
    flat = [a if a.flags.c_contiguous else numpy.ascontiguousarray(a) for a in arrays]
    _kernels()["adam"](*(_flat(a) for a in flat), t(decay), t(wd), t(weight), t(weight) - 1,
                       weight < 0.5, t(beta2), t(1 - beta2), t(bc2_sqrt), t(eps), t(-step_size))
    for a, c in zip(arrays, flat, strict=True):
        if a is not c:
            a[...] = c


def relu(x):
    """``max(x, 0)``, a NaN kept, in one pass (NumPy's ``maximum`` runs at a third of
    memory speed: it checks every element for NaN)."""
    return _elementwise("relu", x)


def relu_grad(grad, y):
    """PyTorch's threshold_backward: ``grad`` where the result ``y`` is above 0 (or NaN),
    else 0, in one pass."""
    return _elementwise("relu_grad", grad, y)


def outer(a, b):
    """``a[..., :, None] * b[..., None, :]`` (outer products of the last axes, a batch of
    them over equal leading dims), written row by row at memory speed (NumPy's broadcast
    product is 4x slower, its K=1 GEMM 15x)."""
    m, n = a.shape[-1], b.shape[-1]
    out = numpy.empty(a.shape + (n,), a.dtype)
    if out.size:  # (an empty one has no rows to lay out: reshape(-1, 0) is ambiguous)
        _kernels()["outer"](a.reshape(-1, m), b.reshape(-1, n), out.reshape(-1, m, n))
    return out


def add_scaled(x, y, alpha):
    """``x += alpha * y`` (an in-place ``add_(y, alpha=...)``) in one pass, with no
    temporary for ``alpha * y``; both float32, C-contiguous, of one shape, not
    overlapping unless the same array. Returns ``x``."""
    a = numpy.float32(alpha)
    if y is not x and numpy.may_share_memory(x, y):  # (NumPy buffers an overlap)
        x += y * a
        return x
    _run("add_scaled", (_flat(x), _flat(y)), a, args=(a,))
    return x


_OPS = {"add": 0, "sub": 1, "mul": 2, "div": 3}
_ndarray = numpy.ndarray
_NUMBERS = (float, int)
_FLOAT32_MAX = float(numpy.finfo(numpy.float32).max)


@functools.lru_cache(maxsize=256)
def _against(xs, vs):
    """How an array of shape ``vs`` broadcasts against a larger one of shape ``xs``: ("row",
    n) when it is the trailing dims (n elements) repeated along the others, ("column", n)
    when it holds one value for each of the n indices of the leading dims (its trailing
    dims of size 1). (Kept by shapes: :func:`broadcasts` asks, then :func:`broadcast`.)"""
    if len(vs) > len(xs):
        return None
    padded = (1,) * (len(xs) - len(vs)) + vs
    lead = 0  # (the leading dims v repeats along: at least one, at most all but one)
    while lead < len(xs) - 1 and padded[lead] == 1:
        lead += 1
    if lead and padded[lead:] == xs[lead:]:
        return "row", math.prod(xs[lead:])
    m = len(vs)
    while m and vs[m - 1] == 1:
        m -= 1
    if len(vs) == len(xs) and 0 < m < len(vs) and vs[:m] == xs[:m]:
        return "column", math.prod(vs[:m])
    return None


# Elements of the result from which :func:`broadcast` beats NumPy (its call costs more).
_BROADCAST_MIN = 1 << 14


def pays(first):
    """Whether a kernel's work on ``first`` pays for its call (a small one is NumPy's)."""
    return first.size >= _BROADCAST_MIN


def broadcasts(a, b):
    """Whether ``a (op) b`` takes :func:`broadcast`: float32 C-contiguous NumPy arrays, one
    a row or a column of the other (a bias, a mask, a row's statistic), large enough; or of
    one shape, or one of them a number (a Python float or int within float32's range),
    where the pass splits on OpenBLAS's threads (NumPy's is one thread's)."""
    # (asked for x * 0.5 of any size, w1's 16 elements too: whether it splits first)
    if type(b) is not _ndarray:
        return type(a) is _ndarray and splits("by_number", a) and _by_number(a, b)
    if type(a) is not _ndarray:
        return splits("by_number", b) and _by_number(b, a)
    if a.shape == b.shape:
        return splits("elementwise", a) and takes(a, b)
    x, v, _ = _larger_first(a, b)
    return pays(x) and _against(x.shape, v.shape) is not None and takes(x, v)


def _by_number(x, n):
    """Whether array ``x`` (one that splits) and ``n`` take the pass: a Python float or int
    within float32's range (or infinite, or NaN), the array float32 and C-contiguous."""
    return (type(n) in _NUMBERS and (not abs(n) > _FLOAT32_MAX or abs(n) == math.inf)
            and takes(x))


def _larger_first(a, b):
    """(the operand shaped as the result, the other, whether that is ``b``)."""
    if (b.size, b.ndim) > (a.size, a.ndim):
        return b, a, True
    return a, b, False


def broadcast(op, a, b, out=None):
    """``a (op) b`` ("add", "sub", "mul" or "div") as :func:`broadcasts` takes them, into
    ``out`` (a new array; may be the larger one), in one pass: NumPy's broadcast passes run
    at a third to a half of memory speed."""
    code = _OPS[op]
    if type(a) is not _ndarray or type(b) is not _ndarray:  # (a number: NumPy's float32 of it)
        swapped = type(a) is not _ndarray
        x, v = (b, numpy.float32(a)) if swapped else (a, numpy.float32(b))
        out = numpy.empty_like(x) if out is None else out
        _run("by_number", (_flat(x), _flat(out)), v, code, int(swapped),
             args=(v, code, swapped))
        return out
    x, v, swapped = _larger_first(a, b)
    if out is None:
        out = numpy.empty_like(x)
    if a.shape == b.shape:
        _run("elementwise", (_flat(a), _flat(b), _flat(out)), code, args=(code,))
        return out
    kind, n = _against(x.shape, v.shape)
    if kind == "row":
        _run("by_row", (_rows(x, n), _rows(out, n)), n, address(v), code,
             int(swapped), args=(v.reshape(-1), code, swapped))
    else:
        cols = x.size // n
        _run("by_column", (_rows(x, cols), v.reshape(-1), _rows(out, cols)), cols, code,
             int(swapped), args=(code, swapped))
    return out


def mul_sub(a, b, c):
    """``a * b - c`` rounded once (LLVM's fma), float32 or float64 ``a`` (``b`` and ``c``
    broadcast to it and are cast to its dtype), in one compiled pass."""
    return _kernels()["mul_sub"](a, b, c, dtype=a.dtype)


def mul_add(a, b, c, out=None):
    """``a * b + c`` rounded once, as :func:`mul_sub`, into ``out`` if given."""
    return _kernels()["mul_add"](a, b, c, dtype=a.dtype, out=out)


def scale(x, factor):
    """``x *= factor`` (an in-place ``mul_`` by a number, rounded to float32 first, as
    PyTorch's and NumPy's), ``x`` float32 and C-contiguous. Returns ``x``."""
    f = numpy.float32(factor)
    _run("scale", (_flat(x),), f, args=(f,))
    return x


def all_finite(x):
    """Whether float32 ``x`` (C-contiguous) holds no infinity or NaN: one pass over its
    bits, in parts on OpenBLAS's threads (NumPy's ``isfinite(x).all()`` writes a mask and
    reads it back: 0.13 ms for ResNet's (8, 64, 56, 56) activations, 0.06 here)."""
    flat = x.reshape(-1)
    bounds = _bands("largest_exponent", flat, flat.size, _ALIGN // 4)
    found = numpy.zeros(len(bounds) - 1, numpy.int64)
    base, at = address(flat), address(found)
    jobs = numpy.array([[base + lo * 4, hi - lo, at + 8 * i]
                        for i, (lo, hi) in enumerate(itertools.pairwise(bounds))], numpy.int64)
    blas_threads.run_jobs(_kernels()["jobs"]["largest_exponent"], jobs)
    return bool(found.max() < 0x7F800000)


def addcmul(x, a, b, value):
    """``x += value * a * b`` (an in-place ``addcmul_``, Adam's second moment) in one pass,
    with PyTorch's rounding (``value * a``, then a fused multiply-add; NumPy's chain takes
    two passes and a temporary, and rounds the sum apart). All float32, C-contiguous, of
    one shape, ``a`` and ``b`` overlapping ``x`` only where they are it. Returns ``x``."""
    v = numpy.float32(value)
    _run("addcmul", (_flat(x), _flat(a), _flat(b)), v, 0, args=(v,))
    return x


def addcdiv(x, a, b, value):
    """``x += value * a / b`` (an in-place ``addcdiv_``, Adam's update) in one pass, with
    PyTorch's rounding (``(value * a) / b``, then the sum); as :func:`addcmul`."""
    v = numpy.float32(value)
    _run("addcdiv", (_flat(x), _flat(a), _flat(b)), v, 1, args=(v,))
    return x


def sqrt_(x):
    """``x = sqrt(x)`` in place, float32 C-contiguous, in parts on OpenBLAS's threads when
    large (NumPy's runs on one). Returns ``x``."""
    _run("sqrt", (_flat(x),))
    return x


_FLOAT32_BYTES, _INT32_BYTES = struct.Struct("=f"), struct.Struct("=i")


def _bits(f):
    """A float32's bits as an integer (how a job row carries it; through its bytes, a
    fifth of NumPy's ``view``)."""
    return _INT32_BYTES.unpack(_FLOAT32_BYTES.pack(f))[0]


def linspace(lo, hi, step, steps, dtype):
    """PyTorch's CPU linspace in float32 or float64: the first half of ``steps`` values
    ``step * i + lo``, the rest ``-step * k + hi`` counted down from the end, each one
    fused multiply-add (the index converted to ``dtype`` first), as its kernel is
    compiled."""
    out = numpy.empty(steps, dtype)
    t = out.dtype.type
    _kernels()["linspace"](t(lo), t(hi), t(step), out)
    return out


def max_pool_2d(x, kernel, stride, pads, dilation):
    """A max pool over the last two dims of ``x``, ``pads`` ((top, bottom), (left,
    right)) as the op's (a ceil mode's extra row and column at the end): (values, int64
    flat indices into each plane). 2x2 windows at stride 2 take the branch-free kernel."""
    h, w = x.shape[-2:]
    (pt, pb), (pl, pr) = pads
    oh, ow = ((n + p0 + p1 - d * (k - 1) - 1) // s + 1 for n, (p0, p1), k, s, d in
              zip((h, w), pads, kernel, stride, dilation, strict=True))
    shape = x.shape[:-2] + (oh, ow)
    out, idx = numpy.empty(shape, x.dtype), numpy.empty(shape, numpy.int64)
    planes = (x.reshape(-1, h, w), out.reshape((-1, oh, ow)), idx.reshape((-1, oh, ow)))
    if kernel == stride == (2, 2) and dilation == (1, 1) and not (pt or pb or pl or pr):
        _run("max_pool_2x2", planes, h, w, oh, ow)
    else:
        _run("max_pool_2d", planes, h, w, oh, ow, *kernel, *stride, pt, pl, *dilation,
             args=(kernel, stride, (pt, pl), dilation))
    return out, idx


def max_pool_grad(grad, indices, self_shape, plane):
    """A max pool's input gradient: each gradient added at its flat index in its plane of
    ``plane`` elements (a negative index gives nothing). ``grad`` is non-empty."""
    out = numpy.empty(self_shape, grad.dtype)  # (each row zeroed by the kernel: in cache)
    rows = out.size // plane
    _run("index_add_rows", (grad.reshape(rows, -1), indices.reshape(rows, -1),
                            _rows(out, plane)), grad.size // rows, plane)
    return out
