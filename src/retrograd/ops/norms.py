"""``torch.norm``: vector p-norms (the reduction op) and, for ``p="nuc"`` on two dims,
the nuclear norm (linear algebra's matrix norm), so neither family imports the other."""

import builtins
import math

from .._dtype import is_inexact
from ._registry import _pretty, apply, register
from .linalg_decomp import matrix_norm
from .reduction import _no_out, _norm, _reduce_dims

__all__ = ["norm"]


@register(method=False)
def norm(input, p="fro", dim=None, keepdim=False, out=None, dtype=None):
    """Vector p-norm over ``dim`` (all dims by default): p = 2 ('fro'), 1, inf, -inf, 0, any.

    >>> retrograd.tensor([3., 4.]).norm()
    tensor(5.)
    """
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
    if dtype is not None and dtype.np != input._data.dtype:
        input = input.to(dtype)
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
    return norm(self, p, dim, keepdim, dtype=dtype)


def _matrix_norm_error(input, p, dims):
    dims = dims if dims is not None else tuple(range(input._data.ndim))
    if len(dims) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got "
                           f"{' '.join(str(d) for d in dims)}")
    raise RuntimeError(f"linalg.matrix_norm: Order {p} not supported.")
