"""``torch.nn.functional``: the fused kernels of ``ops/nn_ops.py``, ``ops/convolution.py``
and ``ops/pooling.py`` under PyTorch's signatures, and the composites PyTorch also builds
from other ops.

>>> import retrograd.nn.functional as F
>>> F.relu(retrograd.tensor([-1., 2.]))
tensor([0., 2.])
"""

import math
import warnings

from .. import _creation, _dtype
from .._tensor import wrap
from .._dtype import is_low, dtype_arg
from ..autograd.grad_mode import no_grad
from ..backend import on_device
from ..ops import nn_ops as _nn
from ..ops.embedding_bag import embedding_bag  # noqa: F401 (re-export)
from ..ops.nn_ops import pad  # noqa: F401 (re-export)
from ..ops.nn_ops import (batch_norm, embedding, gelu, group_norm,  # noqa: F401 (re-exports)
                          layer_norm)
from ._functional_losses import (binary_cross_entropy,  # noqa: F401 (re-exports)
                                 binary_cross_entropy_with_logits, cross_entropy, l1_loss,
                                 mse_loss, nll_loss, smooth_l1_loss)
from ._functional_attention import scaled_dot_product_attention  # noqa: F401 (re-export)
from ._functional_dropout import (alpha_dropout, dropout, dropout1d,  # noqa: F401
                                  dropout2d, dropout3d, feature_alpha_dropout)
from ._functional_linear import bilinear, linear  # noqa: F401
from ._mha import multi_head_attention_forward  # noqa: F401
from ..ops.activation import (celu, celu_, elu, elu_, glu, hardshrink, hardsigmoid,
                              hardswish, hardtanh, hardtanh_, leaky_relu, leaky_relu_,
                              logsigmoid, mish, prelu, relu6, relu_, rrelu, rrelu_, selu,
                              selu_, softplus, softshrink, softsign, tanhshrink, threshold,
                              threshold_)
from ..ops.losses import (cosine_embedding_loss, cosine_similarity, ctc_loss,
                          gaussian_nll_loss,
                          hinge_embedding_loss, huber_loss, kl_div, margin_ranking_loss,
                          multi_margin_loss, multilabel_margin_loss,
                          multilabel_soft_margin_loss, normalize, pairwise_distance, pdist,
                          poisson_nll_loss, soft_margin_loss, triplet_margin_loss,
                          triplet_margin_with_distance_loss)
from ._functional_resample import (affine_grid, grid_sample, interpolate,
                                   upsample, upsample_bilinear, upsample_nearest)
from ..ops.rearrange import (channel_shuffle, fold, pixel_shuffle,
                             pixel_unshuffle, unfold)
from ..ops.pooling import (adaptive_avg_pool1d, adaptive_avg_pool2d,  # noqa: F401
                           adaptive_avg_pool3d, adaptive_max_pool1d,
                           adaptive_max_pool1d_with_indices, adaptive_max_pool2d,
                           adaptive_max_pool2d_with_indices, adaptive_max_pool3d,
                           adaptive_max_pool3d_with_indices, avg_pool1d, avg_pool2d, avg_pool3d,
                           lp_pool1d, lp_pool2d, lp_pool3d, max_pool1d, max_pool1d_with_indices,
                           max_pool2d, max_pool2d_with_indices, max_pool3d,
                           max_pool3d_with_indices, max_unpool1d, max_unpool2d, max_unpool3d)
from ..ops.convolution import (conv1d, conv2d, conv3d, conv_transpose1d, conv_transpose2d,
                               conv_transpose3d)
from ..ops.activation import silu

__all__ = ["linear", "bilinear", "conv1d", "conv2d", "conv_transpose2d", "max_pool2d",
           "avg_pool2d", "adaptive_avg_pool2d", "batch_norm", "layer_norm", "group_norm",
           "dropout", "embedding", "relu", "gelu", "silu", "tanh", "sigmoid", "softmax",
           "log_softmax", "cross_entropy", "nll_loss", "mse_loss", "l1_loss", "smooth_l1_loss",
           "binary_cross_entropy", "binary_cross_entropy_with_logits", "pad",
           "scaled_dot_product_attention", "one_hot", "multi_head_attention_forward", "dropout1d",
           "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout", "instance_norm",
           "rms_norm", "local_response_norm", "leaky_relu", "leaky_relu_", "elu", "elu_", "selu",
           "selu_", "celu", "celu_", "relu_", "relu6", "hardtanh", "hardtanh_", "softplus", "mish",
           "hardswish", "hardsigmoid", "logsigmoid", "prelu", "glu", "softsign", "softshrink",
           "hardshrink", "tanhshrink", "threshold", "threshold_", "rrelu", "rrelu_", "softmin",
           "normalize", "cosine_similarity", "pairwise_distance", "pdist", "kl_div", "huber_loss",
           "soft_margin_loss", "margin_ranking_loss", "hinge_embedding_loss",
           "cosine_embedding_loss", "triplet_margin_loss", "triplet_margin_with_distance_loss",
           "multilabel_soft_margin_loss", "multi_margin_loss", "multilabel_margin_loss",
           "poisson_nll_loss", "gaussian_nll_loss", "ctc_loss", "interpolate", "upsample",
           "upsample_nearest", "upsample_bilinear", "affine_grid", "grid_sample", "pixel_shuffle",
           "pixel_unshuffle", "channel_shuffle", "unfold", "fold", "max_pool1d", "max_pool3d",
           "max_pool1d_with_indices", "max_pool2d_with_indices", "max_pool3d_with_indices",
           "avg_pool1d", "avg_pool3d", "adaptive_avg_pool1d", "adaptive_avg_pool3d",
           "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d",
           "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices",
           "adaptive_max_pool3d_with_indices", "max_unpool1d", "max_unpool2d", "max_unpool3d",
           "lp_pool1d", "lp_pool2d", "lp_pool3d", "conv3d", "conv_transpose1d", "conv_transpose3d",
           "gumbel_softmax", "embedding_bag"]


def relu(input, inplace=False):
    return input.relu_() if inplace else input.relu()


def tanh(input):
    return input.tanh()


def sigmoid(input):
    return input.sigmoid()


def _softmax_input(name, input, dim, dtype, stacklevel):
    if dim is None:  # PyTorch's legacy implicit dim, deprecated
        warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the "
                      "call to include dim=X as an argument.", stacklevel=stacklevel)
        dim = 0 if input.ndim in (0, 1, 3) else 1
    if dtype is not None:
        input = input.to(dtype)
    return input, dim


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    dtype = dtype_arg(dtype, "softmax")
    input, dim = _softmax_input("softmax", input, dim, dtype, _stacklevel)
    return _nn.softmax(input, dim)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    dtype = dtype_arg(dtype, "log_softmax")
    input, dim = _softmax_input("log_softmax", input, dim, dtype, _stacklevel)
    return _nn.log_softmax(input, dim)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """softmax of ``-input`` (PyTorch's composite: NegBackward0 under SoftmaxBackward0)."""
    dtype = dtype_arg(dtype, "softmin")
    input, dim = _softmax_input("softmin", input, dim, dtype, _stacklevel)
    return _nn.softmax(-input, dim)


def gumbel_softmax(logits, tau=1, hard=False, eps=1e-10, dim=-1):
    """A sample of the Gumbel-softmax (concrete) distribution over ``dim``: softmax of
    ``(logits + g) / tau`` with Gumbel noise ``g = -log(Exp(1))``; ``hard``: its one-hot
    argmax, with the soft sample's gradient (the straight-through estimator). PyTorch's
    composite, op for op."""
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    gumbels = -_creation.empty_like(logits).exponential_().log()
    y_soft = ((logits + gumbels) / tau).softmax(dim)
    if not hard:
        return y_soft
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = _creation.zeros_like(logits).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats=True, momentum=0.1, eps=1e-5):
    """PyTorch's Python check, then ATen's op (:func:`aten_instance_norm`)."""
    if use_input_stats and math.prod(input.shape[2:]) == 1:
        raise ValueError("Expected more than 1 spatial element when training, got input "
                         f"size {input.shape}")
    return aten_instance_norm(input, weight, bias, running_mean, running_var, use_input_stats,
                              momentum, eps)


def aten_instance_norm(input, weight, bias, running_mean, running_var, use_input_stats,
                       momentum, eps):
    """``torch.instance_norm``'s op: batch norm of the (1, N*C, ...) view, as PyTorch;
    running statistics (when given) take the mean over the batch of the per-instance
    updates."""
    if not use_input_stats and (running_mean is None or running_var is None):
        raise RuntimeError("Expected running_mean and running_var to be defined when "
                           "use_input_stats is false")
    n, c = input.shape[:2]
    x = input.reshape(1, n * c, *input.shape[2:])
    rm = None if running_mean is None else running_mean.repeat(n)
    rv = None if running_var is None else running_var.repeat(n)
    out = _nn.aten_batch_norm(x, None if weight is None else weight.repeat(n),
                              None if bias is None else bias.repeat(n), rm, rv,
                              use_input_stats, momentum, eps)
    with no_grad():
        if running_mean is not None:
            running_mean.copy_(rm.view(n, c).mean(0))
        if running_var is not None:
            running_var.copy_(rv.view(n, c).mean(0))
    return out.view(input.shape)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """``x / sqrt(mean(x^2) + eps) * weight`` over the last dims; eps defaults to the
    machine epsilon of the dtype it is computed in (float32 for float16), as PyTorch."""
    dims = tuple(range(-len(normalized_shape), 0))
    if tuple(input.shape[input.ndim - len(normalized_shape):]) != tuple(normalized_shape):
        raise RuntimeError(f"Given normalized_shape={list(normalized_shape)}, expected input "
                           f"with shape [*, {', '.join(map(str, normalized_shape))}], but got "
                           f"input of size{input.shape}")
    x = input.float() if is_low(input.dtype) else input  # float32 sums, as torch
    if eps is None:
        eps = float(_dtype.np_finfo(x._data.dtype).eps)
    out = x * (x.pow(2).mean(dims, keepdim=True) + eps).rsqrt()
    if x is not input:
        out = out.to(input.dtype)
    return out if weight is None else out * weight


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """Each value over ``(k + alpha * mean of squares over size neighbouring channels) **
    beta``; the window is zero-padded, as PyTorch's average pooling with padding."""
    if input.ndim < 3:
        raise ValueError("Expected 3D or higher dimensionality                          input "
                         f"(got {input.ndim} dimensions)")
    if input.numel() == 0:
        return input
    c = input.shape[1]
    sq = pad(input * input, (0, 0) * (input.ndim - 2) + (size // 2, (size - 1) // 2))
    div = sq.narrow(1, 0, c)
    for i in range(1, size):
        div = div + sq.narrow(1, i, c)
    return input / (div * (alpha / size) + k).pow(beta)


def one_hot(tensor, num_classes=-1):
    if tensor.dtype != _dtype.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes == -1:
        num_classes = int(tensor.max()) + 1 if tensor.numel() else 0
    classes = on_device(tensor.device, lambda xp: xp.arange(num_classes))
    return wrap((tensor._data[..., None] == classes).astype(_dtype.int64.np))
