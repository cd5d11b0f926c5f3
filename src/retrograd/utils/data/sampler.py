"""Samplers: which dataset indices a DataLoader fetches, in what order and batches.

Random samplers draw from retrograd's Generators (``manual_seed`` makes them repeat); the
streams differ from PyTorch's, as all of retrograd's random numbers do.
"""

import itertools

import numpy

from ... import _random
from ..._creation import as_tensor
from ..._dtype import float64

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler",
           "WeightedRandomSampler", "BatchSampler"]


def _rng(generator):
    return (generator or _random.default_generator)._rng


class Sampler:
    """Base class: subclasses define ``__iter__`` over indices (or lists of indices)."""

    def __init__(self, data_source=None):
        pass

    def __iter__(self):
        raise NotImplementedError

    def __class_getitem__(cls, item):
        return cls


class SequentialSampler(Sampler):
    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


class RandomSampler(Sampler):
    """A fresh permutation each epoch (or ``num_samples`` draws with replacement).

    Without a ``generator`` each epoch seeds a private one from the default generator, as
    torch does, so ``manual_seed`` fixes the order of every epoch.
    """

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(self.replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got "
                            f"replacement={self.replacement}")
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got "
                             f"num_samples={self.num_samples}")

    @property
    def num_samples(self):
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        n = len(self.data_source)
        generator = self.generator
        if generator is None:
            seed = int(_random.default_generator._rng.integers(2 ** 63))
            generator = _random.Generator().manual_seed(seed)
        rng = generator._rng
        if self.replacement:
            yield from rng.integers(0, n, self.num_samples).tolist()
        else:
            for _ in range(self.num_samples // n):
                yield from rng.permutation(n).tolist()
            yield from rng.permutation(n)[:self.num_samples % n].tolist()

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given indices, in a random order each epoch."""

    def __init__(self, indices, generator=None):
        self.indices = indices
        self.generator = generator

    def __iter__(self):
        for i in _rng(self.generator).permutation(len(self.indices)).tolist():
            yield self.indices[i]

    def __len__(self):
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """Indices drawn with probabilities proportional to ``weights`` (``multinomial``)."""

    def __init__(self, weights, num_samples, replacement=True, generator=None):
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) \
                or num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got "
                             f"num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError(f"replacement should be a boolean value, but got "
                             f"replacement={replacement}")
        weights = as_tensor(weights, dtype=float64)
        if len(weights.shape) != 1:
            raise ValueError(f"weights should be a 1d sequence but given weights have shape "
                             f"{tuple(weights.shape)}")
        self.weights = weights
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self):
        w = self.weights.numpy()
        _check_distribution(w, self.replacement and self.num_samples > 1)
        rng = _rng(self.generator)
        if self.replacement:
            draws = rng.choice(len(w), self.num_samples, True, w / w.sum())
        else:
            if self.num_samples > len(w):
                raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples "
                                   "without replacement")
            # torch's exponential race: the largest w / Exp(1) win; zero weights come last
            keys = w / rng.exponential(size=len(w))
            draws = numpy.argsort(-keys, kind="stable")[:self.num_samples]
        yield from draws.tolist()

    def __len__(self):
        return self.num_samples


def _check_distribution(w, per_draw):
    """torch.multinomial's checks, whose messages depend on its kernel: the per-draw one
    (with replacement, several samples) checks entries one by one."""
    if per_draw:
        if not (w >= 0).all():
            raise RuntimeError("invalid multinomial distribution (encountering probability "
                               "entry < 0)")
        if not numpy.isfinite(w).all():
            raise RuntimeError("invalid multinomial distribution (encountering probability "
                               "entry = infinity or NaN)")
    elif not (numpy.isfinite(w).all() and (w >= 0).all()):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if not w.sum() > 0:
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")


class BatchSampler(Sampler):
    """Lists of ``batch_size`` indices from ``sampler``; the last may be short unless
    ``drop_last``.

    >>> list(BatchSampler(SequentialSampler(range(5)), 2, drop_last=False))
    [[0, 1], [2, 3], [4]]
    """

    def __init__(self, sampler, batch_size, drop_last):
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got "
                             f"batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got "
                             f"drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self):
        it = iter(self.sampler)
        if self.drop_last:
            for batch in zip(*[it] * self.batch_size, strict=False):
                yield [*batch]
        else:
            batch = [*itertools.islice(it, self.batch_size)]
            while batch:
                yield batch
                batch = [*itertools.islice(it, self.batch_size)]

    def __len__(self):
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size
