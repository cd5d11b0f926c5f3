"""``torch.cuda.Stream``, ``Event`` and ``stream()`` over CuPy's streams and events.

Ops run on CuPy's current stream, so ``with torch.cuda.stream(s):`` queues the kernels
of the ops inside on ``s``, as in PyTorch. Without a GPU, making a stream or an event
fails with PyTorch's CPU-only build's errors.
"""

from ..backend import Device, gpu
from ._index import cupy_or_raise as _cupy, device_index as _index

__all__ = ["Stream", "Event", "StreamContext", "stream", "current_stream", "default_stream"]


class Stream:
    """A queue of GPU work (``torch.cuda.Stream``): a new CuPy stream, or one wrapped."""

    def __init__(self, device=None, priority=0, *, _stream=None):
        cp = gpu.cupy()
        if cp is None:
            raise RuntimeError("torch.cuda.Stream requires CUDA support")
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
    def cuda_stream(self):
        """The raw ``cudaStream_t`` (0: the legacy default stream)."""
        return self._cupy.ptr

    def wait_event(self, event):
        """Work queued on this stream after now waits for ``event``."""
        self._cupy.wait_event(event._cupy)

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

    def __eq__(self, other):
        return isinstance(other, Stream) and other.cuda_stream == self.cuda_stream \
            and other._index == self._index

    def __hash__(self):
        return hash((self.cuda_stream, self._index))

    def __repr__(self):
        return f"<torch.cuda.Stream device=cuda:{self._index} cuda_stream={self.cuda_stream:#x}>"


class Event:
    """A marker in a stream's work (``torch.cuda.Event``): to wait on, or to time."""

    def __init__(self, enable_timing=False, blocking=False, interprocess=False):
        cp = gpu.cupy()
        if cp is None:
            raise RuntimeError("Tried to instantiate dummy base class Event")
        self._cupy = cp.cuda.Event(block=blocking, disable_timing=not enable_timing,
                                   interprocess=interprocess)

    def record(self, stream=None):
        """Mark the work queued so far on ``stream`` (the current stream)."""
        self._cupy.record((stream or current_stream())._cupy)

    def wait(self, stream=None):
        (stream or current_stream()).wait_event(self)

    def query(self):
        return self._cupy.done

    def synchronize(self):
        self._cupy.synchronize()

    def elapsed_time(self, end_event):
        """Milliseconds between this event and ``end_event`` (both recorded, timing on)."""
        return _cupy().cuda.get_elapsed_time(self._cupy, end_event._cupy)

    def __repr__(self):
        return f"<torch.cuda.Event {self._cupy.ptr:#x}>"


def current_stream(device=None):
    """The stream ops on ``device`` queue their kernels on now."""
    cp = _cupy()
    index = _index(device)
    with cp.cuda.Device(index):
        return Stream(index, _stream=cp.cuda.get_current_stream())


def default_stream(device=None):
    cp = _cupy()
    index = _index(device)
    return Stream(index, _stream=cp.cuda.Stream.null)


class StreamContext:
    """``with torch.cuda.stream(s):``: ``s`` is the current stream inside (None: no
    change)."""

    def __init__(self, stream):
        self.stream = stream
        self._prev = None

    def __enter__(self):
        if self.stream is not None:
            self._prev = _cupy().cuda.get_current_stream()
            self.stream._cupy.use()
        return self.stream

    def __exit__(self, *exc):
        if self.stream is not None:
            self._prev.use()
        return False


def stream(stream):
    return StreamContext(stream)
