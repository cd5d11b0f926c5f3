"""``torch.futures``: a value that becomes available later (a collective's result, a DDP
communication hook's reduced bucket), with callbacks chained on it.

MPI moves a non-blocking operation along only inside its own calls, so a future made
from one (``Work.get_future()``) carries a ``_poll(block)`` that drives it: ``done()``
polls, ``wait()`` blocks; a future from :meth:`Future.then` drives its parent. A plain
``Future()`` is completed by ``set_result`` (from any thread).
"""

import logging
import threading
from typing import Generic, TypeVar

__all__ = ["Future", "collect_all", "wait_all"]

T = TypeVar("T")
_log = logging.getLogger(__name__)


class Future(Generic[T]):
    """A result to come; ``then`` chains a callback whose return value completes a new
    future.

    >>> fut = retrograd.futures.Future()
    >>> doubled = fut.then(lambda f: f.value() * 2)
    >>> fut.set_result(21); doubled.wait()
    42
    """

    def __init__(self, *, devices=None):
        self._cond = threading.Condition()
        self._done = False
        self._value = None
        self._error = None
        self._callbacks = []
        self._poll = None  # poll(block): moves the producing operation on, if there is one

    def _advance(self, block):
        if not self._done and self._poll is not None:
            self._poll(block)

    def done(self):
        """Whether the future has a result or an exception (polls the operation)."""
        self._advance(False)
        return self._done

    def wait(self):
        """Block until done; the result, or the exception raised."""
        self._advance(True)
        with self._cond:
            while not self._done:
                self._cond.wait()
        return self.value()

    def value(self):
        """The result of a completed future (its exception is raised)."""
        if not self._done:
            raise RuntimeError("value() called on a Future that has not completed; call "
                               "wait() first")
        if self._error is not None:
            raise self._error
        return self._value

    def then(self, callback):
        """A new future completed with ``callback(self)`` once this one completes (an
        exception in ``callback`` becomes the new future's error)."""
        child = Future()
        child._poll = self._advance

        def run(fut):
            try:
                result = callback(fut)
            except Exception as e:  # noqa: BLE001 (it belongs to the child's waiter)
                error = RuntimeError("Got the following error when running the callback: "
                                     f"{type(e).__name__}: {e}")
                error.__cause__ = e
                child._complete(None, error)
            else:
                child.set_result(result)

        self.add_done_callback(run)
        return child

    def add_done_callback(self, callback):
        """Run ``callback(self)`` once the future completes (now, if it has); an
        exception in it is logged, as it has no one to go to."""
        with self._cond:
            if not self._done:
                self._callbacks.append(callback)
                return
        self._run(callback)

    def set_result(self, result):
        """Complete the future with ``result`` (only once); callbacks run now."""
        self._complete(result, None)

    def set_exception(self, result):
        """Complete the future with an error: ``wait()`` and ``value()`` raise it."""
        if not isinstance(result, Exception):
            raise AssertionError(f"{result} is of type {type(result)}, not an Exception.")
        self._complete(None, result)

    def _complete(self, value, error):
        with self._cond:
            if self._done:
                raise RuntimeError("Attempting to mark a completed Future as complete again. "
                                   "Note that a Future can only be marked completed once.")
            self._value, self._error, self._done = value, error, True
            # dropping the producer and the callbacks ends the cycles they made
            callbacks, self._callbacks, self._poll = self._callbacks, [], None
            self._cond.notify_all()
        for cb in callbacks:
            self._run(cb)

    def _run(self, callback):
        try:
            callback(self)
        except Exception as e:  # noqa: BLE001
            _log.error("Got the following error when running the callback: %s: %s",
                       type(e).__name__, e)


def collect_all(futures):
    """One future completed, with the list of ``futures``, once all of them are (with the
    first error among them, if any).

    >>> both = retrograd.futures.collect_all([f0, f1]); [f.wait() for f in both.wait()]
    """
    futures = list(futures)
    combined = Future()
    remaining = [len(futures)]
    lock = threading.Lock()

    def poll(block):
        for f in futures:
            if block:
                f._advance(True)
            elif not f.done():
                return

    def one_done(_):
        with lock:
            remaining[0] -= 1
            last = remaining[0] == 0
        if last:
            error = next((f._error for f in futures if f._error is not None), None)
            combined._complete(None if error else futures, error)

    combined._poll = poll
    if not futures:
        combined.set_result([])
    for f in futures:
        f.add_done_callback(one_done)
    return combined


def wait_all(futures):
    """The values of ``futures`` once all are done (the first error is raised)."""
    return [f.wait() for f in collect_all(futures).wait()]
