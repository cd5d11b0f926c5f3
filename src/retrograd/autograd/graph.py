"""Inspecting and intercepting the graph: Node, saved-tensor hooks."""

from .node import Node, current_hooks
from .node import saved_hooks as _hooks

__all__ = ["Node", "saved_tensors_hooks", "current_hooks"]


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
