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
_MIN_WORK = 1 << 22  # multiply-adds below which NumPy's call (some 12 us cheaper) is as fast
# Multiply-adds of a batch's matrix below which NumPy's loop wins: a call of MKL costs some
# 0.1 us (65536 of (4, 4) @ (4, 4): 4-7.5 ms against NumPy's 1.9).
_MIN_MATRIX = 1 << 12
_ALIGN = 16  # columns (rows) a part starts on a multiple of
_MIN_ROWS, _MIN_COLUMNS = 64, 128  # of a part of a product's output, split further
_DTYPES = (numpy.dtype(numpy.float32), numpy.dtype(numpy.float64))


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


def _layout(x):
    """(CBLAS transpose flag, leading dimension) of the matrices (last two axes) of ``x``
    read in place, or None."""
    rows, cols = x.shape[-2:]
    step, item = x.strides[-2:], x.itemsize
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
    least ``_MIN_WORK`` multiply-adds in all (and ``_MIN_MATRIX`` a matrix of a batch),
    sizes within 32 bits."""
    if not (type(a) is type(b) is numpy.ndarray and a.ndim == b.ndim >= 2
            and a.shape[:-2] == b.shape[:-2] and a.dtype == b.dtype and a.dtype in _DTYPES):
        return False
    m, k = a.shape[-2:]
    n = b.shape[-1]
    if (b.shape[-2] != k or math.prod(a.shape[:-2]) * m * n * k < _MIN_WORK
            or (a.ndim > 2 and m * n * k < _MIN_MATRIX)
            or max(m, n, k, *map(abs, a.strides[-2:] + b.strides[-2:])) > _INT_MAX
            or not (a.flags.aligned and b.flags.aligned)):
        return False
    return _layout(a) is not None and _layout(b) is not None and available()


@functools.cache
def _cores():
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def _grid(m, n, parts):
    """(row parts, column parts) of an (m, n) output in at least ``parts`` parts (a power of
    two), halving the longer side of a part while it stays at least ``_MIN_ROWS`` by
    ``_MIN_COLUMNS``."""
    rows = cols = 1
    while rows * cols < parts:
        if n / cols >= m / rows and n / cols >= 2 * _MIN_COLUMNS:
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


def _offsets(x):
    """The byte offsets of the matrices of ``x``'s batch, in C order."""
    offsets = numpy.zeros(1, numpy.int64)
    for size, stride in zip(x.shape[:-2], x.strides[:-2], strict=True):
        offsets = (offsets[:, None] + numpy.arange(size, dtype=numpy.int64) * stride).ravel()
    return offsets


def matmul(a, b, bias=None):
    """``a @ b`` (:func:`takes` true), C-contiguous, plus ``bias`` (a row of the output's
    width, its dtype, C-contiguous) where given: MKL's products of the blocks of a grid
    over each output matrix, runs of them on OpenBLAS's threads; with a bias a block starts
    as its rows and MKL adds the product to them, in cache (as PyTorch's addmm). A
    matrix's grid has a block for each core (as many as a batch has matrices for: none
    when it has a matrix a core or more), so it depends on the shape and the machine, not
    on the thread count: a product's bits are the same whatever it is."""
    *batch, m, k = a.shape
    n = b.shape[-1]
    out = numpy.empty((*batch, m, n), a.dtype)
    (ta, lda), (tb, ldb) = _layout(a), _layout(b)
    gemms, job = _gemms()
    (sa, _), (_, sb), (so, item) = a.strides[-2:], b.strides[-2:], out.strides[-2:]
    count = math.prod(batch)
    rows, cols = _grid(m, n, -(-_cores() // count))
    row = 0 if bias is None else bias.ctypes.data
    blocks = numpy.array([(gemms[a.dtype], ta, tb, r1 - r0, c1 - c0, k, r0 * sa, lda, c0 * sb,
                           ldb, r0 * so + c0 * item, n, row and row + c0 * item)
                          for r0, r1 in itertools.pairwise(_bounds(m, rows))
                          for c0, c1 in itertools.pairwise(_bounds(n, cols))
                          if r0 < r1 and c0 < c1], numpy.int64)
    products = numpy.repeat(blocks[None], count, axis=0)
    for column, x in ((6, a), (8, b), (10, out)):
        products[:, :, column] += (x.ctypes.data + _offsets(x))[:, None]
    products = products.reshape(-1, blocks.shape[1])
    threads = min(blas_threads.threads(), len(products))
    runs = [len(products) * t // threads for t in range(threads + 1)]
    first, size, double = products.ctypes.data, products.strides[0], a.itemsize == 8
    jobs = numpy.array([(first + lo * size, hi - lo, double)
                        for lo, hi in itertools.pairwise(runs)], numpy.int64)
    blas_threads.run_jobs(job, jobs)
    return out
