"""A DataLoader worker that dies is noticed at once (PyTorch's SIGCHLD handler does it
within milliseconds; polling alone took 5 s), with PyTorch's exception and messages."""

import os
import re
import signal
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


@pytest.mark.parametrize("sig,name", [(signal.SIGKILL, "Killed"),
                                      (signal.SIGTERM, "Terminated")], ids=["KILL", "TERM"])
def test_a_killed_worker_is_noticed_by_the_next_next_within_half_a_second(sig, name):
    it = iter(_loader())
    assert next(it).tolist() == [0, 1]
    pid = it._workers[0].pid
    start = time.monotonic()
    os.kill(pid, sig)
    with pytest.raises(RuntimeError) as e:
        next(it)
    elapsed = time.monotonic() - start
    assert elapsed < 0.5, f"noticed after {elapsed:.2f} s"
    assert str(e.value) == f"DataLoader worker (pid(s) {pid}) exited unexpectedly"
    assert str(e.value.__cause__) == f"DataLoader worker (pid {pid}) is killed by signal: {name}. "
    assert not any(w.is_alive() for w in it._workers)  # the busy one is stopped too
    with pytest.raises(RuntimeError, match=re.escape(str(e.value))):
        next(it)  # the iterator stays failed, with the same message


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
