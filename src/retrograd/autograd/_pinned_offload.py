"""``save_on_cpu(pin_memory=True)`` on a GPU (or the emulated ones): saved activations
copied to pinned host memory on a side stream of their device, overlapped with the
compute that follows, and copied back ahead of the backward pass that needs them.

Forward: packing a GPU tensor records an event on the compute stream; the side stream
waits for it and copies the tensor's bytes into pinned memory. The device array is held
until that copy is done (CuPy's pool could otherwise hand its memory to a later kernel
of the compute stream while the side stream still reads it), then dropped.

Backward runs the saved tensors in about the reverse order they were packed: unpacking
one starts the copies back of the ``PREFETCH`` packed just before it, each into a new
device array on the side stream; the compute stream waits only for the copy of the
tensor it asks for. PyTorch's own ``save_on_cpu`` copies with a blocking ``.to``.
"""

from .._tensor import wrap

__all__ = ["PinnedOffload", "PREFETCH"]

PREFETCH = 2  # packed tensors copied back ahead of the one backward asks for


class _Packed:
    """One saved tensor: its pinned copy, and while a copy runs, the event that ends it
    and the device array it reads or writes."""

    __slots__ = ("index", "host", "dtype", "shape", "device", "event", "array", "back")

    def __repr__(self):
        return f"<saved tensor {self.index} offloaded to pinned memory>"


class PinnedOffload:
    """The state of one ``save_on_cpu(pin_memory=True)`` context on a GPU runtime (CuPy's,
    or the emulator's): a side stream per device, made on that device (a stream belongs
    to the device current at its creation), and the tensors it packed (by pack order,
    for prefetching). Each copy runs with its tensor's device current."""

    def __init__(self, runtime):
        self.cp = runtime.cupy()
        self.streams = {}    # device index -> its side stream
        self.packed = []     # every _Packed, in pack order
        self.in_flight = []  # those whose copy to the host may still be running

    def _side(self, index):
        """Device ``index``'s side stream (called with that device current)."""
        s = self.streams.get(index)
        if s is None:
            s = self.streams[index] = self.cp.cuda.Stream(non_blocking=True)
        return s

    def pack(self, tensor):
        cp = self.cp
        arr = tensor._data
        p = _Packed()
        p.index, p.dtype, p.shape, p.device = len(self.packed), arr.dtype, arr.shape, \
            tensor.device
        with cp.cuda.Device(p.device.index):
            if not arr.flags.c_contiguous:
                arr = cp.ascontiguousarray(arr)
            side = self._side(p.device.index)
            p.host = cp.cuda.alloc_pinned_memory(arr.nbytes)
            side.wait_event(cp.cuda.get_current_stream().record())
            if arr.nbytes:
                cp.cuda.runtime.memcpyAsync(p.host.ptr, arr.data.ptr, arr.nbytes,
                                            cp.cuda.runtime.memcpyDeviceToHost, side.ptr)
            p.event, p.array, p.back = side.record(), arr, None
        self.packed.append(p)
        self.in_flight.append(p)
        self._release()
        return p

    def _release(self):
        """Drop the device arrays whose copies to the host are done."""
        keep = []
        for p in self.in_flight:
            if p.event.done:
                p.array = None
            else:
                keep.append(p)
        self.in_flight = keep

    def _fetch(self, p):
        """Start copying ``p`` back into a new device array on its device's side stream."""
        if p.back is not None:
            return
        cp = self.cp
        with cp.cuda.Device(p.device.index):
            side = self._side(p.device.index)
            arr = cp.empty(p.shape, p.dtype)  # (on the compute stream, which made it free)
            side.wait_event(cp.cuda.get_current_stream().record())
            if arr.nbytes:
                cp.cuda.runtime.memcpyAsync(arr.data.ptr, p.host.ptr, arr.nbytes,
                                            cp.cuda.runtime.memcpyHostToDevice, side.ptr)
            p.back, p.event = arr, side.record()

    def unpack(self, p):
        self._release()
        self._fetch(p)
        for q in self.packed[max(0, p.index - PREFETCH):p.index][::-1]:
            self._fetch(q)
        cp = self.cp
        with cp.cuda.Device(p.device.index):
            cp.cuda.get_current_stream().wait_event(p.event)
        arr, p.back = p.back, None  # (a second unpack copies it back again)
        return wrap(arr)
