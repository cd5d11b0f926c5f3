"""Type promotion against PyTorch: every dtype pair across the three tiers
(dimensioned tensors, 0-d tensors, Python scalars), through ``promote_types``,
``result_type``, ``can_cast`` and the results of arithmetic operators."""

import itertools
import operator

import numpy
import pytest

import retrograd

pytestmark = [pytest.mark.torch,
              pytest.mark.filterwarnings("ignore:ComplexHalf support is experimental")]

DTYPES = ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
          "float64", "complex64", "complex128")
SCALARS = (True, 3, 2.5, 1.5 + 2j)
PAIRS = list(itertools.product(DTYPES, DTYPES))
# Tensor tiers: a dimensioned tensor and a 0-d tensor.
TIERS = {"tensor": (2,), "0d": ()}


# PyTorch's complex32 (a float16 tensor meeting a complex 0-d tensor or number) has no
# NumPy dtype, so retrograd has none: those cases, and PyTorch's missing complex32 kernels,
# are skipped.
_COMPLEX32 = ("torch.complex32", "NotImplementedError")


def _check(actual, expected):
    if expected in _COMPLEX32:
        pytest.skip("retrograd has no complex32 (NumPy has no such dtype)")
    assert actual == expected


def _pair(torch, dtype, shape):
    """The same ones-filled tensor in retrograd and PyTorch."""
    arr = numpy.ones(shape, dtype=getattr(retrograd, dtype).np)
    if dtype == "bfloat16":  # PyTorch takes no ml_dtypes array: its bits
        return retrograd.from_numpy(arr), torch.from_numpy(arr.view(numpy.int16)).view(
            torch.bfloat16)
    return retrograd.from_numpy(arr), torch.from_numpy(arr.copy())


@pytest.mark.parametrize("a, b", PAIRS, ids=[f"{a}-{b}" for a, b in PAIRS])
def test_promote_types_and_can_cast(torch, a, b):
    ra, rb = getattr(retrograd, a), getattr(retrograd, b)
    ta, tb = getattr(torch, a), getattr(torch, b)
    assert repr(retrograd.promote_types(ra, rb)) == str(torch.promote_types(ta, tb))
    assert retrograd._dtype.can_cast(ra, rb) == torch.can_cast(ta, tb)  # not yet exported


@pytest.mark.parametrize("a, b", PAIRS, ids=[f"{a}-{b}" for a, b in PAIRS])
@pytest.mark.parametrize("tier_a, tier_b", list(itertools.product(TIERS, TIERS)),
                         ids=lambda t: t)
def test_result_type_tensors(torch, a, b, tier_a, tier_b):
    ra, ta = _pair(torch, a, TIERS[tier_a])
    rb, tb = _pair(torch, b, TIERS[tier_b])
    _check(repr(retrograd.result_type(ra, rb)), str(torch.result_type(ta, tb)))


@pytest.mark.parametrize("default", ("float32", "float64"))
@pytest.mark.parametrize("scalar", SCALARS, ids=lambda s: type(s).__name__)
@pytest.mark.parametrize("tier", TIERS)
@pytest.mark.parametrize("a", DTYPES)
def test_result_type_scalar(torch, a, tier, scalar, default):
    ra, ta = _pair(torch, a, TIERS[tier])
    old = torch.get_default_dtype()
    torch.set_default_dtype(getattr(torch, default))
    retrograd.set_default_dtype(getattr(retrograd, default))
    try:
        expected = torch.result_type(ta, scalar)
    finally:
        torch.set_default_dtype(old)
    _check(repr(retrograd.result_type(ra, scalar)), str(expected))


_OPERATORS = {"add": operator.add, "mul": operator.mul, "truediv": operator.truediv}


def _result(fn, x, y):
    """The result dtype, or the exception type when the operation is refused."""
    try:
        return str(fn(x, y).dtype)
    except NotImplementedError:  # PyTorch's complex32 kernels that do not exist
        return "NotImplementedError"
    except RuntimeError:
        return "RuntimeError"
    except TypeError:
        return "TypeError"


@pytest.mark.parametrize("name", _OPERATORS)
@pytest.mark.parametrize("a, b", PAIRS, ids=[f"{a}-{b}" for a, b in PAIRS])
def test_operator_result_dtype_tensors(torch, name, a, b):
    fn = _OPERATORS[name]
    for tier_a, tier_b in itertools.product(TIERS, TIERS):
        ra, ta = _pair(torch, a, TIERS[tier_a])
        rb, tb = _pair(torch, b, TIERS[tier_b])
        expected = _result(fn, ta, tb)
        if expected not in _COMPLEX32:
            assert _result(fn, ra, rb) == expected, (tier_a, tier_b)


@pytest.mark.parametrize("name", _OPERATORS)
@pytest.mark.parametrize("a", DTYPES)
def test_operator_result_dtype_scalars(torch, name, a):
    fn = _OPERATORS[name]
    for tier, scalar in itertools.product(TIERS, SCALARS):
        ra, ta = _pair(torch, a, TIERS[tier])
        for x, y, tx, ty in ((ra, scalar, ta, scalar), (scalar, ra, scalar, ta)):
            expected = _result(fn, tx, ty)
            if expected not in _COMPLEX32:
                assert _result(fn, x, y) == expected, (tier, x, y)
