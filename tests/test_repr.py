"""``repr`` of tensors against PyTorch's, character for character, and the eval round trip.

The differential cases cover float formatting (fixed, integer-valued, scientific,
nan/inf, negative zero), every dtype and its suffix, 0-d and empty tensors, line
wrapping, summarization, complex numbers, autograd suffixes, print options and a
non-float32 default dtype; hypothesis then draws arrays of any dtype, shape and
magnitude under random print options.
"""

import numpy
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import retrograd
from retrograd._tensor_str import PRINT_OPTS


@pytest.fixture(autouse=True)
def _default_printoptions():
    yield
    retrograd.set_printoptions(profile="default")
    try:
        import torch
    except ImportError:
        return
    torch.set_printoptions(profile="default")
    torch.set_default_dtype(torch.float32)


_BF16 = retrograd.bfloat16.np


def _pair(torch, arr, requires_grad=False):
    t = numpy.array(arr, copy=True)
    if t.dtype == _BF16:  # PyTorch takes no ml_dtypes array: its bits
        t = torch.from_numpy(t.view(numpy.int16)).view(torch.bfloat16)
    else:
        t = torch.from_numpy(t)
    r = retrograd.from_numpy(numpy.array(arr, copy=True))
    if requires_grad:
        t.requires_grad_(True)
        r.requires_grad_(True)
    return t, r


def _check(torch, arr, requires_grad=False):
    t, r = _pair(torch, arr, requires_grad)
    assert repr(r) == repr(t)
    assert str(r) == str(t)


_g = numpy.random.default_rng(12345)
_f32, _f64 = numpy.float32, numpy.float64

CASES = {
    "floats": numpy.array([1.0, 2.5, -3.25], _f32),
    "integer_valued": numpy.array([1.0, -2.0, 300.0], _f32),
    "0d": numpy.array(1.5, _f32),
    "0d_int_valued": numpy.array(-4.0, _f32),
    "negative_zero": numpy.array([-0.0, 0.0, 1.5], _f32),
    "only_zeros": numpy.zeros(4, _f32),
    "negative_zero_0d": numpy.array(-0.0, _f32),
    "sci_small": numpy.array([1e-5, 1.0], _f32),
    "sci_large": numpy.array([1e10, 1.0], _f32),
    "sci_ratio": numpy.array([0.5, 1000.1], _f32),
    "sci_int_valued": numpy.array([123456789.0, 1.0], _f32),
    "sci_exponent_3_digits": numpy.array([1e-300, 1e300, -5e99]),
    "nan_inf": numpy.array([numpy.nan, 1.5, numpy.inf, -numpy.inf], _f32),
    "nan_inf_int_valued": numpy.array([numpy.nan, 100.0, -numpy.inf], _f32),
    "only_nonfinite": numpy.array([numpy.nan, numpy.inf], _f32),
    "rounding_widens": numpy.array([0.99999, 9.99996, -9.99996], _f32),
    "empty": numpy.zeros(0, _f32),
    "empty_2d": numpy.zeros((0, 3), _f32),
    "empty_3d_int": numpy.zeros((2, 0, 3), numpy.int64),
    "empty_int": numpy.zeros(0, numpy.int64),
    "empty_bool": numpy.zeros(0, bool),
    "empty_float64": numpy.zeros((0,), _f64),
    "summarized_1d": numpy.arange(2000, dtype=_f32),
    "summarized_2d_int": numpy.arange(2000).reshape(40, 50),
    "summarized_inner_short": _g.standard_normal((300, 4)).astype(_f32),
    "summarized_inner_long": _g.standard_normal((2, 2000)).astype(_f32),
    "wrapped_rows": _g.standard_normal((3, 30)).astype(_f32),
    "matrix": _g.standard_normal((40, 25)).astype(_f32),
    "3d": _g.standard_normal((3, 4, 5)),
    "4d": _g.standard_normal((2, 3, 2, 4)).astype(_f32),
    "3d_summarized": _g.standard_normal((10, 20, 30)).astype(_f32),
    "float16": _g.standard_normal(30).astype(numpy.float16),
    "bfloat16": _g.standard_normal(30).astype(_BF16),
    "bfloat16_magnitudes": numpy.array([1e10, 1e-5, 300.7, -0.1, 0.0, -0.0], _BF16),
    "bfloat16_int_valued": numpy.array([1.0, 256.0, -3.0], _BF16),
    "bfloat16_nan_inf_0d": numpy.array(numpy.nan, _BF16),
    "bfloat16_summarized": numpy.linspace(-3, 3, 1200).astype(_BF16),
    "large_float64": _g.standard_normal((5, 7)) * 1e6,
    "int32": _g.integers(-1000, 1000, (12, 13)).astype(numpy.int32),
    "int8": _g.integers(-128, 127, (5,)).astype(numpy.int8),
    "int16": _g.integers(-5, 5, (2, 2)).astype(numpy.int16),
    "uint8": _g.integers(0, 255, (100,)).astype(numpy.uint8),
    "int64_0d": numpy.array(7),
    "int64_wide": numpy.array([1, -123456789012, 5]),
    "bool": _g.random((4, 30)) < 0.5,
    "bool_all_true": numpy.ones(3, bool),
    "bool_0d": numpy.array(True),
    "complex64": (_g.standard_normal((5, 7)) + 1j * _g.standard_normal((5, 7))).astype(
        numpy.complex64),
    "complex128_special": numpy.array([1 - 0j, -0.0 - 2j, numpy.nan + 1j, 1e10 + 1e-3j]),
    "complex_0d": numpy.array(1 + 2j, numpy.complex64),
    "complex_summarized": (_g.standard_normal(1500) * 1j).astype(numpy.complex64),
    "transposed": _g.standard_normal((4, 3)).astype(_f32).T,
}


@pytest.mark.torch
@pytest.mark.parametrize("name", list(CASES))
def test_repr_matches_torch(torch, name):
    _check(torch, CASES[name])


@pytest.mark.torch
@pytest.mark.parametrize("shape", [(3,), (2, 40), (2, 3, 4), ()])
@pytest.mark.parametrize("dtype", [_f32, _f64, numpy.float16, _BF16])
def test_autograd_suffixes(torch, shape, dtype):
    arr = _g.standard_normal(shape).astype(dtype)
    t, r = _pair(torch, arr, requires_grad=True)
    assert repr(r) == repr(t)  # requires_grad=True
    assert repr(r * 2) == repr(t * 2)  # grad_fn=<MulBackward0>
    assert repr(r + 1) == repr(t + 1)


@pytest.mark.torch
def test_suffixes_wrap_to_a_new_line(torch):
    arr = _g.standard_normal(7).astype(_f64) * 1e-6  # wide elements, dtype and grad_fn
    t, r = _pair(torch, arr, requires_grad=True)
    assert repr(r * 3) == repr(t * 3)
    assert "\n" in repr(r * 3)


_OPTIONS = [dict(precision=2), dict(precision=0), dict(precision=8), dict(threshold=5),
            dict(edgeitems=1, threshold=10), dict(edgeitems=0, threshold=10),
            dict(linewidth=40), dict(linewidth=200), dict(linewidth=5), dict(sci_mode=True),
            dict(sci_mode=False), dict(profile="short"), dict(profile="full"),
            dict(profile="short", precision=6)]
_OPTION_ARRAYS = [_g.standard_normal((20, 30)).astype(_f32), numpy.arange(30),
                  _g.standard_normal(50) * 1e5, numpy.zeros(20), numpy.array(3.25),
                  _g.standard_normal((4, 5, 6)), numpy.array([1e-8, 1.0]),
                  _g.random(30) < 0.5, (_g.standard_normal((8, 9)) + 1j).astype(numpy.complex64),
                  numpy.zeros((0, 4)), numpy.array([1.0, 2.0])]


@pytest.mark.torch
@pytest.mark.parametrize("options", _OPTIONS, ids=str)
def test_printoptions(torch, options):
    torch.set_printoptions(**options)
    retrograd.set_printoptions(**options)
    for arr in _OPTION_ARRAYS:
        _check(torch, arr)
        t, r = _pair(torch, numpy.real(arr).astype(_f64), requires_grad=True)
        assert repr(r * 1) == repr(t * 1)


def test_set_printoptions_profiles():
    retrograd.set_printoptions(profile="full", precision=2)
    assert (PRINT_OPTS.threshold, PRINT_OPTS.precision) == (float("inf"), 2)
    retrograd.set_printoptions(sci_mode=True)
    assert PRINT_OPTS.sci_mode is True and PRINT_OPTS.precision == 2
    retrograd.set_printoptions()  # sci_mode goes back to automatic, as in PyTorch
    assert PRINT_OPTS.sci_mode is None
    retrograd.set_printoptions(profile="default")
    assert repr(retrograd.tensor([1.12345])) == "tensor([1.1235])"


@pytest.mark.torch
@pytest.mark.parametrize("default", ["float64", "float16", "bfloat16"])
def test_default_dtype_changes_suffixes(torch, default):
    torch.set_default_dtype(getattr(torch, default))
    retrograd.set_default_dtype(getattr(retrograd, default))
    for arr in (numpy.array([1.5, 2.0]), numpy.array([1.5, 2.0], _f32), numpy.zeros(0),
                numpy.zeros(0, _f32), numpy.array([1 + 1j]), numpy.array([1j], numpy.complex64),
                numpy.array([1, 2])):
        _check(torch, arr)


@pytest.mark.torch
def test_subclass_prints_its_name(torch):
    class Sub(retrograd.Tensor):
        pass

    expected = repr(torch.tensor([1.0, 2.0]).as_subclass(type("Sub", (torch.Tensor,), {})))
    r = retrograd.tensor([1.0, 2.0])
    r.__class__ = Sub
    assert repr(r) == expected == "Sub([1., 2.])"


def test_tensor_contents_replaces_the_values():
    t = retrograd.tensor([1.0, 2.0], dtype=retrograd.float64)
    assert retrograd._tensor_str.tensor_repr(t, tensor_contents="[...]") == \
        "tensor([...], dtype=torch.float64)"


# ---- hypothesis: random arrays, dtypes, magnitudes and print options ---------------------

_DTYPES = [numpy.float32, numpy.float64, numpy.float16, _BF16, numpy.int64, numpy.int32,
           numpy.int16, numpy.int8, numpy.uint8, numpy.bool_, numpy.complex64, numpy.complex128]


@st.composite
def _arrays(draw):
    """Arrays of any dtype and shape; floats mix any magnitude, integer values, one random
    scale (so scientific and fixed notation both occur), nan and inf."""
    dtype = numpy.dtype(draw(st.sampled_from(_DTYPES)))
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=14))
    if not retrograd._dtype.is_inexact(dtype):
        return draw(hnp.arrays(dtype, shape))
    scale = 10.0 ** draw(st.integers(-12, 12))
    elements = st.one_of(st.floats(allow_subnormal=False), st.integers(-1000, 1000).map(float),
                         st.floats(-10, 10).map(lambda v: v * scale))
    parts = [draw(hnp.arrays(numpy.float64, shape, elements=elements))
             for _ in range(2 if dtype.kind == "c" else 1)]
    with numpy.errstate(over="ignore", invalid="ignore"):
        values = parts[0] + 1j * parts[1] if dtype.kind == "c" else parts[0]
        return numpy.asarray(values, dtype=dtype)


_printoptions = st.fixed_dictionaries({}, optional={
    "precision": st.integers(0, 8), "threshold": st.sampled_from([5, 100, 1000]),
    "edgeitems": st.integers(0, 4), "linewidth": st.sampled_from([10, 40, 80, 120]),
    "sci_mode": st.sampled_from([None, True, False])})


@pytest.mark.torch
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(arr=_arrays(), options=_printoptions)
def test_hypothesis_repr_matches_torch(torch, arr, options):
    torch.set_printoptions(**options)
    retrograd.set_printoptions(**options)
    try:
        t, r = _pair(torch, arr, requires_grad=retrograd._dtype.is_float(arr.dtype)
                     and arr.ndim % 2 == 1)
        assert repr(r) == repr(t)
    finally:
        torch.set_printoptions(profile="default")
        retrograd.set_printoptions(profile="default")


# ---- the printed form evaluates back to the values ---------------------------------------

# As after ``import retrograd as torch; from retrograd import inf, nan``.
_NAMESPACE = {"retrograd": retrograd, "torch": retrograd, "inf": retrograd.inf,
              "nan": retrograd.nan}


def _round_trip(t):
    """``eval("retrograd." + repr(t))``: same dtype, requires_grad and (printed) values."""
    text = repr(t)
    back = eval("retrograd." + text, _NAMESPACE)  # noqa: S307 - the point of the test
    assert back.dtype is t.dtype and back.shape == t.shape
    assert back.requires_grad == t.requires_grad
    a, b = t.detach().numpy(), back.detach().numpy()
    if retrograd._dtype.is_inexact(a.dtype):
        rtol = {numpy.dtype(numpy.float16): 1e-3, _BF16: 8e-3}.get(a.dtype, 1e-4)
        # real and imaginary parts apart: |inf+xj - inf+yj| is nan for complex values
        for part in ((numpy.real, numpy.imag) if a.dtype.kind == "c" else (numpy.asarray,)):
            numpy.testing.assert_allclose(part(b), part(a), rtol=rtol, atol=1e-4,
                                          equal_nan=True, err_msg=text)
    else:
        numpy.testing.assert_array_equal(b, a, err_msg=text)


def _round_trips(arr):
    """Reprs that are Python expressions: no summary, no ``size=``, and for complex no
    ``nanj``/``infj`` (PyTorch prints those too, but they name nothing)."""
    if arr.size > PRINT_OPTS.threshold or (arr.size == 0 and arr.ndim != 1):
        return False
    parts = (arr.real, arr.imag) if arr.dtype.kind == "c" else (arr,)
    if arr.dtype.kind in "fc" and any((numpy.abs(p[numpy.isfinite(p)]) > 1e307).any()
                                      for p in parts):
        return False  # rounded to 4 digits, float64's largest values print above its max
    return arr.dtype.kind != "c" or numpy.isfinite(arr.imag).all()


@pytest.mark.parametrize("name", [n for n in CASES if _round_trips(CASES[n])])
def test_eval_round_trip(name):
    _round_trip(retrograd.from_numpy(numpy.array(CASES[name], copy=True)))


def test_eval_round_trip_names():
    assert retrograd.inf == float("inf") and retrograd.nan != retrograd.nan
    t = retrograd.tensor([retrograd.inf, -retrograd.inf, retrograd.nan, 1.0],
                         dtype=retrograd.float64, requires_grad=True)
    assert repr(t) == "tensor([inf, -inf, nan, 1.], dtype=torch.float64, requires_grad=True)"
    _round_trip(t)


@settings(max_examples=150, deadline=None)
@given(arr=_arrays())
def test_hypothesis_eval_round_trip(arr):
    if _round_trips(arr):
        _round_trip(retrograd.from_numpy(arr))


@pytest.mark.parametrize("make,spec", [
    (lambda lib: lib.tensor(0.5), ""), (lambda lib: lib.tensor(0.5), ".3f"),
    (lambda lib: lib.tensor(3), "05d"), (lambda lib: lib.tensor([0.5]), ""),
    (lambda lib: lib.tensor([0.5]), ".3f"), (lambda lib: lib.nn.Parameter(lib.tensor(1.0)), ""),
    (lambda lib: lib.tensor(2.0, requires_grad=True) * 2, ""),
])
def test_format_against_pytorch(make, spec):
    """A plain 0-d tensor formats as its number (``f"{loss}"`` prints ``0.5``); others as
    their repr, and a format spec on them is a TypeError."""
    torch = pytest.importorskip("torch")
    try:
        expected = format(make(torch), spec)
    except TypeError as e:
        with pytest.raises(TypeError, match=str(e)):
            format(make(retrograd), spec)
        return
    assert format(make(retrograd), spec) == expected
