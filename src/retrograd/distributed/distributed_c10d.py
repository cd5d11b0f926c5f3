"""Process groups on MPI, with ``torch.distributed``'s names: the default group, ``new_group``,
ranks, ``ReduceOp``, and ``Work``, the handle of a non-blocking operation.

MPI does the rendezvous (``mpiexec`` or ``python -m retrograd.distributed.run`` start the
ranks), so ``init_method`` and ``store`` are not needed. Every wait polls MPI's requests
against the group's timeout: a rank that stops answering makes the others raise
:class:`DistBackendError`, and an uncaught exception on any rank aborts the whole job
(``MPI_Abort``), so a failure never leaves the other ranks hanging.
"""

import enum
import os
import sys
import time
from datetime import timedelta

from ._mpi import is_mpi_available, mpi
from ..futures import Future

__all__ = ["Backend", "DistBackendError", "DistError", "GroupMember", "ProcessGroup", "ReduceOp",
           "Work", "default_pg_timeout", "destroy_process_group", "get_backend",
           "get_global_rank", "get_group_rank", "get_node_local_rank",
           "get_process_group_ranks", "get_rank", "get_world_size", "group",
           "init_process_group", "is_available", "is_gloo_available", "is_initialized",
           "is_mpi_available", "is_nccl_available", "is_torchelastic_launched",
           "monitored_barrier", "new_group"]

default_pg_timeout = timedelta(minutes=30)  # PyTorch's default for CPU backends


class DistError(RuntimeError):
    """An error of the distributed package (as PyTorch's)."""


class DistBackendError(DistError):
    """The backend failed: a timeout or an error of MPI itself."""


class Backend(str):
    """A backend's name. ``"gloo"`` is served by MPI on the CPU, so scripts written for it
    run unchanged; ``"nccl"`` waits for a GPU backend."""

    UNDEFINED = "undefined"
    GLOO = "gloo"
    NCCL = "nccl"
    MPI = "mpi"

    def __new__(cls, name):
        if not isinstance(name, str):
            raise ValueError(f"Backend constructor parameter must be string-ish, but got: "
                             f"{type(name)}")
        value = name.lower()
        if value not in (cls.GLOO, cls.NCCL, cls.MPI, cls.UNDEFINED):
            raise ValueError(f"Invalid backend: '{name}'")
        return super().__new__(cls, value)


class ReduceOp:
    """The reductions of ``all_reduce``, ``reduce`` and ``reduce_scatter``."""

    class RedOpType(enum.Enum):
        SUM = 0
        AVG = 1
        PRODUCT = 2
        MIN = 3
        MAX = 4

    SUM = RedOpType.SUM
    AVG = RedOpType.AVG
    PRODUCT = RedOpType.PRODUCT
    MIN = RedOpType.MIN
    MAX = RedOpType.MAX


class ProcessGroup:
    """A set of ranks that run collectives together: an MPI communicator, its members'
    global ranks, the backend name and the timeout of every wait."""

    def __init__(self, comm, ranks, backend, timeout):
        self.comm, self.ranks, self.timeout = comm, ranks, timeout
        self._backend = backend

    def rank(self):
        return self.comm.Get_rank()

    def size(self):
        return self.comm.Get_size()

    def name(self):
        return self._backend.upper()

    def __repr__(self):
        return f"ProcessGroup(ranks={self.ranks}, backend='{self._backend}')"


class GroupMember:
    """``WORLD`` is the default group once initialized; ``new_group`` gives a rank outside
    the new group ``NON_GROUP_MEMBER``."""

    WORLD = None
    NON_GROUP_MEMBER = -100


class group:  # PyTorch's name
    """``dist.group.WORLD``: the default group, as ``GroupMember.WORLD``."""

    WORLD = None


_NAMESPACE = group  # for the functions whose ``group`` argument hides the class


class _State:
    world = None  # the default ProcessGroup
    groups = []  # every group made by new_group, freed by destroy_process_group()
    excepthook = None  # the hook replaced by the abort-on-exception one
    detail = False  # TORCH_DISTRIBUTED_DEBUG=DETAIL: collectives compare fingerprints first


def is_available():
    """The distributed package is part of retrograd (``is_mpi_available`` says whether its
    backend can run here)."""
    return True


def is_gloo_available():
    """"gloo" is served by the MPI backend here."""
    return is_mpi_available()


def is_nccl_available():
    """No GPU backend yet."""
    return False


def is_torchelastic_launched():
    """Whether a torchrun-style launcher (``retrograd.distributed.run``) started this
    process (it sets TORCHELASTIC_RUN_ID, as torchrun)."""
    return os.getenv("TORCHELASTIC_RUN_ID") is not None


def get_node_local_rank(fallback_rank=None):
    """LOCAL_RANK from the launcher, else ``fallback_rank``."""
    if "LOCAL_RANK" in os.environ:
        return int(os.environ["LOCAL_RANK"])
    if fallback_rank is not None:
        return int(fallback_rank)
    raise RuntimeError("LOCAL_RANK is not in the environment. Consider passing fallback_rank "
                       "to allow `get_node_local_rank` to work, assuming you are not running "
                       "in a multi-device context and want the code to run locally instead.")


def is_initialized():
    """Whether the default process group exists."""
    return _State.world is not None


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1,
                       store=None, group_name="", pg_options=None, device_id=None):
    """Join the default process group, whose members are the ranks MPI started.

    ``rank`` and ``world_size``, when given (from the launcher's RANK and WORLD_SIZE),
    must agree with MPI's. ``timeout`` bounds every wait of every collective.

    >>> dist.init_process_group("gloo", timeout=timedelta(seconds=60))
    >>> dist.get_rank(), dist.get_world_size()
    (0, 2)
    """
    if _State.world is not None:
        raise ValueError("trying to initialize the default process group twice!")
    name = Backend(backend or Backend.MPI)
    if name == Backend.NCCL:
        raise RuntimeError("Distributed package doesn't have NCCL built in: retrograd runs "
                           "on the CPU, use backend='mpi' (or 'gloo')")
    if name == Backend.UNDEFINED:
        raise ValueError(f"Invalid backend: '{backend}'")
    if timeout is None:
        timeout = default_pg_timeout
    if not isinstance(timeout, timedelta):
        raise TypeError(f"Expected timeout argument to be of type datetime.timedelta, got "
                        f"{type(timeout)}")
    MPI = mpi()
    comm = MPI.COMM_WORLD.Dup()  # our own context: user MPI traffic cannot match ours
    for given, actual, what in ((rank, comm.Get_rank(), "rank"),
                                (world_size, comm.Get_size(), "world_size")):
        if given != -1 and int(given) != actual:
            comm.Free()
            raise ValueError(f"init_process_group: {what}={given} but MPI started this process "
                             f"as {what} {actual}; launch with mpiexec or "
                             "python -m retrograd.distributed.run")
    _State.world = ProcessGroup(comm, list(range(comm.Get_size())), str(name), timeout)
    _State.detail = os.environ.get("TORCH_DISTRIBUTED_DEBUG", "").upper() == "DETAIL"
    GroupMember.WORLD = _NAMESPACE.WORLD = _State.world
    if comm.Get_size() > 1:
        _State.excepthook, sys.excepthook = sys.excepthook, _abort_on_exception


def _abort_on_exception(kind, value, tb):
    """An uncaught exception on one rank ends every rank (the others may be waiting for
    this one in a collective): report it, then ``MPI_Abort``."""
    _State.excepthook(kind, value, tb)
    rank = mpi().COMM_WORLD.Get_rank()
    print(f"[rank {rank}] uncaught {kind.__name__}: aborting all ranks", file=sys.stderr,
          flush=True)
    # MPI_Abort makes mpiexec kill every rank at once, dropping output its forwarders have
    # not passed on yet: the report above could reach the user cut off mid-traceback.
    time.sleep(_ABORT_GRACE_S)
    mpi().COMM_WORLD.Abort(1)


_ABORT_GRACE_S = 0.5


def _world():
    if _State.world is None:
        raise ValueError("Default process group has not been initialized, please make sure "
                         "to call init_process_group.")
    return _State.world


def _group(group):
    """The ProcessGroup ``group`` names (None: the default one)."""
    world = _world()
    if group is None or group is GroupMember.WORLD:
        return world
    if group == GroupMember.NON_GROUP_MEMBER:
        return None
    if not isinstance(group, ProcessGroup):
        raise TypeError(f"group must be a ProcessGroup, got {type(group).__name__}")
    return group


def destroy_process_group(group=None):
    """Free ``group`` (by default every group, ending the default one)."""
    g = _group(group)
    if g is None:
        return
    if g is _State.world:
        for sub in _State.groups:
            sub.comm.Free()
        _State.groups = []
        g.comm.Free()
        _State.world = GroupMember.WORLD = _NAMESPACE.WORLD = None
        if _State.excepthook is not None:
            sys.excepthook, _State.excepthook = _State.excepthook, None
    else:
        _State.groups.remove(g)
        g.comm.Free()


def new_group(ranks=None, timeout=None, backend=None, pg_options=None,
              use_local_synchronization=False, group_desc=None, device_id=None,
              sort_ranks=True):
    """A group of the given global ``ranks`` (every rank of the default group must call it;
    a rank outside gets ``GroupMember.NON_GROUP_MEMBER``).

    >>> evens = dist.new_group([0, 2])
    """
    world = _world()
    size = world.size()
    ranks = list(range(size)) if ranks is None else [int(r) for r in ranks]
    for r in ranks:
        if not 0 <= r < size:
            raise ValueError(f"Rank {r} is out of range. Valid ranks are 0 to {size - 1} "
                             f"(world_size={size})")
    if len(set(ranks)) != len(ranks):
        raise ValueError(f"new_group: ranks {ranks} contain duplicates")
    if sort_ranks:
        ranks = sorted(ranks)
    members = world.comm.Get_group().Incl(ranks)
    comm = world.comm.Create(members)  # collective over the default group
    members.Free()
    if comm == mpi().COMM_NULL:
        return GroupMember.NON_GROUP_MEMBER
    g = ProcessGroup(comm, ranks, str(Backend(backend)) if backend else world._backend,
                     timeout or world.timeout)
    _State.groups.append(g)
    return g


def _dup(group):
    """A group of the same ranks on a communicator of its own, whose collectives are
    ordered apart from ``group``'s (a collective over ``group``'s members)."""
    g = _group(group)
    dup = ProcessGroup(g.comm.Dup(), g.ranks, g._backend, g.timeout)
    _State.groups.append(dup)
    return dup


def get_rank(group=None):
    """This process's rank in ``group`` (-1 outside it)."""
    g = _group(group)
    return -1 if g is None else g.rank()


def get_world_size(group=None):
    """The number of ranks in ``group`` (-1 outside it)."""
    g = _group(group)
    return -1 if g is None else g.size()


def get_process_group_ranks(group):
    """The global ranks of ``group``'s members, in group-rank order."""
    g = _group(group)
    if g is None:
        raise ValueError("Invalid process group specified")
    return list(g.ranks)


def get_global_rank(group, group_rank):
    """The global rank of ``group``'s member ``group_rank``."""
    ranks = get_process_group_ranks(group)
    if not 0 <= group_rank < len(ranks):
        raise ValueError(f"Group rank {group_rank} is not part of group {group}")
    return ranks[group_rank]


def get_group_rank(group, global_rank):
    """The rank in ``group`` of the process of global rank ``global_rank``."""
    ranks = get_process_group_ranks(group)
    if global_rank not in ranks:
        raise ValueError(f"Global rank {global_rank} is not part of group {group}")
    return ranks.index(global_rank)


_MONITORED_TAG = 32000  # MPI guarantees tags up to 32767; user messages use their own


def monitored_barrier(group=None, timeout=None, wait_all_ranks=False):
    """A barrier that says which ranks did not reach it: every rank checks in with rank 0,
    which raises :class:`DistBackendError` naming the first missing rank (all of them with
    ``wait_all_ranks``) after ``timeout``, then releases the others.

    >>> dist.monitored_barrier(timeout=timedelta(seconds=10))
    """
    g = _group(group)
    if g is None:
        return
    limit = timeout or g.timeout
    MPI = mpi()
    token = [bytearray(1) for _ in range(g.size())]
    if g.rank():
        Work(g, "monitored_barrier", [g.comm.Isend(token[0], dest=0, tag=_MONITORED_TAG)]
             ).wait(limit)
        Work(g, "monitored_barrier (rank 0's release)",
             [g.comm.Irecv(token[0], source=0, tag=_MONITORED_TAG)]).wait(limit)
        return
    pending = {r: g.comm.Irecv(token[r], source=r, tag=_MONITORED_TAG)
               for r in range(1, g.size())}
    deadline = time.monotonic() + limit.total_seconds()
    while pending and time.monotonic() < deadline:
        pending = {r: q for r, q in pending.items() if not q.Test()}
        time.sleep(1e-4)
    if pending:
        missing = [g.ranks[r] for r in sorted(pending)]
        shown = missing if wait_all_ranks else missing[:1]
        raise DistBackendError(
            f"[rank {g.ranks[0]}] {'Ranks' if len(shown) > 1 else 'Rank'} "
            f"{', '.join(map(str, shown))} failed to pass monitoredBarrier in "
            f"{limit.total_seconds() * 1000:.0f} ms")
    MPI.Request.Waitall([g.comm.Isend(token[0], dest=r, tag=_MONITORED_TAG)
                         for r in range(1, g.size())])


def get_backend(group=None):
    """The backend's name, as given to ``init_process_group``."""
    g = _group(group)
    if g is None:
        raise ValueError("Invalid process group specified")
    return Backend(g._backend)


class Work:
    """A started operation: MPI requests, and what to do once they complete (copy results
    into non-contiguous outputs, divide for AVG).

    >>> work = dist.all_reduce(t, async_op=True)
    >>> work.wait()
    True
    """

    def __init__(self, group, op_name, requests, finish=None, result=()):
        self._group, self._op_name = group, op_name
        self._requests, self._finish, self._result = requests, finish, list(result)
        self._statuses = [mpi().Status() for _ in requests]
        self._done = False
        self._future = None

    def _test(self):
        if self._done:
            return True
        MPI = mpi()
        try:
            done = MPI.Request.Testall(self._requests, self._statuses)
        except MPI.Exception as e:  # e.g. the ranks' sizes do not match
            raise DistBackendError(f"[rank {self._group.ranks[self._group.rank()]}] "
                                   f"{self._op_name} failed in MPI: {e.Get_error_string()}"
                                   ) from None
        if done:
            self._done = True
            if self._finish is not None:
                self._finish()
            if self._future is not None:
                self._future.set_result(self._result)
        return done

    def is_completed(self):
        """Whether the operation has finished (a poll, which also moves MPI on)."""
        return self._test()

    def wait(self, timeout=None):
        """Block until done, at most ``timeout`` (a timedelta; the group's by default), then
        raise :class:`DistBackendError` naming the operation and the ranks waited for."""
        limit = (timeout or self._group.timeout).total_seconds()
        start = time.monotonic()
        deadline, spin = start + limit, start + 1e-3
        pause = 0.0
        while not self._test():
            now = time.monotonic()
            if now > deadline:
                me = self._group.rank()
                others = [r for i, r in enumerate(self._group.ranks) if i != me]
                raise DistBackendError(
                    f"[rank {self._group.ranks[me]}] timed out after {limit:g} s waiting for "
                    f"{self._op_name}: one of ranks {others} has not joined it (it failed, "
                    "hangs, or called a different collective)")
            # Poll for the first millisecond (small messages finish in microseconds), then
            # sleep longer and longer: ranks may share the cores (oversubscribed).
            if now > spin:
                pause = min(2 * pause or 5e-5, 1e-3)
                time.sleep(pause)
        return True

    def result(self):
        """The output tensors."""
        self.wait()
        return self._result

    def get_future(self):
        """A :class:`~retrograd.futures.Future` completed with the output tensors (a list)
        when the operation is; waiting on it, or on a future chained with ``then``, drives
        the operation.

        >>> fut = dist.all_reduce(t, async_op=True).get_future().then(lambda f: f.value()[0])
        """
        if self._future is None:
            self._future = Future()
            self._future._poll = self._poll
            if self._done:
                self._future.set_result(self._result)
        return self._future

    def _poll(self, block):
        if block:
            self.wait()
        else:
            self._test()

    def source_rank(self):
        """The sender's global rank, for a receive from any source."""
        self.wait()
        return self._group.ranks[self._statuses[0].Get_source()]
