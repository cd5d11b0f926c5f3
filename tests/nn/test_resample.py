"""interpolate's index arithmetic against PyTorch over a sweep of sizes and scales (and a
hypothesis search), and the resampling, rearranging and padding layers (printed forms,
values, gradients, errors)."""

import warnings

import numpy
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import retrograd
import retrograd.nn as nn
import retrograd.nn.functional as F

from _nn_util import assert_close, compare_backward, pair

pytestmark = pytest.mark.torch
torch = pytest.importorskip("torch")
TF = torch.nn.functional

_MODES = {1: ("nearest", "nearest-exact", "linear", "area"),
          2: ("nearest", "nearest-exact", "bilinear", "bicubic", "area"),
          3: ("nearest", "nearest-exact", "trilinear", "area")}


def _outcome(lib, f, x, kw):
    try:
        return f(lib.from_numpy(x.copy()), **kw).numpy(), None
    except Exception as e:  # noqa: BLE001 (compared with PyTorch's)
        return None, e


def _check(x, kw):
    got, err = _outcome(retrograd, F.interpolate, x, kw)
    want, t_err = _outcome(torch, TF.interpolate, x, kw)
    if t_err is not None or err is not None:
        assert type(err) is type(t_err) and str(err) == str(t_err), (kw, err, t_err)
        return
    assert got.shape == want.shape, kw
    tol = 1e-5 if x.dtype == numpy.float32 else 1e-12  # rounding (FMAs); an index is O(1) off
    numpy.testing.assert_allclose(got, want, atol=tol, rtol=tol, err_msg=str(kw))


def _shape(k, n):
    return (1, 2) + (n,) * k if k < 3 else (1, 1, n, 3, 2)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("k", [1, 2, 3])
def test_scale_sweep_matches_torch(k, dtype):
    """Every mode, up and down by awkward float scales (1/3, 0.999, ...), with and without
    recompute_scale_factor and align_corners: the indices must agree exactly."""
    g = numpy.random.default_rng(k)
    for mode in _MODES[k]:
        corners = (None,) if mode in ("nearest", "nearest-exact", "area") else (False, True)
        for n in (1, 3, 5, 13):
            x = g.standard_normal(_shape(k, n)).astype(dtype)
            for s in (0.3, 0.5, 2 / 3, 0.999, 1.001, 1.3, 2, 2.5, 1 / 3):
                for ac in corners:
                    for rc in (None, True, False):
                        _check(x, {"scale_factor": s, "mode": mode, "align_corners": ac,
                                   "recompute_scale_factor": rc})
            for size in (1, 2, 4, 9, 16):
                for ac in corners:
                    _check(x, {"size": size, "mode": mode, "align_corners": ac})


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
def test_antialias_sweep_matches_torch(mode):
    g = numpy.random.default_rng(0)
    for n in (3, 7, 16):
        x = g.standard_normal((1, 2, n, n + 1)).astype("float32")
        for size in (1, 2, 5, 13, 20):
            for ac in (False, True):
                _check(x, {"size": (size, size + 1), "mode": mode, "align_corners": ac,
                           "antialias": True})
        for s in (0.3, 0.7, 1.5):
            _check(x, {"scale_factor": s, "mode": mode, "antialias": True})


@settings(max_examples=40)
@given(k=st.sampled_from([1, 2, 3]), data=st.data())
def test_random_sizes_match_torch(k, data):
    """Larger, random sizes and scales: the float32 scale and floorf rounding at every
    output index."""
    mode = data.draw(st.sampled_from(_MODES[k]))
    n = data.draw(st.integers(1, 40 if k < 3 else 12))
    x = numpy.random.default_rng(n).standard_normal(_shape(k, n)).astype("float32")
    if data.draw(st.booleans()):
        kw = {"size": data.draw(st.integers(1, 90 if k < 3 else 20))}
    else:
        kw = {"scale_factor": data.draw(st.floats(0.05, 4.0)),
              "recompute_scale_factor": data.draw(st.sampled_from([None, True, False]))}
    if mode not in ("nearest", "nearest-exact", "area"):
        kw["align_corners"] = data.draw(st.booleans())
    _check(x, {"mode": mode, **kw})


def _nearest_pair(x, kw):
    """Output and input gradient (of a fixed random output gradient) of both libraries."""
    g = numpy.random.default_rng(0).standard_normal(
        TF.interpolate(torch.from_numpy(x), **kw).shape).astype(x.dtype)
    out = []
    for lib, f in ((retrograd, F.interpolate), (torch, TF.interpolate)):
        t = lib.from_numpy(x.copy() if x.flags.c_contiguous else x).requires_grad_()
        y = f(t, **kw)
        y.backward(lib.from_numpy(g))
        out.append((y.detach().numpy(), t.grad.numpy()))
    return out


@pytest.mark.parametrize("shape, kw", [
    # Output doubled by a user scale other than 2: PyTorch's forward takes the channels-last
    # kernel (its >>1 shortcut) only for height + width <= 128, its generic one (floor by
    # the float32 scale) above; its backward always halves.
    ((1, 1, 32, 32), {"scale_factor": 2.01, "recompute_scale_factor": False}),
    ((1, 1, 32, 33), {"scale_factor": 2.01, "recompute_scale_factor": False}),
    ((1, 1, 33, 33), {"scale_factor": 2.0000001}),
    ((1, 1, 20, 50), {"scale_factor": 2.01}),
    ((1, 1, 1, 63), {"scale_factor": 2.01}),
    ((1, 2, 40), {"scale_factor": 2.01}),
    ((1, 1, 3, 30, 40), {"scale_factor": 2.01}),
    # Equal sizes under a scale other than 1: generic floors by it, nearest_idx copies.
    ((1, 2, 40, 90), {"scale_factor": 1.001}),
    # Sizes alone, doubled: both kernels agree.
    ((1, 1, 20, 50), {"size": (40, 100)}),
    # nearest-exact in float32: (i + 0.5) * scale - 0.5 is one fused multiply-add.
    ((1, 1, 2), {"size": 83, "mode": "nearest-exact"}),
    ((1, 3, 4, 6), {"size": (82, 123), "mode": "nearest-exact"}),
])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_nearest_kernels_indices_match_torch(shape, kw, dtype):
    """PyTorch's nearest forward has two kernels with different index arithmetic and its
    backward a third; every output and gradient element agrees."""
    kw = {"mode": "nearest", **kw}
    x = numpy.random.default_rng(1).standard_normal(shape).astype(dtype)
    (got, got_g), (want, want_g) = _nearest_pair(x, kw)
    numpy.testing.assert_array_equal(got, want)
    numpy.testing.assert_allclose(got_g, want_g, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("exact", [False, True])
def test_nearest_channels_last_input_takes_its_kernel(exact):
    """A channels-last input of more than 3 channels takes PyTorch's channels-last kernel
    (nearest_idx) whatever the output size; the same values channels-first do not."""
    nhwc = numpy.random.default_rng(2).standard_normal((1, 70, 80, 4)).astype("float32")
    kw = {"scale_factor": 2.01, "mode": "nearest-exact" if exact else "nearest"}
    for x in (nhwc.transpose(0, 3, 1, 2), numpy.ascontiguousarray(nhwc.transpose(0, 3, 1, 2))):
        (got, got_g), (want, want_g) = _nearest_pair(x, kw)
        numpy.testing.assert_array_equal(got, want)
        numpy.testing.assert_allclose(got_g, want_g, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("mode, shape", [("nearest", (2, 3, 6, 5)), ("bilinear", (2, 3, 6, 5)),
                                         ("bicubic", (1, 2, 5, 7)), ("trilinear", (1, 2, 3, 4, 5)),
                                         ("linear", (2, 3, 7))])
def test_gradients_match_torch(mode, shape):
    for kw in ({"scale_factor": 2}, {"scale_factor": 0.7}, {"size": tuple(range(3, 3 + len(
            shape) - 2))}):
        r, t = pair(*shape)
        compare_backward(F.interpolate(r, mode=mode, **kw), TF.interpolate(t, mode=mode, **kw),
                         [r], [t], atol=1e-10)


def test_non_finite_inputs_stay_local():
    """Taps are gathered, not multiplied through a matrix: an inf reaches only the outputs
    that read it, as in PyTorch."""
    x = numpy.zeros((1, 1, 4, 4), dtype="float32")
    x[0, 0, 1, 2] = numpy.inf
    for mode in ("nearest", "bilinear", "bicubic"):
        got, _ = _outcome(retrograd, F.interpolate, x, {"scale_factor": 2, "mode": mode})
        want, _ = _outcome(torch, TF.interpolate, x, {"scale_factor": 2, "mode": mode})
        numpy.testing.assert_array_equal(numpy.isnan(got), numpy.isnan(want))
        numpy.testing.assert_array_equal(numpy.isinf(got), numpy.isinf(want))


def test_deprecated_spellings_warn():
    r, t = pair(1, 2, 3, 3)
    for name, kw in (("upsample", {"scale_factor": 2, "mode": "bilinear"}),
                     ("upsample_nearest", {"scale_factor": 2}),
                     ("upsample_bilinear", {"size": 5})):
        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            out = getattr(F, name)(r, **kw)
        with warnings.catch_warnings(record=True) as want:
            warnings.simplefilter("always")
            expected = getattr(TF, name)(t, **kw)
        assert [str(w.message) for w in got] == [str(w.message) for w in want]
        assert_close(out, expected)


@pytest.mark.parametrize("make", [
    lambda m: m.Upsample(scale_factor=2, mode="bilinear", align_corners=True),
    lambda m: m.Upsample(size=(3, 5)),
    lambda m: m.Upsample(scale_factor=(1.5, 2), mode="nearest-exact"),
    lambda m: m.UpsamplingNearest2d(scale_factor=2),
    lambda m: m.UpsamplingBilinear2d(size=7),
    lambda m: m.PixelShuffle(2),
    lambda m: m.PixelUnshuffle(2),
    lambda m: m.ChannelShuffle(2),
    lambda m: m.Unfold(2, padding=1),
    lambda m: m.Sequential(m.Unfold((2, 3), stride=2), m.Fold((4, 6), (2, 3), stride=2)),
    lambda m: m.Unflatten(1, (2, 2)),
    lambda m: m.ZeroPad2d((1, 0, 2, 1)),
    lambda m: m.ConstantPad1d(2, 3.5),
    lambda m: m.ConstantPad3d((1, 0, 0, 1, 1, 1), -1.0),
    lambda m: m.ReflectionPad2d(1),
    lambda m: m.ReplicationPad1d((2, 0)),
    lambda m: m.ReplicationPad3d(1),
    lambda m: m.CircularPad2d((1, 1, 0, 2)),
    lambda m: m.ZeroPad3d(1),
])
def test_layers_match_torch(make):
    mod, t_mod = make(nn), make(torch.nn)
    assert repr(mod) == repr(t_mod)
    name = type(mod[0] if isinstance(mod, nn.Sequential) else mod).__name__
    r, t = pair(*{"1d": (2, 4, 6), "3d": (1, 4, 2, 4, 6)}.get(name[-2:], (2, 4, 4, 6)))
    out, expected = mod(r), t_mod(t)
    assert_close(out, expected)
    assert out.grad_fn.name() == expected.grad_fn.name()
    compare_backward(out, expected, [r], [t])


@pytest.mark.parametrize("make, shape", [
    (lambda m: m.CircularPad1d(1), (2, 2, 2, 3)),
    (lambda m: m.CircularPad2d(1), (3, 3)),
    (lambda m: m.CircularPad3d(1), (2, 2, 2, 2, 2, 2)),
])
def test_circular_pad_rank_errors(make, shape):
    with pytest.raises(ValueError) as want:
        make(torch.nn)(torch.zeros(shape))
    with pytest.raises(ValueError) as got:
        make(nn)(retrograd.zeros(shape))
    assert str(got.value) == str(want.value)


def test_unflatten_size_errors():
    for bad in (3, (2, 1.5)):
        with pytest.raises(TypeError) as want:
            torch.nn.Unflatten(1, bad)
        with pytest.raises(TypeError) as got:
            nn.Unflatten(1, bad)
        assert str(got.value) == str(want.value)


def test_upsample_pickles():
    import pickle
    m = pickle.loads(pickle.dumps(nn.Upsample(scale_factor=2)))
    assert repr(m) == "Upsample(scale_factor=2.0, mode='nearest')"
    m.__dict__.pop("recompute_scale_factor")
    m.__setstate__(dict(m.__dict__))
    assert m.recompute_scale_factor is True


@pytest.mark.parametrize("mode, padding", [("bilinear", "zeros"), ("bilinear", "reflection"),
                                           ("nearest", "border")])
@pytest.mark.parametrize("rank", [4, 5])
def test_grid_sample_double_backward_matches_torch(mode, padding, rank):
    """Second derivatives (through the first-order gradients of both input and grid)."""
    r, t = pair(*(1, 2, 3, 4, 3)[:rank])
    rg, tg = pair(*(1, 2, 3, 2)[:rank - 1], rank - 2, low=-1.2, high=1.2, seed=1)
    grads = []
    for lib, f, x, g in ((retrograd, F, r, rg), (torch, TF, t, tg)):
        out = f.grid_sample(x, g, mode, padding, align_corners=False)
        gx, gg = lib.autograd.grad((out * out).sum(), (x, g), create_graph=True)
        grads.append(lib.autograd.grad((gx * gx).sum() + (gg * gg).sum(), (x, g)))
    for a, b in zip(*grads, strict=True):
        assert_close(a, b, atol=1e-9)


@pytest.mark.parametrize("call", [
    lambda F, x, g, th: F.grid_sample(x, g),
    lambda F, x, g, th: F.affine_grid(th, (1, 1, 2, 3)),
    lambda F, x, g, th: F.affine_grid(th, (1, 1, 1, 3), align_corners=True),
])
def test_sampling_warnings_match_torch(call):
    r, t = pair(1, 1, 3, 3)
    rg, tg = pair(1, 2, 2, 2, low=-1, high=1, seed=1)
    rth, tth = pair(1, 2, 3, seed=2)
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        out = call(F, r, rg, rth)
    with warnings.catch_warnings(record=True) as want:
        warnings.simplefilter("always")
        expected = call(TF, t, tg, tth)
    assert [str(w.message) for w in got] == [str(w.message) for w in want]
    assert_close(out, expected)


@pytest.mark.parametrize("call", [
    lambda x: F.pixel_shuffle(x, 1), lambda x: F.pixel_unshuffle(x, 1),
    lambda x: F.channel_shuffle(x, 1), lambda x: F.channel_shuffle(x, 4),
    lambda x: F.unfold(x, 1), lambda x: F.interpolate(x, size=(3, 4), mode="bilinear"),
    lambda x: F.interpolate(x, scale_factor=1, mode="nearest"),
])
def test_identity_results_are_copies(call):
    """A rearrangement or resampling that moves nothing still returns new memory, as
    PyTorch's kernels do (an in-place write to it must not reach the input)."""
    x = retrograd.randn(1, 4, 3, 4)
    out = call(x)
    assert not numpy.shares_memory(out.numpy(), x.numpy())
