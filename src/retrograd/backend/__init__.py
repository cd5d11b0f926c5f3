"""The backend seam: which array module holds a tensor's data, and devices.

Ops never import NumPy to compute on tensor data; they receive ``xp`` (the
module returned by :func:`get_array_module`) so a CuPy backend can slot in by
adding its module here. CuPy is imported lazily and only if installed.
"""

import contextlib
import math
import threading

import numpy

from . import emulated, gpu, meta

__all__ = ["Device", "device", "cpu", "get_array_module", "host_array_module", "device_of",
           "erf", "set_default_device", "get_default_device", "to_device", "emulate_cuda",
           "emulating_cuda", "cuda_runtime", "special_functions", "host_joins_meta",
           "joined_device", "on_device", "device_guard", "writeable",
           "check_writeable"]

# The device types torch.device parses (in its order, which its error message prints).
_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve",
          "fpga", "maia", "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia",
          "privateuseone")


class Device:
    """A device: ``type`` ('cpu' or 'cuda') and optional ``index``, as torch.device."""

    __slots__ = ("type", "index")

    def __init__(self, type, index=None):  # noqa: A002 (PyTorch's argument name)
        if isinstance(type, Device):
            type, index = type.type, type.index
        elif ":" in type:
            name, _, idx = type.partition(":")
            if not idx.isdigit():
                raise RuntimeError(f"Invalid device string: '{type}'")
            type, index = name, int(idx)
        if type not in _TYPES:
            raise RuntimeError(f"Expected one of {', '.join(_TYPES)} device type at start of "
                               f"device string: {type}")
        self.type = type
        self.index = index

    def __repr__(self):
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other):
        if isinstance(other, str):
            other = Device(other)
        return (isinstance(other, Device) and self.type == other.type
                and self.index == other.index)

    def __hash__(self):
        return hash((self.type, self.index))

    def __enter__(self):
        """``with device:`` makes it the default device inside, as PyTorch's."""
        global _default_device
        _entered.append(_default_device)
        _default_device = self
        return self

    def __exit__(self, *exc):
        global _default_device
        _default_device = _entered.pop()


device = Device
cpu = Device("cpu")
_META = Device("meta")


def get_array_module(array):
    """numpy; the emulator's namespace for its arrays; cupy for CuPy arrays (checked by
    type name so CuPy stays optional); a batch's own namespace for batched arrays (vmap,
    batched gradients: ``autograd._batched``)."""
    t = type(array)
    if t is numpy.ndarray:  # (first: the hot loops ask for the CPU's arrays)
        return numpy
    if t is emulated.ndarray:
        return emulated.namespace
    if t is meta.ndarray:
        return meta.namespace
    if t.__module__.startswith("cupy"):
        import cupy
        return cupy
    if hasattr(t, "batched_namespace"):
        return array.batched_namespace()
    return numpy


def host_array_module():
    """The array module of CPU tensors' data, for what PyTorch keeps on the host whatever
    the device computes on (an optimizer's step count, a packed sequence's lengths and
    batch sizes)."""
    return numpy


def writeable(array):
    """Whether ``array``'s memory may be written in place: NumPy's flag (False for a
    broadcast view or a read-only buffer); CuPy's arrays always may (their flags have no
    ``writeable``)."""
    return getattr(array.flags, "writeable", True)


def check_writeable(array, what):
    """Refuse a write into ``array`` where NumPy's flag forbids it (a tensor of
    ``from_numpy`` over a read-only array), whatever writes it: a compiled kernel writes
    through its address, and read-only memory (a file mapped read-only) would crash the
    process. PyTorch writes there after a warning at ``from_numpy``."""
    if not writeable(array):
        raise ValueError(f"{what} is read-only: its memory is a NumPy array's that is not "
                         f"writable; clone() it, or make that array writable, before writing "
                         f"to it")


def _placement(array):
    """Where ``array`` lives: its device, and the runtime that makes that device current
    (None for the host's and meta arrays); a batch's (vmap's), its data's. The one place
    that tells devices apart by array type (:func:`device_of`, :func:`device_guard`)."""
    t = type(array)
    if t is numpy.ndarray:
        return cpu, None
    if t is emulated.ndarray:
        return Device("cuda", array._dev), emulated
    if t is meta.ndarray:
        return _META, None
    if t.__module__.startswith("cupy"):
        return Device("cuda", array.device.id), gpu
    if hasattr(t, "batched_namespace"):
        return _placement(array.data)
    return cpu, None


def device_of(array):
    """The device holding ``array``; a batch's (vmap's), the device of its data."""
    return _placement(array)[0]


_emulating = False  # whether device "cuda" runs on the CuPy-shaped emulator


def emulate_cuda(on=True):
    """Run device ``"cuda"`` on :mod:`.emulated` (CuPy's rules on NumPy, two devices), so
    GPU code paths and the seam are tested on a machine without a GPU. Returns the
    previous setting."""
    global _emulating
    prev, _emulating = _emulating, bool(on)
    return prev


def emulating_cuda():
    return _emulating


def cuda_runtime():
    """What device "cuda" runs on and ``retrograd.cuda`` asks (``count()``, ``current()``,
    ``select(index)``, ``guard(index)``, ``is_array(array)``, and ``cupy()``: CuPy's
    module, or the emulator's CuPy-shaped one with its ``cuda`` streams, events and
    pool): the emulator while emulating, else CuPy's GPUs (:mod:`.gpu`, none without
    CuPy)."""
    return emulated if _emulating else gpu


class _Joining(threading.local):
    meta = False


_joining = _Joining()


@contextlib.contextmanager
def host_joins_meta():
    """Inside, a CPU tensor in one op with meta tensors joins the meta device, so a
    shape-only dry run can call code that closes over host tensors (a loss function's
    targets). Outside, mixing them is PyTorch's error. Per thread."""
    prev, _joining.meta = _joining.meta, True
    try:
        yield
    finally:
        _joining.meta = prev


def joined_device(devices):
    """The device an op over tensors on ``devices`` (distinct, at least two) runs on:
    meta when CPU tensors join it (:func:`host_joins_meta`), else PyTorch's error."""
    if _joining.meta and {d.type for d in devices} == {"cpu", "meta"}:
        return next(d for d in devices if d.type == "meta")
    a, b = devices[:2]
    raise RuntimeError(f"Expected all tensors to be on the same device, but found at least "
                       f"two devices, {a} and {b}!")


def device_guard(array):
    """A context making ``array``'s device current while an op computes on it, or None
    where it already is (or is the host's or meta): CuPy allocates and launches on the
    current device whatever device the inputs are on, so an op on a tensor of another
    device runs with that device current, as PyTorch's device guard makes it."""
    dev, runtime = _placement(array)
    return None if runtime is None else runtime.guard(dev.index)


def to_device(array, dev):
    """``array`` (host or device) as an array on device ``dev`` (itself when it is there).
    Moving to ``meta`` keeps the shape and dtype only; out of it there is nothing to copy.
    A batch of arrays (vmap's, as :func:`get_array_module` tells them) moves its data and
    stays a batch of the same level."""
    t = type(array)
    if t is not numpy.ndarray and hasattr(t, "batched_namespace"):
        return array.like(to_device(array.data, dev))
    if dev.type == "meta":
        return meta.namespace.asarray(array if type(array) is meta.ndarray
                                      else meta.ndarray(array.shape, array.dtype))
    if type(array) is meta.ndarray:
        raise NotImplementedError(meta.NO_DATA)
    if dev.type == "cpu":
        return array.get() if type(array) is emulated.ndarray or gpu.is_array(array) else array
    if not _emulating:
        return gpu.from_host(array, gpu.current() if dev.index is None else dev.index)
    index = emulated.current() if dev.index is None else dev.index
    if type(array) is emulated.ndarray:
        if array._dev == index:
            return array
        array = array.get()
    with emulated.Device(index):
        return emulated.namespace.array(array)


_default_device = None  # set_default_device's device; None: CPU
_device_map = {}  # device type -> the Device it runs on instead (set_device_map)
_on_first_mapping = None


def set_device_map(mapping, on_first_use=None):
    """Run what asks for one device type on another (``{"cuda": "cpu"}``): how
    ``python -m retrograd run --device-map cuda=cpu`` runs a GPU script on the CPU.
    ``on_first_use(source, target)`` is called when the first request is mapped."""
    global _on_first_mapping
    new = {Device(src).type: _available(Device(dst)) for src, dst in mapping.items()}
    _device_map.clear()
    _device_map.update(new)
    _on_first_mapping = on_first_use


def is_mapped(device_type):
    """Whether the device map runs ``device_type`` on another device."""
    return device_type in _device_map


def check_device(dev):
    """Normalise a device argument (None: the default device; then the device map).
    Devices are the CPU, meta and cuda (CuPy's GPUs, or the emulator when it is on);
    asking for cuda without either fails as on PyTorch's CPU-only build."""
    global _on_first_mapping
    if dev is None:
        dev = _default_device
        if dev is None:
            return cpu
    dev = dev if isinstance(dev, Device) else Device(dev)
    target = _device_map.get(dev.type)
    if target is None:
        return _available(dev)
    if _on_first_mapping is not None:
        note, _on_first_mapping = _on_first_mapping, None
        note(dev, target)
    return target


def _available(dev):
    if dev.type == "cuda":
        runtime = cuda_runtime()
        n = runtime.count()
        if n == 0:
            raise AssertionError("Torch not compiled with CUDA enabled")
        if dev.index is not None and not 0 <= dev.index < n:
            raise RuntimeError("CUDA error: invalid device ordinal")
        if dev.index is not None:
            return dev
        return Device("cuda", runtime.current())
    if dev.type == "meta":
        return _META
    if dev.type != "cpu":
        raise NotImplementedError(
            f"Could not run 'aten::empty.memory_format' with arguments from the "
            f"'{dev.type.upper() if len(dev.type) <= 3 else dev.type.capitalize()}' backend: "
            f"retrograd has only the CPU backend")
    return dev


_entered = []  # the default devices that ``with device:`` blocks replaced, innermost last


def set_default_device(device):
    """The device factory functions use when given none (``None``: the CPU), as
    ``torch.set_default_device``; an unavailable device fails at its first use.

    >>> set_default_device("cpu"); get_default_device()
    device(type='cpu')
    """
    global _default_device
    if isinstance(device, int):
        raise RuntimeError("Cannot access accelerator device when none is available.")
    _default_device = None if device is None else Device(device)


def get_default_device():
    """The device factory functions use when given none (asking for CUDA's fails, as on
    PyTorch's CPU-only build)."""
    if _default_device is None:
        return cpu
    if _default_device.type == "cuda":
        check_device(_default_device)
    return _default_device


def special_functions(xp):
    """The ``scipy.special`` of array module ``xp``: ``cupyx.scipy.special`` for CuPy, the
    emulator's for its arrays, SciPy's for NumPy, a batched namespace's own (None without
    SciPy)."""
    if xp is emulated.namespace:
        return emulated.special
    if getattr(xp, "batched", False):  # a batched namespace: over its data's module's
        return xp.special
    if getattr(xp, "__name__", "") == "cupy":
        import cupyx.scipy.special
        return cupyx.scipy.special
    try:
        import scipy.special
    except ImportError:  # pragma: no cover - exercised only without SciPy
        return None
    return scipy.special


_math_erf = numpy.frompyfunc(math.erf, 1, 1)


def erf(xp, x):
    """The error function on a float array, keeping its dtype (NumPy has none: SciPy's,
    or ``math.erf`` elementwise without SciPy)."""
    sp = special_functions(xp)
    if sp is None:  # pragma: no cover - exercised only without SciPy
        return _math_erf(x).astype(x.dtype)
    return sp.erf(x)


def _keep_freed_blocks():
    """Have glibc keep freed blocks of up to 256 MiB for reuse. By default it returns every
    large array's pages to the OS on free, so each new activation-sized temporary pays
    its page faults again (about 1 ms per 6 MB): half the time of elementwise ops on
    training-sized arrays, and most of vmap's per-sample gradients (52 MB for a 784-256
    layer over 64 samples: 6.6 ms fresh, 2.3 ms reused). The process then keeps up to
    1 GiB of freed memory at the heap's top; RETROGRAD_KEEP_FREED_BLOCKS=0 leaves glibc's
    defaults alone. A glibc that caps the threshold at 32 MiB (its documented maximum,
    which 2.36 does not enforce) gets 32 MiB."""
    import ctypes
    import os
    if os.environ.get("RETROGRAD_KEEP_FREED_BLOCKS", "1") == "0":
        return
    try:
        if not os.confstr("CS_GNU_LIBC_VERSION"):
            return
    except (AttributeError, ValueError, OSError):  # not glibc
        return
    mallopt = ctypes.CDLL(None).mallopt
    if not mallopt(-3, 256 << 20):  # M_MMAP_THRESHOLD: heap (reusable) blocks below it
        mallopt(-3, 32 << 20)
    mallopt(-1, 1 << 30)   # M_TRIM_THRESHOLD: hand the heap top back only past 1 GiB


_keep_freed_blocks()


# ---- the NumPy backend's floating-point error state (issue 13: NumPy named here only) -----

# PyTorch does not warn on inf/nan results (log(0), x/0); neither do NumPy's arrays here
# (CuPy's never warn). Set at import, for the importing thread (NumPy keeps it per
# context), as ``import retrograd`` did; the ops that must see one kind of error (an
# integer cast of NaN) ask with ``functions(xp).errstate``.
numpy.seterr(all="ignore")


# ---- creation on a device (issue 13): a device's array module, with the device current ----

def on_device(dev, make):
    """``make(xp)`` with ``xp`` the array module of device ``dev``, run with ``dev``
    current, so that what ``make`` allocates (``xp.zeros``, ``xp.arange``, ...) lands on
    ``dev`` with no host array copied there: CuPy and the emulator allocate on their
    current device, the meta device without memory, the CPU with NumPy."""
    kind = dev.type
    if kind == "cpu":
        return make(numpy)
    if kind == "meta":
        return meta.on_device(make)
    if _emulating:
        return emulated.on_device(dev.index, make)
    return gpu.on_device(dev.index, make)
