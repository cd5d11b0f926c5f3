"""A failing rank ends the whole job, never a hang: an exception aborts every rank at once,
a rank that hangs or leaves makes the others raise DistBackendError after the timeout."""

import time

import pytest

FAULTY = """
    import datetime, os, sys, time
    import retrograd as torch
    import retrograd.distributed as dist

    mode, seconds = sys.argv[1], float(sys.argv[2])
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=seconds))
    if dist.get_rank() == 1:
        if mode == "raise":
            raise ValueError("rank 1 fails on purpose")
        if mode == "hang":
            time.sleep(600)
        if mode == "die":
            os.kill(os.getpid(), 9)
        if mode == "leave":
            sys.exit(0)
    t = torch.ones(1)
    dist.all_reduce(t)
    dist.barrier()
"""


def _run(mpirun, mode, seconds):
    start = time.monotonic()
    proc = mpirun(FAULTY, n=2, args=[mode, seconds], timeout=120, ok=False)
    return proc, proc.stdout + proc.stderr, time.monotonic() - start


def test_an_exception_aborts_every_rank_at_once(mpirun):
    proc, said, took = _run(mpirun, "raise", 1800)  # PyTorch's default timeout: not waited
    assert proc.returncode != 0 and took < 60, said
    assert "ValueError: rank 1 fails on purpose" in said
    assert "[rank 1] uncaught ValueError: aborting all ranks" in said


@pytest.mark.parametrize("mode", ["hang", pytest.param("leave", marks=pytest.mark.slow)])
def test_a_silent_rank_times_the_others_out(mpirun, mode):
    proc, said, took = _run(mpirun, mode, 10)
    assert proc.returncode != 0 and 10 <= took < 60, (took, said)
    assert "DistBackendError: [rank 0] timed out after 10 s waiting for all_reduce: one of " \
           "ranks [1] has not joined it" in said


def test_a_killed_rank_ends_the_job(mpirun):
    proc, said, took = _run(mpirun, "die", 1800)
    assert proc.returncode != 0 and took < 60, said


MONITORED = """
    import datetime, sys, time
    import retrograd.distributed as dist

    dist.init_process_group("gloo")
    r = dist.get_rank()
    dist.monitored_barrier(timeout=datetime.timedelta(seconds=5))  # everyone: passes
    if r == 2:
        time.sleep(30)
    try:
        dist.monitored_barrier(timeout=datetime.timedelta(seconds=1), wait_all_ranks=True)
    except dist.DistBackendError as e:
        assert r == 0, e
        assert str(e) == "[rank 0] Rank 2 failed to pass monitoredBarrier in 1000 ms", e
        sys.stdout.write("named\\n")
        sys.exit(0)
"""


def test_monitored_barrier_names_the_missing_rank(mpirun):
    proc = mpirun(MONITORED, n=3, timeout=60, ok=False)
    assert "named" in proc.stdout, proc.stdout + proc.stderr
