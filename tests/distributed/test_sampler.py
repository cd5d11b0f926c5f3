"""DistributedSampler gives PyTorch's index sequences (no MPI needed: explicit replicas)."""

import itertools

import pytest

import retrograd
from retrograd.utils.data import DataLoader, DistributedSampler, TensorDataset


@pytest.mark.torch
@pytest.mark.parametrize("shuffle, drop_last", itertools.product([True, False], repeat=2))
def test_index_sequences_as_pytorch(torch, shuffle, drop_last):
    for n, replicas, seed in [(0, 2, 0), (1, 3, 0), (10, 3, 7), (11, 4, 123), (64, 2, 0),
                              (5, 8, 1), (1000, 7, 2**33 + 5), (50, 1, -3)]:
        for rank, epoch in itertools.product(range(replicas), [0, 3]):
            ours = DistributedSampler(range(n), replicas, rank, shuffle, seed, drop_last)
            theirs = torch.utils.data.DistributedSampler(range(n), replicas, rank, shuffle, seed,
                                                         drop_last)
            ours.set_epoch(epoch)
            theirs.set_epoch(epoch)
            assert list(ours) == list(theirs), (n, replicas, rank, seed, epoch)
            assert len(ours) == len(theirs) and ours.total_size == theirs.total_size


def test_shares_cover_the_dataset_and_epochs_reshuffle():
    samplers = [DistributedSampler(range(10), 3, r, seed=4) for r in range(3)]
    first = [list(s) for s in samplers]
    together = sum(first, [])
    assert len(together) == 12 and set(together) == set(range(10))  # two padded repeats
    for s in samplers:
        s.set_epoch(1)
    assert [list(s) for s in samplers] != first


def test_with_a_dataloader():
    data = TensorDataset(retrograd.arange(8.0))
    loader = DataLoader(data, batch_size=2, sampler=DistributedSampler(data, 2, 1, False))
    assert [b[0].tolist() for b in loader] == [[1.0, 3.0], [5.0, 7.0]]


def test_bad_rank_and_no_process_group():
    with pytest.raises(ValueError, match=r"Invalid rank 2, rank should be in the interval"):
        DistributedSampler(range(4), num_replicas=2, rank=2)
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        DistributedSampler(range(4))
