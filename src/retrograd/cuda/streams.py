"""``torch.cuda.Stream``, ``Event`` and ``stream()`` over the runtime's streams and events
(CuPy's on a GPU, the emulator's while emulating: ``backend.cuda_runtime()``).

Ops run on the runtime's current stream of their device, so ``with torch.cuda.stream(s):``
queues the kernels of the ops inside on ``s``, as in PyTorch. A stream belongs to the
device current at its creation (or the one named); an event is created on the device of
the stream that first records it, as PyTorch creates its events lazily. Without a GPU,
making a stream or an event fails with PyTorch's CPU-only build's errors.
"""

import ctypes

from ..backend import Device, cuda_runtime
from ._index import cupy_or_raise as _cupy, device_index as _index

__all__ = ["Stream", "Event", "StreamContext", "stream", "current_stream", "default_stream",
           "set_stream"]


class Stream:
    """A queue of GPU work (``torch.cuda.Stream``) on ``device`` (None or negative: the
    current one): a new stream of the runtime, or one wrapped."""

    def __init__(self, device=None, priority=0, *, _stream=None):
        if cuda_runtime().count() == 0:
            raise RuntimeError("torch.cuda.Stream requires CUDA support")
        cp = _cupy()
        if isinstance(device, int) and device < 0:
            device = None
        self._index = _index(device)
        if _stream is None:
            with cp.cuda.Device(self._index):
                _stream = cp.cuda.Stream(non_blocking=False, priority=priority)
        self._cupy = _stream
        self.priority = priority

    @property
    def device(self):
        return Device("cuda", self._index)

    @property
    def device_index(self):
        return self._index

    @property
    def cuda_stream(self):
        """The raw ``cudaStream_t`` (0: the legacy default stream)."""
        return self._cupy.ptr

    @property
    def _as_parameter_(self):
        return ctypes.c_void_p(self.cuda_stream)

    def wait_event(self, event):
        """Work queued on this stream after now waits for ``event``."""
        event.wait(self)

    def wait_stream(self, stream):
        """Work queued on this stream after now waits for what ``stream`` has queued."""
        self.wait_event(stream.record_event())

    def record_event(self, event=None):
        event = Event() if event is None else event
        event.record(self)
        return event

    def query(self):
        """Whether all work queued on this stream has finished."""
        return self._cupy.done

    def synchronize(self):
        self._cupy.synchronize()

    def _use(self):
        """Make this the current stream of its device (the current device is unchanged)."""
        with _cupy().cuda.Device(self._index):
            self._cupy.use()

    def __eq__(self, other):
        return isinstance(other, Stream) and other.cuda_stream == self.cuda_stream \
            and other._index == self._index

    def __hash__(self):
        return hash((self.cuda_stream, self.device))

    def __repr__(self):
        return f"<torch.cuda.Stream device={self.device} cuda_stream={self.cuda_stream:#x}>"


class Event:
    """A marker in a stream's work (``torch.cuda.Event``): to wait on, or to time. Its
    runtime event is made when first recorded, on the recording stream's device."""

    def __init__(self, enable_timing=False, blocking=False, interprocess=False,
                 external=False):
        if cuda_runtime().count() == 0:
            raise RuntimeError("Tried to instantiate dummy base class Event")
        self._flags = (enable_timing, blocking, interprocess)
        self._cupy = None
        self._index = None  # the device it was made on

    @property
    def cuda_event(self):
        """The raw ``cudaEvent_t`` (0 until recorded)."""
        return 0 if self._cupy is None else self._cupy.ptr

    @property
    def _as_parameter_(self):
        return ctypes.c_void_p(self.cuda_event)

    def record(self, stream=None):
        """Mark the work queued so far on ``stream`` (the current stream)."""
        stream = current_stream() if stream is None else stream
        cp = _cupy()
        if self._cupy is None:
            timing, blocking, interprocess = self._flags
            with cp.cuda.Device(stream._index):
                self._cupy = cp.cuda.Event(block=blocking, disable_timing=not timing,
                                           interprocess=interprocess)
            self._index = stream._index
        elif self._index != stream._index:
            raise RuntimeError(f"Event device {self._index} does not match recording "
                               f"stream's device {stream._index}.")
        with cp.cuda.Device(self._index):
            self._cupy.record(stream._cupy)

    def wait(self, stream=None):
        """Work queued on ``stream`` (the current stream) after now waits for this event;
        nothing to wait for before it is recorded."""
        stream = current_stream() if stream is None else stream
        if self._cupy is not None:
            with _cupy().cuda.Device(stream._index):
                stream._cupy.wait_event(self._cupy)

    def query(self):
        return self._cupy is None or self._cupy.done

    def synchronize(self):
        if self._cupy is not None:
            self._cupy.synchronize()

    def elapsed_time(self, end_event):
        """Milliseconds between this event and ``end_event`` (both recorded, timing on)."""
        if not (self._flags[0] and end_event._flags[0]):
            raise ValueError("Both events must be created with argument 'enable_timing=True'.")
        if self._cupy is None or end_event._cupy is None:
            raise ValueError("Both events must be recorded before calculating elapsed time.")
        if not (self.query() and end_event.query()):
            raise RuntimeError("Both events must be completed before calculating elapsed time.")
        cp = _cupy()
        with cp.cuda.Device(self._index):
            return cp.cuda.get_elapsed_time(self._cupy, end_event._cupy)

    def __repr__(self):
        if self._cupy is None:
            return "<torch.cuda.Event uninitialized>"
        return f"<torch.cuda.Event {self.cuda_event:#x}>"


def current_stream(device=None):
    """The stream ops on ``device`` (None: the current one) queue their kernels on now."""
    cp = _cupy()
    index = _index(device)
    return Stream(index, _stream=cp.cuda.get_current_stream(index))


def default_stream(device=None):
    cp = _cupy()
    return Stream(_index(device), _stream=cp.cuda.Stream.null)


def set_stream(stream):
    """Make ``stream`` the current stream of its device (None: nothing changes)."""
    if stream is not None:
        stream._use()


class StreamContext:
    """``with torch.cuda.stream(s):``: ``s`` is the current stream of its device inside
    (None: no change), and the previous streams of the current device and of ``s``'s
    are restored after, as PyTorch's."""

    def __init__(self, stream):
        self.stream = stream
        self.src_prev_stream = self.dst_prev_stream = None

    def __enter__(self):
        s = self.stream
        if s is None:
            return
        self.src_prev_stream = current_stream(None)
        if self.src_prev_stream.device != s.device:
            self.dst_prev_stream = current_stream(s.device)
        set_stream(s)

    def __exit__(self, *exc):
        s = self.stream
        if s is None:
            return False
        if self.src_prev_stream.device != s.device:
            set_stream(self.dst_prev_stream)
        set_stream(self.src_prev_stream)
        return False


def stream(stream):
    return StreamContext(stream)
