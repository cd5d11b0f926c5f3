"""``torch.utils.data.distributed``: the sampler giving each rank its share of a dataset."""

import math

import numpy

from ... import distributed as dist
from .sampler import Sampler

__all__ = ["DistributedSampler"]


def _torch_randperm(n, seed):
    """PyTorch's CPU ``randperm(n)`` from a Generator seeded with ``seed``: its Fisher-Yates
    swaps driven by MT19937's raw 32-bit draws. The sampler (unlike retrograd's other
    random streams) repeats PyTorch's exactly, so a run moved between the two libraries
    sees its data in the same order on every rank."""
    bits = numpy.random.MT19937(0)
    bits._legacy_seeding(seed & 0xFFFFFFFF)  # what at::mt19937(seed) keeps of the seed
    draws = bits.random_raw(max(n - 1, 0)).tolist()
    perm = list(range(n))
    for i, z in enumerate(draws):
        j = i + z % (n - i)
        perm[i], perm[j] = perm[j], perm[i]
    return perm


class DistributedSampler(Sampler):
    """Restricts loading to this rank's share of ``dataset``: the (shuffled) indices,
    padded by repetition to a multiple of ``num_replicas`` (or cut, with ``drop_last``),
    every ``num_replicas``-th from ``rank``. Call ``set_epoch`` before each epoch for a new
    order; every rank must use the same ``seed``.

    >>> sampler = DistributedSampler(dataset, num_replicas=2, rank=0, shuffle=False)
    >>> list(DistributedSampler(range(5), num_replicas=2, rank=1, shuffle=False))
    [1, 3, 0]
    """

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0,
                 drop_last=False):
        if num_replicas is None:
            num_replicas = dist.get_world_size()
        if rank is None:
            rank = dist.get_rank()
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval "
                             f"[0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        if drop_last and len(dataset) % num_replicas != 0:
            self.num_samples = math.ceil((len(dataset) - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(len(dataset) / num_replicas)
        self.total_size = self.num_samples * num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self):
        n = len(self.dataset)
        indices = _torch_randperm(n, self.seed + self.epoch) if self.shuffle else list(range(n))
        if self.drop_last:
            indices = indices[:self.total_size]
        else:
            padding = self.total_size - n
            indices += (indices * math.ceil(padding / n))[:padding] if padding else []
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        """The epoch, mixed into the shuffling seed: a new order on every rank."""
        self.epoch = epoch
