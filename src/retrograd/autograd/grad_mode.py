"""Grad mode: whether ops record the graph. Thread-local, as in PyTorch."""

import functools
import inspect
from .. import _grad_state
from .._grad_state import state

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled", "inference_mode",
           "is_inference_mode_enabled", "set_multithreading_enabled", "is_multithreading_enabled"]


def is_grad_enabled():
    """True when operations are recorded for autograd."""
    return state.enabled


def is_inference_mode_enabled():
    return state.inference


class _DecoratorContextManager:
    """Usable as ``with cls():`` and as ``@cls()`` (or ``@cls`` for no-arg classes).

    A decorated function runs inside a fresh copy of the manager; a decorated
    generator runs each of its steps inside one, as PyTorch does.
    """

    def __call__(self, fn):
        if inspect.isgeneratorfunction(fn):
            return _wrap_generator(self.clone, fn)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.clone():
                return fn(*args, **kwargs)
        return wrapper

    def clone(self):
        return type(self)()


def _wrap_generator(make_ctx, fn):
    @functools.wraps(fn)
    def generator(*args, **kwargs):
        gen = fn(*args, **kwargs)
        try:
            with make_ctx():
                response = gen.send(None)
            while True:
                try:
                    request = yield response
                except GeneratorExit:
                    with make_ctx():
                        gen.close()
                    raise
                except BaseException as e:
                    with make_ctx():
                        response = gen.throw(e)
                else:
                    with make_ctx():
                        response = gen.send(request)
        except StopIteration as e:
            return e.value
    return generator


class no_grad(_DecoratorContextManager):
    """Disable graph recording.

    >>> with no_grad():
    ...     y = x * 2   # y.requires_grad is False
    """

    def __new__(cls, orig_func=None):
        self = super().__new__(cls)
        if orig_func is not None and callable(orig_func):  # bare @no_grad
            return self(orig_func)
        return self

    def __enter__(self):
        self.prev = state.enabled
        state.enabled = False

    def __exit__(self, *exc):
        state.enabled = self.prev


class enable_grad(no_grad):
    """Re-enable graph recording inside ``no_grad``."""

    def __enter__(self):
        self.prev = state.enabled
        state.enabled = True


class set_grad_enabled(_DecoratorContextManager):
    """Set grad mode; takes effect at once, so it also works as a plain call.

    As a decorator it only applies inside the function (the mode set on
    construction is undone when it decorates).
    """

    def __init__(self, mode):
        self.prev = state.enabled
        self.mode = mode
        state.enabled = mode

    def __call__(self, fn):
        state.enabled = self.prev
        return super().__call__(fn)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        state.enabled = self.prev

    def clone(self):
        return set_grad_enabled(self.mode)


class inference_mode(_DecoratorContextManager):
    """Like no_grad (``inference_mode(False)`` turns grad mode back on, as in PyTorch)."""

    def __new__(cls, mode=True):
        self = super().__new__(cls)
        if callable(mode):  # bare @inference_mode
            self.mode = True
            return self(mode)
        return self

    def __init__(self, mode=True):
        self.mode = bool(mode) if not callable(mode) else True

    def __enter__(self):
        self.prev = state.enabled, state.inference
        state.enabled = not self.mode
        _grad_state.set_inference(self.mode)

    def __exit__(self, *exc):
        state.enabled = self.prev[0]
        _grad_state.set_inference(self.prev[1])

    def clone(self):
        return inference_mode(self.mode)


def is_multithreading_enabled():
    return state.multithreading


class set_multithreading_enabled(_DecoratorContextManager):
    """Allow or forbid running backward on device worker threads; takes effect at once
    (also as a plain call). PyTorch runs CPU backward on the calling thread either way,
    as retrograd always does, so the flag is recorded and changes no computation."""

    def __init__(self, mode):
        self.prev = state.multithreading
        self.mode = mode
        state.multithreading = mode

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        state.multithreading = self.prev

    def clone(self):
        return set_multithreading_enabled(self.mode)
