"""Indexing: ``x[i]``, ``x[i] = v``, index_*, masks and flat indices (gather/scatter
live in ``scatter``).

``x[index]`` follows PyTorch's order: the basic parts (ints, slices, None,
Ellipsis) make one view whose node is named after the last of them
(``SelectBackward0``, ``SliceBackward0``, ...), then tensor and list parts
index it (``IndexBackward0``, a copy). A read takes one NumPy call unless ints
and tensor parts are mixed (NumPy would count the ints among the advanced
indices and place the result's dims differently). A write with both kinds of
parts goes through the view, so the base's history becomes CopySlices, as in
PyTorch.

Gradients of gathering ops scatter back with the backend's unbuffered add
(``functions(xp).ufunc_at``), so repeated indices accumulate. Scatter-style ops are
written once as ``_*_into(xp, out, ...)`` functions that write into ``out``: the op
runs them on a copy of its input, its gradient's gradient on fresh zeros.
"""

import functools
import math
import numbers
import operator
import warnings

import numpy

from .. import _autocast
from .._dtype import CPP_NAMES, checked_convert, int64, is_float
from .._tensor import Tensor, _wrap_dim, wrap
from ..backend import get_array_module
from ..autograd.node import sum_acc
from ..backend.functions import functions
from ._registry import _pretty, apply, apply_inplace, defop, register
from .comparison import _invalid
from .shape import call

# Selections and copies are exact in any dtype, and PyTorch's accumulating kernels
# (index_put, index_add) add in the tensor's dtype: float16 stays float16.
defop = functools.partial(defop, upcast=False)

__all__ = ["select", "narrow", "index_put", "index_put_", "index_select", "index_add",
           "index_add_", "index_fill", "index_fill_", "index_copy", "index_copy_",
           "masked_fill", "masked_fill_", "masked_select", "masked_scatter", "masked_scatter_",
           "take", "put", "put_", "nonzero", "argwhere"]


# ---- x[index] ---------------------------------------------------------------------------------


def _outside(i, lo, hi):
    """Whether an index of ``i`` lies outside ``[lo, hi)`` (a check on values)."""
    return functions(get_array_module(i)).any_true((i < lo) | (i >= hi))

def _index_put_into(xp, out, values, indices, accumulate):
    if accumulate:
        functions(xp).ufunc_at("add", out, indices, values)
    else:
        out[indices] = values
    return out


def _index_grad(xp, grad, self_shape, index, accumulate):
    return call(xp, _index_backward, grad, attrs=(self_shape, index, accumulate))


def _getitem(name, view, node=None):
    return defop(name, lambda xp, self, index, accumulate: self[index],
                 vjp={"self": _index_grad}, view=view, node=node, jvp="linear")


_select = _getitem("select", True)
_slice = _getitem("slice", True)
_unsqueeze = _getitem("unsqueeze", True)
_alias = _getitem("alias", True)
_index = _getitem("index", False)
_BASIC = {"select": _select, "slice": _slice, "unsqueeze": _unsqueeze, None: _alias}


def _gather_at(xp, grad, index):
    """``grad[index]``, recorded under create_graph with a gradient that accumulates when
    the index may repeat elements."""
    repeats = any(getattr(i, "ndim", 0) and i.dtype.kind in "iu" for i in index)
    return call(xp, _index, grad, attrs=(index, repeats))


_index_backward = defop(
    "index_backward",
    lambda xp, self, size, index, accumulate: _index_put_into(
        xp, xp.zeros(size, dtype=self.dtype), self, index, accumulate),
    vjp={"self": lambda xp, grad, index: _gather_at(xp, grad, index)}, jvp="linear")
# (asarray: in a backward, a 0-d gradient may be a NumPy scalar, which takes no item
# assignment)
_index_put = defop(
    "index_put",
    lambda xp, self, values, indices, accumulate: _index_put_into(
        xp, functions(xp).copy_for_writes(xp.asarray(self), values, indices), values, indices,
        accumulate),
    inputs=("self", "values"),
    vjp={"self": lambda xp, grad, indices, accumulate: grad if accumulate
         else call(xp, _index_put, grad, 0, attrs=(indices, False)),
         "values": lambda xp, grad, indices: _gather_at(xp, grad, indices)}, jvp="linear")


def _index_array(it):
    """A tensor/array/list index as a NumPy array of ints or bools."""
    if isinstance(it, Tensor):
        arr = it._data
    elif isinstance(it, (list, tuple, numpy.ndarray)):
        arr = numpy.asarray(it)
        if arr.size == 0 and is_float(arr.dtype):
            arr = arr.astype(int64.np)
    else:
        raise IndexError(f"only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                         f"Variables are valid indices (got {type(it).__name__})")
    kind = arr.dtype.kind
    if kind == "u":
        warnings.warn("indexing with dtype torch.uint8 is now deprecated, please use a dtype "
                      "torch.bool instead.", UserWarning, stacklevel=4)
        return arr.astype(bool)
    if kind not in "ib":
        raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    return arr


def _check_slice(s):
    if s.step is not None and operator.index(s.step) <= 0:
        if s.step == 0:
            raise ValueError("slice step cannot be zero")
        raise ValueError("step must be greater than zero")
    return s


def _whole(s, n):
    """PyTorch's test for a slice it skips: start 0, step 1, stop at or past the end
    (as written: ``x[-3:]`` of size 3 is still a slice)."""
    return ((s.start is None or operator.index(s.start) == 0) and s.step in (None, 1)
            and (s.stop is None or operator.index(s.stop) >= n))


def _parse(a, index, setting=False):
    """Split a PyTorch index into NumPy ones.

    Returns ``(basic, kind, advanced, accumulate)``: ``basic`` is a NumPy basic index
    (None when there is no basic step), ``kind`` names its node, ``advanced`` the index
    applied to the basic step's result (None when there are no tensor parts), and
    ``accumulate`` whether that index may repeat elements. A full slice is a no-op except
    alone in a read (``x[:]`` records SliceBackward0; ``x[:] = v`` writes into ``x``).
    """
    bare_slice = type(index) is slice and not setting
    items = index if type(index) is tuple else (index,)
    parts = []  # (tag, value, dims consumed)
    for it in items:
        if it is None:
            parts.append(("none", None, 0))
        elif it is Ellipsis:
            parts.append(("ellipsis", Ellipsis, 0))
        elif isinstance(it, (bool, numpy.bool_)):
            parts.append(("mask", numpy.bool_(it), 0))
        elif isinstance(it, (int, numpy.integer)):
            parts.append(("int", int(it), 1))
        elif isinstance(it, slice):
            parts.append(("slice", _check_slice(it), 1))
        else:
            arr = _index_array(it)
            if arr.dtype.kind == "b":
                parts.append(("mask", arr, arr.ndim))
            elif arr.ndim == 0 and not isinstance(it, list) and type(arr) is numpy.ndarray:
                parts.append(("int", int(arr), 1))
            else:
                parts.append(("adv", arr, 1))
    used = sum(p[2] for p in parts)
    tags = [p[0] for p in parts]
    if used > a.ndim:
        if a.ndim == 0:
            raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                             "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")
        raise IndexError(f"too many indices for tensor of dimension {a.ndim}")
    kind, advanced, has_int, accumulate = None, False, False, False
    d = 0
    for tag, v, n in parts:
        if tag == "ellipsis":
            d += a.ndim - used
            continue
        if tag == "int":
            size = a.shape[d]
            if not -size <= v < size:
                raise IndexError(f"index {v} is out of bounds for dimension {d} with size "
                                 f"{size}")
            kind, has_int = "select", True
        elif tag == "slice":
            if bare_slice or not _whole(v, a.shape[d]):
                kind = "slice"
        elif tag == "none":
            kind = "unsqueeze"
        elif tag == "mask":
            advanced = True
            for j in range(n):
                if v.shape[j] != a.shape[d + j]:
                    raise IndexError(f"The shape of the mask {list(v.shape)} at index {j} does "
                                     f"not match the shape of the indexed tensor "
                                     f"{list(a.shape)} at index {d + j}")
        else:
            advanced = accumulate = True
        d += n
    full = tuple(p[1] for p in parts)
    if not advanced:  # a trailing Ellipsis makes NumPy return a 0-d view, not a scalar
        return (full if "ellipsis" in tags else full + (Ellipsis,)), kind, None, False
    # With tensor parts, spell the Ellipsis out: NumPy counts tensor parts on either side
    # of an Ellipsis as apart even when it spans no dims; PyTorch expands it first.
    span = (slice(None),) * (a.ndim - used)
    if kind is None or not has_int and not setting:  # one NumPy call does both steps
        return None, None, _spelled(parts, span), accumulate
    basic, adv = [], []
    for tag, v, n in parts:
        if tag in ("mask", "adv"):
            basic += [slice(None)] * n
            adv.append(v)
        elif tag == "int":
            basic.append(v)
        elif tag == "ellipsis":
            basic.append(v)
            adv += span
        else:
            basic.append(v)
            adv.append(slice(None))
    if "ellipsis" not in tags:
        basic.append(Ellipsis)
    return tuple(basic), kind, tuple(adv), accumulate


def _spelled(parts, span):
    out = []
    for tag, v, _ in parts:
        if tag == "ellipsis":
            out += span
        else:
            out.append(v)
    return tuple(out)


def _numpy_errors(fn, *args):
    """Run an indexing call, with NumPy's out-of-bounds message worded as PyTorch's."""
    try:
        return fn(*args)
    except IndexError as e:
        raise IndexError(str(e).replace("for axis", "for dimension")) from None


@register(function=False, name="__getitem__")
def getitem(self, index):
    """``self[index]``: ints, slices, None, Ellipsis, bool masks and integer tensors/lists.

    >>> retrograd.arange(6).reshape(2, 3)[:, [0, 0, 2]]
    tensor([[0, 0, 2],
            [3, 3, 5]])
    """
    t = type(index)
    if t is int:
        a = self._data
        if a.ndim and -a.shape[0] <= index < a.shape[0]:
            return apply(_select, (self,), ((index, Ellipsis), False))
    elif t is slice and index.step is None:
        return apply(_slice, (self,), ((index,), False))
    basic, kind, adv, accumulate = _parse(self._data, index)
    out = self
    if basic is not None:
        out = apply(_BASIC[kind], (self,), (basic, False))
    if adv is not None:
        out = _numpy_errors(apply, _index, (out,), (adv, accumulate))
    return out


def _drop_leading_ones(value):
    """PyTorch ignores leading size-1 dims of an assigned value (``x[0] = v[None]``)."""
    shape = value._data.shape
    k = 0
    while k < len(shape) and shape[k] == 1:
        k += 1
    return value.reshape(shape[k:]) if k else value


def _indexed_shape(a, index):
    xp = get_array_module(a)
    return xp.broadcast_to(xp.zeros((), a.dtype), a.shape)[index].shape


@register(function=False, name="__setitem__")
def setitem(self, index, value):
    """``self[index] = value`` in place: a number, or a tensor broadcast to the indexed shape.

    Basic indices write through a view (the base's history becomes CopySlices); tensor
    indices record IndexPutBackward0.
    """
    basic, kind, adv, accumulate = _parse(self._data, index, setting=True)
    target = self if kind is None else apply(_BASIC[kind], (self,), (basic, False))
    if not isinstance(value, Tensor):  # as PyTorch: a 0-d tensor of self's dtype
        value = wrap(numpy.asarray(value, dtype=self._data.dtype))
    elif value._data.ndim > target._data.ndim:
        value = _drop_leading_ones(value)
    if adv is None:  # PyTorch's copy_to
        if value._data.shape == target._data.shape:
            target.copy_(value)
        elif value._data.ndim == 0:
            target.fill_(value)
        else:
            target.copy_(value.expand(target.shape))
        return
    if value._data.dtype != self._data.dtype:
        # PyTorch's index_put_ wants equal dtypes, except one value under one bool mask
        if not (len(adv) == 1 and adv[0].dtype.kind == "b" and value._data.size == 1):
            _index_put_args(self, value)
        value = value.to(self.dtype)
    try:
        _numpy_errors(apply_inplace, _index_put, target, (value,), (adv, False))
    except (RuntimeError, ValueError):
        vshape, shape = value._data.shape, _indexed_shape(target._data, adv)
        try:
            fits = numpy.broadcast_shapes(vshape, shape) == shape
        except ValueError:
            fits = False
        if fits:
            raise
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(vshape)} cannot be "
                           f"broadcast to indexing result of shape {list(shape)}") from None


def _indices(indices):
    """``index_put``'s tuple of index tensors (None for a whole dim) as a NumPy index."""
    return tuple(slice(None) if i is None else _index_array(i) for i in indices)


def _index_put_args(self, values):
    if not isinstance(values, Tensor):
        raise TypeError(f"index_put(): argument 'values' (position 2) must be Tensor, not "
                        f"{type(values).__name__}")
    if values._data.dtype != self._data.dtype:
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                           f"{_pretty(self._data.dtype)} for the destination and "
                           f"{_pretty(values._data.dtype)} for the source.")


@register
def index_put(input, indices, values, accumulate=False):
    """A copy with ``input[indices] = values`` (``+=`` with ``accumulate``, repeats adding)."""
    _index_put_args(input, values)
    return _numpy_errors(apply, _index_put, (input, values), (_indices(indices), accumulate))


@register
def index_put_(input, indices, values, accumulate=False):
    _index_put_args(input, values)
    return _numpy_errors(apply_inplace, _index_put, input, (values,),
                         (_indices(indices), accumulate))


def select_at(input, dim, index):
    """``select``'s basic index of ``input[..., index, ...]`` (``index`` at dim ``dim``),
    with PyTorch's checks."""
    a = input._data
    d = _wrap_dim(dim, a.ndim)
    index = operator.index(index)
    if not -a.shape[d] <= index < a.shape[d]:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{list(a.shape)} at dimension {d}")
    return (slice(None),) * d + (index,)


@register
def select(input, dim, index):
    """The view ``input[..., index, ...]`` with ``index`` at dim ``dim``."""
    return apply(_select, (input,), (select_at(input, dim, index) + (Ellipsis,), False))


@register
def narrow(input, dim, start, length):
    """The view of ``length`` elements from ``start`` along ``dim``."""
    a = input._data
    d = _wrap_dim(dim, a.ndim)
    start, length, n = operator.index(start), operator.index(length), a.shape[d]
    if not -n <= start <= n:
        raise IndexError(f"start out of range (expected to be in range of [{-n}, {n}], but got "
                         f"{start})")
    if start < 0:
        start += n
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    if start + length > n:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({n}).")
    return apply(_slice, (input,), ((slice(None),) * d + (slice(start, start + length),), False))


# ---- index_* ----------------------------------------------------------------------------------

def _index_add_into(xp, out, index, source, dim):
    functions(xp).ufunc_at("add", out, (slice(None),) * dim + (index,), source)
    return out


def _index_select_grad(xp, grad, index, self_shape, dim):
    return call(xp, _index_select_backward, grad, index, attrs=(self_shape, dim))


def _select_grad(xp, grad, index, dim):
    return call(xp, _index_select, grad, index, attrs=(dim,))


def _fill_grad(xp, grad, index, dim):
    return call(xp, _index_fill, grad, index, attrs=(dim, 0))


_index_select = defop("index_select", lambda xp, self, index, dim:
                      xp.take(self, index, dim) if self.ndim else self.copy(),
                      inputs=("self", "index"), vjp={"self": _index_select_grad}, jvp="linear")
_index_select_backward = defop(
    "index_select_backward",
    lambda xp, self, index, size, dim: _index_add_into(xp, xp.zeros(size, dtype=self.dtype),
                                                       index, self, dim)
    if size else self.copy(),
    inputs=("self", "index"), vjp={"self": _select_grad}, jvp="linear")
_index_add = defop(
    "index_add",
    lambda xp, self, index, source, dim, alpha: _index_add_into(
        xp, functions(xp).copy_for_writes(self, index, source), index,
        source if alpha == 1 else source * alpha, dim),
    inputs=("self", "index", "source"),
    vjp={"self": lambda grad: grad,
         "source": lambda xp, grad, index, dim, alpha: _select_grad(xp, grad, index, dim)
         if alpha == 1 else _select_grad(xp, grad, index, dim) * alpha}, jvp="linear")


def _index_fill_forward(xp, self, index, dim, value):
    out = functions(xp).copy_for_writes(self, index, value)
    out[(slice(None),) * dim + (index,)] = value
    return out


_index_fill = defop("index_fill", _index_fill_forward, inputs=("self", "index"),
                    vjp={"self": _fill_grad}, jvp="elementwise")
_index_fill_tensor = defop(
    "index_fill_tensor", lambda xp, self, index, value, dim: _index_fill_forward(
        xp, self, index, dim, value),
    inputs=("self", "index", "value"),
    vjp={"self": _fill_grad,
         "value": lambda xp, grad, index, dim: sum_acc(xp, _select_grad(xp, grad, index, dim))},
    node="IndexFillBackward1", jvp="linear")
_index_copy = defop(
    "index_copy", lambda xp, self, index, source, dim: _index_fill_forward(
        xp, self, index, dim, source),
    inputs=("self", "index", "source"),
    vjp={"self": _fill_grad, "source": _select_grad}, jvp="linear")


def _vector_index(input, dim, index, fn, check_range=True):
    """PyTorch's checks of an index_* op's 1-d index; returns (dim, index as 1-d)."""
    if not isinstance(index, Tensor):
        raise TypeError(f"{fn}(): argument 'index' must be Tensor, not {type(index).__name__}")
    i = index._data
    if i.dtype.kind != "i":
        raise RuntimeError(f"{fn}(): Expected dtype int32 or int64 for index")
    if i.ndim > 1:
        raise IndexError(f"{fn}(): Index is supposed to be a vector")
    d = _wrap_dim(dim, input._data.ndim)
    n = input._data.shape[d] if input._data.ndim else 1
    if check_range and i.size and _outside(i, 0, n):
        raise IndexError("index out of range in self")
    return d, index.reshape(-1) if i.ndim == 0 else index


@register
def index_select(input, dim, index, *, out=None):
    """The slices ``index`` names along ``dim`` (repeats allowed).

    Bad indices into a tensor of 2+ dims get the RuntimeErrors of PyTorch's CPU kernel
    where it takes its empty-input or dim-1 path; elsewhere IndexError."""
    d, index = _vector_index(input, dim, index, "index_select", check_range=False)
    a, i = input._data, index._data
    if a.ndim == 0 and i.size != 1:  # its one element, once
        raise RuntimeError(f"index_select(): Index to scalar can have only 1 value, got "
                           f"{i.size} value(s)")
    n = a.shape[d] if a.ndim else 1
    kernel_check = a.ndim > 1 and (a.size == 0 or d == 1)
    if kernel_check and i.size and n == 0:
        raise RuntimeError("index_select(): self indexing axis dim should be positive")
    outside = (i < 0) | (i >= n)
    if functions(get_array_module(i)).any_true(outside):
        if kernel_check:
            first = i.reshape(-1)[get_array_module(i).flatnonzero(outside)[0]]
            raise RuntimeError(f"INDICES element is out of DATA bounds, id={int(first)} "
                               f"axis_dim={n}")
        raise IndexError("index out of range in self")
    return apply(_index_select, (input, index), (d,))


def _index_source(self, dim, index, source, fn):
    d, index = _vector_index(self, dim, index, fn)
    if source._data.dtype != self._data.dtype:
        raise RuntimeError(f"{fn}(): self ({_pretty(self._data.dtype)}) and source "
                           f"({_pretty(source._data.dtype)}) must have the same scalar type")
    a, s = self._data, source._data
    if s.ndim != a.ndim or any(s.shape[k] != a.shape[k] for k in range(a.ndim) if k != d):
        raise RuntimeError(f"source tensor shape must match self tensor shape, excluding the "
                           f"specified dimension. Got self.shape = {list(a.shape)} "
                           f"source.shape = {list(s.shape)}")
    if a.ndim and s.shape[d] != index._data.size:
        raise RuntimeError(f"{fn}(): Number of indices ({index._data.size}) should be equal "
                           f"to source.size(dim): ({s.shape[d]}), for dim: {d}")
    return d, index


@register
def index_add(input, dim, index, source, *, alpha=1):
    """A copy with ``alpha * source`` added to the slices ``index`` names (repeats add up)."""
    d, index = _index_source(input, dim, index, source, "index_add_")
    return apply(_index_add, (input, index, source), (d, alpha))


@register(function=False)
def index_add_(self, dim, index, source, *, alpha=1):
    d, index = _index_source(self, dim, index, source, "index_add_")
    return apply_inplace(_index_add, self, (index, source), (d, alpha))


def _index_fill_args(self, dim, index, value):
    d, index = _vector_index(self, dim, index, "index_fill_", check_range=False)
    n = self._data.shape[d] if self._data.ndim else 1
    i = index._data
    if i.size and _outside(i, -n, n):
        bad = int(i.min()) if int(i.min()) < -n else int(i.max())
        raise IndexError(f"index {bad} is out of bounds for dimension {d} with size {n}")
    if isinstance(value, Tensor):
        if value._data.ndim:
            raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but "
                               f"got tensor with {value._data.ndim} dimension(s).")
        return _index_fill_tensor, (index, value), (d,)
    if not isinstance(value, numbers.Number):
        raise _invalid("index_fill_", (dim, index, value),
                       ("int dim, Tensor index, Tensor value",
                        "int dim, Tensor index, Number value"))
    return _index_fill, (index,), (d, checked_convert(value, self._data.dtype))


@register
def index_fill(input, dim, index, value):
    """A copy with the slices ``index`` names set to ``value`` (a number or 0-d tensor)."""
    op, values, attrs = _index_fill_args(input, dim, index, value)
    return apply(op, (input, *values), attrs)


@register(function=False)
def index_fill_(self, dim, index, value):
    op, values, attrs = _index_fill_args(self, dim, index, value)
    return apply_inplace(op, self, values, attrs)


def _index_copy_args(self, dim, index, source):
    d, index = _vector_index(self, dim, index, "index_copy_", check_range=False)
    n = self._data.shape[d] if self._data.ndim else 1
    i = index._data
    if i.size and _outside(i, 0, n):
        bad = int(i.min()) if int(i.min()) < 0 else int(i.max())
        raise IndexError(f"index_copy_(): index {bad} is out of bounds for dimension {d} with "
                         f"size {n}")
    if self._data.ndim and source._data.ndim and source._data.shape[d] != i.size:
        raise RuntimeError(f"index_copy_(): Number of indices ({i.size}) should be equal to "
                           f"source.size(dim) ({source._data.shape[d]})")
    return d, index


@register
@_autocast.policy("index_copy")
def index_copy(input, dim, index, source):
    """A copy with the slices ``index`` names replaced by those of ``source``."""
    d, index = _index_copy_args(input, dim, index, source)
    return apply(_index_copy, (input, index, source), (d,))


@register(function=False)
def index_copy_(self, dim, index, source):
    d, index = _index_copy_args(self, dim, index, source)
    return apply_inplace(_index_copy, self, (index, source), (d,))


# ---- masks ------------------------------------------------------------------------------------

def _masked_fill_forward(xp, self, mask, value):
    return xp.where(mask, xp.asarray(value, dtype=self.dtype), self)


def _masked_select_forward(xp, self, mask):
    shape = numpy.broadcast_shapes(self.shape, mask.shape)
    return xp.broadcast_to(self, shape)[xp.broadcast_to(mask, shape)]


def _masked_scatter_into(xp, out, mask, source):
    m = xp.broadcast_to(mask, out.shape)
    out[m] = source.reshape(-1)[:int(m.sum())]
    return out


def _masked_scatter_forward(xp, self, mask, source):
    """The k-th True element of the mask takes ``source``'s k-th: gathered by the running
    count of True elements, so no step needs to know that count (meta has none)."""
    shape = numpy.broadcast_shapes(self.shape, mask.shape)
    m = xp.reshape(xp.broadcast_to(mask, shape), (-1,))
    if functions(xp).any_true(xp.sum(m) > source.size):
        raise RuntimeError("Number of elements of source < number of ones in mask")
    out = xp.broadcast_to(self, shape)
    if not source.size:  # (then no element is True)
        return out.copy()
    taken = xp.take(xp.reshape(source, (-1,)), xp.maximum(xp.cumsum(m) - 1, 0))
    return xp.where(xp.reshape(m, shape), xp.reshape(taken, shape).astype(self.dtype), out)


def _source_grad_forward(xp, self, mask, size):
    """The gradient of masked_scatter's source: the masked elements in order, then zeros
    (the k-th lies where the running count of True elements first reaches k)."""
    n = math.prod(size)
    flat = xp.reshape(self, (-1,))
    if not n or not flat.size:
        return xp.zeros(size, dtype=self.dtype)
    count = xp.cumsum(xp.reshape(xp.broadcast_to(mask, self.shape), (-1,)))
    at = xp.searchsorted(count, xp.arange(1, n + 1))  # flat.size: fewer than k are True
    picked = xp.take(flat, xp.minimum(at, flat.size - 1))
    return xp.reshape(xp.where(at < flat.size, picked, 0).astype(self.dtype), size)


_masked_fill = defop("masked_fill", _masked_fill_forward, inputs=("self", "mask"),
                     vjp={"self": lambda xp, grad, mask: xp.where(mask, 0, grad)},
                     jvp="elementwise")
_masked_fill_tensor = defop(
    "masked_fill_tensor", _masked_fill_forward, inputs=("self", "mask", "value"),
    vjp={"self": lambda xp, grad, mask: xp.where(mask, 0, grad),
         "value": lambda xp, grad, mask: sum_acc(xp, xp.where(mask, grad, 0))},
    node="MaskedFillBackward1", jvp="linear")
_masked_select = defop(
    "masked_select", _masked_select_forward, inputs=("self", "mask"),
    vjp={"self": lambda xp, grad, self_shape, mask_shape, mask: call(
        xp, _masked_scatter_zeros, grad, mask,
        attrs=(numpy.broadcast_shapes(self_shape, mask_shape),))}, jvp="linear")
_masked_scatter_zeros = defop(
    "masked_scatter_zeros",
    lambda xp, self, mask, size: _masked_scatter_into(xp, xp.zeros(size, dtype=self.dtype),
                                                      mask, self),
    inputs=("self", "mask"),
    vjp={"self": lambda xp, grad, mask: call(xp, _masked_select, grad, mask)}, jvp="linear")
_masked_scatter = defop(
    "masked_scatter", _masked_scatter_forward, inputs=("self", "mask", "source"),
    vjp={"self": lambda xp, grad, mask: xp.where(mask, 0, grad),
         "source": lambda xp, grad, mask, source_shape: call(xp, _source_grad, grad, mask,
                                                             attrs=(source_shape,))}, jvp="linear")
_source_grad = defop(
    "masked_scatter_backward", _source_grad_forward, inputs=("self", "mask"),
    vjp={"self": lambda xp, grad, mask, self_shape: call(
        xp, _masked_scatter_zeros, grad, mask, attrs=(self_shape,))}, jvp="linear")


def _check_mask(mask, fn):
    if not isinstance(mask, Tensor):
        raise TypeError(f"{fn}(): argument 'mask' (position 1) must be Tensor, not "
                        f"{type(mask).__name__}")
    dt = mask._data.dtype
    if dt.kind != "b":
        if fn == "masked_select":
            raise RuntimeError("masked_select: expected BoolTensor for mask")
        raise RuntimeError(f"{fn} only supports boolean masks, but got mask with dtype "
                           f"{CPP_NAMES[dt.name]}")


def _masked_fill_args(input, mask, value):
    _check_mask(mask, "masked_fill_")
    if isinstance(value, Tensor):
        if value._data.ndim:
            raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but "
                               f"got tensor with {value._data.ndim} dimension(s).")
        for v in functions(get_array_module(value._data)).checked_values(value._data):
            checked_convert(v, input._data.dtype)
        return _masked_fill_tensor, (mask, value), ()
    return _masked_fill, (mask,), (checked_convert(value, input._data.dtype),)


@register
def masked_fill(input, mask, value):
    """A copy with ``value`` (a number or 0-d tensor) where ``mask`` (broadcast) is True."""
    op, values, attrs = _masked_fill_args(input, mask, value)
    return apply(op, (input, *values), attrs)


@register(function=False)
def masked_fill_(self, mask, value):
    op, values, attrs = _masked_fill_args(self, mask, value)
    return apply_inplace(op, self, values, attrs)


@register
def masked_select(input, mask, *, out=None):
    """The elements where ``mask`` is True, as a 1-d tensor (both broadcast first)."""
    _check_mask(mask, "masked_select")
    return apply(_masked_select, (input, mask))


@register
def masked_scatter(input, mask, source):
    """A copy with the True positions of ``mask`` filled by consecutive ``source`` elements."""
    _check_mask(mask, "masked_scatter_")
    return apply(_masked_scatter, (input, mask, source))


@register(function=False)
def masked_scatter_(self, mask, source):
    _check_mask(mask, "masked_scatter_")
    return apply_inplace(_masked_scatter, self, (mask, source))


# ---- flat indices -----------------------------------------------------------------------------

def _put_into(xp, out, index, source, accumulate):
    flat = out.reshape(-1)
    if not isinstance(source, (int, float)):  # (a number: put_'s gradient zeroes with 0)
        source = xp.reshape(source, -1)
    if accumulate:
        functions(xp).ufunc_at("add", flat, index.reshape(-1), source)
    else:
        flat[index.reshape(-1)] = source
    return out


_take = defop("take", lambda xp, self, index: xp.take(self, index), inputs=("self", "index"),
              vjp={"self": lambda xp, grad, index, self_shape: call(
                  xp, _take_backward, grad, index, attrs=(self_shape,))}, jvp="linear")
_take_backward = defop(
    "take_backward",
    lambda xp, self, index, size: _put_into(xp, xp.zeros(size, dtype=self.dtype), index, self,
                                            True),
    inputs=("self", "index"),
    vjp={"self": lambda xp, grad, index: call(xp, _take, grad, index)}, jvp="linear")
_put = defop(
    "put",
    lambda xp, self, index, source, accumulate: _put_into(
        xp, functions(xp).copy_for_writes(self, index, source), index, source, accumulate),
    inputs=("self", "index", "source"),
    vjp={"self": lambda xp, grad, index, accumulate: grad if accumulate
         else call(xp, _put, grad, index, 0, attrs=(False,)),
         "source": lambda xp, grad, index, source_shape: xp.reshape(
             call(xp, _take, grad, index), source_shape)}, jvp="linear")


def _flat_index(input, index, fn):
    if not isinstance(index, Tensor):
        raise TypeError(f"{fn}(): argument 'index' must be Tensor, not {type(index).__name__}")
    i = index._data
    if i.dtype != int64.np:
        raise RuntimeError(f"{fn}(): Expected a long tensor for index, but got "
                           f"{_pretty(i.dtype)}")
    n = input._data.size
    if i.size and _outside(i, -n, n):
        lo, hi = int(i.min()), int(i.max())
        if lo < -n or hi >= n:
            raise IndexError(f"out of range: tried to access index {lo if lo < -n else hi} on "
                             f"a tensor of {n} elements.")


@register
def take(input, index):
    """Elements of the flattened ``input`` at ``index`` (negative counts from the end)."""
    _flat_index(input, index, "take")
    return apply(_take, (input, index))


@register
def put(input, index, source, accumulate=False):
    """A copy with flat positions ``index`` set to (or, with ``accumulate``, increased by)
    the elements of ``source``."""
    _flat_index(input, index, "put_")
    return apply(_put, (input, index, source), (accumulate,))


@register(function=False)
def put_(self, index, source, accumulate=False):
    _flat_index(self, index, "put_")
    return apply_inplace(_put, self, (index, source), (accumulate,))


@register
def nonzero(input, *, as_tuple=False, out=None):
    """Indices of the nonzero elements: an (n, ndim) tensor, or one 1-d tensor per dim."""
    a = input._data
    xp = get_array_module(a)
    if not as_tuple:
        return wrap(xp.argwhere(a))
    return tuple(wrap(i) for i in xp.nonzero(a.reshape(1) if a.ndim == 0 else a))


@register
def argwhere(input):
    return wrap(get_array_module(input._data).argwhere(input._data))
