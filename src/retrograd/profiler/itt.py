"""``torch.profiler.itt``: Intel ITT ranges for VTune. retrograd does not link the ITT
API, so this is PyTorch's module on a build without ITT: :func:`is_available` is False
and the others raise."""

from contextlib import contextmanager

__all__ = ["is_available", "range_push", "range_pop", "mark", "range"]


def _no_itt(*args, **kwargs):
    raise RuntimeError("ITT functions not installed. Are you sure you have a ITT build?")


def is_available():
    """Whether ITT is available: never here."""
    return False


def range_push(msg):
    """Push a range named ``msg`` onto the stack of nested ITT ranges."""
    return _no_itt(msg)


def range_pop():
    """Pop the innermost ITT range."""
    return _no_itt()


def mark(msg):
    """Mark an instant named ``msg``."""
    return _no_itt(msg)


@contextmanager
def range(msg, *args, **kwargs):  # noqa: A001 (PyTorch's name)
    """An ITT range around a block, named ``msg.format(*args, **kwargs)``."""
    range_push(msg.format(*args, **kwargs))
    try:
        yield
    finally:
        range_pop()
