"""What ``torch.cuda``'s functions and its streams share: the GPUs' runtime (CuPy's, or
the emulator's) or PyTorch's CPU-only build's error, and a device argument as a GPU
index."""

from ..backend import Device, cuda_runtime

_NO_CUDA = "Torch not compiled with CUDA enabled"


def cupy_or_raise():
    """The runtime's CuPy module (CuPy's on a GPU, the emulator's CuPy-shaped one while
    emulating); else PyTorch's CPU-only build's error."""
    return runtime_or_raise().cupy()


def runtime_or_raise():
    """The runtime of device "cuda" (``backend.cuda_runtime()``) when it has a GPU; else
    PyTorch's CPU-only build's error."""
    runtime = cuda_runtime()
    if runtime.count() == 0:
        raise AssertionError(_NO_CUDA)
    return runtime


def current_device():
    """The selected GPU's index (this thread's, as CUDA keeps it)."""
    return runtime_or_raise().current()


def device_index(device, optional=True):
    """A device argument as an index (None: the current GPU's where ``optional``); 'cpu'
    is refused as PyTorch refuses it."""
    if isinstance(device, int):
        return device
    if device is None:
        return current_device() if optional else None
    dev = Device(device)
    if dev.type != "cuda":
        raise ValueError(f"Expected a cuda device, but got: {dev}")
    if dev.index is None:
        return current_device() if optional else -1
    return dev.index
