"""Shape and view ops (joining and splitting live in ``joining``).

View ops (``view=True``) return NumPy views that share memory and the version
counter with their input, so in-place writes through them reach the base and
are seen by autograd (``_views``). Ops that PyTorch does not define as views
(flip, roll, repeat, tril, ...) always return fresh arrays, never a NumPy view.

"""

import functools
import math
import operator

import numpy

from .. import _dtype
from .._memory_format import (axes_order, check_memory_format, contiguous_format,
                              is_laid_out, preserve_format)
from .._tensor import Size, _wrap_dim, wrap
from ..backend import cpu_kernels, get_array_module
from ..backend.functions import functions
from . import _views
from ._views import _as_strided_backward
from ..autograd.node import sum_acc
from ._registry import (_broadcast_error, _pretty, apply, apply_inplace, defop, kernel,
                        register)
from .._dtype import legacy_type_name

# Views, copies and rearrangements are exact in any dtype, and PyTorch's backward
# kernels here (unfold, as_strided) add in the tensor's dtype: float16 stays float16.
defop = functools.partial(defop, upcast=False)

__all__ = ["reshape", "view", "view_as", "reshape_as", "flatten", "unflatten", "squeeze",
           "unsqueeze", "permute", "transpose", "swapaxes", "swapdims", "t", "movedim",
           "moveaxis", "expand", "expand_as", "broadcast_to", "broadcast_tensors",
           "broadcast_shapes", "repeat", "tile", "flip", "fliplr", "flipud", "roll",
           "diagonal", "diag", "diag_embed", "tril", "triu", "contiguous", "clone",
           "as_strided", "unfold", "detach", "ravel", "adjoint"]


def call(xp, op, *values, attrs=()):
    """Run ``op`` from inside a vjp rule: recorded (``apply``) when the rule runs on
    Tensors under ``create_graph``, else its forward straight on the arrays."""
    return functions(xp).call(op, values, attrs)


# ---- argument parsing -----------------------------------------------------------------------

def _ints(args, fn, arg="size"):
    """``f(2, 3)`` and ``f((2, 3))`` (or a Size/list) alike, as a tuple of ints."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = args[0]
    try:
        return tuple(operator.index(a) for a in args)
    except TypeError:
        pos, bad = next((i, a) for i, a in enumerate(args) if not _is_int(a))
        raise TypeError(f"{fn}(): argument '{arg}' must be tuple of ints, but found element "
                        f"of type {type(bad).__name__} at pos {pos}") from None


def _is_int(a):
    try:
        operator.index(a)
    except TypeError:
        return False
    return True


def _dims(dims, ndim):
    """Wrapped dims of an int or a sequence of ints."""
    if isinstance(dims, (tuple, list)):
        return tuple(_wrap_dim(operator.index(d), ndim) for d in dims)
    return (_wrap_dim(operator.index(dims), ndim),)


def _infer(shape, numel):
    """``shape`` with its -1 filled in; PyTorch's errors for impossible shapes."""
    neg, prod = None, 1
    for i, s in enumerate(shape):
        if s == -1:
            if neg is not None:
                raise RuntimeError("only one dimension can be inferred")
            neg = i
        elif s < 0:
            raise RuntimeError(f"invalid shape dimension {s}")
        else:
            prod *= s
    if neg is None:
        if prod == numel:
            return shape
    elif prod == 0:
        raise RuntimeError(f"cannot reshape tensor of 0 elements into shape {list(shape)} "
                           "because the unspecified dimension size -1 can be any value and is "
                           "ambiguous")
    elif numel % prod == 0:
        return shape[:neg] + (numel // prod,) + shape[neg + 1:]
    raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")


# ---- view ops ---------------------------------------------------------------------------------

def _reshape_grad(xp, grad, self_shape):
    return xp.reshape(grad, self_shape)


_SHAPE_ONLY = {"self": _reshape_grad}

_view = defop("view", lambda xp, self, size: xp.reshape(self, size, copy=False),
              vjp=_SHAPE_ONLY, view=True, jvp="linear")
_reshape_alias = defop("_reshape_alias",
                       lambda xp, self, size: xp.reshape(self, size, copy=False),
                       vjp=_SHAPE_ONLY, view=True, jvp="linear")
_unsafe_view = defop("_unsafe_view", lambda xp, self, size: xp.reshape(self, size),
                     vjp=_SHAPE_ONLY, jvp="linear")
_squeeze_all = defop("squeeze", lambda xp, self, dim: xp.squeeze(self, dim), vjp=_SHAPE_ONLY,
                     view=True, jvp="linear")
_squeeze_dim = defop("squeeze", lambda xp, self, dim: xp.squeeze(self, dim), vjp=_SHAPE_ONLY,
                     view=True, node="SqueezeBackward1", jvp="linear")
_squeeze_dims = defop("squeeze", lambda xp, self, dim: xp.squeeze(self, dim), vjp=_SHAPE_ONLY,
                      view=True, node="SqueezeBackward2", jvp="linear")
_unsqueeze = defop("unsqueeze",
                   lambda xp, self, dim: xp.reshape(self, self.shape[:dim] + (1,)
                                                    + self.shape[dim:]),
                   vjp=_SHAPE_ONLY, view=True, jvp="linear")
_permute = defop("permute", lambda xp, self, dims: xp.transpose(self, dims),
                 vjp={"self": lambda xp, grad, dims:
                      xp.transpose(grad, tuple(sorted(range(len(dims)), key=dims.__getitem__)))},
                 view=True, jvp="linear")
# (transpose and t by the arrays' swapaxes method, which every array namespace has:
# numpy.swapaxes and numpy.transpose call through Python wrappers, which in a training step
# run cold, after a large pass: a linear layer's w.t() and its TBackward0)
_transpose = defop("transpose",
                   lambda xp, self, dim0, dim1: self.swapaxes(dim0, dim1) if self.ndim
                   else self[...],
                   vjp={"self": lambda xp, grad, dim0, dim1: grad.swapaxes(dim0, dim1)
                        if grad.ndim else grad},
                   view=True, jvp="linear")


def _transposed(xp, a):
    """A matrix transposed, a vector or a number as it is (a view)."""
    return a.swapaxes(0, 1) if a.ndim == 2 else xp.transpose(a)


_t = defop("t", lambda xp, self: _transposed(xp, self),
           vjp={"self": lambda xp, grad: _transposed(xp, grad)}, view=True, node="TBackward0",
           jvp="linear")


def _expand_forward(xp, self, size):
    """A writable view with stride 0 along the expanded dims, as PyTorch's (in-place writes
    into one are refused by ``apply_inplace``)."""
    lead = len(size) - self.ndim
    strides = (0,) * lead + tuple(0 if n == 1 and m != 1 else s for n, m, s in
                                  zip(self.shape, size[lead:], self.strides, strict=True))
    return xp.lib.stride_tricks.as_strided(self, size, strides)


_expand = defop("expand", _expand_forward, vjp={"self": lambda grad: grad}, view=True, jvp="linear")


def _diagonal_view(xp, a, offset, dim1, dim2):
    """A writable view of a diagonal (NumPy's ``diagonal`` is read-only)."""
    n1, n2 = a.shape[dim1], a.shape[dim2]
    if offset >= 0:
        length = max(min(n1, n2 - offset), 0)
        start = a[(slice(None),) * dim2 + (slice(min(offset, n2), None),)]
    else:
        length = max(min(n1 + offset, n2), 0)
        start = a[(slice(None),) * dim1 + (slice(min(-offset, n1), None),)]
    rest = [d for d in range(a.ndim) if d != dim1 and d != dim2]
    s = a.strides
    return xp.lib.stride_tricks.as_strided(
        start, tuple(a.shape[d] for d in rest) + (length,),
        tuple(s[d] for d in rest) + (s[dim1] + s[dim2],))


def _embed_diagonal(xp, self, size, offset, dim1, dim2):
    """Zeros of ``size`` with ``self`` on a diagonal: diag_embed, and diagonal's gradient."""
    out = xp.zeros(size, dtype=self.dtype)
    _diagonal_view(xp, out, offset, dim1, dim2)[...] = self
    return out


_DIAGONAL_OF_GRAD = {"self": lambda xp, grad, offset, dim1, dim2:
                     xp.diagonal(grad, offset, dim1, dim2)}
_diagonal_backward = defop("diagonal_backward", _embed_diagonal, vjp=_DIAGONAL_OF_GRAD,
                           jvp="linear")
_diag_embed_nd = defop("diag_embed", _embed_diagonal, vjp=_DIAGONAL_OF_GRAD, jvp="linear")
_diagonal = defop("diagonal", lambda xp, self, offset, dim1, dim2:
                  _diagonal_view(xp, self, offset, dim1, dim2),
                  vjp={"self": lambda xp, grad, self_shape, offset, dim1, dim2:
                       call(xp, _diagonal_backward, grad,
                            attrs=(self_shape, offset, dim1, dim2))},
                  view=True, jvp="linear")


# ---- copying shape ops ------------------------------------------------------------------------

def _repeat_grad(xp, grad, self_shape, repeats):
    """Sum the tiles: split every dim into (repeat, size) and sum the repeat axes."""
    padded = (1,) * (len(repeats) - len(self_shape)) + tuple(self_shape)
    split = [n for pair in zip(repeats, padded, strict=True) for n in pair]
    g = sum_acc(xp, xp.reshape(grad, split), axis=tuple(range(0, len(split), 2)))
    return xp.reshape(g, self_shape)


_repeat = defop("repeat", lambda xp, self, repeats: xp.tile(self, repeats),
                vjp={"self": _repeat_grad}, jvp="linear")
_flip = defop("flip", lambda xp, self, dims: xp.flip(self, dims).copy(),
              vjp={"self": lambda xp, grad, dims: xp.flip(grad, dims)}, jvp="linear")
_roll = defop("roll", lambda xp, self, shifts, dims: xp.roll(self, shifts, dims),
              vjp={"self": lambda xp, grad, shifts, dims:
                   xp.roll(grad, tuple(-s for s in shifts), dims)}, jvp="linear")
_tril = defop("tril", lambda xp, self, diagonal: xp.tril(self, diagonal),
              vjp={"self": lambda xp, grad, diagonal: xp.tril(grad, diagonal)}, jvp="linear")
_triu = defop("triu", lambda xp, self, diagonal: xp.triu(self, diagonal),
              vjp={"self": lambda xp, grad, diagonal: xp.triu(grad, diagonal)}, jvp="linear")
_diag_embed = defop("diag", lambda xp, self, diagonal: xp.diag(self, diagonal),
                    vjp={"self": lambda xp, grad, diagonal: xp.diagonal(grad, diagonal)},
                    node="DiagEmbedBackward0", jvp="linear")
_diag_copy = defop("diag", lambda xp, self, diagonal: xp.diagonal(self, diagonal).copy(),
                   vjp={"self": lambda xp, grad, self_shape, diagonal:
                        call(xp, _diagonal_backward, grad, attrs=(self_shape, diagonal, 0, 1))},
                   node="DiagonalBackward0_copy", jvp="linear")
_clone = defop("clone", lambda xp, self: xp.copy(self), vjp={"self": lambda grad: grad},
               jvp="linear")
# A transposed float32 copy in 8x8 blocks in vector registers (NumPy's goes element by
# element: a 1024x1024 transpose 3.2-3.5 ms, the blocks 0.35; PyTorch's 0.7), in parts on
# OpenBLAS's threads (cpu_kernels.copy_into).
_contiguous = defop("contiguous", kernel(lambda xp, self: xp.ascontiguousarray(self),
                                         lambda xp, self: cpu_kernels.contiguous(self),
                                         cpu_kernels.copies),
                    vjp={"self": lambda grad: grad}, node="CloneBackward0", jvp="linear")


def laid_out(xp, self, axes):
    """A copy of ``self`` whose elements lie in the order ``axes`` (same shape, permuted
    strides: channels_last)."""
    return _in_order(xp, self, axes, xp.ascontiguousarray)


def _in_order(xp, self, axes, copy):
    """:func:`laid_out`, with ``copy`` making the permuted view row-major."""
    back = sorted(range(len(axes)), key=axes.__getitem__)
    return xp.transpose(copy(xp.transpose(self, axes)), back)


_clone_as = defop("clone", kernel(laid_out, lambda xp, self, axes:
                                  _in_order(xp, self, axes, cpu_kernels.contiguous),
                                  lambda self, axes: cpu_kernels.copies(self.transpose(axes))),
                  vjp={"self": lambda grad: grad}, jvp="linear")


# ---- as_strided -------------------------------------------------------------------------------

def _extent(size, stride, offset):
    """How many elements of a storage a geometry reaches into (a batch element's own
    geometry may reach past its run: its elements lie among the other elements')."""
    return offset + 1 + sum((n - 1) * s for n, s in zip(size, stride, strict=True)) \
        if all(size) else 0


_as_strided = defop(
    "as_strided",
    lambda xp, self, storage, view_geometry, self_geometry: xp.lib.stride_tricks.as_strided(
        storage[view_geometry[2]:], view_geometry[0],
        tuple(s * storage.itemsize for s in view_geometry[1])),
    inputs=("self",),
    vjp={"self": lambda xp, grad, storage, view_geometry, self_geometry:
         call(xp, _as_strided_backward, grad,
              attrs=(view_geometry, self_geometry,
                     max(storage.size, _extent(*self_geometry))))},
    view=True, jvp="transpose")


# ---- unfold -----------------------------------------------------------------------------------

def _unfold_forward(xp, self, dimension, size, step):
    """The windows along ``dimension`` as a strided view, the window a new last dim."""
    if self.ndim == 0:
        return xp.reshape(self, (1,))
    shape, strides = list(self.shape), list(self.strides)
    shape[dimension] = (shape[dimension] - size) // step + 1
    shape.append(size)
    strides.append(strides[dimension])
    strides[dimension] *= step
    return xp.lib.stride_tricks.as_strided(self, shape, strides)


def _unfold_backward_forward(xp, self, input_size, dimension, size, step):
    """The windows added back where they came from: one strided add per window offset."""
    if not input_size:
        return xp.reshape(self, ())
    out = xp.zeros(input_size, dtype=self.dtype)
    pre = (slice(None),) * dimension
    stop = step * (self.shape[dimension] - 1) + 1
    for k in range(size):
        out[pre + (slice(k, k + stop, step),)] += self[..., k]
    return out


_unfold_backward = defop(
    "unfold_backward", _unfold_backward_forward,
    vjp={"self": lambda xp, grad, dimension, size, step:
         call(xp, _unfold, grad, attrs=(dimension, size, step))}, jvp="linear")
_unfold = defop(
    "unfold", _unfold_forward,
    vjp={"self": lambda xp, grad, self_shape, dimension, size, step:
         call(xp, _unfold_backward, grad, attrs=(self_shape, dimension, size, step))},
    view=True, jvp="linear")


@register(function=False)
def unfold(self, dimension, size, step):
    """A view of the windows of ``size`` elements, ``step`` apart, along ``dimension``
    (a new last dim indexes inside each window); windows may overlap."""
    a = self._data
    d = _wrap_dim(dimension, a.ndim)
    n = a.shape[d] if a.ndim else 1
    if size > n:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {n} but size is "
                           f"{size}")
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    return apply(_unfold, (self,), (d, size, step))


# ---- public: views ----------------------------------------------------------------------------

def _reshape(input, shape):
    a = input._data
    shape = _infer(shape, a.size)
    if a.flags.c_contiguous:
        return apply(_view, (input,), (shape,))
    try:
        return apply(_reshape_alias, (input,), (shape,))
    except ValueError:  # NumPy needs a copy for this layout
        return apply(_unsafe_view, (input,), (shape,))


@register(method=False)
def reshape(input, shape):
    """A view with the new shape when the layout allows it, else a copy.

    >>> retrograd.arange(6).reshape(2, -1).shape
    torch.Size([2, 3])
    """
    return _reshape(input, _ints((shape,), "reshape", "shape"))


@register(function=False, name="reshape")
def _reshape_method(self, *shape):
    return _reshape(self, _ints(shape, "reshape", "shape"))


@register(function=False)
def view(self, *shape):
    """A view with the new shape (or, given a dtype, the same bytes reinterpreted); an
    error when the layout would need a copy."""
    if len(shape) == 1 and isinstance(shape[0], _dtype.dtype):
        return _view_dtype(self, shape[0])
    if not shape:
        raise TypeError("view() received an invalid combination of arguments - got (), but "
                        "expected one of:\n * (torch.dtype dtype)\n * (tuple of ints size)\n")
    size = _infer(_ints(shape, "view"), self._data.size)
    try:
        return apply(_view, (self,), (size,))
    except ValueError:
        raise RuntimeError("view size is not compatible with input tensor's size and stride "
                           "(at least one dimension spans across two contiguous subspaces). "
                           "Use .reshape(...) instead.") from None


def _view_dtype(self, dtype):
    """The same bytes as ``dtype``; the last dim scales when the element sizes differ."""
    a = self._data
    if dtype.itemsize != a.itemsize:
        what = (f"to view {_pretty(a.dtype)} as {_pretty(dtype.np)} (different element "
                f"sizes)")
        if a.ndim == 0:
            raise RuntimeError(f"self.dim() cannot be 0 {what}")
        if dtype.itemsize > a.itemsize and a.shape[-1] % (dtype.itemsize // a.itemsize):
            raise RuntimeError(f"self.size(-1) must be divisible by "
                               f"{dtype.itemsize // a.itemsize} {what}, but got {a.shape[-1]}")
        if a.strides[-1] != a.itemsize:
            raise RuntimeError(f"self.stride(-1) must be 1 {what}, but got "
                               f"{a.strides[-1] // a.itemsize}")
    out = wrap(a.view(dtype.np))
    _views.mark_view(self, out)
    return out


@register(function=False)
def view_as(self, other):
    return view(self, other.shape)


@register(function=False)
def reshape_as(self, other):
    return _reshape(self, tuple(other.shape))


@register
def flatten(input, start_dim=0, end_dim=-1):
    """Merge dims ``start_dim..end_dim`` into one (a view when the layout allows)."""
    a = input._data
    start, end = _wrap_dim(start_dim, a.ndim), _wrap_dim(end_dim, a.ndim)
    if a.ndim == 0:
        return _reshape(input, (1,))
    if start > end:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if start == end:
        return input
    merged = math.prod(a.shape[start:end + 1])  # not -1, which is ambiguous with no elements
    return _reshape(input, a.shape[:start] + (merged,) + a.shape[end + 1:])


@register
def unflatten(input, dim, sizes):
    """Split dim ``dim`` into ``sizes`` (one of which may be -1)."""
    a = input._data
    d = _wrap_dim(dim, a.ndim)
    sizes = _ints((sizes,), "unflatten", "sizes")
    n = a.shape[d]
    known = math.prod(s for s in sizes if s != -1)
    if (-1 not in sizes and known != n) or (-1 in sizes and (known == 0 or n % known)):
        raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the "
                           f"size of dim {dim} ({n}) in the input tensor")
    return view(input, _infer(a.shape[:d] + sizes + a.shape[d + 1:], a.size))


@register
def squeeze(input, dim=None):
    """Remove dims of size 1 (all of them, or those of ``dim`` that have size 1)."""
    a = input._data
    if dim is None:
        return apply(_squeeze_all, (input,), (None,))
    dims = _dims(dim, a.ndim)
    keep = tuple(d for d in dims if a.ndim and a.shape[d] == 1)
    op = _squeeze_dims if isinstance(dim, (tuple, list)) else _squeeze_dim
    return apply(op, (input,), (keep,))


@register
def unsqueeze(input, dim):
    """A view with a new dim of size 1 at ``dim``."""
    return apply(_unsqueeze, (input,), (_wrap_dim(dim, input._data.ndim + 1),))


def _permuted(input, dims):
    a = input._data
    if len(dims) != a.ndim:
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does "
                           f"not match the length of the desired ordering of dimensions i.e. "
                           f"input.dim() = {a.ndim} is not equal to len(dims) = {len(dims)}")
    dims = tuple(_wrap_dim(d, a.ndim) for d in dims)
    if len(set(dims)) != len(dims):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return apply(_permute, (input,), (dims,))


@register(method=False)
def permute(input, dims):
    """A view with the dims reordered: output dim ``i`` is input dim ``dims[i]``."""
    return _permuted(input, _ints((dims,), "permute", "dims"))


@register(function=False, name="permute")
def _permute_method(self, *dims):
    return _permuted(self, _ints(dims, "permute", "dims"))


@register
def transpose(input, dim0, dim1):
    """A view with dims ``dim0`` and ``dim1`` swapped."""
    n = input._data.ndim
    return apply(_transpose, (input,), (_wrap_dim(dim0, n), _wrap_dim(dim1, n)))


@register
def swapaxes(input, axis0, axis1):
    return transpose(input, axis0, axis1)


@register
def swapdims(input, dim0, dim1):
    return transpose(input, dim0, dim1)


@register
def t(input):
    """Transpose of a tensor of at most 2 dims."""
    if input._data.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is "
                           f"{input._data.ndim}D")
    return apply(_t, (input,))


@register(aliases=("moveaxis",))
def movedim(input, source, destination):
    """Move dims ``source`` to positions ``destination``; the others keep their order."""
    n = input._data.ndim
    src, dst = _dims(source, n), _dims(destination, n)
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({list(src)} "
                           f"dims) should contain the same number of dims as destination "
                           f"({list(dst)} dims)")
    for name, ds, given in (("source", src, source), ("destination", dst, destination)):
        if len(set(ds)) != len(ds):
            raise RuntimeError(f"movedim: repeated dim in `{name}` ({list(given)})")
    if n == 0:  # dims 0 and -1 name the scalar itself: nothing to move
        return apply(_permute, (input,), ((),))
    order = [d for d in range(n) if d not in src]
    for d, s in sorted(zip(dst, src, strict=True)):
        order.insert(d, s)
    return apply(_permute, (input,), (tuple(order),))


moveaxis = movedim


def _expand_size(input, sizes):
    shape = input._data.shape
    if len(sizes) < len(shape):
        raise RuntimeError(f"expand({legacy_type_name(input.dtype)}{{{list(shape)}}}, "
                           f"size={list(sizes)}): the number of sizes provided ({len(sizes)}) "
                           f"must be greater or equal to the number of dimensions in the "
                           f"tensor ({len(shape)})")
    lead = len(sizes) - len(shape)
    out = list(sizes)
    for i, s in enumerate(sizes):
        if i < lead:
            if s < 0:
                raise RuntimeError(f"The expanded size of the tensor ({s}) isn't allowed in a "
                                   f"leading, non-existing dimension {i}")
            continue
        have = shape[i - lead]
        if s == -1:
            out[i] = have
        elif have != s and have != 1:
            raise RuntimeError(f"The expanded size of the tensor ({s}) must match the existing "
                               f"size ({have}) at non-singleton dimension {i}.  Target sizes: "
                               f"{list(sizes)}.  Tensor sizes: {list(shape)}")
    return tuple(out)


@register(function=False)
def expand(self, *sizes):
    """A broadcast view: size-1 dims repeat without copying; -1 keeps a dim's size.

    >>> retrograd.ones(3, 1).expand(2, -1, 4).shape
    torch.Size([2, 3, 4])
    """
    return apply(_expand, (self,), (_expand_size(self, _ints(sizes, "expand")),))


@register(function=False)
def expand_as(self, other):
    return expand(self, other.shape)


@register
def broadcast_to(input, size):
    return expand(input, _ints((size,), "broadcast_to"))


@register(method=False)
def broadcast_shapes(*shapes):
    """The shape the given shapes broadcast to."""
    shapes = [(s,) if isinstance(s, int) else s for s in shapes]
    try:
        return Size(numpy.broadcast_shapes(*(tuple(s) for s in shapes)))
    except ValueError:
        raise _broadcast_shapes_error(shapes) from None


def _broadcast_shapes_error(shapes):
    """PyTorch's error for shapes that do not broadcast: the first dimension that meets
    another of a different length, the arguments in order and each from its right."""
    result = [1] * max(len(s) for s in shapes)
    for k, shape in enumerate(shapes):
        for i in range(-1, -1 - len(shape), -1):
            n = shape[i]
            if n < 0:
                return ValueError("Attempting to broadcast a dimension with negative length!")
            if n != 1 and n != result[i]:
                if result[i] != 1:
                    return RuntimeError(
                        f"Attempting to broadcast a dimension of length {n} at {i}! "
                        f"Mismatching argument at index {k} had {shape!r}; but expected shape "
                        f"should be broadcastable to {result}")
                result[i] = n
    return RuntimeError("Shape mismatch: objects cannot be broadcast to a single shape")


@register(method=False)
def broadcast_tensors(*tensors):
    """The tensors expanded to their common shape: views, or (as PyTorch's) a tensor itself
    where it has that shape."""
    try:
        shape = get_array_module(tensors[0]._data).broadcast_shapes(
            *(t._data.shape for t in tensors)) if tensors else ()
    except ValueError as e:  # PyTorch's RuntimeError naming the first conflict
        raise _broadcast_error(tensors, e) from None
    return tuple(t if t._data.shape == shape else expand(t, shape) for t in tensors)


@register(function=False)
def repeat(self, *repeats):
    """Tile the tensor ``repeats[i]`` times along dim ``i`` (a copy)."""
    reps = _ints(repeats, "repeat", "repeats")
    if len(reps) < self._data.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number "
                           "of dimensions of tensor")
    if any(r < 0 for r in reps):
        shape = (1,) * (len(reps) - self._data.ndim) + self._data.shape
        raise RuntimeError(f"Trying to create tensor with negative dimension "
                           f"{min(r * s for r, s in zip(reps, shape, strict=True))}: "
                           f"{[r * s for r, s in zip(reps, shape, strict=True)]}")
    return apply(_repeat, (self,), (reps,))


def _tile(input, dims):
    return repeat(input, (1,) * (input._data.ndim - len(dims)) + dims)


@register(method=False)
def tile(input, dims):
    return _tile(input, _ints((dims,), "tile", "dims"))


@register(function=False, name="tile")
def _tile_method(self, *dims):
    return _tile(self, _ints(dims, "tile", "dims"))


# ---- reordering and triangles -----------------------------------------------------------------

def _flipped(input, dims):
    dims = _dims(dims, input._data.ndim)
    if len(set(dims)) != len(dims):
        dup = next(d for d in dims if dims.count(d) > 1)
        raise RuntimeError(f"dim {dup} appears multiple times in the list of dims")
    # a 0-d tensor has its one element whatever the (checked) dims say
    return apply(_flip, (input,), (dims if input._data.ndim else (),))


@register(method=False)
def flip(input, dims):
    """Reverse the order of elements along ``dims`` (a copy)."""
    return _flipped(input, dims)


@register(function=False, name="flip")
def _flip_method(self, *dims):
    return _flipped(self, dims[0] if len(dims) == 1 else dims)


@register
def fliplr(input):
    if input._data.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return _flipped(input, (1,))


@register
def flipud(input):
    if input._data.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return _flipped(input, (0,))


@register
def roll(input, shifts, dims=None):
    """Rotate elements along ``dims`` (the flattened tensor when None) by ``shifts``.

    Like PyTorch, dims go unchecked on a tensor without elements (nothing moves), and a
    scalar has no dim to roll along, not even 0 or -1."""
    shifts = _ints((shifts,), "roll", "shifts")
    dims = () if dims is None else _ints((dims,), "roll", "dims")
    if not shifts:
        raise RuntimeError("`shifts` required")
    if not dims and len(shifts) == 1:
        return apply(_roll, (input,), (shifts, None))
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, "
                           f"dims:{len(dims)}")
    a = input._data
    if a.size == 0:
        return apply(_roll, (input,), ((0,), None))
    if a.ndim == 0:
        raise IndexError(f"Dimension specified as {dims[0]} but tensor has no dimensions")
    return apply(_roll, (input,), (shifts, _dims(dims, a.ndim)))


@register
def diagonal(input, offset=0, dim1=0, dim2=1):
    """A view of the diagonal of the ``dim1`` x ``dim2`` planes, as a new last dim."""
    n = input._data.ndim
    d1, d2 = _wrap_dim(dim1, n), _wrap_dim(dim2, n)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return apply(_diagonal, (input,), (offset, d1, d2))


@register
def diag(input, diagonal=0, *, out=None):
    """A matrix with ``input`` (1-d) on a diagonal, or a copy of the diagonal of a matrix."""
    n = input._data.ndim
    if n == 1:
        return apply(_diag_embed, (input,), (diagonal,))
    if n == 2:
        return apply(_diag_copy, (input,), (diagonal,))
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {n}D")


@register
def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """Matrices with the last dim of ``input`` on their diagonals (dims ``dim1``, ``dim2``)."""
    a = input._data
    n = a.ndim + 1
    d1, d2 = _wrap_dim(dim1, n), _wrap_dim(dim2, n)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    m = a.shape[-1] + abs(offset)
    size = list(a.shape[:-1])
    for d in sorted((d1, d2)):
        size.insert(d, m)
    return apply(_diag_embed_nd, (input,), (tuple(size), offset, d1, d2))


def _triangle_dims(input, name):
    if input._data.ndim < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")


def _triangle(op, name, input, diagonal):
    _triangle_dims(input, name)
    return apply(op, (input,), (diagonal,))


@register
def tril(input, diagonal=0, *, out=None):
    """The lower triangle (elements on and below diagonal ``diagonal``); zeros elsewhere."""
    return _triangle(_tril, "tril", input, diagonal)


@register
def triu(input, diagonal=0, *, out=None):
    """The upper triangle (elements on and above diagonal ``diagonal``); zeros elsewhere."""
    return _triangle(_triu, "triu", input, diagonal)


@register(function=False)
def tril_(self, diagonal=0):
    """``tril`` written into ``self`` (records TrilBackward0, as PyTorch)."""
    _triangle_dims(self, "tril")
    return apply_inplace(_tril, self, (), (diagonal,))


@register(function=False)
def triu_(self, diagonal=0):
    """``triu`` written into ``self`` (records TriuBackward0, as PyTorch)."""
    _triangle_dims(self, "triu")
    return apply_inplace(_triu, self, (), (diagonal,))


# ---- copies and raw strides -------------------------------------------------------------------

@register(function=False)
def contiguous(self, memory_format=contiguous_format):
    """``self`` when its elements already lie in ``memory_format``'s order (row-major by
    default; ``preserve_format``: always), else a copy laid out so."""
    check_memory_format(memory_format, "contiguous")
    if memory_format is preserve_format:
        return self
    axes = axes_order(memory_format, self._data.ndim)
    if is_laid_out(self._data, axes):
        return self
    if axes is None:
        return apply(_contiguous, (self,))
    return apply(_clone_as, (self,), (axes,))


@register
def clone(input, *, memory_format=preserve_format):
    """A copy: laid out as ``input`` (preserve_format, for dense tensors), row-major, or
    channels-last."""
    check_memory_format(memory_format, "clone")
    if memory_format is None or memory_format is preserve_format:
        return apply(_clone, (input,))
    axes = axes_order(memory_format, input._data.ndim)
    if axes is None:
        return apply(_clone_as, (input,), (tuple(range(input._data.ndim)),))
    return apply(_clone_as, (input,), (axes,))


@register
def as_strided(input, size, stride, storage_offset=None):
    """A view of the tensor's storage with the given sizes, strides (in elements) and
    offset; gradients of elements the view reads more than once add up."""
    base = input._base if input._base is not None else input
    storage = functions(get_array_module(base._data)).storage(base._data)
    if storage is None:
        raise NotImplementedError("as_strided needs a tensor whose storage (its base "
                                  "tensor) is contiguous")
    size, stride = _ints((size,), "as_strided"), _ints((stride,), "as_strided", "stride")
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    offset = input.storage_offset() if storage_offset is None else storage_offset
    need = _extent(size, stride, offset)
    if need > storage.size:
        item = storage.itemsize
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage "
                           f"offset {offset}, and itemsize {item} requiring a storage size of "
                           f"{need * item} are out of bounds for storage of size "
                           f"{storage.size * item}")
    a = input._data
    self_geometry = (a.shape, tuple(s // a.itemsize for s in a.strides), input.storage_offset())
    return apply(_as_strided, (input,), (storage, (size, stride, offset), self_geometry))


@register(method=False)
def detach(input):
    return input.detach()


@register
def ravel(input):
    """The flattened tensor (a view of a contiguous input)."""
    return input.contiguous().view(-1)


@register
def adjoint(input):
    """The conjugate transpose of the last two dims (a view; real tensors: ``mT``)."""
    if input._data.ndim < 2:
        raise RuntimeError(f"tensor.adjoint() is only supported on matrices or batches of "
                           f"matrices. Got {input._data.ndim}-D tensor.")
    return input.transpose(-2, -1)
