"""``nn.functional``'s linear maps: ``linear`` (ATen's addmm or matmul paths) and
``bilinear``."""

from .. import _autocast
from ..ops import nn_ops as _nn
from ..ops.linalg import einsum as _einsum

__all__ = ["linear", "bilinear"]


@_autocast.policy("linear")
def linear(input, weight, bias=None):
    """``input @ weight.T + bias``, taking ATen's paths: one addmm on the rows of a
    contiguous input when the bias is a vector (AddmmBackward0, ViewBackward0), else
    matmul and an in-place add."""
    if input.ndim == 0 or weight.ndim == 0:
        raise RuntimeError(f"both arguments to linear need to be at least 1D, but they are "
                           f"{input.ndim}D and {weight.ndim}D")
    if bias is not None and (input.ndim == 2 or _vector_like(bias) and bias.is_contiguous()
                             and input.is_contiguous()):
        return _nn.linear(input, weight, bias)
    out = input.matmul(weight.t())
    return out if bias is None else out.add_(bias)


def _vector_like(bias):
    """``bias.dim() == 1 || bias.squeeze().dim() == 1``, without making the view."""
    return bias.ndim == 1 or sum(s != 1 for s in bias.shape) == 1


def bilinear(input1, input2, weight, bias=None):
    """``y_k = x1 W_k x2 + b_k`` as one einsum."""
    out = _einsum("...i,kij,...j->...k", input1, weight, input2)
    return out if bias is None else out + bias
