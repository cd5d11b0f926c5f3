"""What ``torch.cuda``'s functions and its streams share: CuPy or PyTorch's CPU-only
build's error, and a device argument as a GPU index."""

from ..backend import Device, gpu


def cupy_or_raise():
    """CuPy, when there is a GPU; else PyTorch's CPU-only build's error."""
    cp = gpu.cupy()
    if cp is None:
        raise AssertionError("Torch not compiled with CUDA enabled")
    return cp


def current_device():
    """The selected GPU's index."""
    cupy_or_raise()
    return gpu.current()


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
