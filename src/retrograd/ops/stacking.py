"""Stacking and splitting along fixed dims: atleast_1d/2d/3d, dstack, column_stack,
row_stack, hsplit, vsplit and dsplit (views and cats, as PyTorch's composites)."""



from .._tensor import Tensor
from ._registry import register
from .joining import _tensor_list, cat, tensor_split, vstack

__all__ = ["atleast_1d", "atleast_2d", "atleast_3d", "dstack", "column_stack", "row_stack",
           "hsplit", "vsplit", "dsplit"]


def _atleast_view(t, n):
    """``t`` with at least ``n`` dims, as PyTorch makes it: unsqueeze, or a reshape of a
    0-d tensor."""
    s = t._data.shape
    if len(s) >= n:
        return t
    if len(s) == 0:
        return t.reshape((1,) * n)
    if n == 2 or len(s) == 2:
        return t.unsqueeze(0 if n == 2 else -1)
    return t.unsqueeze(0).unsqueeze(-1)  # 1-d to 3-d: (1, N, 1)


def _atleast(n):
    def fn(*tensors):
        if len(tensors) == 1 and isinstance(tensors[0], Tensor):
            return _atleast_view(tensors[0], n)
        ts = tensors[0] if len(tensors) == 1 else tensors
        return tuple(_atleast_view(t, n) for t in ts)
    fn.__name__ = fn.__qualname__ = f"atleast_{n}d"
    fn.__doc__ = f"The tensor(s) with at least {n} dims (views)."
    return register(fn, method=False)


atleast_1d = _atleast(1)
atleast_2d = _atleast(2)
atleast_3d = _atleast(3)


@register(method=False)
def dstack(tensors):
    """Join along the third dim (after atleast_3d)."""
    tensors = _tensor_list(tensors, "dstack")
    return cat([_atleast_view(t, 3) for t in tensors], 2)


@register(method=False)
def column_stack(tensors):
    """Join as columns: 0-d and 1-d tensors become columns, the others join along dim 1."""
    tensors = _tensor_list(tensors, "column_stack")
    return cat([t.reshape(t._data.size, 1) if t._data.ndim <= 1 else t for t in tensors], 1)


@register(method=False)
def row_stack(tensors):
    """Alias of :func:`vstack`."""
    return vstack(tensors)


def _split_fn(name, dim, min_dims):
    def fn(input, indices_or_sections):
        nd = input._data.ndim
        if nd < min_dims:
            raise RuntimeError(f"torch.{name} requires a tensor with at least {min_dims} "
                               f"dimension, but got a tensor with {nd} dimensions!")
        d = 0 if name == "hsplit" and nd == 1 else dim
        if isinstance(indices_or_sections, int):
            size = input._data.shape[d]
            if indices_or_sections == 0 or size % indices_or_sections:
                raise RuntimeError(f"torch.{name} attempted to split along dimension {d}, but "
                                   f"the size of the dimension {size} is not divisible by the "
                                   f"split_size {indices_or_sections}!")
        return tensor_split(input, indices_or_sections, d)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``tensor_split`` along dim {dim} (sections must divide it evenly)."
    return register(fn)


hsplit = _split_fn("hsplit", 1, 1)
vsplit = _split_fn("vsplit", 0, 2)
dsplit = _split_fn("dsplit", 2, 3)
