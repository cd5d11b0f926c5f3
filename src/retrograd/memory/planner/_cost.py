"""What a plan costs in time, estimated from one traced forward: each op by the roofline
(its multiply-adds at the machine's matmul rate or its bytes at its memory bandwidth,
whichever is slower, plus the per-op overhead), summed per module. Backward is taken as
twice the forward. The machine's rates are measured once per process, so plans rank by
this machine's costs; the figures rank plans, they do not promise seconds."""

import functools
import math
import os
import tempfile
import time

import numpy

from ... import _observe
from ..._creation import tensor
from ..._tensor import Tensor
from ...ops.threads import get_num_threads, set_num_threads

__all__ = ["Machine", "machine", "ForwardCost"]

# ops whose multiply-adds dominate: flops = 2 * output elements * the contracted length
_CONTRACTING = {"linear", "matmul", "mm", "bmm", "addmm", "baddbmm", "addbmm", "mv", "dot",
                "addmv", "einsum", "tensordot"}


class Machine:
    """Rates of this machine: ``flops`` (float32 matmul, per second), ``bandwidth`` (bytes
    per second through an elementwise kernel), ``overhead`` (seconds per op outside the
    kernel) and ``disk`` (bytes per second written then read back, for offload)."""

    def __init__(self, flops, bandwidth, overhead, disk):
        self.flops, self.bandwidth, self.overhead, self.disk = flops, bandwidth, overhead, disk

    def op_time(self, flops, nbytes):
        return self.overhead + max(flops / self.flops, nbytes / self.bandwidth)


def _best(fn, repeat=5):
    best = math.inf
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return max(best, 1e-9)


def _disk_rate(directory):
    """Bytes per second through save_on_disk's path, written then read back: one cold
    pass over 16 files of 2 MiB (not the best of several: offload meets new files and
    fresh memory every step, and a warm rerun measures twice what a step sees)."""
    chunks = [numpy.full(1 << 19, i, numpy.float32) for i in range(16)]
    folder = tempfile.mkdtemp(dir=directory)
    try:
        t = time.perf_counter()
        paths = []
        for i, c in enumerate(chunks):
            paths.append(os.path.join(folder, str(i)))
            c.tofile(paths[-1])
        back = [numpy.fromfile(p, numpy.float32) for p in paths]
        seconds = time.perf_counter() - t
    finally:
        for p in os.listdir(folder):
            os.remove(os.path.join(folder, p))
        os.rmdir(folder)
    return (sum(c.nbytes for c in chunks) + sum(b.nbytes for b in back)) / max(seconds, 1e-9)


def _matmul_rate():
    """Float32 matmul flops per second: one BLAS thread's, times the threads, since a busy
    sibling core stalls a multi-threaded run far more than it slows one thread (without
    threadpoolctl to limit the threads, measured as they are)."""
    a = numpy.ones((384, 384), numpy.float32)
    threads = get_num_threads()
    try:
        set_num_threads(1)
    except NotImplementedError:
        return 2 * 384 ** 3 / _best(lambda: a @ a, 10)
    try:
        return threads * 2 * 384 ** 3 / _best(lambda: a @ a, 10)
    finally:
        set_num_threads(threads)


@functools.cache
def machine(directory=None):
    """This machine's :class:`Machine`, measured on first use (about 0.3 s) per offload
    ``directory`` (best of several runs: a busy machine slows some of them)."""
    flops = _matmul_rate()
    x = numpy.ones(1 << 23, numpy.float32)  # 32 MiB: past the caches, as activations are
    out = numpy.empty_like(x)
    bandwidth = 3 * x.nbytes / _best(lambda: numpy.add(x, x, out=out))
    s = tensor([1.0])
    overhead = _best(lambda: [s + s for _ in range(100)]) / 100
    where = directory if directory is not None and os.path.isdir(directory) else None
    return Machine(flops, bandwidth, overhead, _disk_rate(where or tempfile.gettempdir()))


def _nbytes(v):
    return v._data.nbytes if isinstance(v, Tensor) else 0


def _flops(name, values, attrs, out):
    """Floating-point operations of one op: 2 per multiply-add for contractions and
    convolutions, one per output element otherwise."""
    n = out._data.size
    if name in _CONTRACTING:
        a = next(v for v in values if isinstance(v, Tensor) and v.ndim)
        k = a.shape[-1] if name not in ("addmm", "baddbmm", "addbmm", "addmv") else \
            values[1].shape[-1]
        return 2 * n * k
    if name == "convolution":
        x, w = values[0], values[1]
        per_out = w._data.size // w.shape[0]
        return 2 * (x._data.size if attrs[3] else n) * per_out  # attrs[3]: transposed
    return n


class ForwardCost(_observe.EngineObserver):
    """Attached during one traced forward: per module (by object), its inclusive
    estimated forward time and the bytes of the tensors it was called with (what a
    checkpoint of it keeps); ``order`` lists the modules in their first-call order."""

    ops = True
    modules = True
    rank = 1  # inside the memory tracker's events: the tracker books what ops allocate

    def __init__(self, machine):
        self.machine = machine
        self.time = {}     # id(module) -> seconds
        self.inputs = {}   # id(module) -> bytes of its tensor arguments
        self.order = []    # modules, first call first
        self.total = 0.0   # the whole forward, seconds
        self._stack = []

    def run_module(self, call, module, args, kwargs):
        key = id(module)
        if key not in self.time:
            self.time[key] = 0.0
            self.inputs[key] = sum(map(_nbytes, (*args, *kwargs.values())))
            self.order.append(module)
        self._stack.append(key)
        try:
            return call(module, args, kwargs)
        finally:
            self._stack.pop()

    def run_op(self, call, op, values, attrs, self_):
        out = call(op, values, attrs, self_)
        first = out[0] if isinstance(out, tuple) else out
        if isinstance(first, Tensor):
            nbytes = sum(map(_nbytes, values)) + first._data.nbytes
            self._add(self.machine.op_time(_flops(op.name, values, attrs, first), nbytes))
        return out

    def run_call(self, call, name, args, kwargs):
        out = call(name, args, kwargs)
        self._add(self.machine.overhead)
        return out

    def _add(self, t):
        self.total += t
        for key in self._stack:
            self.time[key] += t
