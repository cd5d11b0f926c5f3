"""``F.scaled_dot_product_attention``: PyTorch's math reference, which
``nn.MultiheadAttention`` also takes when it returns no weights (as PyTorch's does)."""

import math

from .. import _autocast, _dtype
from .._tensor import wrap
from ..backend import on_device
from ..ops import nn_ops as _nn
from ._functional_dropout import dropout


def _check(query, key, value, attn_mask, dropout_p):
    """PyTorch's checks of sdpa's operands, in its order and words."""
    q, k, v = (t.dtype for t in (query, key, value))
    if min(t.ndim for t in (query, key, value)) < 2:
        raise RuntimeError(f"Expected query, key, and value to all be  at least 2 dimensional, "
                           f"but got query.dim: {query.ndim} key.dim: {key.ndim} and "
                           f"value.dim: {value.ndim} instead.")
    if not q == k == v:
        raise RuntimeError(f"Expected query, key, and value to have the same dtype, but got "
                           f"query.dtype: {_cpp(q)} key.dtype: {_cpp(k)} and value.dtype: "
                           f"{_cpp(v)} instead.")
    if attn_mask is not None and attn_mask.dtype not in (_dtype.bool, q):
        raise RuntimeError(f"Expected attn_mask dtype to be bool or float or to match query "
                           f"dtype, but got attn_mask.dtype: {_cpp(attn_mask.dtype)} and  "
                           f"query.dtype: {_cpp(q)} instead.")
    if dropout_p > 1:  # (PyTorch checks it where it drops out: above 0; a RuntimeError)
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got "
                           f"{dropout_p}")


def _cpp(dtype):
    return _dtype.CPP_NAMES[dtype.np.name]


def _gqa_heads(query, t):
    """Key or value ``t`` with each of its heads repeated for the query heads it serves."""
    heads, kv_heads = query.size(-3), t.size(-3)
    if kv_heads and heads % kv_heads:
        raise RuntimeError("Number of heads in key and value must divide the number of "
                           "heads in ")  # (PyTorch's message ends so)
    return t if heads == kv_heads or not kv_heads else t.repeat_interleave(heads // kv_heads,
                                                                              -3)


def _causal(scores, device):
    """The (L, S) mask of ``is_causal``: query i sees keys 0 to i."""
    shape = scores.shape[-2:]
    return wrap(on_device(device, lambda xp: xp.tril(xp.ones(shape, dtype=bool))))


@_autocast.policy("scaled_dot_product_attention")
def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None, enable_gqa=False):
    """softmax(q k^T * scale + mask) v, PyTorch's math reference. With ``enable_gqa``,
    key and value may have fewer heads (dim -3) than query, a divisor of its count: each
    serves that many consecutive query heads. A query whose keys are all masked out
    attends to nothing (zeros, and no gradient), as PyTorch's safe softmax."""
    _check(query, key, value, attn_mask, dropout_p)
    if enable_gqa:
        key, value = (_gqa_heads(query, t) for t in (key, value))
    E = query.shape[-1]
    scale = (1 / math.sqrt(E) if E else math.inf) if scale is None else scale
    scores = (query * scale) @ key.transpose(-2, -1)
    if attn_mask is not None and attn_mask.dtype == _dtype.bool:
        if is_causal:
            attn_mask = attn_mask.logical_and(_causal(scores, attn_mask.device))
        attn = _nn.masked_softmax(scores, attn_mask)
    else:
        if attn_mask is not None:
            scores = scores + attn_mask
        attn = _nn.causal_softmax(scores) if is_causal else _nn.safe_softmax(scores, -1)
    if dropout_p > 0:
        attn = dropout(attn, dropout_p)
    return attn @ value
