"""Views and in-place history rewriting (PyTorch's CopySlices).

A view shares its base's array memory and version counter. When a view is
written in place, the base's history becomes ``CopySlices`` (apply the
in-place op's node to the view's region of the base's gradient) and the
view's becomes ``AsStridedBackward0`` of the base. Other views of the same
base notice the version change and rebuild their grad_fn the same way the
next time an op uses them or reads their ``grad_fn`` or ``requires_grad`` (Tensor
attributes this module installs). Regions are recorded as element geometry inside the
base's memory (any dense layout: C, F or permuted), which gradients of the
base reproduce by taking the base's strides.
"""

from .._tensor import Tensor, _set_requires_grad, wrap
from ..backend import get_array_module, host_array_module
from ..backend.functions import facade, functions
from ..autograd.node import Node, collect_next
from ._opdef import defop

__all__ = ["xp_of", "mark_view", "requires_grad", "rebase_view"]


def xp_of(values):
    """The array module of the tensors among ``values``: the first one's, or under vmap the
    innermost batch's namespace (a device array's module cannot take a batch)."""
    arrays = [v._data for v in values if isinstance(v, Tensor)]
    if not arrays:
        return host_array_module()
    first = arrays[0]
    if any(type(a) is not type(first) for a in arrays):  # (mixed: a batch among them?)
        first = max(arrays, key=lambda a: getattr(a, "level", -1))
    return get_array_module(first)


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


def _requires_grad_attr(t):
    return t._requires_grad if t._base is None else requires_grad(t)


def _set_requires_grad_attr(t, flag):
    _set_requires_grad(t, flag, "only Tensors of floating point and complex dtype")


def _grad_fn_attr(t):
    if t._base is not None:
        requires_grad(t)
    return t._grad_fn


# The Tensor's autograd attributes, as a view sees them (PyTorch's VariableHooks::grad_fn).
Tensor.requires_grad = property(_requires_grad_attr, _set_requires_grad_attr)
Tensor.grad_fn = property(_grad_fn_attr)


def _element_strides(a):
    """The element strides of a dense array (some permutation of a contiguous layout,
    strides positive), whose elements fill the memory from its start."""
    item = a.itemsize
    strides = tuple(s // item for s in a.strides)
    if a.size == 0:  # no elements: nothing to lay out, whatever the strides say
        return strides
    expected = 1
    for s, n in sorted((s, n) for s, n in zip(strides, a.shape, strict=True) if n != 1):
        if s != expected:
            raise NotImplementedError(
                "in-place autograd on a view needs a base tensor whose elements are dense in "
                "memory; call .contiguous() before taking the view")
        expected *= n
    return strides


def _may_overlap(shape, strides):
    """False when the elements at these strides are surely distinct: each dim, by
    increasing stride, steps past everything the smaller ones reach."""
    span = 1
    for s, n in sorted((s, n) for s, n in zip(strides, shape, strict=True) if n != 1):
        if s < span:
            return True
        span += s * (n - 1)
    return False


def _as_strided(a, shape, strides):
    return get_array_module(a).lib.stride_tricks.as_strided(a, shape, strides)


class _Region:
    """Where a view lies inside its base, in elements of the base's memory: the view's
    shape, strides and offset, and the base's shape and strides."""

    __slots__ = ("base_shape", "base_strides", "numel", "dtype", "shape", "strides", "offset",
                 "xp")

    def __init__(self, base, view):
        b, v = base._data, view._data
        self.xp = get_array_module(b)
        address = functions(self.xp).address
        item = b.itemsize
        self.base_shape, self.base_strides, self.dtype = b.shape, _element_strides(b), b.dtype
        self.numel = b.size
        self.shape = v.shape
        self.strides = tuple(s // item for s in v.strides)
        self.offset = (address(v) - address(b)) // item

    def like_base(self, fill=0, xp=None):
        """A new array laid out like the base, and the flat memory under it (of ``xp``: the
        gradient's namespace, which under vmap makes a batch of them)."""
        flat = (xp or self.xp).full(self.numel, fill, self.dtype)
        return flat, _as_strided(flat, self.base_shape,
                                 tuple(s * flat.itemsize for s in self.base_strides))

    def view_of(self, flat):
        """The region inside the flat memory of an array laid out like the base."""
        return _as_strided(flat[self.offset:], self.shape,
                           tuple(s * flat.itemsize for s in self.strides))

    def ids(self):
        """Where each element of the view, and of the base, lies in the base's memory."""
        ids = self.xp.arange(self.numel)
        return self.view_of(ids), _as_strided(ids, self.base_shape, tuple(
            s * ids.itemsize for s in self.base_strides))

    def geometry(self):
        """(view, base, numel): the view's and the base's (sizes, element strides, element
        offset) inside the base's memory, for ``_as_strided_backward``."""
        return ((self.shape, self.strides, self.offset), (self.base_shape, self.base_strides, 0),
                self.numel)


def _strided_ids(xp, numel, geometry):
    size, stride, offset = geometry
    ids = xp.arange(numel)
    return xp.lib.stride_tricks.as_strided(ids[offset:], size,
                                           tuple(s * ids.itemsize for s in stride))


def _restride_forward(xp, x, src, dst, numel):
    """Scatter-add ``x`` (laid out as geometry ``src`` of a storage) into the storage, then
    read geometry ``dst``: the gradient of an as_strided view, and its own adjoint."""
    s = _strided_ids(xp, numel, src).reshape(-1)
    storage = functions(xp).bincount(s, x.reshape(-1), numel)
    return storage[_strided_ids(xp, numel, dst)].astype(x.dtype)


_as_strided_backward = defop(
    "as_strided_backward", _restride_forward,
    vjp={"x": lambda xp, grad, src, dst, numel:
         functions(xp).call(_as_strided_backward, (grad,), (dst, src, numel))},
    jvp="transpose")


def _restride(g, src, dst, numel):
    """Differentiably move gradient ``g`` from geometry ``src`` of the base's storage to
    geometry ``dst`` (summing elements that meet): the create_graph path, recorded through
    the differentiable facade as a rule's op is."""
    return functions(facade(g)).call(_as_strided_backward, (g,), (src, dst, numel))


class AsStridedBackward0(Node):
    """grad_fn of a view whose base was rewritten: scatter the gradient into the base."""

    __slots__ = ("_region",)
    _fresh_grads = True

    def __new__(cls, base, view):
        self = Node.__new__(cls)
        self._region = _Region(base, view)
        self.next_functions, _ = collect_next((base,), ("self",))
        return self

    def apply(self, grads, create_graph):
        r = self._region
        if create_graph:
            view, base, n = r.geometry()
            return [_restride(grads[0], view, base, n)]
        xp = get_array_module(grads[0])
        flat, out = r.like_base(xp=xp)
        if _may_overlap(r.shape, r.strides):  # (expand, as_strided): sum duplicates
            ids = r.view_of(r.xp.arange(r.numel))
            functions(xp).ufunc_at("add", flat, ids.ravel(), xp.ravel(grads[0]))
        else:
            r.view_of(flat)[...] = grads[0]
        return [out]

    def _batched_apply(self, walk, grads):
        """``apply`` on a batch of gradients (the batch on axis 0), for
        ``grad(..., is_grads_batched=True)``'s ``walk``."""
        r, g, n = self._region, grads[0], walk.batch
        view, base = r.ids()
        flat = r.xp.zeros((n, r.numel), g.dtype)
        if _may_overlap(r.shape, r.strides):
            functions(r.xp).ufunc_at("add", flat, (slice(None), view.ravel()),
                                     g.reshape(n, -1))
        else:
            flat[:, view] = g
        return [flat[:, base]]


class CopySlices(Node):
    """grad_fn of a base after an in-place op on one of its views."""

    __slots__ = ("_region", "fn")
    _fresh_grads = True

    def apply(self, grads, create_graph):
        r = self._region
        if create_graph:
            return self._apply_graph(grads[0])
        flat, result = r.like_base(xp=get_array_module(grads[0]))
        result[...] = grads[0]
        region = r.view_of(flat)
        res = self.fn.apply([region.copy()], False)
        region[...] = 0 if res[0] is None else res[0]
        return [result, *res[1:]]

    def _batched_apply(self, walk, grads):
        """``apply`` on a batch of gradients (the batch on axis 0), for
        ``grad(..., is_grads_batched=True)``'s ``walk``, which runs the in-place op's node."""
        r, g = self._region, grads[0]
        view, base = r.ids()
        flat = r.xp.empty((walk.batch, r.numel), g.dtype)
        flat[:, base] = g
        res = walk.apply(self.fn, [flat[:, view]], every_edge=True)
        flat[:, view] = 0 if res[0] is None else res[0]
        return [flat[:, base], *res[1:]]

    def _apply_graph(self, g):
        """The same on Tensors, recorded: the region read out of ``g``, run through the
        in-place op's node, and written back over zeros where it was."""
        r = self._region
        view, base, n = r.geometry()
        res = self.fn.apply([_restride(g, base, view, n)], True)
        flat, keep = r.like_base(fill=1)
        r.view_of(flat)[...] = 0
        result = g * wrap(keep)
        if res[0] is not None:
            result = result + _restride(res[0], view, base, n)
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
    if base._retains_grad:
        base.retain_grad()
    view._grad_fn = AsStridedBackward0(base, view)
    view._output_nr = 0
    view._view_version = view._vc[0]
