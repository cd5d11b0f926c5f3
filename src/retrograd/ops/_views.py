"""Views and in-place history rewriting (PyTorch's CopySlices).

A view shares its base's array memory and version counter. When a view is
written in place, the base's history becomes ``CopySlices`` (apply the
in-place op's node to the view's region of the base's gradient) and the
view's becomes ``AsStridedBackward0`` of the base. Other views of the same
base notice the version change and rebuild their grad_fn the same way the
next time an op uses them. Regions are recorded as byte geometry relative to
the base array, which gradients of the base reproduce by copying its layout.
"""

import numpy
from numpy.lib.stride_tricks import as_strided

from .._tensor import Tensor
from ..backend import get_array_module
from ..autograd.node import Node, collect_next

__all__ = ["xp_of", "mark_view", "requires_grad", "rebase_view"]


def xp_of(values):
    for v in values:
        if isinstance(v, Tensor):
            return get_array_module(v._data)
    return numpy


def _root(t):
    return t._base if t._base is not None else t


def mark_view(src, outs):
    """Make the op's output(s) views of ``src``'s base, sharing its version counter."""
    base = _root(src)
    for o in (outs if type(outs) is tuple else (outs,)):
        o._base = base
        o._vc = src._vc
        o._view_version = src._vc[0]


def requires_grad(v):
    """``v._requires_grad`` for a view, first rebuilding a grad_fn made stale by an
    in-place write through its base or another view."""
    if v._view_version != v._vc[0]:
        v._view_version = v._vc[0]
        base = v._base
        if base._grad_fn is not None:
            v._grad_fn = AsStridedBackward0(base, v)
            v._output_nr = 0
            v._requires_grad = True
    return v._requires_grad


def _layout(base):
    a = base._data
    if a.flags.c_contiguous:
        return "C"
    if a.flags.f_contiguous:
        return "F"
    raise NotImplementedError(
        "in-place autograd on a view needs a contiguous base tensor; call .contiguous() "
        "before taking the view")


class _Region:
    """Where a view lies inside its base: shape, byte strides, byte offset."""

    __slots__ = ("base_shape", "dtype", "order", "shape", "strides", "offset")

    def __init__(self, base, view):
        b, v = base._data, view._data
        self.base_shape, self.dtype, self.order = b.shape, b.dtype, _layout(base)
        self.shape, self.strides = v.shape, v.strides
        self.offset = (v.__array_interface__["data"][0] - b.__array_interface__["data"][0])

    def zeros_base(self):
        return numpy.zeros(self.base_shape, self.dtype, order=self.order)

    def view_of(self, arr):
        flat = arr.reshape(-1, order="K")
        start = flat[self.offset // arr.itemsize:]
        return as_strided(start, self.shape, self.strides)


def _plain_only(create_graph, name):
    if create_graph:
        raise NotImplementedError(f"create_graph=True through {name} (an in-place write to a "
                                  "view) is not supported yet")


class AsStridedBackward0(Node):
    """grad_fn of a view whose base was rewritten: scatter the gradient into the base."""

    __slots__ = ("_region",)

    def __new__(cls, base, view):
        self = Node.__new__(cls)
        self._region = _Region(base, view)
        self.next_functions, _ = collect_next((base,), ("self",))
        return self

    def apply(self, grads, create_graph):
        _plain_only(create_graph, self.name())
        r = self._region
        out = r.zeros_base()
        dst = r.view_of(out)
        if 0 in r.strides and dst.size > 1:  # overlapping view (expand): sum duplicates
            idx = r.view_of(numpy.arange(out.size).reshape(out.shape, order=r.order))
            numpy.add.at(out.reshape(-1, order="K"), idx.ravel(), numpy.ravel(grads[0]))
        else:
            dst[...] = grads[0]
        return [out]


class CopySlices(Node):
    """grad_fn of a base after an in-place op on one of its views."""

    __slots__ = ("_region", "fn")

    def apply(self, grads, create_graph):
        _plain_only(create_graph, self.name())
        r = self._region
        result = r.zeros_base()
        result[...] = grads[0]
        region = r.view_of(result)
        res = self.fn.apply([region.copy()], False)
        region[...] = 0 if res[0] is None else res[0]
        return [result, *res[1:]]

    def release(self):
        self.fn.release()


def rebase_view(view, node):
    """After ``node`` recorded an in-place op on ``view``: route the base through it."""
    base = view._base
    cs = CopySlices()
    cs._region = _Region(base, view)
    cs.fn = node
    base_edge, _ = collect_next((base,), ("self",))
    cs.next_functions = base_edge + node.next_functions[1:]
    base._grad_fn, base._output_nr, base._requires_grad = cs, 0, True
    view._grad_fn = AsStridedBackward0(base, view)
    view._output_nr = 0
    view._view_version = view._vc[0]
