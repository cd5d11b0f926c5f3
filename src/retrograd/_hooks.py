"""Hook dicts and their handles, for every ``register_*hook`` (Tensor, Node, optimizer):
below the Tensor, as they need nothing of it (PyTorch's ``torch.utils.hooks``)."""

import itertools
import weakref
from collections import OrderedDict

__all__ = ["RemovableHandle", "add_hook"]


class RemovableHandle:
    """Returned by every ``register_*hook``; ``remove()`` is safe during backward."""

    __slots__ = ("_ref", "id")
    _ids = itertools.count()

    def __init__(self, hooks_dict):
        self._ref = weakref.ref(hooks_dict)
        self.id = next(RemovableHandle._ids)

    def remove(self):
        d = self._ref()
        if d is not None:
            d.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def add_hook(d, fn):
    """Add ``fn`` to hook dict ``d`` (made when None); returns the dict and its handle."""
    if d is None:
        d = OrderedDict()
    h = RemovableHandle(d)
    d[h.id] = fn
    return d, h
