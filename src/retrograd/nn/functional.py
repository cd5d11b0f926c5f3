"""``torch.nn.functional``: the fused kernels of ``ops/nn_ops.py`` and ``ops/conv.py``
under PyTorch's signatures, and the composites PyTorch also builds from other ops.

>>> import retrograd.nn.functional as F
>>> F.relu(retrograd.tensor([-1., 2.]))
tensor([0., 2.])
"""

import math

import numpy

import retrograd
from .._tensor import wrap
from ..ops import conv as _conv
from ..ops import nn_ops as _nn
from ..ops.nn_ops import (batch_norm, binary_cross_entropy,  # noqa: F401 (re-exports)
                          binary_cross_entropy_with_logits, embedding, gelu, group_norm,
                          layer_norm, mse_loss, silu, smooth_l1_loss)
from ..ops.conv import adaptive_avg_pool2d, avg_pool2d, max_pool2d  # noqa: F401

__all__ = ["linear", "bilinear", "conv1d", "conv2d", "conv_transpose2d", "max_pool2d",
           "avg_pool2d", "adaptive_avg_pool2d", "batch_norm", "layer_norm", "group_norm",
           "dropout", "embedding", "relu", "gelu", "silu", "tanh", "sigmoid", "softmax",
           "log_softmax", "cross_entropy", "nll_loss", "mse_loss", "l1_loss",
           "smooth_l1_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits",
           "pad", "scaled_dot_product_attention", "one_hot", "multi_head_attention_forward"]


def linear(input, weight, bias=None):
    """``input @ weight.T + bias`` as one GEMM: addmm on the rows of any batched input,
    viewed back (PyTorch's AddmmBackward0 / ViewBackward0)."""
    if bias is not None and input.ndim >= 2 and weight.ndim == 2:
        return _nn.linear(input, weight, bias)
    out = input.matmul(weight.t())
    return out if bias is None else out + bias


def bilinear(input1, input2, weight, bias=None):
    """``y_k = x1 W_k x2 + b_k`` as one einsum."""
    out = retrograd.einsum("...i,kij,...j->...k", input1, weight, input2)
    return out if bias is None else out + bias


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv.convolution(input, weight, bias, stride, padding, dilation, False, 0, groups)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv.convolution(input, weight, bias, stride, padding, dilation, False, 0, groups)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0,
                     groups=1, dilation=1):
    return _conv.convolution(input, weight, bias, stride, padding, dilation, True,
                             output_padding, groups)


def relu(input, inplace=False):
    return input.relu_() if inplace else input.relu()


def tanh(input):
    return input.tanh()


def sigmoid(input):
    return input.sigmoid()


def _softmax_input(input, dim, dtype):
    if dtype is not None:
        input = input.to(dtype)
    if dim is None:  # PyTorch's legacy implicit dim
        dim = 0 if input.ndim in (0, 1, 3) else 1
    return input, dim


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    input, dim = _softmax_input(input, dim, dtype)
    return _nn.softmax(input, dim)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    input, dim = _softmax_input(input, dim, dtype)
    return _nn.log_softmax(input, dim)


def dropout(input, p=0.5, training=True, inplace=False):
    """Zero elements with probability ``p`` and scale the rest by ``1/(1-p)``."""
    if p < 0 or p > 1:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0:
        return input
    if p == 1:
        return input.mul_(0) if inplace else input * 0
    from .._random import default_generator
    keep = default_generator._rng.random(input.shape, dtype=numpy.float32) >= p
    mask = wrap((keep * (1 / (1 - p))).astype(input._data.dtype))
    return input.mul_(mask) if inplace else input * mask


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    return _nn.nll_loss(input, target, weight, ignore_index, reduction)


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100,
                  reduce=None, reduction="mean", label_smoothing=0.0):
    """log_softmax over dim 1 (0 for a single sample), then nll_loss; probability
    targets (float, input-shaped) and label smoothing as PyTorch defines them."""
    cdim = 0 if input.ndim == 1 else 1
    logp = _nn.log_softmax(input, cdim)
    if target.is_floating_point():
        if target.shape != input.shape:
            raise RuntimeError("Expected target size " + str(list(input.shape)) +
                               ", got " + str(list(target.shape)))
        c = input.shape[cdim]
        if label_smoothing > 0:
            target = target * (1 - label_smoothing) + label_smoothing / c
        w = logp if weight is None else logp * weight.reshape((-1,) + (1,) * (
            input.ndim - cdim - 1))
        losses = -(w * target).sum(cdim)
        if reduction == "mean":
            n = input.numel() // c
            return losses.sum() / n
        return losses.sum() if reduction == "sum" else losses
    loss = _nn.nll_loss(logp, target, weight, ignore_index, reduction)
    if label_smoothing <= 0:
        return loss
    c = input.shape[cdim]
    w = logp if weight is None else logp * weight.reshape((-1,) + (1,) * (input.ndim - cdim - 1))
    valid = (target != ignore_index)
    smooth = -w.sum(cdim) * valid
    if reduction == "mean":
        if weight is None:
            smooth = smooth.sum() / valid.sum()
        else:
            tw = weight[retrograd.where(valid, target, 0)] * valid
            smooth = smooth.sum() / tw.sum()
    elif reduction == "sum":
        smooth = smooth.sum()
    return loss * (1 - label_smoothing) + smooth * (label_smoothing / c)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    d = (input - target).abs()
    return d.mean() if reduction == "mean" else d.sum() if reduction == "sum" else d


_PAD_MODES = ("constant", "reflect", "replicate", "circular")


def pad(input, pad, mode="constant", value=None):
    """Pad (or, with negative amounts, crop) the last ``len(pad) // 2`` dims: with
    ``value`` (constant), or by reflecting, replicating or wrapping the input, which
    PyTorch does for the last 1, 2 or 3 dims of an input with 1 or 2 dims more."""
    if mode not in _PAD_MODES:
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    n = len(pad) // 2
    if n > input.ndim:
        raise RuntimeError("Padding length should be less than or equal to two times the "
                           "input dimension but got padding length " + str(len(pad)) +
                           " and input of dimension " + str(input.ndim))
    if mode == "constant":
        return _nn.constant_pad(input, pad, 0 if value is None else value)
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    if not (1 <= n <= 3 and n + 1 <= input.ndim <= n + 2):
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {input.ndim}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")
    return _nn.mode_pad(input, pad, mode)


def one_hot(tensor, num_classes=-1):
    if tensor.dtype != retrograd.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes == -1:
        num_classes = int(tensor.max()) + 1 if tensor.numel() else 0
    data = tensor._data
    return wrap((data[..., None] == numpy.arange(num_classes)).astype(numpy.int64))


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None, enable_gqa=False):
    """softmax(q k^T * scale + mask) v, PyTorch's math reference."""
    L, S = query.shape[-2], key.shape[-2]
    scale = 1 / math.sqrt(query.shape[-1]) if scale is None else scale
    scores = (query * scale) @ key.transpose(-2, -1)
    if is_causal:
        causal = numpy.triu(numpy.ones((L, S), dtype=bool), 1)
        scores = scores.masked_fill(wrap(causal), -math.inf)
    if attn_mask is not None:
        if attn_mask.dtype == retrograd.bool:
            scores = scores.masked_fill(attn_mask.logical_not(), -math.inf)
        else:
            scores = scores + attn_mask
    attn = _nn.softmax(scores, -1)
    if dropout_p > 0:
        attn = dropout(attn, dropout_p)
    return attn @ value


def multi_head_attention_forward(query, key, value, num_heads, in_proj_weight, in_proj_bias,
                                 out_proj_weight, out_proj_bias, key_padding_mask=None,
                                 need_weights=True, attn_mask=None, average_attn_weights=True,
                                 is_causal=False, dropout_p=0.0, training=True):
    """Batch-first (N, L, E) multi-head attention; returns (output, weights or None)."""
    n, tl, e = query.shape
    sl = key.shape[1]
    hd = e // num_heads
    if query is key and key is value:
        q, k, v = linear(query, in_proj_weight, in_proj_bias).chunk(3, -1)
    else:
        wq, wk, wv = in_proj_weight.chunk(3)
        bq, bk, bv = in_proj_bias.chunk(3) if in_proj_bias is not None else (None,) * 3
        q, k, v = linear(query, wq, bq), linear(key, wk, bk), linear(value, wv, bv)
    q = q.reshape(n, tl, num_heads, hd).transpose(1, 2)
    k = k.reshape(n, sl, num_heads, hd).transpose(1, 2)
    v = v.reshape(n, sl, num_heads, hd).transpose(1, 2)
    mask = None
    if attn_mask is not None:
        mask = _float_mask(attn_mask, q.dtype)
        if mask.ndim == 3:
            mask = mask.reshape(n, num_heads, tl, sl)
    if key_padding_mask is not None:
        kpm = _float_mask(key_padding_mask, q.dtype).reshape(n, 1, 1, sl)
        mask = kpm if mask is None else mask + kpm
    if is_causal and mask is None:
        mask = wrap(numpy.triu(numpy.full((tl, sl), -numpy.inf, q._data.dtype), 1))
    scores = (q * (1 / math.sqrt(hd))) @ k.transpose(-2, -1)
    if mask is not None:
        scores = scores + mask
    attn = _nn.softmax(scores, -1)
    if dropout_p > 0 and training:
        attn = dropout(attn, dropout_p)
    out = (attn @ v).transpose(1, 2).reshape(n, tl, e)
    out = linear(out, out_proj_weight, out_proj_bias)
    if not need_weights:
        return out, None
    return out, attn.mean(1) if average_attn_weights else attn


def _float_mask(mask, dtype):
    """Boolean masks (True = masked out) become additive -inf masks."""
    if mask.dtype == retrograd.bool:
        return wrap(numpy.where(mask._data, -numpy.inf, 0).astype(dtype.np))
    return mask


# ---- pooling beyond the 2-D kernels (ops/pooling_nd.py) ---------------------------------
from ..ops.pooling_nd import (adaptive_avg_pool1d, adaptive_avg_pool3d,  # noqa: E402,F401
                              adaptive_max_pool1d, adaptive_max_pool1d_with_indices,
                              adaptive_max_pool2d, adaptive_max_pool2d_with_indices,
                              adaptive_max_pool3d, adaptive_max_pool3d_with_indices,
                              avg_pool1d, avg_pool3d, lp_pool1d, lp_pool2d, lp_pool3d,
                              max_pool1d, max_pool1d_with_indices, max_pool2d_with_indices,
                              max_pool3d, max_pool3d_with_indices, max_unpool1d, max_unpool2d,
                              max_unpool3d)

__all__ += ["max_pool1d", "max_pool3d", "max_pool1d_with_indices", "max_pool2d_with_indices",
            "max_pool3d_with_indices", "avg_pool1d", "avg_pool3d", "adaptive_avg_pool1d",
            "adaptive_avg_pool3d", "adaptive_max_pool1d", "adaptive_max_pool2d",
            "adaptive_max_pool3d", "adaptive_max_pool1d_with_indices",
            "adaptive_max_pool2d_with_indices", "adaptive_max_pool3d_with_indices",
            "max_unpool1d", "max_unpool2d", "max_unpool3d", "lp_pool1d", "lp_pool2d",
            "lp_pool3d"]


# ---- N-d convolutions (ops/conv_nd.py) ---------------------------------------------------
from ..ops.conv_nd import conv3d, conv_transpose1d, conv_transpose3d  # noqa: E402,F401

__all__ += ["conv3d", "conv_transpose1d", "conv_transpose3d"]
