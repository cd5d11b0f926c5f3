"""Memory accounting by category, history and snapshots on any device (PyTorch has them
for CUDA only, as ``torch.cuda.memory``; ``retrograd.cuda.memory`` is this module).

Categories: parameter, gradient (parameters' ``.grad``), comm_bucket (DDP's flat
buffers that gradients are reduced in), optimizer_state, activation (tensors held by the
autograd graph), temporary (kernel temporaries, exact mode only) and other. Accounting
starts at the first call into this module (it then finds the storages already alive) and
costs nothing before. ``exact=True`` in
:func:`_record_memory_history` also books each kernel's transient memory, measured
through tracemalloc's NumPy domain, as short-lived "temporary" blocks (slower: tracemalloc
traces every Python allocation).

>>> retrograd.memory._record_memory_history()
>>> train(model, optimizer)
>>> retrograd.memory._dump_snapshot("snapshot.pickle")   # python -m retrograd memory-viz
"""

import sys
from collections import OrderedDict

from ..backend import Device, cuda_runtime, emulating_cuda, gpu
from . import snapshot as _snap
from ._bytes import format_bytes as _fmt
from .tracker import CATEGORIES, TRACKER

__all__ = ["memory_allocated", "max_memory_allocated", "memory_reserved",
           "max_memory_reserved", "reset_peak_memory_stats", "reset_max_memory_allocated",
           "memory_stats", "memory_summary", "empty_cache", "stop_accounting", "CATEGORIES"]


def _books(device=None):
    """The tracker (started on first use) after checking ``device``."""
    _on_gpu(device)
    TRACKER.start()
    return TRACKER


def _on_gpu(device):
    """Whether ``device`` names the GPU's books: a cuda device (CuPy's, or the emulated
    one), or an index or None while a GPU is present (PyTorch's default is the current
    CUDA device)."""
    present = gpu.cupy() is not None or emulating_cuda()
    if device is not None and not isinstance(device, int):
        d = device if isinstance(device, Device) else Device(device)
        if d.type not in ("cpu", "cuda"):
            raise ValueError(f"Expected a cpu or cuda device, but got: {device}")
        return d.type == "cuda" and present
    return present


def _gpu_index(device):
    """The index of the GPU ``device`` names (None, or no index: the current one)."""
    if isinstance(device, int):
        return device
    d = None if device is None else device if isinstance(device, Device) else Device(device)
    return cuda_runtime().current() if d is None or d.index is None else d.index


class _Pools:
    """Each GPU's memory pool's reserved bytes (CuPy's, or the emulator's), and their
    peaks: a pool only grows until ``empty_cache`` (``free_all_blocks``) hands its free
    blocks back, so a peak is the largest of its size now and its sizes before each
    release or reset. The pool answers for the current device, so each question is
    asked with the named device current."""

    def __init__(self):
        self.peaks = {}

    @staticmethod
    def reserved(index):
        cp = cuda_runtime().cupy()
        with cp.cuda.Device(index):
            return cp.get_default_memory_pool().total_bytes()

    def max_reserved(self, index):
        peak = self.peaks[index] = max(self.peaks.get(index, 0), self.reserved(index))
        return peak

    def release(self):
        """Every device's cached free blocks, as PyTorch's ``empty_cache``."""
        runtime = cuda_runtime()
        cp = runtime.cupy()
        for index in range(runtime.count()):
            self.max_reserved(index)
            with cp.cuda.Device(index):
                cp.get_default_memory_pool().free_all_blocks()

    def reset(self, index):
        self.peaks[index] = self.reserved(index)


_POOLS = _Pools()


def _ledger(device):
    """The books of ``device``: a GPU's own, or the host's."""
    return _books(device).ledger(_gpu_index(device) if _on_gpu(device) else None)


def memory_allocated(device=None):
    """Bytes held by live storages now (on a GPU: its storages; on the CPU: the host's)."""
    return _ledger(device).total


def max_memory_allocated(device=None):
    """The largest ``memory_allocated`` since accounting began or the last reset."""
    return _ledger(device).peak


def memory_reserved(device=None):
    """On a GPU, the bytes its pool holds (allocated, and cached for reuse); on the CPU
    equal to ``memory_allocated``: NumPy's arrays are not served from a cache."""
    if _on_gpu(device):
        _books(device)
        return _POOLS.reserved(_gpu_index(device))
    return memory_allocated(device)


def max_memory_reserved(device=None):
    if _on_gpu(device):
        _books(device)
        return _POOLS.max_reserved(_gpu_index(device))
    return max_memory_allocated(device)


def reset_peak_memory_stats(device=None):
    _books(device).reset_peak()
    if _on_gpu(device):
        _POOLS.reset(_gpu_index(device))


def reset_max_memory_allocated(device=None):
    _books(device).reset_peak()


def empty_cache():
    """On a GPU, hand each device's pool's cached free blocks back to the driver; on the
    CPU nothing to release: freed arrays go straight back to the system allocator."""
    _books()
    if _on_gpu(None):
        _POOLS.release()


def memory_stats(device=None):
    """PyTorch's keys for the whole device (``allocated_bytes.all.current`` ...), plus per
    category ``allocated_bytes.<category>.current`` and ``.at_peak`` (its share of the
    device's peak), and ``by_module``: per ``nn.Module`` path (``""``: outside any
    module; ``"Adam.step"``: an optimizer's step), ``{"at_peak": {category: bytes},
    "current": {category: bytes}, "peak": bytes}``, the bytes of the storages made while
    it ran (in its forward, or in backward by the nodes its forward recorded; a module's
    own parameters and buffers too) at the device's peak and now, and the most they
    held at once.

    >>> at_peak = retrograd.memory.memory_stats()["by_module"]["GPT.blocks.0.attn"]["at_peak"]
    >>> at_peak["activation"]   # bytes of the activations its forward saved, at the peak
    """
    t = _ledger(device)
    n = t.n_live
    s = {"allocated_bytes.all.current": t.total, "allocated_bytes.all.peak": t.peak,
         "allocated_bytes.all.allocated": t.total + t.bytes_freed,
         "allocated_bytes.all.freed": t.bytes_freed,
         "allocation.all.current": n, "allocation.all.peak": t.n_peak,
         "allocation.all.allocated": n + t.n_free, "allocation.all.freed": t.n_free,
         "num_alloc_retries": 0, "num_ooms": 0}
    for prefix in ("active_bytes", "reserved_bytes", "requested_bytes"):
        for k in ("current", "peak", "allocated", "freed"):
            s[f"{prefix}.all.{k}"] = s[f"allocated_bytes.all.{k}"]
    if _on_gpu(device):  # the device's pool
        index = _gpu_index(device)
        s["reserved_bytes.all.current"] = _POOLS.reserved(index)
        s["reserved_bytes.all.peak"] = _POOLS.max_reserved(index)
    current, at_peak = t.current, t.peak_breakdown
    for i, name in enumerate(CATEGORIES):
        s[f"allocated_bytes.{name}.current"] = current[i]
        s[f"allocated_bytes.{name}.at_peak"] = at_peak[i]
    s["by_module"] = t.by_module()
    return OrderedDict(sorted(s.items()))


def memory_summary(device=None, abbreviated=False):
    """A table of bytes by category, now and at the device's peak; then (unless
    ``abbreviated``) the modules holding the most at the peak."""
    s = memory_stats(device)
    rows = [f"{'category':<16}{'current':>14}{'at peak':>14}"]
    for name in (*CATEGORIES, "all"):
        at_peak = s["allocated_bytes.all.peak"] if name == "all" else \
            s[f"allocated_bytes.{name}.at_peak"]
        rows.append(f"{name:<16}{_fmt(s[f'allocated_bytes.{name}.current']):>14}"
                    f"{_fmt(at_peak):>14}")
    if not abbreviated:
        held = sorted(((sum(m["at_peak"].values()), path or "(outside modules)", m["peak"])
                       for path, m in s["by_module"].items()), key=lambda r: -r[0])
        rows.append(f"\n{'module (its own storages)':<40}{'at peak':>14}{'own peak':>14}")
        rows += [f"{path:<40}{_fmt(n):>14}{_fmt(own):>14}" for n, path, own in held[:10] if n]
    return "\n".join(rows) + "\n"


def _record_memory_history(enabled="all", context="all", stacks="all",
                           max_entries=sys.maxsize, device=None, clear_history=False, *,
                           exact=False):
    """Start (``"all"``: every allocation, free and category change with its Python stack;
    ``"state"``: only the stacks of live storages) or stop (None) recording history.

    context: which stacks are kept (``"alloc"``, ``"state"`` or ``"all"``, which adds
    frees; None: none). max_entries: the history keeps the newest entries. Allocations
    made in backward carry the stack of the forward op whose node made them. exact:
    also book kernel temporaries (see the module docstring).
    """
    if isinstance(enabled, bool):  # PyTorch's legacy form
        enabled = "all" if enabled else None
    if enabled not in (None, "state", "all"):
        raise ValueError(f"enabled must be None, 'state' or 'all', got {enabled!r}")
    if context not in (None, "state", "alloc", "all"):
        raise ValueError(f"context must be None, 'state', 'alloc' or 'all', got {context!r}")
    t = _books(device)
    t.record_history(enabled, context, stacks, max_entries, clear_history)
    t.set_exact(exact and enabled is not None)


def stop_accounting():
    """Stop counting (history too) and forget the books; the hot paths are as if memory
    accounting had never started, until the next call into this module."""
    TRACKER.stop()


def _snapshot(device=None):
    """The books in PyTorch's snapshot layout (see ``retrograd.memory.snapshot``)."""
    return _snap.snapshot(_books(device))


def _dump_snapshot(filename="dump_snapshot.pickle"):
    _snap.dump(_books(), filename)


def __getattr__(name):
    """``plan`` (the planner, :mod:`.planner`) is imported on first use: it needs
    ``retrograd.utils``, which ``import retrograd`` leaves unimported to stay fast."""
    if name == "plan":
        from .planner import plan
        return plan
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
