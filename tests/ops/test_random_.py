"""``Tensor.random_`` against PyTorch: the integers each overload draws for every dtype,
its errors and warnings for bad ranges, and the generator it draws from (values differ
from PyTorch's: another random stream)."""

import warnings

import numpy
import pytest

import retrograd

_N = 4000
_I64 = 2 ** 63

# (dtype, args, kwargs, [lowest, highest] the draws span)
_RANGES = [
    ("float32", (), {}, (0, 2 ** 24)), ("float64", (), {}, (0, 2 ** 53)),
    ("float16", (), {}, (0, 2048)), ("bfloat16", (), {}, (0, 256)),
    ("int8", (), {}, (0, 127)), ("uint8", (), {}, (0, 255)), ("int16", (), {}, (0, 32767)),
    ("int32", (), {}, (0, 2 ** 31 - 1)), ("int64", (), {}, (0, _I64 - 1)),
    ("bool", (), {}, (0, 1)),
    ("float32", (5,), {}, (0, 4)), ("int64", (-3, 5), {}, (-3, 4)), ("bool", (0, 2), {}, (0, 1)),
    ("int8", (-128, 0), {}, (-128, -1)), ("uint8", (250, None), {}, (250, 255)),
    ("float16", (2000, None), {}, (2000, 2048)), ("bfloat16", (-5, 5), {}, (-5, 4)),
    ("float32", (), {"from": 1, "to": 4}, (1, 3)), ("float32", (1,), {"to": 4}, (1, 3)),
    ("float64", (), {"to": 4}, (0, 3)), ("int32", (3, None), {}, (3, 2 ** 31 - 1)),
    ("float16", (65000, 65505), {}, (65000, 65504)),
    ("int64", (-_I64, None), {}, (-_I64, _I64 - 1)),
    ("float32", (-_I64, None), {}, (-_I64, _I64)),
    ("int64", (numpy.int64(2), numpy.int64(4)), {}, (2, 3)),
]


def _drawn(lib, dtype, args, kwargs, n=_N):
    x = lib.empty(n, dtype=getattr(lib, dtype))
    assert x.random_(*args, **kwargs) is x
    return numpy.asarray(x.to(lib.float64).numpy(), dtype=numpy.float64)


@pytest.mark.torch
@pytest.mark.parametrize("dtype, args, kwargs, span", _RANGES)
def test_random_spans_the_range_torch_draws(torch, dtype, args, kwargs, span):
    """Integers, inside [lowest, highest] and reaching towards both ends, on both."""
    lo, hi = span
    width = float(hi) - float(lo)
    for lib in (torch, retrograd):
        v = _drawn(lib, dtype, args, kwargs)
        assert (v == numpy.round(v)).all(), lib.__name__
        assert float(lo) <= v.min() < float(lo) + width / 16 + 1, lib.__name__
        assert float(hi) - width / 16 - 1 < v.max() <= float(hi), lib.__name__


@pytest.mark.torch
@pytest.mark.parametrize("dtype, args", [("float16", (-2051, -2049)), ("int8", (-2, 3)),
                                         ("float16", (2049, 2051)), ("bool", ()),
                                         ("bfloat16", (254, 258))])
def test_random_draws_the_values_torch_draws(torch, dtype, args):
    """A few values each (rounded to the dtype where it holds no such integer): the same
    set as PyTorch's."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (the float16 ends are past 2**11)
        assert set(_drawn(retrograd, dtype, args, {})) == set(_drawn(torch, dtype, args, {}))


_BAD = [
    ("float32", (0,), {}), ("float32", (5, 5), {}), ("float32", (6, 5), {}),
    ("int8", (200,), {}), ("int8", (-129, 0), {}), ("int8", (128, None), {}),
    ("int8", (-100,), {}), ("bool", (3,), {}), ("bool", (-1, 1), {}), ("uint8", (-1, 1), {}),
    ("int16", (-2 ** 40, 0), {}), ("int32", (2 ** 40, None), {}),
    ("float16", (70000,), {}), ("float16", (-70000, None), {}), ("float16", (2049, None), {}),
    ("float16", (2048, None), {}), ("float32", (2 ** 24 + 1, None), {}),
    ("float16", (-_I64, None), {}), ("int8", (-_I64, None), {}), ("bool", (-_I64, None), {}),
    ("uint8", (-_I64, None), {}), ("float32", (-_I64,), {}),
    ("complex64", (), {}), ("complex64", (3,), {}), ("complex64", (0, None), {}),
    ("complex128", (-_I64, None), {}),
    ("float32", (2 ** 63,), {}), ("float32", (1.5, 2), {}), ("float32", (1, 2.5), {}),
    ("float32", (), {"from": 1}), ("float32", (), {"to": None}), ("float32", (None,), {}),
    ("float32", (True,), {}), ("float32", (1, 2, 3), {}), ("float32", (1, 2), {"from": 3}),
    ("float32", (1,), {"to": None, "foo": 2}), ("float32", (), {"from": 1.5, "to": 2}),
]


def _outcome(lib, dtype, args, kwargs, n=3):
    """What random_ did: its exception (type and message, without the lines PyTorch's
    parser adds on why an overload did not match), else "drawn"; and its warnings."""
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        try:
            lib.empty(n, dtype=getattr(lib, dtype)).random_(*args, **kwargs)
            result = "drawn"
        except (RuntimeError, NotImplementedError, TypeError, ValueError) as e:
            lines = [s for s in str(e).split("\n") if "didn't match because" not in s]
            result = type(e).__name__, "\n".join(lines)
    return result, [(w.category, str(w.message).split(" (Triggered internally")[0])
                    for w in seen]


@pytest.mark.torch
@pytest.mark.parametrize("dtype, args, kwargs", _BAD)
def test_random_refuses_bad_ranges_as_torch(torch, dtype, args, kwargs):
    got, want = _outcome(retrograd, dtype, args, kwargs), _outcome(torch, dtype, args, kwargs)
    assert got == want
    assert got[0] != "drawn"


@pytest.mark.torch
@pytest.mark.parametrize("dtype, args", [("float32", (2 ** 30, 2 ** 30 + 10)),
                                         ("float16", (3000,)), ("float16", (-2051, -2049)),
                                         ("bfloat16", (-2 ** 40, -2 ** 40 + 3)),
                                         ("float64", (-2 ** 60, None)), ("float32", (2 ** 24,))])
def test_random_warns_past_the_exact_integers_as_torch(torch, dtype, args):
    """A float end past 2**digits draws but warns that not every integer is a value."""
    got, want = _outcome(retrograd, dtype, args, {}), _outcome(torch, dtype, args, {})
    assert got == want
    assert got[0] == "drawn" and got[1] == want[1]


@pytest.mark.torch
@pytest.mark.parametrize("dtype, args", [("float32", (5, 3)), ("int8", (300,)),
                                         ("complex64", ()), ("float16", (-_I64, None)),
                                         ("int8", (-_I64, None)), ("float32", (5,))])
def test_random_of_an_empty_tensor_as_torch(torch, dtype, args):
    """The range is checked first; an empty tensor then needs no kernel for its dtype."""
    assert _outcome(retrograd, dtype, args, {}, n=0) == _outcome(torch, dtype, args, {}, n=0)


def test_random_draws_from_the_generator_given():
    g = retrograd.Generator().manual_seed(3)
    first = retrograd.empty(50, dtype=retrograd.int64).random_(0, 1000, generator=g)
    g.manual_seed(3)
    again = retrograd.empty(50, dtype=retrograd.int64).random_(0, 1000, generator=g)
    assert first.tolist() == again.tolist()
    retrograd.manual_seed(3)
    default = retrograd.empty(50, dtype=retrograd.int64).random_(0, 1000)
    assert default.tolist() == first.tolist()  # the default generator, seeded alike


def test_random_shares_the_stream_of_the_other_samplers():
    """random_ advances the generator it draws from, as uniform_ does: what follows it
    differs from what follows nothing."""
    g = retrograd.Generator().manual_seed(5)
    plain = retrograd.empty(4).uniform_(generator=g)
    g.manual_seed(5)
    retrograd.empty(4).random_(generator=g)
    assert retrograd.empty(4).uniform_(generator=g).tolist() != plain.tolist()


@pytest.mark.torch
def test_random_in_autograd_as_torch(torch):
    """A leaf that requires grad refuses it; a non-leaf's values no longer depend on its
    history: the gradient through it is zero."""
    got, want = [], []
    for lib, out in ((retrograd, got), (torch, want)):
        with pytest.raises(RuntimeError) as e:
            lib.zeros(3, requires_grad=True).random_()
        out.append(str(e.value))
        y = lib.ones(3, requires_grad=True)
        z = y * 2
        z.random_(3)
        z.sum().backward()
        out.append(y.grad.tolist())
    assert got == want


def test_random_on_meta_draws_nothing():
    x = retrograd.empty(2, 3, dtype=retrograd.int8, device="meta").random_(-3, 3)
    assert x.device.type == "meta" and x.shape == (2, 3) and x.dtype == retrograd.int8


def test_binomial_as_pytorch():
    """``torch.binomial``: PyTorch's refusals, its edge values (no trials below one, a
    probability past 1 reads as 1), the right mean, and no derivative."""
    torch = pytest.importorskip("torch")
    for make in (lambda lib: lib.binomial(lib.tensor([5]), lib.tensor([0.5])),
                 lambda lib: lib.binomial(lib.tensor([5.0]),
                                          lib.tensor([0.5], dtype=lib.float64))):
        with pytest.raises(Exception) as expected:
            make(torch)
        with pytest.raises(type(expected.value), match=str(expected.value)):
            make(retrograd)
    edge = retrograd.binomial(retrograd.tensor([-1.0, 0.5, 3.0, 4.0]),
                              retrograd.tensor([0.5, 0.5, 1.5, -0.2]))
    assert edge.tolist() == [0.0, 0.0, 3.0, 0.0]
    retrograd.manual_seed(0)
    draws = retrograd.binomial(retrograd.full((100_000,), 10.0),
                               retrograd.full((100_000,), 0.3, requires_grad=True))
    assert abs(float(draws.mean()) - 3.0) < 5 * (10 * 0.3 * 0.7 / 100_000) ** 0.5
    with pytest.raises(RuntimeError, match="derivative for aten::binomial is not implemented"):
        draws.sum().backward()
