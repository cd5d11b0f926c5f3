"""Inspecting and intercepting the graph: Node, saved-tensor hooks."""

import threading

from .node import Node

__all__ = ["Node", "saved_tensors_hooks", "current_hooks"]


class _HookStack(threading.local):
    stack = ()


_hooks = _HookStack()


def current_hooks():
    """The innermost (pack, unpack) pair, or None."""
    s = _hooks.stack
    return s[-1] if s else None


class saved_tensors_hooks:
    """Context manager: ``pack_hook(tensor)`` runs for every tensor an op saves and its
    result is stored instead; ``unpack_hook(packed)`` rebuilds the tensor in backward.

    >>> with saved_tensors_hooks(lambda t: t * 4, lambda t: t / 4):
    ...     y = x.pow(2)
    """

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        _hooks.stack = _hooks.stack + ((self.pack_hook, self.unpack_hook),)
        return self

    def __exit__(self, *exc):
        _hooks.stack = _hooks.stack[:-1]
