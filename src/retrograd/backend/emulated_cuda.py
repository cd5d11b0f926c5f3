"""``cupy.cuda`` for the emulator (:mod:`.emulated`): devices, streams, events, device
properties, the memory pool and pinned host memory, as CUDA's runtime behaves on devices
that run each kernel to completion when it is queued.

Work is done when it is queued, so stream ordering holds by construction: every stream is
idle (``done``), ``synchronize`` returns at once, a wait is satisfied already, and an event
is complete when recorded (its time is the host's clock then). What CUDA refuses is
refused with CuPy's errors: making a stream current on a device that is not its own,
recording an event on a stream of another device, timing an event made without timing
or never recorded. Each thread has its current device and its current stream per
device, as CUDA's runtime and CuPy keep them.

The pool books each device's live arrays by the buffer that owns their memory (rounded
up to CuPy's 512-byte unit) and holds the most they held at once since its last
``free_all_blocks``: a caching allocator that reuses every freed block exactly.
"""

import collections
import ctypes
import itertools
import threading
import time
import uuid
import weakref

import numpy

__all__ = ["Device", "Stream", "Event", "get_current_stream", "get_elapsed_time", "runtime",
           "MemoryPool", "get_default_memory_pool", "alloc_pinned_memory", "DEVICES",
           "count", "current", "select", "guard", "book"]

DEVICES = 2  # emulated device ids: 0 and 1
_UNIT = 512  # CuPy's allocation unit


class CUDARuntimeError(RuntimeError):
    """``cupy_backends.cuda.api.runtime.CUDARuntimeError``."""


_INVALID_HANDLE = "cudaErrorInvalidResourceHandle: invalid resource handle"


class _Current(threading.local):
    """This thread's current device (a new thread starts on 0, as with CUDA) and its
    current stream on each device (the null stream until one is made current)."""

    def __init__(self):
        self.index = 0
        self.streams = {}


_current = _Current()


def count():
    """The number of emulated devices (``cupy.cuda.runtime.getDeviceCount``)."""
    return DEVICES


def current():
    """This thread's current device (``cupy.cuda.runtime.getDevice``)."""
    return _current.index


def select(index):
    """Make device ``index`` this thread's current one (``cupy.cuda.runtime.setDevice``)."""
    _current.index = Device(index).id


def guard(index):
    """A context making device ``index`` current, or None where it already is."""
    return None if index == _current.index else Device(index)


class Device:
    """``cupy.cuda.Device``: an id, and a context that makes it the current device."""

    __slots__ = ("id", "_prev")

    def __init__(self, device=None):
        self.id = _current.index if device is None else int(getattr(device, "id", device))
        if not 0 <= self.id < DEVICES:
            raise ValueError(f"Invalid device ID: {self.id} (there are {DEVICES})")

    def use(self):
        _current.index = self.id

    def __enter__(self):
        self._prev, _current.index = _current.index, self.id
        return self

    def __exit__(self, *exc):
        _current.index = self._prev

    def __eq__(self, other):
        return isinstance(other, Device) and other.id == self.id

    def __hash__(self):
        return hash(self.id)

    def __repr__(self):
        return f"<CUDA Device {self.id}>"


_handles = itertools.count(0x1000, 0x10)  # stream and event handles (0: the null stream)


def _stream_device(device_id):
    """The device a stream runs on (the null stream's: the current device), which must be
    the current one to make the stream current (CuPy's check)."""
    now = _current.index
    if device_id not in (-1, now):
        raise RuntimeError(f"The device that the stream is created on ({device_id}) does not "
                           f"match with the current device ({now})")
    return now


class Stream:
    """``cupy.cuda.Stream``: a queue of work on the device current at its creation (the
    null stream: on whichever device is current). Its work is done when queued."""

    null = None  # the legacy default stream, set below

    def __init__(self, null=False, non_blocking=False, ptds=False, priority=None):
        if null:
            self.ptr, self.device_id = 0, -1
        else:
            self.ptr, self.device_id = next(_handles), _current.index
        self.priority = 0 if priority is None else priority
        self._stack = []

    def use(self):
        _current.streams[_stream_device(self.device_id)] = self
        return self

    def __enter__(self):
        dev = _stream_device(self.device_id)
        self._stack.append((dev, _current.streams.get(dev)))
        _current.streams[dev] = self
        return self

    def __exit__(self, *exc):
        dev, prev = self._stack.pop()
        if prev is None:
            _current.streams.pop(dev, None)
        else:
            _current.streams[dev] = prev

    done = property(lambda self: True, doc="All queued work has run (it ran when queued).")

    def synchronize(self):
        """Nothing queued is still running."""

    def record(self, event=None):
        event = Event() if event is None else event
        event.record(self)
        return event

    def wait_event(self, event):
        """Work queued after now waits for ``event``: it is complete already."""

    def __eq__(self, other):
        return isinstance(other, Stream) and other.ptr == self.ptr

    def __hash__(self):
        return self.ptr

    def __repr__(self):
        return f"<Stream {self.ptr} (device {self.device_id})>"


Stream.null = Stream(null=True)


def get_current_stream(device_id=-1):
    """The stream work on ``device_id`` (-1: the current device) is queued on."""
    return _current.streams.get(_current.index if device_id == -1 else device_id, Stream.null)


class Event:
    """``cupy.cuda.Event``: a marker on the device current at its creation; complete when
    recorded, stamped with the host's clock for timing."""

    def __init__(self, block=False, disable_timing=False, interprocess=False):
        if interprocess and not disable_timing:
            raise ValueError("Timing must be disabled for interprocess events")
        self.ptr, self.device_id = next(_handles), _current.index
        self._timing = not disable_timing
        self._time = None  # perf_counter at the last record

    done = property(lambda self: True, doc="Its work is done (it ran when queued).")

    def record(self, stream=None):
        stream = get_current_stream() if stream is None else stream
        dev = _current.index if stream.device_id == -1 else stream.device_id
        if dev != self.device_id:  # cudaEventRecord: the event and stream share a device
            raise CUDARuntimeError(_INVALID_HANDLE)
        self._time = time.perf_counter()

    def synchronize(self):
        """Its work is done."""


def get_elapsed_time(start_event, end_event):
    """Milliseconds between two recorded timing events (cudaEventElapsedTime's errors)."""
    for e in (start_event, end_event):
        if not e._timing or e._time is None:
            raise CUDARuntimeError(_INVALID_HANDLE)
    return (end_event._time - start_event._time) * 1e3


# ---- the memory pool -------------------------------------------------------------------------

class _Block(weakref.ref):
    """A buffer of device memory, booked while it lives."""

    __slots__ = ("key", "size", "device")


class _Books:
    """The pool's books: each device's live blocks, the bytes they hold, and the most they
    held since the pool last released its free blocks. A freed block is queued by its
    weak reference's callback (which may run inside a collection anywhere, so it takes
    no lock) and settled before the books are next read or written."""

    def __init__(self):
        self.lock = threading.Lock()
        self.blocks = {}  # id of the owning NumPy buffer -> _Block
        self.freed = collections.deque()
        self.used = [0] * DEVICES
        self.held = [0] * DEVICES

    def book(self, a, device):
        """Book array ``a`` of device ``device`` (a view of a booked buffer adds nothing)."""
        while type(a.base) is numpy.ndarray:
            a = a.base
        key = id(a)
        old = self.blocks.get(key)
        if old is not None and old() is a:
            return
        b = _Block(a, self.freed.append)
        b.key, b.size, b.device = key, -(-a.nbytes // _UNIT) * _UNIT, device
        with self.lock:
            self._settle()
            self.blocks[key] = b
            used = self.used[device] = self.used[device] + b.size
            if used > self.held[device]:
                self.held[device] = used

    def _settle(self):
        """Take the queued freed blocks off the books (called holding the lock)."""
        freed = self.freed
        while freed:
            b = freed.popleft()
            self.used[b.device] -= b.size
            if self.blocks.get(b.key) is b:
                del self.blocks[b.key]

    def read(self, device):
        """``(used, held)`` bytes of ``device`` now."""
        with self.lock:
            self._settle()
            return self.used[device], self.held[device]

    def release(self, device):
        """The pool hands ``device``'s free blocks back: it holds what is in use."""
        with self.lock:
            self._settle()
            self.held[device] = self.used[device]


_books = _Books()


def book(a, device):
    """Book the memory of a new array ``a`` (NumPy's, non-empty) on device ``device``."""
    _books.book(a, device)


class MemoryPool:
    """``cupy.cuda.MemoryPool``: the current device's bytes in use and held."""

    def used_bytes(self):
        return _books.read(_current.index)[0]

    def total_bytes(self):
        return _books.read(_current.index)[1]

    def free_bytes(self):
        used, held = _books.read(_current.index)
        return held - used

    def free_all_blocks(self, stream=None):
        """Hand the current device's cached free blocks back: it holds what is in use."""
        _books.release(_current.index)


_POOL = MemoryPool()


def get_default_memory_pool():
    return _POOL


# ---- pinned host memory and copies -----------------------------------------------------------

class PinnedMemoryPointer:
    """``cupy.cuda.PinnedMemoryPointer``: host memory at ``ptr`` (page-locked on a GPU)."""

    __slots__ = ("_buffer", "ptr", "size")

    def __init__(self, size):
        self._buffer = numpy.empty(size, numpy.uint8)
        self.ptr, self.size = self._buffer.ctypes.data, size


def alloc_pinned_memory(size):
    return PinnedMemoryPointer(size)


# ---- cupy.cuda.runtime -----------------------------------------------------------------------

_TOTAL_MEMORY = 16 << 30  # what each emulated device reports (nothing enforces it)


def _properties(index):
    """``cudaGetDeviceProperties``'s fields (CuPy's dict keys) for emulated device
    ``index``: compute capability 8.0 (it computes bfloat16), one multiprocessor (the
    host thread that runs each kernel), no caches or clocks of its own."""
    return {"name": b"retrograd emulated GPU", "totalGlobalMem": _TOTAL_MEMORY, "major": 8,
            "minor": 0, "multiProcessorCount": 1, "integrated": 0, "isMultiGpuBoard": 0,
            "maxThreadsPerMultiProcessor": 2048, "maxThreadsPerBlock": 1024, "warpSize": 32,
            "regsPerMultiprocessor": 65536, "l2CacheSize": 0, "clockRate": 0,
            "memoryClockRate": 0, "memoryBusWidth": 0, "sharedMemPerBlock": 49152,
            "sharedMemPerMultiprocessor": 0, "pciBusID": index + 1, "pciDeviceID": 0,
            "pciDomainID": 0,
            "uuid": uuid.uuid5(uuid.NAMESPACE_OID, f"retrograd.emulated.{index}").bytes}


class runtime:  # noqa: N801 (CuPy's module name)
    """``cupy.cuda.runtime``: the calls retrograd makes, on the emulated devices."""

    CUDARuntimeError = CUDARuntimeError
    memcpyHostToDevice, memcpyDeviceToHost = 1, 2

    getDeviceCount = staticmethod(count)
    getDevice = staticmethod(current)
    setDevice = staticmethod(select)

    @staticmethod
    def getDeviceProperties(device):
        Device(device)  # (refuses an invalid id)
        return _properties(device)

    @staticmethod
    def deviceSynchronize():
        """Nothing queued on the current device is still running."""

    @staticmethod
    def memGetInfo():
        """``(free, total)`` bytes of the current device: what its pool holds is not free."""
        return _TOTAL_MEMORY - _books.read(_current.index)[1], _TOTAL_MEMORY

    @staticmethod
    def memcpyAsync(dst, src, size, kind, stream):
        """Copy ``size`` bytes between raw addresses (done when queued)."""
        ctypes.memmove(dst, src, size)
