"""What ``ZeroRedundancyOptimizer(overlap_with_ddp=True)`` learns from DDP's buckets, and
how it shares them out: each rank then owns whole buckets (bucket i: rank i mod world
size), or with ``shard_buckets`` slices of buckets balanced by size (PyTorch's
assignment)."""

import enum

__all__ = []


class _OverlapStatus(enum.IntEnum):
    """Where the delayed set-up stands: DDP's buckets are final only once rebuilt, so the
    hook collects them in the iteration after that and initializes in the next."""

    UNINITIALIZED = 0
    DDP_HAS_REBUILT_BUCKETS = 1
    INITIALIZED = 2


class _OverlapInfo:
    """The buckets seen, their assignment to ranks, and one iteration's hook state."""

    def __init__(self, world_size):
        self.status = _OverlapStatus.UNINITIALIZED
        self.shard_buckets = False
        self.params_per_bucket = []  # each bucket's parameters, as DDP orders them
        self.params_per_rank = [[] for _ in range(world_size)]
        self.offsets = {}  # bucket index -> where its slice starts in this rank's params
        self.assigned_ranks_per_bucket = []
        self.assignments = [{} for _ in range(world_size)]  # rank -> bucket -> (offset, params)
        self.total_size = None
        self.broadcast_group = None  # the interleaved hook's own communicator
        self.broadcast_handles = []
        self.bucket_indices_seen = []
        self.bucket_index_to_future = {}
        self.bucket_index_to_bucket = {}

    def wait_for_broadcasts(self):
        for work in self.broadcast_handles:
            work.wait()
        self.broadcast_handles.clear()

    def clear_per_iter_info(self):
        self.bucket_indices_seen.clear()
        self.bucket_index_to_future.clear()
        self.bucket_index_to_bucket.clear()

    def assign(self, world_size, rank):
        """Share the buckets out among the ranks (fills the per-rank fields)."""
        buckets = self.params_per_bucket
        self.assigned_ranks_per_bucket = [set() for _ in buckets]
        if not self.shard_buckets:
            for i, params in enumerate(buckets):
                self._give(i, params, 0, i % world_size, rank)
            return
        # buckets by increasing size; each cut into slices of under total/world_size
        # elements (at least one parameter), each slice to the rank holding the least
        threshold = self.total_size / world_size
        sizes = [0] * world_size
        for i, params in sorted(enumerate(buckets), key=lambda b: sum(p.numel()
                                                                       for p in b[1])):
            start = size = 0
            for k, p in enumerate(params):
                if size + p.numel() >= threshold and k > start:
                    r = self._least(sizes, i)
                    self._give(i, params[start:k], start, r, rank)
                    sizes[r] += size
                    start, size = k, 0
                size += p.numel()
            r = self._least(sizes, i)
            self._give(i, params[start:], start, r, rank)
            sizes[r] += size

    def _least(self, sizes, bucket):
        """The rank with the least assigned, among those without a slice of ``bucket``."""
        taken = self.assigned_ranks_per_bucket[bucket]
        return min((r for r in range(len(sizes)) if r not in taken), key=lambda r: sizes[r])

    def _give(self, bucket, params, offset, to, rank):
        if to == rank:
            self.offsets[bucket] = len(self.params_per_rank[to])
        self.params_per_rank[to].extend(params)
        self.assigned_ranks_per_bucket[bucket].add(to)
        self.assignments[to][bucket] = (offset, params)
