"""Anomaly detection: forward tracebacks for failing backward nodes, and NaN checks.

While anomaly mode is on it is an engine observer (``retrograd._observe``): every
node made records where the forward call that made it came from
(:func:`record_forward_trace`), and each node the engine runs is evaluated through
it, which warns with that traceback when the node raises (PyTorch's "Error detected
in ..." warning) and, with ``check_nan``, raises when the node returns NaN. Off, it
costs nothing beyond the engine hook's one check. The mode is process-wide, as in
PyTorch; which node induced a node made during a ``create_graph`` backward is tracked
for one backward at a time.
"""

import sys
import traceback
import warnings

from .. import _observe
from .._dtype import is_inexact

__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled",
           "is_anomaly_check_nan_enabled", "record_forward_trace"]


class _Anomaly(_observe.EngineObserver):
    """Anomaly mode's state, and its engine observer while it is on.

    parent: the node being evaluated (nodes made while it runs, under
    ``create_graph``, were induced by it).
    """

    rank = 1  # inside memory accounting, outside the profiler
    nodes = True

    def __init__(self):
        self.enabled = False
        self.check_nan = True
        self.parent = None

    def set(self, mode, check_nan):
        mode = bool(mode)
        if mode != self.enabled:
            (_observe.attach if mode else _observe.detach)("engine", self)
        self.enabled = mode
        self.check_nan = bool(check_nan)

    def node_created(self, node):
        record_forward_trace(node)

    def run_node(self, call, node, buf, create_graph):
        prev = self.parent
        self.parent = node
        try:
            outs = call(node, buf, create_graph)
            if self.check_nan:
                _check_nan(node, outs)
        except Exception as e:
            trace = _warn_error(node)
            note = f"Traceback of forward call that caused the error:\n{trace}"
            if trace is not None and note not in getattr(e, "__notes__", ()):
                e.add_note(note)
            raise
        finally:
            self.parent = prev
        return outs


debug = _Anomaly()


def is_anomaly_enabled():
    """Whether anomaly detection is on."""
    return debug.enabled


def is_anomaly_check_nan_enabled():
    """Whether anomaly detection checks backward results for NaN."""
    return debug.check_nan


def _set(mode, check_nan):
    debug.set(mode, check_nan)


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
    f = sys._getframe(1)
    frames = traceback.StackSummary.extract(
        traceback.walk_stack(_observe.user_frame(f) or f), lookup_lines=False)
    frames.reverse()
    node._anomaly = (frames, debug.parent)


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
                      "information.", stacklevel=_observe.user_stacklevel())
        return None
    trace = _format(info[0])
    warnings.warn(f"Error detected in {node.name()}. Traceback of forward call that caused "
                  f"the error:\n{trace}", stacklevel=_observe.user_stacklevel())
    parent = info[1]
    while parent is not None and parent._anomaly is not None:
        frames, grandparent = parent._anomaly
        warnings.warn(f"\n\nPrevious calculation was induced by {parent.name()}. Traceback "
                      f"of forward call that induced the previous calculation:\n"
                      f"{_format(frames)}", stacklevel=_observe.user_stacklevel())
        parent = grandparent
    return trace


def _check_nan(node, outs):
    for i, g in enumerate(outs):
        if g is None:
            continue
        a = getattr(g, "_data", g)
        if not is_inexact(a.dtype):
            continue
        s = a.sum()  # NaN iff some element is NaN, or infinities cancel: then look closer
        if s != s and bool((a != a).any()):
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th "
                               "output.")
