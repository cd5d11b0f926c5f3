"""``retrograd.futures`` against ``torch.futures``: one scenario run on both, logs compared."""

import threading

import pytest

import retrograd


def scenario(futures):
    """What a user sees of a Future's life: chained callbacks, errors, collect/wait_all."""
    log = []
    fut = futures.Future()
    log.append(("done before", fut.done()))
    doubled = fut.then(lambda f: f.value() * 2)
    fut.add_done_callback(lambda f: log.append(("callback", f.value())))
    fut.set_result(21)
    log.append(("then", doubled.wait(), doubled.done(), fut.value()))
    fut.add_done_callback(lambda f: log.append(("late callback", f.value())))
    try:
        fut.set_result(1)
    except RuntimeError as e:
        log.append(("again", str(e)))
    failing = fut.then(lambda f: f.value() / 0)
    for read in (failing.wait, failing.value):
        try:
            read()
        except RuntimeError as e:
            log.append(("callback error", str(e).partition("\n")[0]))
    bad = futures.Future()
    bad.set_exception(ValueError("foo"))
    try:
        bad.wait()
    except ValueError as e:
        log.append(("exception", str(e)))
    try:
        bad.set_exception(3)
    except AssertionError as e:
        log.append(("not an exception", str(e)))
    a, b = futures.Future(), futures.Future()
    both = futures.collect_all([a, b])
    a.set_result("a")
    log.append(("collect one of two", both.done()))
    threading.Timer(0.01, b.set_result, ("b",)).start()  # completed from another thread
    log.append(("collect", [f.wait() for f in both.wait()]))
    c = futures.Future()
    c.set_result(3)
    log.append(("wait_all", futures.wait_all([c, fut])))
    return log


@pytest.mark.torch
def test_futures_as_torch(torch):
    assert scenario(retrograd.futures) == scenario(torch.futures)


def test_value_of_an_incomplete_future_raises():
    with pytest.raises(RuntimeError, match="not completed"):
        retrograd.futures.Future().value()
