"""Anomaly detection: forward tracebacks for failing backward nodes, and NaN checks.

While anomaly mode is on, every node records where the forward call that made it
came from (``Node.__new__`` calls :func:`record_forward_trace`); the engine then
evaluates each node through :func:`evaluate`, which warns with that traceback when
the node raises (PyTorch's "Error detected in ..." warning) and, with
``check_nan``, raises when the node returns NaN. Off, it costs one flag check per
node created and per node run (``debug.on``). The mode is process-wide, as in PyTorch;
which node induced a node made during a ``create_graph`` backward is tracked for one
backward at a time.
"""

import os
import sys
import traceback
import warnings

__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled",
           "is_anomaly_check_nan_enabled", "record_forward_trace"]


class _Debug:
    """The flags the hot paths read, once per op or node.

    anomaly/check_nan: anomaly mode (process-wide, as in PyTorch).
    profiler: the recording profiler session, or None.
    memory: retrograd.memory's Tracker once memory accounting has started, or None.
    on: any of those: the engine evaluates nodes through the debug path.
    node_hook: what every new node is shown (anomaly's traceback, memory history's
    stack), or None.
    parent: the node the engine is evaluating under anomaly mode (nodes made while it
    runs, under ``create_graph``, were induced by it).
    """

    __slots__ = ("on", "anomaly", "check_nan", "profiler", "memory", "node_hook", "parent")

    def __init__(self):
        self.on = self.anomaly = False
        self.check_nan = True
        self.profiler = self.memory = self.node_hook = self.parent = None

    def refresh(self):
        self.on = self.anomaly or self.profiler is not None or self.memory is not None
        stacks = self.memory is not None and self.memory.stacks
        if self.anomaly and stacks:
            self.node_hook = _both_node_hooks
        elif self.anomaly:
            self.node_hook = record_forward_trace
        else:
            self.node_hook = self.memory.node_created if stacks else None


def _both_node_hooks(node):
    record_forward_trace(node)
    debug.memory.node_created(node)


debug = _Debug()

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def is_anomaly_enabled():
    """Whether anomaly detection is on."""
    return debug.anomaly


def is_anomaly_check_nan_enabled():
    """Whether anomaly detection checks backward results for NaN."""
    return debug.check_nan


def _set(mode, check_nan):
    debug.anomaly = bool(mode)
    debug.check_nan = bool(check_nan)
    debug.refresh()


class detect_anomaly:
    """Context manager that turns anomaly detection on (see the module docstring).

    >>> with detect_anomaly():
    ...     loss = model(x)      # nodes remember this traceback
    ...     loss.backward()      # a failing node warns with it; NaN raises
    """

    def __init__(self, check_nan=True):
        self.prev = is_anomaly_enabled()
        self.check_nan = check_nan
        self.prev_check_nan = is_anomaly_check_nan_enabled()
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the "
                      "runtime and should only be enabled for debugging.", stacklevel=2)

    def __enter__(self):
        _set(True, self.check_nan)

    def __exit__(self, *args):
        _set(self.prev, self.prev_check_nan)


class set_detect_anomaly:
    """Turn anomaly detection on or off; takes effect at once, and as a context manager
    restores the previous setting on exit."""

    def __init__(self, mode, check_nan=True):
        self.prev = is_anomaly_enabled()
        self.prev_check_nan = is_anomaly_check_nan_enabled()
        _set(mode, check_nan)

    def __enter__(self):
        pass

    def __exit__(self, *args):
        _set(self.prev, self.prev_check_nan)


def record_forward_trace(node):
    """Store on ``node`` the user's stack (retrograd's own innermost frames dropped) and
    the node being evaluated, if any: called for every node made under anomaly mode."""
    frames = traceback.StackSummary.extract(traceback.walk_stack(sys._getframe(1)),
                                            lookup_lines=False)
    frames.reverse()
    n = len(frames)
    while n and frames[n - 1].filename.startswith(_PACKAGE):
        n -= 1
    node._anomaly = (frames[:n] if n else frames, debug.parent)


def _format(frames):
    out = []
    for f in frames:
        out.append(f'  File "{f.filename}", line {f.lineno}, in {f.name}\n')
        line = f.line
        if line:
            out.append(f"    {line.strip()}\n")
    return "".join(out)


def forward_trace(node):
    """The traceback of the forward call that made ``node`` (None if it was made with
    anomaly mode off)."""
    info = node._anomaly
    return None if info is None else _format(info[0])


def _warn_error(node):
    """PyTorch's warnings for a failing node: its forward traceback, then those of the
    nodes whose backward made it (double backward)."""
    info = node._anomaly
    if info is None:
        warnings.warn(f"Error detected in {node.name()}. No forward pass information "
                      "available. Enable detect anomaly during forward pass for more "
                      "information.", stacklevel=4)
        return None
    trace = _format(info[0])
    warnings.warn(f"Error detected in {node.name()}. Traceback of forward call that caused "
                  f"the error:\n{trace}", stacklevel=4)
    parent = info[1]
    while parent is not None and parent._anomaly is not None:
        frames, grandparent = parent._anomaly
        warnings.warn(f"\n\nPrevious calculation was induced by {parent.name()}. Traceback "
                      f"of forward call that induced the previous calculation:\n"
                      f"{_format(frames)}", stacklevel=4)
        parent = grandparent
    return trace


def _check_nan(node, outs):
    for i, g in enumerate(outs):
        if g is None:
            continue
        a = getattr(g, "_data", g)
        if a.dtype.kind not in "fc":
            continue
        s = a.sum()  # NaN iff some element is NaN, or infinities cancel: then look closer
        if s != s and bool((a != a).any()):
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th "
                               "output.")


def evaluate(node, buf, create_graph, call):
    """Run ``node`` through the engine's ``call`` under anomaly mode, the profiler and/or
    memory accounting."""
    if debug.memory is not None:
        slow = debug.anomaly or debug.profiler is not None
        return debug.memory.run_node(node, buf, create_graph, call, _evaluate if slow else None)
    return _evaluate(node, buf, create_graph, call)


def _evaluate(node, buf, create_graph, call):
    prof = debug.profiler
    if not debug.anomaly:
        return call(node, buf, create_graph) if prof is None else \
            prof.evaluate(node, buf, create_graph, call)
    prev = debug.parent
    debug.parent = node
    try:
        outs = (call(node, buf, create_graph) if prof is None
                else prof.evaluate(node, buf, create_graph, call))
        if debug.check_nan:
            _check_nan(node, outs)
    except Exception as e:
        trace = _warn_error(node)
        note = f"Traceback of forward call that caused the error:\n{trace}"
        if trace is not None and note not in getattr(e, "__notes__", ()):
            e.add_note(note)
        raise
    finally:
        debug.parent = prev
    return outs
