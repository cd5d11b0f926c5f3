"""``torch.autograd.profiler_util``: the profiler's events (:class:`FunctionEvent`, their
averages, :class:`EventList`) and PyTorch's summary table and Chrome trace of them."""

import json
import os
from collections import defaultdict, namedtuple

__all__ = ["EventList", "FunctionEvent", "FunctionEventAvg", "Interval", "Kernel"]

Kernel = namedtuple("Kernel", ["name", "device", "duration"])
"""A device kernel an event launched (``load_nvprof`` reads them)."""


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
                 "end_ns", "self_cpu_memory_usage", "cpu_memory_usage", "flow", "_kernels",
                 "_trace_name")
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
        self._kernels = None
        if parent is not None:
            if parent._children is None:
                parent._children = [self]
            else:
                parent._children.append(self)

    @property
    def key(self):
        return self.name

    @property
    def trace_name(self):
        """The name in a Chrome trace: ``name``, except a profiler step's (``name``
        ``ProfilerStep*`` groups the steps in tables, the trace keeps ``ProfilerStep#<n>``)."""
        return getattr(self, "_trace_name", self.name)

    @property
    def input_shapes(self):
        """The inputs' shapes (``[]`` for a non-tensor), with ``record_shapes``."""
        return [] if self._shapes is None else self._shapes

    @property
    def cpu_children(self):
        return [] if self._children is None else self._children

    @property
    def kernels(self):
        """The device kernels this range launched (from an nvprof trace)."""
        return [] if self._kernels is None else self._kernels

    def append_kernel(self, name, device, duration):
        if self._kernels is None:
            self._kernels = []
        self._kernels.append(Kernel(name, device, duration))

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

    def supported_export_stacks_metrics(self):
        return ["self_cpu_time_total", "self_cuda_time_total", "self_xpu_time_total",
                "self_privateuse1_time_total"]

    def export_stacks(self, path, metric):
        """Write each recorded stack (``with_stack``), outermost frame first, with the
        event's ``metric`` in whole microseconds: the folded format flame graph tools
        read (one ``frame;frame;... value`` line per event whose value is positive)."""
        if metric not in self.supported_export_stacks_metrics():
            raise ValueError("metric should be one of: "
                             + str(self.supported_export_stacks_metrics()))
        attr = metric.replace("cuda", "device").replace("xpu", "device") \
            .replace("privateuse1", "device")
        clean = str.maketrans(" ;\t\n", "____")
        with open(path, "w") as f:
            for e in self:
                value = int(getattr(e, attr))
                if e.stack and value > 0:
                    f.write(";".join(s.translate(clean) for s in reversed(e.stack))
                            + f" {value}\n")


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
                      "name": e.trace_name, "pid": pid, "tid": e.thread, "ts": ts,
                      "dur": (e.end_ns - e.start_ns) / 1e3, "args": args})
        flow = e.flow  # forward op -> the backward node it created
        if flow is not None:
            trace.append({"ph": flow, "id": e.sequence_nr, "pid": pid, "tid": e.thread,
                          "ts": ts, "cat": "fwdbwd", "name": "fwdbwd",
                          **({"bp": "e"} if flow == "f" else {})})
    with open(path, "w") as f:
        json.dump({"schemaVersion": 1, "displayTimeUnit": "ms", "traceEvents": trace,
                   "traceName": os.fspath(path)}, f)
