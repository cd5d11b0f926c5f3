"""``DataLoader``: batches from a dataset through a sampler and ``collate_fn``, in this
process (``num_workers=0``) or in worker processes that fetch and collate in parallel
while batches still come out in the sampler's order.
"""

import itertools
import multiprocessing
import multiprocessing.connection as _connection
import signal
import time

from ... import _random
from ._utils import worker as _worker
from ._utils.collate import default_collate, default_convert
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

__all__ = ["DataLoader", "get_worker_info", "default_collate", "default_convert"]

get_worker_info = _worker.get_worker_info
_STATUS_CHECK_INTERVAL = 5.0  # seconds: PyTorch's MP_STATUS_CHECK_INTERVAL


class _InfiniteConstantSampler(Sampler):
    """The index stream of an IterableDataset: ``None`` forever (the dataset decides)."""

    def __iter__(self):
        return itertools.repeat(None)


class DataLoader:
    """Iterate over ``dataset`` in batches.

    >>> loader = DataLoader(TensorDataset(x, y), batch_size=32, shuffle=True)
    >>> for xb, yb in loader: ...

    ``pin_memory`` has no effect (there is no pinned host memory on NumPy). With
    ``num_workers > 0``, batches are fetched in worker processes (``multiprocessing``), each
    seeded ``base_seed + worker_id``; the dataset and ``collate_fn`` must then be usable
    there (picklable under the ``spawn`` start method).
    """

    _FROZEN = ("batch_size", "batch_sampler", "sampler", "drop_last", "dataset",
               "persistent_workers")

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
                 num_workers=0, collate_fn=None, pin_memory=False, drop_last=False, timeout=0,
                 worker_init_fn=None, multiprocessing_context=None, generator=None, *,
                 prefetch_factor=None, persistent_workers=False, pin_memory_device="",
                 in_order=True):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 "
                             "to disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in "
                             "multiprocessing.let num_workers > 0 to enable multiprocessing, "
                             "otherwise set prefetch_factor to None.")
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        if not in_order:
            raise NotImplementedError("retrograd's DataLoader returns batches in order only "
                                      "(in_order=False is not supported)")
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order
        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            if shuffle not in {False, None}:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified "
                                 f"shuffle option, but got shuffle={shuffle}")
            if sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified "
                                 f"sampler option, but got sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified "
                                 f"batch_sampler option, but got batch_sampler={batch_sampler}")
        else:
            shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")
        if sampler is None:
            if self._iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.dataset = dataset
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self._iterator = None
        self.__dict__["_initialized"] = True

    def __setattr__(self, attr, val):
        if self.__dict__.get("_initialized") and attr in self._FROZEN:
            raise ValueError(f"{attr} attribute should not be set after "
                             f"{type(self).__name__} is initialized")
        super().__setattr__(attr, val)

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def __iter__(self):
        if self.num_workers == 0:
            return _SingleProcessDataLoaderIter(self)
        if self.persistent_workers:
            if self._iterator is None:
                self._iterator = _MultiProcessingDataLoaderIter(self)
            else:
                self._iterator._reset()
            return self._iterator
        return _MultiProcessingDataLoaderIter(self)

    def __len__(self):
        if self._iterable:
            length = len(self.dataset)
            if self.batch_size is not None:
                length = length // self.batch_size if self.drop_last else \
                    -(-length // self.batch_size)
            return length
        return len(self._index_sampler)


class _BaseDataLoaderIter:
    def __init__(self, loader):
        self._loader = loader
        self._dataset = loader.dataset
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._collate_fn = loader.collate_fn
        self._reset()

    def _reset(self):
        # Drawn before the sampler's own draws, as in torch, so that a seed gives the same
        # order whatever num_workers is.
        gen = self._loader.generator or _random.default_generator
        self._base_seed = int(gen._rng.integers(2 ** 63))
        self._sampler_iter = iter(self._loader._index_sampler)

    def __iter__(self):
        return self

    def __len__(self):
        return len(self._loader)


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    def __init__(self, loader):
        super().__init__(loader)
        fetcher = _worker.IterableDatasetFetcher if loader._iterable \
            else _worker.MapDatasetFetcher
        self._fetcher = fetcher(self._dataset, self._auto_collation, self._collate_fn,
                                self._drop_last)

    def __next__(self):
        return self._fetcher.fetch(next(self._sampler_iter))


class _MultiProcessingDataLoaderIter(_BaseDataLoaderIter):
    """Up to ``prefetch_factor * num_workers`` batches in flight, handed out round-robin;
    results are buffered until their turn, so the order is the sampler's."""

    def __init__(self, loader):
        ctx = loader.multiprocessing_context
        if ctx is None or isinstance(ctx, str):
            ctx = multiprocessing.get_context(ctx)
        self._num_workers = loader.num_workers
        self._prefetch = loader.prefetch_factor * loader.num_workers
        self._timeout = loader.timeout
        self._data_queue = ctx.Queue()
        self._index_queues, self._workers = [], []
        super().__init__(loader)
        for wid in range(self._num_workers):
            q = ctx.Queue()
            q.cancel_join_thread()
            w = ctx.Process(target=_worker.worker_loop, daemon=True, args=(
                loader._iterable, self._dataset, q, self._data_queue, self._auto_collation,
                self._collate_fn, self._drop_last, self._base_seed, loader.worker_init_fn, wid,
                self._num_workers))
            w.start()
            self._index_queues.append(q)
            self._workers.append(w)
        self._shutdown = False
        self._worker_failure = None  # the message once a worker died
        self._start_epoch()

    def _reset(self):
        super()._reset()
        if self._workers:  # persistent workers: a new epoch on the same processes
            self._resume_workers()
            self._start_epoch()

    def _resume_workers(self):
        """Restart every worker's dataset iterator; results of the last epoch still on the
        way (an epoch left early, end notices of exhausted workers) are dropped meanwhile."""
        for q in self._index_queues:
            q.put((_worker.RESUME, None))
        waiting = self._num_workers
        while waiting:
            idx, _ = self._get_data()
            waiting -= idx == _worker.RESUME

    def _start_epoch(self):
        self._send_idx = self._rcvd_idx = 0
        self._task_info = {}
        self._active = [True] * self._num_workers
        self._worker_cycle = itertools.cycle(range(self._num_workers))
        for _ in range(self._prefetch):
            self._try_put_index()

    def _try_put_index(self):
        try:
            index = next(self._sampler_iter)
        except StopIteration:
            return
        for _ in range(self._num_workers):
            wid = next(self._worker_cycle)
            if self._active[wid]:
                break
        else:
            return
        self._index_queues[wid].put((self._send_idx, index))
        self._task_info[self._send_idx] = (wid,)
        self._send_idx += 1

    def _get_data(self):
        """The next ``(task id, data)`` from the workers. It waits on the data queue and on
        every worker's sentinel at once, so a worker that dies (killed, crashed) is noticed
        at once, where PyTorch's SIGCHLD handler notices it (both only once the kernel has
        freed the worker's memory, which comes first in its exit); a sentinel that never fires
        (a worker's child holding it open) is still caught by the liveness check that
        each ``_STATUS_CHECK_INTERVAL`` without data runs, as PyTorch's polling does."""
        if self._worker_failure is not None:  # the workers are gone: say so again
            raise RuntimeError(self._worker_failure)
        reader = self._data_queue._reader  # the queue's end: waitable with the sentinels
        deadline = time.monotonic() + self._timeout if self._timeout > 0 else None
        while True:
            wait_s = _STATUS_CHECK_INTERVAL
            if deadline is not None:
                wait_s = min(wait_s, max(deadline - time.monotonic(), 0.0))
            ready = _connection.wait([reader, *(w.sentinel for w in self._workers)], wait_s)
            exited = [w for w in self._workers if w.sentinel in ready]
            if exited or not ready:
                self._error_if_any_worker_failed(exited)
            if reader in ready:
                return self._data_queue.get()
            if deadline is not None and time.monotonic() >= deadline:
                raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")

    def _error_if_any_worker_failed(self, exited):
        """PyTorch's RuntimeError for workers that exited, with the first one's exit status
        (signal or exit code) as its cause; the other workers are stopped first."""
        for w in exited:  # its sentinel fires as it exits, maybe before it can be reaped
            w.join()
        dead = [w for w in self._workers if not w.is_alive()]
        if not dead:
            return
        self._shutdown_workers(graceful=False)
        code, pid = dead[0].exitcode, dead[0].pid
        cause = None
        if code < 0:
            cause = RuntimeError(f"DataLoader worker (pid {pid}) is killed by signal: "
                                 f"{signal.strsignal(-code)}. ")
        elif code > 0:
            cause = RuntimeError(f"DataLoader worker (pid {pid}) exited unexpectedly with exit "
                                 f"code {code}. Details are lost due to multiprocessing. "
                                 f"Rerunning with num_workers=0 may give better error trace.")
        pids = ", ".join(str(w.pid) for w in dead)
        self._worker_failure = f"DataLoader worker (pid(s) {pids}) exited unexpectedly"
        raise RuntimeError(self._worker_failure) from cause

    def __next__(self):
        while True:
            while self._rcvd_idx < self._send_idx:
                info = self._task_info[self._rcvd_idx]
                if len(info) == 2 or self._active[info[0]]:
                    break
                del self._task_info[self._rcvd_idx]  # its worker's dataset had ended
                self._rcvd_idx += 1
            else:
                if not self._loader.persistent_workers:
                    self._shutdown_workers()
                raise StopIteration
            if len(self._task_info[self._rcvd_idx]) == 2:
                return self._process(self._task_info.pop(self._rcvd_idx)[1])
            idx, data = self._get_data()
            if isinstance(data, _worker.IterableDatasetStopIteration):
                self._active[data.worker_id] = False
                self._try_put_index()
                continue
            if idx != self._rcvd_idx:
                self._task_info[idx] += (data,)
                continue
            del self._task_info[idx]
            return self._process(data)

    def _process(self, data):
        self._rcvd_idx += 1
        self._try_put_index()
        if isinstance(data, _worker.ExceptionWrapper):  # the workers live on, as PyTorch's:
            data.reraise()                               # the next batch can still be asked
        return data

    def _shutdown_workers(self, graceful=True):
        """Stop the workers: asked to finish (given ``_STATUS_CHECK_INTERVAL`` each), or,
        not ``graceful`` (a worker died, the others may be busy), terminated at once. All
        are signalled before any is waited on: a forked worker's exit frees its copy of this
        process's memory, which takes long in a big process, so the exits run side by side
        rather than one after another."""
        if self._shutdown:
            return
        self._shutdown = True
        for q in self._index_queues:
            q.put(None)
        if graceful:
            for w in self._workers:
                w.join(timeout=_STATUS_CHECK_INTERVAL)
        alive = [w for w in self._workers if w.is_alive()]
        for w in alive:
            w.terminate()
        for w in alive:
            w.join()
        for q in self._index_queues:
            q.close()
        self._data_queue.cancel_join_thread()
        self._data_queue.close()

    def __del__(self):
        if getattr(self, "_workers", None):
            self._shutdown_workers()
