"""Device "cuda" on a real GPU: CuPy's arrays, devices and runtime, found lazily.

CuPy is optional (``retrograd[cuda]``): it is imported on the first question about a
GPU, and a machine where it is missing, or where its runtime finds no device, has none
(``cupy()`` is None), as PyTorch's CPU-only build has none. Everything here that needs
the runtime asks ``cupy()`` first.
"""

import functools

__all__ = ["cupy", "absent", "count", "current", "select", "is_array", "to_host", "from_host",
           "guard", "on_device"]


@functools.cache
def cupy():
    """The ``cupy`` module when it imports and its runtime sees at least one GPU, else
    None (asked once: devices do not come and go in a process; :func:`absent` says why)."""
    return _find()[0]


def absent():
    """Why there is no GPU (the import's or the runtime's error), or None when there is."""
    return _find()[1]


@functools.cache
def _find():
    try:
        import cupy as cp
        n = cp.cuda.runtime.getDeviceCount()
    except Exception as e:  # noqa: BLE001 - missing package, driver or device: no GPU
        return None, f"{type(e).__name__}: {e}"
    return (cp, None) if n > 0 else (None, "CuPy's runtime sees no device")


def count():
    cp = cupy()
    return 0 if cp is None else cp.cuda.runtime.getDeviceCount()


def current():
    """The selected GPU's index (CuPy's current device)."""
    return cupy().cuda.runtime.getDevice()


def guard(index):
    """A context making GPU ``index`` current, or None where it already is."""
    cp = cupy()
    return None if cp.cuda.runtime.getDevice() == index else cp.cuda.Device(index)


def select(index):
    """Make GPU ``index`` the current one (``torch.cuda.set_device``)."""
    cupy().cuda.runtime.setDevice(index)


def is_array(array):
    """Whether ``array`` is a CuPy array (by type, so CuPy is never imported for it)."""
    return type(array).__module__.startswith("cupy")


def to_host(array):
    """A NumPy copy of CuPy array ``array`` (waits for the kernels writing it)."""
    return array.get()


def from_host(array, index):
    """``array`` (NumPy's, or CuPy's on any GPU) as a CuPy array on GPU ``index``; itself
    when it is already there."""
    cp = cupy()
    if is_array(array) and array.device.id == index:
        return array
    with cp.cuda.Device(index):
        return cp.array(array, copy=True)


# ---- creation on a device (issue 13) -------------------------------------------------------

def on_device(index, make):
    """``make(cupy)`` with GPU ``index`` current (None: the current one): CuPy allocates
    on its current device (``cupy.cuda.Device`` as a context manager)."""
    cp = cupy()
    with cp.cuda.Device(index):
        return make(cp)
