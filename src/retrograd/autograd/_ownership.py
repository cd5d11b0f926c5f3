"""Which gradients of a running backward only the engine holds (AccumulateGrad may then
make one a leaf's ``.grad`` without copying it).

Decided by provenance, never by reference counts (they change across CPython
versions). A gradient is known by the array owning its memory (its ``base``, or
itself), so a view of a gradient shares its fate. The engine alone holds it unless

- it is *foreign*: the user gave it (a root gradient), a hook or a capture was shown
  it, or a node whose rules are not the library's (a custom Function's backward, which
  may keep what it returns) produced it; or
- it is *shared*: more than one slot of the engine's input buffers holds it (an add's
  backward passes one gradient to both inputs), counted until one slot is left.

Library rules return arrays they made or their input gradients and views of them (a
vjp is linear in the gradient: it never returns a saved tensor), so neither case needs
anything on the common path: one node, one new array, one buffer slot.
"""

import weakref

import numpy

from ..backend import meta

_ndarray = numpy.ndarray
_meta_ndarray = meta.ndarray


def _owner(g):
    """The array owning ``g``'s memory; None for what is never stolen (a NumPy scalar, a
    device's array), which needs no books. Meta arrays are stolen as NumPy's are, so a
    shape-only run books what the CPU run does."""
    if type(g) is not _ndarray and type(g) is not _meta_ndarray:
        return None
    base = g.base
    return g if base is None else base


class Owners:
    """The foreign and shared gradients of one backward pass, by their owners' ids:
    a foreign one is forgotten when it is freed (a weak reference), a shared one when
    no slot holds it, so a new array never inherits a dead one's id."""

    __slots__ = ("foreign", "shared")

    def __init__(self, root_grads):
        self.foreign = {}  # id(owner) -> weak reference to it
        self.shared = {}   # id(owner) -> how many buffer slots hold it (1 or more)
        self.expose(root_grads)

    def expose(self, grads):
        """``grads`` (a buffer, a node's outputs) were seen outside the engine."""
        foreign = self.foreign
        for g in grads:
            owner = _owner(g)
            if owner is not None and id(owner) not in foreign:
                k = id(owner)
                try:
                    foreign[k] = weakref.ref(owner, lambda _, k=k: foreign.pop(k, None))
                except TypeError:  # memory owned by a non-array (a buffer): never stolen
                    pass

    def consume(self, grads):
        """Buffer slots holding ``grads`` were emptied (a node ran on them, or a slot's
        value was summed into a new array)."""
        shared = self.shared
        for g in grads:
            owner = _owner(g)
            if owner is not None:
                k = id(owner)
                n = shared.get(k)
                if n is not None:
                    if n > 1:
                        shared[k] = n - 1
                    else:
                        del shared[k]

    def place(self, grads):
        """Each of ``grads`` (one node's outputs) was put in an empty buffer slot."""
        counts = {}
        for g in grads:
            owner = _owner(g)
            if owner is not None:
                k = id(owner)
                counts[k] = counts.get(k, 0) + 1
        shared = self.shared
        for k, n in counts.items():
            if k in shared:
                shared[k] += n
            elif n > 1:
                shared[k] = n

    def sole(self, g):
        """Whether nothing but the slot just consumed held gradient ``g`` (an array)."""
        owner = _owner(g)
        if owner is None:
            return False
        k = id(owner)
        return k not in self.foreign and k not in self.shared
