"""The losses at their edges, each case run under PyTorch and retrograd and compared:
class targets out of range (negative included), ignored targets, the dtypes and shapes
the kernels refuse, broadcasting targets, empty batches, 0-d inputs, NaN and infinity."""

import math

import numpy
import pytest

import retrograd

from _nn_util import assert_same_outcome

pytestmark = pytest.mark.torch

_X = numpy.random.default_rng(0).standard_normal((3, 4))
_X4 = numpy.random.default_rng(1).standard_normal((2, 4, 3, 2))


def _grad_of(T, loss, *inputs):
    """The loss and the gradients of its sum (``allow_unused``: None becomes zeros)."""
    grads = T.autograd.grad(loss.sum(), inputs, allow_unused=True)
    return [loss] + [T.zeros_like(x) if g is None else g for x, g in zip(inputs, grads,
                                                                          strict=True)]


def _class_loss(name, x, target, **kw):
    def run(T):
        inp = T.tensor(x, requires_grad=True)
        w = kw.get("weight")
        opts = dict(kw, weight=None if w is None else T.tensor(w, dtype=T.float64))
        loss = getattr(T.nn.functional, name)(inp, T.tensor(target), **opts)
        return _grad_of(T, loss, inp)
    return run


# ---- class targets out of range -----------------------------------------------------------
_BAD_TARGETS = [[0, 1, -1], [0, 1, 4], [0, -5, 1], [0, 1, -100]]
_OPTIONS = [{}, {"reduction": "none"}, {"reduction": "sum"}, {"ignore_index": -5},
            {"ignore_index": 1}, {"weight": [1.0, 2.0, 0.5, 1.0]}]


@pytest.mark.parametrize("name", ["cross_entropy", "nll_loss"])
@pytest.mark.parametrize("target", _BAD_TARGETS)
@pytest.mark.parametrize("kw", _OPTIONS)
def test_class_targets_out_of_range(name, target, kw):
    """IndexError 'Target -1 is out of bounds.' (no wrap-around); an ignore_index of the
    bad value (-100 by default, -5) lets it through."""
    assert_same_outcome(_class_loss(name, _X, target, **kw))


@pytest.mark.parametrize("target", _BAD_TARGETS)
@pytest.mark.parametrize("kw", [{"label_smoothing": 0.1},
                                {"label_smoothing": 0.2, "reduction": "none"},
                                {"label_smoothing": 0.1, "weight": [1.0, 2.0, 0.5, 1.0]}])
def test_smoothed_targets_out_of_range(target, kw):
    assert_same_outcome(_class_loss("cross_entropy", _X, target, **kw))


@pytest.mark.parametrize("name", ["cross_entropy", "nll_loss"])
@pytest.mark.parametrize("bad", [-1, 4, 7])
@pytest.mark.parametrize("reduction", ["mean", "none"])
def test_spatial_targets_out_of_range(name, bad, reduction):
    """K-d targets (a 4-D input is nll_loss2d's; 3-D and 5-D are viewed as 4-D)."""
    for x in (_X4, _X4[..., 0], _X4[..., None]):
        target = numpy.zeros((x.shape[0],) + x.shape[2:], dtype=numpy.int64)
        target.flat[-1] = bad
        assert_same_outcome(_class_loss(name, x, target, reduction=reduction))


def test_single_sample_target_out_of_range():
    assert_same_outcome(_class_loss("nll_loss", _X[0], -1))
    assert_same_outcome(_class_loss("cross_entropy", _X[0], 4))


# ---- ignored targets ----------------------------------------------------------------------
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("label_smoothing", [0.0, 0.2])
@pytest.mark.parametrize("weight", [None, [1.0, 1.0, 1.0, 1.0], [0.0, 0.0, 1.0, 1.0]])
@pytest.mark.parametrize("target", [[-100, -100, -100], [0, 1, 1], [0, -100, 1]])
def test_ignored_and_zero_weight_targets(reduction, label_smoothing, weight, target):
    """All targets ignored: zero gradients (the mean is NaN, as torch's); targets whose
    weights sum to zero: torch's NaN mean and NaN gradients."""
    assert_same_outcome(_class_loss("cross_entropy", _X, target, reduction=reduction,
                                    label_smoothing=label_smoothing, weight=weight))


def test_all_ignored_gradient_is_zero_not_nan():
    x = retrograd.tensor(_X, requires_grad=True)
    loss = retrograd.nn.functional.cross_entropy(x, retrograd.full((3,), -100),
                                                 label_smoothing=0.1)
    loss.backward()
    assert numpy.isnan(loss.item())
    assert not x.grad.abs().sum().item()


# ---- argument checks of nll_loss and cross_entropy ----------------------------------------
def _shaped(name, xshape, target, tdtype="int64", weight=None, xdtype="float64", **kw):
    def run(T):
        x = T.from_numpy(numpy.ones(xshape, dtype=xdtype))
        t = T.from_numpy(numpy.asarray(target).astype(tdtype))
        w = None if weight is None else T.from_numpy(numpy.ones(weight[0], dtype=weight[1]))
        return [getattr(T.nn.functional, name)(x, t, weight=w, **kw)]
    return run


@pytest.mark.parametrize("name", ["cross_entropy", "nll_loss"])
@pytest.mark.parametrize("case", [
    ((), 0), ((4,), [1]), ((3, 4), [[0], [1], [2]]), ((3, 4), [0, 1]), ((3, 4), 0),
    ((2, 4, 3, 3), numpy.zeros((2, 3, 2))), ((2, 4, 3, 3), numpy.zeros((2, 9))),
    ((2, 4, 3), numpy.zeros((2, 2))), ((0, 4), numpy.zeros(0)),
])
def test_target_shapes(name, case):
    assert_same_outcome(_shaped(name, *case))


@pytest.mark.parametrize("name", ["cross_entropy", "nll_loss"])
@pytest.mark.parametrize("tdtype", ["float32", "float64", "int32", "int16", "uint8", "bool"])
def test_target_dtypes(name, tdtype):
    """Long or Byte targets only (a float target of the input's shape is cross_entropy's
    class probabilities)."""
    assert_same_outcome(_shaped(name, (3, 4), [0, 1, 1], tdtype))
    assert_same_outcome(_shaped(name, (2, 4, 2), numpy.zeros((2, 2)), tdtype))


@pytest.mark.parametrize("name", ["cross_entropy", "nll_loss"])
@pytest.mark.parametrize("case", [
    {"weight": ((3,), "float64")}, {"weight": ((2, 2), "float64")},
    {"weight": ((4,), "float32")}, {"weight": ((4,), "float64"), "xdtype": "float32"},
    {"weight": ((4,), "float32"), "tdtype": "float32"}, {"xdtype": "int64"},
    {"xdtype": "bool"}, {"xdtype": "float16"},
])
def test_weight_and_input_dtypes(name, case):
    assert_same_outcome(_shaped(name, (3, 4), [0, 1, 1], **case))
    assert_same_outcome(_shaped(name, (2, 4, 2, 2), numpy.zeros((2, 2, 2)), **case))


@pytest.mark.parametrize("case", [
    {"ignore_index": 1}, {"ignore_index": -5}, {"label_smoothing": 1.5},
    {"weight": ((3,), "float64")}, {"label_smoothing": 0.2, "weight": ((4,), "float64")},
    {"reduction": "none"}, {"reduction": "sum"},
])
def test_probability_targets(case):
    x = numpy.random.default_rng(2).standard_normal((3, 4))
    p = numpy.random.default_rng(3).dirichlet(numpy.ones(4), 3)

    def run(T):
        kw = dict(case)
        if "weight" in kw:
            kw["weight"] = T.from_numpy(numpy.linspace(0.5, 2, kw["weight"][0][0]))
        inp = T.from_numpy(x.copy()).requires_grad_()
        loss = T.nn.functional.cross_entropy(inp, T.from_numpy(p.copy()), **kw)
        return _grad_of(T, loss, inp)
    assert_same_outcome(run)


@pytest.mark.parametrize("shape", [(), (0, 4), (0, 4, 2)])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_probability_targets_empty_and_0d(shape, reduction):
    def run(T):
        inp = T.zeros(shape, dtype=T.float64, requires_grad=True)
        loss = T.nn.functional.cross_entropy(inp, T.zeros(shape, dtype=T.float64),
                                             reduction=reduction)
        return _grad_of(T, loss, inp)
    assert_same_outcome(run)


# ---- pointwise losses: broadcasting, dtypes, signatures ----------------------------------
_POINTWISE = ["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "soft_margin_loss"]


def _pointwise(name, xshape, tshape, xdtype="float64", tdtype="float64", grad=True, **kw):
    def run(T):
        r = numpy.random.default_rng(4)
        x = T.from_numpy(r.uniform(-2, 2, xshape).astype(xdtype))
        t = T.from_numpy(r.uniform(-2, 2, tshape).astype(tdtype))
        if grad and x.is_floating_point():
            x.requires_grad_()
        loss = getattr(T.nn.functional, name)(x, t, **kw)
        return _grad_of(T, loss, x) if x.requires_grad else [loss]
    return run


@pytest.mark.parametrize("name", _POINTWISE)
@pytest.mark.parametrize("shapes", [((3, 1), (3, 4)), ((3, 4), (4,)), ((3, 4), (2, 4)),
                                    ((4,), (3, 4)), ((), (3,))])
@pytest.mark.parametrize("reduction", ["mean", "none"])
def test_broadcasting_targets_warn(name, shapes, reduction):
    """mse/l1/smooth_l1/huber warn that the target size differs (then broadcast, or fail
    as broadcast_tensors does); soft_margin_loss writes into the input's shape."""
    assert_same_outcome(_pointwise(name, *shapes, reduction=reduction))


@pytest.mark.parametrize("name", _POINTWISE + ["binary_cross_entropy",
                                               "binary_cross_entropy_with_logits"])
@pytest.mark.parametrize("dtypes", [("int64", "int64"), ("int32", "int64"), ("bool", "bool"),
                                    ("float64", "int64"), ("int64", "float64"),
                                    ("bool", "float32"), ("float32", "bool"),
                                    ("float32", "float64"), ("float64", "float32"),
                                    ("float16", "float32"), ("float32", "float16")])
def test_pointwise_dtypes(name, dtypes):
    """Which kernel refuses which dtypes (with torch's type and message), and the result's
    dtype where it accepts them (no float64 leaking into float32)."""
    def run(T):
        r = numpy.random.default_rng(5)
        x = T.from_numpy(r.uniform(0.05, 0.95, (3, 4))).to(getattr(T, dtypes[0]))
        t = T.from_numpy(r.uniform(0.05, 0.95, (3, 4))).to(getattr(T, dtypes[1]))
        return [getattr(T.nn.functional, name)(x, t)]
    assert_same_outcome(run, atol=1e-3, rtol=1e-3)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_huber_loss_in_the_common_dtype(reduction):
    """Each loss is computed in the float32 common dtype and written in float16, then
    reduced: targets beyond float16's range give finite losses (inf when cast first)."""
    def run(T):
        x = T.tensor([[0.678, -0.6016], [1.083, 0.1008]], dtype=T.float16)
        t = T.tensor([[-0.0354, -894.5], [-94663.05, 0.0019]])
        return [T.nn.functional.huber_loss(x, t, delta=0.5, reduction=reduction)]
    assert_same_outcome(run, atol=0, rtol=1e-3)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("target_dtype", ["float16", "float32", "float64"])
def test_huber_loss_of_float16_overflows_before_the_reduction(reduction, target_dtype):
    """A float16 loss past 65504 is written as inf, and the mean of it is inf, as PyTorch's
    (not 2.2e4, the mean taken before rounding)."""
    def run(T):
        x = T.tensor([[4636.0, 2814.0], [-236.6, 20.08]], dtype=T.float16)
        t = T.tensor([[-9.82, 5344.6], [-60000.0, 66.26]], dtype=getattr(T, target_dtype))
        return [T.nn.functional.huber_loss(x, t, delta=2.0, reduction=reduction)]
    assert_same_outcome(run, atol=0, rtol=1e-3)


@pytest.mark.parametrize("name", _POINTWISE + ["binary_cross_entropy",
                                               "binary_cross_entropy_with_logits"])
@pytest.mark.parametrize("shape", [(0, 3), ()])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_pointwise_empty_and_0d(name, shape, reduction):
    """An empty mean is NaN without NumPy's warning; 0-d inputs work."""
    def run(T):
        x = T.full(shape, 0.25, dtype=T.float64, requires_grad=True)
        loss = getattr(T.nn.functional, name)(x, T.full(shape, 0.5, dtype=T.float64),
                                              reduction=reduction)
        return _grad_of(T, loss, x)
    assert_same_outcome(run)


@pytest.mark.parametrize("name", ["mse_loss", "l1_loss"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none", "avg"])
@pytest.mark.parametrize("wshape", [(3, 4), (4,)])
def test_weighted_mse_and_l1(name, reduction, wshape):
    def run(T):
        w = T.from_numpy(numpy.linspace(0.1, 1, math.prod(wshape)).reshape(wshape))
        x = T.from_numpy(_X.copy()).requires_grad_()
        loss = getattr(T.nn.functional, name)(x, T.zeros(3, 4, dtype=T.float64), weight=w,
                                              reduction=reduction)
        return _grad_of(T, loss, x)
    assert_same_outcome(run)


@pytest.mark.parametrize("name", ["mse_loss", "l1_loss", "smooth_l1_loss"])
def test_legacy_positional_arguments(name):
    """size_average and reduce come third and fourth, as in torch (with its warning)."""
    assert_same_outcome(lambda T: [getattr(T.nn.functional, name)(
        T.from_numpy(_X.copy()), T.zeros(3, 4, dtype=T.float64), None, False)])


@pytest.mark.parametrize("beta", [0.0, 0.5])
def test_smooth_l1_beta_zero_is_l1(beta):
    assert_same_outcome(_pointwise("smooth_l1_loss", (3, 4), (3, 4), beta=beta))


@pytest.mark.parametrize("case", [
    {"x": (0.5, 1.5)}, {"t": (-1.0, 0.5)}, {"x": (float("nan"), 0.5)},
    {"w": (4,)}, {"w": (2, 3, 4)}, {"w": (3,)}, {"w": (2, 4)}, {"w": (5, 2, 4)},
    {"wdtype": "float64", "xdtype": "float32"}, {"reduction": "avg"},
])
def test_binary_cross_entropy_checks(case):
    """Input and target in [0, 1]; a weight broadcast to the target's shape (and cast)."""
    def run(T):
        xdtype = getattr(T, case.get("xdtype", "float64"))
        x0, x = case.get("x", (0.3, 0.3))
        t0, t = case.get("t", (0.7, 0.7))
        x, t = T.full((3, 4), x, dtype=xdtype), T.full((3, 4), t, dtype=xdtype)
        x[0, 0], t[0, 0] = x0, t0
        w = case.get("w")
        w = None if w is None else T.full(w, 0.5, dtype=getattr(T, case.get("wdtype"), xdtype))
        return [T.nn.functional.binary_cross_entropy(x, t, weight=w,
                                                     reduction=case.get("reduction", "mean"))]
    assert_same_outcome(run)


@pytest.mark.parametrize("case", [
    {"w": (3,)}, {"w": (2, 3, 4)}, {"pw": (3,)}, {"pw": (4,)}, {"pw": (2, 3, 4)},
    {"wdtype": "float64"}, {"tdtype": "float64"}, {"tdtype": "int64"},
])
def test_binary_cross_entropy_with_logits_checks(case):
    """ATen's composite writes into the target: its dtype and shape win."""
    def run(T):
        x = T.from_numpy(_X.astype("float32")).requires_grad_()
        t = T.full((3, 4), 0.25).to(getattr(T, case.get("tdtype", "float32")))
        w = T.ones(case.get("w", (4,))).to(getattr(T, case.get("wdtype", "float32")))
        pw = T.full(case["pw"], 2.0) if "pw" in case else None
        loss = T.nn.functional.binary_cross_entropy_with_logits(x, t, weight=w,
                                                                pos_weight=pw)
        return _grad_of(T, loss, x)
    assert_same_outcome(run)


# ---- NaN and infinity ---------------------------------------------------------------------
_SPECIAL = numpy.array([[1.0, 2, 3, 4], [numpy.inf, 0, 1, 2], [-numpy.inf, 0, 1, 2],
                        [numpy.nan, 0, 1, 2], [-numpy.inf] * 4, [numpy.inf] * 4])


@pytest.mark.parametrize("name", ["cross_entropy", "nll_loss", "multi_margin_loss",
                                  "binary_cross_entropy_with_logits", "kl_div",
                                  "poisson_nll_loss", "mse_loss", "smooth_l1_loss",
                                  "huber_loss", "multilabel_soft_margin_loss",
                                  "hinge_embedding_loss"])
@pytest.mark.parametrize("reduction", ["none", "sum"])
def test_nan_and_inf_inputs(name, reduction):
    def run(T):
        x = T.from_numpy(_SPECIAL.copy()).requires_grad_()
        if name in ("cross_entropy", "nll_loss", "multi_margin_loss"):
            t = T.tensor([0, 1, 1, 2, 0, 3])
        else:
            t = T.full((6, 4), 0.5, dtype=T.float64)
        loss = getattr(T.nn.functional, name)(x, t, reduction=reduction)
        return _grad_of(T, loss, x)
    assert_same_outcome(run)


# ---- the other losses ---------------------------------------------------------------------
@pytest.mark.parametrize("name", ["multi_margin_loss", "multilabel_margin_loss"])
@pytest.mark.parametrize("case", [
    {"xdtype": "float16"}, {"xdtype": "int64"}, {"tdtype": "int32"}, {"tdtype": "float32"},
    {"wdtype": "float64"}, {"xdtype": "float16", "bad": True}, {"tdtype": "float32",
                                                                 "bad": True},
])
def test_margin_loss_dtypes(name, case):
    """float32/float64 kernels (no float16 on CPU), int64 targets, weights of the input's
    dtype, checked in torch's order against the target range check."""
    def run(T):
        x = T.ones(2, 3, dtype=getattr(T, case.get("xdtype", "float32")))
        if name == "multi_margin_loss":
            t = T.tensor([0, 5 if case.get("bad") else 1])
            kw = {"weight": T.ones(3, dtype=getattr(T, case["wdtype"]))} if (
                "wdtype" in case) else {}
        else:
            t = T.tensor([[0, 5 if case.get("bad") else 1, -1], [2, -1, 0]])
            kw = {}
        t = t.to(getattr(T, case.get("tdtype", "int64")))
        return [getattr(T.nn.functional, name)(x, t, **kw)]
    assert_same_outcome(run)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_multilabel_soft_margin_0d(reduction):
    assert_same_outcome(lambda T: [T.nn.functional.multilabel_soft_margin_loss(
        T.tensor(0.5), T.tensor(1.0), reduction=reduction)])


def test_margin_losses_empty_mean_is_nan():
    """Deliberate: torch's float kernels return uninitialized memory for the mean of an
    empty batch; retrograd returns NaN, as the other losses' empty means."""
    F = retrograd.nn.functional
    x = retrograd.zeros(0, 4)
    assert numpy.isnan(F.multi_margin_loss(x, retrograd.zeros(0, dtype=retrograd.int64))
                       .item())
    assert numpy.isnan(F.multilabel_margin_loss(x, retrograd.zeros(
        0, 4, dtype=retrograd.int64)).item())


@pytest.mark.parametrize("case", [{"n": 0}, {"t": 0}, {"dtype": "float16"},
                                  {"dtype": "int64"}, {"dtype": "float16", "n": 0},
                                  {"dtype": "float32"}])
def test_ctc_loss_dtypes_and_empty(case):
    """float32/float64 only, checked before 'log_probs tensor must not be empty'."""
    def run(T):
        t, n = case.get("t", 5), case.get("n", 2)
        lp = T.from_numpy(numpy.random.default_rng(6).standard_normal((t, n, 4)))
        lp = lp.log_softmax(2).to(getattr(T, case.get("dtype", "float64")))
        targets = T.ones(n, 2, dtype=T.int64)
        return [T.nn.functional.ctc_loss(lp, targets, [t] * n, [2] * n)]
    assert_same_outcome(run)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_ctc_loss_infinite_as_torch(torch, reduction, dtype):
    """zero_infinity off: an impossible alignment's loss is inf and its gradient NaN up to
    its input length (0 after); an empty input with an empty target costs -0.0."""
    def run(T):
        lp = T.from_numpy(numpy.random.default_rng(7).standard_normal((4, 3, 4)))
        lp = lp.log_softmax(2).to(getattr(T, dtype)).detach().requires_grad_()
        targets = T.tensor([[1, 1, 1], [2, 1, 0], [3, 0, 0]])
        loss = T.nn.functional.ctc_loss(lp, targets, [4, 3, 0], [3, 2, 0],
                                        reduction=reduction)
        return _grad_of(T, loss, lp)
    assert_same_outcome(run)
    signs = [numpy.signbit(run(T)[0].detach().numpy()) for T in (retrograd, torch)]
    numpy.testing.assert_array_equal(*signs)


# ---- PyTorch's kernels step by step: float16 rounding, clamps at singular points ----------
def _bits(T, fn):
    """``fn(T)``'s tensors as (dtype, array) pairs, to compare bit for bit."""
    return [(str(x.dtype).split(".")[-1], x.detach().numpy()) for x in fn(T)]


def _assert_same_bits(torch, fn):
    ours, theirs = _bits(retrograd, fn), _bits(torch, fn)
    assert [d for d, _ in ours] == [d for d, _ in theirs]
    for (_, a), (_, b) in zip(ours, theirs, strict=True):
        numpy.testing.assert_array_equal(a, b)  # NaN matches NaN; inf must match inf


def _loss_grads(T, name, x, t, reduction, seed=0, cot=None):
    """The loss of ``x`` and ``t`` (float arrays) and both gradients for a cotangent of
    the loss's dtype: ``cot`` everywhere, or random."""
    xs, ts = (T.from_numpy(a.copy()).requires_grad_() for a in (x, t))
    loss = getattr(T.nn.functional, name)(xs, ts, reduction=reduction)
    shape = tuple(loss.shape)
    cot = (numpy.full(shape, cot) if cot is not None
           else numpy.random.default_rng(seed).standard_normal(shape))
    cot = T.from_numpy(cot.astype(str(loss.dtype).split(".")[-1]))
    return [loss, *T.autograd.grad(loss, (xs, ts), cot)]


def _wide_half(seed, n=4000):
    r = numpy.random.default_rng(seed)
    return (r.standard_normal(n) * 10 ** r.uniform(-3, 4.3, n)).astype("float16")


@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
def test_mse_float16_rounds_each_step_in_half(torch, reduction):
    """ATen's mse kernels are Vectorized<Half> arithmetic: the difference, its square and
    ``norm * (x - t) * grad`` each round to half (2 * 34590 overflows to inf)."""
    _assert_same_bits(torch, lambda T: _loss_grads(T, "mse_loss", _wide_half(1),
                                                   _wide_half(2), reduction))
    x = numpy.array([-34.0, -0.008819580078125, 13328.0, -2.4140625], dtype="float16")
    t = numpy.array([-34624.0, 0.076171875, -7.68899917602539e-06, -0.00125885009765625],
                    dtype="float16")
    _assert_same_bits(torch, lambda T: _loss_grads(T, "mse_loss", x, t, reduction, seed=2))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("reduction", ["none", "mean"])
def test_binary_cross_entropy_grads_at_zero_and_subnormal(torch, dtype, reduction):
    """The input's gradient is clamped at ATen's EPSILON, 1e-12 rounded to float32 (the
    double kernel too); the target's is ``-logit(input)`` (-0 at 0.5)."""
    x = numpy.array([0.0, 1.1125369292536007e-308, 5e-324, 1e-30, 0.5, 0.8337314, 1.0,
                     1 - 2 ** -40], dtype=dtype)
    t = numpy.array([0.2847313214618932, 0.5413835861378025, 0.3, 0.9, 0.3, 0.74, 0.2, 0.5],
                    dtype=dtype)
    ours, theirs = (_bits(T, lambda T: _loss_grads(T, "binary_cross_entropy", x, t,
                                                   reduction)[1:]) for T in (retrograd, torch))
    for (da, a), (db, b) in zip(ours, theirs, strict=True):
        assert da == db
        numpy.testing.assert_allclose(a, b, rtol=1e-12 if dtype == "float64" else 1e-6)
        assert (numpy.signbit(a) == numpy.signbit(b)).all()


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("shape", [(3, 1, 2), (6, 1)])
def test_nll_float16_grad_divides_in_half(torch, reduction, shape):
    """nll_loss's backward kernels compute ``-(grad / total_weight)`` in half before the
    weight scales it: a total weight of a few subnormals overflows it to -inf, and
    log_softmax's backward then gives NaN."""
    def run(T):
        x = T.tensor([[[-1.185546875, 0.5]]], dtype=T.float16).reshape(1, 1, 2)
        x = x.expand(3, 1, 2).reshape(shape).requires_grad_()
        loss = T.nn.functional.cross_entropy(x, T.zeros(shape[:1] + shape[2:], dtype=T.int64),
                                             weight=T.tensor([2 ** -24], dtype=T.float16),
                                             reduction=reduction)
        cot = T.full(loss.shape, 0.7, dtype=T.float16)
        return [loss, *T.autograd.grad(loss, x, cot)]
    _assert_same_bits(torch, run)


_BCEL_CASES = {  # (input, target, reduction, cotangent), from the differential fuzz suite
    # input float16, target float32: sigmoid(x) - t rounds into half (-inf), then * grad
    "half_input": (numpy.array([[1e-4, -3e-4, 1.6e-3], [-0.13, -88.19, 2924.0]], "float16"),
                   numpy.array([[-3256.0, 0.358, -2.2e-3], [0.13, -8.5e-3, 130098.13]],
                               "float32"), "mean", 0.5),
    # float64 logits, narrower target: (1 - t) * x computed in float64, written as -inf
    "wide_input_0d": (numpy.array(-8.988465674311579e307), numpy.array(0.8175, "float32"),
                      "mean", 0.5),
    "wide_input": (numpy.array([[5e-324], [-8.988465674311579e307], [-2.05]]),
                   numpy.array([[-0.6675], [0.6919], [-0.866]], "float16"), "mean", 0.5),
    # the target's gradient, -x * grad, in the input's float64, then rounded to half: finite
    "wide_input_target_grad": (numpy.array([[6452.03, 158302.92, -6395.5, 1.7]]),
                               numpy.array([[0.07, -2.82, 1.5, 0.2]], "float16"), "mean",
                               0.5),
    # a reduced loss's 0-d gradient does not promote: -x * grad in half overflows
    "half_input_0d_grad": (numpy.array([[60000.0, 1.5]], "float16"),
                           numpy.array([[0.5, 0.25]]), "mean", 2.0),
    # (sigmoid(x) - t) * grad overflows before the mean divides it
    "overflow_before_mean": (numpy.array([[-0.3245, -numpy.inf, 0.759], [-0.0, 1e4, 0.98]],
                                         "float32"),
                             numpy.array([[1.7014117e38, numpy.nan, 1e-45],
                                          [0.963, -0.988, -0.256]], "float32"), "mean", 2.5),
    "half_target_sum": (numpy.array([[-70000.0, 3800.4], [45973.4, -80232.8]], "float32"),
                        numpy.array([[1e4, -6e-8], [0.5, -numpy.inf]], "float16"), "sum",
                        0.25),
    # all float16: each step rounds to half ((1 - t) * x overflows: inf - inf is NaN)
    "half_steps": (numpy.array([[-0.002658843994140625, -2534.0, -0.0070343017578125,
                                 -3.3736228942871094e-05],
                                [-0.00038051605224609375, -0.0015926361083984375,
                                 -0.23876953125, 1174.0],
                                [44.0625, 0.09722900390625, 0.00336456298828125, 674.0]],
                               "float16"),
                   numpy.array([[-0.00015366077423095703, 0.0304718017578125, 0.58642578125,
                                 4.6640625],
                                [numpy.inf, -7.13671875, 0.0001590251922607422, 7220.0],
                                [-3.0040740966796875e-05, -0.0025539398193359375, 1525.0,
                                 12768.0]], "float16"), "sum", 0.5),
}


@pytest.mark.parametrize("case", list(_BCEL_CASES))
def test_bce_with_logits_steps_in_each_dtype(torch, case):
    """ATen's composite for mixed dtypes and float16: each in-place step rounds into the
    tensor it writes (the forward into the target's dtype, the input's gradient into the
    input's), binary steps on halves round to half, 'mean' divides last."""
    x, t, reduction, cot = _BCEL_CASES[case]
    ours, theirs = (_bits(T, lambda T: _loss_grads(
        T, "binary_cross_entropy_with_logits", x, t, reduction, cot=cot)) for T in (retrograd,
                                                                                     torch))
    for (da, a), (db, b) in zip(ours, theirs, strict=True):
        assert da == db
        numpy.testing.assert_allclose(a, b, rtol=2e-3, atol=0)  # inf and NaN where torch's


@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_cross_entropy_of_float16_rounds_each_weighted_loss(reduction):
    """PyTorch computes ``-x[t] * w[t]`` in half: with a subnormal weight the product
    rounds (1.19e-7 for 5.96e-8 * 2.03), and the weighted mean is 2.0, not 2.033."""
    def run(T):
        x = T.tensor([0.5962, -0.8359, -1.082], dtype=T.float16)
        w = T.tensor([1.202, 0.3584, 5.96e-8], dtype=T.float16)
        return [T.nn.functional.cross_entropy(x, T.tensor(2), weight=w, reduction=reduction)]
    assert_same_outcome(run, atol=0, rtol=1e-3)
