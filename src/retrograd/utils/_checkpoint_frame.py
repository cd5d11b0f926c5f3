"""Non-reentrant checkpointing: saved-tensor hooks that recompute on first unpack.

Inside a checkpointed forward every tensor an op saves is replaced by an empty holder
(``Frame.pack``); the region's inputs are saved instead, as the inputs of an op would
be, so an enclosing checkpoint or ``save_on_cpu`` treats them as its own saved tensors.
The first unpack in a backward (told apart by its graph task) reruns the region under
hooks that fill the holders in saving order (``Frame.recompute``), and stops the rerun
as soon as the last holder is filled (early stop). Each recomputed tensor is dropped as
soon as it is unpacked, even with ``retain_graph=True``; a second backward recomputes.

The rerun must save what the forward saved: the count, and per tensor its metadata
(``determinism_check="default"``: shape, dtype, device; ``"values"``, retrograd's: the
values too, at the cost of a copy of each). A mismatch raises CheckpointError naming
the position, the op and module that saved the tensor (``_checkpoint_sites``) and, for
values, where and how much they differ.
"""

import itertools
import threading
import weakref
from collections import defaultdict

import numpy

from .. import _observe
from .._tensor import Tensor
from ..autograd import grad_mode
from ..autograd.engine import current_graph_task
from ..autograd.graph import saved_tensors_hooks
from ..autograd.node import SavedTensor
from . import _checkpoint_sites as sites

__all__ = ["CheckpointError", "Frame", "GraphExecGroup", "DETERMINISM_CHECKS", "DEBUG_TIP"]


class CheckpointError(RuntimeError):
    """A checkpointed region's recomputation does not match its forward."""


class _StopRecomputation(Exception):
    """Raised by the recomputation's pack hook once every needed tensor is back."""


DEBUG_TIP = """
Tip: To see a more detailed error message, either pass `debug=True` to
`torch.utils.checkpoint.checkpoint(...)` or wrap the code block
with `with torch.utils.checkpoint.set_checkpoint_debug_enabled(True):` to
enable checkpoint\u2011debug mode globally.
"""


def internal_assert(cond):
    if not cond:
        raise AssertionError("Something went unexpectedly wrong in activation checkpoint. "
                             "Please report this bug by filing an issue to PyTorch.")


def _default_metadata(x):
    return {"shape": x.shape, "dtype": x.dtype, "device": x.device}


# name -> (metadata of a saved tensor, whether its values are kept and compared)
DETERMINISM_CHECKS = {"default": (_default_metadata, False), "none": (lambda _: None, False),
                      "values": (_default_metadata, True)}

_fresh_ids = itertools.count(-2, -1)  # unpacks outside any backward: a new rerun each


class _Group(threading.local):
    current = None


_group = _Group()


class GraphExecGroup:
    """Backward calls inside one group recompute each checkpointed region at most once,
    even with ``retain_graph=True``; they must then use disjoint saved tensors.

    >>> with GraphExecGroup():
    ...     loss_a.backward(retain_graph=True); loss_b.backward()
    """

    def __enter__(self):
        if _group.current is not None:
            raise RuntimeError("GraphExecGroup contexts cannot be nested. Already inside group "
                               f"{_group.current}")
        _group.current = self
        return self

    def __exit__(self, *exc):
        _group.current = None

    @classmethod
    def _get_current_group(cls):
        return _group.current


class _Handle:
    """The key of one recomputed tensor in one backward (dropped once unpacked)."""


class _Holder:
    """What the graph holds for a checkpointed saved tensor: per backward (graph task
    id), the handle of its recomputed value, or None once unpacked."""

    __slots__ = ("handles", "__weakref__")

    def __init__(self):
        self.handles = {}


class _Recomputed:
    """A recomputed tensor waiting for its unpack: the memory tracker books its storage
    as an activation (held for the graph) until the unpack drops this record."""

    __slots__ = ("_tensor", "_data", "_packed", "_mhold", "__weakref__")

    def __init__(self, tensor):
        self._tensor, self._data, self._packed = tensor, None, None
        if _observe.alloc is not None:
            _observe.alloc.saved(self)


class Frame:
    """One checkpointed call: its saved inputs, its holders in saving order, what each
    backward recomputed, and what the determinism check compares."""

    def __init__(self, recompute_fn, early_stop, unpack_error_cb, determinism_check):
        self.recompute_fn = recompute_fn
        self.early_stop = early_stop
        self.unpack_error_cb = unpack_error_cb
        self.metadata_fn, keep_values = DETERMINISM_CHECKS[determinism_check]
        self.values = [] if keep_values else None
        self.saved_args = []
        self.weak_holders = []
        self.metadata = []
        self.sites = []                              # forward: where each was saved
        self.recomputed = defaultdict(weakref.WeakKeyDictionary)  # gid -> handle -> tensor
        self.recomp_sites = defaultdict(list)        # gid -> where each was resaved
        self.recomp_counter = defaultdict(int)
        self.is_recomputed = defaultdict(bool)
        self.forward_completed = False
        self.ignore_saved_mismatch = False
        self.outside = sites.modules_now()  # the modules around the region

    # ---- the forward ------------------------------------------------------------------
    def save_inputs(self, args):
        self.saved_args = [SavedTensor(a, False) if isinstance(a, Tensor) else a for a in args]

    def get_inputs(self):
        return [a.unpack(None) if isinstance(a, SavedTensor) else a for a in self.saved_args]

    def hooks(self):
        """The forward's saved-tensor hooks: a holder stands in for each saved tensor."""
        unpack = self.unpack
        if self.unpack_error_cb is not None:
            def unpack(holder, _unpack=self.unpack, cb=self.unpack_error_cb):
                try:
                    return _unpack(holder)
                except CheckpointError as e:
                    cb(e)
                    raise
        return saved_tensors_hooks(self.pack, unpack)

    def pack(self, x):
        holder = _Holder()
        self.weak_holders.append(weakref.ref(holder))
        self.metadata.append(self.metadata_fn(x))
        if self.values is not None:
            self.values.append(x._data.copy())
        self.sites.append(sites.here())
        return holder

    # ---- the backward -----------------------------------------------------------------
    def unpack(self, holder):
        gid = _group.current
        if gid is None:
            task = current_graph_task()
            gid = task.id if task is not None else next(_fresh_ids)
        if not self.is_recomputed[gid]:
            self.recompute(gid)
        internal_assert(gid in holder.handles)
        handle = holder.handles[gid]
        if handle is None:
            extra = ("Performing two backward calls that overlap (i.e. require the same saved "
                     "activation in order to compute gradients) is not allowed while under the "
                     "torch.utils.checkpoint.GraphExecGroup context. "
                     if _group.current is not None else "")
            raise CheckpointError(
                "torch.utils.checkpoint: Unpack is being triggered for a tensor that was "
                f"already unpacked once. {extra}If you are calling ctx.saved_tensors in "
                "backward, make sure to do so only once. Otherwise please open an issue with "
                "details on your use case.")
        internal_assert(handle in self.recomputed[gid])
        ret = self.recomputed[gid][handle]._tensor
        holder.handles[gid] = None
        return ret

    def recompute(self, gid):
        args = self.get_inputs()
        try:
            with saved_tensors_hooks(lambda x: self._repack(x, gid), lambda x: x), \
                    grad_mode.enable_grad(), sites.region(self.outside):
                self.recompute_fn(*args)
        except _StopRecomputation:
            pass
        self.is_recomputed[gid] = True
        self.check(gid)

    def _repack(self, x, gid):
        """The recomputation's pack hook: fill the next holder with ``x``."""
        x = x.detach() if x.requires_grad else x
        idx = self.recomp_counter[gid]
        self.recomp_counter[gid] += 1
        if idx >= len(self.weak_holders):
            internal_assert(not self.early_stop)
            if not self.forward_completed:  # a backward inside the checkpointed forward
                self.ignore_saved_mismatch = True
                return x
            raise CheckpointError(
                "torch.utils.checkpoint: trying to save more tensors during recomputation "
                f"than during the original forward pass.\nThe first extra tensor (position "
                f"{idx}: {_describe(x)}) is saved by {sites.here()}.\n"
                f"{self._divergence(gid)}{DEBUG_TIP}")
        self.recomp_sites[gid].append(sites.here())
        holder = self.weak_holders[idx]()
        if holder is not None:  # None: a backward inside the forward freed it already
            internal_assert(holder.handles.get(gid) is None)
            handle = holder.handles[gid] = _Handle()
            self.recomputed[gid][handle] = _Recomputed(x)
        if self.early_stop and self.recomp_counter[gid] == len(self.weak_holders):
            raise _StopRecomputation
        return x

    def check(self, gid):
        """The recomputation saved what the forward saved (count, metadata, values)."""
        if self.ignore_saved_mismatch:
            return
        n, m = len(self.weak_holders), self.recomp_counter[gid]
        if n != m:
            missing = (f"The first tensor not saved again (position {m}) was saved by "
                       f"{self.sites[m]}.\n" if m < n else "")
            raise CheckpointError(
                "torch.utils.checkpoint: A different number of tensors was saved during the "
                f"original forward and recomputation.\nNumber of tensors saved during "
                f"forward: {n}\nNumber of tensors saved during recomputation: {m}.\n"
                f"{missing}{self._divergence(gid)}{DEBUG_TIP}")
        bad_meta, bad_values = [], []
        for idx, ref in enumerate(self.weak_holders):
            holder = ref()
            if holder is None:
                continue
            internal_assert(holder.handles.get(gid) in self.recomputed[gid])
            x = self.recomputed[gid][holder.handles[gid]]._tensor
            meta = self.metadata_fn(x)
            if meta != self.metadata[idx]:
                bad_meta.append(f"tensor at position {idx}:\nsaved metadata: "
                                f"{self.metadata[idx]}\nrecomputed metadata: {meta}\n"
                                f"{self._where(idx, gid)}")
            elif self.values is not None:
                diff = _difference(self.values[idx], x._data)
                if diff:
                    bad_values.append(f"tensor at position {idx} ({_describe(x)}):\n{diff}\n"
                                      f"{self._where(idx, gid)}")
        if bad_meta:
            raise CheckpointError(
                "torch.utils.checkpoint: Recomputed values for the following tensors have "
                f"different metadata than during the forward pass.\n{''.join(bad_meta)}.\n"
                f"{DEBUG_TIP}")
        if bad_values:
            raise CheckpointError(
                "torch.utils.checkpoint: Recomputed values for the following tensors differ "
                "from the values saved during the forward pass (determinism_check='values')."
                f"\n{''.join(bad_values)}.\n{DEBUG_TIP}")

    def _divergence(self, gid):
        """Where the two runs' saves first part ways, if before one of them ended."""
        for idx, (a, b) in enumerate(zip(self.sites, self.recomp_sites[gid], strict=False)):
            if str(a) != str(b):
                return (f"The runs part at position {idx}: the forward saved a tensor by {a}, "
                        f"the recomputation by {b}.\n")
        return ""

    def _where(self, idx, gid):
        saved, again = str(self.sites[idx]), str(self.recomp_sites[gid][idx])
        line = f"saved by {saved}\n"
        return line if again == saved else line + f"recomputed by {again}\n"


def _describe(x):
    return f"shape {list(x.shape)}, dtype {x.dtype}"


def _difference(saved, again):
    """How two arrays of one shape differ ('' when equal, NaNs equal)."""
    saved, again = _host(saved), _host(again)
    same = saved == again
    if saved.dtype.kind in "fc":
        same |= numpy.isnan(saved) & numpy.isnan(again)
    count = int(same.size - same.sum())
    if not count:
        return ""
    gap = numpy.abs(saved.astype(numpy.complex128) - again.astype(numpy.complex128))
    gap = numpy.where(same, 0, numpy.nan_to_num(gap, nan=numpy.inf))
    at = numpy.unravel_index(int(numpy.argmax(gap)), saved.shape) if saved.ndim else ()
    return (f"{count} of {saved.size} elements differ; the largest difference is "
            f"{float(gap[at]):.6g} at index {tuple(int(i) for i in at)} (forward "
            f"{saved[at].item()!r}, recomputed {again[at].item()!r})")


def _host(arr):
    return arr if type(arr) is numpy.ndarray else arr.get()
