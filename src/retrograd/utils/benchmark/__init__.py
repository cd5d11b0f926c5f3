"""``retrograd.utils.benchmark``: ``Timer``, ``Measurement`` and ``Compare`` as
``torch.utils.benchmark``, timing Python statements for real (no C++ or Callgrind)."""

from ._compare import Colorize, Compare
from ._measurement import (Measurement, TaskSpec, ordered_unique, select_unit,
                           set_torch_threads, trim_sigfig, unit_to_english)
from ._timer import Language, Timer, timer

__all__ = ["Timer", "timer", "Language", "Measurement", "TaskSpec", "Compare", "Colorize",
           "select_unit", "unit_to_english", "trim_sigfig", "ordered_unique",
           "set_torch_threads"]
