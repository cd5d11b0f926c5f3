"""``torch.<name>`` forms of ``nn.functional`` ops, under ATen's signatures: ``train`` for
``training``, ``reduction`` as an int (0 none, 1 mean, any other but 2 none too, 2 sum),
``embedding``'s weight first, the norms' statistics in ATen's order. Each is a call into
the ``nn.functional`` implementation, without the checks PyTorch makes only in Python
(``torch.batch_norm`` takes a batch of one, ``torch.dropout`` raises RuntimeError).

>>> import retrograd as torch
>>> torch.dropout(torch.ones(2), 0.5, False)
tensor([1., 1.])
"""

from ..ops import losses as _losses
from ..ops import nn_ops as _nn
from . import functional as F
from ._functional_dropout import _dropout

__all__ = ["dropout", "dropout_", "alpha_dropout", "alpha_dropout_", "feature_dropout",
           "feature_dropout_", "feature_alpha_dropout", "feature_alpha_dropout_",
           "layer_norm", "group_norm", "batch_norm", "instance_norm", "rms_norm", "embedding",
           "bilinear", "binary_cross_entropy_with_logits", "kl_div", "cosine_embedding_loss",
           "margin_ranking_loss", "hinge_embedding_loss", "poisson_nll_loss",
           "constant_pad_nd"]


# ---- dropout ----------------------------------------------------------------------------------
def _dropout_fn(name, feature, alpha, inplace):
    def fn(input, p, train):
        if not 0 <= p <= 1:
            raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")
        return _dropout(input, p, train, inplace, feature, alpha)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"``torch.{name}(input, p, train)``: {'channel-wise ' if feature else ''}"
                  f"{'alpha ' if alpha else ''}dropout{' in place' if inplace else ''}.")
    return fn


dropout = _dropout_fn("dropout", False, False, False)
dropout_ = _dropout_fn("dropout_", False, False, True)
alpha_dropout = _dropout_fn("alpha_dropout", False, True, False)
alpha_dropout_ = _dropout_fn("alpha_dropout_", False, True, True)
feature_dropout = _dropout_fn("feature_dropout", True, False, False)
feature_dropout_ = _dropout_fn("feature_dropout_", True, False, True)
feature_alpha_dropout = _dropout_fn("feature_alpha_dropout", True, True, False)
feature_alpha_dropout_ = _dropout_fn("feature_alpha_dropout_", True, True, True)


# ---- normalization ----------------------------------------------------------------------------
def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05, cudnn_enable=True):
    return F.layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-05, cudnn_enabled=True):
    return _nn.aten_group_norm(input, num_groups, weight, bias, eps)


def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps,
               cudnn_enabled):
    return _nn.aten_batch_norm(input, weight, bias, running_mean, running_var, training,
                               momentum, eps)


def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum,
                  eps, cudnn_enabled):
    return F.aten_instance_norm(input, weight, bias, running_mean, running_var,
                                use_input_stats, momentum, eps)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    return F.rms_norm(input, normalized_shape, weight, eps)


# ---- lookups, linear maps, padding ------------------------------------------------------------
def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    """Rows of ``weight`` at ``indices``; ``padding_idx`` outside the rows (-1 by default)
    pads nothing."""
    rows = weight.shape[0] if weight.ndim else 0
    padding_idx = padding_idx if 0 <= padding_idx < rows else None
    return F.embedding(indices, weight, padding_idx, scale_grad_by_freq=scale_grad_by_freq,
                       sparse=sparse)


def bilinear(input1, input2, weight, bias=None):
    return F.bilinear(input1, input2, weight, bias)


def constant_pad_nd(input, pad, value=0):
    """``F.pad(input, pad, value=value)`` with ATen's checks of ``pad``."""
    if len(pad) % 2:
        raise RuntimeError(f"Length of pad must be even but instead it equals {len(pad)}")
    if len(pad) > 2 * input.ndim:
        raise RuntimeError(f"Length of pad should be no more than twice the number of "
                           f"dimensions of the input. Pad length is {len(pad)}while the input "
                           f"has {input.ndim}dimensions.")
    return F.pad(input, pad, "constant", value)


# ---- losses -----------------------------------------------------------------------------------
def _reduction(reduction, fn):
    """ATen's reduction enum as ``nn.functional``'s string."""
    if not isinstance(reduction, int) or isinstance(reduction, bool):
        raise TypeError(f"{fn}(): argument 'reduction' must be int, not "
                        f"{type(reduction).__name__}")
    return {1: "mean", 2: "sum"}.get(reduction, "none")


def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None,
                                     reduction=1):
    return _nn.binary_cross_entropy_with_logits(
        input, target, weight, _reduction(reduction, "binary_cross_entropy_with_logits"),
        pos_weight)


def kl_div(input, target, reduction=1, *, log_target=False):
    return _losses.aten_kl_div(input, target, _reduction(reduction, "kl_div"), log_target)


def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=1):
    return F.cosine_embedding_loss(input1, input2, target, margin,
                                   reduction=_reduction(reduction, "cosine_embedding_loss"))


def margin_ranking_loss(input1, input2, target, margin=0.0, reduction=1):
    return F.margin_ranking_loss(input1, input2, target, margin,
                                 reduction=_reduction(reduction, "margin_ranking_loss"))


def hinge_embedding_loss(input, target, margin=1.0, reduction=1):
    return F.hinge_embedding_loss(input, target, margin,
                                  reduction=_reduction(reduction, "hinge_embedding_loss"))


def poisson_nll_loss(input, target, log_input, full, eps, reduction):
    return F.poisson_nll_loss(input, target, log_input, full, eps=eps,
                              reduction=_reduction(reduction, "poisson_nll_loss"))

