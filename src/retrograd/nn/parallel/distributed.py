"""``DistributedDataParallel``: one model replica per rank, gradients averaged by bucketed
all-reduces that overlap the rest of backward.

The parameters are grouped into buckets in reverse order (the order backward usually
produces their gradients), the first of 1 MiB and the others of ``bucket_cap_mb``
(25 MiB), one dtype per bucket; after the first backward they are regrouped in the order
rank 0's gradients actually arrived, as PyTorch rebuilds its buckets. Each parameter's
post-accumulate-grad hook copies its gradient into its bucket; a full bucket's
non-blocking all-reduce starts at once, in bucket order on every rank (so the collectives
match). A callback queued on the engine waits for them when backward ends and writes the
averages back into ``.grad``.

A communication hook (``register_comm_hook``) replaces the all-reduce: it gets the
bucket's undivided gradients and returns a future of the new values. Under ``Join`` a rank
whose inputs ran out runs, once per iteration of the others, the same collectives in the
same order (``_DDPJoinHook``), on zero gradients.
"""

import contextlib
import inspect
import itertools
import warnings
import weakref

from ... import _dtype, _observe
from ... import distributed as dist
from ..._creation import tensor
from ..._tensor import Tensor, wrap
from ...autograd.engine import queue_callback
from ...autograd.grad_mode import is_grad_enabled, no_grad
from ...autograd.node import AccumulateGrad
from ...backend import get_array_module, host_array_module
from ...distributed.algorithms.join import Join, Joinable, JoinHook
from ...distributed.distributed_c10d import _group
from ...distributed.optim.apply_optimizer_in_backward import param_to_optim_hook_handle_map
from ...futures import Future
from ...optim.in_backward import active_handles
from ..modules.module import Module

__all__ = ["DistributedDataParallel"]

_DEFAULT_FIRST_BUCKET_BYTES = 1024 * 1024
_DEFAULT_BUCKET_CAP_MB = 25


def _bucket_indices(params, limits):
    """PyTorch's bucket assignment: walk ``params`` in order, one open bucket per dtype,
    closed once it reaches its limit (the next limit then applies; the last one stays)."""
    buckets, open_buckets = [], {}
    for i, p in enumerate(params):
        indices, size, k = open_buckets.get(p.dtype, ([], 0, 0))
        indices.append(i)
        size += p.numel() * p.element_size()
        if size >= limits[k]:
            buckets.append(indices)
            indices, size, k = [], 0, min(k + 1, len(limits) - 1)
        open_buckets[p.dtype] = (indices, size, k)
    buckets += [indices for indices, _, _ in open_buckets.values() if indices]
    return sorted(buckets, key=lambda b: b[0])


def _used_flags(used):
    """Which parameters this rank used, as int32 flags on the host (reduced with MAX)."""
    return host_array_module().array(used, dtype=_dtype.int32.np)


class _Bucket:
    """Parameters reduced together: a flat buffer of their gradients (booked by memory
    accounting as a communication bucket) and the future of its reduction."""

    __slots__ = ("params", "offsets", "flat", "buffer", "pending", "future", "__weakref__")

    def __init__(self, params):
        self.params = params
        self.offsets = list(itertools.accumulate((p.numel() for p in params), initial=0))
        data = params[0]._data
        self.flat = get_array_module(data).zeros(self.offsets[-1], data.dtype)
        if _observe.alloc is not None:  # booked as a bucket from its allocation
            _observe.alloc.made(self.flat, _observe.COMM_BUCKET)
        self.buffer = wrap(self.flat)
        self.pending, self.future = len(params), None

    def _storage_roles(self):
        """For memory accounting started after the bucket was made."""
        return ((self.flat, _observe.COMM_BUCKET),)


class _Reducer:
    """The per-backward state: which parameters are ready, the next bucket to launch."""

    def __init__(self, params, names, group, bucket_limits, find_unused):
        self.group, self.find_unused, self.names = group, find_unused, names
        self.size = _group(group).size()
        self.params, self.limits = params, bucket_limits
        self.index = {id(p): i for i, p in enumerate(params)}
        self._assign(list(reversed(params)))
        self.arrival = []  # indices of params in the order their gradients arrived, once
        self.rebuilt = False
        self.expect = False  # the last forward was synchronized: its backwards reduce
        self.started = False  # a hook of the running backward has run
        self.ready, self.unused = set(), []
        self.next = self.polled = 0  # buckets launched; buckets reduced and written back
        self.comm_hook = None  # (hook, state) of register_comm_hook
        self.divisor = self.size  # what the default reduction divides gradients by
        self.join_work = None  # Join: the forward's count of active ranks, for the divisor
        self.divide_by_initial_world_size = True
        self.in_backward = {}  # id(param) -> its _apply_optimizer_in_backward optimizers
        self.fused = {}  # id(param) -> the fuse_into_backward handles DDP runs the hooks of
        # find_unused: this rank's use of each parameter, being or-ed over the ranks
        # (used_work), then id(param) -> whether any rank used it (used)
        self.used_flags, self.used_ids, self.used_work, self.used = None, [], None, {}

    def _assign(self, order):
        self.buckets = [_Bucket([order[i] for i in b])
                        for b in _bucket_indices(order, self.limits)]
        self.where = {id(p): (b, k) for b in self.buckets for k, p in enumerate(b.params)}

    def rebuild_buckets(self):
        """After the first backward: buckets in the order rank 0's gradients arrived (every
        rank takes rank 0's, so the collectives still match), then never again. Not with
        ``find_unused_parameters`` (the order is partial), as PyTorch."""
        if self.rebuilt or self.find_unused or not self.arrival:
            return
        self.rebuilt = True
        order = [self.arrival]
        dist.broadcast_object_list(order, src=_group(self.group).ranks[0], group=self.group)
        if sorted(order[0]) == list(range(len(self.params))):
            self._assign([self.params[i] for i in order[0]])

    def prepare_for_backward(self, unused, params):
        if self.started:
            raise RuntimeError(
                "Expected to have finished reduction in the prior iteration before starting a "
                "new one. This error indicates that your module has parameters that were not "
                "used in producing loss, or that a previous backward failed.")
        self.unused = unused
        self._reset()
        self.arrival = []
        self.expect = True
        self.divisor = self.size
        if self.find_unused:  # a parameter no rank used keeps its gradient (None)
            skipped = {id(p) for p in unused}
            self.used_flags = _used_flags([id(p) not in skipped for p in params])
            self.used_work = self._reduce_used(self.used_flags)
            self.used_ids = [id(p) for p in params]

    def _reduce_used(self, flags):
        return dist.all_reduce(wrap(flags), op=dist.ReduceOp.MAX, group=self.group,
                               async_op=True)

    def hook(self, param):
        if not self.expect:  # a backward without synchronization: fused updates as usual
            self._run_fused(param)
            return
        if not self.started:
            self.started = True
            queue_callback(self.finalize)
            if self.join_work is not None:
                self.join_work.wait()
                if not self.divide_by_initial_world_size:  # the ranks still training
                    self.divisor = int(self.join_work.result()[0].item())
                self.join_work = None
            for p in self.unused:  # no gradient will come: they count as ready (zero)
                self._mark_ready(p)
        self._mark_ready(param)
        # MPI moves a reduction along only inside its calls: poll the oldest running one.
        while self.polled < self.next and self.buckets[self.polled].future.done():
            self._finish(self.buckets[self.polled])
            self.polled += 1

    def _mark_ready(self, p):
        b, k = self.where[id(p)]
        self.ready.add(id(p))
        if not (self.rebuilt or self.find_unused):
            self.arrival.append(self.index[id(p)])
        part = b.flat[b.offsets[k]:b.offsets[k + 1]].reshape(p._data.shape)
        if p.grad is None:
            part[...] = 0
        elif self.comm_hook is None:
            # divided before the sum, as PyTorch's reducer: one pass copies and divides
            get_array_module(part).divide(p.grad._data, self.divisor, out=part)
        else:  # a hook gets the gradients as they are
            part[...] = p.grad._data
        b.pending -= 1
        while self.next < len(self.buckets) and not self.buckets[self.next].pending:
            self._launch(self.next)
            self.next += 1

    def _launch(self, i):
        """Start bucket ``i``'s reduction: the communication hook's, else an all-reduce."""
        b = self.buckets[i]
        if self.comm_hook is None:
            work = dist.all_reduce(b.buffer, op=dist.ReduceOp.SUM, group=self.group,
                                   async_op=True)
            b.future = work.get_future()
            return
        hook, state = self.comm_hook
        bucket = dist.GradBucket(i, len(self.buckets), b.buffer, b.offsets, b.params)
        b.future = hook(state, bucket)
        if not isinstance(b.future, Future):
            raise TypeError(f"Communication hook must return a torch.futures.Future, got "
                            f"{type(b.future).__name__}")

    def _reset(self):
        """Ready for a backward: every bucket waits for all its parameters."""
        for b in self.buckets:
            b.pending, b.future = len(b.params), None
        self.ready = set()
        self.next = self.polled = 0

    def finalize(self):
        """At the end of backward: wait for every bucket, write the averages to ``.grad``.
        Another backward through the same graph (``retain_graph``) reduces again."""
        self.started = False
        missing = [self.names[id(p)] for b in self.buckets for p in b.params
                   if id(p) not in self.ready]
        if missing:
            self._reset()
            raise RuntimeError(
                "DistributedDataParallel: backward ended before every parameter received its "
                "gradient, so their buckets were never reduced. This error indicates that your "
                "module has parameters that were not used in producing loss. You can enable "
                "unused parameter detection by passing the keyword argument "
                "`find_unused_parameters=True` to `torch.nn.parallel.DistributedDataParallel`. "
                f"Parameters which did not receive grad for rank {dist.get_rank()}: "
                f"{', '.join(missing)}")
        while self.polled < len(self.buckets):
            b = self.buckets[self.polled]
            b.future.wait()
            self._finish(b)
            self.polled += 1
        self._reset()

    def _reduced(self, b):
        """The bucket's reduced values (the future's tensor) in ``b.flat``."""
        value = b.future.value()
        if isinstance(value, (list, tuple)) and value:  # a list of tensors: the first
            value = value[0]
        if not isinstance(value, Tensor):
            raise TypeError(f"the communication hook's Future must hold a tensor, got "
                            f"{type(value).__name__}")
        if value.numel() != b.flat.size:
            raise RuntimeError(f"the communication hook's tensor has {value.numel()} elements"
                               f" but its bucket {b.flat.size}: it must have the bucket's shape")
        if value._data is not b.flat:
            b.flat[...] = value._data.reshape(-1)

    def _finish(self, b):
        """A bucket is reduced: the averages into ``.grad``, then the parameters'
        in-backward optimizers step (and free the gradient), each as soon as it can."""
        self._reduced(b)
        if self.used_work is not None:
            self.used_work.wait()
            self.used = dict(zip(self.used_ids, self.used_flags.tolist(), strict=True))
            self.used_work = None
        for k, p in enumerate(b.params):
            if self.find_unused and not self.used[id(p)]:
                continue
            avg = b.flat[b.offsets[k]:b.offsets[k + 1]].reshape(p._data.shape)  # a view
            if p.grad is None:
                p.grad = wrap(avg.copy())
            else:
                p.grad._data[...] = avg
            optimizers = self.in_backward.get(id(p))
            if optimizers:
                for opt in optimizers:
                    opt.step()
                p.grad = None
            self._run_fused(p)

    def _run_fused(self, p):
        """The ``fuse_into_backward`` hooks DDP took over, for handles not removed since."""
        handles = self.fused.get(id(p))
        if handles:
            handles[:] = [h for h in handles if h.active]
            for h in handles:
                h.grad_ready(p)

    # ---- a joined rank (Join) shadows the collectives of the ranks still training ------
    def shadow_backward(self):
        """The collectives one synchronized backward runs, on zero gradients: the used
        flags (find_unused), then each bucket's reduction, in order."""
        if self.find_unused:
            self._reduce_used(_used_flags([False] * len(self.params))).wait()
        futures = []
        for i, b in enumerate(self.buckets):
            b.flat[...] = 0
            self._launch(i)
            futures.append(b.future)
        for f in futures:
            f.wait()
        self._reset()
        if not (self.rebuilt or self.find_unused or self.arrival):
            # a rank that joined before any backward takes part in the rebuild all the same
            self.arrival = list(range(len(self.params)))


def _hook(reducer_ref):
    def hook(param):
        reducer = reducer_ref()
        if reducer is not None:
            reducer.hook(param)
    return hook


def _leaves(outputs):
    """The tensors the autograd graph of ``outputs`` ends at (their AccumulateGrad nodes)."""
    stack, seen, found = [], set(), set()

    def add(x):
        if isinstance(x, (list, tuple)):
            for e in x:
                add(e)
        elif isinstance(x, dict):
            for e in x.values():
                add(e)
        elif getattr(x, "grad_fn", None) is not None:
            stack.append(x.grad_fn)

    add(outputs)
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        if type(node) is AccumulateGrad:
            found.add(id(node.variable))
        stack.extend(n for n, _ in node.next_functions if n is not None)
    return found


class DistributedDataParallel(Module, Joinable):
    """Data parallelism over the ranks of ``process_group``: construction broadcasts rank
    0's parameters and buffers; each forward broadcasts the buffers again
    (``broadcast_buffers``); each backward leaves every rank with the average gradient.

    >>> model = DistributedDataParallel(net)
    >>> model(x).sum().backward()   # .grad holds the mean over the ranks
    >>> with model.no_sync():       # accumulate locally; sync on the next backward
    ...     model(x2).sum().backward()
    """

    def __init__(self, module, device_ids=None, output_device=None, dim=0,
                 broadcast_buffers=None, init_sync=True, process_group=None,
                 bucket_cap_mb=None, find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False,
                 delay_all_reduce_named_params=None, param_to_hook_all_reduce=None,
                 mixed_precision=None, device_mesh=None, skip_all_reduce_unused_params=False,
                 bucket_cap_mb_list=None, batched_grad_copy=False, forward_sync_buffers=None):
        super().__init__()
        Joinable.__init__(self)
        for name, value in (("mixed_precision", mixed_precision), ("device_mesh", device_mesh),
                            ("delay_all_reduce_named_params", delay_all_reduce_named_params),
                            ("param_to_hook_all_reduce", param_to_hook_all_reduce),
                            ("bucket_cap_mb_list", bucket_cap_mb_list)):
            if value is not None:
                raise NotImplementedError(f"DistributedDataParallel: {name} is not supported")
        self.process_group = process_group or dist.GroupMember.WORLD
        group = _group(process_group)
        if group is None:
            raise ValueError("DistributedDataParallel: this rank is not in process_group")
        ignored = set(getattr(module, "_ddp_params_and_buffers_to_ignore", ()))
        named = [(n, p) for n, p in module.named_parameters() if n not in ignored]
        if not any(p.requires_grad for _, p in named):
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't "
                               "have any parameter that requires a gradient.")
        if device_ids or output_device:
            raise ValueError(
                "DistributedDataParallel device_ids and output_device arguments only work with "
                "single-device/multiple-device GPU modules or CPU modules, but got device_ids "
                f"{device_ids}, output_device {output_device}, and module parameters "
                f"{ {p.device for _, p in named} }.")
        if broadcast_buffers is not None:
            warnings.warn("`broadcast_buffers` is deprecated. Use `forward_sync_buffers` "
                          "instead.", FutureWarning, stacklevel=2)
        self.module = module
        self.device_ids = self.output_device = None
        self.dim = dim
        if forward_sync_buffers is not None:
            self.forward_sync_buffers, init_buffers = forward_sync_buffers, True
        else:
            self.forward_sync_buffers = init_buffers = broadcast_buffers is not False
        self.broadcast_buffers = self.forward_sync_buffers
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.static_graph = static_graph
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        self._buffers_synced = [b for n, b in module.named_buffers() if n not in ignored]
        params = [p for _, p in named if p.requires_grad]
        self._verify_same_model(group, [(n, tuple(p.shape), str(p.dtype)) for n, p in named])
        self._params_synced = [p for _, p in named]
        if init_sync:
            _broadcast_all(self._params_synced + (self._buffers_synced if init_buffers
                                                  else []), group)
        cap = _DEFAULT_BUCKET_CAP_MB if bucket_cap_mb is None else bucket_cap_mb
        self.bucket_bytes_cap = int(cap * 1024 * 1024)
        limits = ([_DEFAULT_FIRST_BUCKET_BYTES, self.bucket_bytes_cap] if bucket_cap_mb is None
                  else [self.bucket_bytes_cap])
        self.reducer = _Reducer(params, {id(p): n for n, p in named}, self.process_group,
                                limits, find_unused_parameters)
        hook = _hook(weakref.ref(self.reducer))
        self._hook_handles = [p.register_post_accumulate_grad_hook(hook) for p in params]

    @staticmethod
    def _verify_same_model(group, described):
        """Every rank must hold the same parameters (names, shapes, dtypes)."""
        everyone = [None] * group.size()
        dist.all_gather_object(everyone, described, group=group)
        for r, theirs in enumerate(everyone):
            if theirs != everyone[0]:
                diff = next((a, b) for a, b in zip(everyone[0] + [None], theirs + [None],
                                                   strict=False) if a != b)
                raise RuntimeError(
                    f"DDP expects same model across all ranks, but rank {group.ranks[r]} has "
                    f"{len(theirs)} params, while rank {group.ranks[0]} has {len(everyone[0])}"
                    f" (first difference: rank {group.ranks[0]} {diff[0]}, rank "
                    f"{group.ranks[r]} {diff[1]})")

    def forward(self, *inputs, **kwargs):
        join = self._join_config.enable
        work = Join.notify_join_context(self)
        if work is not None:  # the count of active ranks (waited for in backward)
            if self.reducer.join_work is not None:  # a forward without backward's
                self.reducer.join_work.wait()
            self.reducer.join_work = work
        if is_grad_enabled():
            self.reducer.rebuild_buckets()
        if self.forward_sync_buffers and self.require_forward_param_sync and \
                self._buffers_synced:
            # under Join rank 0 may have stopped: the highest active rank's buffers win
            src = self._find_common_rank(True) if join else 0
            _broadcast_all(self._buffers_synced, _group(self.process_group), src)
        sync = is_grad_enabled() and self.require_backward_grad_sync
        if join:  # tell joined ranks whether this iteration's backward reduces
            dist.all_reduce(tensor([float(sync)]), group=self.process_group)
        output = self.module(*inputs, **kwargs)
        self._setup_in_backward_optimizers()
        if sync:
            self.require_forward_param_sync = True
            params = [p for b in self.reducer.buckets for p in b.params]
            unused = []
            if self.find_unused_parameters:
                reached = _leaves(output)
                unused = [p for p in params if id(p) not in reached]
            self.reducer.prepare_for_backward(unused, params)
        else:
            self.require_forward_param_sync = self.reducer.expect = False
        return output

    @property
    def _has_rebuilt_buckets(self):
        """Whether the buckets are final (regrouped after the first backward)."""
        return self.reducer.rebuilt

    def _find_common_rank(self, candidate):
        """The highest group rank among those where ``candidate`` holds."""
        g = _group(self.process_group)
        rank = tensor([g.rank() if candidate else -1])
        dist.all_reduce(rank, op=dist.ReduceOp.MAX, group=self.process_group)
        if rank.item() == -1:
            raise ValueError("BUG! Expected rank_cond to be true for at least one process. "
                             "This indicates a bug in PyTorch, please report an issue.")
        return int(rank.item())

    def register_comm_hook(self, state, hook):
        """Reduce each bucket with ``hook(state, bucket)`` instead of the all-reduce:
        ``bucket`` is a :class:`~retrograd.distributed.GradBucket` (gradients not divided
        by the world size), the hook returns a :class:`~retrograd.futures.Future` of the
        bucket's new values (one tensor of its shape), which DDP copies into ``.grad``
        once the future completes (in-backward optimizers step after that). Only one hook,
        registered before backward.

        >>> from retrograd.distributed.algorithms.ddp_comm_hooks import default_hooks
        >>> ddp.register_comm_hook(None, default_hooks.fp16_compress_hook)
        """
        if not callable(hook):
            raise TypeError("Communication hook must be callable.")
        sig = inspect.signature(hook)
        bucket = sig.parameters.get("bucket")
        if bucket is not None and bucket.annotation not in (inspect.Parameter.empty,
                                                            dist.GradBucket):
            raise ValueError("Communication hook: bucket annotation should be "
                             "dist.GradBucket.")
        if sig.return_annotation not in (inspect.Signature.empty, Future[Tensor]):
            raise ValueError("Communication hook: return annotation should be "
                             "torch.futures.Future[torch.Tensor].")
        if self.reducer.comm_hook is not None:
            raise RuntimeError("register_comm_hook or register_builtin_comm_hook can only be "
                               "called once.")
        self.reducer.comm_hook = (hook, state)

    # ---- uneven inputs (Join) -----------------------------------------------------------
    def join(self, divide_by_initial_world_size=True, enable=True,
             throw_on_early_termination=False):
        """Context manager for ranks with different numbers of batches: a rank that ran
        out shadows the others' collectives (its gradients count as zero) until all have
        run out; then every rank takes the model of one of the last to finish.
        Gradients are divided by the initial world size, or with
        ``divide_by_initial_world_size=False`` by the number of ranks still training.
        ``throw_on_early_termination=True``: every rank raises once one has run out.

        >>> with ddp.join():
        ...     for x, y in batches:  # fewer on some ranks
        ...         loss_fn(ddp(x), y).backward(); opt.step()
        """
        return Join([self], enable, throw_on_early_termination,
                    divide_by_initial_world_size=divide_by_initial_world_size)

    def join_hook(self, **kwargs):
        """The :class:`JoinHook` shadowing this DDP's forward and backward collectives
        (``divide_by_initial_world_size``, default True: see :meth:`join`)."""
        return _DDPJoinHook(self, kwargs.get("divide_by_initial_world_size", True))

    @property
    def join_device(self):
        return self.reducer.params[0].device

    @property
    def join_process_group(self):
        return self.process_group

    def _setup_in_backward_optimizers(self):
        """Optimizers in backward step once their parameter's bucket is reduced, on the
        average gradient: those of ``_apply_optimizer_in_backward`` (as PyTorch's DDP) and
        ``optim.fuse_into_backward``'s updates. Their own post-accumulate hooks, which
        would step on this rank's gradient alone, are taken off the parameters."""
        reducer = self.reducer
        params = reducer.params
        for p in params:
            if hasattr(p, "_in_backward_optimizers") and id(p) not in reducer.in_backward:
                if p in param_to_optim_hook_handle_map:
                    for handle in param_to_optim_hook_handle_map[p]:
                        handle.remove()
                reducer.in_backward[id(p)] = p._in_backward_optimizers
        for h in active_handles():
            for p in h.hand_over(params):
                reducer.fused.setdefault(id(p), []).append(h)

    @contextlib.contextmanager
    def no_sync(self):
        """Backwards of forwards run in this context only accumulate ``.grad`` locally; the
        first synchronized backward after it averages the accumulated sums.

        >>> with ddp.no_sync():
        ...     ddp(x1).sum().backward()
        >>> ddp(x2).sum().backward()  # synchronizes
        """
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old


def _broadcast_all(tensors, group, src=0):
    """Group rank ``src``'s values into every rank's ``tensors``, all broadcasts in flight
    at once."""
    works = [dist.broadcast(t, group_src=src, group=group, async_op=True) for t in tensors]
    for w in works:
        w.wait()


class _DDPJoinHook(JoinHook):
    """A joined rank's part in DDP's iterations: the same collectives, in the same order
    as :meth:`DistributedDataParallel.forward` and its backward, with zero gradients."""

    def __init__(self, ddp, divide_by_initial_world_size):
        self.ddp = ddp
        ddp.reducer.divide_by_initial_world_size = divide_by_initial_world_size

    def main_hook(self):
        ddp = self.ddp
        ddp.reducer.rebuild_buckets()
        if ddp.forward_sync_buffers and ddp.require_forward_param_sync and \
                ddp._buffers_synced:
            _broadcast_all(ddp._buffers_synced, _group(ddp.process_group),
                           ddp._find_common_rank(False))
        sync = tensor([0.0])
        dist.all_reduce(sync, group=ddp.process_group)
        ddp.require_forward_param_sync = bool(sync.item())
        if ddp.require_forward_param_sync:
            with no_grad():
                ddp.reducer.shadow_backward()

    def post_hook(self, is_last_joiner):
        """Every rank takes the model (and buffers) of the highest last joiner."""
        ddp = self.ddp
        src = ddp._find_common_rank(is_last_joiner)
        with no_grad():
            _broadcast_all(ddp._params_synced + (
                ddp._buffers_synced if ddp.broadcast_buffers else []),
                _group(ddp.process_group), src)
