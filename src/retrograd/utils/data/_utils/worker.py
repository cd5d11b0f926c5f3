"""What runs inside a DataLoader worker process, and ``get_worker_info``.

A worker takes ``(task_id, indices)`` from its own index queue and puts
``(task_id, batch)`` on the shared data queue; an exception travels back wrapped, with
its traceback, and is raised again in the main process as torch does.
"""

import random
import sys
import traceback

import numpy

from ...._random import manual_seed

__all__ = ["WorkerInfo", "get_worker_info"]

_worker_info = None


class WorkerInfo:
    """``id``, ``num_workers``, ``seed`` and this worker's copy of the ``dataset``."""

    def __init__(self, **kwargs):
        for k, v in kwargs.items():
            object.__setattr__(self, k, v)
        object.__setattr__(self, "_keys", tuple(kwargs))

    def __setattr__(self, key, val):
        raise RuntimeError(f"Cannot assign attributes to {type(self).__name__} objects")

    def __repr__(self):
        items = ", ".join(f"{k}={getattr(self, k)}" for k in self._keys)
        return f"{type(self).__name__}({items})"


def get_worker_info():
    """This worker's :class:`WorkerInfo` inside a worker process, ``None`` elsewhere."""
    return _worker_info


class ExceptionWrapper:
    """An exception and its formatted traceback, picklable across processes."""

    def __init__(self, exc_info=None, where="in background"):
        exc_info = exc_info or sys.exc_info()
        self.exc_type = exc_info[0]
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self):
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:  # KeyError prints its argument's repr: keep the lines
            msg = KeyErrorMessage(msg)
        try:
            exception = self.exc_type(msg)
        except Exception:
            raise RuntimeError(msg) from None
        raise exception


class KeyErrorMessage(str):
    """A message whose repr is itself, so a re-raised KeyError prints the worker's
    traceback line by line (PyTorch's class of the same name)."""

    def __repr__(self):
        return self


class IterableDatasetStopIteration:
    """A worker's notice that its copy of an IterableDataset is exhausted."""

    def __init__(self, worker_id):
        self.worker_id = worker_id


RESUME = "resume"  # the task id of a new-epoch notice (and of the worker's answer)


class MapDatasetFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset, self.auto_collation = dataset, auto_collation
        self.collate_fn, self.drop_last = collate_fn, drop_last
        getitems = getattr(dataset, "__getitems__", None)
        self.getitems = getitems if callable(getitems) else None

    def fetch(self, index):
        if not self.auto_collation:
            return self.collate_fn(self.dataset[index])
        if self.getitems is not None:
            return self.collate_fn(self.getitems(index))
        return self.collate_fn([self.dataset[i] for i in index])


class IterableDatasetFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset_iter = iter(dataset)
        self.auto_collation = auto_collation
        self.collate_fn, self.drop_last = collate_fn, drop_last
        self.ended = False

    def fetch(self, index):
        if self.ended:
            raise StopIteration
        if not self.auto_collation:
            return self.collate_fn(next(self.dataset_iter))
        data = []
        for _ in index:
            try:
                data.append(next(self.dataset_iter))
            except StopIteration:
                self.ended = True
                break
        if not data or (self.drop_last and len(data) < len(index)):
            raise StopIteration
        return self.collate_fn(data)


def seed_worker(seed):
    """Seed what a dataset's random transforms draw from: ``random``, NumPy's global RNG
    and retrograd's default generator."""
    random.seed(seed)
    numpy.random.seed(seed % 2 ** 32)
    manual_seed(seed)


def worker_loop(iterable, dataset, index_queue, data_queue, auto_collation, collate_fn,
                drop_last, base_seed, init_fn, worker_id, num_workers):
    global _worker_info
    seed = base_seed + worker_id
    seed_worker(seed)
    _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed,
                              dataset=dataset)
    init_error = None
    fetcher = None
    try:
        if init_fn is not None:
            init_fn(worker_id)
        fetcher = (IterableDatasetFetcher if iterable else MapDatasetFetcher)(
            dataset, auto_collation, collate_fn, drop_last)
    except Exception:
        init_error = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
    ended = False
    while True:
        task = index_queue.get()
        if task is None:
            break
        idx, index = task
        if idx == RESUME:  # a new epoch on persistent workers: a fresh dataset iterator
            if iterable and init_error is None:
                fetcher = IterableDatasetFetcher(dataset, auto_collation, collate_fn, drop_last)
            ended = False
            data_queue.put((RESUME, worker_id))
            continue
        if init_error is not None:
            data = init_error
        elif ended:
            data = IterableDatasetStopIteration(worker_id)
        else:
            try:
                data = fetcher.fetch(index)
            except StopIteration:
                if not iterable:
                    raise
                ended = True
                data = IterableDatasetStopIteration(worker_id)
            except Exception:
                data = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
        data_queue.put((idx, data))
        del data
    data_queue.cancel_join_thread()
