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
Ops over lists of tensors (``cat``, ``stack``, ``split``, ``unbind``, ...) are not
recorded in forward; their backward nodes are. ``emit_nvtx`` and ``emit_itt`` are
no-ops on the CPU.
"""

import functools
import itertools
import json
import os
import sys
import threading
import weakref
from collections import defaultdict
from contextlib import ContextDecorator
from time import perf_counter_ns

import numpy

from .._tensor import Tensor
from .anomaly_mode import _PACKAGE, debug
from .node import AccumulateGrad

__all__ = ["profile", "record_function", "emit_nvtx", "emit_itt", "EventList",
           "FunctionEvent", "FunctionEventAvg"]

_EVALUATE = "autograd::engine::evaluate_function: "


# ---- events ------------------------------------------------------------------------------

def _format_time(time_us):
    if time_us >= 1e6:
        return f"{time_us / 1e6:.3f}s"
    if time_us >= 1e3:
        return f"{time_us / 1e3:.3f}ms"
    return f"{time_us:.3f}us"


def _format_time_share(time_us, total_time_us):
    if total_time_us == 0:
        return "NaN"
    return f"{time_us * 100.0 / total_time_us:.2f}%"


def _format_memory(nbytes):
    kb, mb, gb = 1024, 1024 ** 2, 1024 ** 3
    if abs(nbytes) >= gb:
        return f"{nbytes * 1.0 / gb:.2f} GB"
    if abs(nbytes) >= mb:
        return f"{nbytes * 1.0 / mb:.2f} MB"
    if abs(nbytes) >= kb:
        return f"{nbytes * 1.0 / kb:.2f} KB"
    return str(nbytes) + " B"


class _Times:
    """The derived and formatted times PyTorch's events expose (microseconds)."""

    __slots__ = ()
    device_time_total = self_device_time_total = 0.0
    device_memory_usage = self_device_memory_usage = 0
    node_id = -1
    is_async = False
    overload_name = ""

    @property
    def cpu_time(self):
        return 0.0 if self.count == 0 else self.cpu_time_total / self.count

    @property
    def self_cpu_time_total_str(self):
        return _format_time(self.self_cpu_time_total)

    @property
    def cpu_time_total_str(self):
        return _format_time(self.cpu_time_total)

    @property
    def cpu_time_str(self):
        return _format_time(self.cpu_time)


class Interval:
    """An event's start and end, in microseconds."""

    __slots__ = ("start", "end")

    def __init__(self, start, end):
        self.start, self.end = start, end

    def elapsed_us(self):
        return self.end - self.start


class FunctionEvent(_Times):
    """One recorded op, backward node or user range. (Slots, children and shapes made
    only when there are some: fewer objects for the garbage collector to scan while the
    profiler records, which would otherwise show up in the ops' times.)"""

    __slots__ = ("id", "name", "thread", "thread_name", "_shapes", "sequence_nr",
                 "cpu_parent", "_children", "stack", "is_user_annotation", "start_ns",
                 "end_ns", "self_cpu_memory_usage", "cpu_memory_usage", "flow")
    count = 1

    def __init__(self, id, name, thread, thread_name, input_shapes, sequence_nr, parent,
                 stack, is_user_annotation=False):
        self.id = id
        self.name = name
        self.thread = thread
        self.thread_name = thread_name
        self._shapes = input_shapes
        self.sequence_nr = sequence_nr
        self.cpu_parent = parent
        self._children = None
        self.stack = stack
        self.is_user_annotation = is_user_annotation
        self.start_ns = self.end_ns = 0
        self.self_cpu_memory_usage = 0  # bytes attributed to this event itself
        self.cpu_memory_usage = 0       # ... and to its children (set at the end)
        self.flow = None  # "s": a forward op that made a node; "f": that node's event
        if parent is not None:
            if parent._children is None:
                parent._children = [self]
            else:
                parent._children.append(self)

    @property
    def key(self):
        return self.name

    @property
    def input_shapes(self):
        """The inputs' shapes (``[]`` for a non-tensor), with ``record_shapes``."""
        return [] if self._shapes is None else self._shapes

    @property
    def cpu_children(self):
        return [] if self._children is None else self._children

    @property
    def time_range(self):
        return Interval(self.start_ns / 1e3, self.end_ns / 1e3)

    @property
    def cpu_time_total(self):
        return (self.end_ns - self.start_ns) / 1e3

    @property
    def self_cpu_time_total(self):
        if self._children is None:
            return self.cpu_time_total
        return self.cpu_time_total - sum(c.cpu_time_total for c in self._children)

    def __repr__(self):
        return (f"<FunctionEvent id={self.id} name={self.name} thread={self.thread} "
                f"cpu_time={self.cpu_time_total_str} start_us={self.start_ns / 1e3:.3f} "
                f"end_us={self.end_ns / 1e3:.3f} cpu_children={[c.id for c in self.cpu_children]} "
                f"input_shapes={self.input_shapes} sequence_nr={self.sequence_nr} "
                f"cpu_memory_usage={self.cpu_memory_usage}>")


class FunctionEventAvg(_Times):
    """The events of one key (name, and input shapes when grouped by them), summed."""

    def __init__(self):
        self.key = None
        self.count = 0
        self.cpu_time_total = self.self_cpu_time_total = 0.0
        self.cpu_memory_usage = self.self_cpu_memory_usage = 0
        self.input_shapes = self.stack = self.cpu_parent = None
        self.cpu_children = None
        self.is_user_annotation = False

    def add(self, other):
        if self.key is None:
            self.key = other.key
            self.input_shapes = other.input_shapes
            self.stack = other.stack
            self.cpu_parent = other.cpu_parent
            self.cpu_children = other.cpu_children
            self.is_user_annotation = other.is_user_annotation
        self.cpu_time_total += other.cpu_time_total
        self.self_cpu_time_total += other.self_cpu_time_total
        self.cpu_memory_usage += other.cpu_memory_usage
        self.self_cpu_memory_usage += other.self_cpu_memory_usage
        self.count += other.count
        return self

    __iadd__ = add

    def __repr__(self):
        return (f"<FunctionEventAvg key={self.key} self_cpu_time={self.self_cpu_time_total_str} "
                f"cpu_time={self.cpu_time_str}  self_cuda_time=0.000us cuda_time=0.000us "
                f"input_shapes={self.input_shapes} cpu_memory_usage={self.cpu_memory_usage} "
                f"cuda_memory_usage=0>")


class EventList(list):
    """A list of events with PyTorch's summaries."""

    def __init__(self, *args, profile_memory=False, **kwargs):
        super().__init__(*args, **kwargs)
        self._profile_memory = profile_memory

    @property
    def self_cpu_time_total(self):
        """The sum of all events' self CPU times (microseconds)."""
        return sum(e.self_cpu_time_total for e in self)

    def key_averages(self, group_by_input_shapes=False, group_by_stack_n=0,
                     group_by_overload_name=False):
        """Events averaged over their names (and input shapes / top stack frames)."""
        stats = defaultdict(FunctionEventAvg)
        for e in self:
            key = (e.key, e.is_user_annotation)
            if group_by_input_shapes:
                key += (str(e.input_shapes),)
            if group_by_stack_n > 0:
                key += tuple((e.stack or ())[:group_by_stack_n])
            stats[key].add(e)
        res = EventList(stats.values(), profile_memory=self._profile_memory)
        for e in res:
            e.stack = (e.stack or [])[:group_by_stack_n]
            if not group_by_input_shapes:
                e.input_shapes = ""
        return res

    def total_average(self):
        """All events summed into one, keyed ``Total``."""
        total = FunctionEventAvg()
        for e in self:
            total.add(e)
            total.key = None
        total.key = "Total"
        return total

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75,
              max_name_column_width=55, max_shapes_column_width=80, header=None,
              top_level_events_only=False, time_unit=None):
        """PyTorch's summary table (CPU columns) as a string."""
        return _build_table(self, sort_by, header, row_limit, max_src_column_width,
                            max_name_column_width, max_shapes_column_width,
                            self._profile_memory, top_level_events_only, time_unit)

    def export_chrome_trace(self, path):
        """Write the events as a Chrome trace (JSON; opens in Perfetto, chrome://tracing)."""
        _export_chrome_trace(self, path)


def _override_time_unit(time_us, default, unit):
    if unit == "s":
        return f"{time_us / 1e6:.3f}s"
    if unit == "ms":
        return f"{time_us / 1e3:.3f}ms"
    if unit == "us":
        return f"{time_us:.3f}us"
    return default


def _build_table(events, sort_by, header, row_limit, max_src_column_width,
                 max_name_column_width, max_shapes_column_width, profile_memory,
                 top_level_events_only, time_unit):
    """PyTorch's ``_build_table`` for CPU events: the same columns, widths and footer."""
    if len(events) == 0:
        return ""
    has_input_shapes = any(e.input_shapes is not None and len(e.input_shapes) > 0
                           for e in events)
    if sort_by is not None:
        attr = sort_by.replace("cuda", "device").replace("xpu", "device") \
            .replace("privateuse1", "device")
        events = sorted(events, key=lambda e: getattr(e, attr), reverse=True)
    name_width = max(len(e.key) for e in events) + 4
    if max_name_column_width is not None:
        name_width = min(name_width, max_name_column_width)
    shapes_width = max(len(str(e.input_shapes)) for e in events) + 4
    if max_shapes_column_width is not None:
        shapes_width = min(shapes_width, max_shapes_column_width)
    stacks = [e.stack for e in events if e.stack]
    src_width = None
    if stacks:
        src_width = max(max(len(s) for s in st) for st in stacks) + 4
        if max_src_column_width is not None:
            src_width = min(src_width, max_src_column_width)

    headers = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"]
    if profile_memory:
        headers += ["CPU Mem", "Self CPU Mem"]
    headers.append("# of Calls")
    row_format, header_sep, line_length = "", "", -2

    def add_column(padding, text_dir=">"):
        nonlocal row_format, header_sep, line_length
        row_format += "{: " + text_dir + str(padding) + "}  "
        header_sep += "-" * padding + "  "
        line_length += padding + 2

    add_column(name_width)
    for _ in headers[1:]:
        add_column(12)
    if has_input_shapes:
        headers.append("Input Shapes")
        add_column(shapes_width)
    if stacks:
        headers.append("Source Location")
        add_column(src_width, text_dir="<")

    result = []

    def append(s):
        result.append(s)
        result.append("\n")

    total = sum(e.self_cpu_time_total for e in events)
    if header is not None:
        append("=" * line_length)
        append(header)
    if top_level_events_only:
        append("=" * line_length)
        append("This report only display top-level ops statistics")
    append(header_sep)
    append(row_format.format(*headers))
    append(header_sep)

    def trim_path(path):
        if len(path) > src_width:
            path = path[len(path) - src_width:]
            if len(path) > 3:
                path = "..." + path[3:]
        return path

    shown = 0
    for e in events:
        if shown == row_limit:
            break
        if top_level_events_only and e.cpu_parent is not None:
            continue
        shown += 1
        name = e.key
        if max_name_column_width is not None and len(name) >= max_name_column_width - 3:
            name = name[:max_name_column_width - 3] + "..."
        row = [name, _format_time_share(e.self_cpu_time_total, total),
               _override_time_unit(e.self_cpu_time_total, e.self_cpu_time_total_str, time_unit),
               _format_time_share(e.cpu_time_total, total),
               _override_time_unit(e.cpu_time_total, e.cpu_time_total_str, time_unit),
               _override_time_unit(e.cpu_time, e.cpu_time_str, time_unit)]
        if profile_memory:
            row += [_format_memory(e.cpu_memory_usage), _format_memory(e.self_cpu_memory_usage)]
        row.append(e.count)
        if has_input_shapes:
            row.append(str(e.input_shapes)[:shapes_width])
        if stacks:
            row.append(trim_path(e.stack[0]) if e.stack else "")
        append(row_format.format(*row))
        if stacks:
            empty = [""] * (len(headers) - 1)
            for entry in (e.stack or [])[1:]:
                append(row_format.format(*(empty + [trim_path(entry)])))
            append(row_format.format(*(empty + [""])))
    append(header_sep)
    append(f"Self CPU time total: {_override_time_unit(total, _format_time(total), time_unit)}")
    return "".join(result)


def _export_chrome_trace(events, path):
    pid = os.getpid()
    trace = [{"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "ts": 0,
              "args": {"name": "python"}}]
    threads = {}
    for e in events:
        threads.setdefault(e.thread, e.thread_name)
    for tid, tname in threads.items():
        trace.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "ts": 0,
                      "args": {"name": f"thread {tid} ({tname})"}})
    for e in events:
        ts = e.start_ns / 1e3
        if e.name == "[memory]":
            trace.append({"ph": "i", "s": "t", "cat": "cpu_instant_event", "name": "[memory]",
                          "pid": pid, "tid": e.thread, "ts": ts,
                          "args": {"Bytes": e.self_cpu_memory_usage}})
            continue
        args = {"External id": e.id}
        if e.sequence_nr >= 0:
            args["Sequence number"] = e.sequence_nr
        if e.input_shapes:
            args["Input Dims"] = e.input_shapes
        trace.append({"ph": "X", "cat": "user_annotation" if e.is_user_annotation else "cpu_op",
                      "name": e.name, "pid": pid, "tid": e.thread, "ts": ts,
                      "dur": (e.end_ns - e.start_ns) / 1e3, "args": args})
        flow = e.flow  # forward op -> the backward node it created
        if flow is not None:
            trace.append({"ph": flow, "id": e.sequence_nr, "pid": pid, "tid": e.thread,
                          "ts": ts, "cat": "fwdbwd", "name": "fwdbwd",
                          **({"bp": "e"} if flow == "f" else {})})
    with open(path, "w") as f:
        json.dump({"schemaVersion": 1, "displayTimeUnit": "ms", "traceEvents": trace,
                   "traceName": os.fspath(path)}, f)


# ---- recording ---------------------------------------------------------------------------

def _user_stack():
    """The caller's Python stack outside retrograd, innermost first, as PyTorch prints it."""
    out = []
    f = sys._getframe(2)
    while f is not None:
        fn = f.f_code.co_filename
        if not fn.startswith(_PACKAGE):
            out.append(f"{fn}({f.f_lineno}): {f.f_code.co_name}")
        f = f.f_back
    return out


def _shapes(values):
    return [list(v._data.shape) if isinstance(v, Tensor) else [] for v in values]


class profile:
    """Context manager that records the ops run inside it (see the module docstring).

    >>> with profile(record_shapes=True) as prof:
    ...     loss = model(x)
    ...     loss.backward()
    >>> print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=10))
    """

    def __init__(self, enabled=True, *, use_cuda=False, use_device=None, record_shapes=False,
                 with_flops=False, profile_memory=False, with_stack=False, with_modules=False,
                 use_kineto=False, use_cpu=True, experimental_config=None, acc_events=False,
                 custom_trace_id_callback=None):
        if use_cuda or use_device not in (None, "cpu"):
            raise NotImplementedError("retrograd's profiler records CPU time only")
        self.enabled = enabled
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
        if debug.profiler is not None:
            raise RuntimeError("Profiler is already enabled on this thread")
        self.entered = True
        debug.profiler = self
        debug.refresh()
        return self

    def __exit__(self, *exc):
        if not self.enabled:
            return False
        debug.profiler = None
        debug.refresh()
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

    def __str__(self):
        return self.table() if self.function_events is not None else repr(self)

    # -- recording (called by the op registry, the engine and record_function)

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

    def run_op(self, apply, op, values, attrs, name_suffix="", self_=None):
        """Record a forward op: ``apply(op, values, attrs, True)`` (or, for the in-place
        form, ``apply(op, self_, values, attrs, True)``) in an ``aten::<op>`` event."""
        e = self._open("aten::" + op.name + name_suffix,
                       _shapes((*values, *attrs) if self_ is None else (self_, *values, *attrs))
                       if self.record_shapes else None, -1,
                       _user_stack() if self.with_stack else None)
        try:
            out = (apply(op, values, attrs, True) if self_ is None
                   else apply(op, self_, values, attrs, True))
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

    def run_call(self, name, fn, args, kwargs):
        """A forward op that does not go through ``apply`` (the list ops: cat, stack,
        split, unbind, ...) in an ``aten::<name>`` event."""
        shapes = None
        if self.record_shapes:
            shapes = [_shapes(a) if isinstance(a, (list, tuple)) else _shapes((a,))[0]
                      for a in args]
        e = self._open("aten::" + name, shapes, -1,
                       _user_stack() if self.with_stack else None)
        try:
            out = fn(*args, **kwargs)
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

    def evaluate(self, node, buf, create_graph, call):
        """The engine's ``call(node, buf, create_graph)`` in an evaluate_function event."""
        e = self._open(_EVALUATE + node.name(), None, _node_seq(node))
        try:
            return call(node, buf, create_graph)
        finally:
            self._close(e)

    def apply_node(self, node, buf, create_graph):
        """``node.apply`` in an event named by the node."""
        seq = _node_seq(node)
        e = self._open(node.name(), [[] if g is None else list(g.shape) for g in buf]
                       if self.record_shapes else None, seq)
        try:
            outs = node.apply(buf, create_graph)
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
        p = debug.profiler
        if p is not None:
            self._prof = p
            self._event = p._open(self.name, None, -1,
                                  _user_stack() if p.with_stack else None, True)
        return self

    def __exit__(self, *exc):
        if self._event is not None:
            self._prof._close(self._event)
            self._prof = self._event = None
        return False


class emit_nvtx:
    """NVTX ranges for every autograd op (nvprof / Nsight). On the CPU there is no NVTX
    to emit to: this is a documented no-op that keeps code written for CUDA running."""

    _kind = "NVTX"

    def __init__(self, enabled=True, record_shapes=False):
        self.enabled = enabled
        self.entered = False
        self.record_shapes = record_shapes

    def __enter__(self):
        if not self.enabled:
            return None
        if self.entered:
            raise RuntimeError(f"{self._kind} annotation context manager is not reentrant")
        self.entered = True
        return self

    def __exit__(self, *exc):
        if self.enabled:
            self.entered = False
        return False


class emit_itt(emit_nvtx):
    """ITT ranges for every autograd op (Intel VTune). A documented no-op here: retrograd
    does not link the ITT API."""

    _kind = "ITT"

