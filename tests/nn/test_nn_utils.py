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


# ---- parametrize and weight_norm ---------------------------------------------------------
def _sym(lib):
    class Symmetric(lib.nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).T

        def right_inverse(self, A):
            return A.triu()
    return Symmetric()


def _scale(lib):
    class Scale(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.s = lib.nn.Parameter(lib.full((), 2.0, dtype=lib.float64))

        def forward(self, X):
            return X * self.s

        def right_inverse(self, X):
            return X / self.s
    return Scale()


def _outer(lib):
    class Outer(lib.nn.Module):  # two originals: original0, original1
        def forward(self, a, b):
            return a.unsqueeze(-1) * b.unsqueeze(-2)

        def right_inverse(self, w):
            return w[:, 0].clone(), w[0].clone() / w[0, 0]
    return Outer()


def _copy_into(r, t):
    r.load_state_dict({k: v.detach().numpy() for k, v in t.state_dict().items()})


def _linear_pair(n=3):
    t = torch.nn.Linear(n, n).double()
    r = nn.Linear(n, n).double()
    _copy_into(r, t)
    return r, t


def _compare_forward_backward(r, t, n=3):
    x = numpy.random.default_rng(2).standard_normal((4, n))
    yr, yt = r(retrograd.from_numpy(x.copy())), t(torch.from_numpy(x.copy()))
    numpy.testing.assert_allclose(yr.detach().numpy(), yt.detach().numpy(), rtol=1e-10)
    (yr ** 2).sum().backward()
    (yt ** 2).sum().backward()
    for (kr, a), (kt, b) in zip(r.named_parameters(), t.named_parameters(), strict=True):
        assert kr == kt
        numpy.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-9, atol=1e-12)


def test_register_parametrization_matches_torch():
    import retrograd.nn.utils.parametrize as RP
    import torch.nn.utils.parametrize as TP
    r, t = _linear_pair()
    for m, P, lib in ((r, RP, retrograd), (t, TP, torch)):
        P.register_parametrization(m, "weight", _sym(lib))
        P.register_parametrization(m, "weight", _scale(lib))  # chained
        assert P.is_parametrized(m) and P.is_parametrized(m, "weight")
        assert not P.is_parametrized(m, "bias")
        assert P.type_before_parametrizations(m) is lib.nn.Linear
    assert type(r).__name__ == type(t).__name__ == "ParametrizedLinear"
    assert repr(r).replace("retrograd", "torch") == repr(t)
    assert list(r.state_dict()) == list(t.state_dict())
    for a, b in zip(r.state_dict().values(), t.state_dict().values(), strict=True):
        numpy.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12)
    numpy.testing.assert_allclose(r.weight.detach().numpy(), t.weight.detach().numpy())
    _compare_forward_backward(r, t)
    a = numpy.random.default_rng(3).standard_normal((3, 3))
    a = a + a.T
    original = r.parametrizations.weight.original
    r.weight = retrograd.from_numpy(a.copy())
    t.weight = torch.from_numpy(a.copy())
    assert r.parametrizations.weight.original is original  # written in place
    numpy.testing.assert_allclose(r.weight.detach().numpy(), a, rtol=1e-12)
    numpy.testing.assert_allclose(original.detach().numpy(),
                                  t.parametrizations.weight.original.detach().numpy())
    with RP.cached():
        assert r.weight is r.weight
    assert r.weight is not r.weight
    for leave in (False, True):
        rr, tt = _linear_pair()
        for m, P, lib in ((rr, RP, retrograd), (tt, TP, torch)):
            P.register_parametrization(m, "weight", _sym(lib))
            P.remove_parametrizations(m, "weight", leave_parametrized=leave)
        assert type(rr) is nn.Linear and repr(rr) == repr(tt).replace("torch", "retrograd")
        assert isinstance(rr.weight, nn.Parameter)
        assert list(rr.state_dict()) == list(tt.state_dict()) == ["bias", "weight"]
        numpy.testing.assert_allclose(rr.weight.detach().numpy(), tt.weight.detach().numpy())


def test_parametrization_with_several_originals_and_errors():
    import retrograd.nn.utils.parametrize as RP
    import torch.nn.utils.parametrize as TP
    r, t = _linear_pair()
    RP.register_parametrization(r, "weight", _outer(retrograd))
    TP.register_parametrization(t, "weight", _outer(torch))
    assert list(r.state_dict()) == list(t.state_dict())
    assert list(r.state_dict())[1:] == ["parametrizations.weight.original0",
                                        "parametrizations.weight.original1"]
    _compare_forward_backward(r, t)

    def errors(lib, P):
        yield lambda: P.register_parametrization(lib.nn.Linear(2, 2), "nope", _sym(lib))
        yield lambda: P.remove_parametrizations(lib.nn.Linear(2, 2), "weight")

        class Flatten(lib.nn.Module):
            def forward(self, X):
                return X.reshape(-1)
        yield lambda: P.register_parametrization(lib.nn.Linear(2, 2), "weight", Flatten())
        m = lib.nn.Linear(2, 2)
        P.register_parametrization(m, "weight", _outer(lib))
        yield lambda: P.remove_parametrizations(m, "weight", leave_parametrized=False)
    for fr, ft in zip(errors(retrograd, RP), errors(torch, TP), strict=True):
        with pytest.raises(ValueError) as te:
            ft()
        with pytest.raises(ValueError) as re:
            fr()
        assert str(re.value) == str(te.value)
    m = nn.Linear(2, 2)
    RP.register_parametrization(m, "weight", _sym(retrograd))
    with pytest.raises(RuntimeError, match="Serialization of parametrized modules is only"):
        import pickle
        pickle.dumps(m)
    import copy
    c = copy.deepcopy(m)
    assert type(c) is type(m) and list(c.state_dict()) == list(m.state_dict())


@pytest.mark.parametrize("dim", [0, 1, None])
def test_weight_norm_parametrization_matches_torch(dim):
    t = torch.nn.utils.parametrizations.weight_norm(torch.nn.Linear(3, 3).double(), dim=dim)
    r = nn.utils.parametrizations.weight_norm(nn.Linear(3, 3).double(), dim=dim)
    assert list(r.state_dict()) == list(t.state_dict())
    assert repr(r).replace("retrograd", "torch") == repr(t)
    _copy_into(r, t)
    assert type(r.weight.grad_fn).__name__ == type(t.weight.grad_fn).__name__
    _compare_forward_backward(r, t)


@pytest.mark.parametrize("dim", [0, 2, None])
def test_weight_norm_hook_matches_torch(dim):
    with pytest.warns(FutureWarning):
        t = torch.nn.utils.weight_norm(torch.nn.Conv1d(2, 3, 2).double(), dim=dim)
    with pytest.warns(FutureWarning, match="`torch.nn.utils.weight_norm` is deprecated"):
        r = nn.utils.weight_norm(nn.Conv1d(2, 3, 2).double(), dim=dim)
    assert list(r.state_dict()) == list(t.state_dict()) == ["bias", "weight_g", "weight_v"]
    assert r.weight_g.shape == tuple(t.weight_g.shape)
    _copy_into(r, t)
    x = numpy.random.default_rng(1).standard_normal((2, 2, 5))
    yr, yt = r(retrograd.from_numpy(x.copy())), t(torch.from_numpy(x.copy()))
    numpy.testing.assert_allclose(yr.detach().numpy(), yt.detach().numpy(), rtol=1e-10)
    yr.sum().backward()
    yt.sum().backward()
    for k in ("weight_g", "weight_v", "bias"):
        numpy.testing.assert_allclose(getattr(r, k).grad.numpy(), getattr(t, k).grad.numpy(),
                                      rtol=1e-9, atol=1e-12)
    with pytest.warns(FutureWarning), pytest.raises(RuntimeError, match="Cannot register two "
                                                                         "weight_norm hooks"):
        nn.utils.weight_norm(r, dim=dim)
    nn.utils.remove_weight_norm(r)
    torch.nn.utils.remove_weight_norm(t)
    assert list(r.state_dict()) == list(t.state_dict())
    numpy.testing.assert_allclose(r.weight.detach().numpy(), t.weight.detach().numpy())
    with pytest.raises(ValueError, match="weight_norm of 'weight' not found in"):
        nn.utils.remove_weight_norm(r)
