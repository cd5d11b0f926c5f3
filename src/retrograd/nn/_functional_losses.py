"""``torch.nn.functional``'s class-index and pointwise losses, with PyTorch's signatures and
the Python-level steps it takes before its kernels: the deprecated ``size_average`` /
``reduce`` pair, the warning for a target of another size, broadcasting, per-element weights.
The kernels (and their argument checks) are ``ops/nn_ops.py``'s.
"""

import math
import warnings

from .. import _autocast, _observe
from ..ops import nn_ops as _nn
from ..ops._registry import _broadcast_error, _pretty
from ..ops.losses import legacy_reduction
from ..ops.shape import broadcast_shapes

__all__ = ["nll_loss", "cross_entropy", "mse_loss", "l1_loss", "smooth_l1_loss",
           "binary_cross_entropy", "binary_cross_entropy_with_logits"]


@_autocast.policy("nll_loss")
def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    reduction = legacy_reduction(size_average, reduce, reduction)
    return _nn.nll_loss(input, target, weight, ignore_index, reduction)


@_autocast.policy("cross_entropy_loss")
def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100,
                  reduce=None, reduction="mean", label_smoothing=0.0):
    """log_softmax over dim 1 (0 for a single sample), then nll_loss. A target of the
    input's shape holds class probabilities (ATen's cross_entropy_loss decides by shape)."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    cdim = 0 if input.ndim == 1 else 1
    if input.shape == target.shape:
        if not target.is_floating_point():
            raise RuntimeError(f"Expected floating point type for target with class "
                               f"probabilities, got {_pretty(target._data.dtype)}")
        if ignore_index >= 0:
            raise RuntimeError("ignore_index is not supported for floating point target")
        return _cross_entropy_probs(input, target, weight, reduction, label_smoothing, cdim)
    _check_label_smoothing(label_smoothing)
    logp = _nn.log_softmax(input, cdim)
    loss = _nn.nll_loss(logp, target, weight, ignore_index, reduction)
    if label_smoothing <= 0:
        return loss
    return _smoothed(loss, logp, target, weight, reduction, ignore_index, label_smoothing,
                     cdim)


def _check_label_smoothing(label_smoothing):
    if label_smoothing > 1:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: "
                           f"{label_smoothing}")


def _class_weight(weight, ndim, cdim):
    """The (C,) class weight shaped to broadcast along the class dim."""
    return weight.view((-1,) + (1,) * (ndim - cdim - 1))


def _cross_entropy_probs(input, target, weight, reduction, label_smoothing, cdim):
    """ATen's cross_entropy_loss_prob_target: ``-(log_softmax * target [* weight])``,
    summed (mean: over the number of samples; NaN when there are none)."""
    if input.ndim == 0:  # ATen reads the class count with size(1)
        raise IndexError("Dimension specified as 1 but tensor has no dimensions")
    c = input.shape[cdim]
    if weight is not None and (weight.ndim != 1 or weight.numel() != c):
        raise RuntimeError(f"cross_entropy: weight tensor should be defined either for all "
                           f"{c} classes or no classes but got weight tensor of shape: "
                           f"{list(weight.shape)}")
    logp = _nn.log_softmax(input, cdim)
    _check_label_smoothing(label_smoothing)
    if label_smoothing > 0:
        target = target * (1 - label_smoothing) + label_smoothing / c
    prod = logp * target
    if weight is not None:
        prod = prod * _class_weight(weight, input.ndim, cdim)
    if reduction == "none":
        return -prod.sum(cdim)
    loss = -prod.sum()
    if reduction == "mean":
        return loss / (input.numel() // c) if input.numel() else loss.fill_(math.nan)
    return loss


def _smoothed(loss, logp, target, weight, reduction, ignore_index, label_smoothing, cdim):
    """ATen's cross_entropy_loss_label_smoothing: the nll loss mixed with the mean of
    ``-log_softmax`` over the classes; ignored targets masked to 0 (masked_fill, so an
    all-ignored batch has zero gradients, not NaN)."""
    c = logp.shape[cdim]
    ignored = target == ignore_index
    w = logp if weight is None else logp * _class_weight(weight, logp.ndim, cdim)
    smooth = (-w.sum(cdim)).masked_fill(ignored, 0.0)
    if reduction == "mean":
        if weight is None:
            smooth = smooth.sum() / ignored.logical_not().sum()
        else:
            smooth = smooth.sum() / weight[target.masked_select(ignored.logical_not())].sum()
    elif reduction == "sum":
        smooth = smooth.sum()
    return loss * (1 - label_smoothing) + smooth * (label_smoothing / c)


# ---- pointwise losses ---------------------------------------------------------------------
def _warn_size(input, target):
    if target.shape != input.shape:
        warnings.warn(f"Using a target size ({target.size()}) that is different to the input "
                      f"size ({input.size()}). This will likely lead to incorrect results due "
                      f"to broadcasting. Please ensure they have the same size.",
                      stacklevel=_observe.user_stacklevel())


def _broadcast(input, target):
    """``torch.broadcast_tensors``, which leaves a tensor of the common shape as it is."""
    if input.shape == target.shape:
        return input, target
    try:
        shape = broadcast_shapes(input.shape, target.shape)
    except RuntimeError as e:
        raise _broadcast_error((input, target), e) from None
    return (x if x.shape == shape else x.expand(shape) for x in (input, target))


def _weighted(loss, input, weight, reduction):
    """mse/l1 with per-element weights, as torch.nn.functional composes them."""
    if weight.shape != input.shape:
        raise ValueError("Weights and input must have the same size.")
    loss = loss * weight
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    if reduction == "mean":
        return loss.sum() / weight.sum()
    raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', "
                     f"'sum'.")


@_autocast.policy("mse_loss")
def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean squared error, ``(input - target) ** 2`` reduced (weighted: the weighted sum
    over the weights' sum)."""
    _warn_size(input, target)
    reduction = legacy_reduction(size_average, reduce, reduction)
    ei, et = _broadcast(input, target)
    if weight is not None:
        return _weighted((ei - et).pow(2), input, weight, reduction)
    return _nn.mse_loss(ei, et, reduction)


@_autocast.policy("l1_loss")
def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean absolute error: ATen's composite ``(input - target).abs()``, reduced."""
    _warn_size(input, target)
    reduction = legacy_reduction(size_average, reduce, reduction)
    ei, et = _broadcast(input, target)
    if weight is not None:
        return _weighted((ei - et).abs(), input, weight, reduction)
    return _l1(ei, et, reduction)


def _l1(input, target, reduction):
    d = (input - target).abs()
    reduction = _nn._loss_reduction(reduction)
    return d.mean() if reduction == "mean" else d.sum() if reduction == "sum" else d


@_autocast.policy("smooth_l1_loss")
def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """Squared below ``beta``, absolute above; ``beta == 0`` is l1_loss."""
    _warn_size(input, target)
    reduction = legacy_reduction(size_average, reduce, reduction)
    ei, et = _broadcast(input, target)
    if beta == 0.0:
        return _l1(ei, et, reduction)
    return _nn.smooth_l1_loss(ei, et, reduction, beta)


def _broadcast_weight(weight, target):
    """torch.nn.functional's ``weight.expand(_infer_size(target.size(), weight.size()))``."""
    ts, ws = tuple(target.shape), tuple(weight.shape)
    n = max(len(ts), len(ws))
    tp, wp = (1,) * (n - len(ts)) + ts, (1,) * (n - len(ws)) + ws
    for i in range(n - 1, -1, -1):
        if wp[i] != tp[i] and wp[i] != 1 and tp[i] != 1:
            raise RuntimeError(f"Attempting to broadcast a dimension of length {wp[i]} at "
                               f"{i - n}! Mismatching argument at index 1 had {weight.size()}; "
                               f"but expected shape should be broadcastable to {list(tp)}")
    shape = tuple(max(a, b) if min(a, b) else 0 for a, b in zip(tp, wp, strict=True))
    return weight if shape == ws else weight.expand(shape)


@_autocast.policy("binary_cross_entropy")
def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,
                         reduction="mean"):
    """``-(t log x + (1 - t) log(1 - x))`` of probabilities, log terms clamped at -100."""
    reduction = _nn._loss_reduction(legacy_reduction(size_average, reduce, reduction))
    if target.shape != input.shape:
        raise ValueError(f"Using a target size ({target.size()}) that is different to the "
                         f"input size ({input.size()}) is deprecated. Please ensure they have "
                         f"the same size.")
    if weight is not None:
        weight = _broadcast_weight(weight, target)
    return _nn.binary_cross_entropy(input, target, weight, reduction)


@_autocast.policy("binary_cross_entropy_with_logits")
def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None,
                                     reduce=None, reduction="mean", pos_weight=None):
    """binary_cross_entropy of ``sigmoid(input)``, computed from the logits stably."""
    reduction = _nn._loss_reduction(legacy_reduction(size_average, reduce, reduction))
    if target.shape != input.shape:
        raise ValueError(f"Target size ({target.size()}) must be the same as input size "
                         f"({input.size()})")
    return _nn.binary_cross_entropy_with_logits(input, target, weight, reduction, pos_weight)
