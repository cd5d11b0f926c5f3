"""``torch.norm``: vector p-norms (the reduction op) and, for ``p="nuc"`` on two dims,
the nuclear norm (linear algebra's matrix norm), so neither family imports the other;
``renorm``, which caps the p-norm of each slice along a dim."""

import builtins
import math

from .._dtype import OPMATH, is_inexact, dtype_arg
from .._tensor import Tensor, _wrap_dim
from ..backend.functions import functions
from ._registry import _pretty, apply, apply_inplace, defop, register, register_pair
from .linalg_decomp import check_norm_dtype, matrix_norm
from .reduction import _no_out, _norm, _reduce_dims

__all__ = ["norm", "renorm"]


@register(method=False)
def norm(input, p="fro", dim=None, keepdim=False, out=None, dtype=None):
    """Vector p-norm over ``dim`` (all dims by default): p = 2 ('fro'), 1, inf, -inf, 0, any.

    >>> retrograd.tensor([3., 4.]).norm()
    tensor(5.)
    """
    dtype = dtype_arg(dtype, "norm")
    _no_out(out, "norm")
    dims = None if dim is None else ((dim,) if isinstance(dim, int) else tuple(dim))
    if isinstance(p, str):
        if p == "nuc" and len(dims if dims is not None else input._data.shape) == 2:
            return matrix_norm(input, "nuc", dims or (-2, -1), keepdim, dtype=dtype)
        if p != "fro" or (dims is not None and len(dims) > 2):
            _matrix_norm_error(input, p, dims)
        p = 2
    elif p is None:
        p = 2
    if not is_inexact(input._data.dtype):
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor "
                           f"as input. Got {_pretty(input._data.dtype)}")
    if dtype is not None:
        check_norm_dtype(input, dtype, "linalg.vector_norm")
        if dtype.np != input._data.dtype:
            input = input.to(dtype)
    if input._data.dtype.kind == "c":  # the norm of the moduli: a real result
        input = input.abs()
    explicit = bool(dims)  # a 0-d input's explicit dim takes no shortcut
    dims = _reduce_dims(dims, input._data.ndim)
    if math.isinf(p):
        if input._data.size == 0 and builtins.any(input._data.shape[d] == 0 for d in dims):
            raise RuntimeError("linalg.vector_norm cannot compute the inf norm on an empty "
                               "tensor because the operation does not have an identity")
    shape = input._data.shape
    trivial = builtins.all(shape[d] == 1 for d in dims) and (len(shape) > 0 or not explicit)
    return apply(_norm, (input,), (float(p), dims, keepdim, trivial))


@register(function=False, name="norm")
def _norm_method(self, p="fro", dim=None, keepdim=False, dtype=None):
    dtype = dtype_arg(dtype, "norm")
    return norm(self, p, dim, keepdim, dtype=dtype)


def _matrix_norm_error(input, p, dims):
    dims = dims if dims is not None else tuple(range(input._data.ndim))
    if len(dims) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got "
                           f"{' '.join(str(d) for d in dims)}")
    raise RuntimeError(f"linalg.matrix_norm: Order {p} not supported.")


# ---- renorm -----------------------------------------------------------------------------------

def _slice_norm(xp, a, p, dims):
    """The p-norm of each slice (over ``dims``, kept), in the accumulation dtype PyTorch
    takes (float32 for the half types)."""
    a = xp.abs(a.astype(OPMATH.get(a.dtype, a.dtype)))
    if math.isinf(p):
        return a.max(axis=dims, keepdims=True, initial=0)
    if p == 1:
        return a.sum(axis=dims, keepdims=True)
    if p == 2:
        return xp.sqrt((a * a).sum(axis=dims, keepdims=True))
    return (a ** p).sum(axis=dims, keepdims=True) ** (1 / p)


def _other_dims(a, dim):
    return tuple(d for d in range(a.ndim) if d != dim)


def _renorm_fwd(xp, self, p, dim, maxnorm):
    norm = _slice_norm(xp, self, p, _other_dims(self, dim))
    factor = xp.where(norm > maxnorm, maxnorm / (norm + 1e-7), 1).astype(norm.dtype)
    return (self * factor).astype(self.dtype)


def _norm_grad(xp, self, p, norm, go, dims):
    """The gradient of each slice's p-norm times ``go``, PyTorch's norm_backward (0 where
    the norm is 0; ties of an inf-norm share it)."""
    sgn = xp.sign(self)
    with functions(xp).errstate(divide="ignore", invalid="ignore"):
        if math.isinf(p):
            mask = (xp.abs(self) == norm) | xp.isnan(self)
            return sgn * (go / mask.sum(axis=dims, keepdims=True)) * mask
        if p == 1:
            return sgn * go
        if p == 2:
            return go * xp.where(norm == 0, 0, self / norm)
        if p < 1:
            scaled = sgn * xp.where(self == 0, 0, xp.abs(self) ** (p - 1))
            return scaled * go * norm ** (1 - p)
        scaled = sgn * xp.abs(self) ** (p - 1) if p < 2 else self * xp.abs(self) ** (p - 2)
        return scaled * xp.where(norm == 0, 0, go / norm ** (p - 1))


def _renorm_grad(xp, grad, self, p, dim, maxnorm):
    """PyTorch's renorm_backward: slices under ``maxnorm`` pass the gradient through; the
    scaled ones also carry the derivative of their factor."""
    dims = _other_dims(self, dim)
    norm = _slice_norm(xp, self, p, dims)
    go = (self * grad).sum(axis=dims, keepdims=True, dtype=norm.dtype)
    inv = 1 / (norm + 1e-7)
    scaled = inv * maxnorm * grad - maxnorm * inv * inv * _norm_grad(xp, self, p, norm, go, dims)
    return xp.where(norm > maxnorm, scaled, grad).astype(grad.dtype)


def _renorm_jvp(xp, self_t, self, p, dim, maxnorm):
    """The tangent: the factor's own derivative joins ``factor * self_t`` where it scales."""
    dims = _other_dims(self, dim)
    norm = _slice_norm(xp, self, p, dims)
    one = xp.ones(norm.shape, dtype=norm.dtype)
    norm_t = (_norm_grad(xp, self, p, norm, one, dims) * self_t).sum(axis=dims, keepdims=True)
    inv = 1 / (norm + 1e-7)
    scaled = inv * maxnorm * self_t - maxnorm * inv * inv * norm_t * self
    return xp.where(norm > maxnorm, scaled, self_t).astype(self_t.dtype)


_renorm = defop("renorm", _renorm_fwd, vjp={"self": _renorm_grad}, jvp=_renorm_jvp)


def _renorm_args(input, p, dim, maxnorm):
    p, maxnorm = (v.item() if isinstance(v, Tensor) else v for v in (p, maxnorm))
    ndim = input._data.ndim
    if ndim < 2:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {ndim} dimensions")
    if not p > 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if not maxnorm >= 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    dim = _wrap_dim(dim, ndim)
    if not is_inexact(input._data.dtype):
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor "
                           f"as input. Got {_pretty(input._data.dtype)}")
    return p, dim, maxnorm


def _renorm_fn(input, p, dim, maxnorm, *, out=None):
    return apply(_renorm, (input,), _renorm_args(input, p, dim, maxnorm))


def _renorm_fn_(self, p, dim, maxnorm):
    return apply_inplace(_renorm, self, (), _renorm_args(self, p, dim, maxnorm))


renorm, renorm_ = register_pair(
    "renorm", _renorm_fn, _renorm_fn_,
    """Each slice along ``dim`` whose p-norm exceeds ``maxnorm`` scaled down to it (by
    ``maxnorm / (norm + 1e-7)``, as PyTorch)."""
)
