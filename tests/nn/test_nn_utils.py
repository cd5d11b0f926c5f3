"""nn.utils against PyTorch: clipped gradients, returned norms and their dtypes, errors and
warnings, and the parameter/vector conversions."""

import math
import warnings

import numpy
import pytest

import retrograd
import retrograd.nn as nn

pytestmark = pytest.mark.torch
torch = pytest.importorskip("torch")

SHAPES = [(3, 4), (5,), (), (2, 1, 3)]


def _params(dtypes, scale=1.0, seed=0, grads=True):
    """The same parameters (with gradients) in retrograd and torch."""
    rng = numpy.random.default_rng(seed)
    rs, ts = [], []
    for shape, dt in zip(SHAPES, dtypes, strict=False):
        w = numpy.array(rng.standard_normal(shape), dtype=dt)
        g = numpy.array(rng.standard_normal(shape) * scale, dtype=dt)
        r = nn.Parameter(retrograd.from_numpy(w.copy()))
        t = torch.nn.Parameter(torch.from_numpy(w.copy()))
        if grads:
            r.grad, t.grad = retrograd.from_numpy(g.copy()), torch.from_numpy(g.copy())
        rs.append(r)
        ts.append(t)
    return rs, ts


def _check(r, t, rtol=1e-6):
    assert str(r.dtype) == str(t.dtype)
    numpy.testing.assert_allclose(r.numpy(), t.numpy(), rtol=rtol, atol=1e-12)


@pytest.mark.parametrize("norm_type", [2.0, 1, 3.5, -1.0, 0, "inf", -math.inf])
@pytest.mark.parametrize("dtypes", [["float32"] * 4, ["float64"] * 4,
                                    ["float32", "float64", "float32", "float64"]])
def test_clip_grad_norm_matches_torch(norm_type, dtypes):
    rs, ts = _params(dtypes, scale=3.0)
    rn = nn.utils.clip_grad_norm_(rs, 1.0, norm_type)
    tn = torch.nn.utils.clip_grad_norm_(ts, 1.0, norm_type)
    _check(rn, tn, rtol=1e-5)
    for r, t in zip(rs, ts, strict=True):
        _check(r.grad, t.grad, rtol=1e-5)


def test_clip_grad_norm_leaves_small_gradients_and_bumps_versions():
    rs, ts = _params(["float64"] * 4, scale=1e-3)
    before = [r.grad.numpy().copy() for r in rs]
    versions = [r.grad._version for r in rs]
    rn = nn.utils.clip_grad_norm_(iter(rs), max_norm=10)
    _check(rn, torch.nn.utils.clip_grad_norm_(iter(ts), max_norm=10))
    for r, b, v in zip(rs, before, versions, strict=True):
        numpy.testing.assert_array_equal(r.grad.numpy(), b)
        assert r.grad._version == v + 1


def test_clip_grad_norm_single_tensor_none_grads_and_float16():
    r = nn.Parameter(retrograd.zeros(2))
    r.grad = retrograd.tensor([3.0, 4.0])
    assert nn.utils.clip_grad_norm_(r, 1.0).item() == pytest.approx(5.0)
    numpy.testing.assert_allclose(r.grad.numpy(), [0.6, 0.8], rtol=1e-6)
    r2 = nn.Parameter(retrograd.zeros(2))  # no gradient: skipped
    assert nn.utils.clip_grad_norm_([r2], 1.0).item() == 0.0
    h = retrograd.tensor([300.0, 400.0], dtype=retrograd.float16)
    th = torch.tensor([300.0, 400.0], dtype=torch.float16)
    _check(nn.utils.get_total_norm([h]), torch.nn.utils.get_total_norm([th]))


def test_get_total_norm_and_clip_grads_with_norm():
    rs, ts = _params(["float32"] * 4, scale=2.0)
    rn = nn.utils.get_total_norm([r.grad for r in rs], 2.0)
    tn = torch.nn.utils.get_total_norm([t.grad for t in ts], 2.0)
    _check(rn, tn)
    nn.utils.clip_grads_with_norm_(rs, 0.5, rn)
    torch.nn.utils.clip_grads_with_norm_(ts, 0.5, tn)
    for r, t in zip(rs, ts, strict=True):
        _check(r.grad, t.grad, rtol=1e-6)
    _check(nn.utils.get_total_norm([]), torch.nn.utils.get_total_norm([]))


def test_clip_grad_norm_nonfinite():
    r = nn.Parameter(retrograd.zeros(2))
    r.grad = retrograd.tensor([float("nan"), 1.0])
    t = torch.nn.Parameter(torch.zeros(2))
    t.grad = torch.tensor([float("nan"), 1.0])
    with pytest.raises(RuntimeError) as te:
        torch.nn.utils.clip_grad_norm_(t, 1.0, error_if_nonfinite=True)
    with pytest.raises(RuntimeError) as re:
        nn.utils.clip_grad_norm_(r, 1.0, error_if_nonfinite=True)
    assert str(re.value) == str(te.value)
    assert math.isnan(nn.utils.clip_grad_norm_(r, 1.0).item())
    assert numpy.isnan(r.grad.numpy()).all()
    big = nn.Parameter(retrograd.zeros(2))
    big.grad = retrograd.tensor([1e20, 1e20])  # float32 overflow, as in torch
    assert nn.utils.clip_grad_norm_(big, 1.0).item() == math.inf


def test_clip_grad_norm_bad_arguments_and_warnings():
    r = nn.Parameter(retrograd.zeros(2))
    r.grad = retrograd.ones(2)
    for bad in [("a",), (1.0, "fro")]:
        with pytest.raises(ValueError):
            nn.utils.clip_grad_norm_(r, *bad)
    with pytest.warns(UserWarning, match="empty generator"):
        nn.utils.clip_grad_norm_((p for p in []), 1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        nn.utils.clip_grad_norm_([], 1.0)  # an empty list does not warn
    with pytest.warns(FutureWarning, match="deprecated"):
        nn.utils.clip_grad_norm([r], 1.0)


def test_clip_grad_value_matches_torch():
    rs, ts = _params(["float32", "float64", "float32", "float64"], scale=2.0)
    rs[0].grad.numpy()[0, 0] = float("nan")
    ts[0].grad[0, 0] = float("nan")
    assert nn.utils.clip_grad_value_(rs, 0.7) is None
    torch.nn.utils.clip_grad_value_(ts, 0.7)
    for r, t in zip(rs, ts, strict=True):
        numpy.testing.assert_array_equal(r.grad.numpy(), t.grad.numpy())
    with pytest.raises(ValueError):
        nn.utils.clip_grad_value_(rs, "x")


def test_clip_in_training_loop_against_torch():
    rl, tl = nn.Linear(4, 3).double(), torch.nn.Linear(4, 3).double()
    rl.load_state_dict({k: v.detach().numpy() for k, v in tl.state_dict().items()})
    x = numpy.random.default_rng(1).standard_normal((6, 4)) * 10
    (rl(retrograd.from_numpy(x)) ** 2).sum().backward()
    (tl(torch.from_numpy(x)) ** 2).sum().backward()
    _check(nn.utils.clip_grad_norm_(rl.parameters(), 2.0),
           torch.nn.utils.clip_grad_norm_(tl.parameters(), 2.0))
    for r, t in zip(rl.parameters(), tl.parameters(), strict=True):
        _check(r.grad, t.grad)


def test_parameters_to_vector_and_back():
    rs, ts = _params(["float64"] * 4, grads=False)
    rv = nn.utils.parameters_to_vector(rs)
    tv = torch.nn.utils.parameters_to_vector(ts)
    assert type(rv.grad_fn).__name__ == type(tv.grad_fn).__name__ == "CatBackward0"
    numpy.testing.assert_array_equal(rv.detach().numpy(), tv.detach().numpy())
    rv.sum().backward()
    assert all((r.grad.numpy() == 1).all() for r in rs)
    new = retrograd.arange(rv.numel(), dtype=retrograd.float64)
    nn.utils.vector_to_parameters(new, rs)
    torch.nn.utils.vector_to_parameters(torch.arange(tv.numel(), dtype=torch.float64), ts)
    for r, t in zip(rs, ts, strict=True):
        numpy.testing.assert_array_equal(r.detach().numpy(), t.detach().numpy())
        assert r.shape == tuple(t.shape)
    new.numpy()[0] = -5.0  # the parameters share the vector's memory, as in torch
    assert rs[0].detach().numpy()[0, 0] == -5.0
    with pytest.raises(TypeError, match="expected torch.Tensor, but got: list"):
        nn.utils.vector_to_parameters([1.0], rs)
