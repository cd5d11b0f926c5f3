"""``torch.accelerator``: the device-generic API. With a GPU (CuPy) the accelerator is
CUDA and each call is ``torch.cuda``'s; without one there is no accelerator (the CPU is
not one): ``is_available()`` is False, ``current_accelerator()`` None and
``device_count()`` 0, and every call that needs a device raises PyTorch's
``RuntimeError``, which portable code guards with ``is_available()``.
"""

from . import cuda as _cuda
from .backend import Device

__all__ = ["is_available", "current_accelerator", "device_count", "current_device_index",
           "set_device_index", "synchronize", "empty_cache", "current_stream", "set_stream",
           "device_index", "get_device_capability", "get_memory_info", "memory_allocated",
           "max_memory_allocated", "memory_reserved", "max_memory_reserved", "memory_stats",
           "reset_peak_memory_stats", "reset_accumulated_memory_stats", "empty_host_cache"]

_NONE = "Cannot access accelerator device when none is available."


def is_available():
    return _cuda.is_available()


def current_accelerator(check_available=False):
    """The accelerator's device type: CUDA's with a GPU, else None."""
    if not _cuda.is_available():
        return None
    return Device("cuda")


def device_count():
    return _cuda.device_count()


def _on_gpu(name, doc, call):
    """``torch.accelerator.<name>``: ``call`` with a GPU, else PyTorch's error."""

    def fn(*args, **kwargs):
        if not _cuda.is_available():
            raise RuntimeError(_NONE)
        return call(*args, **kwargs)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``torch.accelerator.{name}``: {doc}; raises without an accelerator."
    return fn


def _index(device_index=None):
    return _cuda._device_index(device_index)


current_device_index = _on_gpu("current_device_index", "the current GPU's index",
                               _cuda.current_device)
set_device_index = _on_gpu("set_device_index", "select a GPU", _cuda.set_device)
synchronize = _on_gpu("synchronize", "wait for a GPU's work", _cuda.synchronize)
empty_cache = _on_gpu("empty_cache", "release the pool's cached blocks", _cuda.empty_cache)
current_stream = _on_gpu("current_stream", "the stream ops queue work on",
                         _cuda.current_stream)
set_stream = _on_gpu("set_stream", "make a stream the current one", _cuda.set_stream)
get_device_capability = _on_gpu("get_device_capability", "a GPU's compute capability",
                                _cuda.get_device_capability)
get_memory_info = _on_gpu("get_memory_info", "a GPU's free and total bytes",
                          lambda device_index=None: _cuda.mem_get_info(device_index))
memory_allocated = _on_gpu("memory_allocated", "bytes of its live storages",
                           lambda device_index=None: _cuda.memory_allocated(_index(device_index)))
max_memory_allocated = _on_gpu(
    "max_memory_allocated", "the peak of memory_allocated",
    lambda device_index=None: _cuda.max_memory_allocated(_index(device_index)))
memory_reserved = _on_gpu("memory_reserved", "bytes of its memory pool",
                          lambda device_index=None: _cuda.memory_reserved(_index(device_index)))
max_memory_reserved = _on_gpu(
    "max_memory_reserved", "the peak of memory_reserved",
    lambda device_index=None: _cuda.max_memory_reserved(_index(device_index)))
memory_stats = _on_gpu("memory_stats", "PyTorch's memory counters",
                       lambda device_index=None: _cuda.memory_stats(_index(device_index)))
reset_peak_memory_stats = _on_gpu(
    "reset_peak_memory_stats", "restart the peaks",
    lambda device_index=None: _cuda.reset_peak_memory_stats(_index(device_index)))
reset_accumulated_memory_stats = _on_gpu(
    "reset_accumulated_memory_stats", "nothing is accumulated beyond the peaks",
    lambda device_index=None: None)
empty_host_cache = _on_gpu("empty_host_cache", "release CuPy's pinned-memory pool",
                           lambda: _cuda._cupy().get_default_pinned_memory_pool()
                           .free_all_blocks())


class device_index:
    """``with device_index(i):`` selects accelerator ``i``; ``None`` selects nothing."""

    def __init__(self, device, /):
        self.idx = device
        self._inner = None

    def __enter__(self):
        if self.idx is None:
            return
        if not _cuda.is_available():
            raise RuntimeError(_NONE)
        self._inner = _cuda.device(self.idx)
        self._inner.__enter__()

    def __exit__(self, *exc):
        if self._inner is not None:
            self._inner.__exit__(*exc)
            self._inner = None
        return False
