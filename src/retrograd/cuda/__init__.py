"""``retrograd.cuda``: ``torch.cuda`` on CuPy's GPUs, or as PyTorch's CPU-only build has it.

With a GPU (CuPy installed and its runtime seeing a device) the calls answer from CuPy's
runtime; while device "cuda" runs on the emulator (``backend.emulate_cuda``), from the
emulator's (``backend.cuda_runtime()`` is the one asked). Without either, what needs no
GPU answers (``is_available()`` is False, ``device_count()`` 0, seeding is accepted and
kept for a GPU that never comes, as PyTorch queues it); what needs one raises PyTorch's
``AssertionError: Torch not compiled with CUDA enabled``. The emulator's two devices
answer as two GPUs would: streams, events, properties, synchronization and free memory
included.
``retrograd.cuda.memory`` is :mod:`retrograd.memory` (the accounting of the device the
tensors are on), so code written for ``torch.cuda.memory`` (the tutorials' snapshots)
runs unchanged.
"""

from .. import _random, _tensor_types
from ..backend import cuda_runtime
from . import memory
from ._index import (current_device, cupy_or_raise as _cupy, device_index as _device_index,
                     runtime_or_raise as _runtime)
from .streams import (Event, Stream, StreamContext, current_stream, default_stream, set_stream,
                      stream)
from .memory import (max_memory_allocated, max_memory_reserved, memory_allocated,
                     memory_reserved, memory_stats, memory_summary, reset_max_memory_allocated,
                     reset_peak_memory_stats, empty_cache)

__all__ = ["memory", "is_available", "device_count", "is_initialized", "init",
           "current_device", "set_device", "get_device_name", "get_device_capability",
           "get_device_properties", "synchronize", "ipc_collect", "mem_get_info",
           "current_stream", "default_stream", "set_stream", "manual_seed", "manual_seed_all",
           "seed", "seed_all", "initial_seed", "get_rng_state", "set_rng_state",
           "get_rng_state_all", "set_rng_state_all", "is_bf16_supported", "is_tf32_supported",
           "get_arch_list", "get_gencode_flags", "device", "Stream", "Event", "stream",
           "StreamContext", "max_memory_allocated",
           "max_memory_reserved", "memory_allocated", "memory_reserved", "memory_stats",
           "memory_summary", "reset_max_memory_allocated", "reset_peak_memory_stats",
           "empty_cache", *_tensor_types.cuda_types]

globals().update(_tensor_types.cuda_types)  # torch.cuda.FloatTensor, ...: not callable here


def is_available():
    return cuda_runtime().count() > 0


def device_count():
    return cuda_runtime().count()


def is_initialized():
    return is_available()


def init():
    """Initialize CUDA's state (CuPy's runtime starts on first use)."""
    _runtime()


def _checked_index(device):
    index = _device_index(device)
    if not 0 <= index < device_count():
        raise RuntimeError("CUDA error: invalid device ordinal")
    return index


def set_device(device):
    """Select a GPU; a negative index is a no-op, as in PyTorch."""
    index = _device_index(device, optional=False)
    if index is not None and index >= 0:
        _runtime().select(_checked_index(index))


class _CUuuid:
    """A GPU's UUID: ``bytes``, printed in the 8-4-4-4-12 hexadecimal form."""

    __slots__ = ("bytes",)

    def __init__(self, raw):
        self.bytes = list(raw)

    def __str__(self):
        h = bytes(self.bytes).hex()
        return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


class _CudaDeviceProperties:
    """``torch.cuda.get_device_properties``'s answer, from the runtime's
    ``cudaDeviceProp`` (CuPy's dict of it)."""

    def __init__(self, props):
        g = props.get
        name = props["name"]
        self.name = name.decode() if isinstance(name, bytes) else str(name)
        self.major, self.minor = props["major"], props["minor"]
        self.total_memory = props["totalGlobalMem"]
        self.multi_processor_count = props["multiProcessorCount"]
        self.is_integrated = g("integrated", 0)
        self.is_multi_gpu_board = g("isMultiGpuBoard", 0)
        self.max_threads_per_multi_processor = g("maxThreadsPerMultiProcessor", 0)
        self.max_threads_per_block = g("maxThreadsPerBlock", 0)
        self.gcnArchName = self.name  # (a ROCm field: CUDA builds give the name)
        self.warp_size = g("warpSize", 0)
        self.regs_per_multiprocessor = g("regsPerMultiprocessor", 0)
        self.uuid = _CUuuid(g("uuid", bytes(16)))
        self.pci_bus_id, self.pci_device_id, self.pci_domain_id = \
            g("pciBusID", 0), g("pciDeviceID", 0), g("pciDomainID", 0)
        self.L2_cache_size = g("l2CacheSize", 0)
        self.clock_rate, self.memory_clock_rate = g("clockRate", 0), g("memoryClockRate", 0)
        self.memory_bus_width = g("memoryBusWidth", 0)
        self.shared_memory_per_block = g("sharedMemPerBlock", 0)
        self.shared_memory_per_multiprocessor = g("sharedMemPerMultiprocessor", 0)

    def __repr__(self):
        return (f"_CudaDeviceProperties(name='{self.name}', major={self.major}, "
                f"minor={self.minor}, total_memory={self.total_memory // 2**20}MB, "
                f"multi_processor_count={self.multi_processor_count}, uuid={self.uuid}, "
                f"pci_bus_id={self.pci_bus_id}, pci_device_id={self.pci_device_id}, "
                f"pci_domain_id={self.pci_domain_id}, "
                f"L2_cache_size={self.L2_cache_size // 2**20}MB)")


def get_device_properties(device=None):
    """A GPU's properties (name, compute capability, memory, ...).

    >>> retrograd.cuda.get_device_properties(0).total_memory
    """
    cp = _cupy()
    index = _device_index(device)
    if not 0 <= index < device_count():
        raise AssertionError("Invalid device id")
    return _CudaDeviceProperties(cp.cuda.runtime.getDeviceProperties(index))


def get_device_name(device=None):
    """A GPU's name."""
    return get_device_properties(device).name


def get_device_capability(device=None):
    """A GPU's compute capability, ``(major, minor)``."""
    p = get_device_properties(device)
    return p.major, p.minor


def synchronize(device=None):
    """Wait for every kernel queued on a GPU to finish."""
    cp = _cupy()
    with cp.cuda.Device(_checked_index(device)):
        cp.cuda.runtime.deviceSynchronize()


def ipc_collect():
    """Nothing is shared with other processes here: nothing to free."""
    _runtime()


def mem_get_info(device=None):
    """A GPU's free and total memory in bytes, as its driver reports them."""
    cp = _cupy()
    with cp.cuda.Device(_checked_index(device)):
        return cp.cuda.runtime.memGetInfo()


def _check_seed(seed):
    """The seed as an int (PyTorch queues it for a GPU initialized later)."""
    return int(seed)


def manual_seed(seed):
    """Seed the generator GPU tensors draw from. Their values are drawn on the host by
    the CPU generator and copied, so this seeds that one, as ``torch.manual_seed``
    does; without a GPU it is accepted and dropped."""
    seed = _check_seed(seed)
    if is_available():
        _random.default_generator.manual_seed(seed)


def manual_seed_all(seed):
    manual_seed(seed)


def seed():
    """Seed GPU tensors' generator (the CPU's: see manual_seed) from entropy."""
    if is_available():
        _random.default_generator.seed()


def seed_all():
    seed()


def initial_seed():
    """The seed of the generator GPU tensors draw from (the CPU's: see manual_seed)."""
    _runtime()
    return _random.default_generator.initial_seed()


def get_rng_state(device="cuda"):
    """The state of the generator GPU tensors draw from (the CPU's: see manual_seed)."""
    _runtime()
    return _random.default_generator.get_state()


def set_rng_state(new_state, device="cuda"):
    """Without a GPU accepted (PyTorch queues it until CUDA is initialized); with one,
    the state of the generator GPU tensors draw from (the CPU's: see manual_seed)."""
    if is_available():
        _random.default_generator.set_state(new_state)


def get_rng_state_all():
    """One state per GPU."""
    return [get_rng_state(i) for i in range(device_count())]


def set_rng_state_all(new_states):
    for state in new_states:
        set_rng_state(state)


def is_bf16_supported(including_emulation=True):
    return is_available() and get_device_capability()[0] >= 8


def is_tf32_supported():
    return is_available() and get_device_capability()[0] >= 8


def get_arch_list():
    if not is_available():
        return []
    major, minor = get_device_capability()
    return [f"sm_{major}{minor}"]


def get_gencode_flags():
    return " ".join(f"-gencode compute={a.replace('sm', 'compute')},code={a}"
                    for a in get_arch_list())


class device:
    """``with torch.cuda.device(i):`` selects GPU ``i`` inside and restores the previous
    one after; index -1 (no device) is a no-op. Without a GPU, entering a real index
    fails as on PyTorch's CPU-only build."""

    def __init__(self, device):
        self.idx = _device_index(device, optional=False)
        self.prev_idx = -1

    def __enter__(self):
        if self.idx is None or self.idx < 0:
            return
        if not is_available():
            raise RuntimeError("PyTorch was compiled without CUDA support")
        self.prev_idx = current_device()
        if self.prev_idx != self.idx:
            set_device(self.idx)

    def __exit__(self, *exc):
        if self.idx is not None and self.idx >= 0 and self.prev_idx != self.idx:
            set_device(self.prev_idx)
        return False
