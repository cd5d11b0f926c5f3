"""``torch.distributed.algorithms.ddp_comm_hooks``: DDP communication hooks
(``DistributedDataParallel.register_comm_hook(state, hook)``)."""

from . import default_hooks

__all__ = ["default_hooks"]
