"""``torch.distributed.algorithms``: the ``Join`` context manager for uneven inputs, and
DDP's communication hooks (``ddp_comm_hooks``)."""

from . import ddp_comm_hooks
from .join import Join, Joinable, JoinHook

__all__ = ["Join", "JoinHook", "Joinable", "ddp_comm_hooks"]
