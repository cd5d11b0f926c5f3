"""What ``torch.profiler`` can be asked to record: :class:`ProfilerActivity` and
:class:`DeviceType`, with PyTorch's member names and values (in PyTorch they come from
its C++ core)."""

from enum import Enum

__all__ = ["ProfilerActivity", "DeviceType", "kineto_available"]


class ProfilerActivity(Enum):
    """An activity group the profiler records: retrograd records ``CPU`` (see
    :func:`retrograd.profiler.supported_activities`)."""

    CPU = 0
    XPU = 1
    MTIA = 4
    CUDA = 2
    HPU = 3
    PrivateUse1 = 5


class DeviceType(Enum):
    """PyTorch's device types, as the profiler names them."""

    CPU = 0
    CUDA = 1
    MKLDNN = 2
    OPENGL = 3
    OPENCL = 4
    IDEEP = 5
    HIP = 6
    FPGA = 7
    MAIA = 8
    XLA = 9
    Vulkan = 10
    Metal = 11
    XPU = 12
    MPS = 13
    MTIA = 19
    Meta = 14
    HPU = 15
    VE = 16
    Lazy = 17
    IPU = 18
    PrivateUse1 = 20


def kineto_available():
    """True: code that checks it before using :class:`retrograd.profiler.profile` gets
    that profiler, which retrograd records itself (PyTorch's is Kineto)."""
    return True
