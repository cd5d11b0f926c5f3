"""``torch.accelerator``: the device-generic API, as on a machine without an accelerator.

The CPU is not an accelerator, so ``is_available()`` is False, ``current_accelerator()``
None and ``device_count()`` 0; every call that needs a device raises PyTorch's
``RuntimeError``, which portable code guards with ``is_available()``.
"""

__all__ = ["is_available", "current_accelerator", "device_count", "current_device_index",
           "set_device_index", "synchronize", "empty_cache", "current_stream", "set_stream",
           "device_index", "get_device_capability", "get_memory_info", "memory_allocated",
           "max_memory_allocated", "memory_reserved", "max_memory_reserved", "memory_stats",
           "reset_peak_memory_stats", "reset_accumulated_memory_stats", "empty_host_cache"]

_NONE = "Cannot access accelerator device when none is available."


def is_available():
    return False


def current_accelerator(check_available=False):
    """The accelerator's device type: None, there is none."""
    return None


def device_count():
    return 0


def _needs_device(name):
    def needs_device(*args, **kwargs):
        raise RuntimeError(_NONE)
    needs_device.__name__ = needs_device.__qualname__ = name
    needs_device.__doc__ = f"``torch.accelerator.{name}``: raises, there is no accelerator."
    return needs_device


current_device_index = _needs_device("current_device_index")
set_device_index = _needs_device("set_device_index")
synchronize = _needs_device("synchronize")
empty_cache = _needs_device("empty_cache")
current_stream = _needs_device("current_stream")
set_stream = _needs_device("set_stream")
get_device_capability = _needs_device("get_device_capability")
get_memory_info = _needs_device("get_memory_info")
memory_allocated = _needs_device("memory_allocated")
max_memory_allocated = _needs_device("max_memory_allocated")
memory_reserved = _needs_device("memory_reserved")
max_memory_reserved = _needs_device("max_memory_reserved")
memory_stats = _needs_device("memory_stats")
reset_peak_memory_stats = _needs_device("reset_peak_memory_stats")
reset_accumulated_memory_stats = _needs_device("reset_accumulated_memory_stats")
empty_host_cache = _needs_device("empty_host_cache")


class device_index:
    """``with device_index(i):`` selects accelerator ``i``; ``None`` selects nothing."""

    def __init__(self, device, /):
        self.idx = device

    def __enter__(self):
        if self.idx is not None:
            raise RuntimeError(_NONE)

    def __exit__(self, *exc):
        return False
