"""Collectives on tensors, through mpi4py's buffer interface on each tensor's data (no
pickling of tensors), each started non-blocking and returned as a :class:`Work`.

In-place semantics are PyTorch's: ``all_reduce``, ``broadcast`` and the outputs of the
gathers write into the given tensors' memory, whether or not they require grad, without
recording anything for autograd. A non-contiguous tensor goes through a contiguous copy
that is written back when the operation completes.

MPI has no bfloat16: its tensors travel as their 16-bit patterns, and reductions run on
float32 copies rounded once at the end (gloo adds bfloat16 pairwise, rounding every sum:
see docs/deviations.md), so they equal the same reduction computed in one process.

MPI's buffers are host memory (as a non-CUDA-aware MPI's are): a device tensor's values
are copied to the host explicitly before they are sent, and what is received is copied
back to its device when the operation completes.
"""

import pickle

import numpy

from .._dtype import SCALAR_NAMES, bfloat16, kind_of
from .._tensor import Tensor
from ..backend import cpu, device_of, to_device
from ._mpi import mpi
from .distributed_c10d import ReduceOp, Work, _group, _State

__all__ = ["all_gather", "all_gather_into_tensor", "all_gather_object", "all_reduce",
           "all_to_all", "all_to_all_single", "barrier", "broadcast", "broadcast_object_list",
           "gather", "gather_object", "irecv", "isend", "recv", "reduce", "reduce_scatter",
           "reduce_scatter_tensor", "scatter", "send"]


# ---- argument checks, as PyTorch's ------------------------------------------------------

def _check_tensor(t, name):
    if not isinstance(t, Tensor):
        raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type "
                        f"torch.Tensor\n             but got {type(t)} instead.")
    return t


def _check_list(ts, name):
    if not isinstance(ts, list) or not all(isinstance(t, Tensor) for t in ts):
        raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type "
                        f"List[torch.Tensor]\n             but got {type(ts)} instead.")
    return ts


def _check_dtypes(tensors):
    first = tensors[0].dtype
    for t in tensors[1:]:
        if t.dtype != first:
            raise ValueError(f"Invalid usage of tensors with different dtypesFound {first} and "
                             f" {t.dtype}")


def _check_count(op, what, ts, size):
    if len(ts) != size:
        raise RuntimeError(f"{op}: invalid {what} list size {len(ts)}, must be world size "
                           f"{size}")


def _check_shapes(op, ts, shape):
    for i, t in enumerate(ts):
        if t.shape != shape:
            raise RuntimeError(f"{op}: invalid tensor size at index {i} (expected "
                               f"{tuple(shape)}, got {tuple(t.shape)})")


def _root(g, rank, group_rank, name):
    """The group rank of the root given as a global ``rank`` or a ``group_rank``."""
    if rank is not None and group_rank is not None:
        raise ValueError("Can't specify both group_rank and global_rank")
    if rank is None and group_rank is None:
        raise ValueError("Must specify global_rank or group_rank")
    if group_rank is None:
        if rank not in g.ranks:
            raise ValueError(f"invalid {name} rank {rank}: not a member of {g}")
        return g.ranks.index(rank)
    if not 0 <= group_rank < g.size():
        raise ValueError(f"invalid group_{name} {group_rank} for a group of size {g.size()}")
    return group_rank


def _same_call(g, op, tensor=None, shape=True):
    """Under TORCH_DISTRIBUTED_DEBUG=DETAIL: every rank of ``g`` must be running the same
    collective on the same dtype (and shape): they exchange fingerprints first, so a
    mismatch raises on every rank instead of corrupting data or hanging."""
    if not _State.detail:
        return
    mine = (op, None if tensor is None else str(tensor.dtype),
            tuple(tensor.shape) if tensor is not None and shape else None)
    for r, other in enumerate(_exchange(g, mine, f"{op} (fingerprints)")):
        if other != mine:
            raise RuntimeError(
                f"Detected mismatch between collectives on ranks. Rank {g.ranks[g.rank()]} is "
                f"running collective: {_describe(mine)}, but Rank {g.ranks[r]} is running "
                f"collective: {_describe(other)}")


def _describe(fingerprint):
    op, dtype, shape = fingerprint
    return (f"CollectiveFingerPrint(OpType={op.upper()}"
            + (f", TensorDtypes={dtype}" if dtype else "")
            + (f", TensorShape={list(shape)}" if shape is not None else "") + ")")


# ---- buffers --------------------------------------------------------------------------

_BFLOAT16 = bfloat16.np


def _wire(a):
    """``a`` as MPI can move it: a bfloat16 array as its bit patterns (same memory)."""
    return a.view(numpy.uint16) if a.dtype is _BFLOAT16 else a


def _host(a):
    """``a``'s values on the host: a device array's explicit copy, a host array itself."""
    return to_device(a, cpu)


def _store(a, values):
    """Host array ``values`` written into ``a`` (copied to a device array's device first)."""
    dev = device_of(a)
    a[...] = values if dev is cpu else to_device(values, dev)


def _send(t):
    """The tensor's data as a contiguous host array MPI reads."""
    return _wire(numpy.ascontiguousarray(_host(t._data)))


def _recv(t, keep):
    """A host array MPI may write into for ``t``, and what writes it back when it is a copy
    (``keep``: the copy starts with the tensor's values, for in-place reductions)."""
    a = t._data
    host = device_of(a) is cpu
    if host and a.flags.c_contiguous and a.flags.writeable:
        return _wire(a), None
    if keep:
        buf = numpy.array(a, order="C") if host else _host(a)
    else:
        buf = numpy.empty(a.shape, a.dtype)
    return _wire(buf), lambda: _store(a, buf)


def _reduce_send(a):
    """A host array MPI reduces from: bfloat16 widened to float32, which MPI can add."""
    a = _host(a)
    return a.astype(numpy.float32) if a.dtype is _BFLOAT16 else numpy.ascontiguousarray(a)


def _reduce_recv(t, keep):
    """``_recv`` for a reduction's result: a bfloat16 tensor's is a float32 array, rounded
    into the tensor when the operation completes."""
    a = t._data
    if a.dtype is not _BFLOAT16:
        return _recv(t, keep)
    buf = _host(a).astype(numpy.float32) if keep else numpy.empty(a.shape, numpy.float32)
    return buf, lambda: _store(a, buf)


def _then(*steps):
    """One finishing step made of those given (None ones skipped)."""
    steps = [s for s in steps if s is not None]
    if not steps:
        return None

    def run():
        for s in steps:
            s()

    return run


def _mpi_op(op, t, name):
    """MPI's reduction for ``op`` on ``t``'s dtype (AVG is SUM, divided afterwards)."""
    if not isinstance(op, ReduceOp.RedOpType):
        raise TypeError(f"{name}(): op must be a ReduceOp, got {op!r}")
    MPI = mpi()
    kind = kind_of(t._data.dtype)
    if op is ReduceOp.AVG and kind not in "fc":
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{SCALAR_NAMES[t._data.dtype.name]}")
    if kind == "c" and op in (ReduceOp.MIN, ReduceOp.MAX):
        raise ValueError(f"{name} does not support {op} on complex tensors")
    if kind == "b":  # MPI defines only logical reductions on booleans
        return MPI.LOR if op in (ReduceOp.SUM, ReduceOp.MAX) else MPI.LAND
    return {ReduceOp.SUM: MPI.SUM, ReduceOp.AVG: MPI.SUM, ReduceOp.PRODUCT: MPI.PROD,
            ReduceOp.MIN: MPI.MIN, ReduceOp.MAX: MPI.MAX}[op]


def _average(op, buf, size):
    if op is not ReduceOp.AVG:
        return None

    def divide():
        numpy.divide(buf, size, out=buf)

    return divide


def _started(work, async_op):
    """The work handle for ``async_op``, else wait for it (None, as PyTorch)."""
    if async_op:
        return work
    work.wait()
    return None


# ---- reductions -----------------------------------------------------------------------

def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce ``tensor`` across the group, in place on every rank.

    >>> t = retrograd.tensor([float(dist.get_rank())]); dist.all_reduce(t); t
    tensor([1.])
    """
    _check_tensor(tensor, "tensor")
    g = _group(group)
    if g is None:
        return None
    mop = _mpi_op(op, tensor, "all_reduce")
    buf, back = _reduce_recv(tensor, keep=True)
    _same_call(g, "all_reduce", tensor)
    req = g.comm.Iallreduce(mpi().IN_PLACE, buf, op=mop)
    work = Work(g, "all_reduce", [req], _then(_average(op, buf, g.size()), back), [tensor])
    return _started(work, async_op)


def reduce(tensor, dst=None, op=ReduceOp.SUM, group=None, async_op=False, group_dst=None):
    """Reduce ``tensor`` into rank ``dst``'s (the others' are left as they are)."""
    _check_tensor(tensor, "tensor")
    g = _group(group)
    if g is None:
        return None
    root = _root(g, dst, group_dst, "dst")
    mop = _mpi_op(op, tensor, "reduce")
    _same_call(g, "reduce", tensor)
    if g.rank() == root:
        buf, back = _reduce_recv(tensor, keep=True)
        req = g.comm.Ireduce(mpi().IN_PLACE, buf, op=mop, root=root)
        finish = _then(_average(op, buf, g.size()), back)
    else:
        req = g.comm.Ireduce(_reduce_send(tensor._data), None, op=mop, root=root)
        finish = None
    return _started(Work(g, "reduce", [req], finish, [tensor]), async_op)


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op=False):
    """Rank i receives the reduction of every rank's ``input_list[i]``."""
    _check_tensor(output, "output")
    _check_list(input_list, "input_list")
    g = _group(group)
    if g is None:
        return None
    _check_count("reduce_scatter", "input tensor", input_list, g.size())
    _check_dtypes([output, *input_list])
    _check_shapes("reduce_scatter", input_list, output.shape)
    mop = _mpi_op(op, output, "reduce_scatter")
    send = _reduce_send(numpy.stack([_host(t._data) for t in input_list]))
    buf, back = _reduce_recv(output, keep=False)
    _same_call(g, "reduce_scatter", output)
    req = g.comm.Ireduce_scatter_block(send, buf, op=mop)
    work = Work(g, "reduce_scatter", [req], _then(_average(op, buf, g.size()), back), [output])
    return _started(work, async_op)


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    """``reduce_scatter`` with the inputs concatenated (or stacked) in one tensor."""
    _check_tensor(output, "output")
    _check_tensor(input, "input")
    g = _group(group)
    if g is None:
        return None
    _check_dtypes([output, input])
    if input.numel() != output.numel() * g.size():
        raise ValueError(f"reduce_scatter_tensor: input tensor must be world size "
                         f"({g.size()}) times the output's size: got input "
                         f"{tuple(input.shape)}, output {tuple(output.shape)}")
    mop = _mpi_op(op, output, "reduce_scatter_tensor")
    buf, back = _reduce_recv(output, keep=False)
    _same_call(g, "reduce_scatter_tensor", output)
    req = g.comm.Ireduce_scatter_block(_reduce_send(input._data).reshape(-1), buf.reshape(-1),
                                       op=mop)
    work = Work(g, "reduce_scatter_tensor", [req],
                _then(_average(op, buf, g.size()), back), [output])
    return _started(work, async_op)


# ---- data movement --------------------------------------------------------------------

def broadcast(tensor, src=None, group=None, async_op=False, group_src=None):
    """Copy rank ``src``'s ``tensor`` into every rank's."""
    _check_tensor(tensor, "tensor")
    g = _group(group)
    if g is None:
        return None
    root = _root(g, src, group_src, "src")
    buf, back = _recv(tensor, keep=True)
    _same_call(g, "broadcast", tensor)
    req = g.comm.Ibcast(buf, root=root)
    return _started(Work(g, "broadcast", [req], back, [tensor]), async_op)


def _copy_slots(outputs, recv):
    def copy():
        for t, part in zip(outputs, recv, strict=True):
            _store(t._data, part.reshape(t._data.shape))

    return copy


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """Every rank's ``tensor``, into ``tensor_list`` (one per rank) on every rank."""
    _check_list(tensor_list, "tensor_list")
    _check_tensor(tensor, "tensor")
    g = _group(group)
    if g is None:
        return None
    _check_count("all_gather", "output tensor", tensor_list, g.size())
    _check_dtypes([tensor, *tensor_list])
    _check_shapes("all_gather", tensor_list, tensor.shape)
    recv = numpy.empty((g.size(), *tensor.shape), tensor._data.dtype)
    _same_call(g, "all_gather", tensor)
    req = g.comm.Iallgather(_send(tensor), _wire(recv))
    return _started(Work(g, "all_gather", [req], _copy_slots(tensor_list, recv), tensor_list),
                    async_op)


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """Every rank's ``input_tensor``, concatenated (or stacked) into ``output_tensor``."""
    _check_tensor(output_tensor, "output_tensor")
    _check_tensor(input_tensor, "input_tensor")
    g = _group(group)
    if g is None:
        return None
    _check_dtypes([output_tensor, input_tensor])
    if output_tensor.numel() != input_tensor.numel() * g.size():
        raise ValueError(f"all_gather_into_tensor: output tensor must be world size "
                         f"({g.size()}) times the input's size: got output "
                         f"{tuple(output_tensor.shape)}, input {tuple(input_tensor.shape)}")
    buf, back = _recv(output_tensor, keep=False)
    _same_call(g, "all_gather_into_tensor", input_tensor)
    req = g.comm.Iallgather(_send(input_tensor).reshape(-1), buf.reshape(-1))
    return _started(Work(g, "all_gather_into_tensor", [req], back, [output_tensor]), async_op)


def _root_list(g, root, tensors, arg, op, what, where, tensor):
    """Whether this rank is ``root``: there, ``tensors`` (argument ``arg``) must be one per
    rank, like ``tensor``; on the other ranks it must not be given."""
    if g.rank() != root:
        if tensors:
            raise ValueError(f"Argument ``{arg}`` must NOT be specified on non-{where} ranks.")
        return False
    if not tensors:
        raise ValueError(f"Argument ``{arg}`` must be specified on {where} rank.")
    _check_list(tensors, arg)
    _check_count(op, what, tensors, g.size())
    _check_dtypes([tensor, *tensors])
    _check_shapes(op, tensors, tensor.shape)
    return True


def gather(tensor, gather_list=None, dst=None, group=None, async_op=False, group_dst=None):
    """Every rank's ``tensor``, into ``gather_list`` on rank ``dst``."""
    _check_tensor(tensor, "tensor")
    g = _group(group)
    if g is None:
        return None
    root = _root(g, dst, group_dst, "dst")
    if _root_list(g, root, gather_list, "gather_list", "gather", "output tensor",
                  "destination", tensor):
        recv = numpy.empty((g.size(), *tensor.shape), tensor._data.dtype)
        finish = _copy_slots(gather_list, recv)
    else:
        recv, finish = None, None
    _same_call(g, "gather", tensor)
    req = g.comm.Igather(_send(tensor), recv if recv is None else _wire(recv), root=root)
    return _started(Work(g, "gather", [req], finish, gather_list or []), async_op)


def scatter(tensor, scatter_list=None, src=None, group=None, async_op=False, group_src=None):
    """Rank ``src``'s ``scatter_list[i]`` into rank i's ``tensor``."""
    _check_tensor(tensor, "tensor")
    g = _group(group)
    if g is None:
        return None
    root = _root(g, src, group_src, "src")
    if _root_list(g, root, scatter_list, "scatter_list", "scatter", "input tensor", "source",
                  tensor):
        send = _wire(numpy.stack([_host(t._data) for t in scatter_list]))
    else:
        send = None
    buf, back = _recv(tensor, keep=False)
    _same_call(g, "scatter", tensor)
    req = g.comm.Iscatter(send, buf, root=root)
    return _started(Work(g, "scatter", [req], back, [tensor]), async_op)


def all_to_all(output_tensor_list, input_tensor_list, group=None, async_op=False):
    """Rank j's ``input_tensor_list[i]`` into rank i's ``output_tensor_list[j]``."""
    _check_list(output_tensor_list, "output_tensor_list")
    _check_list(input_tensor_list, "input_tensor_list")
    g = _group(group)
    if g is None:
        return None
    _check_count("all_to_all", "output tensor", output_tensor_list, g.size())
    _check_count("all_to_all", "input tensor", input_tensor_list, g.size())
    _check_dtypes([*output_tensor_list, *input_tensor_list])
    _same_call(g, "all_to_all", input_tensor_list[0], shape=False)
    send = numpy.concatenate([_host(t._data).reshape(-1) for t in input_tensor_list])
    send_counts = [t.numel() for t in input_tensor_list]
    recv_counts = [t.numel() for t in output_tensor_list]
    recv = numpy.empty(sum(recv_counts), send.dtype)
    req = g.comm.Ialltoallv([_wire(send), send_counts], [_wire(recv), recv_counts])
    parts = numpy.split(recv, numpy.cumsum(recv_counts)[:-1])
    return _started(Work(g, "all_to_all", [req], _copy_slots(output_tensor_list, parts),
                         output_tensor_list), async_op)


def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None,
                      group=None, async_op=False):
    """``all_to_all`` on the rows of one tensor, split evenly or by the given sizes."""
    _check_tensor(output, "output")
    _check_tensor(input, "input")
    g = _group(group)
    if g is None:
        return None
    _check_dtypes([output, input])
    send_counts = _split_counts(input, input_split_sizes, g.size())
    recv_counts = _split_counts(output, output_split_sizes, g.size())
    _same_call(g, "all_to_all_single", input, shape=False)
    buf, back = _recv(output, keep=False)
    req = g.comm.Ialltoallv([_send(input).reshape(-1), send_counts],
                            [buf.reshape(-1), recv_counts])
    return _started(Work(g, "all_to_all_single", [req], back, [output]), async_op)


def _split_counts(t, sizes, n):
    """Element counts of ``t``'s row blocks: ``sizes`` rows each, or dim 0 split evenly."""
    rows = t.shape[0] if t.dim() else 1
    row = t.numel() // rows if rows else 0
    if not sizes:
        if rows % n:
            raise RuntimeError(f"Tensor's dim 0 ({rows}) does not divide equally across group "
                               f"size {n}")
        return [rows // n * row] * n
    if len(sizes) != n:
        raise RuntimeError(f"Number of split sizes ({len(sizes)}) must equal group size {n}")
    if sum(sizes) != rows:
        raise RuntimeError("Split sizes doesn't match total dim 0 size")
    return [s * row for s in sizes]


def barrier(group=None, async_op=False, device_ids=None, timeout=None):
    """Wait until every rank of the group has reached this call."""
    g = _group(group)
    if g is None:
        return None
    _same_call(g, "barrier")
    work = Work(g, "barrier", [g.comm.Ibarrier()])
    if async_op:
        return work
    work.wait(timeout)
    return None


# ---- point to point -------------------------------------------------------------------

def _peer(g, rank, group_rank, name):
    peer = _root(g, rank, group_rank, name)
    if peer == g.rank():
        kind = "destination" if name == "dst" else "source"
        raise ValueError(f"Invalid {kind} rank: {kind} rank should not be the same as the "
                         "rank of the current process.")
    return peer


def isend(tensor, dst=None, group=None, tag=0, group_dst=None):
    """Send ``tensor`` to rank ``dst``; returns the work handle."""
    _check_tensor(tensor, "tensor")
    g = _group(group)
    if g is None:
        return None
    peer = _peer(g, dst, group_dst, "dst")
    return Work(g, f"send to rank {g.ranks[peer]}",
                [g.comm.Isend(_send(tensor), dest=peer, tag=tag)])


def irecv(tensor, src=None, group=None, tag=0, group_src=None):
    """Receive into ``tensor`` from rank ``src`` (any rank when both sources are None)."""
    _check_tensor(tensor, "tensor")
    g = _group(group)
    if g is None:
        return None
    if src is None and group_src is None:
        peer, what = mpi().ANY_SOURCE, "receive from any rank"
    else:
        peer = _peer(g, src, group_src, "src")
        what = f"receive from rank {g.ranks[peer]}"
    buf, back = _recv(tensor, keep=False)
    return Work(g, what, [g.comm.Irecv(buf, source=peer, tag=tag)], back, [tensor])


def send(tensor, dst=None, group=None, tag=0, group_dst=None):
    """Send ``tensor`` to rank ``dst`` and wait until it has left."""
    work = isend(tensor, dst, group, tag, group_dst)
    if work is not None:
        work.wait()


def recv(tensor, src=None, group=None, tag=0, group_src=None):
    """Receive into ``tensor``; returns the sender's rank (-1 outside the group)."""
    work = irecv(tensor, src, group, tag, group_src)
    return -1 if work is None else work.source_rank()


# ---- picklable objects ----------------------------------------------------------------

def broadcast_object_list(object_list, src=None, group=None, device=None, group_src=None):
    """Rank ``src``'s ``object_list`` items, pickled, into every rank's ``object_list``."""
    g = _group(group)
    if g is None:
        return
    root = _root(g, src, group_src, "src")
    me = g.rank() == root
    payload = numpy.frombuffer(pickle.dumps(list(object_list)), numpy.uint8) if me else None
    size = numpy.array([0 if payload is None else payload.size], numpy.int64)
    Work(g, "broadcast_object_list", [g.comm.Ibcast(size, root=root)]).wait()
    if not me:
        payload = numpy.empty(int(size[0]), numpy.uint8)
    Work(g, "broadcast_object_list", [g.comm.Ibcast(payload, root=root)]).wait()
    if not me:
        received = pickle.loads(payload.tobytes())
        if len(received) != len(object_list):
            raise RuntimeError(f"broadcast_object_list: rank {g.ranks[root]} sent "
                               f"{len(received)} objects, this rank's list holds "
                               f"{len(object_list)}")
        object_list[:] = received


def _exchange(g, obj, what):
    """Every rank's picklable ``obj``: their sizes gathered, then their bytes."""
    payload = numpy.frombuffer(pickle.dumps(obj), numpy.uint8)
    sizes = numpy.empty(g.size(), numpy.int64)
    Work(g, what, [g.comm.Iallgather(numpy.array([payload.size], numpy.int64), sizes)]).wait()
    recv = numpy.empty(int(sizes.sum()), numpy.uint8)
    Work(g, what, [g.comm.Iallgatherv(payload, [recv, sizes])]).wait()
    return [pickle.loads(p.tobytes()) for p in numpy.split(recv, numpy.cumsum(sizes)[:-1])]


def gather_object(obj, object_gather_list=None, dst=None, group=None, group_dst=None):
    """Every rank's picklable ``obj``, into ``object_gather_list`` on rank ``dst`` only."""
    g = _group(group)
    if g is None:
        return
    root = _root(g, dst, group_dst, "dst")
    me = g.rank() == root
    if me and object_gather_list is None:
        raise ValueError("Argument ``object_gather_list`` must be specified on destination "
                         "rank.")
    payload = numpy.frombuffer(pickle.dumps(obj), numpy.uint8)
    sizes = numpy.empty(g.size(), numpy.int64) if me else None
    Work(g, "gather_object", [g.comm.Igather(numpy.array([payload.size], numpy.int64),
                                             sizes, root=root)]).wait()
    recv = [numpy.empty(int(sizes.sum()), numpy.uint8), sizes] if me else None
    Work(g, "gather_object", [g.comm.Igatherv(payload, recv, root=root)]).wait()
    if me:
        for i, part in enumerate(numpy.split(recv[0], numpy.cumsum(sizes)[:-1])):
            object_gather_list[i] = pickle.loads(part.tobytes())


def all_gather_object(object_list, obj, group=None):
    """Every rank's picklable ``obj``, into ``object_list`` (one slot per rank)."""
    g = _group(group)
    if g is None:
        return
    for i, o in enumerate(_exchange(g, obj, "all_gather_object")):
        object_list[i] = o

