"""Searching sorted sequences: searchsorted and bucketize (PyTorch's binary search, a
backend function, with PyTorch's argument checks and int64/int32 results)."""


import math

from .._dtype import int32, int64
from .._tensor import Tensor, wrap
from ..backend.functions import functions
from ._registry import register
from ._views import xp_of

__all__ = ["searchsorted", "bucketize"]


def _search(seq, values, right, side, sorter, out_int32, name="torch.searchsorted"):
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"{name}(): side can only be 'left' or 'right' but got {side}")
        if right and side == "left":
            raise RuntimeError(f"{name}(): side and right can't be set to opposites, got side "
                               f"of left while right was True")
        right = side == "right"
    s = seq._data
    xp = xp_of((seq, values))  # (under vmap: the innermost batch's namespace)
    v = values._data if isinstance(values, Tensor) else xp.asarray(values)  # (no cast)
    if sorter is not None:
        s = xp.take_along_axis(s, sorter._data, -1)
    if s.ndim > 1 and s.shape[:-1] != v.shape[:-1]:
        raise RuntimeError(f"{name}(): boundaries tensor should be 1 dimension or the first "
                           f"N-1 dimensions of boundaries tensor and input value tensor "
                           f"must match, but we got boundaries tensor {list(s.shape)} and "
                           f"input value tensor {list(v.shape)}")
    if s.ndim <= 1:  # one sequence for every value
        s_rows, v_rows = s.reshape(1, -1), v.reshape(1, -1)
    else:
        rows = math.prod(s.shape[:-1])
        s_rows, v_rows = s.reshape(rows, s.shape[-1]), v.reshape(rows, v.shape[-1])
    out = functions(xp).search_sorted(s_rows, v_rows, right)
    return wrap(out.reshape(v.shape).astype(int32.np if out_int32 else int64.np, copy=False))


@register(method=False)
def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None,
                 sorter=None, out=None):
    """Where ``input`` would be inserted into the innermost dim of ``sorted_sequence``."""
    return _search(sorted_sequence, input, right, side, sorter, out_int32)


@register(method=False)
def bucketize(input, boundaries, *, out_int32=False, right=False, out=None):
    """The bucket of each element: ``boundaries[i-1] < x <= boundaries[i]`` (``right``:
    ``boundaries[i-1] <= x < boundaries[i]``)."""
    if boundaries._data.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim("
                           f"{boundaries._data.ndim})")
    return _search(boundaries, input, right, None, None, out_int32)
