"""Inspecting and intercepting the graph (``torch.autograd.graph``): Node, multi-grad
hooks, and the saved-tensor hooks with the contexts built on them (save_on_cpu,
save_on_disk, allow_mutation_on_saved_tensors)."""

import contextlib
import threading
import weakref
from typing import NamedTuple

from .._tensor import Tensor
from ..backend import cuda_runtime, get_array_module
from ._pinned_offload import PinnedOffload
from ._disk_offload import DiskPacker
from .engine import current_graph_task
from .node import (Node, RemovableHandle, current_hooks, grad_accumulator, on_inplace_write,
                   set_saved_hooks)
from .node import saved_hooks as _hooks

__all__ = ["Node", "GradientEdge", "get_gradient_edge", "saved_tensors_hooks", "save_on_cpu",
           "save_on_disk", "disable_saved_tensors_hooks", "register_multi_grad_hook",
           "allow_mutation_on_saved_tensors", "increment_version", "current_hooks"]


class GradientEdge(NamedTuple):
    """An edge of the graph: where the gradient of output ``output_nr`` of ``node`` flows.
    ``autograd.grad`` takes edges as inputs (the gradient flowing into the edge) and as
    outputs (with their grad_outputs). ``ownership_token`` is PyTorch's way to keep a C++
    graph alive; retrograd's nodes keep their graph alive themselves, so it is None."""

    node: Node
    output_nr: int
    ownership_token: Node | None = None


def get_gradient_edge(tensor):
    """The edge that ``tensor``'s gradient flows along: ``grad(loss, get_gradient_edge(t))``
    is ``grad(loss, t)``, and stays valid whatever happens to ``t`` later."""
    if not tensor.requires_grad:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that "
                           "does not require gradients")
    fn = tensor.grad_fn
    return GradientEdge(fn if fn is not None else grad_accumulator(tensor), tensor._output_nr)


class _Disabled(threading.local):
    message = None  # set by disable_saved_tensors_hooks


_disabled = _Disabled()


class saved_tensors_hooks:
    """Context manager: ``pack_hook(tensor)`` runs for every tensor an op saves and its
    result (any object) is stored instead; ``unpack_hook(packed)`` rebuilds the tensor
    whenever backward (or ``grad_fn._saved_<name>``) needs it. Only the innermost pair
    applies; the packed object is dropped when the node frees what it saved.

    >>> with saved_tensors_hooks(lambda t: t * 4, lambda t: t / 4):
    ...     y = x.pow(2)
    """

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        if _disabled.message is not None:
            raise RuntimeError(_disabled.message)
        if not callable(self.pack_hook) or not callable(self.unpack_hook):
            raise TypeError("saved_tensors_hooks(): pack_hook and unpack_hook must be "
                            "callables")
        set_saved_hooks(_hooks.stack + ((self.pack_hook, self.unpack_hook),))

    def __exit__(self, *exc):
        set_saved_hooks(_hooks.stack[:-1])


class save_on_cpu(saved_tensors_hooks):
    """Saved tensors are kept on the CPU and moved back to their device for backward;
    tensors already on the CPU are kept as they are (no copy). With ``pin_memory`` on a
    GPU the copies go to pinned memory on a side stream, overlapped with compute, and
    come back ahead of the backward pass that needs them (``_pinned_offload``); without
    it device tensors are copied with ``.cpu()`` and ``.to()``, as PyTorch does.

    >>> with save_on_cpu(pin_memory=True):
    ...     y = model(x)
    """

    def __init__(self, pin_memory=False, device_type="cuda"):
        self.pin_memory = pin_memory
        self.device_type = device_type
        self._offload = None
        super().__init__(self._pack, self._unpack)

    def _pack(self, tensor):
        runtime = cuda_runtime()
        if self.pin_memory and runtime.is_array(tensor._data):
            if self._offload is None:
                self._offload = PinnedOffload(runtime)
            return self._offload.pack(tensor.detach())
        return _pack_to_cpu(tensor)

    def _unpack(self, packed):
        if self._offload is not None and not isinstance(packed, tuple):
            return self._offload.unpack(packed)
        return _unpack_from_cpu(packed)


def _pack_to_cpu(tensor):
    # detach(): the packed tensor must not hold the saving node (a saved output's grad_fn)
    dev = tensor.device
    return dev, (tensor.detach() if dev.type == "cpu" else tensor.detach().cpu())


def _unpack_from_cpu(packed):
    dev, tensor = packed
    return tensor if dev.type == "cpu" else tensor.to(dev)


@contextlib.contextmanager
def disable_saved_tensors_hooks(error_message):
    """Entering ``saved_tensors_hooks`` (or a context built on it) inside this context
    raises ``RuntimeError(error_message)``; so does entering this one while hooks are set.

    >>> with disable_saved_tensors_hooks("not supported here"):
    ...     pass
    """
    prev = _disabled.message
    try:
        if _hooks.stack:
            raise RuntimeError(error_message)
        _disabled.message = error_message
        yield
    finally:
        _disabled.message = prev


def increment_version(tensor):
    """Mark ``tensor`` (or each tensor of an iterable) as modified in place, for writes
    autograd cannot see (say, through ``.numpy()``)."""
    for t in (tensor,) if isinstance(tensor, Tensor) else tensor:
        t._vc[0] += 1


# ---- multi-grad hooks -------------------------------------------------------------------

class _MultiHandle(RemovableHandle):
    """Removes the per-tensor hooks of one ``register_multi_grad_hook``."""

    def __init__(self, handles):
        self.handles = handles

    def remove(self):
        for h in self.handles:
            h.remove()

    def __getstate__(self):
        return self.handles

    def __setstate__(self, state):
        self.handles = state


def _grad_fn_or_acc(t):
    if t._requires_grad and t.grad_fn is None:
        return grad_accumulator(t)
    if t.grad_fn is None:  # PyTorch's error for a tensor that does not require grad
        raise AssertionError("Expected gradient function to be set")
    return t.grad_fn


def _task_id():
    task = current_graph_task()
    if task is None:
        raise RuntimeError("expected this hook to be called inside a backward call")
    return task


def register_multi_grad_hook(tensors, fn, *, mode="all"):
    """Call ``fn`` once per backward with the gradients of ``tensors``.

    ``mode="all"``: after every tensor's gradient that this backward computes, with a list
    (None for the others: tensors outside this graph or not needed for its ``inputs``).
    ``mode="any"``: with the first of those gradients. Returns a handle with ``remove()``.

    >>> register_multi_grad_hook((a, b), lambda grads: print([g is not None for g in grads]))
    """
    if mode not in ("all", "any"):
        raise ValueError(f"Expects mode to be one of ('all', 'any') but got {mode}")
    lock = threading.Lock()
    tensors = tuple(tensors)
    if mode == "any":
        ran = {}

        def any_hook(grad):
            tid = _task_id().id
            with lock:
                prev, ran[tid] = ran.get(tid, False), True
            if not prev:
                fn(grad)

        return _MultiHandle(tuple(t.register_hook(any_hook) for t in tensors
                                  if t.requires_grad))
    grad_fns = [_grad_fn_or_acc(t) for t in tensors]
    count, buffers, expected = {}, {}, {}

    def inner(idx):
        def hook(grad):
            task = _task_id()
            tid = task.id
            with lock:
                seen = count.get(tid, 0)
                count[tid] = seen + 1
                if not seen:  # first gradient of this backward: how many will come
                    expected[tid] = sum(task.will_execute(f) for f in grad_fns)
                    buffers[tid] = [None] * len(tensors)
            buffers[tid][idx] = grad
            if seen == expected[tid] - 1:
                grads = buffers.pop(tid)
                del count[tid], expected[tid]
                fn(grads)
        return hook

    return _MultiHandle(tuple(t.register_hook(inner(i)) for i, t in enumerate(tensors)))


# ---- disk offload -------------------------------------------------------------------------

class save_on_disk(saved_tensors_hooks):
    """Saved tensors of at least ``min_bytes`` bytes go to files (in a private directory
    made in ``directory``, or in the system's temporary directory) and are read back for
    backward, as often as needed.

    Unlike the tutorial's hand-written hooks this never leaks: a file is deleted as soon
    as the nodes that saved it free their saved tensors (after backward, or when the graph
    is dropped), when the forward inside the context raises, and at interpreter exit; the
    files of a process killed by a signal are deleted by the next process that uses
    save_on_disk with the same directory. Directories are 0700 and files 0600. A tensor
    saved by several ops of one ``with`` block is written once. Smaller tensors stay in
    memory. A write that fails (a full disk) raises an OSError naming the file.

    >>> with save_on_disk(min_bytes=1 << 20):
    ...     loss = model(x).sum()
    >>> loss.backward()  # reads the files back, then deletes them
    """

    def __init__(self, directory=None, min_bytes=4096):
        self._packer = DiskPacker(directory, min_bytes)
        super().__init__(self._packer.pack, _unpack_from_disk)

    def __enter__(self):
        super().__enter__()
        self._packer.enter()

    def __exit__(self, exc_type, *exc):
        self._packer.exit(exc_type is not None)
        super().__exit__(exc_type, *exc)


def _unpack_from_disk(packed):
    return packed if isinstance(packed, Tensor) else packed.load()


# ---- allow_mutation_on_saved_tensors --------------------------------------------------------

class _Handle:
    __slots__ = ("__weakref__",)


class _AllowMutationOnSavedContext:
    """What allow_mutation_on_saved_tensors tracks: each saved tensor (by the handle its
    node holds) with its version when saved, and the clones made before writes."""

    def __init__(self):
        self.original = weakref.WeakKeyDictionary()  # handle -> (tensor, version)
        self.cloned = weakref.WeakKeyDictionary()    # handle -> tensor

    def clear(self):
        self.original.clear()
        self.cloned.clear()

    def pack(self, tensor):
        h = _Handle()
        self.original[h] = (tensor.detach(), tensor._vc[0])
        return h

    def unpack(self, handle):
        if on_inplace_write[0] is None:
            raise AssertionError("Trying to backward outside of the "  # PyTorch's words
                                 "'allow_mutation_on_saved_tensors' contextin which the graph "
                                 "was originally recorded.")
        if handle in self.cloned:
            return self.cloned[handle]
        return self.original[handle][0]

    def before_write(self, target):
        """Clone every saved tensor whose memory ``target``'s write is about to change."""
        data = target._data
        xp = get_array_module(data)
        for h, (t, version) in list(self.original.items()):
            if t._vc[0] == version and (t._vc is target._vc or
                                        xp.may_share_memory(t._data, data)):
                self.cloned[h] = t.clone()
                del self.original[h]


@contextlib.contextmanager
def allow_mutation_on_saved_tensors():
    """Tensors saved for backward may be modified in place inside this context: they are
    cloned before the write, so backward (run inside the same context) uses the values
    they had when saved.

    >>> with allow_mutation_on_saved_tensors():
    ...     b = a.clone(); out = (b ** 2).sum(); b.sin_(); out.backward()
    """
    if on_inplace_write[0] is not None:
        raise RuntimeError("allow_mutation_on_saved_tensors contexts cannot be nested")
    ctx = _AllowMutationOnSavedContext()
    with saved_tensors_hooks(ctx.pack, ctx.unpack):
        on_inplace_write[0] = ctx.before_write
        try:
            yield ctx
        finally:
            on_inplace_write[0] = None
            ctx.clear()
