"""``torch.cpu``: the CPU device module (its ``amp`` is the deprecated CPU-bound autocast
and GradScaler)."""

from . import amp

__all__ = ["amp", "is_available", "device_count"]


def is_available():
    """The CPU is always there."""
    return True


def device_count():
    return 1
