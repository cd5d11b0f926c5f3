"""Selective activation checkpointing: a policy decides, op by op, what the recomputation
of a checkpointed region may take from the forward instead of computing it again.

The two contexts of :func:`create_selective_checkpoint_contexts` are engine observers
(``_observe``'s ``run_op``, PyTorch's two dispatch modes): the forward's calls the
policy after each op and keeps the outputs it chooses; the recomputation's hands each
kept output back in place of running the op (``_replayed``: the op's node and saved
tensors are recorded as usual, only its forward is not run again). Ops are matched by
their order per op, as PyTorch does, so the recomputation must run the same ops.

Beyond PyTorch (whose eager mode recomputes ``*_CPU_OFFLOAD`` ops), a kept output may
wait in CPU memory (``*_CPU_OFFLOAD``, ``save_on_cpu``'s packing) or in a file
(``*_DISK_OFFLOAD``, ``save_on_disk``'s). In-place ops and views are always recomputed:
a view costs nothing to recompute and an in-place op's output is its input.
"""

import copy
import enum
import threading
from collections import defaultdict

from .. import _observe
from .._tensor import Tensor
from ..autograd import forward_ad, grad_mode
from ..autograd._disk_offload import DiskPacker
from ..autograd.graph import save_on_cpu
from ..ops._opdef import OpDef

__all__ = ["CheckpointPolicy", "SelectiveCheckpointContext",
           "create_selective_checkpoint_contexts"]


class SelectiveCheckpointContext:
    """What a policy function is told besides the op and its arguments: ``op_output``
    (the op has run), and ``is_recompute`` (always False: the policy runs in the forward
    only; recomputation takes kept outputs by position).

    >>> def policy_fn(ctx, op, *args, **kwargs):
    ...     return CheckpointPolicy.MUST_SAVE if op.name == "addmm" else \\
    ...         CheckpointPolicy.PREFER_RECOMPUTE
    """

    def __init__(self, *, is_recompute, op_output=None):
        self.is_recompute = is_recompute
        self.op_output = op_output


class CheckpointPolicy(enum.Enum):
    """Per op: ``{MUST,PREFER}_SAVE`` keeps its output for the recomputation,
    ``{MUST,PREFER}_RECOMPUTE`` runs it again, ``{MUST,PREFER}_CPU_OFFLOAD`` keeps it in
    CPU memory (copied back to its device when needed) and ``{MUST,PREFER}_DISK_OFFLOAD``
    (retrograd's) in a file read back when needed. MUST and PREFER differ only for a
    compiler, which retrograd does not have."""

    MUST_SAVE = 0
    PREFER_SAVE = 1
    MUST_RECOMPUTE = 2
    PREFER_RECOMPUTE = 3
    MUST_CPU_OFFLOAD = 4
    PREFER_CPU_OFFLOAD = 5
    MUST_DISK_OFFLOAD = 6
    PREFER_DISK_OFFLOAD = 7


_SAVE = (CheckpointPolicy.MUST_SAVE, CheckpointPolicy.PREFER_SAVE)
_CPU = (CheckpointPolicy.MUST_CPU_OFFLOAD, CheckpointPolicy.PREFER_CPU_OFFLOAD)
_DISK = (CheckpointPolicy.MUST_DISK_OFFLOAD, CheckpointPolicy.PREFER_DISK_OFFLOAD)
_RECOMPUTE = object()
_CONSUMED = object()
_MISMATCH = ("This can happen if the operations in the checkpointed region are "
             "nondeterministic or depend on global state that changed between forward and "
             "backward.")


def _policy_from_bool(b):
    return CheckpointPolicy.MUST_SAVE if b else CheckpointPolicy.PREFER_RECOMPUTE


class _Kept:
    """One kept output tensor: packed (as is, on the CPU or on disk) with the version of
    the tensor it was, so that a later in-place write to it is caught."""

    __slots__ = ("packed", "unpack", "vc", "version")

    def __init__(self, t, pack, unpack):
        self.vc, self.version = t._vc, t._vc[0]
        self.packed = pack(t.detach())
        self.unpack = unpack

    def get(self, allow_mutation):
        if not allow_mutation and self.vc[0] != self.version:
            raise RuntimeError("Tensor cached during selective activation checkpoint has been "
                               "mutated")
        return self.unpack(self.packed)


def _as_is(t):
    return t


def _from_disk(packed):
    return packed if isinstance(packed, Tensor) else packed.load()


class _Storage:
    """Kept outputs by op and call index, and how each policy packs them."""

    def __init__(self, disk_directory):
        self.entries = defaultdict(dict)  # op -> {index: kept outputs or a marker}
        cpu = save_on_cpu()
        self.cpu = (cpu.pack_hook, cpu.unpack_hook)
        self.disk = DiskPacker(disk_directory, 0)
        self.disk_open = False

    def keep(self, policy, out):
        if policy in _SAVE:
            pack, unpack = _as_is, _as_is
        elif policy in _CPU:
            pack, unpack = self.cpu
        else:
            if not self.disk_open:
                self.disk.enter()
                self.disk_open = True
            pack, unpack = self.disk.pack, _from_disk
        if isinstance(out, tuple):
            return tuple(_Kept(o, pack, unpack) for o in out)
        return _Kept(out, pack, unpack)

    def close_forward(self, failed):
        """The forward ended; if it ``failed``, its files go now."""
        if self.disk_open:
            self.disk.exit(failed)
            self.disk_open = False


class _Mode(_observe.EngineObserver):
    """An engine observer of one thread's forward ops while its context is entered."""

    ops = True

    def __init__(self, storage):
        self.storage = storage
        self.counter = defaultdict(int)
        self._thread = None
        self._own = False  # running its own ops (the policy, packing): not the region's

    def __enter__(self):
        self.counter.clear()
        self._thread = threading.get_ident()
        _observe.attach("engine", self)
        return self

    def __exit__(self, exc_type, *exc):
        _observe.detach("engine", self)

    def _index(self, op, self_):
        """The call index of ``op``, or None for calls a policy does not see."""
        if self_ is not None or op.view or self._own or threading.get_ident() != self._thread:
            return None
        idx = self.counter[op]
        self.counter[op] += 1
        return idx


class _CachingMode(_Mode):
    """The forward's context: run each op, ask the policy, keep what it says."""

    def __init__(self, policy_fn, storage):
        super().__init__(storage)
        self.policy_fn = policy_fn

    def __exit__(self, exc_type, *exc):
        super().__exit__(exc_type, *exc)
        self.storage.close_forward(exc_type is not None)

    def run_op(self, call, op, values, attrs, self_):
        out = call(op, values, attrs, self_)
        idx = self._index(op, self_)
        if idx is None:
            return out
        self._own = True
        try:  # as below autograd: what the policy and the packing run records nothing
            with grad_mode.no_grad():
                self.storage.entries[op][idx] = self._decide(op, values, attrs, out)
        finally:
            self._own = False
        return out

    def _decide(self, op, values, attrs, out):
        policy = self.policy_fn(SelectiveCheckpointContext(is_recompute=False, op_output=out),
                                op, *values, **dict(zip(op.attrs, attrs, strict=True)))
        if isinstance(policy, bool):
            policy = _policy_from_bool(policy)
        if policy in _SAVE or policy in _CPU or policy in _DISK:
            return self.storage.keep(policy, out)
        return _RECOMPUTE


class _CachedMode(_Mode):
    """The recomputation's context: hand back kept outputs, run the other ops."""

    def __init__(self, storage, allow_cache_entry_mutation):
        super().__init__(storage)
        self.allow_cache_entry_mutation = allow_cache_entry_mutation

    def run_op(self, call, op, values, attrs, self_):
        idx = self._index(op, self_)
        if idx is None:
            return call(op, values, attrs, self_)
        calls = self.storage.entries.get(op)
        if calls is None:
            raise RuntimeError(f"{op.name} encountered during backward but not found in "
                               f"storage. {_MISMATCH}")
        entry = calls.get(idx)
        if entry is None:
            raise RuntimeError(f"{op.name} invocation index {idx} encountered during backward "
                               f"but not found in storage. {_MISMATCH}")
        if entry is _CONSUMED:
            raise RuntimeError("Trying to backward an extra time. You are only allowed to "
                               "backward once on any region computed under selective "
                               "activation checkpoint.")
        if entry is _RECOMPUTE:
            return call(op, values, attrs, self_)
        calls[idx] = _CONSUMED
        if forward_ad.state.level is not None:  # tangents need the op's own forward
            return call(op, values, attrs, self_)
        allow = self.allow_cache_entry_mutation
        self._own = True
        try:
            with grad_mode.no_grad():
                out = (tuple(k.get(allow) for k in entry) if isinstance(entry, tuple)
                       else entry.get(allow))
        finally:
            self._own = False
        return call(_replayed(op, out), values, attrs, None)


def _replayed(op, out):
    """``op`` whose forward returns the kept ``out`` (its node, saves and checks as
    ``op``'s: the copy shares everything else)."""
    arrays = tuple(o._data for o in out) if isinstance(out, tuple) else out._data
    replay = copy.copy(op)
    replay.forward = lambda xp, *args: arrays
    replay.into = None
    return replay


def create_selective_checkpoint_contexts(policy_fn_or_list, allow_cache_entry_mutation=False,
                                         *, disk_directory=None):
    """The two contexts for ``checkpoint(..., use_reentrant=False, context_fn=...)``.

    ``policy_fn_or_list``: ``policy_fn(ctx, op, *args, **kwargs)`` returning a
    :class:`CheckpointPolicy` (or a bool: True is MUST_SAVE) for each op the region runs
    (``op.name`` is its name, ``args`` its tensor inputs, ``kwargs`` its other arguments);
    or a list of op names (retrograd has no ``torch.ops.aten``) to save, all others
    recomputed. ``allow_cache_entry_mutation``: do not check that kept outputs are left
    unmodified. ``disk_directory`` (retrograd's): where ``*_DISK_OFFLOAD`` outputs are
    written (default: the system's temporary directory).

    >>> context_fn = functools.partial(create_selective_checkpoint_contexts, ["addmm"])
    >>> out = checkpoint(block, x, use_reentrant=False, context_fn=context_fn)
    """
    if isinstance(policy_fn_or_list, list):
        names = set()
        for op in policy_fn_or_list:
            if not isinstance(op, (str, OpDef)):
                raise ValueError(f"Expected op in `op_list` to be an op name but got: {op} of "
                                 f"type {type(op)}. ")
            names.add(op if isinstance(op, str) else op.name)

        def policy_fn(ctx, op, *args, **kwargs):
            return (CheckpointPolicy.MUST_SAVE if op.name in names
                    else CheckpointPolicy.PREFER_RECOMPUTE)
    elif callable(policy_fn_or_list):
        policy_fn = policy_fn_or_list
    else:
        raise TypeError("policy_fn_or_list must be either a function or a list of ops.")
    storage = _Storage(disk_directory)
    return _CachingMode(policy_fn, storage), _CachedMode(storage, allow_cache_entry_mutation)
