"""Dtype and device conversions, ``new_*`` constructors, and fill/copy in place.

``to`` returns ``self`` when nothing changes, as PyTorch does; a cast or a move records
``ToCopyBackward0``, whose rule moves the gradient back to the input's device (the
engine casts every gradient back to its input's dtype). ``zero_``/``fill_``/``copy_`` write through
:func:`apply_inplace`, so they work on views and version-count like any
in-place op.
"""

import functools
import numbers
import warnings

from .. import _creation, _dtype
from .._layout import check_layout
from .._memory_format import axes_order, check_memory_format, is_laid_out, preserve_format
from .._tensor import Tensor
from .._dtype import LEGACY_NAMES, legacy_type_name
from .._tensor_types import tensortype
from ..backend import (Device, check_device, cpu_kernels, emulating_cuda, gpu, is_mapped,
                       to_device)
from ..autograd.node import sum_acc
from ._registry import apply, apply_inplace, defop, kernel, register
from .comparison import _invalid
from .shape import _in_order, laid_out

# Copies, fills and casts are exact: float16 stays float16.
defop = functools.partial(defop, upcast=False)

__all__ = ["to", "type_as", "cpu", "cuda", "new_zeros", "new_ones", "new_full", "new_empty",
           "new_empty_strided", "new_tensor", "zero_", "fill_", "fill_diagonal_", "copy_"]

_FROM_LEGACY = {f"torch.{v}": _dtype._names[k] for k, v in LEGACY_NAMES.items()}


def _filled(xp, self, value):
    """``value`` (scalar or 0-d array) spread over ``self``'s shape without allocating."""
    return xp.broadcast_to(xp.asarray(value, dtype=self.dtype), self.shape)


def _checked_value(value, input):
    """A number as c10's checked conversion reads it into ``input``'s dtype: PyTorch's
    overflow errors, and C's wrap-around (-1 fills a uint8 tensor with 255)."""
    if not isinstance(value, numbers.Number):
        raise _invalid("fill_", (value,), ("Tensor value", "Number value"))
    return _dtype.checked_convert(value, input._data.dtype, input._data.size == 1)


def _zeros(xp, grad):
    return xp.zeros_like(grad)


def _copy_to(xp, self, dtype, device, source, axes):
    """``self`` in ``dtype`` (its layout kept), on ``device``, laid out in the order
    ``axes`` if given (a memory_format)."""
    a = self.astype(dtype)
    if axes is not None:
        a = laid_out(xp, a, axes)
    return a if device is None else to_device(a, device)


def _copy_in_tiles(xp, self, dtype, device, source, axes):
    """:func:`_copy_to` into a memory format on the host: one copy (the permuted view's,
    by ``cpu_kernels.contiguous``) where the dtype stays."""
    return _in_order(xp, self.astype(dtype, copy=False), axes, cpu_kernels.contiguous)


_to_copy = defop("_to_copy", kernel(_copy_to, _copy_in_tiles,
                                    lambda self, dtype, device, source, axes:
                                    device is None and axes is not None
                                    and cpu_kernels.copies(self.transpose(axes))),
                 vjp={"self": lambda grad, device, source:
                      grad if device is None else to_device(grad, source)}, jvp="linear")
_zero = defop("zero", lambda xp, self: _filled(xp, self, 0), vjp={"self": _zeros},
              jvp="elementwise")
_fill = defop("fill", _filled, vjp={"self": _zeros}, node="FillBackward2", jvp="elementwise")
_fill_tensor = defop("fill_tensor", _filled, inputs=("self", "value"),
                     vjp={"self": _zeros, "value": lambda xp, grad: sum_acc(xp, grad)},
                     node="FillBackward3", jvp="linear")
_copy = defop("copy", lambda xp, self, src: xp.broadcast_to(src.astype(self.dtype, copy=False),
                                                            self.shape),
              vjp={"self": _zeros, "src": lambda grad: grad}, node="CopyBackwards", jvp="linear")


def _to_args(args, kwargs):
    """(device, dtype, copy, memory_format) from the argument forms of ``Tensor.to``."""
    device = kwargs.pop("device", None)
    dtype = _dtype.dtype_arg(kwargs.pop("dtype", None), "to")
    copy = kwargs.pop("copy", False)
    kwargs.pop("non_blocking", None)
    fmt = check_memory_format(kwargs.pop("memory_format", None), "to")
    if kwargs:
        raise TypeError(f"to() got an unexpected keyword argument '{next(iter(kwargs))}'")
    rest = list(args)
    if rest:
        a = rest.pop(0)
        if isinstance(a, _dtype.dtype) or isinstance(a, type) and a in _dtype.PYTHON_TYPES:
            dtype = _dtype.dtype_arg(a, "to")
        elif isinstance(a, Tensor):
            device, dtype = a.device, a.dtype
        elif isinstance(a, (str, Device)) or a is None:
            device = a
            if rest and (isinstance(rest[0], (_dtype.dtype, type)) or rest[0] is None):
                dtype = _dtype.dtype_arg(rest.pop(0), "to")
        else:
            raise TypeError(f"to() received an invalid combination of arguments - got "
                            f"({type(a).__name__}), but expected one of: (torch.device device, "
                            f"torch.dtype dtype), (torch.dtype dtype), (Tensor tensor)")
    if len(rest) > 2:
        raise TypeError(f"to() takes at most 4 positional arguments ({len(args)} given)")
    if len(rest) == 2:
        copy = rest[1]
    return device, dtype, copy, fmt


@register(function=False)
def to(self, *args, **kwargs):
    """Cast and/or move: ``to(dtype)``, ``to(device, dtype)``, ``to(other)``; ``self`` when
    nothing changes and ``copy`` is false.

    >>> retrograd.ones(2).to(retrograd.float64).dtype
    torch.float64
    """
    device, dtype, copy, fmt = _to_args(args, kwargs)
    source = self.device
    if device is not None:
        device = check_device(device)
        if device == source:
            device = None
    axes = None
    if fmt is not None and fmt is not preserve_format:  # (row-major: the identity order)
        axes = axes_order(fmt, self._data.ndim) or tuple(range(self._data.ndim))
    laid = axes is None or is_laid_out(self._data, axes)
    if device is None and (dtype is None or dtype.np == self._data.dtype) and laid:
        if not copy:
            return self
    return apply(_to_copy, (self,), ((dtype or self.dtype).np, device, source, axes))


def _caster(name, dtype):
    def cast(self, memory_format=None):
        return to(self, dtype)
    cast.__name__ = cast.__qualname__ = name
    cast.__doc__ = f"``self.to({dtype})``."
    register(cast, function=False)


for _name, _dt in (("float", _dtype.float32), ("double", _dtype.float64),
                   ("half", _dtype.float16), ("bfloat16", _dtype.bfloat16),
                   ("long", _dtype.int64), ("int", _dtype.int32),
                   ("short", _dtype.int16), ("char", _dtype.int8), ("byte", _dtype.uint8),
                   ("bool", _dtype.bool), ("cfloat", _dtype.complex64),
                   ("cdouble", _dtype.complex128)):
    _caster(_name, _dt)


@register(function=False, name="type")
def type_(self, dtype=None, non_blocking=False, **kwargs):
    """The legacy type name (``'torch.FloatTensor'``, ``'torch.cuda.FloatTensor'`` off the
    CPU) or, given a dtype or such a name, the cast."""
    if dtype is None:
        name, device = legacy_type_name(self.dtype), self.device.type
        return name if device == "cpu" else name.replace("torch.", f"torch.{device}.", 1)
    if isinstance(dtype, tensortype):
        dtype = f"{dtype.__module__}.{dtype.__name__}"
    if isinstance(dtype, str):
        key = dtype
        if key.startswith("torch.cuda."):
            return to(self, "cuda")
        dtype = _FROM_LEGACY.get(key) or _dtype._names.get(key.removeprefix("torch."))
        if dtype is None:
            raise ValueError(f"invalid type: '{key}'")
    return to(self, dtype)


@register(function=False)
def type_as(self, other):
    return to(self, other.dtype)


@register(function=False)
def cpu(self, memory_format=None):
    """A copy on the CPU (``self`` when it is there)."""
    return to(self, "cpu")


@register(function=False)
def cuda(self, device=None, non_blocking=False, memory_format=None):
    """``self.to('cuda')``; without a GPU it fails as on PyTorch's CPU-only build (an
    index asks for an accelerator, of which there is none) unless the device map runs
    cuda elsewhere."""
    if isinstance(device, int):
        if not (is_mapped("cuda") or emulating_cuda() or gpu.cupy() is not None):
            raise RuntimeError("Cannot access accelerator device when none is available.")
        device = Device("cuda", device)
    return to(self, Device("cuda") if device is None else device)


# ---- new_* constructors: this tensor's dtype (and device) by default --------------------------

@register(function=False)
def new_zeros(self, *size, dtype=None, device=None, requires_grad=False, layout=None,
              pin_memory=False):
    check_layout(layout, "new_zeros")
    dtype = _dtype.dtype_arg(dtype, "new_zeros")
    return _creation.zeros(*size, dtype=dtype or self.dtype, device=device or self.device,
                           requires_grad=requires_grad)


@register(function=False)
def new_ones(self, *size, dtype=None, device=None, requires_grad=False, layout=None,
             pin_memory=False):
    check_layout(layout, "new_ones")
    dtype = _dtype.dtype_arg(dtype, "new_ones")
    return _creation.ones(*size, dtype=dtype or self.dtype, device=device or self.device,
                          requires_grad=requires_grad)


@register(function=False)
def new_empty(self, *size, dtype=None, device=None, requires_grad=False, layout=None,
              pin_memory=False):
    check_layout(layout, "new_empty")
    dtype = _dtype.dtype_arg(dtype, "new_empty")
    return _creation.empty(*size, dtype=dtype or self.dtype, device=device or self.device,
                           requires_grad=requires_grad)


@register(function=False)
def new_empty_strided(self, size, stride, *, dtype=None, layout=None, device=None,
                      requires_grad=False, pin_memory=False):
    """``empty_strided`` with this tensor's dtype and device by default."""
    check_layout(layout, "new_empty_strided")
    dtype = _dtype.dtype_arg(dtype, "new_empty_strided")
    dev = check_device(device) if device is not None else self.device
    return _creation.strided_empty(size, stride, (dtype or self.dtype).np, dev, requires_grad,
                                   "new_empty_strided")


@register(function=False)
def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False,
             layout=None, pin_memory=False):
    check_layout(layout, "new_full")
    dtype = _dtype.dtype_arg(dtype, "new_full")
    return _creation.full(size, fill_value, dtype=dtype or self.dtype, device=device or self.device,
                          requires_grad=requires_grad)


@register(function=False)
def new_tensor(self, data, *, dtype=None, device=None, requires_grad=False, layout=None,
               pin_memory=False):
    check_layout(layout, "new_tensor")
    dtype = _dtype.dtype_arg(dtype, "new_tensor")
    if isinstance(data, Tensor):
        warnings.warn("To copy construct from a tensor, it is recommended to use "
                      "sourceTensor.detach().clone() or "
                      "sourceTensor.detach().clone().requires_grad_(True), rather than "
                      "tensor.new_tensor(sourceTensor).", UserWarning, stacklevel=2)
    return _creation.tensor(data, dtype=dtype or self.dtype, device=device or self.device,
                            requires_grad=requires_grad)


# ---- in place ---------------------------------------------------------------------------------

@register
def zero_(input):
    """Fill with zeros, in place (``ZeroBackward0``: no gradient flows to the old value)."""
    return apply_inplace(_zero, input, ())


@register
def fill_(input, value):
    """Fill with a number, or a 0-d tensor whose gradient is the sum of the output's."""
    if isinstance(value, Tensor):
        if value._data.ndim:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor "
                               f"with {value._data.ndim} dimensions.")
        return apply_inplace(_fill_tensor, input, (value,))
    return apply_inplace(_fill, input, (), (_checked_value(value, input),))


@register(function=False)
def fill_diagonal_(self, fill_value, wrap=False):
    """Fill the main diagonal (of a matrix, or of a tensor whose dims are all equal) as
    PyTorch does: ``fill_`` of an ``as_strided`` view stepping by the sum of the strides, so
    the write is recorded as ``CopySlices``; ``wrap`` continues it below a tall matrix,
    every ``width + 1`` rows."""
    if isinstance(fill_value, Tensor) and not fill_value._data.ndim and \
            not fill_value._requires_grad:
        fill_value = fill_value.item()  # (PyTorch reads a plain 0-d tensor as a number)
    if not isinstance(fill_value, (bool, int, float, complex)):
        raise TypeError(f"fill_diagonal_(): argument 'fill_value' (position 1) must be Number, "
                        f"not {type(fill_value).__name__}")
    shape, strides = self.shape, self.stride()
    if len(shape) < 2:
        raise RuntimeError("dimensions must larger than 1")
    if len(shape) > 2 and any(n != shape[0] for n in shape):
        raise RuntimeError("all dimensions of input must be of equal length")
    height, width = shape[0], shape[1]
    step, offset = sum(strides), self.storage_offset()
    size = min(height, width)
    self.as_strided((size,), (step,), offset).fill_(fill_value)
    if wrap and len(shape) == 2 and height > width + 1:
        rest = -(-self.numel() // (width + 1)) - size
        self.as_strided((rest,), (step,), offset + strides[0] * (width + 1)).fill_(fill_value)
    return self


@register(function=False)
def copy_(self, src, non_blocking=False):
    """Copy ``src`` (broadcast to ``self``'s shape, cast to its dtype) into ``self``.

    >>> x = retrograd.zeros(2, 3); x.copy_(retrograd.ones(3)).sum()
    tensor(6.)
    """
    if not isinstance(src, Tensor):
        raise TypeError(f"copy_(): argument 'src' (position 1) must be Tensor, not "
                        f"{type(src).__name__}")
    shape, sshape = self._data.shape, src._data.shape
    if sshape != shape:
        _check_broadcast(shape, sshape)
    return apply_inplace(_copy, self, (src,))


def _check_broadcast(shape, src_shape):
    """PyTorch's error when ``src_shape`` does not broadcast to ``shape``."""
    if len(src_shape) > len(shape):
        raise RuntimeError(f"output with shape {list(shape)} doesn't match the broadcast shape "
                           f"{list(src_shape)}")
    for i in range(1, len(src_shape) + 1):
        a, b = shape[-i], src_shape[-i]
        if b != a and b != 1:
            raise RuntimeError(f"The size of tensor a ({a}) must match the size of tensor b "
                               f"({b}) at non-singleton dimension {len(shape) - i}")
