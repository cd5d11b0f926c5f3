"""``retrograd.utils.data``: datasets, samplers and the DataLoader, as ``torch.utils.data``.

>>> from retrograd.utils.data import DataLoader, TensorDataset
>>> loader = DataLoader(TensorDataset(retrograd.arange(10.)), batch_size=4)
>>> [b[0].tolist() for b in loader]
[[0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0], [8.0, 9.0]]
"""

from ._utils.collate import default_collate, default_convert  # noqa: F401
from ._utils.worker import WorkerInfo, get_worker_info  # noqa: F401
from .dataloader import DataLoader  # noqa: F401
from .dataset import (ChainDataset, ConcatDataset, Dataset, IterableDataset,  # noqa: F401
                      StackDataset, Subset, TensorDataset, random_split)
from . import distributed  # noqa: F401
from .distributed import DistributedSampler  # noqa: F401
from .sampler import (BatchSampler, RandomSampler, Sampler, SequentialSampler,  # noqa: F401
                      SubsetRandomSampler, WeightedRandomSampler)

__all__ = ["BatchSampler", "ChainDataset", "ConcatDataset", "DataLoader", "Dataset",
           "DistributedSampler",
           "IterableDataset", "RandomSampler", "Sampler", "SequentialSampler", "StackDataset",
           "Subset", "SubsetRandomSampler", "TensorDataset", "WeightedRandomSampler",
           "WorkerInfo", "default_collate", "default_convert", "get_worker_info",
           "random_split"]
