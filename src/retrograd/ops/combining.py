"""Tensors built from the elements of others: meshgrid, cartesian_prod, combinations
and kron, composites of existing ops as in PyTorch (their grad_fn shows the inner ops)."""

import itertools
import warnings

from .._dtype import int64
from .._tensor import wrap
from ..backend import get_array_module
from ._registry import apply, register
from .joining import _tensor_list, stack
from .shape import _unsafe_view

__all__ = ["meshgrid", "cartesian_prod", "combinations", "kron"]


def _tensors_arg(tensors, fn):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    return _tensor_list(list(tensors), fn)


@register(method=False)
def meshgrid(*tensors, indexing=None):
    """Coordinate grids from 1-D (or 0-d) tensors: ``indexing='ij'`` (matrix, the
    default) or ``'xy'`` (Cartesian: the first two dims swapped)."""
    tensors = _tensors_arg(tensors, "meshgrid")
    if indexing is None:
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass "
                      "the indexing argument.", UserWarning, stacklevel=2)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but '
                           f'received: {indexing}')
    for t in tensors:
        if t._data.ndim > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list "
                               f"but got: {t}")
    swap = indexing == "xy" and len(tensors) >= 2
    if swap:
        tensors = [tensors[1], tensors[0], *tensors[2:]]
    shape = [t._data.size for t in tensors]
    n = len(tensors)
    grids = [t.reshape(*(s if i == k else 1 for k, s in enumerate(shape))).expand(*shape)
             for i, (t, s) in enumerate(zip(tensors, shape, strict=True))]
    if swap:  # the grids of the first two inputs, back in their order
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids) if n else ()


@register(method=False)
def cartesian_prod(*tensors):
    """Every combination of one element from each 1-D tensor, as rows."""
    tensors = _tensors_arg(tensors, "cartesian_prod")
    if len(tensors) == 1:
        return tensors[0]
    return stack([g.flatten() for g in meshgrid(*tensors, indexing="ij")], 1)


@register(method=False)
def combinations(input, r=2, with_replacement=False):
    """The length-``r`` subsequences of a 1-D tensor (itertools.combinations order)."""
    if input._data.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input._data.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return input.new_empty((0,))
    pick = itertools.combinations_with_replacement if with_replacement else \
        itertools.combinations
    xp = get_array_module(input._data)
    idx = xp.asarray(list(pick(range(input._data.shape[0]), r)), dtype=int64.np).reshape(-1, r)
    return stack([input[wrap(xp.ascontiguousarray(idx[:, k]))] for k in range(r)], 1)


@register
def kron(input, other, *, out=None):
    """The Kronecker product (dims aligned from the right, as PyTorch)."""
    nd = max(input._data.ndim, other._data.ndim)
    a = input.reshape((1,) * (nd - input._data.ndim) + tuple(input._data.shape))
    b = other.reshape((1,) * (nd - other._data.ndim) + tuple(other._data.shape))
    prod = a.reshape(*(x for s in a._data.shape for x in (s, 1))) * \
        b.reshape(*(x for s in b._data.shape for x in (1, s)))
    # a fresh product: PyTorch's _unsafe_view of it (UnsafeViewBackward0)
    return apply(_unsafe_view, (prod,), (tuple(a._data.shape[k] * b._data.shape[k]
                                                for k in range(nd)),))
