"""Matrix products by MKL (the ``mkl`` wheel, an optional extra), in parts on OpenBLAS's
threads.

NumPy's OpenBLAS multiplies the matrices of a training step's linear layers up to a third
slower than the MKL inside PyTorch on an AVX-512 machine (measured: (128, 784) @ (784,
1024)^T on one thread, 1.69 ms against MKL's 1.34; OpenBLAS's build has no kernels for the
newer cores). Where the ``mkl`` package is installed, a float32 or float64 product of two
matrices is MKL's: its sequential GEMM on the blocks of a grid over the output, runs of
them on OpenBLAS's threads (:mod:`.blas_threads`), so that one pool of threads runs the
whole step (MKL's own OpenMP threads would spin against OpenBLAS's on the same cores).
Either operand may be transposed or a strided view with a unit step along one axis: MKL
reads it in place. The grid depends on the shape and the number of cores, not on the
thread count (MKL's sum for an element changes with the width of its block), so a
product's bits do not depend on ``torch.set_num_threads``.

Used only where NumPy's BLAS is OpenBLAS (Linux) and numba compiles the job
(:mod:`._numba_gemm`); otherwise, and for whatever :func:`takes` refuses, NumPy multiplies.
"""

import array
import ctypes
import functools
import importlib.metadata
import importlib.util
import itertools
import math
import os
import sys

import numpy

from . import blas_threads, cpu_kernels

__all__ = ["available", "takes", "matmul"]

_LP64, _SEQUENTIAL = 0, 1  # MKL_INTERFACE_LP64 (32-bit sizes), MKL_THREADING_SEQUENTIAL
_NO_TRANS, _TRANS = 111, 112
_INT_MAX = (1 << 31) - 1  # MKL's LP64 interface takes 32-bit sizes
# Multiply-adds below which NumPy's call (some 6 us cheaper) is as fast: at 0.5M (128, 64) @
# (64, 64) takes 5.6 us by NumPy, 10.6 here; at 1.3M w2's last layer takes 30-33 by NumPy, 22
# here, and its backward's (10, 128) @ (128, 1024) 28-46 against 15-21.
_MIN_WORK = 1 << 20
# Of a batch in all: at 1M NumPy's loop is still a little faster ((128, 16, 32) @ (128, 32,
# 16): 18 us against 20), at 2M it is not ((64, 32, 32) @ (64, 32, 32): 24 against 23).
_MIN_BATCH_WORK = 1 << 21
# Multiply-adds of a batch's matrix below which NumPy's loop wins: a call of MKL costs some
# 0.1 us (65536 of (4, 4) @ (4, 4): 4-7.5 ms against NumPy's 1.9).
_MIN_MATRIX = 1 << 12
_ALIGN = 16  # columns (rows) a part starts on a multiple of
_MIN_ROWS, _MIN_COLUMNS = 64, 128  # of a part of a product's output, split further
_SHORT_K = 32  # inner sizes up to which an output is split by rows first (:func:`_grid`)
_DTYPES = (numpy.dtype(numpy.float32), numpy.dtype(numpy.float64))
_PLANS = 256  # layouts whose plans are kept
_KEPT_PRODUCTS = 1024  # GEMMs of the largest plan kept (112 bytes each)
_K_STEP, _FEW_ROWS, _WIDE = 512, 128, 512  # (:func:`_k_steps`)
_JOB = 7  # int64s of a job: a run of products, their dtype, four addresses (_numba_gemm)


def _mkl_runtime():
    """The path of the ``mkl`` package's ``libmkl_rt``, or None."""
    try:
        files = importlib.metadata.files("mkl") or ()
    except importlib.metadata.PackageNotFoundError:
        return None
    for f in files:
        if f.name.startswith("libmkl_rt.so"):
            return str(f.locate())
    return None


def _pytorch_may_come():
    """Whether PyTorch is installed and not imported yet. MKL's libraries put their symbols
    in the process's global scope, where a PyTorch imported afterwards binds to them: its
    threads are then one and its GEMMs the wheel's sequential ones (measured: five 2048^2
    products 0.24 -> 0.48 s). A PyTorch imported first has bound its own, and under
    ``retrograd run`` the module ``torch`` is retrograd."""
    return "torch" not in sys.modules and importlib.util.find_spec("torch") is not None


@functools.cache
def _gemms():
    """({float32: cblas_sgemm's address, float64: cblas_dgemm's}, the job's address) of MKL
    made sequential with 32-bit sizes; None where MKL is not installed, cannot be set up so
    (used already: its layers then set), PyTorch may still be imported
    (:func:`_pytorch_may_come`), or there are no OpenBLAS threads and no compiler to run
    the parts on."""
    path = _mkl_runtime()
    if (path is None or not cpu_kernels.ready() or not blas_threads.pooled()
            or _pytorch_may_come()):
        return None
    try:
        lib = ctypes.CDLL(path)
        layers = (lib.MKL_Set_Interface_Layer, lib.MKL_Set_Threading_Layer)
        gemms = {numpy.dtype(numpy.float32): lib.cblas_sgemm,
                 numpy.dtype(numpy.float64): lib.cblas_dgemm}
    except (OSError, AttributeError):
        return None
    for set_layer, want in zip(layers, (_LP64, _SEQUENTIAL), strict=True):
        set_layer.argtypes, set_layer.restype = [ctypes.c_int], ctypes.c_int
        if set_layer(want) != want:  # (MKL_INTERFACE_LAYER=ILP64 or GNU would be obeyed)
            return None
    from . import _numba_gemm
    return ({dtype: ctypes.cast(f, ctypes.c_void_p).value for dtype, f in gemms.items()},
            _numba_gemm.JOBS["gemm"])


def available():
    """Whether products are MKL's in this process."""
    return _gemms() is not None


def _layout(shape, strides, item):
    """(CBLAS transpose flag, leading dimension) of the matrices (last two axes) of an array
    of this shape, strides and item size read in place, or None."""
    rows, cols = shape[-2:]
    step = strides[-2:]
    if step[0] % item or step[1] % item:
        return None
    s0, s1 = step[0] // item, step[1] // item
    if (s1 == 1 or cols == 1) and (rows == 1 or s0 >= max(cols, 1)):
        return _NO_TRANS, s0 if rows > 1 else max(cols, 1)
    if (s0 == 1 or rows == 1) and (cols == 1 or s1 >= max(rows, 1)):
        return _TRANS, s1 if cols > 1 else max(rows, 1)
    return None


def takes(a, b):
    """Whether ``a @ b`` is MKL's: two NumPy matrices, or batches of them of one batch
    shape, of float32 or of float64 (native byte order), each matrix read in place, of at
    least ``_MIN_WORK`` multiply-adds (a batch ``_MIN_BATCH_WORK`` in all and
    ``_MIN_MATRIX`` a matrix), sizes within 32 bits."""
    if not (type(a) is type(b) is numpy.ndarray and a.ndim == b.ndim >= 2
            and a.shape[:-2] == b.shape[:-2] and a.dtype == b.dtype and a.dtype in _DTYPES):
        return False
    m, k = a.shape[-2:]
    n = b.shape[-1]
    batched = a.ndim > 2
    if (b.shape[-2] != k
            or math.prod(a.shape[:-2]) * m * n * k < (_MIN_BATCH_WORK if batched else _MIN_WORK)
            or (batched and m * n * k < _MIN_MATRIX)
            or max(m, n, k, *map(abs, a.strides[-2:] + b.strides[-2:])) > _INT_MAX
            or not (a.flags.aligned and b.flags.aligned)):
        return False
    return (_layout(a.shape, a.strides, a.itemsize) is not None
            and _layout(b.shape, b.strides, b.itemsize) is not None and available())


@functools.cache
def _cores():
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def _grid(m, n, parts, k):
    """(row parts, column parts) of an (m, n) output over an inner size ``k`` in at least
    ``parts`` parts (a power of two), halving the longer side of a part while it stays at
    least ``_MIN_ROWS`` by ``_MIN_COLUMNS``; the rows first where ``k`` is at most
    ``_SHORT_K``: such a product mostly writes its output, and a part of whole rows writes
    one run of it (two threads, (128, 10) @ (10, 1024): 29.5 us in column halves, 18.6 in
    row halves; (512, 8) @ (8, 2048): 160 against 114; with k from 64 to 256 either way
    within 5%, and columns first faster from k = 384 for 128-row outputs)."""
    rows = cols = 1
    while rows * cols < parts:
        if (n / cols >= m / rows and n / cols >= 2 * _MIN_COLUMNS
                and (k > _SHORT_K or m / rows < 2 * _MIN_ROWS)):
            cols *= 2
        elif m / rows >= 2 * _MIN_ROWS:
            rows *= 2
        elif n / cols >= 2 * _MIN_COLUMNS:
            cols *= 2
        else:
            break
    return rows, cols


def _bounds(size, parts):
    """Starts of ``parts`` runs of ``size``, on multiples of ``_ALIGN``, and its end."""
    step = -(-size // parts // _ALIGN) * _ALIGN
    return [min(size, i * step) for i in range(parts)] + [size]


def _offsets(shape, strides):
    """The byte offsets of the matrices of a batch of this shape and strides, in C order."""
    offsets = numpy.zeros(1, numpy.int64)
    for size, stride in zip(shape[:-2], strides[:-2], strict=True):
        offsets = (offsets[:, None] + numpy.arange(size, dtype=numpy.int64) * stride).ravel()
    return offsets


@functools.lru_cache(maxsize=_PLANS)
def _kept_plan(*key):
    """:func:`_plan` of a layout, kept for the ``_PLANS`` layouts used last; None for one
    of more than ``_KEPT_PRODUCTS`` GEMMs (a batch of many matrices), built at each call."""
    plan = _plan(*key)
    return plan if len(plan[0]) <= _KEPT_PRODUCTS else None


def _plan(a_shape, a_strides, b_shape, b_strides, item, cores, threads):
    """(products, runs) of a product of this layout: each of its GEMMs as the job reads it
    (``_numba_gemm.FIELDS``), with the operands' and the output's addresses as byte offsets
    from their first elements; and a run of products for each thread (the address of the
    first, their number, 1 for float64), to which a call adds the operands' and the
    output's addresses (and the bias's, 0 without one) as its jobs. A block's steps along
    the inner size (:func:`_k_steps`) are consecutive products of one run."""
    *batch, m, k = a_shape
    n = b_shape[-1]
    out_strides = (n * item, item)
    count = math.prod(batch)
    rows, cols = _grid(m, n, -(-cores // count), k)
    gemm = _gemms()[0][numpy.dtype(f"f{item}")]
    (ta, lda), (tb, ldb) = _layout(a_shape, a_strides, item), _layout(b_shape, b_strides, item)
    (sa, sak), (sbk, sb) = a_strides[-2:], b_strides[-2:]
    row_bounds, col_bounds = _bounds(m, rows), _bounds(n, cols)
    steps = _k_steps(tb, max(r1 - r0 for r0, r1 in itertools.pairwise(row_bounds)),
                     min(c1 - c0 for c0, c1 in itertools.pairwise(col_bounds) if c0 < c1), k)
    blocks = numpy.array([(gemm, ta, tb, r1 - r0, c1 - c0, k1 - k0, r0 * sa + k0 * sak, lda,
                           k0 * sbk + c0 * sb, ldb, r0 * out_strides[0] + c0 * item, n,
                           c0 * item, k0 > 0)
                          for r0, r1 in itertools.pairwise(row_bounds)
                          for c0, c1 in itertools.pairwise(col_bounds) if r0 < r1 and c0 < c1
                          for k0, k1 in itertools.pairwise(steps)], numpy.int64)
    products = numpy.repeat(blocks[None], count, axis=0)
    out_shape = (*batch, m, n)
    batch_strides = tuple(m * n * item * math.prod(batch[i + 1:]) for i in range(len(batch)))
    for column, shape, strides in ((6, a_shape, a_strides), (8, b_shape, b_strides),
                                   (10, out_shape, (*batch_strides, *out_strides))):
        products[:, :, column] += _offsets(shape, strides)[:, None]
    products = products.reshape(-1, blocks.shape[1])
    per_block = len(steps) - 1
    units = len(products) // per_block
    threads = min(threads, units)
    runs = [units * t // threads * per_block for t in range(threads + 1)]
    first, size = products.ctypes.data, products.strides[0]
    return products, [(first + lo * size, hi - lo, int(item == 8))
                      for lo, hi in itertools.pairwise(runs)]


def _k_steps(tb, rows, cols, k):
    """Bounds of the steps along the inner size ``k`` in which MKL multiplies blocks of at
    most ``rows`` rows and at least ``cols`` columns: ``_K_STEP`` at a time, each step
    added to the last, where B is read untransposed, a block has at most ``_FEW_ROWS``
    rows and ``_WIDE`` columns or more; else all of it at once. Measured on one core (MKL
    2026.2, AVX-512), (128, k) @ (k, 512) blocks of a row-major B take 1.2-1.4x as long at
    once as in steps of 512 for k from 1024 to 4096 (w2's (128, 1024) @ (1024, 1024): 1088
    -> 733 us), and transposed A the same. Steps gain nothing with B transposed, from 192
    rows, on blocks 256 columns wide or less, or in steps of 384 or 768, and narrow blocks
    lose (a batch of (1, 8192) @ (8192, 1): 1.6x as long). A product's bits then depend on
    its shape still, not on the thread count."""
    if tb != _NO_TRANS or rows > _FEW_ROWS or cols < _WIDE or k <= _K_STEP:
        return [0, k]
    return [*range(0, k, _K_STEP), k]


def matmul(a, b, bias=None):
    """``a @ b`` (:func:`takes` true), C-contiguous, plus ``bias`` (a row of the output's
    width, its dtype, C-contiguous) where given: MKL's products of the blocks of a grid
    over each output matrix, runs of them on OpenBLAS's threads; with a bias a block starts
    as its rows and MKL adds the product to them, in cache (as PyTorch's addmm). A
    matrix's grid has a block for each core (as many as a batch has matrices for: none
    when it has a matrix a core or more), so it depends on the shape and the machine, not
    on the thread count: a product's bits are the same whatever it is. The plan of a
    layout's products is kept (:func:`_kept_plan`: building it took 20 us a call, a GEMM
    of w2's 600)."""
    key = (a.shape, a.strides, b.shape, b.strides, a.itemsize, _cores(), blas_threads.threads())
    # (products stays referenced here while its jobs run: another thread's products may
    # drop it from the cache meanwhile)
    products, runs = _kept_plan(*key) or _plan(*key)
    out = numpy.empty((*a.shape[:-1], b.shape[-1]), a.dtype)
    address = cpu_kernels.address
    bases = (address(a), address(b), address(out), 0 if bias is None else address(bias))
    jobs = array.array("q")
    for run in runs:
        jobs.extend(run)
        jobs.extend(bases)
    blas_threads.run_flat(_gemms()[1], jobs, _JOB)
    return out
