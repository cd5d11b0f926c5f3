"""Where observers attach: one hook for allocation, one for the engine.

Memory accounting (``retrograd.memory``), the autograd profiler and anomaly mode watch
the library through these two module attributes and nowhere else. A producer tests the
attribute and calls it, so watching costs one attribute load while nothing watches::

    if _observe.alloc is not None:
        _observe.alloc.made(arr)

``alloc`` is told about storages: an array a Tensor was made around (``made``), a role
it takes (``role``: parameter, gradient, optimizer state, communication bucket), a
tensor whose array was replaced (``retensored``), a saved tensor holding one (``saved``,
an activation) and optimizer state after a step (``optimizer_state``). Frees need no
event: an observer holds weak references. An object whose storages have a role their
tensors do not show (DDP's buckets) defines a ``_storage_roles()`` method in its class,
giving ``(array, role)`` pairs, for an observer that starts after it was made.

``engine`` is told about recording and backward: a node made (``node_created``, when
the observer sets ``nodes``), a forward op run (``run_op`` and ``run_call`` for list
ops, when it sets ``ops``), an ``nn.Module`` called (``run_module``, when it sets
``modules``) and an optimizer's step (``run_step``, likewise), a backward begun and
ended (``backward_begin`` and ``backward_end``), a node evaluated with its hooks
(``run_node``) and its ``apply`` alone (``apply_node``, when it sets ``applies``). The
``run_*`` and ``apply_node`` events wrap: the observer calls ``call`` with the arguments
it got and returns its result. The flags are read
when an observer attaches. Observers must not keep the gradients they are shown (the
engine lets AccumulateGrad steal gradients only it holds).

Several observers of one hook are nested by ``rank``, lowest outermost: memory
accounting sees what anomaly mode and the profiler do inside a node.

This module imports nothing of retrograd, so every layer can produce events.
"""

import functools
import sys

__all__ = ["AllocObserver", "EngineObserver", "attach", "detach", "user_frame",
           "in_library", "is_library_module", "user_stacklevel", "PARAMETER",
           "OPTIMIZER_STATE", "GRADIENT", "COMM_BUCKET"]

# Roles a storage takes, as bits (a parameter's array may also be another's state).
# COMM_BUCKET: a flat buffer gradients are gathered in to be communicated (DDP's buckets).
PARAMETER, OPTIMIZER_STATE, GRADIENT, COMM_BUCKET = 1, 2, 4, 8

alloc = None   # the allocation observer (AllocObserver), or None
engine = None  # the engine observer (EngineObserver), or None

_LIBRARY = __name__.partition(".")[0]  # "retrograd", by module name (never by file path)


class AllocObserver:
    """What an allocation observer is told; each method does nothing here."""

    __slots__ = ()  # (a subclass may keep its state in slots)
    rank = 0

    def made(self, arr, role=0):
        """``arr`` becomes a Tensor's array (its storage may be new), with ``role`` bits."""

    def role(self, arr, role):
        """The storage of ``arr`` takes ``role`` (one of the role bits)."""

    def retensored(self, t):
        """Tensor ``t``'s array, or its ``.grad``'s, was replaced (``.data =``, ``to``)."""

    def saved(self, saved_tensor):
        """A SavedTensor now holds its storage for the graph."""

    def optimizer_state(self, states):
        """The state dicts of parameters an optimizer has just updated."""


class EngineObserver:
    """What an engine observer is told; each method passes the work straight on here."""

    __slots__ = ()  # (a subclass may keep its state in slots)
    rank = 0
    nodes = False    # wants node_created
    ops = False      # wants run_op and run_call
    applies = False  # wants apply_node (else a node without hooks runs straight)
    modules = False  # wants run_module and run_step

    def node_created(self, node):
        """A new graph node (anomaly mode keeps its forward traceback)."""

    def backward_begin(self):
        """A backward pass begins (possibly nested in a hook of another)."""

    def backward_end(self):
        """The backward pass begun last ends, normally or by an exception."""

    def run_node(self, call, node, buf, create_graph):
        """Backward evaluates ``node`` on its input gradients ``buf`` with its hooks."""
        return call(node, buf, create_graph)

    def apply_node(self, call, node, buf, create_graph):
        """The node's own computation, inside ``run_node``."""
        return call(node, buf, create_graph)

    def run_op(self, call, op, values, attrs, self_):
        """A forward op of the registry (``self_``: the tensor an in-place op writes)."""
        return call(op, values, attrs, self_)

    def run_call(self, call, name, args, kwargs):
        """A forward op that does not go through the registry (cat, split, ...)."""
        return call(name, args, kwargs)

    def run_module(self, call, module, args, kwargs):
        """``module`` is called (``nn.Module.__call__``: its hooks and forward)."""
        return call(module, args, kwargs)

    def run_step(self, call, optimizer, args, kwargs):
        """``optimizer`` updates parameters (its ``step``, or one parameter's update fused
        into backward: then ``args`` is ``(param, group)``)."""
        return call(optimizer, args, kwargs)


class _Fanout(EngineObserver):
    """Several engine observers as one: each event goes to those that override it."""

    def __init__(self, observers):
        self.nodes = any(o.nodes for o in observers)
        self.ops = any(o.ops for o in observers)
        self.applies = any(o.applies for o in observers)
        self.modules = any(o.modules for o in observers)
        self._created = [o for o in observers if o.nodes]
        self._begin = _overriding(observers, "backward_begin")
        self._end = _overriding(observers, "backward_end")[::-1]
        # each wrapping event's bound methods, innermost first
        self._wraps = {name: [getattr(o, name) for o in _overriding(observers, name)][::-1]
                       for name in _WRAPPING}

    def node_created(self, node):
        for o in self._created:
            o.node_created(node)

    def backward_begin(self):
        for o in self._begin:
            o.backward_begin()

    def backward_end(self):
        for o in self._end:
            o.backward_end()


def _overriding(observers, name):
    base = getattr(EngineObserver, name)
    return [o for o in observers if getattr(type(o), name) is not base]


_WRAPPING = ("run_node", "apply_node", "run_op", "run_call", "run_module", "run_step")


def _nest(name):
    """A wrapping event of the fanout: the overriding observers nested, lowest rank
    outermost."""
    def event(self, call, *args):
        for method in self._wraps[name]:
            call = functools.partial(method, call)
        return call(*args)
    event.__name__ = name
    return event


for _name in _WRAPPING:
    setattr(_Fanout, _name, _nest(_name))

_attached = {"alloc": [], "engine": []}


def attach(hook, observer):
    """Attach ``observer`` to ``hook`` ("alloc" or "engine"); once only."""
    observers = _attached[hook]
    if observer in observers:
        raise RuntimeError(f"{observer!r} is already attached to the {hook} hook")
    observers.append(observer)
    observers.sort(key=lambda o: o.rank)
    _publish(hook)


def detach(hook, observer):
    """Detach ``observer`` from ``hook``; nothing if it is not attached."""
    observers = _attached[hook]
    if observer in observers:
        observers.remove(observer)
        _publish(hook)


def _publish(hook):
    global alloc, engine
    observers = _attached[hook]
    if hook == "alloc":
        if len(observers) > 1:
            raise RuntimeError("one allocation observer at a time")  # none needs two yet
        alloc = observers[0] if observers else None
    else:
        engine = (None if not observers else observers[0] if len(observers) == 1
                  else _Fanout(list(observers)))


# ---- frames, found by module name ------------------------------------------------------------

def in_library(frame):
    """Whether ``frame`` runs retrograd's own code (by its module's name: a checkout in
    a folder named like the package, or a user's folder named ``torch``, changes
    nothing)."""
    return is_library_module(frame.f_globals.get("__name__") or "")


def is_library_module(name):
    """Whether the module named ``name`` is retrograd's."""
    return name == _LIBRARY or name.startswith(_LIBRARY + ".")


def user_frame(frame):
    """The first frame from ``frame`` outwards that runs outside retrograd, or None."""
    while frame is not None and in_library(frame):
        frame = frame.f_back
    return frame


def user_stacklevel():
    """The ``stacklevel`` that makes a warning issued by the caller of this function
    point at the first frame outside retrograd."""
    f = sys._getframe(1)
    level = 1
    while f is not None and in_library(f):
        f = f.f_back
        level += 1
    return level if f is not None else 1
