"""``Join``: training on uneven inputs. A rank whose data ran out leaves the loop and
enters ``Join.__exit__``, where it shadows, once per iteration of the ranks still
training, the collectives their iteration runs, so nobody waits forever.

Every active rank's iteration starts with an all-reduce of 1 (``notify_join_context``);
a joined rank contributes 0 to it, so the sum counts the ranks still active, and 0
means every rank has joined.
"""

import warnings
from abc import ABC, abstractmethod
from typing import NamedTuple

from ..._creation import ones, zeros
from .._collectives import all_reduce
from ..distributed_c10d import get_rank

__all__ = ["Join", "JoinHook", "Joinable"]


class JoinHook:
    """What a :class:`Joinable` does while joined: ``main_hook()`` once per iteration of
    the ranks still active (their collectives, shadowed), ``post_hook(is_last_joiner)``
    once every rank has joined."""

    def main_hook(self):
        """Shadow one iteration's collectives."""

    def post_hook(self, is_last_joiner):
        """Run once all ranks joined; ``is_last_joiner``: this rank was among the last."""


class _JoinConfig(NamedTuple):
    enable: bool
    throw_on_early_termination: bool
    is_first_joinable: bool

    @staticmethod
    def construct_disabled_join_config():
        return _JoinConfig(enable=False, throw_on_early_termination=False,
                           is_first_joinable=False)


class Joinable(ABC):
    """A class whose collectives a joined rank can shadow: it gives a :class:`JoinHook`,
    its process group and device, and calls :meth:`Join.notify_join_context` before each
    iteration's collectives."""

    @abstractmethod
    def __init__(self):
        super().__init__()
        self._join_config = _JoinConfig.construct_disabled_join_config()

    @abstractmethod
    def join_hook(self, **kwargs):
        """The :class:`JoinHook` for one ``Join`` (``kwargs``: that ``Join``'s)."""

    @property
    @abstractmethod
    def join_device(self):
        """The device the join context's collectives run on."""

    @property
    @abstractmethod
    def join_process_group(self):
        """The process group of the join context's collectives."""


class Join:
    """Context manager for ranks with different numbers of inputs. Ranks that finish
    early run their joinables' hooks until every rank has finished; with
    ``throw_on_early_termination=True`` every rank raises instead, once one finished.

    >>> with model.join():          # or Join([model, zero_optimizer])
    ...     for x, y in my_batches:  # some ranks have fewer
    ...         loss_fn(model(x), y).backward(); opt.step()
    """

    def __init__(self, joinables, enable=True, throw_on_early_termination=False, **kwargs):
        if len(joinables) == 0:
            raise ValueError("The join context manager requires at least one joinable")
        self._joinables = joinables
        self._join_hooks = [j.join_hook(**kwargs) for j in joinables]
        self._enable = enable
        self._throw_on_early_termination = throw_on_early_termination
        for i, j in enumerate(joinables):
            j._join_config = _JoinConfig(enable=enable,
                                         throw_on_early_termination=throw_on_early_termination,
                                         is_first_joinable=i == 0)
        self._process_group = self._device = None
        for j in joinables:
            if self._process_group is None:
                self._process_group = j.join_process_group
            elif self._process_group != j.join_process_group:
                raise ValueError("Using join context manager with multiple process groups")
            if self._device is None:
                self._device = j.join_device
        self._rank = get_rank(self._process_group)

    def __enter__(self):
        return None

    def __exit__(self, type, value, traceback):
        """Run the main hooks until every rank has joined, then the post hooks (an
        exception leaving the block passes through untouched)."""
        if not self._enable or type:
            return
        is_last_joiner = True
        skew = 0
        while self._count_nonjoined():
            if skew > 1000:
                warnings.warn(
                    "Detected uneven input skew of greater than 1000. This means that rank "
                    f"{self._rank} has at least 1000 fewer inputs than other "
                    "currently-active ranks. This level of skew could lead to performance "
                    "degradation during training.", stacklevel=2)
            if self._throw_on_early_termination:
                all_reduce(ones(1, device=self._device), group=self._process_group)
                raise RuntimeError(f"Rank {self._rank} exhausted all inputs.")
            for hook in self._join_hooks:
                hook.main_hook()
            is_last_joiner = False
            skew += 1
        for hook in self._join_hooks:
            hook.post_hook(is_last_joiner)

    def _count_nonjoined(self):
        """The ranks still active (this joined one adds 0 to their all-reduce of 1)."""
        count = zeros(1, device=self._device)
        all_reduce(count, group=self._process_group)
        return int(count.item())

    @staticmethod
    def notify_join_context(joinable):
        """Tell the join context this rank has not joined (the first joinable's call does:
        an all-reduce of 1, returned as its Work); with ``throw_on_early_termination``,
        raise if some rank has already joined."""
        if not hasattr(joinable, "_join_config"):
            raise AssertionError(f"Check that the {type(joinable)} constructor calls the "
                                 "``Joinable`` constructor")
        config = joinable._join_config
        if not config.is_first_joinable or not config.enable:
            return None
        group = joinable.join_process_group
        work = all_reduce(ones(1, device=joinable.join_device), group=group, async_op=True)
        if config.throw_on_early_termination:
            joined = zeros(1, device=joinable.join_device)
            all_reduce(joined, group=group)
            if joined.item():
                work.wait()  # (MPI may not drop a collective's request unfinished)
                raise RuntimeError("Detected at least one rank that exhausted inputs. "
                                   "Throwing across all ranks.")
        return work
