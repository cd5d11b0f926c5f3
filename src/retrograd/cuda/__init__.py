"""``retrograd.cuda``: ``torch.cuda`` as PyTorch's CPU-only build has it.

What needs no GPU answers (``is_available()`` is False, ``device_count()`` 0, seeding is
accepted and kept for a GPU that never comes, as PyTorch queues it); what needs one
raises PyTorch's ``AssertionError: Torch not compiled with CUDA enabled``.
``retrograd.cuda.memory`` is :mod:`retrograd.memory` (the accounting of the device the
tensors are on), so code written for ``torch.cuda.memory`` (the tutorials' snapshots)
runs unchanged.
"""

from .. import _tensor_types
from . import memory
from .memory import (max_memory_allocated, max_memory_reserved, memory_allocated,
                     memory_reserved, memory_stats, memory_summary, reset_max_memory_allocated,
                     reset_peak_memory_stats, empty_cache)

__all__ = ["memory", "is_available", "device_count", "is_initialized", "init",
           "current_device", "set_device", "get_device_name", "get_device_capability",
           "get_device_properties", "synchronize", "ipc_collect", "mem_get_info",
           "current_stream", "default_stream", "manual_seed", "manual_seed_all", "seed",
           "seed_all", "initial_seed", "get_rng_state", "set_rng_state", "get_rng_state_all",
           "set_rng_state_all", "is_bf16_supported", "is_tf32_supported", "get_arch_list",
           "get_gencode_flags", "device", "Stream", "Event", "max_memory_allocated",
           "max_memory_reserved", "memory_allocated", "memory_reserved", "memory_stats",
           "memory_summary", "reset_max_memory_allocated", "reset_peak_memory_stats",
           "empty_cache", *_tensor_types.cuda_types]

globals().update(_tensor_types.cuda_types)  # torch.cuda.FloatTensor, ...: not callable here


def _not_compiled(*args, **kwargs):
    raise AssertionError("Torch not compiled with CUDA enabled")


def _needs_cuda(name, doc):
    """A function that needs a GPU: PyTorch's CPU-only build raises on the call."""

    def needs_cuda(*args, **kwargs):
        _not_compiled()
    needs_cuda.__name__ = needs_cuda.__qualname__ = name
    needs_cuda.__doc__ = doc + " Raises: there is no GPU."
    return needs_cuda


init = _needs_cuda("init", "Initialize CUDA's state.")
current_device = _needs_cuda("current_device", "The selected GPU's index.")
get_device_name = _needs_cuda("get_device_name", "A GPU's name.")
get_device_capability = _needs_cuda("get_device_capability", "A GPU's compute capability.")
get_device_properties = _needs_cuda("get_device_properties", "A GPU's properties.")
synchronize = _needs_cuda("synchronize", "Wait for a GPU's kernels to finish.")
ipc_collect = _needs_cuda("ipc_collect", "Free GPU memory shared with other processes.")
mem_get_info = _needs_cuda("mem_get_info", "A GPU's free and total memory.")
current_stream = _needs_cuda("current_stream", "The stream a GPU runs kernels on.")
default_stream = _needs_cuda("default_stream", "A GPU's default stream.")
initial_seed = _needs_cuda("initial_seed", "The seed of the current GPU's generator.")
get_rng_state = _needs_cuda("get_rng_state", "A GPU generator's state.")


def is_available():
    return False


def device_count():
    return 0


def is_initialized():
    return False


def _device_index(device):
    """A device argument as an index; 'cpu' is refused as PyTorch refuses it."""
    if isinstance(device, int) or device is None:
        return device
    from ..backend import Device
    dev = Device(device)
    if dev.type != "cuda":
        raise ValueError(f"Expected a cuda device, but got: {dev}")
    return -1 if dev.index is None else dev.index


def set_device(device):
    """Select a GPU; a negative index is a no-op, as in PyTorch."""
    if _device_index(device) >= 0:
        _not_compiled()


def _check_seed(seed):
    """The seed as an int (PyTorch queues it for a GPU initialized later)."""
    return int(seed)


def manual_seed(seed):
    """Accepted and dropped: there is no GPU generator to seed."""
    _check_seed(seed)


def manual_seed_all(seed):
    _check_seed(seed)


def seed():
    """Nothing to seed without a GPU."""


def seed_all():
    """Nothing to seed without a GPU."""


def set_rng_state(new_state, device="cuda"):
    """Accepted: PyTorch queues it until CUDA is initialized, which never happens here."""


def get_rng_state_all():
    """One state per GPU: none."""
    return []


def set_rng_state_all(new_states):
    for state in new_states:
        set_rng_state(state)


def is_bf16_supported(including_emulation=True):
    return False


def is_tf32_supported():
    return False


def get_arch_list():
    return []


def get_gencode_flags():
    return ""


class device:
    """``with torch.cuda.device(i):``; entering a real index fails as on PyTorch's
    CPU-only build, index -1 (no device) is a no-op."""

    def __init__(self, device):
        self.idx = _device_index(device)
        self.prev_idx = -1

    def __enter__(self):
        if self.idx is not None and self.idx >= 0:
            raise RuntimeError("PyTorch was compiled without CUDA support")

    def __exit__(self, *exc):
        return False


class Stream:
    def __new__(cls, *args, **kwargs):
        raise RuntimeError("torch.cuda.Stream requires CUDA support")


class Event:
    def __new__(cls, *args, **kwargs):
        raise RuntimeError("Tried to instantiate dummy base class Event")
