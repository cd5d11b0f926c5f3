"""PyTorch's hooks overlapping ``ZeroRedundancyOptimizer``'s step with DDP's backward:
each rank owns whole DDP buckets (or, with ``shard_buckets``, slices of them), updates its
parameters from its buckets' reduced gradients inside backward, and broadcasts them.

The set-up waits for DDP's final buckets: nothing is updated in the first iteration (DDP
has not rebuilt its buckets) nor the second (the hook records them); updates start with
the third. ``zero.step()`` is then not called in the loop.

>>> zero = ZeroRedundancyOptimizer(ddp.parameters(), retrograd.optim.Adam,
...                                overlap_with_ddp=True, lr=1e-3)
>>> ddp.register_comm_hook(None, hook_with_zero_step(allreduce_hook, ddp, zero))
"""

import weakref

from ..._collectives import broadcast
from ...distributed_c10d import _dup
from ...optim._zero_overlap import _OverlapStatus

__all__ = ["hook_with_zero_step", "hook_with_zero_step_interleaved"]


def _perform_local_step(bucket, zero, rank):
    """Update this rank's parameters of ``bucket`` from its (reduced) gradients."""
    info = zero._overlap_info
    index = bucket.index()
    if index not in info.offsets:
        raise AssertionError(f"Bucket index {index} was not assigned to rank {rank}")
    gradients = [None] * len(zero.optim.param_groups[0]["params"])
    offset, params = info.assignments[rank][index]
    start = info.offsets[index]
    gradients[start:start + len(params)] = bucket.gradients()[offset:offset + len(params)]
    zero._local_step(gradients)


def _broadcast_bucket(index, zero):
    """Start the broadcasts of bucket ``index``'s parameters from the ranks owning them."""
    info = zero._overlap_info
    group = info.broadcast_group or zero.process_group
    for owner in sorted(info.assigned_ranks_per_bucket[index]):
        _, params = info.assignments[owner][index]
        info.broadcast_handles += [broadcast(p, group_src=owner, group=group,
                                             async_op=True) for p in params]


def _setup(ddp_ref, zero, bucket):
    """Before DDP rebuilt its buckets: nothing. In the iteration after: record each
    bucket. In the next, at bucket 0: share the buckets out, build the optimizer."""
    info = zero._overlap_info
    if not ddp_ref()._has_rebuilt_buckets:
        return
    if info.status == _OverlapStatus.UNINITIALIZED:
        info.status = _OverlapStatus.DDP_HAS_REBUILT_BUCKETS
    if info.status == _OverlapStatus.DDP_HAS_REBUILT_BUCKETS:
        if bucket.index() == 0 and info.params_per_bucket:
            zero._init_zero_for_overlap()
        else:
            params = bucket.parameters()
            info.params_per_bucket.append(params)
            if info.shard_buckets:
                info.total_size += sum(p.numel() for p in params)


def _checked(hook, ddp, zero, shard_buckets):
    if not zero._overlap_with_ddp:
        raise ValueError("ZeroRedundancyOptimizer must be constructed with "
                         "`overlap_with_ddp=True` to use this hook properly")
    if shard_buckets:
        zero._overlap_info.shard_buckets = True
        zero._overlap_info.total_size = 0
    return weakref.ref(ddp)


def hook_with_zero_step(hook, ddp, zero, shard_buckets=False):
    """``hook`` (e.g. ``allreduce_hook``), plus ``zero``'s step once the last bucket is
    reduced: each rank waits for its buckets' reductions, updates its parameters, and the
    owners broadcast them, all inside backward (after its computation).

    >>> ddp.register_comm_hook(None, hook_with_zero_step(allreduce_hook, ddp, zero))
    """
    ddp_ref = _checked(hook, ddp, zero, shard_buckets)

    def hook_with_zero_fn(state, bucket):
        fut = hook(state, bucket)
        _setup(ddp_ref, zero, bucket)
        info = zero._overlap_info
        if info.status != _OverlapStatus.INITIALIZED:
            return fut
        index, rank = bucket.index(), zero.rank
        if rank in info.assigned_ranks_per_bucket[index]:
            info.bucket_index_to_bucket[index] = bucket
            info.bucket_index_to_future[index] = fut
        info.bucket_indices_seen.append(index)
        if index != len(info.params_per_bucket) - 1:
            return fut
        for i in range(len(info.params_per_bucket)):
            if rank in info.assigned_ranks_per_bucket[i]:
                info.bucket_index_to_future[i].wait()
                _perform_local_step(info.bucket_index_to_bucket[i], zero, rank)
            _broadcast_bucket(i, zero)
        info.wait_for_broadcasts()
        info.clear_per_iter_info()
        return fut

    return hook_with_zero_fn


def hook_with_zero_step_interleaved(hook, ddp, zero, shard_buckets=False):
    """``hook``, plus ``zero``'s step bucket by bucket: as soon as a bucket is reduced its
    owners update its parameters and broadcast them, while backward goes on. The
    broadcasts run on a communicator of their own (made here: call it on every rank), as
    MPI needs every rank to start one communicator's collectives in the same order.

    >>> ddp.register_comm_hook(None, hook_with_zero_step_interleaved(allreduce_hook, ddp,
    ...                                                              zero))
    """
    ddp_ref = _checked(hook, ddp, zero, shard_buckets)
    zero._overlap_info.broadcast_group = _dup(zero.process_group)

    def hook_with_zero_interleaved_fn(state, bucket):
        fut = hook(state, bucket)
        _setup(ddp_ref, zero, bucket)
        if zero._overlap_info.status != _OverlapStatus.INITIALIZED:
            return fut

        def zero_step(fut):
            info = zero._overlap_info
            index = bucket.index()
            info.bucket_indices_seen.append(index)
            if zero.rank in info.assigned_ranks_per_bucket[index]:
                _perform_local_step(bucket, zero, zero.rank)
            _broadcast_bucket(index, zero)
            if len(info.bucket_indices_seen) == len(info.params_per_bucket):
                info.wait_for_broadcasts()
                info.clear_per_iter_info()
            return bucket.buffer()

        return fut.then(zero_step)

    return hook_with_zero_interleaved_fn
