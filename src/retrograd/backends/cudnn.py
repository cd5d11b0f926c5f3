"""``torch.backends.cudnn``: no cuDNN, with PyTorch's flags and their defaults."""

import sys

from ._flags import Flag, FlagModule

__all__ = ["is_available", "version", "flags"]


def is_available():
    return False


def version():
    """None: there is no cuDNN library."""
    return None


class CudnnModule(FlagModule):
    enabled = Flag(True, "set_enabled_cudnn")
    benchmark = Flag(False, "set_benchmark_cudnn")
    deterministic = Flag(False, "set_deterministic_cudnn")
    allow_tf32 = Flag(True, "set_allow_tf32_cudnn")
    benchmark_limit = None  # PyTorch defines it only where cuDNN is available


def flags(enabled=False, benchmark=False, benchmark_limit=10, deterministic=False,
          allow_tf32=True):
    """Set the flags for a ``with`` block, as ``torch.backends.cudnn.flags``."""
    return sys.modules[__name__]._set(enabled=enabled, benchmark=benchmark,
                                      deterministic=deterministic, allow_tf32=allow_tf32)


sys.modules[__name__].__class__ = CudnnModule
