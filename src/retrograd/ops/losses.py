"""Distances and the losses beyond cross entropy, with PyTorch's signatures.

PyTorch gives some of these their own kernel and backward node (cdist, pdist, dist, huber,
soft margin, multi-margin, multilabel margin): those are ops here, with rules written in
``xp`` so they also run on Tensors under ``create_graph=True``. The others PyTorch composes
from other ops (its ``at::native`` composites and ``torch.nn.functional``), and so does
retrograd, in the same order, so ``grad_fn`` shows the same nodes.
"""

import math
import warnings

import numpy

from .. import _autocast, _observe
from .._creation import full_like, ones_like, zeros, zeros_like
from .._dtype import float16, float32, int64, result_type
from .._tensor import Tensor, wrap
from ..backend import get_array_module
from ..backend.functions import functions
from ._loss_args import check_cast, check_output
from ._registry import FUNCTIONS, _pretty, apply, defop, register
from .activation import logsigmoid
from .nn_ops import _reduce, _reduced_grad, _sigmoid, _size
from .reduction import _no_out, _norm_rule, _vector_norm
from .shape import call

__all__ = ["normalize", "cosine_similarity", "pairwise_distance", "cdist", "pdist", "dist",
           "kl_div", "aten_kl_div", "huber_loss", "soft_margin_loss", "margin_ranking_loss",
           "hinge_embedding_loss", "cosine_embedding_loss", "triplet_margin_loss",
           "triplet_margin_with_distance_loss", "multilabel_soft_margin_loss",
           "multi_margin_loss", "multilabel_margin_loss", "poisson_nll_loss",
           "gaussian_nll_loss", "ctc_loss", "legacy_reduction"]

_REDUCTIONS = ("none", "mean", "sum")


# ---- reductions ---------------------------------------------------------------------------
def legacy_reduction(size_average, reduce, reduction="mean"):
    """The deprecated ``size_average``/``reduce`` pair as a reduction, with PyTorch's
    warning (``_Reduction.legacy_get_string``); ``reduction`` when both are None."""
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    ret = "mean" if size_average and reduce else "sum" if reduce else "none"
    warnings.warn(f"size_average and reduce args will be deprecated, please use "
                  f"reduction='{ret}' instead.", stacklevel=_observe.user_stacklevel())
    return ret


def _check_reduction(reduction):
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def _apply_reduction(loss, reduction):
    """ATen's apply_loss_reduction: MeanBackward0 / SumBackward0 nodes."""
    if reduction == "mean":
        return loss.mean()
    return loss.sum() if reduction == "sum" else loss


# ---- norms and distances ------------------------------------------------------------------
# at::norm's node for a norm over given dims (pairwise_distance), beside linalg.vector_norm's.
_norm1 = defop("norm", _vector_norm, vjp={"self": _norm_rule}, jvp="transpose",
               node="NormBackward1")


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    _no_out(out, "normalize")
    return input / input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)


@register(method=False)
def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """Each input divided by its norm (clamped at ``eps`` outside the graph, as PyTorch's
    kernel does under no_grad), then the sum of their product: the result stays within
    [-1, 1]."""
    common = result_type(x1, x2)
    if not common.is_floating_point:
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is "
                           f"{_pretty(common.np)}")
    x1, x2 = (x if x.is_floating_point() else x.to(common) for x in (x1, x2))
    if x1.shape != x2.shape:  # ATen's expand_outplace: no expand of equal shapes
        x1, x2 = FUNCTIONS["broadcast_tensors"](x1, x2)
    n1 = x1.norm(2, dim, keepdim=True).clone()
    n2 = x2.norm(2, dim, keepdim=True).clone()
    n1.data.clamp_min_(eps)  # through .data: the norms' graphs and tangents stay as they are
    n2.data.clamp_min_(eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


@register(method=False)
def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """``norm(x1 - x2 + eps, p)`` over the last dim of the broadcast inputs."""
    d = x1 - x2 + eps
    return apply(_norm1, (d,), (float(p), (d.ndim - 1,) if d.ndim else (), keepdim))


def _dist_d(xp, diff, dist, p):
    """d dist / d diff for ``dist = ||diff||_p`` over the last axis (``dist`` broadcast
    against ``diff``): PyTorch's cdist/pdist backward kernels, subgradient 0 at 0."""
    if p == 0:
        return xp.zeros_like(diff)
    if p == 1:
        return xp.sign(diff)
    if p == 2:
        return xp.where(dist == 0, 0, diff / dist)
    if math.isinf(p):
        return xp.sign(diff) * (xp.abs(diff) == dist)
    a = xp.abs(diff)
    if p < 1:
        return xp.where((dist == 0) | (diff == 0), 0, xp.sign(diff) * a ** (p - 1)
                        / dist ** (p - 1))
    if p < 2:
        return xp.where(dist == 0, 0, xp.sign(diff) * a ** (p - 1) / dist ** (p - 1))
    return xp.where(dist == 0, 0, diff * a ** (p - 2) / dist ** (p - 1))


def _pair_diff(xp, x1, x2):
    return xp.expand_dims(x1, -2) - xp.expand_dims(x2, -3)


def _cdist_fwd(xp, x1, x2, p):
    diff = _pair_diff(xp, x1, x2)
    if diff.shape[-1] == 0:  # no columns: every distance is 0 (max of nothing for p=inf)
        return xp.zeros(diff.shape[:-1], dtype=diff.dtype)
    return _vector_norm(xp, diff, p, -1, False)


def _cdist_grad(xp, grad, x1, x2, result, p, axis):
    g = xp.expand_dims(grad, -1) * _dist_d(xp, _pair_diff(xp, x1, x2),
                                           xp.expand_dims(result, -1), p)
    return xp.sum(g, axis=axis) if axis == -2 else -xp.sum(g, axis=axis)


_cdist = defop("_cdist_forward", _cdist_fwd,
               vjp={"x1": lambda xp, grad, x1, x2, result, p:
                    _cdist_grad(xp, grad, x1, x2, result, p, -2),
                    "x2": lambda xp, grad, x1, x2, result, p:
                    _cdist_grad(xp, grad, x1, x2, result, p, -3)},
               jvp="transpose", promote=("x1", "x2"), node="CdistBackward0")


def _euclid_fwd(xp, x1, x2):
    """|a|^2 + |b|^2 - 2 a.b: one matmul; cancellation is clamped at 0 as PyTorch does."""
    r = xp.matmul(x1, xp.swapaxes(x2, -1, -2))
    r *= -2
    r += xp.sum(x1 * x1, axis=-1, keepdims=True)
    r += xp.expand_dims(xp.sum(x2 * x2, axis=-1), -2)
    return xp.sqrt(xp.maximum(r, 0, out=r), out=r)


def _euclid_ratio(xp, grad, result):
    return xp.where(result == 0, 0, grad / result)


_euclid = defop(
    "_euclidean_dist", _euclid_fwd,
    vjp={"x1": lambda xp, grad, x1, x2, result:
         x1 * xp.sum(_euclid_ratio(xp, grad, result), axis=-1, keepdims=True)
         - xp.matmul(_euclid_ratio(xp, grad, result), x2),
         "x2": lambda xp, grad, x1, x2, result:
         x2 * xp.expand_dims(xp.sum(_euclid_ratio(xp, grad, result), axis=-2), -1)
         - xp.matmul(xp.swapaxes(_euclid_ratio(xp, grad, result), -1, -2), x1)},
    jvp="transpose", promote=("x1", "x2"), node="EuclideanDistBackward0")

_CDIST_MODES = {"use_mm_for_euclid_dist_if_necessary": 0, "use_mm_for_euclid_dist": 1,
                "donot_use_mm_for_euclid_dist": 2}


@register(method=False)
@_autocast.policy("cdist")
def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """p-norm distance between each row of ``x1`` and each row of ``x2`` (batched). For
    p = 2 with more than 25 rows (or when asked), PyTorch's one-matmul Euclidean form."""
    if compute_mode not in _CDIST_MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    mode = _CDIST_MODES[compute_mode]
    for name, x in (("X1", x1), ("X2", x2)):
        if x.ndim < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: "
                               f"{x.ndim}D")
    c1, c2 = x1.shape[-1], x2.shape[-1]
    if c1 != c2:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {c1} X2: "
                           f"{c2}")
    for name, x in (("X1", x1), ("X2", x2)):
        if not x.is_floating_point():
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: "
                               f"{_pretty(x._data.dtype)}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    r1, r2 = x1.shape[-2], x2.shape[-2]
    batch = get_array_module(x1._data).broadcast_shapes(tuple(x1.shape[:-2]),
                                                        tuple(x2.shape[:-2]))
    nb = math.prod(batch)
    use_mm = p == 2 and (mode == 1 or mode == 0 and (r1 > 25 or r2 > 25))
    if not use_mm or x1.numel() == 0 or x2.numel() == 0 or c1 == 0:
        return apply(_cdist, (x1, x2), (float(p),))
    if nb != 1:
        x1 = x1.expand(*batch, r1, c1).contiguous().view(nb, r1, c1)
        x2 = x2.expand(*batch, r2, c2).contiguous().view(nb, r2, c2)
    return apply(_euclid, (x1, x2)).view(*batch, r1, r2)


def _pdist_fwd(xp, self, p):
    i, j = xp.triu_indices(self.shape[0], 1)
    diff = self[i] - self[j]
    if self.shape[1] == 0:
        return xp.zeros(diff.shape[:1], dtype=diff.dtype)
    return _vector_norm(xp, diff, p, -1, False)


def _pdist_grad(xp, grad, self, result, p):
    i, j = xp.triu_indices(self.shape[0], 1)
    c = xp.expand_dims(grad, -1) * _dist_d(xp, self[i] - self[j], xp.expand_dims(result, -1),
                                           p)
    index_add = functions(xp).index_add
    return index_add(index_add(xp.zeros(self.shape, dtype=grad.dtype), i, c), j, -c)


_pdist = defop("_pdist_forward", _pdist_fwd, vjp={"self": _pdist_grad}, jvp="transpose",
               node="PdistBackward0")


@register(method=False)
def pdist(input, p=2):
    """The distances between the rows of a 2-D input, pairs (i < j) in row-major order."""
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    if not input.is_floating_point():
        raise RuntimeError("pdist only supports floating-point dtypes")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    return apply(_pdist, (input,), (float(p),))


def _dist_grad(xp, grad, self, other, result, p):
    return _norm_rule(xp, grad, self - other, result, p, None, False)


_dist = defop("dist", lambda xp, self, other, p: _vector_norm(xp, self - other, p, None, False),
              vjp={"self": _dist_grad,
                   "other": lambda xp, grad, self, other, result, p:
                   None if p == 0 else -_dist_grad(xp, grad, self, other, result, p)},
              jvp="transpose", promote=("self", "other"), upcast="forward")


@register
def dist(input, other, p=2):
    """``norm(input - other, p)`` over all elements, in one node."""
    return apply(_dist, (input, other), (float(p),))


# ---- losses with their own kernel ---------------------------------------------------------
def _huber_fwd(xp, self, target, reduction, delta, input_dtype):
    """ATen's huber kernel computes each loss in the common dtype of a float target and
    input, writes it in the input's dtype (``input_dtype``: float16 arrives here in
    float32), then reduces: a float32 target beyond float16's range gives a finite
    float16 loss, and a float16 loss past 65504 is inf before the mean, as PyTorch's.
    (huber_loss casts a target no wider than the input to it, exactly.)"""
    d = xp.abs(self - target)
    loss = xp.where(d < delta, 0.5 * d * d, delta * (d - 0.5 * delta))
    written = xp.astype(loss, input_dtype, copy=False)
    if written.dtype != float16.np or reduction == "none":
        return _reduce(xp, written, reduction)
    # summed in float32 and rounded once, as PyTorch's mean and sum of float16
    return xp.astype(_reduce(xp, xp.astype(written, float32.np), reduction), written.dtype)


def _huber_d(xp, grad, self, target, reduction, delta):
    """PyTorch's huber_loss_backward: the difference clipped to +-delta (NaN kept). At
    |d| = delta the clipped constant is taken, of derivative 0: PyTorch's double backward
    is ``where(|d| < delta, 1, 0)`` there."""
    d = self - target
    d = xp.where(xp.abs(d) >= delta, delta * xp.sign(d), d)
    return d * _reduced_grad(xp, grad, reduction, math.prod(self.shape))


_huber = defop("huber_loss", _huber_fwd,
               vjp={"self": _huber_d,
                    "target": lambda xp, grad, self, target, reduction, delta:
                    -_huber_d(xp, grad, self, target, reduction, delta)},
               jvp="transpose")


_soft_margin = defop(
    "soft_margin_loss",
    lambda xp, self, target, reduction: _reduce(xp, xp.log1p(xp.exp(-self * target)),
                                                reduction),
    inputs=("self", "target"),
    vjp={"self": lambda xp, grad, self, target, reduction:
         -target * _sigmoid(xp, -self * target)
         * _reduced_grad(xp, grad, reduction, _size(self, target))},
    jvp="transpose", promote=("self", "target"))


def _rows(xp, x):
    """A 0-d or 1-d input as one row."""
    return x if x.ndim == 2 else xp.reshape(x, (1, -1))


def _mm_terms(xp, self, target, margin, weight):
    """Per (sample, class): the hinge ``margin - x[y] + x[j]`` where it is positive and
    j != y (0 elsewhere), where it is, and each sample's target weight (or None)."""
    x = _rows(xp, self)
    t = xp.reshape(target, (-1, 1))
    z = margin - xp.take_along_axis(x, t, 1) + x
    active = xp.logical_and(z > 0, xp.not_equal(xp.arange(x.shape[1]), t))
    z = xp.where(active, z, 0)
    w = None if weight is None else xp.reshape(xp.take(weight, xp.reshape(target, (-1,)), 0),
                                               (-1, 1))
    return z, active, w


def _mm_fwd(xp, self, target, weight, p, margin, reduction):
    z, _, w = _mm_terms(xp, self, target, margin, weight)
    h = z if p == 1 else z * z
    if w is not None:
        h = h * w
    loss = xp.sum(h, axis=1) / z.shape[1]
    return _reduce(xp, xp.reshape(loss, target.shape), reduction)


def _mm_grad(xp, grad, self, target, weight, p, margin, reduction):
    z, active, w = _mm_terms(xp, self, target, margin, weight)
    n, c = z.shape
    if reduction == "none":
        g = xp.reshape(grad, (-1, 1)) / c
    else:
        g = grad / (n * c if reduction == "mean" else c)
    gz = xp.where(active, g if p == 1 else 2 * z * g, 0)
    if w is not None:
        gz = gz * w
    onehot = xp.equal(xp.arange(c), xp.reshape(target, (-1, 1)))
    gx = gz - xp.where(onehot, xp.sum(gz, axis=1, keepdims=True), 0)
    return xp.reshape(gx, self.shape)


_multi_margin = defop("multi_margin_loss", _mm_fwd, inputs=("self", "target", "weight"),
                      vjp={"self": _mm_grad}, jvp="transpose", promote=("self", "weight"),
                      backward_reads="self")


def _mlm_terms(xp, self, target):
    """The hinges ``1 - x[y] + x[k]`` of each listed label y (those before the first
    negative entry) and each unlisted class k, where positive: (labels, classes) per row."""
    x = _rows(xp, self)
    t = _rows(xp, target)
    c = x.shape[1]
    listed = xp.cumprod(t >= 0, axis=1) > 0
    onehot = xp.logical_and(xp.equal(xp.expand_dims(t, 2), xp.arange(c)),
                            xp.expand_dims(listed, 2))
    is_target = xp.any(onehot, axis=1)
    xt = xp.take_along_axis(x, xp.where(listed, t, 0), 1)
    z = 1 - xp.expand_dims(xt, 2) + xp.expand_dims(x, 1)
    active = xp.logical_and(xp.logical_and(z > 0, xp.expand_dims(listed, 2)),
                            xp.expand_dims(xp.logical_not(is_target), 1))
    return xp.where(active, z, 0), active, onehot


def _mlm_fwd(xp, self, target, reduction):
    z, _, _ = _mlm_terms(xp, self, target)
    loss = xp.sum(z, axis=(1, 2)) / z.shape[2]
    return _reduce(xp, xp.reshape(loss, self.shape[:-1]), reduction)


def _mlm_grad(xp, grad, self, target, reduction):
    _, active, onehot = _mlm_terms(xp, self, target)
    n, _, c = active.shape
    g = xp.reshape(grad, (-1, 1, 1)) / c if reduction == "none" else grad / (
        n * c if reduction == "mean" else c)
    gz = xp.where(active, g, 0)
    gx = xp.sum(gz, axis=1) - xp.sum(xp.where(onehot, xp.sum(gz, axis=2, keepdims=True), 0),
                                     axis=1)
    return xp.reshape(gx, self.shape)


_multilabel_margin = defop("multilabel_margin_loss", _mlm_fwd, inputs=("self", "target"),
                           vjp={"self": _mlm_grad}, jvp="transpose", backward_reads="self")


# ---- public losses ------------------------------------------------------------------------
@_autocast.policy("kl_div")
def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """ATen's composite: ``xlogy(t, t) - t * input`` (``exp(t) * (t - input)`` for log
    targets), reduced; 'batchmean' is the sum over the batch size."""
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce)
    elif reduction == "mean":
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the "
                      "support size.'batchmean' divides only by the batch size, and aligns "
                      "with the KL div math definition.'mean' will be changed to behave the "
                      "same as 'batchmean' in the next major release.",
                      stacklevel=_observe.user_stacklevel())
    return aten_kl_div(input, target, reduction, log_target)


def aten_kl_div(input, target, reduction, log_target):
    """``torch.kl_div``'s op: ``F.kl_div`` without its legacy arguments and warning."""
    if reduction != "batchmean":
        _check_reduction(reduction)
    if not input.is_floating_point() or not target.is_floating_point():
        raise RuntimeError("kl_div: Integral inputs not supported.")
    if log_target:
        out = target.exp() * (target - input)
    else:
        out = FUNCTIONS["xlogy"](target, target) - target * input
    if reduction == "batchmean":
        out = out.sum()
        return out / input.shape[0] if input.ndim else out
    return _apply_reduction(out, reduction)


@_autocast.policy("huber_loss")
def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    if target.shape != input.shape:
        warnings.warn(f"Using a target size ({target.size()}) that is different to the input "
                      f"size ({input.size()}). This will likely lead to incorrect results due "
                      f"to broadcasting. Please ensure they have the same size.",
                      stacklevel=_observe.user_stacklevel())
    input, target = FUNCTIONS["broadcast_tensors"](input, target)
    if not (input.is_floating_point() and target.is_floating_point()
            and result_type(input, target) != input.dtype):  # a wider target stays wide
        target = _in_input_dtype("huber_cpu", input, target)
    if weight is None:
        return apply(_huber, (input, target), (_check_reduction(reduction), delta,
                                               input._data.dtype))
    if weight.shape != input.shape:
        raise ValueError("Weights and input must have the same size.")
    loss = apply(_huber, (input, target), ("none", delta, input._data.dtype)) * weight
    if reduction not in _REDUCTIONS:
        raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', "
                         f"'mean', 'sum'.")
    return _apply_reduction(loss, reduction)


def _in_input_dtype(kernel, input, target):
    """The target cast to the input's dtype, which the kernel writes its result in."""
    check_cast(result_type(input, target), input.dtype)
    if not input.is_floating_point():
        if kernel is None:  # a composite: its exp_ is what refuses
            raise RuntimeError(f"result type Float can't be cast to the desired output type "
                               f"{_pretty(input.dtype.np)}")
        common = result_type(input, target)
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_pretty(common.np)}'")
    return target if target.dtype == input.dtype else target.to(input.dtype)


@_autocast.policy("soft_margin_loss")
def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """``log1p(exp(-input * target))``, in the input's dtype and shape (ATen computes it in
    place in a tensor like the input)."""
    reduction = _check_reduction(legacy_reduction(size_average, reduce, reduction))
    if input.dtype.name == "bool":
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If "
                           "you are trying to invert a mask, use the `~` or `logical_not()` "
                           "operator instead.")
    check_output(input, input, target)
    target = _in_input_dtype(None, input, target)
    return apply(_soft_margin, (input, target), (reduction,))


@_autocast.policy("margin_ranking_loss")
def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
                        reduction="mean"):
    reduction = _check_reduction(legacy_reduction(size_average, reduce, reduction))
    if input1.ndim != input2.ndim or input1.ndim != target.ndim:
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension "
                           f"but got sizes: input1: {input1.size()}, input2: {input2.size()}, "
                           f"target: {target.size()} ")
    return _apply_reduction((-target * (input1 - input2) + margin).clamp_min(0), reduction)


@_autocast.policy("hinge_embedding_loss")
def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None,
                         reduction="mean"):
    reduction = _check_reduction(legacy_reduction(size_average, reduce, reduction))
    where = FUNCTIONS["where"]
    zeros = zeros_like(input)
    # ATen's ``margin - self`` is a sub from a filled tensor (SubBackward0)
    out = (where(target != 1, (full_like(input, margin) - input).clamp_min(0), zeros)
           + where(target != -1, input, zeros))
    return _apply_reduction(out, reduction)


@_autocast.policy("cosine_embedding_loss")
def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
                          reduction="mean"):
    reduction = _check_reduction(legacy_reduction(size_average, reduce, reduction))
    d = target.ndim
    if d not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if (input1.ndim, input2.ndim) != ((2, 2) if d else (1, 1)):
        raise RuntimeError(f"{d}D target tensor expects {d + 1}D input tensors, but found "
                           f"inputs with sizes {list(input1.shape)} and "
                           f"{list(input2.shape)}.")
    eps = 1e-12  # ATen's EPSILON
    prod = (input1 * input2).sum(d)
    mag1 = (input1 * input1).sum(d) + eps
    mag2 = (input2 * input2).sum(d) + eps
    cos = prod / (mag1 * mag2).sqrt()
    where = FUNCTIONS["where"]
    zeros = zeros_like(cos)
    out = (where(target == 1, ones_like(cos) - cos, zeros)
           + where(target == -1, (cos - margin).clamp_min(0), zeros))
    return _apply_reduction(out, reduction)


def _check_triplet_dims(anchor, positive, negative):
    a, p, n = anchor.ndim, positive.ndim, negative.ndim
    if not a == p == n:
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have "
                           f"the same number of dimensions, but got: anchor {a}D, positive "
                           f"{p}D, and negative {n}D inputs")


@_autocast.policy("triplet_margin_loss")
def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False,
                        size_average=None, reduce=None, reduction="mean"):
    reduction = _check_reduction(legacy_reduction(size_average, reduce, reduction))
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    _check_triplet_dims(anchor, positive, negative)
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = FUNCTIONS["minimum"](d_neg, pairwise_distance(positive, negative, p, eps))
    return _apply_reduction((margin + d_pos - d_neg).clamp_min(0), reduction)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None,
                                      margin=1.0, swap=False, reduction="mean"):
    _check_reduction(reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    _check_triplet_dims(anchor, positive, negative)
    if distance_function is None:
        distance_function = pairwise_distance
    d_pos = distance_function(anchor, positive)
    d_neg = distance_function(anchor, negative)
    if swap:
        d_neg = FUNCTIONS["minimum"](d_neg, distance_function(positive, negative))
    return _apply_reduction((margin + d_pos - d_neg).clamp_min(0), reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None,
                                reduction="mean"):
    reduction = legacy_reduction(size_average, reduce, reduction)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    if input.ndim == 0:  # PyTorch reads the class count with size(-1)
        raise IndexError("Dimension specified as -1 but tensor has no dimensions")
    class_dim = input.ndim - 1
    loss = loss.sum(dim=class_dim) / input.shape[class_dim]
    if reduction not in _REDUCTIONS:
        raise ValueError(reduction + " is not valid")
    return _apply_reduction(loss, reduction)


def _check_margin_input(input):
    nd = input.ndim
    if not (nd == 2 and input.shape[1] or nd == 1 and input.shape[0] or nd == 0):
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch "
                           f"size, but got: {list(input.shape)}")


def _check_margin_dtypes(kernel, input, target, weight):
    """The margin kernels exist for float32/float64 inputs, int64 targets and weights of
    the input's dtype (no float16 on CPU)."""
    dt = input._data.dtype
    if dt.name not in ("float32", "float64"):
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_pretty(dt)}'")
    for x, want in ((target, int64.np), (weight, dt)):
        if x is not None and x._data.dtype != want:
            raise RuntimeError(f"expected scalar type {_pretty(want)} but found "
                               f"{_pretty(x._data.dtype)}")


@_autocast.policy("multi_margin_loss")
def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None,
                      reduce=None, reduction="mean"):
    reduction = _check_reduction(legacy_reduction(size_average, reduce, reduction))
    if p != 1 and p != 2:
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.ndim != 1:
        raise ValueError("weight must be one-dimensional")
    _check_margin_input(input)
    n = input.shape[0] if input.ndim == 2 else 1
    c = input.shape[-1] if input.ndim else 1
    if target.ndim > 1 or target.numel() != n:
        raise RuntimeError(f"multi_margin_loss: target tensor should be 1-D with size equal to "
                           f"the number of input samples (batch size). Expected target size "
                           f"[{n}], but got {list(target.shape)}. Input has shape "
                           f"{list(input.shape)}.")
    if weight is not None and weight.numel() != c:
        raise RuntimeError(f"inconsistent weight size, expected {c} but got "
                           f"{list(weight.shape)}")
    _check_margin_dtypes("multi_margin_loss_cpu_kernel", input, target, weight)
    t = target._data
    if functions(get_array_module(t)).any_true((t < 0) | (t >= c)):
        raise RuntimeError("target out of range")
    return apply(_multi_margin, (input, target, weight), (p, margin, reduction))


@_autocast.policy("multilabel_margin_loss")
def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    reduction = _check_reduction(legacy_reduction(size_average, reduce, reduction))
    _check_margin_input(input)
    if input.ndim <= 1:
        ok = target.ndim <= 1 and target.numel() == (input.shape[0] if input.ndim else 1)
    else:
        ok = target.ndim == 2 and tuple(target.shape) == tuple(input.shape)
    if not ok:
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of "
                           f"size: {list(input.shape)}")
    am = get_array_module(target._data)
    t = am.reshape(target._data, (-1, max(target.shape[-1:] or (1,))))
    listed = am.cumprod(t >= 0, axis=1) > 0
    if functions(am).any_true(listed & (t >= (input.shape[-1] if input.ndim else 1))):
        raise RuntimeError("argument #2 'target' is out of range")
    _check_margin_dtypes("multilabel_margin_loss_forward_out_frame", input, target, None)
    return apply(_multilabel_margin, (input, target), (reduction,))


@_autocast.policy("poisson_nll_loss")
def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8,
                     reduce=None, reduction="mean"):
    reduction = legacy_reduction(size_average, reduce, reduction)
    if reduction not in _REDUCTIONS:
        raise ValueError(reduction + " is not a valid value for reduction")
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * (input + eps).log()
    if full:
        stirling = target * target.log() - target + 0.5 * (2 * math.pi * target).log()
        loss += stirling.masked_fill(target <= 1, 0)
    return _apply_reduction(loss, reduction)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """PyTorch's composite: ``var`` (a float, the input's shape, or one dim short of it or
    of size 1 in one dim) is clamped at ``eps`` outside the graph."""
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = var * ones_like(input)
    elif bool((var < 0).any()):
        raise ValueError("var has negative entry/entries")
    if var.shape != input.shape:
        if input.shape[:-1] == var.shape:
            var = var.unsqueeze(-1)
        elif not (input.ndim == var.ndim and sum(
                y for x, y in zip(input.shape, var.shape, strict=True) if x != y) == 1):
            raise ValueError("var is of incorrect size")
    if reduction not in _REDUCTIONS:
        raise ValueError(reduction + " is not valid")
    var = var.clone()
    var.data.clamp_(min=eps)  # outside the graph, as PyTorch's no_grad clamp_
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss += 0.5 * math.log(2 * math.pi)
    return _apply_reduction(loss, reduction)


# ---- ctc_loss -----------------------------------------------------------------------------
def _lse3(a, b, c):
    """``log(exp(a) + exp(b) + exp(c))`` elementwise, -inf where all three are."""
    xp = get_array_module(a)
    m = xp.maximum(xp.maximum(a, b), c)
    m = xp.where(xp.isinf(m), 0, m)
    return xp.log(xp.exp(a - m) + xp.exp(b - m) + xp.exp(c - m)) + m


def _shift(a, k, fill):
    """``a`` moved ``k`` places along its last axis (right for k > 0), filled with ``fill``."""
    xp = get_array_module(a)
    out = xp.full_like(a, fill)
    if k > 0:
        out[..., k:] = a[..., :-k]
    else:
        out[..., :k] = a[..., -k:]
    return out


def _ctc_labels(xp, targets, target_lengths, blank):
    """Each sample's extended label sequence (blank, l1, blank, l2, ..., blank), padded with
    blanks to (N, 2 max_len + 1), and where a transition may skip the previous label. The
    lengths are an array (under vmap, a batch: the longest of all sets the width)."""
    n = target_lengths.shape[0]
    longest = functions(get_array_module(target_lengths)).checked_values(
        target_lengths.max()) if n else [0]
    if not longest:  # (meta lengths: the labels' width needs their values, as PyTorch's)
        raise NotImplementedError("ctc_loss: the target lengths have no values to size the "
                                  "labels by")
    width = max(longest)
    tl = xp.asarray(target_lengths)
    j = xp.arange(width)
    if targets.ndim == 1:  # concatenated: sample i's labels start after the earlier ones
        at = xp.cumsum(tl) - tl
        rows = xp.take(targets, xp.minimum(at[:, None] + j, max(targets.shape[0] - 1, 0)), 0) \
            if targets.shape[0] else xp.zeros((n, width), dtype=int64.np)
    else:
        rows = targets[:, :width]
    labels = xp.full((n, 2 * width + 1), blank, dtype=int64.np)
    labels[:, 1::2] = xp.where(tl[:, None] > j, rows, blank)  # (tl may be a batch)
    skip = (labels != blank) & (labels != _shift(labels, 2, blank))
    skip[:, :2] = False
    return labels, skip


def _ctc_setup(xp, log_probs, targets, target_lengths, blank):
    labels, skip = _ctc_labels(xp, targets, target_lengths, blank)
    lp = xp.take_along_axis(log_probs, labels[None], 2)  # (T, N, L)
    valid = 2 * xp.asarray(target_lengths)[:, None] + 1 > xp.arange(labels.shape[1])
    return labels, skip, lp, valid


def _ctc_fwd(xp, log_probs, targets, input_lengths, target_lengths, blank, zero_infinity):
    """The forward (alpha) recursion of Graves et al. in log space, over all samples at
    once; the loss is read at each sample's last frame."""
    labels, skip, lp, valid = _ctc_setup(xp, log_probs, targets, target_lengths, blank)
    t_max, n, length = lp.shape
    tl = xp.asarray(target_lengths)
    alpha = xp.full((t_max, n, length), -math.inf, dtype=log_probs.dtype)
    alpha[0, :, 0] = lp[0, :, 0]
    if length > 1:
        alpha[0, :, 1] = xp.where(tl > 0, lp[0, :, 1], -math.inf)
    for t in range(1, t_max):
        a = alpha[t - 1]
        step = _lse3(a, _shift(a, 1, -math.inf),
                     xp.where(skip, _shift(a, 2, -math.inf), -math.inf)) + lp[t]
        alpha[t] = xp.where(valid, step, -math.inf)
    il = xp.asarray(input_lengths)
    last = alpha[xp.maximum(il - 1, 0), xp.arange(n)]  # (N, L): each sample's last frame
    end = xp.take_along_axis(last, xp.minimum(2 * tl, length - 1)[:, None], 1)[:, 0]
    before = xp.take_along_axis(last, xp.maximum(2 * tl - 1, 0)[:, None], 1)[:, 0]
    ll = xp.where(tl > 0, xp.logaddexp(end, before), last[:, 0])
    nll = xp.where(il == 0, xp.where(tl == 0, -0.0, math.inf), -ll)  # (-0.0: ATen's -ll)
    return nll.astype(log_probs.dtype, copy=False), alpha


def _ctc_unit_grad(log_probs, targets, nll, alpha, input_lengths, target_lengths, blank,
                   zero_infinity):
    """PyTorch's ctc_loss_backward for a unit gradient: ``exp(lp) - exp(lcab + nll - lp)``
    (the gradient through a log_softmax folded in), 0 past each input's length."""
    xp = get_array_module(log_probs)
    labels, skip, lp, valid = _ctc_setup(xp, log_probs, targets, target_lengths, blank)
    t_max, n, length = lp.shape
    il = xp.asarray(input_lengths)[:, None]
    tl = xp.asarray(target_lengths)[:, None]
    pos = xp.arange(length)
    ends = (2 * tl == pos) | (2 * tl - 1 == pos)
    skip2 = _shift(skip, -2, False)
    beta = xp.full_like(alpha, -math.inf)
    for t in range(t_max - 1, -1, -1):
        if t + 1 < t_max:
            b = beta[t + 1]
            step = _lse3(b, _shift(b, -1, -math.inf),
                         xp.where(skip2, _shift(b, -2, -math.inf), -math.inf)) + lp[t]
        else:
            step = xp.full_like(lp[t], -math.inf)
        init = xp.where(ends, lp[t], -math.inf)
        beta[t] = xp.where(t == il - 1, init,
                              xp.where((t < il - 1) & valid, step, -math.inf))
    ab = alpha + beta
    m = xp.max(ab, axis=2, keepdims=True) if length else xp.zeros((t_max, n, 1))
    m = xp.where(xp.isinf(m), 0, m)
    onehot = (labels[:, :, None] == xp.arange(log_probs.shape[2])).astype(log_probs.dtype)
    with functions(xp).errstate(divide="ignore"):
        lcab = xp.log(xp.einsum("tnl,nlc->tnc", xp.exp(ab - m), onehot)) + m
    g = xp.exp(log_probs) - xp.exp(lcab + nll[None, :, None] - log_probs)
    keep = il.T > xp.arange(t_max)[:, None]
    if zero_infinity:
        keep = ~xp.isinf(nll)[None] & keep
    return xp.where(keep[:, :, None], g, 0).astype(log_probs.dtype)


def _ctc_bwd_fwd(xp, grad, log_probs, targets, nll, alpha, input_lengths, target_lengths,
                 blank, zero_infinity):
    g = _ctc_unit_grad(log_probs, targets, nll, alpha, input_lengths, target_lengths, blank,
                       zero_infinity)
    return g * xp.expand_dims(xp.expand_dims(grad, 0), 2)


def _ctc_no_double_backward(grad):
    raise RuntimeError("derivative for aten::_ctc_loss_backward is not implemented")


# PyTorch's _ctc_loss_backward, as an op so a create_graph backward records it; it has no
# derivative in PyTorch either.
_ctc_backward = defop("_ctc_loss_backward", _ctc_bwd_fwd,
                      inputs=("grad", "log_probs", "targets", "nll", "alpha"),
                      vjp={"grad": _ctc_no_double_backward,
                           "log_probs": _ctc_no_double_backward})


def _ctc_grad(xp, grad, log_probs, targets, result, log_alpha, input_lengths, target_lengths,
              blank, zero_infinity):
    return call(xp, _ctc_backward, grad, log_probs, targets, result, log_alpha,
                attrs=(input_lengths, target_lengths, blank, zero_infinity))


def _ctc_jvp(xp, log_probs_t, log_probs, targets, result, log_alpha, input_lengths,
             target_lengths, blank, zero_infinity):
    """The tangent as the vjp's linear form (not differentiable again, as in PyTorch)."""
    args = [x._data if hasattr(x, "_data") else x for x in (log_probs, targets, result,
                                                              log_alpha)]
    g = functions(xp).constant(_ctc_unit_grad(*args, input_lengths, target_lengths, blank,
                                              zero_infinity))
    return xp.sum(g * log_probs_t, axis=(0, 2)), None


_ctc = defop("ctc_loss", _ctc_fwd, inputs=("log_probs", "targets"),
             vjp={"log_probs": _ctc_grad}, jvp=_ctc_jvp, outputs=("result", "log_alpha"),
             nondiff_outputs=("log_alpha",))


def _lengths(x):
    """Lengths as an int64 array: a tensor's own (under vmap, a batch of them), or the
    given numbers'."""
    if isinstance(x, Tensor):
        return get_array_module(x._data).reshape(x._data, (-1,)).astype(int64.np)
    return numpy.asarray(x, dtype=int64.np).reshape(-1)


def _first(a, bad):
    """The first value of ``a`` where ``bad`` holds (under vmap: in the first batch element
    where one does), for an error message."""
    f = functions(get_array_module(a))
    a, bad = a.reshape(-1), bad.reshape(-1)
    return next(v for v, b in zip(f.checked_values(a[bad.argmax()]),
                                  f.checked_values(bad.any()), strict=True) if b)


def _check_ctc(log_probs, targets, input_lengths, target_lengths, blank):
    """ctc_loss_allocate_outputs' checks, in its order and words (each batch element's
    lengths under vmap)."""
    t_max, n, c = log_probs.shape
    where = " (while checking arguments for ctc_loss_allocate_outputs)"
    if not 0 <= blank < c:
        raise RuntimeError("blank must be in label range")
    if len(input_lengths) != n:
        raise RuntimeError("input_lengths must be of size batch_size")
    if len(target_lengths) != n:
        raise RuntimeError("target_lengths must be of size batch_size")
    tl, il = target_lengths, input_lengths
    any_true = functions(get_array_module(tl)).any_true
    if any_true(tl < 0):
        raise RuntimeError(f"Expected target_lengths to have value at least 0, but got "
                           f"value {_first(tl, tl < 0)}{where}")
    if targets.ndim == 1 and any_true(tl.sum() != targets.shape[0]):
        total = tl.sum()
        size = _first(total, total != targets.shape[0])
        raise RuntimeError(f"Expected tensor to have size {size} at dimension 0, but got size "
                           f"{targets.shape[0]} for argument #2 'targets'{where}")
    if targets.ndim == 2 and targets.shape[0] != n:
        raise RuntimeError(f"Expected tensor to have size {n} at dimension 0, but got size "
                           f"{targets.shape[0]} for argument #2 'targets'{where}")
    if targets.ndim == 2 and any_true(tl > targets.shape[1]):
        longest = tl.max()
        raise RuntimeError(f"Expected tensor to have size at least "
                           f"{_first(longest, longest > targets.shape[1])} at dimension 1, "
                           f"but got size {targets.shape[1]} for argument #2 'targets'{where}")
    any_true = functions(get_array_module(il)).any_true
    bad = (il < 0) | (il > t_max)
    if any_true(bad):
        v = _first(il, bad)
        raise RuntimeError(f"Expected input_lengths to have value at least 0, but got value "
                           f"{v}{where}" if v < 0 else
                           f"Expected input_lengths to have value at most {t_max}, but got "
                           f"value {v}{where}")


@_autocast.policy("ctc_loss")
def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean",
             zero_infinity=False):
    """Connectionist temporal classification loss of (T, N, C) (or unbatched (T, C)) log
    probabilities; targets padded (N, S) or concatenated. 'mean' divides each loss by its
    target length, then averages (ATen's ctc_loss)."""
    _check_reduction(reduction)
    batched = log_probs.ndim == 3
    if not batched:
        log_probs = log_probs.unsqueeze(1)
    input_lengths, target_lengths = _lengths(input_lengths), _lengths(target_lengths)
    dt = log_probs._data.dtype
    if dt.name not in ("float32", "float64"):  # ATen's CPU kernel: no float16
        raise NotImplementedError(f"\"ctc_loss_cpu\" not implemented for '{_pretty(dt)}'")
    if not log_probs.numel():
        raise RuntimeError("log_probs tensor must not be empty")
    _check_ctc(log_probs, targets, input_lengths, target_lengths, blank)
    if targets.dtype != int64:
        targets = targets.long()
    res = apply(_ctc, (log_probs, targets), (input_lengths, target_lengths, blank,
                                             zero_infinity))[0]
    if zero_infinity:
        res = FUNCTIONS["where"](res == float("inf"), zeros((), dtype=res.dtype), res)
    if reduction == "mean":
        xp = get_array_module(res._data)
        lengths = wrap(xp.maximum(xp.asarray(target_lengths, dtype=res._data.dtype), 1))
        return (res / lengths).mean()
    if reduction == "sum":
        return res.sum()
    return res if batched else res.squeeze(0)
