"""Memory accounting: every array storage from allocation to free, with its category.

A storage is a NumPy array that owns its memory (views count toward their base). The
tracker is an observer (``retrograd._observe``): the allocation hook shows it every
array a Tensor is made around and the roles storages take; the engine hook shows it
backward's gradient arrays, around each node the engine runs. A weak reference to the
storage tells when it is freed, so the bytes leave the books at the moment the memory
does.

A storage's category follows its roles, highest first: a parameter's data, an
optimizer's state, a parameter's ``.grad``, a communication bucket (DDP's flat buffers
of gradients being reduced), held by the autograd graph (a saved activation), else
other (inputs, outputs, backward's intermediate gradients). Roles change while the
storage lives (a temporary becomes an activation when a node saves
it and goes back to other when the graph is freed); each change is an event.

Each storage is also booked to the ``nn.Module`` running when it was made (its path,
``GPT.blocks.0.attn``; ``""`` outside any module): the engine hook shows module calls
and optimizer steps (booked to ``"<Optimizer class>.step"``), and each node made keeps
the path of its module, under which backward books what the node allocates. A module
also takes over its own parameters and buffers from ``""`` when it first runs. Per
module the books keep bytes by category, their total and its highest value; the
category and module tables at the peak are copied only when the total first falls
from a new peak.

Accounting costs nothing until first asked for: ``start()`` attaches the tracker to
both hooks and finds the storages already alive through the garbage collector.
"""

import atexit
import gc
import sys
import time
import tracemalloc
import weakref
from collections import deque

import numpy

from .. import _observe
from .._tensor import Tensor as _Tensor
from ..autograd.node import SavedTensor
from ..backend import cuda_runtime, emulating_cuda, gpu
from ..nn.modules._paths import PATHS
from ..nn.parameter import Parameter
from ..backend.emulated import ndarray as _emulated_ndarray
from ..backend.meta import ndarray as _meta_ndarray
from ..optim.optimizer import Optimizer
# Roles (bits) stick to a storage until it is freed; saved-by-the-graph is counted apart.
from .._observe import COMM_BUCKET as ROLE_COMM_BUCKET
from .._observe import GRADIENT as ROLE_GRADIENT
from .._observe import OPTIMIZER_STATE as ROLE_STATE
from .._observe import PARAMETER as ROLE_PARAMETER

CATEGORIES = ("parameter", "gradient", "comm_bucket", "optimizer_state", "activation",
              "temporary", "other")
PARAMETER, GRADIENT, COMM_BUCKET, OPTIMIZER_STATE, ACTIVATION, TEMPORARY, OTHER = range(7)

ALLOC, FREE, CHANGE = 0, 1, 2
# A module's books: bytes per category (indices above), then these.
_TOTAL, _OWN_PEAK, _PATH = len(CATEGORIES), len(CATEGORIES) + 1, len(CATEGORIES) + 2
# The machinery between an op and the tracker: a stack starts at the first frame outside
# these modules (the op's function, or the caller of a creation function).
_PKG = _observe.__name__.rpartition(".")[0]
_PLUMBING_NAMES = (__name__, _observe.__name__, *(f"{_PKG}.{m}" for m in (
    "_tensor", "ops._registry", "autograd.node", "autograd.anomaly_mode",
    "autograd.profiler")))
_PLUMBING = frozenset(_PLUMBING_NAMES)


def _plumbing():
    """The plumbing's names as its loaded modules' own ``__name__`` strings: a frame's
    module name (``f_globals["__name__"]``) is then found by identity, not compared
    character by character."""
    return frozenset(getattr(sys.modules.get(n), "__name__", n) for n in _PLUMBING_NAMES)
# Exact mode reports a kernel's transient peak as a temporary block when it is at least
# this big (smaller ones are Python objects, not array temporaries).
_TEMPORARY_MIN = 64 * 1024
# Synthetic addresses of exact mode's temporaries: far from any id() of a live object.
_TEMPORARY_BASE = 1 << 62

_ndarray = numpy.ndarray


class _NoDeviceArray:
    """Stands for CuPy's array type while no GPU is in use (no array has this type)."""


_device_ndarray = _NoDeviceArray  # CuPy's ndarray once accounting starts with a GPU
# What ``as_strided`` (an expand's stride-0 view) hangs between a view and its array: the
# view's storage is that array's, found through it.
_Strided = type(numpy.lib.stride_tricks.as_strided(numpy.zeros(1)).base)


def _storage_array(g):
    """The array holding gradient ``g`` (an array, a Tensor under create_graph, or None);
    None for a NumPy scalar (``0-d array * 0.5`` gives one): a value, not a storage, which
    becomes one only when it is copied into a ``.grad`` (seen there)."""
    t = type(g)
    if g is None or t is _ndarray or t is _meta_ndarray or t is _device_ndarray or \
            t is _emulated_ndarray:
        return g
    if isinstance(g, numpy.generic):
        return None
    return g._data


_AT_EXIT = []   # the trackers' stop methods registered with atexit
_getframe = sys._getframe
_now = time.perf_counter_ns


class _Block(weakref.ref):
    """A live storage: a weak reference to its array plus what the books need. ``state``
    packs the roles (low bits) and the number of saved tensors holding it (above them),
    ``cat`` is the category they make; ``frames`` is set only when a stack was recorded;
    ``books`` are its module's."""

    __slots__ = ("key", "size", "state", "cat", "frames", "books", "device")


# Category of a block from its state: the highest role, else held by the graph, else other.
_ROLES = ROLE_PARAMETER | ROLE_STATE | ROLE_GRADIENT | ROLE_COMM_BUCKET
_BY_ROLES = tuple(
    PARAMETER if r & ROLE_PARAMETER else OPTIMIZER_STATE if r & ROLE_STATE else
    GRADIENT if r & ROLE_GRADIENT else COMM_BUCKET if r & ROLE_COMM_BUCKET else OTHER
    for r in range(_ROLES + 1))
_SAVED = _ROLES + 1  # the count of saved tensors holding a block, above the role bits


def _category(state):
    return _BY_ROLES[state & _ROLES] if state & _ROLES or state < _SAVED else ACTIVATION


class _Hold(weakref.ref):
    """A saved tensor's hold on storages, released when the saved tensor dies (it is
    kept on the saved tensor itself)."""

    __slots__ = ("blocks",)


class _Books:
    """Books by module (``by_path``: path -> bytes per category, their total, its highest
    value and the path) with a total and its peak: the tracker's (every storage of a
    process without a GPU), or one device's (:class:`_Ledger`)."""

    __slots__ = ()

    @property
    def current(self):
        """Bytes per category now: the sum of the modules' books (each storage is booked
        to one module, so the device's own table need not be kept up to date)."""
        return _category_sums(books for books in self.by_path.values() if books[_TOTAL])

    def _keep_peak(self):
        """The total is about to fall from the peak: copy the module tables at the peak
        (a growing forward does this once per op: the category sums wait until asked)."""
        self._peak_mods = {path: b[:_TOTAL] for path, b in self.by_path.items()
                           if b[_TOTAL]}
        self._at_peak = False

    @property
    def peak_breakdown(self):
        """Bytes per category at the peak."""
        return self.current if self._at_peak else _category_sums(self._peak_mods.values())

    def _peak_by_module(self):
        """Module path -> bytes per category at the peak (modules with none left out)."""
        if not self._at_peak:
            return {path: b[:] for path, b in self._peak_mods.items()}
        return {path: b[:_TOTAL] for path, b in self.by_path.items() if b[_TOTAL]}

    def by_module(self):
        """Module path -> ``{"at_peak": {category: bytes}, "current": {category: bytes},
        "peak": bytes}``: its storages' bytes at the device's peak and now (categories
        with none left out), and the most its storages held at once since the last peak
        reset. Modules that never held a byte are left out."""
        at_peak = self._peak_by_module()
        table = {}
        for path, books in self.by_path.items():
            if not books[_OWN_PEAK]:
                continue
            table[path] = {
                "at_peak": {CATEGORIES[i]: n for i, n in enumerate(at_peak.get(path, ())) if n},
                "current": {CATEGORIES[i]: books[i] for i in range(_TOTAL) if books[i]},
                "peak": books[_OWN_PEAK]}
        return table

    def reset_peak(self):
        self.peak = self.total
        self._at_peak = True
        self.n_peak = self.n_live
        for books in self.by_path.values():
            books[_OWN_PEAK] = books[_TOTAL]

    def _module_books(self, path):
        books = self.by_path.get(path)
        if books is None:
            books = self.by_path[path] = [0] * _TOTAL + [0, 0, path]
        return books


class Tracker(_Books, _observe.AllocObserver, _observe.EngineObserver):
    """The books: live blocks, bytes per category, the peak and, when recording, the
    event history. One per process (``TRACKER``); the allocation observer, and the
    outermost engine observer (it books what the others allocate).

    History events are tuples ``(action, key, size, time_ns, category, extra, module)``:
    extra is the recorded stack for ALLOC and FREE, the previous category for CHANGE;
    module the path of the block's module.
    """

    # Slots: the hot methods read and write these on every event (an instance dict of more
    # than 30 keys is no longer shared, and every attribute access takes the slow path).
    __slots__ = ("live", "total", "peak", "_at_peak", "_peak_mods", "by_path",
                 "books", "_node_books", "_mstack", "_owned", "n_free", "bytes_freed",
                 "n_peak", "started", "events", "record", "stacks", "free_stacks",
                 "node_frames", "_outer", "exact", "_started_tracemalloc", "_last",
                 "ledgers", "_last_traced", "_temp_addr", "_free_cb", "_release_cb")
    nodes = True    # shown new nodes (their module, and stacks)
    modules = True  # shown module calls and optimizer steps

    def __init__(self):
        self.live = {}            # id(storage array) -> _Block
        self.total = 0
        self.peak = 0
        self._at_peak = True      # the books now are those at the peak (no copy kept)
        self._peak_mods = None    # else: bytes per category at the peak, per module path
        self.by_path = {}         # module path -> its books (see _TOTAL)
        self.books = self._module_books("")  # the books of the module running
        self._node_books = self.books  # those of the node backward ran last
        self._mstack = []         # (module, path) of the modules running, outermost first
        self._owned = {}          # id(module) -> its path, once it took its parameters
        self.n_free = self.bytes_freed = self.n_peak = 0
        self.ledgers = {}         # device (None: the host) -> its books (DeviceTracker)
        self.started = False
        # history
        self.events = None        # deque of event tuples (see the class docstring)
        self.record = False
        self.stacks = False       # capture Python stacks for allocations
        self.free_stacks = False  # ... and for frees (context="all")
        self.node_frames = None   # in backward: the frames its events carry (see run_node)
        self._outer = []          # (node_frames, books) of the backward passes this one is in
        self.exact = False
        self._started_tracemalloc = False
        self._last = None         # (id, code, stack) of the frame above the last stack
        self._last_traced = 0
        self._temp_addr = _TEMPORARY_BASE
        self._free_cb = self._on_free
        self._release_cb = self._on_release

    # ---- installation -------------------------------------------------------------------
    def start(self):
        """Attach to the hooks and take the storages alive now onto the books."""
        if self.started:
            return
        global _PLUMBING, _device_ndarray
        if gpu.cupy() is not None:
            _device_ndarray = gpu.cupy().ndarray
        # a GPU's storages need books of their own: the device tracker, chosen now so that
        # a CPU-only process pays nothing for them
        self.__class__ = DeviceTracker if gpu.cupy() is not None or emulating_cuda() \
            else Tracker
        self._free_cb = self._on_free
        _PLUMBING = _plumbing()
        if self.stop not in _AT_EXIT:  # no books to keep while the interpreter tears down
            atexit.register(self.stop)
            _AT_EXIT.append(self.stop)
        self.started = True
        gc.collect()  # garbage in reference cycles would be booked, then freed at random
        self._scan()
        _observe.attach("alloc", self)
        _observe.attach("engine", self)

    def stop(self):
        """Detach from the hooks and close the books (accounting restarts on next use)."""
        if not self.started:
            return
        _observe.detach("alloc", self)
        _observe.detach("engine", self)
        self.set_exact(False)
        self.__init__()

    def _scan(self):
        """Every storage reachable from live tensors, saved tensors and optimizers, and
        those objects with ``_storage_roles()`` hold (DDP's buckets)."""
        optimizers = []
        for o in gc.get_objects():
            t = type(o)  # (not isinstance: some modules' objects warn on __class__)
            if issubclass(t, _Tensor):
                b = self.see(o._data)
                if issubclass(t, Parameter):
                    self._add_role(b, ROLE_PARAMETER)
                if o._grad is not None:
                    self._add_role(self.see(o._grad._data), ROLE_GRADIENT)
            elif t is SavedTensor:
                self.saved(o)
            elif issubclass(t, Optimizer):
                optimizers.append(o)
            elif "_storage_roles" in t.__dict__:  # (its own class's: no metaclass magic)
                for arr, role in o._storage_roles():
                    self.role(arr, role)
        for opt in optimizers:
            self.optimizer_state(opt.state.values())

    # ---- the books ----------------------------------------------------------------------
    # The hot methods inline their arithmetic and take no lock: retrograd's own threads
    # (the optimizer's foreach pool) are off while accounting, and a weak reference's
    # callback runs between bytecodes of the thread that drops the last reference.
    def see(self, arr, state=0):
        """The block of ``arr``'s storage, opened (an allocation) if it is new, with the
        roles in ``state``."""
        root = arr
        base = arr.base
        while base is not None:
            t = type(base)
            if t is _ndarray or t is _meta_ndarray or t is _device_ndarray:  # (meta: no data)
                root = base
            elif t is not _Strided:  # not an array: the storage is ``root``'s own
                break
            base = base.base
        key = id(root)
        live = self.live
        b = live.get(key)
        if b is not None:
            if state and state & ~b.state:
                self._add_role(b, state)
            return b
        b = _Block(root, self._free_cb)
        b.key = key
        b.size = size = root.nbytes
        b.state = state
        books = b.books = self.books
        cat = b.cat = _category(state) if state else OTHER
        live[key] = b
        if len(live) > self.n_peak:
            self.n_peak = len(live)
        books[cat] += size  # (_add, inline)
        own = books[_TOTAL] = books[_TOTAL] + size
        if own > books[_OWN_PEAK]:
            books[_OWN_PEAK] = own
        total = self.total = self.total + size
        if total > self.peak:
            self.peak = total
            self._at_peak = True
        if self.stacks:
            frames = b.frames = self.node_frames or self._stack(_getframe(1))
            if self.record:
                self.events.append((ALLOC, key, size, _now(), cat, frames, books[_PATH]))
        elif self.record:
            self.events.append((ALLOC, key, size, _now(), cat, (), books[_PATH]))
        if self.exact:
            self._probe()
        return b

    def _add(self, cat, size, books):
        """Book ``size`` host bytes (exact mode's kernel temporaries)."""
        books[cat] += size
        own = books[_TOTAL] = books[_TOTAL] + size
        if own > books[_OWN_PEAK]:
            books[_OWN_PEAK] = own
        total = self.total = self.total + size
        if total > self.peak:
            self.peak = total
            self._at_peak = True

    def _sub(self, cat, size, books):
        """Take back ``size`` host bytes booked by ``_add`` (a temporary freed)."""
        if self._at_peak:
            self._keep_peak()
        books[cat] -= size
        books[_TOTAL] -= size
        self.total -= size

    @property
    def n_live(self):
        return len(self.live)

    def ledger(self, device=None):
        """The books of ``device`` (a GPU's index, None for the host): here every
        storage is the host's, so the tracker's own (a GPU's are empty)."""
        return self if device is None else _Ledger({})

    def _books_of(self, b, path):
        """The books of module ``path`` on ``b``'s device."""
        return self._module_books(path)

    def _on_free(self, b):
        key = b.key
        live = self.live
        if live.get(key) is not b:  # a block of books closed by stop()
            return
        del live[key]
        if self._at_peak:
            self._keep_peak()
        size = b.size
        cat = b.cat
        books = b.books
        books[cat] -= size
        books[_TOTAL] -= size
        self.total -= size
        self.n_free += 1
        self.bytes_freed += size
        if self.record:
            self.events.append((FREE, key, size, _now(), cat, (
                self.node_frames or self._stack(_getframe().f_back)) if self.free_stacks
                else (), books[_PATH]))

    def _move(self, b):
        """Move ``b``'s bytes to the category of its state, if that changed it."""
        old, cat = b.cat, _category(b.state)
        if cat != old:
            b.cat = cat
            size = b.size
            books = b.books
            books[old] -= size
            books[cat] += size
            if self.record:
                self.events.append((CHANGE, b.key, size, _now(), cat, old, books[_PATH]))

    def _add_role(self, b, role):
        state = b.state
        if not state & role:
            b.state = state | role
            self._move(b)

    # ---- the allocation hook: roles, told where they change -----------------------------
    made = see  # (optimizer state comes with its role: booked so from its first byte)

    def role(self, arr, role):
        self._add_role(self.see(arr), role)

    def retensored(self, t):
        """A tensor whose data may have been replaced (``.data =``, ``Module.to``)."""
        if isinstance(t, Parameter):
            self.role(t._data, ROLE_PARAMETER)
        if t._grad is not None:
            self.role(t._grad._data, ROLE_GRADIENT)

    def optimizer_state(self, states):
        """The tensors in optimizer state dicts (``optimizer.state.values()``), after a
        step updated them."""
        for st in states:
            for v in st.values():
                if isinstance(v, _Tensor):
                    self.role(v._data, ROLE_STATE)
        if self.exact:  # the update's temporaries, booked where they were: in the step
            self._probe()

    def saved(self, s):
        """A SavedTensor now holds its storage (or what its pack hook returned)."""
        t = s._tensor
        if t is not None:
            blocks = (self.see(t._data),)
        elif s._data is not None:
            blocks = (self.see(s._data),)
        else:
            p = s._packed
            items = p if isinstance(p, (tuple, list)) else (p,)
            blocks = tuple(self.see(x._data) for x in items if isinstance(x, _Tensor))
            if not blocks:
                return
        h = s._mhold = _Hold(s, self._release_cb)
        h.blocks = blocks
        for b in blocks:
            state = b.state
            b.state = state + _SAVED
            if not state:  # other -> activation, the common case, inline
                b.cat = ACTIVATION
                size = b.size
                books = b.books
                books[OTHER] -= size
                books[ACTIVATION] += size
                if self.record:
                    self.events.append((CHANGE, b.key, size, _now(), ACTIVATION, OTHER,
                                        books[_PATH]))
            elif state < _SAVED:
                self._move(b)

    def _on_release(self, h):
        live = self.live
        for b in h.blocks:
            state = b.state = b.state - _SAVED
            if state == 0:  # activation -> other, the common case, inline
                if live.get(b.key) is b:
                    b.cat = OTHER
                    size = b.size
                    books = b.books
                    books[ACTIVATION] -= size
                    books[OTHER] += size
                    if self.record:
                        self.events.append((CHANGE, b.key, size, _now(), OTHER, ACTIVATION,
                                            books[_PATH]))
            elif state < _SAVED and live.get(b.key) is b:
                self._move(b)

    # ---- the engine hook ------------------------------------------------------------------
    def run_node(self, call, node, buf, create_graph):
        """Evaluate one node in backward: its input and output gradients are seen, and
        what it allocates, and what the engine frees after it, carry its name and the
        stack of the forward op that made it; what it allocates is booked to the module
        whose forward made it."""
        try:  # (slots read directly: getattr with a default is the slow generic path)
            path = node._mpath
            stack = node._mstack
        except AttributeError:  # a node made before accounting started
            path, stack = "", ()
        # The node's class and forward stack, until the next node: the engine frees what
        # this one left.
        frames = self.node_frames = (type(node), stack) if self.stacks else None
        books = self._node_books
        if books[_PATH] is not path:  # (nodes keep their books' own path string)
            books = self._node_books = self.by_path.get(path) or self._module_books(path)
        self.books = books
        live = self.live
        see = self.see
        for g in buf:
            if g is None:
                continue
            if type(g) is not _ndarray:
                g = _storage_array(g)
                if g is None:
                    continue
            if g.base is not None or id(g) not in live:
                see(g)
        outs = call(node, buf, create_graph)
        self.node_frames = frames  # (a backward nested in a hook restored its own)
        self.books = books
        for g in outs:
            if g is None:
                continue
            if type(g) is not _ndarray:
                g = _storage_array(g)
                if g is None:
                    continue
            see(g)
        return outs

    def backward_begin(self):
        self._outer.append((self.node_frames, self.books))

    def backward_end(self):
        if self._outer:
            self.node_frames, self.books = self._outer.pop()
        else:
            self.node_frames, self.books = None, self._module_books("")

    def run_module(self, call, module, args, kwargs):
        """Book what ``module`` allocates (and its nodes) to its path while it runs."""
        stack = self._mstack
        if stack:
            parent, parent_path = stack[-1]
            path = PATHS.path(module, parent, parent_path)
        else:
            path = PATHS.path(module)
        books = self.by_path.get(path) or self._module_books(path)
        if self._owned.get(id(module)) != path:
            self._own(module, books)
        outer = self.books
        self.books = books
        stack.append((module, path))
        try:
            return call(module, args, kwargs)
        finally:
            stack.pop()
            self.books = outer

    def run_step(self, call, optimizer, args, kwargs):
        """Book what an optimizer's step allocates to ``"<its class>.step"``."""
        path = type(optimizer).__name__ + ".step"
        outer = self.books
        self.books = self.by_path.get(path) or self._module_books(path)
        try:
            return call(optimizer, args, kwargs)
        finally:
            self.books = outer

    def _own(self, module, books):
        """``module`` takes its own parameters and buffers (with their gradients) from
        the books of no module (they are made in ``__init__``, outside any call)."""
        path = self._owned[id(module)] = books[_PATH]
        for t in (*module._parameters.values(), *module._buffers.values()):
            if t is None:
                continue
            for arr in (t._data, t._grad._data if t._grad is not None else None):
                b = self.live.get(id(_root(arr))) if arr is not None else None
                if b is not None and b.books[_PATH] == "":
                    self._rebook(b, self._books_of(b, path))

    def _rebook(self, b, books):
        cat, size, old = b.cat, b.size, b.books
        old[cat] -= size
        old[_TOTAL] -= size
        books[cat] += size
        own = books[_TOTAL] = books[_TOTAL] + size
        if own > books[_OWN_PEAK]:
            books[_OWN_PEAK] = own
        b.books = books

    def node_created(self, node):
        """Remember the module path of a new node (its backward allocations are booked
        there) and, when history records stacks, its forward stack (they show it): the
        stack of the op's output when the node is made by the op that just wrapped that
        output (``apply``: outputs first, then the node), else a fresh one."""
        node._mpath = self.books[_PATH]
        if not self.stacks:
            node._mstack = ()
            return
        try:  # the first frame above Node.__new__ (or the fanout) outside the plumbing
            f = _getframe(2)
            while f.f_globals["__name__"] in _PLUMBING:
                f = f.f_back
        except (ValueError, AttributeError):  # the stack ended first
            f = None
        except KeyError:  # exec'd code without a module name: the user's
            pass
        last = self._last
        if f is not None and last is not None and last[0] == id(f) and last[1] is f.f_code:
            node._mstack = last[2]
        else:
            node._mstack = self._stack(f)

    # ---- stacks -------------------------------------------------------------------------
    # Stacks start above retrograd's plumbing (_PLUMBING, found by module name): an
    # allocation's at the op's function or Tensor method (the caller of ``apply``), as
    # PyTorch's show the Python caller of its C++ op; a free's at the frame that dropped
    # the storage. Frames are materialized (the most of a stack's cost) only from there up.
    # In backward an event carries its node's frames instead (``node_frames``).
    def _stack(self, f):
        """(code, instruction offset, ...) from the first frame at or above ``f`` outside
        the plumbing, outwards; lines are looked up only when a snapshot is taken.
        Remembers that first frame, which ``node_created`` looks for."""
        try:
            while f.f_globals["__name__"] in _PLUMBING:
                f = f.f_back
        except AttributeError:  # the stack ended first (a free at interpreter teardown)
            return ()
        except KeyError:  # exec'd code without a module name: the user's
            pass
        first = f
        st = []
        append = st.append
        while f is not None:
            append(f.f_code)
            append(f.f_lasti)
            f = f.f_back
        st = tuple(st)
        self._last = (id(first), first.f_code, st)
        return st

    # ---- exact mode ---------------------------------------------------------------------
    def set_exact(self, on):
        if on and not self.exact:
            if not tracemalloc.is_tracing():
                tracemalloc.start()
                self._started_tracemalloc = True
            tracemalloc.reset_peak()
            self._last_traced = tracemalloc.get_traced_memory()[0]
        elif not on and self.exact and self._started_tracemalloc:
            tracemalloc.stop()
            self._started_tracemalloc = False
        self.exact = bool(on)

    def _probe(self):
        """A kernel's transient memory since the last probe (NumPy reports its allocations
        to tracemalloc) above both ends: booked as a temporary block alloc'd and freed."""
        cur, peak = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        transient = peak - max(cur, self._last_traced)
        self._last_traced = cur
        if transient < _TEMPORARY_MIN:
            return
        self._temp_addr += 1
        books = self.books
        self._add(TEMPORARY, transient, books)
        self._sub(TEMPORARY, transient, books)
        if self.record:
            t, path = _now(), books[_PATH]
            frames = (self.node_frames or self._stack(_getframe().f_back)) if self.stacks \
                else ()
            self.events.append((ALLOC, self._temp_addr, transient, t, TEMPORARY, frames, path))
            self.events.append((FREE, self._temp_addr, transient, t, TEMPORARY, (), path))

    # ---- history ------------------------------------------------------------------------
    def record_history(self, enabled, context, stacks, max_entries, clear_history):
        """As PyTorch's allocator: turning history off drops it; ``clear_history`` drops
        it when turning on; otherwise recording goes on after what was recorded."""
        if stacks not in ("python", "all"):
            raise ValueError(f"stacks must be 'python' or 'all', got {stacks!r}")
        maxlen = _maxlen(max_entries)
        if enabled is None or clear_history or self.events is None:
            self.events = deque(maxlen=maxlen)
        elif self.events.maxlen != maxlen:
            self.events = deque(self.events, maxlen=maxlen)
        self.record = enabled == "all"
        self.stacks = enabled is not None and context in ("alloc", "all", "state")
        self.free_stacks = self.stacks and context == "all"


class DeviceTracker(Tracker):
    """The books of a process with a GPU (CuPy's, or the emulated one). Each device keeps
    books of its own (:class:`_Ledger`: by module and category, a total, its peak and the
    tables at that peak), so ``memory_stats("cuda:1")`` counts device 1's storages alone
    and ``"cpu"`` the host's; the tracker's own total, peak and categories (``current``,
    ``peak_breakdown``) stay those of all devices together. ``Tracker.start`` chooses it."""

    __slots__ = ()

    def ledger(self, device=None):
        """The books of ``device`` (a GPU's index, None for the host); empty ones for a
        device that never held a storage."""
        return self.ledgers.get(device) or _Ledger({})

    def _ledger(self, device):
        ledger = self.ledgers.get(device)
        if ledger is None:  # the host's module books are the tracker's own
            ledger = self.ledgers[device] = _Ledger(self.by_path if device is None else {})
        return ledger

    def see(self, arr, state=0):
        t = type(arr)
        if t is _emulated_ndarray:  # the emulated GPU's array: its NumPy storage
            device, arr = arr._dev, arr._a
        else:
            device = arr.device.id if t is _device_ndarray else None
        ledger = self._ledger(device)
        running = self.books  # a storage is booked to the running module on its device
        path = running[_PATH]
        self.books = ledger._module_books(path)
        n = len(self.live)
        try:
            b = Tracker.see(self, arr, state)
        finally:
            self.books = running
        if len(self.live) > n:  # a new storage
            b.device = device
            ledger._add(b.size)
            ledger.n_live += 1
            if ledger.n_live > ledger.n_peak:
                ledger.n_peak = ledger.n_live
        return b

    made = see

    def _books_of(self, b, path):
        return self.ledgers[b.device]._module_books(path)

    @property
    def current(self):
        return _category_sums(books for ledger in self.ledgers.values()
                              for books in ledger.by_path.values() if books[_TOTAL])

    def _keep_peak(self):
        self._peak_mods = {(device, path): b[:_TOTAL]
                           for device, ledger in self.ledgers.items()
                           for path, b in ledger.by_path.items() if b[_TOTAL]}
        self._at_peak = False

    def by_module(self):
        """The current GPU's (as PyTorch's memory functions default to it)."""
        return self.ledger(cuda_runtime().current()).by_module()

    def _add(self, cat, size, books):
        Tracker._add(self, cat, size, books)
        self._ledger(None)._add(size)

    def _sub(self, cat, size, books):
        Tracker._sub(self, cat, size, books)
        self._ledger(None)._sub(size)

    def _on_free(self, b):
        if self.live.get(b.key) is b:
            self.ledgers[b.device]._sub(b.size, freed=True)
        Tracker._on_free(self, b)

    def reset_peak(self):
        Tracker.reset_peak(self)
        for ledger in self.ledgers.values():
            ledger.reset_peak()


class _Ledger(_Books):
    """One device's books (:class:`DeviceTracker`): its storages' bytes by module, their
    total and its peak, the module tables at that peak, and counts of its storages. The
    blocks' own books lists (``by_path``'s values) are updated by the tracker."""

    __slots__ = ("by_path", "total", "peak", "_at_peak", "_peak_mods", "n_live", "n_peak",
                 "n_free", "bytes_freed")

    def __init__(self, by_path):
        self.by_path = by_path
        self.total = self.peak = self.n_live = self.n_peak = self.n_free = 0
        self.bytes_freed = 0
        self._at_peak = True
        self._peak_mods = None

    def _add(self, size):
        total = self.total = self.total + size
        if total > self.peak:
            self.peak = total
            self._at_peak = True

    def _sub(self, size, freed=False):
        """``size`` bytes leave (before the blocks' books do: the tables at a peak are
        copied first); ``freed``: a storage's, counted as a free."""
        if self._at_peak:
            self._keep_peak()
        self.total -= size
        if freed:
            self.n_live -= 1
            self.n_free += 1
            self.bytes_freed += size


def _category_sums(tables):
    """Bytes per category, summed over module tables."""
    cur = [0] * len(CATEGORIES)
    for books in tables:
        for i in range(_TOTAL):
            cur[i] += books[i]
    return cur


def _root(arr):
    """The array owning ``arr``'s memory (a view's base, followed down)."""
    if type(arr) is _emulated_ndarray:
        arr = arr._a
    base = arr.base
    while base is not None:
        t = type(base)
        if t is _ndarray or t is _device_ndarray:
            arr = base
        elif t is not _Strided:
            break
        base = base.base
    return arr


def _maxlen(max_entries):
    return None if max_entries is None or max_entries >= sys.maxsize else int(max_entries)


TRACKER = Tracker()
