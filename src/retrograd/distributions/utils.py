"""Helpers the distributions share (``torch.distributions.utils``): parameters broadcast
to one shape, probabilities and logits converted into each other, and the lazily
computed parameter."""

from numbers import Number

from .._creation import arange, empty, tensor
from .._dtype import get_default_dtype
from .._tensor import Tensor
from ..autograd.grad_mode import enable_grad
from ..ops.dtype_info import finfo
from ..ops.shape import broadcast_tensors

__all__ = ["broadcast_all", "clamp_probs", "lazy_property", "logits_to_probs",
           "probs_to_logits", "standard_normal", "sum_rightmost", "tril_matrix_to_vec",
           "vec_to_tril_matrix"]


def broadcast_all(*values):
    """The values as tensors of one shape: numbers become tensors of the first tensor's
    dtype and device (of the default dtype when there is none)."""
    if not all(isinstance(v, (Tensor, Number)) for v in values):
        raise ValueError("Input arguments must all be instances of Number, "
                         "torch.Tensor or objects implementing __torch_function__.")
    if not all(isinstance(v, Tensor) for v in values):
        like = next((v for v in values if isinstance(v, Tensor)), None)
        options = ({"dtype": get_default_dtype()} if like is None
                   else {"dtype": like.dtype, "device": like.device})
        values = [v if isinstance(v, Tensor) else tensor(v, **options) for v in values]
    return broadcast_tensors(*values)


def sum_rightmost(value, dim):
    """``value`` summed over its ``dim`` rightmost dims."""
    if dim == 0:
        return value
    return value.reshape(value.shape[:-dim] + (-1,)).sum(-1)


def clamp_probs(probs):
    """Probabilities kept ``eps`` away from 0 and 1, so that their logits are finite."""
    eps = finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def logits_to_probs(logits, is_binary=False):
    """Probabilities from logits: the sigmoid of one event's, else the softmax over the
    last dim."""
    return logits.sigmoid() if is_binary else logits.softmax(-1)


def probs_to_logits(probs, is_binary=False):
    """Logits from (clamped) probabilities: log-odds of one event's, else their log."""
    ps = clamp_probs(probs)
    return ps.log() - (-ps).log1p() if is_binary else ps.log()


class lazy_property:  # noqa: N801 (torch.distributions.utils.lazy_property)
    """A parameter computed from another on first read, then kept on the instance (so
    ``Categorical(logits=...)`` computes its probs only if asked). Computed with grad
    mode on: the cached value must carry the history whatever mode reads it first."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        self.__doc__ = wrapped.__doc__
        self.__name__ = wrapped.__name__

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return self
        with enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


def standard_normal(shape, like):
    """Standard normal draws of ``shape`` in ``like``'s dtype and on its device."""
    return empty(shape, dtype=like.dtype, device=like.device).normal_()


def _tril_mask(n, diag, device):
    """Where a row-major n x n matrix is on or below diagonal ``diag``."""
    rows = arange(n, device=device)
    return rows < rows.view(-1, 1) + (diag + 1)


def tril_matrix_to_vec(mat, diag=0):
    """The entries of (a batch of) square ``mat`` on and below diagonal ``diag``, row by
    row."""
    n = mat.shape[-1]
    if diag < -n or diag >= n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    return mat[..., _tril_mask(n, diag, mat.device)]


def vec_to_tril_matrix(vec, diag=0):
    """The inverse of :func:`tril_matrix_to_vec`: (a batch of) D x D matrices, zero above
    diagonal ``diag``, D the root of ``D**2 + (1 + 2 diag) D - |diag| (diag + 1) = 2 len``."""
    b = 1 + 2 * diag
    n = (-b + (b * b + 8 * vec.shape[-1] + 4 * abs(diag) * (diag + 1)) ** 0.5) / 2
    if round(n) - n > finfo(vec.dtype).eps:
        raise ValueError(f"The size of last dimension is {vec.shape[-1]} which cannot be "
                         "expressed as the lower triangular part of a square D x D matrix.")
    n = round(n)
    mat = vec.new_zeros(vec.shape[:-1] + (n, n))
    mat[..., _tril_mask(n, diag, vec.device)] = vec
    return mat
