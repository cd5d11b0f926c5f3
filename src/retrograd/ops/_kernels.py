"""One dispatch for linear kernels that have a differentiable op of their own (im2col and
col2im, pixel and channel shuffles): by the value a rule holds, not by its namespace."""

from .._tensor import Tensor
from ..autograd._batched import Batched
from ..backend import get_array_module
from ._registry import apply

__all__ = ["run_kernel"]


def run_kernel(xp, kernel, op, a, *attrs):
    """``kernel(xp, a, *attrs)`` on arrays; on a batch of them (``is_grads_batched``,
    vectorized forward mode), on its data, the batch one more leading dim; on Tensors
    (under create_graph), the differentiable ``op``."""
    if isinstance(a, Tensor):
        return apply(op, (a,), attrs)
    if type(a) is Batched:
        return a.like(kernel(get_array_module(a.data), a.data, *attrs))
    return kernel(xp, a, *attrs)
