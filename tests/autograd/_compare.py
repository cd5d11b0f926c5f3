"""Differential helpers: run one scenario with retrograd and with PyTorch, compare.

A scenario is a function of the library module (``T``) returning plain Python
data (lists, names, logs, error messages); the ``both`` fixture (conftest.py)
runs it twice and asserts the results agree (floats to float32 precision).
"""

import math

import retrograd


def same(a, b):
    """Structural equality with float tolerance."""
    if isinstance(a, float) or isinstance(b, float):
        return isinstance(a, (int, float)) and isinstance(b, (int, float)) and \
            math.isclose(a, b, rel_tol=1e-5, abs_tol=1e-6)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return a == b


def error(fn):
    """(exception type name, message) raised by ``fn()``, or None."""
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the point is to compare what is raised
        return type(e).__name__, str(e)
    return None


def values(t):
    """A tensor's values as nested lists (None stays None)."""
    return None if t is None else t.detach().tolist()


def tensors_in(obj, seen=None):
    """The tensors in a sample's nested arguments, by id, each once, in order."""
    seen = {} if seen is None else seen
    if isinstance(obj, retrograd.Tensor):
        seen.setdefault(id(obj), obj)
    elif isinstance(obj, (list, tuple)):
        for e in obj:
            tensors_in(e, seen)
    elif isinstance(obj, dict):
        for e in obj.values():
            tensors_in(e, seen)
    return seen
