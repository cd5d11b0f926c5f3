"""Joining and splitting: cat, stack, split, chunk, unbind, tensor_split.

Ops over a list of tensors and ops with a variable number of outputs record a
:class:`_ListNode` (one node, one gradient per input), as PyTorch's CatBackward0
and SplitBackward0 do; split/chunk/unbind outputs are views of their input.
``tensor_split`` records one SliceBackward0 per piece, as PyTorch does.
"""

import functools
import itertools
import operator

from .._dtype import is_inexact
from .. import _autocast, _dtype, _observe
from ..backend import get_array_module
from ..backend.functions import functions
from .._tensor import Tensor, _wrap_dim, wrap
from ..autograd import forward_ad, grad_mode
from ..autograd.node import Node, grad_accumulator
from . import _tensor_xp, _views
from ._registry import _pretty, apply, register
from .comparison import _invalid
from .indexing import _slice
from .shape import _ints, reshape

__all__ = ["cat", "concat", "concatenate", "stack", "hstack", "vstack", "split", "chunk",
           "unbind", "split_with_sizes", "tensor_split"]


# ---- nodes of list ops ------------------------------------------------------------------------

class _ListNode(Node):
    """Node of an op over a list of tensors or with a variable number of outputs.

    ``_vjp(xp, grads, shapes, *attrs)`` returns one gradient (or None) per input; outputs
    that received no gradient get zeros first.
    """

    __slots__ = ("_attrs", "_shapes", "_dtypes", "_out_meta")
    _vjp = None
    _fresh_grads = True

    def apply(self, grads, create_graph):
        g = grads[0]
        if g is None:
            g = next((g for g in grads if g is not None), None)
        if create_graph:
            xp = _tensor_xp.of(g)
        else:
            xp = get_array_module(g)
        meta = self._out_meta
        if meta is not None:
            grads = [g if g is not None else xp.zeros(s, dtype=d)
                     for g, (s, d) in zip(grads, meta, strict=True)]
        res = []
        grads = self._vjp(xp, grads, self._shapes, *self._attrs)
        for (fn, _), g, dt in zip(self.next_functions, grads, self._dtypes, strict=True):
            if fn is not None and g is not None:
                if create_graph:
                    if g._data.dtype != dt:
                        g = xp.astype(g, dt)
                elif g.dtype != dt:
                    g = g.astype(dt)
            res.append(g if fn is not None else None)
        return res

    def _batched_apply(self, walk, grads):
        """``_vjp`` on :class:`~retrograd.autograd._batched.Batched` gradients (the batch on
        axis 0), for ``grad(..., is_grads_batched=True)``'s ``walk``."""
        grads = self._vjp(walk.xp, walk.grads(grads, self._out_meta), self._shapes,
                          *self._attrs)
        return [walk.settle(g, s, dt) if g is not None and walk.needed(fn) else None
                for (fn, _), g, s, dt in zip(self.next_functions, grads, self._shapes,
                                             self._dtypes, strict=True)]


def _list_node(name, vjp, jvp):
    """``jvp(xp, tangents, outs, *attrs)``: the outputs' tangents from every input's
    (zeros where an input has none); the ops are linear."""
    return type(name, (_ListNode,), {"__slots__": (), "_vjp": staticmethod(vjp),
                                     "_jvp": staticmethod(jvp)})


def _record_list(node_cls, inputs, out, attrs, view=False):
    """Wrap a list op's output array(s) and, when some input requires grad, its node."""
    multi = isinstance(out, (list, tuple))
    outs = tuple(wrap(o) for o in out) if multi else wrap(out)
    if view:
        _views.mark_view(inputs[0], outs)
    if forward_ad.state.level is not None:
        forward_ad.propagate_list(node_cls, inputs, outs, attrs)
    if not grad_mode.state.enabled:
        return outs
    grad = False
    for v in inputs:
        if v._requires_grad if v._base is None else _views.requires_grad(v):
            grad = True
    if not grad:
        return outs
    node = node_cls()
    node.next_functions = tuple(
        ((v._grad_fn, v._output_nr) if v._grad_fn is not None else (grad_accumulator(v), 0))
        if v._requires_grad else (None, 0) for v in inputs)
    node._attrs = attrs
    node._shapes = tuple(v._data.shape for v in inputs)
    node._dtypes = tuple(v._data.dtype for v in inputs)
    out_list = outs if multi else (outs,)
    node._out_meta = tuple((o._data.shape, o._data.dtype) for o in out_list) if multi else None
    for i, o in enumerate(out_list):
        if is_inexact(o._data.dtype):
            o._grad_fn, o._output_nr, o._requires_grad = node, i, True
    return outs


def _cat_vjp(xp, grads, shapes, dim):
    g = grads[0]
    res, start = [], 0
    for s in shapes:
        if len(s) != g.ndim:  # a legacy empty 1-d input that cat skipped
            res.append(None)
            continue
        res.append(g[(slice(None),) * dim + (slice(start, start + s[dim]),)])
        start += s[dim]
    return res


def _stack_vjp(xp, grads, shapes, dim):
    return [grads[0][(slice(None),) * dim + (i, Ellipsis)] for i in range(len(shapes))]


def _split_jvp(xp, tangents, outs, dim):
    ends = list(itertools.accumulate(o.shape[dim] for o in outs))[:-1]
    return xp.split(tangents[0], ends, axis=dim)


_CatBackward0 = _list_node("CatBackward0", _cat_vjp,
                           lambda xp, ts, outs, dim: xp.concatenate(
                               [t for t in ts if t.ndim == outs[0].ndim], axis=dim))
_StackBackward0 = _list_node("StackBackward0", _stack_vjp,
                             lambda xp, ts, outs, dim: xp.stack(ts, axis=dim))


def _split_vjp(xp, grads, shapes, dim):
    return [functions(xp).concatenate(grads, dim)]


_SplitBackward0 = _list_node("SplitBackward0", _split_vjp, _split_jvp)
_SplitWithSizesBackward0 = _list_node("SplitWithSizesBackward0", _split_vjp, _split_jvp)
_UnbindBackward0 = _list_node("UnbindBackward0",
                              lambda xp, grads, shapes, dim: [xp.stack(grads, axis=dim)],
                              lambda xp, ts, outs, dim: [xp.take(ts[0], i, axis=dim)
                                                         for i in range(len(outs))])


# ---- joining and splitting --------------------------------------------------------------------

def _profiled(name):
    """Show a list op (it bypasses ``apply``) to the engine observer as ``run_call``
    (the profiler records it as ``aten::<name>``); one flag check when none watches."""
    def deco(fn):
        @functools.wraps(fn)
        def op(*args, **kwargs):
            obs = _observe.engine
            if obs is None or not obs.ops:
                return fn(*args, **kwargs)
            return obs.run_call(lambda _name, a, k: fn(*a, **k), name, args, kwargs)
        return op
    return deco


def _tensor_list(tensors, fn):
    if isinstance(tensors, Tensor) or not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{fn}(): argument 'tensors' (position 1) must be tuple of Tensors, "
                        f"not {type(tensors).__name__}")
    for i, x in enumerate(tensors):
        if not isinstance(x, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got "
                            f"{type(x).__name__}")
    return tensors


def _result_dtype(arrays):
    """The promoted dtype of the arrays, or None when they all share one (NumPy's
    ``dtype=`` argument halves the speed of concatenate)."""
    first = arrays[0].dtype
    if all(a.dtype == first for a in arrays):
        return None
    rt = _dtype.from_numpy_dtype(first)
    for a in arrays[1:]:
        rt = _dtype.promote_types(rt, _dtype.from_numpy_dtype(a.dtype))
    return rt.np


def _one_device(tensors):
    """PyTorch's error for tensors on two devices."""
    devices = list(dict.fromkeys(t.device for t in tensors))
    if len(devices) > 1:
        raise RuntimeError(f"Expected all tensors to be on the same device, but found at "
                           f"least two devices, {devices[0]} and {devices[1]}!")


def _legacy_empty(a):
    return a.ndim == 1 and a.shape[0] == 0


@register(aliases=("concat", "concatenate"))
@_profiled("cat")
@_autocast.policy("cat")
def cat(tensors, dim=0, *, out=None):
    """Join tensors along an existing dim (dtypes promote as in PyTorch).

    One NumPy call when the shapes fit; PyTorch's checks (and its skipping of legacy
    empty 1-d tensors) run only when NumPy refuses.
    """
    tensors = _tensor_list(tensors, "cat")
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    arrays = [x._data for x in tensors]
    xp = _views.xp_of(tensors)
    dtype = _result_dtype(arrays)
    try:
        res = (functions(xp).concatenate(arrays, dim) if dtype is None
               else xp.concatenate(arrays, axis=dim, dtype=dtype))
    except (TypeError, ValueError):  # a device array module refuses another device's
        _one_device(tensors)
        used, dim = _cat_checked(arrays, dim)
        res = xp.concatenate(used, axis=dim, dtype=dtype)
    return _record_list(_CatBackward0, tensors, res, (dim % res.ndim,))


def _cat_checked(arrays, dim):
    """The arrays cat joins (legacy empty 1-d ones dropped) and the dim, after PyTorch's
    checks; when every array is a legacy empty one, any dim joins them along 0."""
    for i, a in enumerate(arrays):
        if a.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be "
                               f"concatenated")
    used = [a for a in arrays if not _legacy_empty(a)]
    if not used:
        return arrays, 0
    ref = used[0]
    d = _wrap_dim(dim, ref.ndim)
    for i, a in enumerate(arrays):
        if a.ndim != ref.ndim:
            if _legacy_empty(a):
                continue
            raise RuntimeError(f"Tensors must have same number of dimensions: got {ref.ndim} "
                               f"and {a.ndim}")
        for k in range(ref.ndim):
            if k != d and a.shape[k] != ref.shape[k]:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. "
                                   f"Expected size {ref.shape[k]} but got size {a.shape[k]} "
                                   f"for tensor number {i} in the list.")
    return used, d


concat = concatenate = cat


@register
@_profiled("stack")
@_autocast.policy("stack")
def stack(tensors, dim=0, *, out=None):
    """Join same-shaped tensors along a new dim ``dim``."""
    tensors = _tensor_list(tensors, "stack")
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    shape = tensors[0]._data.shape
    for i, x in enumerate(tensors[1:], 1):
        if x._data.shape != shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got "
                               f"{list(shape)} at entry 0 and {list(x._data.shape)} at entry "
                               f"{i}")
    d = _wrap_dim(dim, len(shape) + 1)
    xp = _views.xp_of(tensors)
    arrays = [x._data for x in tensors]
    res = xp.stack(arrays, axis=d, dtype=_result_dtype(arrays))
    return _record_list(_StackBackward0, tensors, res, (d,))


@register
def hstack(tensors, *, out=None):
    tensors = [x if x._data.ndim else reshape(x, (1,)) for x in _tensor_list(tensors, "hstack")]
    return cat(tensors, 0 if tensors[0]._data.ndim == 1 else 1)


@register
def vstack(tensors, *, out=None):
    tensors = _tensor_list(tensors, "vstack")
    return cat([x if x._data.ndim >= 2 else reshape(x, (1, -1)) for x in tensors], 0)


def _split_views(input, d, sizes, node_cls):
    a = input._data
    pre = (slice(None),) * d
    out, start = [], 0
    for s in sizes:
        out.append(a[pre + (slice(start, start + s),)])
        start += s
    return _record_list(node_cls, (input,), out, (d,), view=True)


def _split_size(input, split_size, dim):
    d = _wrap_dim(dim, input._data.ndim)
    n = input._data.shape[d]
    if split_size < 0:
        raise RuntimeError(f"split expects split_size be non-negative, but got split_size="
                           f"{split_size}")
    if split_size == 0 and n:
        raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension "
                           f"size of {n}")
    count = max(-(-n // split_size), 1) if split_size else 1
    sizes = [split_size] * (count - 1) + [n - split_size * (count - 1)]
    return _split_views(input, d, sizes, _SplitBackward0)


def _split_sizes(input, sizes, dim):
    d = _wrap_dim(dim, input._data.ndim)
    n = input._data.shape[d]
    sizes = list(_ints((sizes,), "split_with_sizes", "split_sizes"))
    if sum(sizes) != n or any(s < 0 for s in sizes):
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} (input "
                           f"tensor's size at dimension {d}), but got split_sizes={sizes}")
    return _split_views(input, d, sizes, _SplitWithSizesBackward0)


@register(method=False)
@_profiled("split")
def split(tensor, split_size_or_sections, dim=0):
    """Views of consecutive pieces: of ``split_size`` each (the last may be smaller), or of
    the given sizes."""
    if isinstance(split_size_or_sections, (list, tuple)):
        return _split_sizes(tensor, split_size_or_sections, dim)
    return _split_size(tensor, operator.index(split_size_or_sections), dim)


@register(function=False, name="split")
@_profiled("split")
def _split_method(self, split_size, dim=0):
    return split(self, split_size, dim)


@register
@_profiled("split_with_sizes")
def split_with_sizes(input, split_sizes, dim=0):
    return _split_sizes(input, split_sizes, dim)


@register
@_profiled("chunk")
def chunk(input, chunks, dim=0):
    """At most ``chunks`` views of equal size (the last may be smaller)."""
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    d = _wrap_dim(dim, input._data.ndim)
    n = input._data.shape[d]
    if n == 0:
        return _split_views(input, d, [0] * chunks, _SplitWithSizesBackward0)
    return _split_size(input, -(-n // chunks), d)


@register
@_profiled("unbind")
def unbind(input, dim=0):
    """Views of the slices along ``dim`` (that dim removed)."""
    a = input._data
    if a.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    d = _wrap_dim(dim, a.ndim)
    pre = (slice(None),) * d
    return _record_list(_UnbindBackward0, (input,),
                        [a[pre + (i, Ellipsis)] for i in range(a.shape[d])], (d,), view=True)


_TENSOR_SPLIT_SIGNATURES = ("Tensor input, tuple of ints indices, int dim = 0",
                            "Tensor input, Tensor tensor_indices_or_sections, int dim = 0",
                            "Tensor input, int sections, int dim = 0")


def _split_points(input, indices_or_sections):
    """The pieces' bounds: the given indices, or those of ``sections`` near-equal pieces
    (the first ``n % sections`` one longer)."""
    ios = indices_or_sections
    if isinstance(ios, Tensor):
        a = ios._data
        if a.dtype != _dtype.int64.np:
            raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to have "
                               f"dtype of long, but got {_pretty(a.dtype)}")
        if a.ndim > 1:
            raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to be a "
                               f"zero-dimensional or one-dimensional tensor, but got a tensor "
                               f"with {a.ndim} dims")
        return None if a.ndim == 0 else [int(i) for i in a], int(a) if a.ndim == 0 else None
    if isinstance(ios, (list, tuple)) and all(_is_index(i) for i in ios):
        return [operator.index(i) for i in ios], None
    if _is_index(ios):
        return None, operator.index(ios)
    raise _invalid("tensor_split", (input, ios), _TENSOR_SPLIT_SIGNATURES)


def _is_index(v):
    return hasattr(v, "__index__") and not isinstance(v, (bool, Tensor))


@register
@_profiled("tensor_split")
def tensor_split(input, indices_or_sections, dim=0):
    """Views of ``input`` cut at the given indices (Python slicing bounds: out-of-range or
    decreasing ones give empty pieces), or into ``sections`` pieces differing by at most
    one in length."""
    indices, sections = _split_points(input, indices_or_sections)
    a = input._data
    if a.ndim == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a "
                           "tensor with 0 dims")
    d = _wrap_dim(dim, a.ndim)
    if indices is None:
        if sections <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {sections}")
        size, extra = divmod(a.shape[d], sections)
        indices = [k * size + min(k, extra) for k in range(1, sections)]
    pre = (slice(None),) * d
    bounds = [0, *indices, None]
    return tuple(apply(_slice, (input,), (pre + (slice(lo, hi),), False))
                 for lo, hi in zip(bounds[:-1], bounds[1:], strict=True))
