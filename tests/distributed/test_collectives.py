"""Collectives on 2 and 4 ranks (oversubscribed on CI's 2 cores), their argument checks,
and what needs no MPI at all: the import, the backend names, the missing extra."""

import sys

import pytest

import retrograd
import retrograd.distributed as dist

COLLECTIVES = """
    import sys
    import numpy
    import retrograd as torch
    import retrograd.distributed as dist

    dist.init_process_group("gloo")
    r, n = dist.get_rank(), dist.get_world_size()
    ranks = numpy.arange(n, dtype=float)

    def same(t, expected):
        got = t.detach().numpy()
        assert numpy.array_equal(got, numpy.asarray(expected, dtype=got.dtype)), \\
            (r, t, expected)

    def raises(kind, words, f):
        try:
            f()
        except kind as e:
            assert words in str(e), e
        else:
            raise AssertionError(f"no {kind.__name__}")

    # all_reduce: in place, on a leaf that requires grad too, no version bump
    p = torch.tensor([r + 1.0, 2.0], requires_grad=True)
    dist.all_reduce(p)
    same(p, [n * (n + 1) / 2, 2 * n])
    assert p.requires_grad and p.is_leaf and p._version == 0
    for op, f in [(dist.ReduceOp.AVG, numpy.mean), (dist.ReduceOp.MAX, numpy.max),
                  (dist.ReduceOp.MIN, numpy.min), (dist.ReduceOp.PRODUCT, numpy.prod)]:
        t = torch.tensor([r + 1.0], dtype=torch.float64)
        dist.all_reduce(t, op=op)
        same(t, [f(ranks + 1)])
    t = torch.tensor([r % 2 == 1, False])
    dist.all_reduce(t)  # booleans: SUM is a logical or
    same(t, [n > 1, False])
    base = torch.zeros(3, 4)
    view = base.t()[1:3]  # non-contiguous: written back through the view
    view.fill_(r + 1.0)
    dist.all_reduce(view)
    assert base[:, 1:3].sum().item() == 3 * 2 * n * (n + 1) / 2 and base[:, 0].sum().item() == 0
    w = dist.all_reduce(torch.full((2,), r + 1.0), op=dist.ReduceOp.SUM, async_op=True)
    assert w.wait() is True and w.is_completed()
    same(w.result()[0], [n * (n + 1) / 2] * 2)
    raises(RuntimeError, "can't be cast", lambda: dist.all_reduce(torch.ones(1, dtype=torch.int64),
                                                               op=dist.ReduceOp.AVG))
    raises(TypeError, "Expected parameter `tensor`", lambda: dist.all_reduce([1.0]))

    # broadcast, reduce, to the last rank
    x = torch.full((2, 3), float(r))
    dist.broadcast(x, src=n - 1)
    same(x, numpy.full((2, 3), n - 1))
    x = torch.full((2,), r + 1.0)
    dist.reduce(x, dst=n - 1)
    same(x, [n * (n + 1) / 2] * 2 if r == n - 1 else [r + 1.0] * 2)
    raises(ValueError, "global_rank", lambda: dist.broadcast(x, src=0, group_src=0))

    # gathers
    out = [torch.zeros(2) for _ in range(n)]
    dist.all_gather(out, torch.full((2,), float(r)))
    same(torch.stack(out), numpy.repeat(ranks[:, None], 2, 1))
    raises(RuntimeError, "invalid tensor size", lambda: dist.all_gather(
        [torch.zeros(3) for _ in range(n)], torch.zeros(2)))
    raises(RuntimeError, "list size", lambda: dist.all_gather([torch.zeros(2)] * (n + 1),
                                                              torch.zeros(2)))
    raises(ValueError, "different dtypes", lambda: dist.all_gather(
        [torch.zeros(2, dtype=torch.int64) for _ in range(n)], torch.zeros(2)))
    o = torch.zeros(n, 2)
    dist.all_gather_into_tensor(o, torch.full((2,), float(r)))
    same(o, numpy.repeat(ranks[:, None], 2, 1))
    raises(ValueError, "world size", lambda: dist.all_gather_into_tensor(torch.zeros(3),
                                                                         torch.zeros(2)))
    g = [torch.zeros(2) for _ in range(n)] if r == 1 else None
    dist.gather(torch.full((2,), 10.0 + r), g, dst=1)
    if r == 1:
        same(torch.stack(g), numpy.repeat(10 + ranks[:, None], 2, 1))
    else:
        raises(ValueError, "must NOT be specified", lambda: dist.gather(
            torch.zeros(2), [torch.zeros(2)] * n, dst=1))
    s = torch.zeros(2)
    dist.scatter(s, [torch.full((2,), 5.0 + i) for i in range(n)] if r == 0 else None, src=0)
    same(s, [5.0 + r] * 2)
    if r == 0:
        raises(ValueError, "must be specified", lambda: dist.scatter(s, None, src=0))

    # reduce-scatter, all-to-all
    y = torch.zeros(2)
    dist.reduce_scatter(y, [torch.full((2,), float(i + r)) for i in range(n)])
    same(y, [n * r + ranks.sum()] * 2)
    y = torch.zeros(2)
    dist.reduce_scatter_tensor(y, torch.arange(2.0 * n), op=dist.ReduceOp.AVG)
    same(y, [2.0 * r, 2.0 * r + 1])
    outs = [torch.zeros(1) for _ in range(n)]
    dist.all_to_all(outs, [torch.tensor([10.0 * r + i]) for i in range(n)])
    same(torch.cat(outs), 10 * ranks + r)
    o = torch.zeros(n)
    dist.all_to_all_single(o, torch.arange(float(n)) + 10 * r)
    same(o, 10 * ranks + r)

    # point to point, around the ring; a receive from any rank names its sender
    nxt, prv = (r + 1) % n, (r - 1) % n
    box = torch.zeros(3)
    sent = dist.isend(torch.full((3,), float(r)), dst=nxt)
    assert dist.recv(box, src=prv) == prv
    sent.wait()
    same(box, [prv] * 3)
    if r == 0:
        raises(ValueError, "should not be the same", lambda: dist.send(box, dst=0))
        for k in range(1, n):
            dist.recv(box)
    else:
        dist.send(box, dst=0)

    # objects
    objs = [r, {"rank": r}] if r == 1 else [None, None]
    dist.broadcast_object_list(objs, src=1)
    assert objs == [1, {"rank": 1}], objs
    everyone = [None] * n
    dist.all_gather_object(everyone, ("hi", r))
    assert everyone == [("hi", k) for k in range(n)], everyone

    # a subgroup of the even ranks
    evens = dist.new_group(list(range(0, n, 2)))
    if r % 2:
        assert evens == dist.GroupMember.NON_GROUP_MEMBER and dist.get_rank(evens) == -1
        assert dist.all_reduce(torch.ones(1), group=evens) is None
    else:
        assert dist.get_rank(evens) == r // 2
        assert dist.get_process_group_ranks(evens) == list(range(0, n, 2))
        assert dist.get_global_rank(evens, r // 2) == r and dist.get_group_rank(evens, r) == r // 2
        t = torch.ones(1)
        dist.all_reduce(t, group=evens)
        same(t, [(n + 1) // 2])
    dist.barrier()
    assert dist.group.WORLD is dist.GroupMember.WORLD is not None
    assert dist.get_backend() == "gloo"
    dist.destroy_process_group()
    assert not dist.is_initialized()
    sys.stdout.write(f"ok {r}\\n")  # one write: ranks share the output
"""


def test_collectives_on_2_ranks(mpirun):
    """Under the debug mode: its fingerprints must match for every correct call."""
    mpirun(COLLECTIVES, n=2, env={"TORCH_DISTRIBUTED_DEBUG": "DETAIL"})


MISMATCHED = """
    import sys
    import retrograd as torch
    import retrograd.distributed as dist

    dist.init_process_group()  # rank and size from MPI, the backend "mpi" by default
    assert dist.get_backend() == "mpi"
    r = dist.get_rank()
    calls = {"shape": lambda: dist.all_reduce(torch.ones(3 if r == 0 else 2)),
             "dtype": lambda: dist.all_reduce(torch.ones(2, dtype=torch.float64 if r else
                                                          torch.float32)),
             "order": lambda: (dist.all_reduce(torch.ones(2)) if r == 0 else
                               dist.broadcast(torch.ones(2), src=0))}
    for case, call in calls.items():
        try:
            call()
        except RuntimeError as e:
            assert str(e).startswith("Detected mismatch between collectives on ranks. Rank "
                                     f"{r} is running collective: CollectiveFingerPrint("), e
        else:
            raise AssertionError(case)
    sys.stdout.write(f"ok {r}\\n")
"""


def test_debug_mode_detects_mismatched_collectives(mpirun):
    mpirun(MISMATCHED, n=2, env={"TORCH_DISTRIBUTED_DEBUG": "DETAIL"})


@pytest.mark.slow  # the 4-rank DDP test covers 4 ranks by default
def test_collectives_on_4_ranks_oversubscribed(mpirun):
    mpirun(COLLECTIVES, n=4)


def test_import_needs_no_mpi(monkeypatch):
    """The package imports without mpi4py; the mpi backend names the extra to install."""
    monkeypatch.setitem(sys.modules, "mpi4py", None)
    assert dist.is_available() and not dist.is_initialized()
    with pytest.raises(RuntimeError, match=r"retrograd\[distributed\]"):
        dist.init_process_group("mpi")
    assert not dist.is_initialized()


@pytest.mark.torch
def test_names_and_errors_as_pytorch(torch):
    tdist = torch.distributed
    ours = list(dist.ReduceOp.RedOpType.__members__)
    assert ours == [n for n in tdist.ReduceOp.RedOpType.__members__ if n in ours]
    assert ours == ["SUM", "AVG", "PRODUCT", "MIN", "MAX"]
    assert str(dist.ReduceOp.SUM) == str(tdist.ReduceOp.SUM)
    assert dist.Backend("GLOO") == tdist.Backend("GLOO") == "gloo"
    assert dist.default_pg_timeout == tdist.default_pg_timeout
    assert issubclass(dist.DistBackendError, dist.DistError)
    assert issubclass(dist.DistError, RuntimeError)
    for f in (dist.get_rank, dist.get_world_size, lambda: dist.all_reduce(retrograd.ones(1))):
        with pytest.raises(ValueError, match="Default process group has not been initialized"):
            f()
    with pytest.raises(RuntimeError, match="NCCL"):
        dist.init_process_group("nccl")
    with pytest.raises(ValueError, match="Invalid backend"):
        dist.init_process_group("carrier-pigeon")
    assert not dist.is_initialized()


def test_launch_environment_helpers(monkeypatch):
    monkeypatch.delenv("TORCHELASTIC_RUN_ID", raising=False)
    monkeypatch.delenv("LOCAL_RANK", raising=False)
    assert not dist.is_torchelastic_launched() and not dist.is_nccl_available()
    assert dist.get_node_local_rank(fallback_rank=3) == 3
    with pytest.raises(RuntimeError, match="LOCAL_RANK is not in the environment"):
        dist.get_node_local_rank()
    monkeypatch.setenv("TORCHELASTIC_RUN_ID", "x")
    monkeypatch.setenv("LOCAL_RANK", "1")
    assert dist.is_torchelastic_launched() and dist.get_node_local_rank(fallback_rank=3) == 1
