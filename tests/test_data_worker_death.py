"""A DataLoader worker that dies is noticed at once (PyTorch's SIGCHLD handler does it
within milliseconds; polling alone took 5 s), with PyTorch's exception and messages."""

import json
import os
import re
import signal
import sys
import time

import pytest

import retrograd.utils.data as rd

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="worker signals are POSIX's")


class _StallsAfterFirstBatch(rd.Dataset):
    """Batch 0 (items 0, 1) comes at once; every later item takes a minute, so the next
    batch can only come from a worker that is still busy, and the death must be noticed.
    Item 2 (batch 1, worker 1's) can instead end its worker with ``exit_code``."""

    def __init__(self, exit_code=None):
        self.exit_code = exit_code

    def __len__(self):
        return 100

    def __getitem__(self, i):
        if i == 2 and self.exit_code is not None:
            os._exit(self.exit_code)
        if i >= 2:
            time.sleep(60)
        return i


def _loader(**kw):
    return rd.DataLoader(_StallsAfterFirstBatch(**kw), batch_size=2, num_workers=2,
                         multiprocessing_context="fork")


def _kill_a_busy_worker(sig):
    """Worker 0 killed by ``sig`` while both workers are busy: its pid, how long the next
    ``next`` took to raise, that error and its cause, whether a worker is still alive
    after it, and what the ``next`` after that raised."""
    it = iter(_loader())
    assert next(it).tolist() == [0, 1]
    pid = it._workers[0].pid
    start = time.monotonic()
    os.kill(pid, sig)
    with pytest.raises(RuntimeError) as e:
        next(it)
    elapsed = time.monotonic() - start
    alive = any(w.is_alive() for w in it._workers)
    with pytest.raises(RuntimeError) as again:
        next(it)
    return {"pid": pid, "elapsed": elapsed, "error": str(e.value),
            "cause": str(e.value.__cause__), "alive": alive, "again": str(again.value)}


@pytest.fixture(scope="module")
def killed(python_run):
    """``_kill_a_busy_worker`` for SIGKILL and SIGTERM, in a fresh interpreter: a forked
    worker's exit first frees its copy of its parent's memory, and no notice (sentinel,
    SIGCHLD) can come sooner; forked from this test run's process (GBs late in a full
    run), that alone took seconds on a loaded machine."""
    out = python_run(__file__, "SIGKILL", "SIGTERM", timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


@pytest.mark.parametrize("sig,name", [("SIGKILL", "Killed"), ("SIGTERM", "Terminated")],
                         ids=["KILL", "TERM"])
def test_a_killed_worker_is_noticed_by_the_next_next_within_half_a_second(sig, name, killed):
    r = killed[sig]
    assert r["elapsed"] < 0.5, f"noticed after {r['elapsed']:.2f} s"
    assert r["error"] == f"DataLoader worker (pid(s) {r['pid']}) exited unexpectedly"
    assert r["cause"] == f"DataLoader worker (pid {r['pid']}) is killed by signal: {name}. "
    assert not r["alive"]  # the busy one is stopped too
    assert r["again"] == r["error"]  # the iterator stays failed, with the same message


def test_a_worker_that_exits_reports_its_exit_code():
    it = iter(_loader(exit_code=3))
    assert next(it).tolist() == [0, 1]
    with pytest.raises(RuntimeError, match=r"DataLoader worker \(pid\(s\) \d+\) exited "
                                           r"unexpectedly\Z") as e:
        next(it)
    assert re.fullmatch(r"DataLoader worker \(pid \d+\) exited unexpectedly with exit code 3\. "
                        r"Details are lost due to multiprocessing\. Rerunning with "
                        r"num_workers=0 may give better error trace\.", str(e.value.__cause__))


def test_timeout_still_applies_while_workers_live():
    loader = rd.DataLoader(_StallsAfterFirstBatch(), batch_size=2, num_workers=2, timeout=0.2,
                           multiprocessing_context="fork")
    it = iter(loader)
    assert next(it).tolist() == [0, 1]
    with pytest.raises(RuntimeError, match=r"\ADataLoader timed out after 0\.2 seconds\Z"):
        next(it)
    it._shutdown_workers(graceful=False)


if __name__ == "__main__":
    print(json.dumps({s: _kill_a_busy_worker(signal.Signals[s]) for s in sys.argv[1:]}))
