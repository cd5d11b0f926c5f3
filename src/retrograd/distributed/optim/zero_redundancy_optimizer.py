"""``ZeroRedundancyOptimizer``: the optimizer state sharded across ranks (ZeRO stage 1).

Each parameter is owned by one rank (greedily, largest first, to the rank holding the
fewest elements, as PyTorch partitions); each rank builds the wrapped optimizer over its
own parameters only, so it keeps 1/world_size of the state. ``step`` updates the owned
parameters, then every owner broadcasts its parameters to the other ranks.
"""

import logging

from ...optim.optimizer import Optimizer
from .._collectives import broadcast, gather_object
from ..algorithms.join import Join, Joinable, JoinHook
from ..distributed_c10d import GroupMember, _group
from ._zero_overlap import _OverlapInfo, _OverlapStatus

_log = logging.getLogger(__name__)

__all__ = ["ZeroRedundancyOptimizer"]


class _ZeROJoinHook(JoinHook):
    """A joined rank's part in the others' ``step``: its own step (its shard updated with
    the gradients it holds, then every shard's broadcast), as PyTorch's."""

    def __init__(self, zero):
        self.zero = zero

    def main_hook(self):
        self.zero.step()


class ZeroRedundancyOptimizer(Optimizer, Joinable):
    """Wraps ``optimizer_class`` so each rank keeps the state of its share of ``params``;
    use it as the optimizer it wraps (every rank calls ``step``; LR schedulers work on
    it). ``consolidate_state_dict(to)`` on every rank, then ``state_dict()`` on rank
    ``to``, gives the whole optimizer's state dict. A :class:`Joinable`: with uneven
    inputs, ``Join([ddp, zero])``.

    >>> opt = ZeroRedundancyOptimizer(ddp.parameters(), optimizer_class=retrograd.optim.Adam,
    ...                               lr=1e-3)
    >>> loss.backward(); opt.step()
    """

    def __init__(self, params, optimizer_class, process_group=None,
                 parameters_as_bucket_view=False, overlap_with_ddp=False, **defaults):
        if not (isinstance(optimizer_class, type) and issubclass(optimizer_class, Optimizer)):
            raise TypeError(f"optimizer_class must be a subclass of Optimizer, got "
                            f"{optimizer_class!r}")
        params = list(params)
        if not params:
            raise ValueError("ZeroRedundancyOptimizer got an empty parameter list")
        self.initialized = False
        super().__init__(params, defaults)
        Joinable.__init__(self)
        self.process_group = process_group or GroupMember.WORLD
        group = _group(process_group)
        self.world_size, self.rank = group.size(), group.rank()
        self.parameters_as_bucket_view = parameters_as_bucket_view
        self._optim_constructor = optimizer_class
        self._optim_defaults = defaults
        self._overlap_with_ddp = overlap_with_ddp
        self._all_state_dicts = []
        if overlap_with_ddp:  # the shards are DDP's buckets: known once DDP rebuilt them
            self._overlap_info = _OverlapInfo(self.world_size)
            self._partition, self.optim = None, None
            if parameters_as_bucket_view:
                _log.warning("`parameters_as_bucket_view=True` will be ignored since "
                             "`overlap_with_ddp=True`; instead, a different bucketing "
                             "strategy will be used")
        else:
            self._partition = self._partition_parameters()
            self._init_local_optimizer()
        self.initialized = True

    def _init_local_optimizer(self):
        self.optim = self._optim_constructor(self._partition[self.rank], **self._optim_defaults)
        self._sync_param_groups(self.optim.param_groups, self.param_groups)

    # ---- overlap_with_ddp: set up by ddp_zero_hook's hooks ------------------------------
    def _init_zero_for_overlap(self):
        """The delayed set-up: each rank's share is the buckets assigned to it."""
        if len(self.param_groups) != 1:
            raise RuntimeError("Overlapping DDP with ZeRO only supports a single parameter "
                               "group")
        info = self._overlap_info
        info.status = _OverlapStatus.INITIALIZED
        info.assign(self.world_size, self.rank)
        group = self.param_groups[0]
        self._partition = [[{**group, "params": ps}] for ps in info.params_per_rank]
        self._init_local_optimizer()

    def _local_step(self, gradients=None, closure=None, **kwargs):
        """This rank's update without the broadcasts; ``gradients`` (overlap only) gives
        the gradient of each local parameter in order, None to leave one alone."""
        Join.notify_join_context(self)
        self._sync_param_groups(self.param_groups, self.optim.param_groups)
        if gradients is None:
            loss = self.optim.step(closure, **kwargs) if closure is not None \
                else self.optim.step(**kwargs)
        else:
            params = self.optim.param_groups[0]["params"]
            held = [p.grad for p in params]
            for p, g in zip(params, gradients, strict=True):
                p.grad = g
            try:
                loss = self.optim.step()
            finally:
                for p, g in zip(params, held, strict=True):
                    p.grad = g
        self._sync_param_groups(self.optim.param_groups, self.param_groups)
        return loss

    def _check_overlap_initialized(self):
        if self._overlap_with_ddp and self._overlap_info.status != _OverlapStatus.INITIALIZED:
            raise RuntimeError("This method should not be called until this "
                               "ZeroRedundancyOptimizer instance has been fully initialized")

    def _partition_parameters(self):
        """For each rank, its share of every param group (PyTorch's greedy partition)."""
        per_rank = [[] for _ in range(self.world_size)]
        sizes = [0] * self.world_size
        for group in self.param_groups:
            shares = [[] for _ in range(self.world_size)]
            for p in sorted(group["params"], key=lambda t: t.numel(), reverse=True):
                r = sizes.index(min(sizes))
                shares[r].append(p)
                sizes[r] += p.numel()
            for r, share in enumerate(shares):
                per_rank[r].append({**group, "params": share})
        return per_rank

    def add_param_group(self, param_group):
        """Add a group; its parameters are shared out among the ranks as the others."""
        if self.initialized and self._overlap_with_ddp:
            raise RuntimeError("ZeroRedundancyOptimizer with `overlap_with_ddp=True` only "
                               "supports a single parameter group")
        super().add_param_group(param_group)
        if self.initialized:
            self._partition = self._partition_parameters()
            self.optim.add_param_group(self._partition[self.rank][-1])

    @staticmethod
    def _sync_param_groups(src, dst):
        """Group options (lr, betas, ...) from ``src`` to ``dst``, the parameters kept."""
        for s, d in zip(src, dst, strict=True):
            d.update({k: v for k, v in s.items() if k != "params"})

    def step(self, closure=None, **kwargs):
        """Update this rank's parameters, then broadcast every rank's to the others
        (with ``overlap_with_ddp`` the DDP hook steps: this only warns)."""
        if self._overlap_with_ddp:
            _log.warning("`step()` should not be included in the training loop when "
                         "`overlap_with_ddp=True`")
            return None
        loss = self._local_step(closure=closure, **kwargs)
        works = [broadcast(p, group_src=r, group=self.process_group, async_op=True)
                 for r, groups in enumerate(self._partition)
                 for g in groups for p in g["params"]]
        for w in works:
            w.wait()
        return loss

    def join_hook(self, **kwargs):
        """The :class:`JoinHook` stepping this optimizer while its rank is joined."""
        return _ZeROJoinHook(self)

    @property
    def join_device(self):
        return self.param_groups[0]["params"][0].device

    @property
    def join_process_group(self):
        return self.process_group

    def consolidate_state_dict(self, to=0):
        """Gather every rank's shard of the state on rank ``to`` (call it on every rank)."""
        self._check_overlap_initialized()
        self._sync_param_groups(self.param_groups, self.optim.param_groups)
        gathered = [None] * self.world_size if self.rank == to else None
        gather_object(self.optim.state_dict(), gathered, group_dst=to,
                      group=self.process_group)
        self._all_state_dicts = gathered or []

    def state_dict(self):
        """The whole optimizer's state dict, as the wrapped optimizer over every parameter
        would give (only on the rank ``consolidate_state_dict`` gathered to)."""
        self._check_overlap_initialized()
        if not self._all_state_dicts:
            raise RuntimeError("Optimizer state has not been consolidated on this rank. "
                               f"Please call `consolidate_state_dict(to={self.rank})` on all "
                               "ranks beforehand if you meant to save the global state.")
        state_dict = super().state_dict()
        index = {id(p): i for i, p in enumerate(p for g in self.param_groups
                                                for p in g["params"])}
        for local, groups in zip(self._all_state_dicts, self._partition, strict=True):
            local_index = [i for g in local["param_groups"] for i in g["params"]]
            params = [p for g in groups for p in g["params"]]
            for i, p in zip(local_index, params, strict=True):
                if i in local["state"]:
                    state_dict["state"][index[id(p)]] = local["state"][i]
        state_dict["state"] = dict(sorted(state_dict["state"].items()))
        return state_dict

    def load_state_dict(self, state_dict):
        """Load a whole state dict (from :meth:`state_dict`): each rank keeps its shard."""
        self._check_overlap_initialized()
        params = [p for g in self.param_groups for p in g["params"]]
        owned = {id(p) for g in self._partition[self.rank] for p in g["params"]}
        mine = {i: v for i, v in state_dict["state"].items() if id(params[i]) in owned}
        super().load_state_dict({**state_dict, "state": mine})
        for p in list(self.state):
            self.optim.state[p] = self.state.pop(p)
        self._sync_param_groups(self.param_groups, self.optim.param_groups)
