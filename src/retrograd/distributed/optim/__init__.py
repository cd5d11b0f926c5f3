"""``torch.distributed.optim``: the optimizer-in-backward helpers (importable without MPI)
and ``ZeroRedundancyOptimizer`` (optimizer state sharded across ranks).

For one ordinary optimizer (its schedulers, ``state_dict``, accumulation, clipping) see
:func:`retrograd.optim.fuse_into_backward`.
"""

from .apply_optimizer_in_backward import (
    _apply_optimizer_in_backward,
    _get_in_backward_optimizers,
    param_to_acc_grad_map,
    param_to_optim_hook_handle_map,
)
from .zero_redundancy_optimizer import ZeroRedundancyOptimizer

__all__ = ["ZeroRedundancyOptimizer"]
