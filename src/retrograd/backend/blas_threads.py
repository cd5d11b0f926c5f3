"""Compiled kernels run on OpenBLAS's own worker threads.

On a 2-core machine a kernel's own threads (numba's, or a pool of Python threads) lose
inside a training step: after each multithreaded GEMM, OpenBLAS's worker keeps spinning on
its core for some 2**28 cycles (about 0.1 s) waiting for the next one, so a second thread
of ours shares a core with it (w3's convolutions on two Python threads: 33 -> 45 ms a
step). OpenBLAS runs any C function on its workers, though (``gotoblas_pthread``, its
pthread_create-like entry, the calling thread taking the first job): a spinning worker
takes the job at once. So ``cpu_kernels`` gives each parallel kernel a C entry point (a
numba cfunc) taking one job, and runs one job per BLAS thread here: ReLU on 2M float32,
0.24 ms on one thread, 0.12 on NumPy's two BLAS threads.

Only the OpenBLAS that NumPy loaded is used (found in the process's mapped files, Linux),
at the thread count it has now (``torch.set_num_threads`` sets it); anything else (MKL,
Accelerate, one thread) runs the jobs in turn on this thread.
"""

import ctypes
import functools
import os

__all__ = ["pooled", "threads", "run_jobs", "run_flat"]


def _mapped_openblas():
    """Paths of the OpenBLAS libraries mapped into this process, NumPy's first."""
    try:
        with open("/proc/self/maps") as f:  # (the path is the sixth field, spaces and all)
            paths = {fields[5].strip() for fields in (line.split(maxsplit=5) for line in f)
                     if len(fields) == 6 and "openblas" in fields[5].lower()}
    except OSError:  # not Linux
        return []
    libs = [p for p in paths if p.startswith("/") and ".so" in os.path.basename(p)]
    return sorted(libs, key=lambda p: "numpy" not in p)


@functools.cache
def _openblas():
    """(gotoblas_pthread, blas_cpu_number) of NumPy's OpenBLAS, or None."""
    for path in _mapped_openblas():
        try:
            lib = ctypes.CDLL(path)
            run = lib.gotoblas_pthread
            count = ctypes.c_int.in_dll(lib, "blas_cpu_number")
        except (OSError, AttributeError, ValueError):
            continue
        run.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int]
        run.restype = ctypes.c_int
        return run, count
    return None


def pooled():
    """Whether jobs run on NumPy's OpenBLAS's threads here."""
    return _openblas() is not None


def threads():
    """The threads a kernel's jobs run on: OpenBLAS's current count, else 1."""
    lib = _openblas()
    return max(1, lib[1].value) if lib is not None else 1


def run_jobs(address, jobs):
    """Run the C function at ``address`` (``void f(int64 *job)``) once per row of
    ``jobs`` (a C-contiguous int64 array), the rows on OpenBLAS's threads (at most
    :func:`threads` of them), the first on this one; returns when all are done."""
    _run_rows(address, jobs.ctypes.data, len(jobs), jobs.strides[0])


def run_flat(address, jobs, width):
    """:func:`run_jobs` of ``jobs`` an ``array.array("q")`` of rows of ``width`` int64s:
    a few rows are faster to build so than as a NumPy array (a split kernel's call:
    16 -> 11 us of Python after a 4 MB pass, :func:`cpu_kernels._run`)."""
    _run_rows(address, jobs.buffer_info()[0], len(jobs) // width, 8 * width)


def _run_rows(address, at, count, stride):
    lib = _openblas()
    if count == 1 or lib is None:
        call = _entry(address)
        for i in range(count):
            call(at + i * stride)
        return
    run, threads = lib
    if count > max(1, threads.value):  # (OpenBLAS would wait for a thread it lacks)
        raise ValueError(f"{count} jobs for {threads.value} OpenBLAS threads")
    run(count, address, at, stride)


@functools.cache
def _entry(address):
    """The C function at ``address``, callable from Python (without the GIL)."""
    return ctypes.CFUNCTYPE(None, ctypes.c_void_p)(address)
