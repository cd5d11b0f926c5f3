"""``torch.distributed`` on MPI: process groups, collectives on tensors and objects.

Importing needs nothing beyond retrograd; ``init_process_group`` needs the
``retrograd[distributed]`` extra (mpi4py and MPICH). Start the ranks with
``python -m retrograd.distributed.run --nproc-per-node N script.py`` or ``mpiexec -n N``.
``retrograd.distributed.optim`` (the optimizer in backward) needs no transport at all.
"""

from ._collectives import (all_gather, all_gather_into_tensor, all_gather_object, all_reduce,
                           all_to_all, all_to_all_single, barrier, broadcast,
                           broadcast_object_list, gather, gather_object, irecv, isend, recv,
                           reduce, reduce_scatter, reduce_scatter_tensor, scatter, send)
from .distributed_c10d import (Backend, DistBackendError, DistError, GroupMember,
                               ProcessGroup, ReduceOp, Work, default_pg_timeout,
                               destroy_process_group, get_backend, get_global_rank,
                               get_group_rank, get_node_local_rank, get_process_group_ranks,
                               get_rank, get_world_size, group, init_process_group,
                               is_available, is_gloo_available, is_initialized,
                               is_mpi_available, is_nccl_available, is_torchelastic_launched,
                               monitored_barrier, new_group)
from ._grad_bucket import GradBucket
from . import optim  # after the collectives, which its ZeroRedundancyOptimizer uses

__all__ = ["Backend", "DistBackendError", "DistError", "GradBucket", "GroupMember", "ProcessGroup",
           "ReduceOp", "Work", "all_gather", "all_gather_into_tensor", "all_gather_object",
           "all_reduce", "all_to_all", "all_to_all_single", "barrier", "broadcast",
           "broadcast_object_list", "default_pg_timeout", "destroy_process_group", "gather",
           "gather_object", "get_backend", "get_global_rank", "get_group_rank",
           "get_node_local_rank", "get_process_group_ranks", "get_rank", "get_world_size",
           "group", "init_process_group", "irecv", "is_available", "is_gloo_available",
           "is_initialized", "is_mpi_available", "is_nccl_available", "is_torchelastic_launched",
           "isend", "monitored_barrier", "new_group", "optim", "recv", "reduce",
           "reduce_scatter", "reduce_scatter_tensor", "scatter", "send"]
