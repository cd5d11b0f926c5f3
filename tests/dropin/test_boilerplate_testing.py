"""``testing.assert_close`` and ``testing.make_tensor`` against ``torch.testing``."""

import numpy
import pytest

import retrograd
from retrograd.testing import assert_close, make_tensor

pytestmark = pytest.mark.torch

NAN, INF = float("nan"), float("inf")


def _cases(T):
    """(actual, expected, kwargs): passes, each kind of mismatch, each message."""
    return [
        (T.tensor([1., 2.]), T.tensor([1., 2.0000001]), {}),
        (T.tensor([1., 2., 3.]), T.tensor([1., 2.5, 3.1]), {}),
        (T.tensor([[1., 2.], [3., 4.]]), T.tensor([[1., 2.], [3., 5.]]), {}),
        (T.tensor(1.), T.tensor(2.), {}),
        (T.tensor([1, 2]), T.tensor([1, 3]), {}),
        (T.tensor([10]), T.tensor([13]), {}),
        (T.tensor([True]), T.tensor([False]), {}),
        (T.tensor([1.]), T.tensor([1.], dtype=T.float64), {}),
        (T.tensor([1.]), T.tensor([1.], dtype=T.float64), {"check_dtype": False}),
        (T.tensor([1, 2], dtype=T.int32), T.tensor([1., 2.5]), {"check_dtype": False}),
        (T.tensor([1.]), T.tensor([1., 2.]), {}),
        (T.tensor([NAN]), T.tensor([NAN]), {}),
        (T.tensor([NAN]), T.tensor([NAN]), {"equal_nan": True}),
        (T.tensor([1., NAN]), T.tensor([2., 1.]), {}),
        (T.tensor([INF]), T.tensor([-INF]), {}),
        (T.tensor([0., 1.]), T.tensor([0., 0.]), {}),
        (T.tensor([1.], dtype=T.half), T.tensor([1.0005], dtype=T.half), {}),
        (T.tensor([1.], dtype=T.half), T.tensor([1.01], dtype=T.half), {}),
        (T.tensor([1 + 1j]), T.tensor([1 + 2j]), {}),
        (T.arange(10.), T.arange(10.) + T.tensor([0, 0, 0, 1, 0, 0, 0, 0, 0, 2.]), {}),
        (T.tensor([1., 2.]), T.tensor([1.1, 2.]), {"atol": 0.2, "rtol": 0}),
        (T.tensor([1, 2]), T.tensor([1, 3]), {"atol": 1, "rtol": 0}),
        (T.tensor(1.), T.tensor(1.), {"rtol": 0.1}),
        (T.tensor(1.), T.tensor(1.), {"atol": 0.1}),
        (T.tensor(1.), T.tensor(2.), {"msg": "custom"}),
        (T.tensor(1.), T.tensor(2.), {"msg": lambda m: "X" + m}),
        (T.tensor(1., requires_grad=True), T.tensor(1.), {}),
        (T.ones(2, 2).t(), T.ones(2, 2), {"check_stride": True}),
        (T.tensor([]), T.tensor([]), {}),
        (T.tensor(1.), 1.0, {}), (T.tensor(1.), "a", {}),
        (numpy.array([1.]), numpy.array([2.]), {}),
        (numpy.array([1.]), T.tensor([1.], dtype=T.float64), {}),
        (1.0, 1.5, {}), (1, 2, {}), (1, 1.0, {}), (True, False, {}), (None, 1, {}),
        ([1.0, 2.0], [1.0, 2.1], {}), ((1.0,), [1.0], {}), ([1, 2], [1], {}),
        ([T.tensor(1.), T.tensor(2.)], [T.tensor(1.), T.tensor(3.)], {}),
        ({"a": T.tensor(1.)}, {"a": T.tensor(3.)}, {}),
        ({"a": [1.0, {"b": 2.0}]}, {"a": [1.0, {"b": 2.5}]}, {}),
        ({"a": 1, "b": 2}, {"a": 1, "c": 2}, {}),
    ]


def _outcomes(T):
    out = []
    for actual, expected, kwargs in _cases(T):
        try:
            T.testing.assert_close(actual, expected, **kwargs)
            out.append("ok")
        except Exception as e:  # noqa: BLE001 (the exception is the outcome)
            out.append(f"{type(e).__name__}: {e}")
    return out


def test_assert_close_outcomes_and_messages(torch):
    import torch.testing  # noqa: F401 (torch.testing's submodules)
    ours, ref = _outcomes(retrograd), _outcomes(torch)
    for k, (a, b) in enumerate(zip(ours, ref, strict=True)):
        assert a == b, f"case {k}:\nretrograd: {a}\npytorch:   {b}"
    assert ours.count("ok") >= 8  # the passing cases pass


def test_assert_close_default_tolerances_per_dtype():
    for dtype, rtol, atol in ((retrograd.float16, 1e-3, 1e-5), (retrograd.float32, 1.3e-6, 1e-5),
                              (retrograd.float64, 1e-7, 1e-7)):
        x = retrograd.tensor([1.], dtype=dtype)
        assert_close(x, x * (1 + rtol * 0.5))
        with pytest.raises(AssertionError, match=f"up to {rtol} allowed"):
            assert_close(x, x * (1 + rtol * 4) + atol * 4)


def test_make_tensor_dtypes_ranges_and_layout(torch):
    kw = dict(device="cpu")
    for dtype, low, high in ((retrograd.float32, -9, 9), (retrograd.int64, -9, 9),
                             (retrograd.uint8, 0, 9), (retrograd.bool, 0, 1)):
        t = make_tensor(200, dtype=dtype, **kw)
        assert t.dtype is dtype and t.shape == (200,)
        v = t.numpy().astype(float)
        assert low <= v.min() and v.max() <= high
    t = make_tensor((3, 4), dtype=retrograd.float64, low=-1, high=1, requires_grad=True,
                    noncontiguous=True, **kw)
    ref = torch.testing.make_tensor((3, 4), dtype=torch.float64, low=-1, high=1,
                                    requires_grad=True, noncontiguous=True, device="cpu")
    assert (t.shape, t.is_contiguous(), t.requires_grad, t.is_leaf, t.stride()) == \
        (tuple(ref.shape), ref.is_contiguous(), ref.requires_grad, ref.is_leaf, ref.stride())
    assert (-1 <= t.detach().numpy()).all() and (t.detach().numpy() < 1).all()
    assert 0 not in make_tensor(500, dtype=retrograd.int8, low=-1, high=1, exclude_zero=True,
                                **kw).tolist()
    z = make_tensor(3, dtype=retrograd.complex64, **kw)
    assert z.dtype is retrograd.complex64 and (abs(z.numpy().imag) > 0).all()
    retrograd.manual_seed(3)
    a = make_tensor(5, dtype=retrograd.float32, **kw)
    retrograd.manual_seed(3)
    assert make_tensor(5, dtype=retrograd.float32, **kw).tolist() == a.tolist()


def test_make_tensor_errors_match_pytorch(torch):
    def outcome(T, **kw):
        try:
            T.testing.make_tensor(2, device="cpu", **kw)
        except Exception as e:  # noqa: BLE001 (the exception is the outcome)
            return type(e).__name__, str(e)
    for kw in (dict(dtype="int64", requires_grad=True), dict(dtype="float32", low=2, high=1),
               dict(dtype="uint8", low=300, high=400), dict(dtype="float32", low=NAN)):
        ours = outcome(retrograd, **{**kw, "dtype": getattr(retrograd, kw["dtype"])})
        ref = outcome(torch, **{**kw, "dtype": getattr(torch, kw["dtype"])})
        assert ours == ref
