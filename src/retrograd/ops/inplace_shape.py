"""In-place shape ops (``t_``, ``transpose_``, ``squeeze_``, ``unsqueeze_``, ``as_strided_``)
and PyTorch's top-level in-place functions (``torch.exp_(x)`` & co.).

An in-place shape op changes the tensor's geometry, not its values: it runs the
out-of-place view op (recorded with PyTorch's node for the in-place overload, e.g.
``TBackward1``) and moves the result's array, history and tangent into ``self``, bumping
its version as PyTorch does. ``self`` keeps its base, so views of one storage stay
views of it.
"""

from .._tensor import Tensor, _wrap_dim
from ..backend import get_array_module
from ..backend.functions import functions
from ..autograd import grad_mode
from . import shape
from ._registry import FUNCTIONS, apply, defop, register
from .reduction import _dims

__all__ = ["t_", "transpose_", "swapdims_", "swapaxes_", "squeeze_", "unsqueeze_",
           "as_strided_"]


def _renamed(op, node):
    """``op`` recorded under another node name (PyTorch's in-place overload)."""
    return defop(op.name, op.forward, inputs=op.inputs, vjp=op.vjp, jvp=op.jvp, node=node,
                 view=op.view)


_t1 = _renamed(shape._t, "TBackward1")
_transpose1 = _renamed(shape._transpose, "TransposeBackward1")
_unsqueeze1 = _renamed(shape._unsqueeze, "UnsqueezeBackward1")
_squeeze3 = _renamed(shape._squeeze_all, "SqueezeBackward3")
_squeeze4 = _renamed(shape._squeeze_dim, "SqueezeBackward4")
_squeeze5 = _renamed(shape._squeeze_dims, "SqueezeBackward5")
_as_strided1 = _renamed(shape._as_strided, "AsStridedBackward1")


def _inplace_view(self, op, attrs):
    if grad_mode.state.enabled and self._requires_grad and self._grad_fn is None and \
            self._base is None:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                           "operation.")
    out = apply(op, (self,), attrs)
    self._data = out._data
    if out._grad_fn is not None:
        self._grad_fn, self._output_nr = out._grad_fn, out._output_nr
    self._fw = out._fw
    self._vc[0] += 1
    if self._base is not None:  # its new history is current: no rebuild from the base
        self._view_version = self._vc[0]
    return self


@register(function=False)
def t_(self):
    """Transpose in place (at most 2 dims)."""
    if self._data.ndim > 2:
        raise RuntimeError(f"t_() expects a tensor with <= 2 dimensions, but self is "
                           f"{self._data.ndim}D")
    return _inplace_view(self, _t1, ())


@register(function=False)
def transpose_(self, dim0, dim1):
    """Swap two dims in place."""
    n = self._data.ndim
    return _inplace_view(self, _transpose1, (_wrap_dim(dim0, n), _wrap_dim(dim1, n)))


@register(function=False)
def swapdims_(self, dim0, dim1):
    return transpose_(self, dim0, dim1)


@register(function=False)
def swapaxes_(self, axis0, axis1):
    return transpose_(self, axis0, axis1)


@register(function=False)
def unsqueeze_(self, dim):
    """Insert a dim of size 1 in place."""
    return _inplace_view(self, _unsqueeze1, (_wrap_dim(dim, self._data.ndim + 1),))


@register(function=False)
def squeeze_(self, dim=None):
    """Remove dims of size 1 in place (all, or those of ``dim``)."""
    a = self._data
    if dim is None:
        return _inplace_view(self, _squeeze3, (None,))
    keep = tuple(d for d in _dims(dim, a.ndim) if a.ndim and a.shape[d] == 1)
    return _inplace_view(self, _squeeze5 if isinstance(dim, (tuple, list)) else _squeeze4,
                         (keep,))


@register
def as_strided_(input, size, stride, storage_offset=None):
    """Give the tensor the geometry ``size``/``stride``/``storage_offset`` over its
    storage, in place."""
    with grad_mode.no_grad():
        shape.as_strided(input, size, stride, storage_offset)  # PyTorch's checks
    a = input._data
    base = input._base if input._base is not None else input
    offset = input.storage_offset() if storage_offset is None else storage_offset
    geometry = (tuple(size), tuple(stride), offset)
    self_geometry = (a.shape, tuple(s // a.itemsize for s in a.strides),
                     input.storage_offset())
    storage = functions(get_array_module(base._data)).storage(base._data)
    return _inplace_view(input, _as_strided1, (storage, geometry, self_geometry))


# PyTorch's top-level in-place functions: ``torch.exp_(x)`` is ``x.exp_()``.
_TOP_LEVEL_INPLACE = (
    "abs_", "acos_", "acosh_", "arccos_", "arccosh_", "arcsin_", "arcsinh_", "arctan_",
    "arctanh_", "asin_", "asinh_", "atan_", "atanh_", "ceil_", "clamp_", "clamp_max_",
    "clamp_min_", "clip_", "cos_", "cosh_", "deg2rad_", "detach_", "erf_", "erfc_", "exp2_",
    "exp_", "expm1_", "fill_", "fix_", "floor_", "frac_", "i0_", "log10_", "log1p_", "log2_",
    "log_", "logit_", "neg_", "negative_", "rad2deg_", "reciprocal_", "relu_", "round_",
    "rsqrt_", "sigmoid_", "sin_", "sinc_", "sinh_", "sqrt_", "square_", "tan_", "tanh_",
    "trunc_", "xlogy_", "zero_")
for _name in _TOP_LEVEL_INPLACE:
    if _name not in FUNCTIONS and hasattr(Tensor, _name):
        FUNCTIONS[_name] = getattr(Tensor, _name)
del _name
