"""Deliberate deviations from PyTorch that the fuzz suite can meet.

Each entry names the section of ``docs/deviations.md`` that gives its reason (a test
checks the section exists), the ops, the mismatch class and a predicate on the case.
A bug is never listed here: open bugs go in ``known_bugs.py``.
"""

import dataclasses
import math

import numpy

import retrograd

from .registry import Deviation
from .specs import KL_CROSS, KL_FAMILIES, SPECS

PYTORCH_WRONG = "Where PyTorch 2.13 is wrong"


def _strided_affine(c):
    """batch_norm's weight or bias is a non-contiguous view."""
    return any(c.kwargs[k].view != "contiguous" for k in ("weight", "bias") if k in c.kwargs)


def _groups_of_one(c):
    """group_norm over groups of one element: the output is constant, the gradient 0."""
    shape = c.tensors[0].shape
    return shape[1] // c.kwargs["num_groups"] * int(numpy.prod(shape[2:])) == 1


def _f16(c):
    return "float16" in c.dtypes


def _f16_one_element_norm(c):
    """float16 layer_norm over one element: the output is the bias."""
    return _f16(c) and int(numpy.prod(c.kwargs["normalized_shape"])) == 1


def _ties(c):
    """The input holds equal values (so which index wins a tie is unspecified)."""
    a = c.tensors[0].array
    return numpy.unique(a[~numpy.isnan(a)] if a.dtype.kind == "f" else a).size < a.size


def _neg_zero(c):
    return any(t.array.dtype.kind == "f" and (numpy.signbit(t.array) & (t.array == 0)).any()
               for t in c.tensors)


def _nonfinite(c):
    return c.nonfinite()


def _huge(c):
    """Some finite float input beyond 1e30 (its square overflows float32)."""
    return any(t.array.dtype.kind == "f"
               and (numpy.abs(t.array[numpy.isfinite(t.array)]) > 1e30).any()
               for t in c.tensors)


def _huge_or_nonfinite(c):
    return _huge(c) or c.nonfinite()


def _products_overflow_both_ways(c):
    """dot's products, in the inputs' dtype, summed by sign, overflow to both +inf and -inf
    (a product itself, or a partial sum of finite products)."""
    x, y = (t.array for t in c.tensors)
    if x.shape != y.shape or x.dtype != y.dtype or x.dtype.kind != "f":
        return False
    with numpy.errstate(over="ignore", invalid="ignore"):
        p = x * y
        return bool(numpy.isinf(p[p > 0].sum()) and numpy.isinf(p[p < 0].sum()))


def _exp_overflows_first(c):
    """A float32 input where exp(|x|) overflows but i0(x) and i1(x) do not (88.7 to 92)."""
    return any(t.array.dtype == numpy.float32
               and ((numpy.abs(t.array) > 88.7) & (numpy.abs(t.array) < 92)).any()
               for t in c.tensors)


def _has_nan(c):
    return any(t.array.dtype.kind == "f" and numpy.isnan(t.array).any() for t in c.tensors)


def _nan_with_eps(c):
    """logit given eps (so its gradient masks [eps, 1 - eps]) of an input holding NaN."""
    return c.kwargs.get("eps") is not None and _has_nan(c)


def _quotient_overflows(c):
    """fmod's finite operands, divisor nonzero, whose |a / b| passes the largest float32
    (where an operand is float32) or float64 value."""
    a, b = (numpy.asarray(getattr(x, "array", x), dtype="float64") for x in c.args)
    with numpy.errstate(all="ignore"):
        try:
            q = numpy.abs(a / b)
        except ValueError:  # shapes that do not broadcast
            return False
    top = numpy.finfo("float32" if "float32" in c.dtypes else "float64").max
    return bool((numpy.isfinite(a) & numpy.isfinite(b) & (b != 0) & (q > top)).any())


def _onednn(c):
    """PyTorch runs the convolution in oneDNN: float16 always, float32 with groups > 1 or
    a batch above 1 (its use_mkldnn choice at the fuzz suite's sizes)."""
    x, w = c.args[0].array, c.args[1].array
    batched = x.ndim == w.ndim and x.shape[0] > 1
    return _f16(c) or (c.dtypes == {"float32"} and (c.kwargs.get("groups", 1) > 1 or batched))


def _onednn_strided_nonfinite_weight(c):
    """A strided convolution that PyTorch runs in oneDNN, with a non-finite weight."""
    return (_onednn(c) and c.kwargs.get("stride", 1) not in (1, (1,), (1, 1))
            and not numpy.isfinite(c.args[1].array).all())


def _onednn_padded_nonfinite_weight(c):
    """A padded convolution that PyTorch runs in oneDNN (which skips the padding), with a
    non-finite weight."""
    pad = c.kwargs.get("padding", 0)
    padded = pad == "same" or (pad != "valid" and any(numpy.atleast_1d(pad)))
    return _onednn(c) and padded and not numpy.isfinite(c.args[1].array).all()


def _conv_products_overflow(c):
    """A product of finite factors overflows: input times weight, or either times the
    standard-normal cotangent (|g| < 8). (A convolution's, linear's or bmm's GEMM.)"""
    x, w = c.args[0].array, c.args[1].array
    if x.dtype != w.dtype or x.dtype.kind != "f":
        return False
    top = sorted([8.0] + [float(numpy.abs(a[numpy.isfinite(a)]).max(initial=0))
                          for a in (x, w)])
    return top[-1] * top[-2] > float(numpy.finfo(x.dtype).max)


def _bmm_overflow_meets_inf(c):
    """An output element of bmm sums a product of finite factors that overflows and an
    infinite product of the other sign."""
    x, y = (t.array for t in c.tensors[:2])
    if (x.dtype.kind != "f" or x.dtype != y.dtype or x.ndim != 3 or y.ndim != 3
            or x.shape[0] != y.shape[0] or x.shape[2] != y.shape[1]):
        return False
    with numpy.errstate(over="ignore", invalid="ignore"):
        p = x[:, :, :, None] * y[:, None, :, :]
    over = numpy.isinf(p) & numpy.isfinite(x)[..., None] & numpy.isfinite(y)[:, None]
    return bool((((over & (p > 0)).any(2) & (numpy.isinf(p) & (p < 0)).any(2))
                 | ((over & (p < 0)).any(2) & (numpy.isinf(p) & (p > 0)).any(2))).any())


def _slices(c):
    """The slices a normalisation normalises (None: batch_norm in eval mode)."""
    x = c.tensors[0].array
    if c.op == "layer_norm":
        return x.reshape(-1, math.prod(c.kwargs["normalized_shape"]))
    if c.op == "group_norm":
        return x.reshape(x.shape[0] * c.kwargs["num_groups"], -1)
    if c.kwargs.get("training"):
        return numpy.moveaxis(x, 1, 0).reshape(x.shape[1], -1)
    return None


def _two_values_per_slice(c):
    """Every normalised slice holds at most two distinct values (one element, a constant
    row, a pair): the exact gradient is 0 or eps-sized, and both libraries return noise."""
    s = _slices(c)
    return (s is not None and s.size > 0 and c.dtypes <= {"float32", "float64"}
            and all(numpy.unique(r).size <= 2 for r in s))


def _sum_overflows(c):
    """The sum of the input's finite magnitudes passes its dtype's largest value."""
    a = c.tensors[0].array
    if a.dtype.kind != "f":
        return False
    finite = a[numpy.isfinite(a)].astype("float64")
    return float(numpy.abs(finite).sum()) > float(numpy.finfo(a.dtype).max)


def _f16_strided(c):
    """A float16 case with some non-contiguous tensor (input, weight or bias)."""
    return _f16(c) and any(t.view != "contiguous" for t in c.tensors)


def _constant_slice_without_eps(c):
    """layer_norm with eps = 0 of a slice of equal values (variance 0: 0 * inf)."""
    s = _slices(c)
    return (c.kwargs.get("eps") == 0 and s is not None
            and any(r.size and numpy.unique(r).size == 1 for r in s))


def _large_float32(c):
    """Some float32 input of magnitude 100 or more."""
    return any(t.array.dtype == numpy.float32
               and (numpy.abs(t.array[numpy.isfinite(t.array)]) >= 100).any()
               for t in c.tensors)


def _kl_params(c):
    """(kind, float64 array) of each parameter of a cross-family KL case (specs.KL_FAMILIES)."""
    p, q = KL_CROSS[c.op]
    kinds = KL_FAMILIES[p][0] + KL_FAMILIES[q][0]
    return list(zip(kinds, (t.array.astype("float64") for t in c.tensors), strict=True))


def _kl_outside_support(c):
    """Validation off, and some parameter outside its family's support: a scale or rate not
    positive, probs outside [0, 1], a Uniform's low not below its high, a NaN."""
    if c.kwargs["validate_args"]:
        return False
    params = _kl_params(c)
    with numpy.errstate(invalid="ignore"):
        for k, (kind, a) in enumerate(params):
            if kind == "positive":
                bad = ~(a > 0)
            elif kind == "unit":
                bad = ~((a >= 0) & (a <= 1))
            elif kind == "high":
                low = params[k - 1][1]
                try:
                    bad = ~(low < a)
                except ValueError:  # shapes that do not broadcast
                    bad = False
            else:
                bad = numpy.isnan(a)
            if numpy.any(bad):
                return True
    return False


def _kl_edge_of_range(c):
    """Some parameter infinite, beyond 1e30 or nonzero below 1e-30 in magnitude (its square,
    or its product with another, overflows or underflows float32)."""
    return any(((numpy.abs(a) > 1e30) | ((a != 0) & (numpy.abs(a) < 1e-30))).any()
               for _, a in _kl_params(c))


def _kl_unit_interval_ends(c):
    """A Uniform's low exactly 0 or high exactly 1 (its support reaches an end of [0, 1])."""
    return any((kind == "low" and (a == 0).any()) or (kind == "high" and (a == 1).any())
               for kind, a in _kl_params(c))


def _float32_rounding(c):
    """The case's float32 result and gradients, retrograd's and PyTorch's, against PyTorch's
    on the case in float64: retrograd's error is nowhere above twice PyTorch's or 1e-3 of
    the largest magnitude (at least 1), so where they differ, both are rounding noise (a
    wrong formula shows in float64, which this does not cover)."""
    import torch

    from . import compare
    wide = dataclasses.replace(c, args=[dataclasses.replace(t, base=t.base.astype("float64"))
                                        for t in c.args])
    outs = [compare.run(SPECS[c.op], case, lib)
            for case, lib in ((c, retrograd), (c, torch), (wide, torch))]
    if any(o.error is not None for o in outs):
        return False
    ours, theirs, exact = ([compare._numpy(t) for t in compare._tensors(o.result)]
                           + [g for g in o.grads or () if g is not None] for o in outs)
    if not len(ours) == len(theirs) == len(exact):
        return False
    for a, b, x in zip(ours, theirs, exact, strict=True):
        a, b, x = (v.astype("float64") for v in (a, b, x))
        if not a.shape == b.shape == x.shape:
            return False
        fin = numpy.isfinite(a) & numpy.isfinite(b) & numpy.isfinite(x)
        bound = numpy.maximum(2 * numpy.abs(b - x)[fin], 1e-3 * numpy.abs(x[fin]).max(initial=1))
        if (numpy.abs(a - x)[fin] > bound).any():
            return False
    return True


def _mixed_float32_rounding(c):
    """A float32 parameter beside a float64 one (a float64 result): both libraries compute
    the float32 one's terms in float32 (PyTorch's ``broadcast_all`` keeps dtypes), so a
    closed form that cancels is float32 rounding noise there too (:func:`_float32_rounding`)."""
    return "float32" in c.dtypes and _float32_rounding(c)


def _kl_continuous_bernoulli_near_half(c):
    """A ContinuousBernoulli with probs within 0.15 of 1/2 in float32, 0.01 in float64:
    outside its Taylor window, its moments add terms of opposite sign that grow as
    1 / log(p / (1 - p)), and what is left is noise in both libraries (the float64 result
    is no reference: PyTorch's own error there is of the same size as retrograd's)."""
    t = c.tensors[0 if KL_CROSS[c.op][0] == "ContinuousBernoulli" else -1]
    width = 0.15 if t.dtype == "float32" else 0.01
    return bool((numpy.abs(t.array - 0.5) < width).any())


def _kl_ill_conditioned(c):
    """A covariance whose condition number passes 100 in float32 (1e6 in float64), or a
    LowRank's smallest ``cov_diag`` as many times below its largest eigenvalue or the
    square of the locs' difference (its Woodbury inverse, ``D^-1 - D^-1 W C^-1 W^T D^-1``,
    and the Mahalanobis term through it cancel as much)."""
    limit = 100 if "float32" in c.dtypes else 1e6
    params = [a for _, a in _kl_params(c)]
    if KL_CROSS[c.op][0] != "LowRankMultivariateNormal":
        params = params[3:] + params[:3]
    (loc, w, d), (mvn_loc, lower, diagonal) = params[:3], params[3:]
    tril = numpy.tril(lower, -1) + diagonal[..., None] * numpy.eye(diagonal.shape[-1])
    with numpy.errstate(all="ignore"):
        try:
            lowrank = w @ numpy.swapaxes(w, -1, -2) + d[..., None] * numpy.eye(d.shape[-1])
            covs = (lowrank, tril @ numpy.swapaxes(tril, -1, -2))
            if not all(numpy.isfinite(a).all() for a in covs):
                return False  # (the edges of the float range, or a known bug)
            spread = numpy.maximum(numpy.linalg.eigvalsh(lowrank)[..., -1],
                                   ((loc - mvn_loc) ** 2).max(-1, initial=0))
            woodbury = spread / d.min(-1, initial=numpy.inf)
            return bool(any((numpy.linalg.cond(a) > limit).any() for a in covs if a.size)
                        or (woodbury > limit).any())
        except (ValueError, numpy.linalg.LinAlgError):  # shapes that do not broadcast
            return False


def _kl_uniform_narrow_against_gumbel(c):
    """A Uniform's width 100 times below the Gumbel's scale in float32 (1e6 in float64):
    ``exp(-high / scale) - exp(-low / scale)`` cancels as much."""
    (_, low), (_, high), _, (_, scale) = _kl_params(c)
    limit = 100 if "float32" in c.dtypes else 1e6
    with numpy.errstate(all="ignore"):
        try:
            return bool((scale > limit * (high - low)).any())
        except ValueError:  # shapes that do not broadcast
            return False


def _kl_mask_misshapen(c):
    """The side whose support PyTorch tests (q for Beta-Uniform, else p) has a batch shape
    other than the result's: its mask of that shape raises or marks the wrong entries."""
    p, _ = KL_CROSS[c.op]
    n = len(KL_FAMILIES[p][0])
    shapes = [t.shape for t in c.tensors]
    side = shapes[n:] if p == "Beta" else shapes[:n]
    try:
        return numpy.broadcast_shapes(*side) != numpy.broadcast_shapes(*shapes)
    except ValueError:  # shapes that do not broadcast
        return False


_KL_OPS = tuple(KL_CROSS)
_KL_P_GAMMA_BETA = tuple(o for o, (p, _) in KL_CROSS.items() if p in ("Gamma", "Beta"))
_KL_GAMMA_BETA = tuple(o for o, pq in KL_CROSS.items() if {"Gamma", "Beta"} & set(pq))
_KL_CONT_BERN = tuple(o for o, pq in KL_CROSS.items() if "ContinuousBernoulli" in pq)
_KL_MVN = tuple(o for o, (p, _) in KL_CROSS.items() if "Multivariate" in p)
_KL_MASKED = ("dist_kl_beta_uniform", "dist_kl_pareto_exponential", "dist_kl_pareto_gamma",
              "dist_kl_pareto_normal", "dist_kl_uniform_beta", "dist_kl_uniform_exponential",
              "dist_kl_uniform_gamma")
_VALUE_CLASSES = tuple(f"{g}{cls}" for g in ("", "grad: ")
                       for cls in ("NaN where torch gives a number",
                                   "a number where torch gives NaN", "infinity differs",
                                   "values differ (float32)", "values differ (float64)"))
KL_EDGES = "Distributions: KL divergences across families at the edges"

_CANCELLING_FORMS = ("dist_gamma_entropy", "dist_beta_entropy", "dist_studentt_entropy",
                     "dist_kl_beta", "dist_kl_gamma")

LANES = "PyTorch's answer depends on the element's position"
PAD = "Padding times infinity in convolution"
CONV = ("conv1d", "conv2d", "conv2d_tiles", "conv2d_depthwise")
GEMM = CONV + ("linear", "bmm")
OVERFLOW = "Normalisation at the edge of the float range"
CANCEL = "Normalisation gradients that cancel to rounding noise"

def _subnormal(c):
    """Some float input is subnormal (PyTorch's log1p rounds those apart: docs)."""
    return any(t.array.dtype.kind == "f" and ((t.array != 0) & (numpy.abs(t.array)
               < numpy.finfo(t.array.dtype).tiny)).any() for t in c.tensors)


DEVIATIONS = [
    Deviation(PYTORCH_WRONG, ("dist_exponential_icdf",), "values differ (float32)", _subnormal),
    Deviation(LANES, ("gelu",), "NaN where torch gives a number", _nonfinite),
    Deviation(LANES, ("celu",), "grad: a number where torch gives NaN", _nonfinite),
    *(Deviation(LANES, ("relu6",), cls, _nonfinite)
      for cls in ("grad: values differ (float32)", "grad: values differ (float64)")),
    Deviation(LANES, ("logit",), "grad: infinity differs", _neg_zero),
    Deviation(LANES, ("logit",), "grad: NaN where torch gives a number", _nan_with_eps),
    *(Deviation(LANES, ("dot",), cls, _products_overflow_both_ways)
      for cls in ("NaN where torch gives a number", "a number where torch gives NaN")),
    Deviation(LANES, ("selu", "hardswish", "elu"), "grad: a number where torch gives NaN",
              _has_nan),
    *(Deviation(LANES, ("softshrink", "hardshrink"), f"grad: values differ ({dt})", _has_nan)
      for dt in ("float16", "float32", "float64")),
    *(Deviation(LANES, ("hardtanh",), f"grad: values differ ({dt})", _has_nan)
      for dt in ("float16", "float32", "float64")),
    Deviation(LANES, ("fmod", "remainder"), "a number where torch gives NaN",
              _quotient_overflows),
    Deviation(LANES, CONV, "grad: a number where torch gives NaN",
              _onednn_strided_nonfinite_weight),
    *(Deviation(LANES, GEMM, cls, _conv_products_overflow)
      for cls in ("NaN where torch gives a number", "a number where torch gives NaN",
                  "infinity differs",
                  "grad: NaN where torch gives a number", "grad: infinity differs",
                  "grad: a number where torch gives NaN")),
    Deviation(LANES, ("bmm",), "a number where torch gives NaN", _bmm_overflow_meets_inf),
    *(Deviation(OVERFLOW, (op,), cls, _huge_or_nonfinite)
      for op in ("batch_norm", "layer_norm", "group_norm")
      for cls in ("a number where torch gives NaN", "NaN where torch gives a number",
                  "infinity differs")),
    *(Deviation(OVERFLOW, (op,), cls, _huge_or_nonfinite)
      for op in ("batch_norm", "layer_norm", "group_norm")
      for cls in ("grad: a number where torch gives NaN", "grad: NaN where torch gives a number",
                  "grad: infinity differs")),
    *(Deviation(OVERFLOW, ("batch_norm",), cls, _f16_strided)
      for cls in ("infinity differs", "NaN where torch gives a number",
                  "grad: values differ (float16)", "grad: infinity differs")),
    *(Deviation(CANCEL, ("layer_norm", "group_norm", "batch_norm"), cls, _two_values_per_slice)
      for cls in ("grad: values differ (float32)", "grad: values differ (float64)",
                  "values differ (float32)")),
    *(Deviation(CANCEL, ("layer_norm",), cls, _constant_slice_without_eps)
      for cls in ("a number where torch gives NaN", "grad: a number where torch gives NaN")),
    *(Deviation(LANES, ("mean", "nanmean"), cls, _sum_overflows)
      for cls in ("NaN where torch gives a number", "a number where torch gives NaN",
                  "infinity differs")),
    Deviation("Losses and embedding: gradients where PyTorch's backward fails",
              ("huber_loss",), "backward: torch raises RuntimeError, retrograd does not",
              lambda c: c.mixed_dtypes()),
    Deviation(PAD, CONV, "NaN where torch gives a number", lambda c: _f16(c) and c.nonfinite()),
    Deviation(PAD, CONV, "NaN where torch gives a number", _onednn_padded_nonfinite_weight),
    *(Deviation(PYTORCH_WRONG, ("median_dim",), cls, lambda c: c.view("expanded"))
      for cls in ("values differ (float32)", "values differ (float64)",
                  "values differ (float16)", "integer values differ", "infinity differs",
                  "a number where torch gives NaN")),
    *(Deviation(PYTORCH_WRONG, ("batch_norm",), cls, _strided_affine)
      for cls in ("grad: values differ (float32)", "grad: values differ (float64)",
                  "grad: infinity differs", "grad: a number where torch gives NaN")),
    Deviation(PYTORCH_WRONG, ("layer_norm",), "values differ (float16)",
              _f16_one_element_norm),
    *(Deviation(PYTORCH_WRONG, ("group_norm",), cls, _groups_of_one)
      for cls in ("grad: values differ (float32)", "values differ (float32)",
                  "values differ (float16)")),
    Deviation("Order of tied elements", ("topk",), "integer values differ", _ties),
    Deviation("Half-precision: what retrograd computes where PyTorch rounds or refuses",
              ("cross_entropy", "nll_loss"), "infinity differs", _f16),
    *(Deviation(PYTORCH_WRONG, ("special_i1",), cls, _exp_overflows_first)
      for cls in ("infinity differs", "grad: a number where torch gives NaN",
                  "grad: infinity differs")),
    *(Deviation(PYTORCH_WRONG, ("special_log_ndtr",), cls,
                lambda c: (c.tensors[0].array < -10).any())
      for cls in ("grad: values differ (float32)", "grad: values differ (float64)",
                  "grad: infinity differs", "grad: a number where torch gives NaN")),
    Deviation("Half-precision: what retrograd computes where PyTorch rounds or refuses",
              ("special_i1", "special_i1e"),
              "backward: torch raises NotImplementedError, retrograd does not", _f16),
    *(Deviation("float16 products round once", ("prod",), cls, _f16)
      for cls in ("infinity differs", "a number where torch gives NaN",
                  "grad: values differ (float16)", "grad: infinity differs")),
    *(Deviation("Distributions: closed forms that cancel in float32", _CANCELLING_FORMS, cls,
                when)
      for cls in ("values differ (float32)", "grad: values differ (float32)")
      for when in (_large_float32, _float32_rounding)),
    *(Deviation("Distributions: closed forms that cancel in float32", _CANCELLING_FORMS, cls,
                _mixed_float32_rounding)
      for cls in ("values differ (float64)", "grad: values differ (float64)")),
    *(Deviation("Half-precision: what retrograd computes where PyTorch rounds or refuses",
                _CANCELLING_FORMS, cls, _f16)
      for cls in ("values differ (float16)", "values differ (float32)", "infinity differs",
                  "grad: values differ (float16)", "grad: values differ (float32)",
                  "grad: infinity differs", "grad: a number where torch gives NaN")),
    # entropies' and KLs' gradients take trigamma, PyTorch's off in the 10th digit
    Deviation(PYTORCH_WRONG, _CANCELLING_FORMS + _KL_P_GAMMA_BETA,
              "grad: values differ (float64)"),
    *(Deviation("Distributions: closed forms that cancel in float32", _KL_OPS, cls,
                _float32_rounding)
      for cls in ("values differ (float32)", "grad: values differ (float32)")),
    *(Deviation("Distributions: closed forms that cancel in float32", ops, f"{g}{cls}", when)
      for ops, when in ((_KL_CONT_BERN, _kl_continuous_bernoulli_near_half),
                        (_KL_MVN, _kl_ill_conditioned),
                        (("dist_kl_uniform_gumbel",), _kl_uniform_narrow_against_gumbel),
                        (_KL_GAMMA_BETA, _large_float32))
      for g in ("", "grad: ") for cls in ("values differ (float32)", "values differ (float64)")),
    Deviation(PYTORCH_WRONG, ("dist_kl_continuousbernoulli_uniform",
                              "dist_kl_uniform_continuousbernoulli"), "infinity differs",
              _kl_unit_interval_ends),
    *(Deviation(PYTORCH_WRONG, _KL_MASKED, cls, _kl_mask_misshapen)
      for cls in ("torch raises IndexError, retrograd does not", "infinity differs",
                  "a number where torch gives NaN", "NaN where torch gives a number")),
    # whether a Cholesky factorization of a matrix positive-definite to rounding succeeds
    *(Deviation("Distributions: closed forms that cancel in float32", _KL_MVN, cls,
                _kl_ill_conditioned)
      for cls in ("retrograd raises LinAlgError, torch does not",
                  "torch raises LinAlgError, retrograd does not")),
    *(Deviation(PYTORCH_WRONG, _KL_MVN, cls, lambda c: c.empty())
      for cls in ("torch raises ZeroDivisionError, retrograd does not",
                  "exception type differs: retrograd RuntimeError vs torch ZeroDivisionError")),
    Deviation(KL_EDGES, _KL_OPS, "grad: NaN where torch gives a number", lambda c: c.empty()),
    *(Deviation(KL_EDGES, _KL_OPS, cls, _kl_outside_support) for cls in _VALUE_CLASSES),
    *(Deviation(KL_EDGES, _KL_OPS, cls, _kl_edge_of_range) for cls in _VALUE_CLASSES),
]
