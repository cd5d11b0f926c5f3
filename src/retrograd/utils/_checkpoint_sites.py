"""Where a checkpointed tensor was saved: the op that saved it and the module running.

A checkpoint's determinism errors name, for each tensor in question, the op (its node:
ops make their node, then save) and the ``nn.Module`` path (``Block.ff.0 (Linear)``)
around it. The op is the node made last on this thread, which the engine hook shows
(``_observe``: ``node_created``) while some checkpointed forward or recomputation runs;
the modules are the frames of ``Module.__call__`` on the stack, after those around the
region (its recomputation runs in backward, outside them), named by their paths as memory
accounting names them (``nn.modules._paths``). ``debug=True`` logs
every op with its caller's line (``OpLog``).
"""

import contextlib
import sys
import threading

from .. import _observe
from ..nn.modules._paths import PATHS
from ..nn.modules.module import Module

_MODULE_CALL = Module.__call__.__code__


class _NodeWatch(_observe.EngineObserver):
    """The class of the node made last on each thread, watched while anyone needs it."""

    nodes = True

    def __init__(self):
        self._users = 0
        self._lock = threading.Lock()
        self._last = threading.local()

    def node_created(self, node):
        self._last.cls = type(node)

    def last(self):
        return getattr(self._last, "cls", None)

    @contextlib.contextmanager
    def watching(self):
        with self._lock:
            self._users += 1
            if self._users == 1:
                _observe.attach("engine", self)
        try:
            yield
        finally:
            with self._lock:
                self._users -= 1
                if not self._users:
                    _observe.detach("engine", self)


NODES = _NodeWatch()


class Site:
    """The op and the modules (outermost first) around one save, named on demand."""

    __slots__ = ("node_cls", "modules")

    def __init__(self, node_cls, modules):
        self.node_cls = node_cls
        self.modules = modules

    def op(self):
        cls = self.node_cls
        if cls is None:
            return "an op outside the registry"
        op = getattr(cls, "_op", None)
        if op is not None:
            return f"op {op.name} ({cls.__name__})"
        fn = getattr(cls, "_forward_cls", None)
        return f"autograd.Function {fn.__name__}" if fn is not None else cls.__name__

    def module(self):
        mods = self.modules
        if not mods:
            return "outside any nn.Module"
        return f"module {PATHS.chain(mods)} ({type(mods[-1]).__name__})"

    def __str__(self):
        return f"{self.op()} in {self.module()}"


class _Region(threading.local):
    modules = ()  # the modules around the region running (forward or recomputation)
    stop = None   # the frame that runs it: the stack above is theirs


_region = _Region()


def modules_now():
    """The modules running now, outermost first: those around the region running, then
    those on the stack inside it (a recomputation runs in backward, outside them all)."""
    mods = []
    f = sys._getframe(1)
    stop = _region.stop
    while f is not None and f is not stop:
        if f.f_code is _MODULE_CALL:
            mods.append(f.f_locals["self"])
        f = f.f_back
    mods.reverse()
    return _region.modules + tuple(mods)


def here():
    """The Site of a save happening now (called from a pack hook)."""
    return Site(NODES.last(), modules_now())


@contextlib.contextmanager
def region(modules):
    """Run a checkpointed region, or its recomputation, inside ``modules`` (what
    ``modules_now`` said as the region was entered); saves are named from here."""
    prev = _region.modules, _region.stop
    _region.modules, _region.stop = modules, sys._getframe(2)  # the ``with``'s frame
    try:
        with NODES.watching():
            yield
    finally:
        _region.modules, _region.stop = prev


class OpLog(_observe.EngineObserver):
    """``debug=True``: every forward op run inside the context, with its caller's line
    (file:line:function), for the error that shows the two runs side by side."""

    ops = True

    def __init__(self):
        self.entries = []
        self._thread = None

    def __enter__(self):
        self.entries = []
        self._thread = threading.get_ident()
        _observe.attach("engine", self)
        return self

    def __exit__(self, *exc):
        _observe.detach("engine", self)

    def _log(self, name):
        if threading.get_ident() == self._thread:
            f = _observe.user_frame(sys._getframe(2))
            where = f"{f.f_code.co_filename}:{f.f_lineno}:{f.f_code.co_name}" if f else "?"
            self.entries.append((name, where))

    def run_op(self, call, op, values, attrs, self_):
        self._log(op.name + ("_" if self_ is not None else ""))
        return call(op, values, attrs, self_)

    def run_call(self, call, name, args, kwargs):
        self._log(name)
        return call(name, args, kwargs)

    def format(self, label):
        n = len(self.entries)
        return "".join(f"{name}   ({i + 1} of {n} in {label})\n{where}\n\n"
                       for i, (name, where) in enumerate(self.entries))
