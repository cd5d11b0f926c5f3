"""``retrograd.autograd.profiler``: PyTorch's autograd profiler, on the CPU.

:class:`profile` records one event per forward op (``aten::<op>``, including the
in-place ``aten::<op>_``), per backward node run by the engine (the node's name,
``torch::autograd::AccumulateGrad`` included, inside an
``autograd::engine::evaluate_function: <name>`` event as in PyTorch), and per
:class:`record_function` range. Each event has wall-clock CPU time, self time (its
time minus its children's), its thread, and ``sequence_nr``: a forward op carries the
sequence number of the node it created and that node's backward events carry the same
number (-1 where there is none), which is how a backward event is matched to the
forward op that caused it.

``profile_memory`` counts, per event, the bytes of the arrays it produced that own
their memory (forward outputs; gradients returned by a backward node; the ``.grad``
an AccumulateGrad made), each array counted once, and subtracts them again when that
array is freed, from the event running at that moment on the freeing thread (a
``[memory]`` event when none is). Temporaries inside an op, views, and arrays made
outside ops are not counted.

The profiler records from every thread while it is on (PyTorch's is thread local).
It is an engine observer (``retrograd._observe``): the registry's ops, the list ops
(``cat``, ``stack``, ``split``, ``unbind``, ...) and the engine's nodes reach it
through that hook. ``emit_nvtx`` emits NVTX ranges on a GPU (CuPy's bindings); it and
``emit_itt`` are no-ops on the CPU.
"""

import functools
import itertools
import sqlite3
import sys
import threading
import warnings
import weakref
from contextlib import ContextDecorator
from time import perf_counter_ns

import numpy

from .. import _observe
from .._tensor import Tensor
from ..backend import cuda_runtime, gpu
from .node import AccumulateGrad
from .profiler_util import (EventList, FunctionEvent, FunctionEventAvg,  # noqa: F401
                            _format_memory, _format_time)

__all__ = ["profile", "record_function", "emit_nvtx", "emit_itt", "load_nvprof", "EventList",
           "FunctionEvent", "FunctionEventAvg"]

_EVALUATE = "autograd::engine::evaluate_function: "
_active = None  # the profile recording now (one per process)


# ---- recording ---------------------------------------------------------------------------

def _user_stack():
    """The caller's Python stack outside retrograd, innermost first, as PyTorch prints it."""
    out = []
    f = sys._getframe(1)
    while f is not None:
        if not _observe.in_library(f):
            out.append(f"{f.f_code.co_filename}({f.f_lineno}): {f.f_code.co_name}")
        f = f.f_back
    return out


def _shapes(values):
    return [list(v._data.shape) if isinstance(v, Tensor) else [] for v in values]


class profile(_observe.EngineObserver):
    """Context manager that records the ops run inside it (see the module docstring).

    >>> with profile(record_shapes=True) as prof:
    ...     loss = model(x)
    ...     loss.backward()
    >>> print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=10))
    """

    rank = 2  # innermost: its events time the work, not the other observers
    ops = True
    applies = True

    def __init__(self, enabled=True, *, use_cuda=False, use_device=None, record_shapes=False,
                 with_flops=False, profile_memory=False, with_stack=False, with_modules=False,
                 use_kineto=False, use_cpu=True, experimental_config=None, acc_events=False,
                 custom_trace_id_callback=None):
        self.enabled = enabled
        if enabled:
            _check_devices(use_cuda, use_device, use_cpu, use_kineto)
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_flops = with_flops
        self.entered = False
        self.function_events = None
        self._events = []
        self._ids = itertools.count(1)
        self._threads = {}  # threading ident -> (stack of open events, native id, name)
        self._live = {}     # id(array) -> weakref to an array counted by profile_memory

    # -- context manager

    def __enter__(self):
        if not self.enabled:
            return self
        if self.entered:
            raise RuntimeError("Profiler context manager is not reentrant")
        self._start_trace()
        return self

    def _start_trace(self):
        """Start recording; ``torch.profiler`` restarts one profile for each cycle of
        steps when it accumulates events (``acc_events``), so this does not check
        ``entered``."""
        global _active
        if _active is not None:
            raise RuntimeError("Profiler is already enabled on this thread")
        self.entered = True
        _active = self
        _observe.attach("engine", self)

    def __exit__(self, *exc):
        global _active
        if not self.enabled:
            return False
        _observe.detach("engine", self)
        _active = None
        self._live.clear()  # the weakrefs die with it: later frees are not recorded
        for e in reversed(self._events):  # children come after their parent
            e.cpu_memory_usage = e.self_cpu_memory_usage + sum(
                c.cpu_memory_usage for c in e._children or ())
        self.function_events = EventList(self._events, profile_memory=self.profile_memory)
        return False

    def _check_finish(self):
        if self.function_events is None:
            raise RuntimeError("Profiler didn't finish running")

    # -- results

    def events(self):
        self._check_finish()
        return self.function_events

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75,
              max_name_column_width=55, max_shapes_column_width=80, header=None,
              top_level_events_only=False):
        self._check_finish()
        return self.function_events.table(
            sort_by=sort_by, row_limit=row_limit, max_src_column_width=max_src_column_width,
            max_name_column_width=max_name_column_width,
            max_shapes_column_width=max_shapes_column_width, header=header,
            top_level_events_only=top_level_events_only)

    table.__doc__ = EventList.table.__doc__

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0,
                     group_by_overload_name=False):
        self._check_finish()
        return self.function_events.key_averages(group_by_input_shape, group_by_stack_n,
                                                 group_by_overload_name)

    key_averages.__doc__ = EventList.key_averages.__doc__

    def total_average(self):
        self._check_finish()
        return self.function_events.total_average()

    total_average.__doc__ = EventList.total_average.__doc__

    @property
    def self_cpu_time_total(self):
        """Total time spent on CPU: the sum of all events' self times (microseconds)."""
        self._check_finish()
        return self.function_events.self_cpu_time_total

    def export_chrome_trace(self, path):
        self._check_finish()
        self.function_events.export_chrome_trace(path)

    export_chrome_trace.__doc__ = EventList.export_chrome_trace.__doc__

    def export_stacks(self, path, metric="self_cpu_time_total"):
        self._check_finish()
        self.function_events.export_stacks(path, metric)

    export_stacks.__doc__ = EventList.export_stacks.__doc__

    def __str__(self):
        return self.table() if self.function_events is not None else repr(self)

    # -- recording: the engine hook's events (retrograd._observe), and record_function

    def _open(self, name, shapes, seq, stack=None, user=False):
        ident = threading.get_ident()
        th = self._threads.get(ident)
        if th is None:
            th = self._threads[ident] = ([], threading.get_native_id(),
                                         threading.current_thread().name)
        open_, tid, tname = th
        e = FunctionEvent(next(self._ids), name, tid, tname, shapes, seq,
                          open_[-1] if open_ else None, stack, user)
        self._events.append(e)
        open_.append(e)
        e.start_ns = perf_counter_ns()
        return e

    def _close(self, e):
        e.end_ns = perf_counter_ns()
        self._threads[threading.get_ident()][0].pop()

    def _count(self, e, a):
        """Count array ``a`` (or a Tensor's) as allocated by event ``e``, once."""
        if a is None:
            return
        if type(a) is not numpy.ndarray:
            a = getattr(a, "_data", a)
            if not isinstance(a, numpy.ndarray):
                return
        k = id(a)
        if a.base is not None or k in self._live:
            return
        n = a.nbytes
        self._live[k] = weakref.ref(a, functools.partial(self._freed, k, n))
        e.self_cpu_memory_usage += n

    def _freed(self, k, n, _ref):
        if self._live.pop(k, None) is None:
            return
        th = self._threads.get(threading.get_ident())
        if th is not None and th[0]:
            th[0][-1].self_cpu_memory_usage -= n
            return
        e = self._open("[memory]", None, -1)
        self._close(e)
        e.self_cpu_memory_usage = -n

    def run_op(self, call, op, values, attrs, self_):
        """Record a forward op (in-place when ``self_`` is given) in an ``aten::<op>``
        event (``aten::<op>_`` in place)."""
        e = self._open("aten::" + op.name + ("" if self_ is None else "_"),
                       _shapes((*values, *attrs) if self_ is None else (self_, *values, *attrs))
                       if self.record_shapes else None, -1,
                       _user_stack() if self.with_stack else None)
        try:
            out = call(op, values, attrs, self_)
        finally:
            self._close(e)
        for o in out if type(out) is tuple else (out,):
            fn = o._grad_fn
            if fn is not None and type(fn) is op.node_cls:
                e.sequence_nr = fn._seq
                e.flow = "s"
                break
        if self.profile_memory and self_ is None:
            for o in out if type(out) is tuple else (out,):
                self._count(e, o._data)
        return out

    def run_call(self, call, name, args, kwargs):
        """A forward op that does not go through ``apply`` (the list ops: cat, stack,
        split, unbind, ...) in an ``aten::<name>`` event."""
        shapes = None
        if self.record_shapes:
            shapes = [_shapes(a) if isinstance(a, (list, tuple)) else _shapes((a,))[0]
                      for a in args]
        e = self._open("aten::" + name, shapes, -1,
                       _user_stack() if self.with_stack else None)
        try:
            out = call(name, args, kwargs)
        finally:
            self._close(e)
        outs = out if isinstance(out, tuple) else (out,)
        for o in outs:
            node = getattr(o, "_grad_fn", None)
            if node is not None:
                e.sequence_nr = node._seq
                e.flow = "s"
                break
        if self.profile_memory:
            for o in outs:
                self._count(e, o)
        return out

    def run_node(self, call, node, buf, create_graph):
        """The engine's evaluation of a node in an evaluate_function event."""
        e = self._open(_EVALUATE + node.name(), None, _node_seq(node))
        try:
            return call(node, buf, create_graph)
        finally:
            self._close(e)

    def apply_node(self, call, node, buf, create_graph):
        """``node.apply`` in an event named by the node."""
        seq = _node_seq(node)
        e = self._open(node.name(), [[] if g is None else list(g.shape) for g in buf]
                       if self.record_shapes else None, seq)
        try:
            outs = call(node, buf, create_graph)
        finally:
            self._close(e)
        if seq >= 0:
            e.flow = "f"
        if self.profile_memory:
            for g in outs:
                self._count(e, g)
            if type(node) is AccumulateGrad and node.variable._grad is not None:
                self._count(e, node.variable._grad._data)
        return outs


def _check_devices(use_cuda, use_device, use_cpu, use_kineto):
    """Check the devices asked for as PyTorch does: one this machine lacks is dropped
    with PyTorch's warning (so code written for a GPU runs on the CPU); a GPU that is
    present is refused, since only CPU time is recorded."""
    if use_cuda:
        warnings.warn("The attribute `use_cuda` will be deprecated soon, please use "
                      "``use_device = 'cuda'`` instead.", FutureWarning, stacklevel=3)
        use_device = "cuda"
    if not use_cpu and not use_kineto:
        raise AssertionError("Device-only events supported only with Kineto (use_kineto=True)")
    if use_device is not None:
        if use_device not in ("cuda", "xpu", "mtia", "hpu"):
            warnings.warn(f"The {use_device} is not a valid device option.", stacklevel=3)
        elif use_device == "mtia":
            raise AssertionError("Legacy MTIA profiling is not supported. Requires "
                                 "use_kineto=True on MTIA devices.")
        elif use_device == "cuda" and cuda_runtime().count() > 0:
            raise NotImplementedError("retrograd's profiler records CPU time only")
        else:
            name = use_device.upper()
            warnings.warn(f"{name} is not available, disabling {name} profiling",
                          stacklevel=3)
    if not use_cpu:
        raise AssertionError("No activities specified for the profiler")


def _node_seq(node):
    seq = node._seq
    return seq if seq < 1 << 62 else -1  # AccumulateGrad's is PyTorch's UINT64_MAX


class record_function(ContextDecorator):
    """A user range in the profile (a context manager or a decorator); a no-op when no
    profiler is recording.

    >>> with record_function("attention"):
    ...     y = q @ k.mT
    """

    def __init__(self, name, args=None):
        self.name = name
        self.args = args
        self._prof = self._event = None

    def _recreate_cm(self):  # each decorated call gets its own range
        return type(self)(self.name, self.args)

    def __enter__(self):
        p = _active
        if p is not None:
            self._prof = p
            self._event = e = p._open(self.name, None, -1,
                                      _user_stack() if p.with_stack else None, True)
            if self.name.startswith("ProfilerStep#"):  # torch.profiler's steps: one table row
                e._trace_name, e.name = self.name, "ProfilerStep*"
        return self

    def __exit__(self, *exc):
        if self._event is not None:
            self._prof._close(self._event)
            self._prof = self._event = None
        return False


class _NvtxRanges(_observe.EngineObserver):
    """An NVTX range around each forward op (``aten::<name>``, as PyTorch's) and each
    backward node (its name), pushed and popped through CuPy's NVTX bindings."""

    __slots__ = ("push", "pop", "shapes")
    ops = True
    rank = 2  # inside memory accounting and the profiler

    def __init__(self, nvtx, record_shapes):
        self.push, self.pop, self.shapes = nvtx.RangePush, nvtx.RangePop, record_shapes

    def _range(self, name, values, call, *args):
        if self.shapes:
            name += f", sizes = {_shapes(values)}"
        self.push(name)
        try:
            return call(*args)
        finally:
            self.pop()

    def run_op(self, call, op, values, attrs, self_):
        return self._range(f"aten::{op.name}", values, call, op, values, attrs, self_)

    def run_call(self, call, name, args, kwargs):
        return self._range(f"aten::{name}", args, call, name, args, kwargs)

    def run_node(self, call, node, buf, create_graph):
        return self._range(node.name(), (), call, node, buf, create_graph)


class emit_nvtx:
    """NVTX ranges for every autograd op, forward and backward, for Nsight Systems (or
    nvprof): with a GPU, through CuPy's NVTX bindings. Without one there is no NVTX to
    emit to, and it is a no-op that keeps code written for CUDA running."""

    _kind = "NVTX"

    def __init__(self, enabled=True, record_shapes=False):
        self.enabled = enabled
        self.entered = False
        self.record_shapes = record_shapes
        self._observer = None

    def __enter__(self):
        if not self.enabled:
            return None
        if self.entered:
            raise RuntimeError(f"{self._kind} annotation context manager is not reentrant")
        self.entered = True
        nvtx = self._nvtx()
        if nvtx is not None:
            self._observer = _NvtxRanges(nvtx, self.record_shapes)
            _observe.attach("engine", self._observer)
        return self

    def __exit__(self, *exc):
        if self.enabled:
            self.entered = False
            if self._observer is not None:
                _observe.detach("engine", self._observer)
                self._observer = None
        return False

    @staticmethod
    def _nvtx():
        """CuPy's NVTX module where there is a GPU, else None."""
        cp = gpu.cupy()
        if cp is None:
            return None
        from cupy.cuda import nvtx
        return nvtx


class emit_itt(emit_nvtx):
    """ITT ranges for every autograd op (Intel VTune). A documented no-op here: retrograd
    does not link the ITT API."""

    _kind = "ITT"

    @staticmethod
    def _nvtx():
        return None


# ---- nvprof traces -----------------------------------------------------------------------

_MARKERS = """
SELECT start.id AS marker_id, start.name, start.timestamp AS start_time,
       end.timestamp AS end_time
FROM CUPTI_ACTIVITY_KIND_MARKER AS start
     INNER JOIN CUPTI_ACTIVITY_KIND_MARKER AS end ON start.id = end.id
WHERE start.name != 0 AND end.name = 0
"""

_KERNELS = """
SELECT start.id AS marker_id, runtime._id_ AS runtime_id, runtime.cbid,
       kernel.start AS kernel_start, kernel.end AS kernel_end, kernel.name AS kernel_name
FROM CUPTI_ACTIVITY_KIND_MARKER AS start
     INNER JOIN CUPTI_ACTIVITY_KIND_MARKER AS end ON start.id = end.id
     INNER JOIN CUPTI_ACTIVITY_KIND_RUNTIME AS runtime
         ON (start.timestamp < runtime.start AND runtime.end < end.timestamp)
     INNER JOIN CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL AS kernel
         ON kernel.correlationId = runtime.correlationId
"""


def load_nvprof(path):
    """The ranges of an nvprof trace (the SQLite file ``nvprof -o`` writes while
    ``emit_nvtx`` marks ops) as an EventList, with the kernels each launched.

    Read as PyTorch reads it: a range's start and end marker timestamps are taken as
    its microseconds, its kernels' durations are in ``event.kernels`` (not device
    time: the events carry none), names are kept as written (not demangled).
    """
    return EventList(parse_nvprof_trace(path))


def parse_nvprof_trace(path):
    """The FunctionEvents of an nvprof trace, by start time (see :func:`load_nvprof`)."""
    conn = sqlite3.connect(path)
    conn.row_factory = sqlite3.Row
    try:
        strings = {r["id"]: r["value"]
                   for r in conn.execute("SELECT _id_ AS id, value FROM StringTable")}
        functions, by_id, seen = [], {}, set()
        for row in conn.execute(_MARKERS):
            _see_once(seen, row["marker_id"])
            evt = FunctionEvent(row["marker_id"], strings[row["name"]], 0, "", None, -1,
                                None, None)
            evt.start_ns, evt.end_ns = row["start_time"] * 1000, row["end_time"] * 1000
            functions.append(evt)
            by_id[evt.id] = evt
        seen = set()
        for row in conn.execute(_KERNELS):
            _see_once(seen, row["marker_id"], row["runtime_id"])
            if row["cbid"] != 211:  # cudaLaunchKernel (CUDA >= 9.2)
                raise AssertionError(f"Expected cbid to be 211, but got {row['cbid']}")
            by_id[row["marker_id"]].append_kernel(row["kernel_name"], 0,
                                                  row["kernel_end"] - row["kernel_start"])
    finally:
        conn.close()
    functions.sort(key=lambda evt: evt.start_ns)
    return functions


def _see_once(seen, *key):
    if key in seen:
        raise RuntimeError("duplicate key: " + str(key))
    seen.add(key)
