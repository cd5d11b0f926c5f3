"""``torch.cuda.memory``'s names, served by :mod:`retrograd.memory`."""

from ..memory import *  # noqa: F401,F403
from ..memory import _dump_snapshot, _record_memory_history, _snapshot  # noqa: F401
