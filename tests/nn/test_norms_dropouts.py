"""Instance, 3-D batch, RMS and local response norms against PyTorch (values, gradients,
running statistics, reprs, errors), and the channel-wise and alpha dropouts."""

import warnings

import numpy
import pytest

import retrograd
from retrograd import nn
from retrograd.nn import functional as F

from _nn_util import assert_close, copy_weights, pair

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch


def _twin(cls_name, *args, **kwargs):
    torch.manual_seed(0)
    t = getattr(torch.nn, cls_name)(*args, **kwargs).double()
    r = getattr(nn, cls_name)(*args, **kwargs).double()
    with torch.no_grad():  # non-trivial affine parameters
        for p in t.parameters():
            p.uniform_(0.5, 1.5)
    copy_weights(t, r)
    return r, t


def _run(r, t, shape, seed=1):
    rx, tx = pair(*shape, seed=seed)
    ro, to = r(rx), t(tx)
    assert_close(ro, to, atol=1e-10)
    g = numpy.random.default_rng(seed + 1).standard_normal(tuple(to.shape))
    ro.backward(retrograd.from_numpy(g.copy()))
    to.backward(torch.from_numpy(g.copy()))
    assert_close(rx.grad, tx.grad, atol=1e-9)
    tp = dict(t.named_parameters())
    for name, p in r.named_parameters():
        assert_close(p.grad, tp[name].grad, atol=1e-9)


INSTANCE = [("InstanceNorm1d", (2, 3, 5)), ("InstanceNorm1d", (3, 5)),
            ("InstanceNorm2d", (2, 3, 4, 5)), ("InstanceNorm2d", (3, 4, 5)),
            ("InstanceNorm3d", (2, 3, 2, 3, 4))]


@pytest.mark.parametrize("name,shape", INSTANCE)
@pytest.mark.parametrize("affine,track", [(False, False), (True, False), (True, True)])
def test_instance_norm_matches_torch(name, shape, affine, track):
    r, t = _twin(name, 3, affine=affine, track_running_stats=track, momentum=0.3)
    for _ in range(2):
        _run(r, t, shape)
    assert repr(r) == repr(t)
    assert list(r.state_dict()) == list(t.state_dict())
    if track:
        assert_close(r.running_mean, t.running_mean, atol=1e-12)
        assert_close(r.running_var, t.running_var, atol=1e-12)
        r.eval()
        t.eval()
        _run(r, t, shape, seed=5)


def test_instance_norm_errors_and_warning_match_torch():
    for shape in ((2, 3, 4, 5), (3,)):
        with pytest.raises(ValueError) as et:
            torch.nn.InstanceNorm1d(3)(torch.zeros(shape))
        with pytest.raises(ValueError, match=str(et.value).replace("(", r"\(").replace(
                ")", r"\)")):
            nn.InstanceNorm1d(3)(retrograd.zeros(shape))
    with pytest.raises(ValueError, match=r"expected input's size at dim=1 to match num_features"
                       r" \(3\), but got: 4\."):
        nn.InstanceNorm1d(3, affine=True)(retrograd.zeros(2, 4, 5))
    with pytest.warns(UserWarning, match="does not match num_features"):
        nn.InstanceNorm1d(3)(retrograd.randn(2, 4, 5))
    with pytest.raises(ValueError, match="Expected more than 1 spatial element when training"):
        F.instance_norm(retrograd.zeros(2, 3, 1))


def test_batch_norm_3d_matches_torch():
    r, t = _twin("BatchNorm3d", 3)
    _run(r, t, (2, 3, 2, 3, 2))
    assert_close(r.running_var, t.running_var, atol=1e-12)
    assert repr(r) == repr(t)
    with pytest.raises(ValueError, match=r"expected 5D input \(got 4D input\)"):
        r(retrograd.zeros(2, 3, 4, 5, dtype=retrograd.float64))


_MIXED = [("float32", "float64", "weight"), ("float32", "float64", "stats"),
          ("float64", "float32", "weight"), ("float64", "float32", "stats"),
          ("float32", "bfloat16", "weight"), ("float32", "float16", "stats"),
          ("bfloat16", "float64", "weight"), ("bfloat16", "float32", "weight"),
          ("float16", "float32", "stats"), ("float32", "float32", "weight")]


@pytest.mark.parametrize("input_dtype,param_dtype,which", _MIXED)
@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_mixed_dtypes_as_torchs_cpu_kernel(input_dtype, param_dtype, which,
                                                      training):
    """Parameters of another dtype than the input's: float32 ones with a half input run;
    any other mix raises PyTorch's RuntimeError, whose message names the rule broken."""
    outcomes = []
    for T in (retrograd, torch):
        x = T.ones(4, 3, dtype=getattr(T, input_dtype))
        params = T.ones(3, dtype=getattr(T, param_dtype))
        w = params if which == "weight" else None
        stats = (T.zeros_like(params), params) if which == "stats" or not training else (
            None, None)
        try:
            T.nn.functional.batch_norm(x, *stats, w, None, training)
            outcomes.append("ran")
        except RuntimeError as e:
            outcomes.append(str(e))
    assert outcomes[0] == outcomes[1]


def test_batch_norm_of_one_value_per_channel_leaves_a_nan_running_variance():
    """``torch.batch_norm`` (the ATen op, past F.batch_norm's check) in training on one
    value per channel: the unbiased variance is 0 * 1/0."""
    stats = []
    for T in (retrograd, torch):
        rm, rv = T.zeros(3), T.ones(3)
        T.batch_norm(T.ones(1, 3), None, None, rm, rv, True, 0.1, 1e-5, False)
        stats.append((rm.numpy(), rv.numpy()))
    (rm, rv), (tm, tv) = stats
    numpy.testing.assert_allclose(rm, tm)
    assert numpy.isnan(rv).all() and numpy.isnan(tv).all()


@pytest.mark.parametrize("shape,eps,affine", [((4,), None, True), ((3, 4), 1e-3, True),
                                              ([4], 0.1, False)])
def test_rms_norm_matches_torch(shape, eps, affine):
    r, t = _twin("RMSNorm", shape, eps=eps, elementwise_affine=affine)
    _run(r, t, (2,) + tuple(shape))
    _run(r, t, (2, 5, 3, 4)[-len(shape) - 2:] if len(shape) == 2 else (2, 5, 4))
    assert repr(r) == repr(t)
    assert list(r.state_dict()) == list(t.state_dict())


def test_rms_norm_default_eps_is_dtype_eps():
    x = numpy.full((1, 3), 1e-4, numpy.float32)
    a = F.rms_norm(retrograd.from_numpy(x), (3,))
    b = torch.nn.functional.rms_norm(torch.from_numpy(x), (3,))
    assert_close(a, b, atol=0, rtol=1e-6)
    with pytest.raises(RuntimeError, match="Given normalized_shape"):
        F.rms_norm(retrograd.zeros(2, 3), (4,))


@pytest.mark.parametrize("shape", [(2, 6, 5), (2, 6, 3, 4), (1, 5, 2, 3, 2)])
@pytest.mark.parametrize("size", [1, 2, 3, 5])
def test_local_response_norm_matches_torch(shape, size):
    r, t = _twin("LocalResponseNorm", size, alpha=0.1, beta=0.6, k=2.0)
    _run(r, t, shape)
    assert repr(r) == repr(t)


def test_local_response_norm_rejects_2d():
    with pytest.raises(ValueError, match=r"Expected 3D or higher dimensionality"):
        F.local_response_norm(retrograd.zeros(2, 3), 2)


# ---- dropouts -------------------------------------------------------------------------------
@pytest.mark.parametrize("name,shape", [("dropout1d", (8, 16, 5)), ("dropout1d", (16, 5)),
                                        ("dropout2d", (8, 16, 3, 3)),
                                        ("dropout3d", (4, 16, 2, 2, 2)),
                                        ("dropout3d", (16, 2, 2, 2))])
def test_channel_dropout_zeroes_whole_channels(name, shape):
    retrograd.manual_seed(0)
    x = retrograd.ones(shape, requires_grad=True)
    y = getattr(F, name)(x, 0.5)
    spatial = 1
    for d in shape[-({"dropout1d": 1, "dropout2d": 2, "dropout3d": 3}[name]):]:
        spatial *= d
    per_channel = y.detach().numpy().reshape(-1, spatial)
    assert set(numpy.unique(per_channel)) <= {0.0, 2.0}
    assert (per_channel.min(1) == per_channel.max(1)).all()  # a whole channel kept or dropped
    assert 0.2 < (per_channel[:, 0] == 0).mean() < 0.8
    y.sum().backward()
    assert_close(x.grad, y.detach())
    assert_close(getattr(F, name)(x, 0.5, training=False), x)


def test_dropout_errors_and_warnings_match_torch():
    with pytest.raises(RuntimeError, match="dropout1d: Expected 2D or 3D input, but received "
                       "a 4D input"):
        F.dropout1d(retrograd.ones(1, 2, 3, 4))
    for f in (F.dropout1d, F.dropout2d, F.dropout3d, F.alpha_dropout,
              F.feature_alpha_dropout):
        with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, "
                           "but got 1.5"):
            f(retrograd.ones(2, 3, 4, 4), 1.5)
    for f, shape in ((F.dropout2d, (2, 3)), (F.dropout2d, (2, 3, 4)), (F.dropout3d, (2, 3, 4))):
        with warnings.catch_warnings(record=True) as rw:
            warnings.simplefilter("always")
            f(retrograd.ones(shape), 0.5)
        with warnings.catch_warnings(record=True) as tw:
            warnings.simplefilter("always")
            getattr(torch.nn.functional, f.__name__)(torch.ones(shape), 0.5)
        assert [str(w.message) for w in rw] == [str(w.message) for w in tw]


@pytest.mark.parametrize("name", ["alpha_dropout", "feature_alpha_dropout"])
def test_alpha_dropout_keeps_selu_statistics(name):
    """On zero-mean unit-variance input the output keeps mean 0 and variance 1, and dropped
    values sit at the affine image of SELU's saturation, as PyTorch's."""
    retrograd.manual_seed(0)
    x = retrograd.randn(400, 500, 2, dtype=retrograd.float64)
    y = getattr(F, name)(x, 0.2, training=True)
    assert abs(float(y.mean())) < 0.02 and abs(float(y.std()) - 1) < 0.02
    ones = getattr(F, name)(retrograd.ones(4000, 2, 1), 0.5, True).numpy()
    tones = getattr(torch.nn.functional, name)(torch.ones(4000, 2, 1), 0.5, True).numpy()
    assert set(numpy.round(numpy.unique(ones), 4)) == set(numpy.round(numpy.unique(tones), 4))
    assert getattr(F, name)(x, 0.2) is x  # training defaults to False
    assert float(getattr(F, name)(x, 1.0, True).abs().sum()) == 0


@pytest.mark.parametrize("cls,shape", [("Dropout", (2, 3)), ("Dropout1d", (2, 3, 4)),
                                       ("Dropout2d", (2, 3, 4, 4)),
                                       ("Dropout3d", (2, 3, 4, 4, 4)), ("AlphaDropout", (2, 3)),
                                       ("FeatureAlphaDropout", (2, 3, 4))])
def test_dropout_modules_repr_and_eval(cls, shape):
    r, t = getattr(nn, cls)(0.25, inplace=True), getattr(torch.nn, cls)(0.25, inplace=True)
    assert repr(r) == repr(t)
    x = retrograd.randn(*shape)
    r.eval()
    assert r(x) is x
    with pytest.raises(ValueError, match="dropout probability"):
        getattr(nn, cls)(-0.1)


def test_rms_norm_float16_is_computed_in_float32_as_torch():
    a = numpy.random.default_rng(0).standard_normal((5, 4)).astype(numpy.float16)
    r = F.rms_norm(retrograd.from_numpy(a), (4,))
    t = torch.nn.functional.rms_norm(torch.from_numpy(a), (4,))
    assert r.dtype == retrograd.float16
    assert numpy.array_equal(r.numpy(), t.numpy())


def test_feature_and_integer_dropout_errors_match_torch():
    for call in (lambda lib: lib.nn.Dropout2d()(lib.ones(4)),
                 lambda lib: lib.nn.functional.feature_alpha_dropout(lib.ones(3), 0.5, True),
                 lambda lib: lib.nn.functional.alpha_dropout(lib.ones(3, dtype=lib.int32), 0.5,
                                                             True),
                 lambda lib: lib.nn.functional.dropout(lib.ones(3, dtype=lib.int64), 0.5),
                 lambda lib: lib.nn.Parameter(lib.ones(1, dtype=lib.int64))):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(RuntimeError) as et:
                call(torch)
            with pytest.raises(RuntimeError) as er:
                call(retrograd)
        assert str(er.value) == str(et.value)
    assert not nn.Parameter(retrograd.ones(1, dtype=retrograd.int64), False).requires_grad
