"""The fallback for a rule that cannot run on batched arrays (it reads values, or calls a
NumPy function without a batching rule): run it once per batch element and stack the
results, with PyTorch's performance warning naming the op."""

import warnings

from ..backend import get_array_module
from ._batched import Batched
from ._batched_xp import BatchedNumpy

__all__ = ["NO_RULE", "top_batch", "per_element"]

# What a rule raises on batched arrays it cannot handle (NotImplementedError: no batching
# rule or a value read; TypeError: conversion to a plain array; AttributeError: an
# ndarray method the batched arrays lack).
NO_RULE = (NotImplementedError, TypeError, AttributeError)


def _batches(x, found):
    t = type(x)
    if t is Batched:
        found.append(x)
    elif t is list or t is tuple:
        for e in x:
            _batches(e, found)
    return found


def top_batch(values):
    """``(level, batch size)`` of the innermost batch among ``values``, or None."""
    found = _batches(values, [])
    if not found:
        return None
    top = max(found, key=lambda b: b.level)
    return top.level, top.data.shape[0]


def _row(x, level, i):
    t = type(x)
    if t is Batched:
        return x.data[i] if x.level == level else x
    if t is BatchedNumpy:
        return x.inner if x.level == level else x
    if t is list or t is tuple:
        return t(_row(e, level, i) for e in x)
    return x


def per_element(name, fn, args, level, batch):
    """``fn(*args)`` for each element of the batch of ``level`` (its arrays replaced by that
    element, its namespace by the one of its data), the results stacked as that batch."""
    warnings.warn(f"There is a performance drop because we have not yet implemented the "
                  f"batching rule for aten::{name}. Please file us an issue on GitHub so "
                  f"that we can prioritize its implementation.", stacklevel=3)
    rows = [_attempt(name, fn, _row(list(args), level, i)) for i in range(batch)]
    return _stack(rows, level)


def _attempt(name, fn, args):
    """``fn(*args)``, per element of the next batch down where that cannot batch either
    (nested vmaps)."""
    try:
        return fn(*args)
    except NO_RULE:
        top = top_batch(args)
        if top is None:
            raise
        return per_element(name, fn, args, *top)


def _stack(rows, level):
    first = rows[0]
    if first is None:
        return None
    if type(first) is tuple or type(first) is list:
        return type(first)(_stack([r[k] for r in rows], level) for k in range(len(first)))
    return Batched(get_array_module(first).stack(rows), level)
