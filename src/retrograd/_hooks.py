"""Hook dicts and their handles, for every ``register_*hook`` (Tensor, Node, optimizer):
below the Tensor, as they need nothing of it (PyTorch's ``torch.utils.hooks``)."""

import weakref
from collections import OrderedDict

__all__ = ["RemovableHandle", "add_hook"]


class RemovableHandle:
    """Returned by every ``register_*hook`` (``torch.utils.hooks.RemovableHandle``):
    ``remove()`` deletes the hook's entry from ``hooks_dict`` and from each of
    ``extra_dict`` (a dict or a list of dicts keyed by the same id, such as a module's
    with_kwargs flags). It holds them weakly, so it keeps no hooks alive; safe during
    backward, and picklable with the dicts it refers to."""

    next_id = 0

    def __init__(self, hooks_dict, *, extra_dict=None):
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = RemovableHandle.next_id
        RemovableHandle.next_id += 1
        self.extra_dict_ref = ()
        if isinstance(extra_dict, dict):
            self.extra_dict_ref = (weakref.ref(extra_dict),)
        elif isinstance(extra_dict, list):
            self.extra_dict_ref = tuple(weakref.ref(d) for d in extra_dict)

    def remove(self):
        for ref in (self.hooks_dict_ref, *self.extra_dict_ref):
            d = ref()
            if d is not None:
                d.pop(self.id, None)

    def __getstate__(self):
        return (self.hooks_dict_ref(), self.id, tuple(ref() for ref in self.extra_dict_ref))

    def __setstate__(self, state):
        # a dict gone when pickled: a reference already dead
        self.hooks_dict_ref = weakref.ref(OrderedDict() if state[0] is None else state[0])
        self.id = state[1]
        RemovableHandle.next_id = max(RemovableHandle.next_id, self.id + 1)
        extra = state[2] if len(state) > 2 else None
        self.extra_dict_ref = () if extra is None else tuple(weakref.ref(d) for d in extra)

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
