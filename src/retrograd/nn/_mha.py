"""Multi-head attention: PyTorch's ``F.multi_head_attention_forward`` and the batch-first
core that it and ``nn.MultiheadAttention`` share.

The core works on (N, L, E), the layout the projections and per-head GEMMs want; the
public function keeps PyTorch's sequence-first (L, N, E) signature and transposes.
"""

import math

from .. import _creation, _dtype
from ..ops import nn_ops as _nn
from ..ops.joining import cat
from ._functional_attention import scaled_dot_product_attention
from ._functional_dropout import dropout
from ._functional_linear import linear


def _float_mask(mask, dtype, name):
    """Boolean masks (True = masked out) become additive -inf masks; float masks are
    added as they are; others are refused, as PyTorch's ``_canonical_mask`` does."""
    if mask.dtype == _dtype.bool:
        return _creation.zeros(mask.shape, dtype=dtype, device=mask.device).masked_fill(
            mask, -math.inf)
    if not mask.is_floating_point():
        raise AssertionError(f"only bool and floating types of {name} are supported")
    return mask


def _pad_column(mask):
    """One more key position, not masked (bias_k or the zero attention)."""
    return None if mask is None else _nn.constant_pad(mask, (0, 1), 0)


def check_shapes(query, key, value, key_padding_mask, attn_mask, num_heads):
    """PyTorch's ``_mha_shape_check``: whether the input is batched."""
    if query.ndim not in (2, 3):
        raise AssertionError("query should be unbatched 2D or batched 3D tensor but received "
                             f"{query.ndim}-D query tensor")
    nd = query.ndim
    kind = "For batched (3-D) `query`" if nd == 3 else "For unbatched (2-D) `query`"
    if key.ndim != nd or value.ndim != nd:
        raise AssertionError(f"{kind}, expected `key` and `value` to be {nd}-D but found "
                             f"{key.ndim}-D and {value.ndim}-D tensors respectively")
    if key_padding_mask is not None and key_padding_mask.ndim != nd - 1:
        raise AssertionError(f"{kind}, expected `key_padding_mask` to be `None` or {nd - 1}-D "
                             f"but found {key_padding_mask.ndim}-D tensor instead")
    if attn_mask is not None and attn_mask.ndim not in (2, 3):
        raise AssertionError(f"{kind}, expected `attn_mask` to be `None`, 2-D or 3-D but found "
                             f"{attn_mask.ndim}-D tensor instead")
    if nd == 2 and attn_mask is not None and attn_mask.ndim == 3:
        expected = (num_heads, query.shape[0], key.shape[0])
        if tuple(attn_mask.shape) != expected:
            raise AssertionError(f"Expected `attn_mask` shape to be {expected} but got "
                                 f"{attn_mask.shape}")
    return nd == 3


def attention(query, key, value, num_heads, in_proj_weight, in_proj_bias, out_proj_weight,
              out_proj_bias, key_padding_mask=None, need_weights=True, attn_mask=None,
              average_attn_weights=True, is_causal=False, dropout_p=0.0, training=True,
              bias_k=None, bias_v=None, add_zero_attn=False, q_proj_weight=None,
              k_proj_weight=None, v_proj_weight=None, static_k=None, static_v=None):
    """Batch-first (N, L, E) multi-head attention; returns (output, weights or None).

    ``q_proj_weight`` given means separate projections (kdim/vdim); ``bias_k``/``bias_v``
    (1, 1, E) and ``add_zero_attn`` append key positions; ``static_k``/``static_v``
    (N * heads, S, head_dim) replace the projected keys/values. ``is_causal`` masks the
    future when no ``attn_mask`` is given.
    """
    n, tl, e = query.shape
    hd = e // num_heads
    if hd * num_heads != e:
        raise AssertionError(f"embed_dim {e} not divisible by num_heads {num_heads}")
    if q_proj_weight is not None:
        bq, bk, bv = in_proj_bias.chunk(3) if in_proj_bias is not None else (None,) * 3
        q = linear(query, q_proj_weight, bq)
        k, v = linear(key, k_proj_weight, bk), linear(value, v_proj_weight, bv)
    elif query is key and key is value:  # self-attention: one GEMM for q, k and v
        q, k, v = linear(query, in_proj_weight, in_proj_bias).chunk(3, -1)
    else:
        wq, wk, wv = in_proj_weight.chunk(3)
        bq, bk, bv = in_proj_bias.chunk(3) if in_proj_bias is not None else (None,) * 3
        q, k, v = linear(query, wq, bq), linear(key, wk, bk), linear(value, wv, bv)
    sl = k.shape[1]
    mask = None
    if attn_mask is not None:
        mask = _float_mask(attn_mask, q.dtype, "attn_mask")
        if mask.ndim == 2 and tuple(mask.shape) != (tl, sl):
            raise RuntimeError(f"The shape of the 2D attn_mask is {mask.shape}, but should be "
                               f"{(tl, sl)}.")
        if mask.ndim == 3 and tuple(mask.shape) != (n * num_heads, tl, sl):
            raise RuntimeError(f"The shape of the 3D attn_mask is {mask.shape}, but should be "
                               f"{(n * num_heads, tl, sl)}.")
    kpm = (None if key_padding_mask is None
           else _float_mask(key_padding_mask, q.dtype, "key_padding_mask"))
    if (bias_k is None) != (bias_v is None):
        raise AssertionError("bias_k is set but bias_v is None" if bias_v is None
                             else "bias_v is set but bias_k is None")
    if bias_k is not None:
        if static_k is not None or static_v is not None:
            raise AssertionError("bias cannot be added to static "
                                 f"{'key' if static_k is not None else 'value'}.")
        k = cat([k, bias_k.expand(n, 1, e)], 1)
        v = cat([v, bias_v.expand(n, 1, e)], 1)
        mask, kpm = _pad_column(mask), _pad_column(kpm)
    q = q.reshape(n, tl, num_heads, hd).transpose(1, 2)
    k = _heads(k, static_k, "k", n, num_heads, hd)
    v = _heads(v, static_v, "v", n, num_heads, hd)
    if add_zero_attn:
        zeros = _creation.zeros(n, num_heads, 1, hd, dtype=k.dtype, device=k.device)
        k, v = cat([k, zeros], 2), cat([v, zeros], 2)
        mask, kpm = _pad_column(mask), _pad_column(kpm)
    sl = k.shape[2]
    if mask is not None and mask.ndim == 3:
        mask = mask.reshape(n, num_heads, tl, sl)
    if kpm is not None:
        for d, size in enumerate((n, sl)):
            if kpm.shape[d] != size:
                raise AssertionError(f"Expected key_padded_mask.shape[{d}] to be {size}, but "
                                     f"got {kpm.shape[d]}")
        kpm = kpm.reshape(n, 1, 1, sl)
        mask = kpm if mask is None else mask + kpm
    if is_causal and mask is None:
        mask = _creation.full((tl, sl), -math.inf, dtype=q.dtype, device=q.device).triu(1)
    p = dropout_p if training else 0.0
    if not need_weights:  # PyTorch's sdpa, whose query with no key left gives zeros
        out = scaled_dot_product_attention(q, k, v, mask, p)
        return linear(out.transpose(1, 2).reshape(n, tl, e), out_proj_weight,
                      out_proj_bias), None
    scores = (q * (1 / math.sqrt(hd))) @ k.transpose(-2, -1)
    if mask is not None:
        scores = scores + mask
    attn = _nn.softmax(scores, -1)  # (NaN for such a query, as PyTorch's weights)
    if p > 0:
        attn = dropout(attn, p)
    out = linear((attn @ v).transpose(1, 2).reshape(n, tl, e), out_proj_weight,
                 out_proj_bias)
    return out, attn.mean(1) if average_attn_weights else attn


def _heads(x, static, name, n, num_heads, hd):
    """(N, S, E) -> (N, heads, S, head_dim), or the given static (N * heads, S, head_dim)."""
    if static is None:
        return x.reshape(n, x.shape[1], num_heads, hd).transpose(1, 2)
    if static.shape[0] != n * num_heads:
        raise AssertionError(f"expecting static_{name}.size(0) of {n * num_heads}, but got "
                             f"{static.shape[0]}")
    if static.shape[2] != hd:
        raise AssertionError(f"expecting static_{name}.size(2) of {hd}, but got "
                             f"{static.shape[2]}")
    return static.reshape(n, num_heads, static.shape[1], hd)


def prepare(query, key, value, key_padding_mask, attn_mask, num_heads, is_causal):
    """PyTorch's checks of the inputs, then a batch dim of 1 for unbatched (L, E) input:
    (query, key, value, key_padding_mask, batched)."""
    batched = check_shapes(query, key, value, key_padding_mask, attn_mask, num_heads)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the "
                           "Transformer module method `generate_square_subsequent_mask` to "
                           "create this mask.")
    if not batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    return query, key, value, key_padding_mask, batched


def swap_batch(query, key, value):
    """(L, N, E) <-> (N, L, E), keeping self-attention's one tensor one (a single GEMM)."""
    same = query is key and key is value
    query = query.transpose(0, 1)
    key, value = (query, query) if same else (key.transpose(0, 1), value.transpose(0, 1))
    return query, key, value


def finish(out, weights, swapped, batched):
    """The core's batch-first result back in the caller's layout."""
    if swapped:
        out = out.transpose(0, 1)
    if not batched:
        out = out.squeeze(1)
        if weights is not None:
            weights = weights.squeeze(0)
    return out, weights


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads,
                                 in_proj_weight, in_proj_bias, bias_k, bias_v, add_zero_attn,
                                 dropout_p, out_proj_weight, out_proj_bias, training=True,
                                 key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None,
                                 k_proj_weight=None, v_proj_weight=None, static_k=None,
                                 static_v=None, average_attn_weights=True, is_causal=False):
    """PyTorch's functional multi-head attention: sequence-first (L, N, E), or unbatched
    (L, E) input."""
    query, key, value, key_padding_mask, batched = prepare(
        query, key, value, key_padding_mask, attn_mask, num_heads, is_causal)
    if query.shape[2] != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but "
                             f"got {query.shape[2]}")
    if use_separate_proj_weight:
        for name, w in (("q", q_proj_weight), ("k", k_proj_weight), ("v", v_proj_weight)):
            if w is None:
                raise AssertionError(f"use_separate_proj_weight is True but {name}_proj_weight "
                                     "is None")
        if key.shape[:2] != value.shape[:2]:
            raise AssertionError(f"key's sequence and batch dims {key.shape[:2]} do not match "
                                 f"value's {value.shape[:2]}")
    else:
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        if key.shape != value.shape:
            raise AssertionError(f"key shape {key.shape} does not match value shape "
                                 f"{value.shape}")
        q_proj_weight = k_proj_weight = v_proj_weight = None
    out, weights = attention(
        *swap_batch(query, key, value), num_heads, in_proj_weight, in_proj_bias,
        out_proj_weight, out_proj_bias, key_padding_mask, need_weights, attn_mask,
        average_attn_weights, False, dropout_p, training, bias_k, bias_v, add_zero_attn,
        q_proj_weight, k_proj_weight, v_proj_weight, static_k, static_v)
    return finish(out, weights, True, batched)
