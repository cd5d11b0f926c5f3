"""Known open bugs: mismatches with PyTorch that are to be fixed, not kept.

Listed so the fuzz suite lands green while the fixes land in parallel. Each entry is
one op, one mismatch class and a predicate on the case's inputs, with the count the
"before" report measured (180 cases per op, seed 0, ``report.py --cases 180``; 0: found
by the hypothesis run only).
**Delete an entry when its fix merges**: the suite then guards the fix. An entry
that no longer matches anything is harmless but stale; ``report.py`` shows which
registry covers each class.
"""

import math

import numpy

from .registry import KnownBug


def _bool(c):
    return "bool" in c.dtypes


def _integral(c):
    """Every data input is integer or bool."""
    return bool(c.dtypes) and c.dtypes <= {"bool", "int64"}


def _empty(c):
    return c.empty()


def _f16(c):
    return "float16" in c.dtypes


def _huge(c):
    """Some finite value beyond 1e30, whose square overflows float32."""
    return any((numpy.abs(t.array[numpy.isfinite(t.array)]) > 1e30).any()
               for t in c.tensors if t.array.dtype.kind == "f")


def _subnormal(c):
    return any(((t.array != 0) & (numpy.abs(t.array) < numpy.finfo(t.dtype).tiny)).any()
               for t in c.tensors if t.array.dtype.kind == "f")


def _special(c):
    """NaN, infinities, float16, huge or subnormal values."""
    return c.nonfinite() or _f16(c) or _huge(c) or _subnormal(c)


def _mixed(c):
    return c.mixed_dtypes()


def _shapes_differ(c):
    return len({t.shape for t in c.tensors}) > 1


def _has_zero(c):
    return any((t.array == 0).any() for t in c.tensors if t.bound is None)


def _outside_unit(c):
    """Some value outside [0, 1] (probabilities, logit without eps)."""
    return any(((t.array < 0) | (t.array > 1) | numpy.isnan(t.array)).any()
               for t in c.tensors if t.bound is None)


def _dof_nonpositive(c):
    """std/var: a reduced slice has no more elements than ``correction``."""
    shape = c.tensors[0].shape
    dim = c.kwargs.get("dim")
    dims = range(len(shape)) if dim is None else dim if isinstance(dim, tuple) else (dim,)
    n = math.prod(shape[d] for d in dims if -len(shape) <= d < max(len(shape), 1)) \
        if shape else 1
    return n <= c.kwargs.get("correction", 1)


def _conv_too_small(c):
    """conv: a dilated kernel larger than the (padded) input."""
    x, w = c.args
    pad, d = c.kwargs.get("padding", 0), c.kwargs.get("dilation", 1)
    if len(x.shape) < 2:
        return False
    return any(n + 2 * (d * (k - 1) // 2 if pad == "same" else 0 if pad == "valid" else pad)
               < d * (k - 1) + 1 for n, k in zip(x.shape[2 - len(w.shape):], w.shape[2:],
                                                          strict=True))


def _linear_mismatch(c):
    x, w = c.args[:2]
    return w.shape[-1] != x.shape[-1]


def _one_value_per_group(c):
    """group_norm: one value per group and sample, which PyTorch refuses."""
    shape, g = c.args[0].shape, c.kwargs["num_groups"]
    return shape[0] * shape[1] // g * math.prod(shape[2:]) == 1


def _einsum_broadcast(c):
    """einsum: a letter with size 1 in one operand and another size in another."""
    letters = c.args[0].split("->")[0].replace("...", "").split(",")
    sizes = {}
    for lt, t in zip(letters, c.args[1:], strict=True):
        for ch, n in zip(lt, t.shape[-len(lt):] if lt else (), strict=False):
            sizes.setdefault(ch, set()).add(n)
    return any(1 in s and len(s) > 1 for s in sizes.values())


def _nonfinite_fill(c):
    return not math.isfinite(c.kwargs["value"])


def _group(ops, cls, when, counts):
    return [KnownBug(o, cls, when, n) for o, n in zip(ops.split(), counts, strict=True)]


KNOWN_BUGS = [
    # ---- integer and bool inputs: refused exactly where PyTorch refuses them ----
    *_group("abs ceil floor round trunc softsign median median_dim",
            "torch raises NotImplementedError, retrograd does not", _bool,
            (22, 36, 31, 28, 26, 28, 23, 30)),
    *_group("silu gelu hypot round_decimals fmod pow remainder div_mode floor_divide",
            "torch raises NotImplementedError, retrograd does not", _integral,
            (58, 55, 19, 13, 4, 5, 5, 1, 1)),
    *_group("relu topk", "torch raises RuntimeError, retrograd does not", _bool, (22, 28)),
    KnownBug("clamp_tensor", "torch raises NotImplementedError, retrograd does not", _bool, 0),
    *_group("bmm matmul mm", "retrograd raises NotImplementedError, torch does not", _bool,
            (19, 19, 17)),
    *_group("softmax log_softmax", "retrograd raises NotImplementedError, torch does not",
            lambda c: _integral(c) and c.empty(), (12, 14)),
    *_group("dot matmul mm logaddexp",
            "exception type differs: retrograd NotImplementedError vs torch RuntimeError",
            _integral, (2, 1, 1, 1)),
    KnownBug("logcumsumexp",
             "exception type differs: retrograd NotImplementedError vs torch IndexError",
             _integral, 3),
    KnownBug("sign", "retrograd raises UFuncTypeError, torch does not", _bool, 36),
    KnownBug("square", "dtype differs: retrograd bool vs torch int64", _bool, 42),
    KnownBug("add_alpha", "dtype differs: retrograd int64 vs torch bool", _bool, 2),
    KnownBug("pow", "retrograd raises ValueError, torch does not", _integral, 5),
    *_group("floor_divide remainder", "retrograd raises RuntimeError, torch does not",
            _integral, (1, 1)),
    KnownBug("median", "retrograd raises ValueError, torch does not", _empty, 5),
    KnownBug("masked_fill", "exception type differs: retrograd OverflowError vs torch "
             "RuntimeError", _nonfinite_fill, 8),
    KnownBug("masked_fill", "exception type differs: retrograd ValueError vs torch "
             "RuntimeError", _nonfinite_fill, 9),
    # gradients through a bool input: PyTorch's backward fails on negating the bool
    *_group("atan2 logaddexp pow", "backward: torch raises RuntimeError, retrograd does not",
            lambda c: _bool(c) and _mixed(c), (17, 23, 16)),
    KnownBug("pow", "grad: a number where torch gives NaN", _bool, 3),
    KnownBug("div_mode", "grad: NaN where torch gives a number",
             lambda c: _bool(c) or c.nonfinite(), 1),
    # ---- mixed float dtypes: PyTorch's losses refuse them or keep the input's dtype ----
    *_group("binary_cross_entropy_with_logits huber_loss",
            "dtype differs: retrograd float64 vs torch float32", _mixed, (25, 23)),
    *_group("binary_cross_entropy_with_logits huber_loss",
            "dtype differs: retrograd float32 vs torch float16", _mixed, (24, 15)),
    *_group("binary_cross_entropy_with_logits huber_loss",
            "dtype differs: retrograd float64 vs torch float16", _mixed, (10, 10)),
    *_group("l1_loss mse_loss", "dtype differs: retrograd float16 vs torch float32", _mixed,
            (1, 1)),
    KnownBug("mse_loss", "dtype differs: retrograd float16 vs torch float64", _mixed, 1),
    KnownBug("mse_loss", "dtype differs: retrograd float32 vs torch float64", _mixed, 1),
    KnownBug("huber_loss", "backward: torch raises RuntimeError, retrograd does not", _mixed,
             51),
    *_group("cross_entropy nll_loss", "torch raises RuntimeError, retrograd does not", _mixed,
            (25, 30)),
    KnownBug("binary_cross_entropy", "torch raises RuntimeError, retrograd does not",
             lambda c: _mixed(c) or _outside_unit(c), 117),
    # ---- float16 computes in float32 and returns float16 ----
    *_group("erf gelu", "dtype differs: retrograd float64 vs torch float16", _f16, (32, 24)),
    *_group("norm std round_decimals hardswish", "infinity differs", _special, (5, 5, 3, 1)),
    *_group("layer_norm batch_norm group_norm round_decimals", "values differ (float16)",
            _special, (2, 2, 1, 1)),
    KnownBug("norm", "grad: values differ (float16)", _f16, 2),
    KnownBug("gelu", "grad: NaN where torch gives a number", _f16, 1),
    KnownBug("binary_cross_entropy_with_logits", "grad: infinity differs", _f16, 1),
    KnownBug("div", "grad: infinity differs", _f16, 1),
    # ---- class targets and indices out of range (negative included) ----
    *_group("cross_entropy embedding nll_loss", "torch raises IndexError, retrograd does not",
            lambda c: c.bad_index(), (1, 3, 0)),
    *_group("embedding index_select cross_entropy",
            "exception type differs: retrograd IndexError vs torch RuntimeError",
            lambda c: c.bad_index(), (28, 13, 1)),
    KnownBug("embedding", "backward: retrograd raises IndexError, torch does not",
             lambda c: c.kwarg("padding_idx"), 1),
    # ---- losses: all targets ignored gives NaN gradients instead of zeros ----
    *_group("cross_entropy nll_loss", "grad: NaN where torch gives a number",
            lambda c: c.all_ignored(), (13, 12)),
    # ---- std/var with no degrees of freedom ----
    *_group("std var", "backward: retrograd raises ZeroDivisionError, torch does not",
            _dof_nonpositive, (59, 44)),
    *_group("std var", "torch warns UserWarning, retrograd does not",
            lambda c: _dof_nonpositive(c) or c.empty(), (5, 5)),
    # ---- NumPy's "Mean of empty slice" escapes on empty input ----
    *_group("layer_norm huber_loss group_norm mse_loss binary_cross_entropy_with_logits "
            "smooth_l1_loss binary_cross_entropy",
            "retrograd warns RuntimeWarning, torch does not", _empty, (36, 24, 18, 20, 16, 13, 9)),
    # ---- the losses' broadcast warning ----
    *_group("l1_loss mse_loss smooth_l1_loss",
            "torch warns UserWarning, retrograd does not", _shapes_differ,
            (14, 12, 10)),
    # ---- convolution and pooling: kernel larger than padded input, empty input ----
    *_group("conv1d conv2d", "torch raises RuntimeError, retrograd does not",
            lambda c: _conv_too_small(c) or c.empty(), (30, 36)),
    *_group("conv1d conv2d",
            "exception type differs: retrograd ValueError vs torch RuntimeError",
            _conv_too_small, (1, 5)),
    *_group("conv1d conv2d adaptive_avg_pool2d",
            "exception type differs: retrograd ZeroDivisionError vs torch RuntimeError",
            _empty, (21, 26, 57)),
    KnownBug("adaptive_max_pool2d",
             "exception type differs: retrograd ValueError vs torch RuntimeError", _empty, 59),
    KnownBug("conv2d", "grad: values differ (float32)", lambda c: c.view("sliced"), 1),
    # ---- empty and 0-d inputs ----
    *_group("adaptive_max_pool2d group_norm softmax log_softmax",
            "retrograd raises ValueError, torch does not", _empty, (30, 25, 17, 13)),
    KnownBug("batch_norm", "retrograd raises ValueError, torch does not",
             lambda c: c.empty() and c.kwarg("training", True), 22),
    *_group("group_norm linear flatten", "retrograd raises RuntimeError, torch does not",
            _empty, (7, 8, 1)),
    KnownBug("group_norm", "grad: a number where torch gives NaN", _empty, 14),
    KnownBug("roll", "retrograd raises IndexError, torch does not", _empty, 2),
    KnownBug("setitem", "retrograd raises NotImplementedError, torch does not", _empty, 11),
    *_group("movedim", "retrograd raises ValueError, torch does not",
            lambda c: c.zero_dim(), (40,)),
    KnownBug("flip", "retrograd raises AxisError, torch does not", lambda c: c.zero_dim(), 25),
    KnownBug("roll", "exception type differs: retrograd AxisError vs torch IndexError",
             lambda c: c.zero_dim(), 25),
    *_group("flatten prod", "torch raises IndexError, retrograd does not",
            lambda c: c.zero_dim(), (4, 1)),
    KnownBug("index_select", "torch raises RuntimeError, retrograd does not",
             lambda c: c.zero_dim(), 44),
    KnownBug("index_select", "shape differs", lambda c: c.zero_dim(), 4),
    # ---- argument checks ----
    KnownBug("batch_norm", "torch raises ValueError, retrograd does not",
             lambda c: c.kwarg("eps", 0.0) and c.kwarg("training", True), 13),
    KnownBug("group_norm", "torch raises ValueError, retrograd does not", _one_value_per_group,
             10),
    KnownBug("group_norm", "exception type differs: retrograd RuntimeError vs torch "
             "ValueError", _one_value_per_group, 7),
    KnownBug("linear", "exception type differs: retrograd ValueError vs torch RuntimeError",
             _linear_mismatch, 3),
    KnownBug("einsum", "backward: retrograd raises ValueError, torch does not",
             _einsum_broadcast, 9),
    # ---- special values: NaN, infinities, zeros, huge values ----
    *_group("abs l1_loss smooth_l1_loss logaddexp conv1d conv2d div",
            "grad: NaN where torch gives a number", lambda c: c.nonfinite(),
            (3, 8, 2, 2, 7, 10, 1)),
    KnownBug("atan2", "grad: NaN where torch gives a number", _has_zero, 4),
    KnownBug("prod", "grad: NaN where torch gives a number",
             lambda c: _special(c) or _has_zero(c), 0),
    *_group("celu layer_norm remainder", "grad: a number where torch gives NaN",
            lambda c: c.nonfinite(), (1, 1, 1)),
    KnownBug("logit", "grad: a number where torch gives NaN",
             lambda c: not c.kwarg("eps") or c.kwarg("eps", None) or c.nonfinite(), 50),
    KnownBug("logit", "grad: infinity differs",
             lambda c: _special(c) or not c.kwarg("eps") or c.kwarg("eps", None), 1),
    KnownBug("remainder", "grad: infinity differs", lambda c: c.nonfinite() or _f16(c), 1),
    *_group("batch_norm cumprod", "grad: NaN where torch gives a number", _special, (0, 0)),
    *(KnownBug("cumprod", f"grad: values differ ({d})", _special, 0)
      for d in ("float32", "float64")),
    KnownBug("xlogy", "grad: a number where torch gives NaN",
             lambda c: _special(c) or _has_zero(c), 0),
    KnownBug("pow", "grad: infinity differs", lambda c: _mixed(c) or _has_zero(c), 8),
    *_group("relu6 remainder", "grad: values differ (float32)", lambda c: c.nonfinite(),
            (1, 1)),
    *_group("relu remainder", "grad: values differ (float64)", lambda c: c.nonfinite(), (2, 1)),
    KnownBug("relu", "grad: values differ (float16)", lambda c: c.nonfinite(), 1),
    *_group("adaptive_avg_pool2d conv2d cross_entropy gelu layer_norm",
            "NaN where torch gives a number", _special,
            (9, 3, 1, 1, 1)),
    *_group("batch_norm group_norm layer_norm", "a number where torch gives NaN", _special,
            (2, 2, 2)),
    *_group("lgamma batch_norm group_norm", "infinity differs", _special, (3, 1, 1)),
    KnownBug("layer_norm", "grad: values differ (float32)",
             lambda c: any(t.view != "contiguous" for t in c.tensors)
             or math.prod(c.kwargs["normalized_shape"]) <= 2, 2),
    KnownBug("leaky_relu", "NaN where torch gives a number", lambda c: c.nonfinite(), 0),
    KnownBug("pow_scalar", "grad: a number where torch gives NaN",
             lambda c: c.kwarg("exponent", 0.5, -0.5, 2.5)
             and (_special(c) or _has_zero(c) or any((t.array < 0).any() for t in c.tensors)), 0),
    KnownBug("std", "grad: values differ (float16)", _f16, 0),
    *_group("batch_norm conv1d", "NaN where torch gives a number", _special, (0, 0)),
    KnownBug("elu", "grad: a number where torch gives NaN", _special, 0),
    KnownBug("norm", "grad: values differ (float32)", lambda c: _special(c) or _has_zero(c), 0),
    KnownBug("max_pool2d", "backward: retrograd raises ValueError, torch does not",
             lambda c: c.kwarg("ceil_mode", True) or c.kwarg("padding", 1, 2), 0),
    KnownBug("nll_loss", "exception type differs: retrograd IndexError vs torch RuntimeError",
             lambda c: c.bad_index(), 0),
    KnownBug("smooth_l1_loss", "dtype differs: retrograd float32 vs torch float64", _mixed, 0),
    *_group("batch_norm layer_norm", "grad: values differ (float16)", _f16, (0, 0)),
    KnownBug("fmod", "a number where torch gives NaN", _special, 0),
    KnownBug("group_norm", "grad: a number where torch gives NaN", _special, 0),
    KnownBug("var", "infinity differs", _special, 0),
    KnownBug("pow_scalar", "a number where torch gives NaN",
             lambda c: c.nonfinite() and c.kwarg("exponent", -0.5, 0.5), 0),
]
