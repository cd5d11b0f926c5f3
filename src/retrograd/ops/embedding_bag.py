"""``embedding_bag``: the rows of ``weight`` that bags of indices look up, reduced per bag
by sum (each row times its ``per_sample_weights``), mean or max, without the (indices, D)
lookup reaching the caller (``EmbeddingBagBackward0``).

The public function gives each index its bag, from the shapes and an ordered search of
the offsets (no value read but by PyTorch's checks of the offsets, so the bags form
under vmap and on the meta device too); an
index in no bag (``padding_idx``, or past the last offset with ``include_last_offset``)
gets the bag ``num_bags``, which the op fills and drops. The op then adds the looked-up
rows into their bags (divided by the bags' counts for mean), or keeps each bag's
per-feature maximum and the position it came from (max: the gradient goes back to that
row alone). An empty bag is zeros.
"""

import numbers

from .._dtype import legacy_type_name
from .._tensor import Tensor, wrap
from ..autograd.node import sum_acc
from ..backend import get_array_module
from ..backend.functions import functions
from ._registry import apply, defop
from .nn_ops import _embedding_renorm

__all__ = ["embedding_bag"]

_MODES = ("sum", "mean", "max")
_TORCH_TENSOR = "<class 'torch.Tensor'>"  # (a Tensor's type as PyTorch's messages print it)


def _in_bags(xp, grad, bags, num_bags):
    """Each index's row of ``grad`` (its bag's), zero for an index in no bag."""
    if not num_bags:
        return xp.zeros((bags.shape[0], grad.shape[1]), dtype=grad.dtype)
    in_bag = bags < num_bags
    rows = xp.take(grad, xp.where(in_bag, bags, 0), 0)
    return rows * xp.expand_dims(in_bag, 1)


def _rows_grad(xp, g_rows, indices, weight_shape, scale_grad_by_freq):
    """Each index's gradient row added into the weight row it looked up (divided by how
    often that row was looked up, with ``scale_grad_by_freq``)."""
    n, d = weight_shape
    if scale_grad_by_freq:
        counts = xp.bincount(indices, minlength=n)
        g_rows = g_rows / xp.expand_dims(counts[indices], 1)
    return functions(xp).index_add(xp.zeros((n, d), dtype=g_rows.dtype), indices, g_rows)


def _sum_forward(xp, weight, indices, bags, counts, per_sample_weights, num_bags,
                 scale_grad_by_freq):
    rows = xp.take(weight, indices, 0)
    if per_sample_weights is not None:
        rows = rows * xp.expand_dims(per_sample_weights, 1)
    out = functions(xp).index_add(
        xp.zeros((num_bags + 1, weight.shape[1]), dtype=weight.dtype), bags, rows)[:num_bags]
    return out if counts is None else out / xp.expand_dims(counts, 1)


def _sum_weight_grad(xp, grad, indices, bags, counts, per_sample_weights, weight_shape,
                     num_bags, scale_grad_by_freq):
    if counts is not None:
        grad = grad / xp.expand_dims(counts, 1)
    g_rows = _in_bags(xp, grad, bags, num_bags)
    if per_sample_weights is not None:
        g_rows = g_rows * xp.expand_dims(per_sample_weights, 1)
    return _rows_grad(xp, g_rows, indices, weight_shape, scale_grad_by_freq)


_bag_sum = defop(
    "embedding_bag", _sum_forward,
    inputs=("weight", "indices", "bags", "counts", "per_sample_weights"),
    vjp={"weight": _sum_weight_grad,
         "per_sample_weights": lambda xp, grad, weight, indices, bags, num_bags:
         sum_acc(xp, _in_bags(xp, grad, bags, num_bags) * xp.take(weight, indices, 0),
                 axis=1)},
    jvp="multilinear")


def _max_forward(xp, weight, indices, bags, num_bags, scale_grad_by_freq):
    """Each bag's per-feature maximum, and the position (in ``indices``) it came from: the
    first that holds it; an empty bag's maximum is 0 and its position ``len(indices)``."""
    length, d = indices.shape[0], weight.shape[1]
    rows = xp.take(weight, indices, 0)
    out = xp.full((num_bags + 1, d), -xp.inf, dtype=weight.dtype)
    functions(xp).ufunc_at("maximum", out, bags, rows)
    at = xp.full((num_bags + 1, d), length, dtype=indices.dtype)
    position = xp.expand_dims(xp.arange(length, dtype=indices.dtype), 1)
    held = rows == xp.take(out, bags, 0)
    functions(xp).ufunc_at("minimum", at, bags, xp.where(held, position, length))
    out, at = out[:num_bags], at[:num_bags]
    return xp.where(at < length, out, 0), at


def _max_weight_grad(xp, grad, indices, max_indices, weight_shape, scale_grad_by_freq):
    """Each bag's gradient to the row its maximum came from, feature by feature."""
    n, d = weight_shape
    length = indices.shape[0]
    if not length:
        return xp.zeros((n, d), dtype=grad.dtype)
    held = max_indices < length
    rows = xp.take(indices, xp.where(held, max_indices, 0), 0)  # (bags, d): the weight row
    flat = rows * d + xp.arange(d)
    out = functions(xp).index_add(xp.zeros(n * d, dtype=grad.dtype), xp.reshape(flat, (-1,)),
                                  xp.reshape(xp.where(held, grad, 0), (-1,)))
    return xp.reshape(out, (n, d))


_bag_max = defop(
    "embedding_bag", _max_forward, inputs=("weight", "indices", "bags"),
    vjp={"weight": _max_weight_grad}, outputs=("result", "max_indices"),
    nondiff_outputs=("max_indices",), jvp="transpose")


def _index_tensor(t, name):
    if t._data.dtype.name not in ("int64", "int32"):
        raise RuntimeError(f"Expected tensor for argument #1 '{name}' to have one of the "
                           f"following scalar types: Long, Int; but got "
                           f"{legacy_type_name(t.dtype)} instead (while checking arguments for "
                           f"embedding_bag)")


def _check_offsets(xp, off, length):
    """PyTorch's checks of the offsets' values (each value read only to name it)."""
    if not off.shape[0]:
        return
    first, last = off[:1], off[off.shape[0] - 1:]
    if functions(xp).any_true(first != 0):
        raise RuntimeError(f"offsets[0] has to be 0, i.e., the first sequence in the "
                           f"mini-batch has to start from position 0. However, got "
                           f"{int(first[0])}")
    if functions(xp).any_true(last > length):
        raise RuntimeError(f"offsets[-1] can not be greater than input's length {length} "
                           f"but got offsets[-1] of {int(last[0])}")
    if functions(xp).any_true(off[1:] < off[:-1]):  # (PyTorch reads such bags out of order)
        raise RuntimeError("embedding_bag: offsets must be non-decreasing")


def _bags(input, offsets, include_last_offset, padding_idx):
    """(flat indices, each one's bag, the number of bags), on the indices' device."""
    xp = get_array_module(input._data)
    idx = input._data
    if idx.ndim == 2:
        if offsets is not None:
            raise ValueError(f"if input is 2D, then offsets has to be None, as input is "
                             f"treated is a mini-batch of fixed length sequences. However, "
                             f"found offsets of type "
                             f"{_TORCH_TENSOR if isinstance(offsets, Tensor) else type(offsets)}")
        num_bags, n = idx.shape
        flat, bags = xp.reshape(idx, (-1,)), xp.repeat(xp.arange(num_bags), n)
    elif idx.ndim != 1:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension "
                         f"{idx.ndim}")
    else:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets._data.ndim != 1:
            raise ValueError("offsets has to be a 1D Tensor")
        _index_tensor(offsets, "offsets")
        off = offsets._data
        _check_offsets(xp, off, idx.shape[0])
        num_bags = max(off.shape[0] - 1, 0) if include_last_offset else off.shape[0]
        flat = idx
        positions = xp.arange(idx.shape[0])
        if off.shape[0]:  # (past the last offset, with include_last_offset: bag num_bags)
            bags = xp.searchsorted(off, positions, side="right") - 1
        else:
            bags = xp.zeros(idx.shape[0], dtype=positions.dtype)
    if padding_idx is not None:  # a padding entry is no member of its bag
        bags = xp.where(flat == padding_idx, num_bags, bags)
    return flat, bags, num_bags


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2,
                  scale_grad_by_freq=False, mode="mean", sparse=False,
                  per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """``torch.nn.functional.embedding_bag``: (bags, embedding_dim) from ``weight`` (see the
    module docstring)."""
    if not isinstance(weight, Tensor):
        raise TypeError(f"embedding_bag(): argument 'weight' must be Tensor, not "
                        f"{type(weight).__name__}")
    if mode not in _MODES:
        raise ValueError("mode has to be one of sum, mean or max")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. "
                                  f"per_sample_weights is only supported for mode='sum' (got "
                                  f"mode='{mode}'). Please open a feature request on GitHub.")
    if scale_grad_by_freq and mode == "max":
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if sparse:
        raise NotImplementedError("embedding_bag: sparse gradients are not supported")
    if weight._data.ndim != 2:
        raise RuntimeError("'weight' must be 2-D")
    _index_tensor(input, "indices")
    if per_sample_weights is not None and per_sample_weights.shape != input.shape:
        raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) "
                         f"is not None, then it must have the same shape as the input "
                         f"({input.shape})")
    n = weight._data.shape[0]
    if padding_idx is not None:
        if not isinstance(padding_idx, numbers.Integral) or not -n <= padding_idx < n:
            raise RuntimeError(f"padding_idx must be within the number of embeddings, {-n} "
                               f"through {n - 1}, but got {padding_idx}")
        padding_idx %= n
    indices, bags, num_bags = _bags(input, offsets, include_last_offset, padding_idx)
    xp = get_array_module(indices)
    bad = (indices < 0) | (indices >= n)
    if indices.shape[0] and functions(xp).any_true(bad):
        raise RuntimeError(f"embedding_bag: Expected idx >= 0 && idx < num_embeddings but "
                           f"found idx to be {int(indices[xp.nonzero(bad)[0][0]])}")
    if max_norm is not None:
        _embedding_renorm(weight, wrap(indices), max_norm, norm_type)
    idx_t, bags_t = wrap(indices), wrap(bags)
    freq = bool(scale_grad_by_freq)
    if mode == "max":
        return apply(_bag_max, (weight, idx_t, bags_t), (num_bags, freq))[0]
    counts = None
    if mode == "mean":  # (an empty bag divides its zeros by 1)
        ones = xp.ones(indices.shape[0], dtype=weight._data.dtype)
        c = functions(xp).index_add(xp.zeros(num_bags + 1, dtype=ones.dtype), bags, ones)
        counts = wrap(xp.maximum(c[:num_bags], 1))
    psw = None if per_sample_weights is None else per_sample_weights.reshape(-1)
    return apply(_bag_sum, (weight, idx_t, bags_t, counts, psw), (num_bags, freq))
