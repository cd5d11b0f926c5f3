"""``retrograd.cuda``: what CUDA code asks of ``torch.cuda`` before there is a GPU backend.

There is no CUDA backend yet, so ``is_available()`` is False; ``retrograd.cuda.memory``
is :mod:`retrograd.memory` (the accounting of the device the tensors are on), so code
written for ``torch.cuda.memory`` (the tutorials' snapshots) runs unchanged.
"""

from . import memory
from .memory import (max_memory_allocated, max_memory_reserved, memory_allocated,
                     memory_reserved, memory_stats, memory_summary, reset_max_memory_allocated,
                     reset_peak_memory_stats, empty_cache)


def is_available():
    return False


def device_count():
    return 0
