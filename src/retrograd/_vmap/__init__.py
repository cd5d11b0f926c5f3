"""vmap: functions mapped over a batch dim of their inputs, run once on the whole batch
(see :mod:`.api`)."""

from .api import vmap

__all__ = ["vmap"]
