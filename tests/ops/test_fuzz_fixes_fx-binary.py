"""Binary ops and matrix products at the edges the differential fuzz found, against
PyTorch: bool products with an empty result or inner size 0, check order of shape,
dtype and bool errors, and backward errors and gradients at special values."""

import math

import numpy
import pytest

import retrograd


def _outcome(lib, fn):
    """The result (as NumPy, with its dtype name) or the exception type and message."""
    try:
        out = fn(lib)
    except (RuntimeError, NotImplementedError, TypeError, ValueError, OverflowError) as e:
        return type(e).__name__, str(e)
    return str(out.dtype).removeprefix("torch."), out.detach().numpy()


def _same(torch, fn):
    want, got = _outcome(torch, fn), _outcome(retrograd, fn)
    assert got[0] == want[0]
    if isinstance(want[1], str):
        assert got[1] == want[1]
    else:
        numpy.testing.assert_array_equal(got[1], want[1])


def _bools(lib, *shapes):
    return [lib.ones(s, dtype=lib.bool) for s in shapes]


@pytest.mark.torch
@pytest.mark.parametrize("name, shapes", [
    ("mm", [(0, 3), (3, 2)]), ("mm", [(2, 0), (0, 2)]), ("mm", [(2, 3), (3, 2)]),
    ("mm", [(3, 0), (4, 2)]), ("bmm", [(0, 2, 3), (0, 3, 2)]), ("bmm", [(1, 2, 0), (1, 0, 2)]),
    ("bmm", [(1, 2, 3), (1, 3, 2)]), ("bmm", [(1, 2, 3), (1, 4, 2)]), ("mv", [(0, 3), (3,)]),
    ("mv", [(2, 0), (0,)]), ("mv", [(2, 3), (4,)]), ("dot", [(0,), (0,)]), ("dot", [(2,), (3,)]),
    ("matmul", [(0,), (0, 2)]), ("matmul", [(0, 2, 3), (3, 2)]), ("matmul", [(2, 2, 0), (0,)]),
    ("matmul", [(2, 3), (0, 3, 2)]), ("matmul", [(0,), (2, 0, 2)]), ("matmul", [(3,), (2, 3, 2)]),
    ("matmul", [(2, 2, 3), (4, 2)]), ("matmul", [(2, 1, 0), (2, 0, 2)]),
    ("matmul", [(2, 1, 2, 3), (2, 4, 2)]),
])
def test_bool_products_with_nothing_to_sum(torch, name, shapes):
    """PyTorch refuses bool products only when there is something to multiply."""
    _same(torch, lambda lib: getattr(lib, name)(*_bools(lib, *shapes)))


@pytest.mark.torch
def test_bmm_refuses_bool_batch1_before_a_dtype_mismatch(torch):
    _same(torch, lambda lib: lib.bmm(lib.ones(1, 2, 3, dtype=lib.bool), lib.ones(1, 3, 2)))
    _same(torch, lambda lib: lib.bmm(lib.ones(1, 2, 3), lib.ones(1, 3, 2, dtype=lib.bool)))
    _same(torch, lambda lib: lib.matmul(lib.ones(2, 2, 3, dtype=lib.bool), lib.ones(2, 3, 2)))


def _grads(lib, fn, *arrays, grad=(True, True)):
    """``fn``'s gradients for the leaves built from ``arrays`` (those flagged in ``grad``),
    or the exception type and message backward raised."""
    xs = [lib.tensor(a, requires_grad=g) for a, g in zip(arrays, grad, strict=True)]
    out = fn(lib, *xs)
    try:
        gs = lib.autograd.grad(out.sum(), [x for x in xs if x.requires_grad])
    except (RuntimeError, TypeError) as e:
        return type(e).__name__, str(e)
    return [g.numpy() for g in gs]


def _same_grads(torch, fn, *arrays, grad=(True, True)):
    want, got = _grads(torch, fn, *arrays, grad=grad), _grads(retrograd, fn, *arrays, grad=grad)
    if isinstance(want, tuple):
        assert got == want
        return
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype
        numpy.testing.assert_allclose(g, w, rtol=1e-3, atol=0)


_MASK = numpy.array([True, False])
_X = numpy.array([0.5, -2.0])


@pytest.mark.torch
@pytest.mark.parametrize("name", ["logaddexp", "atan2", "pow"])
@pytest.mark.parametrize("bool_first", [False, True])
def test_backward_through_a_bool_operand(torch, name, bool_first):
    """PyTorch's formulas subtract or negate the bool operand, which it refuses."""
    arrays, grad = ((_MASK, _X), (False, True)) if bool_first else ((_X, _MASK), (True, False))
    _same_grads(torch, lambda lib, a, b: getattr(lib, name)(a, b), *arrays, grad=grad)


@pytest.mark.torch
def test_logaddexp_gradient_at_infinity(torch):
    """exp(x - result) is NaN where x is +inf; PyTorch's share there is 1 (or NaN at two)."""
    a = numpy.array([-0.88, numpy.inf, numpy.inf, -numpy.inf], dtype="float16")
    b = numpy.array([numpy.inf, 1.0, numpy.inf, -numpy.inf], dtype="float16")
    _same_grads(torch, lambda lib, x, y: lib.logaddexp(x, y), a, b)
    _same_grads(torch, lambda lib, x, y: lib.logaddexp2(x, y), a, b)


@pytest.mark.torch
def test_pow_gradient_rounds_exponent_minus_one_to_the_result_dtype(torch):
    """PyTorch computes ``self ** (exponent - 1)`` in the result dtype: a float16 exponent
    just above 0 makes it -1 there, finite at a negative base."""
    base = numpy.array([-1.33e-5, -3.57, 32279.1], dtype="float32")
    exponent = numpy.array([6.85e-6, -3.9e-4, -0.336], dtype="float16")
    _same_grads(torch, lambda lib, x, y: lib.pow(x, y), base, exponent)
    _same_grads(torch, lambda lib, x, y: lib.pow(x, y), numpy.array([-0.699], dtype="float16"),
                numpy.array(4.5e-5, dtype="float32"), grad=(True, False))
    _same_grads(torch, lambda lib, x, y: lib.pow(x, y), numpy.array([0.804], dtype="float32"),
                numpy.array(-386.83))


@pytest.mark.torch
@pytest.mark.parametrize("dtype", ["int64", "int8", "uint8"])
def test_integer_pow_with_negative_tensor_exponents(torch, dtype):
    base, exponent = numpy.arange(-3, 4)[:, None], numpy.arange(-3, 3)
    if dtype == "uint8":
        base, exponent = numpy.abs(base), numpy.abs(exponent)
    _same(torch, lambda lib: lib.pow(lib.tensor(base.astype(dtype)),
                                     lib.tensor(exponent.astype(dtype))))


@pytest.mark.torch
def test_atan2_gradient_in_float16_and_with_an_integer_operand(torch):
    """PyTorch's 1 / (self² + other²) is in the result dtype: float16 overflows there."""
    _same_grads(torch, lambda lib, x, y: lib.atan2(x, y), numpy.array(-506.0, dtype="float16"),
                numpy.array(0.77, dtype="float32"))
    _same_grads(torch, lambda lib, x, y: lib.atan2(x, y), numpy.array([0, 0]),
                numpy.array([0.0102, 0.00065], dtype="float16"), grad=(False, True))


@pytest.mark.torch
@pytest.mark.parametrize("name", ["logaddexp", "pow", "hypot", "remainder"])
def test_shapes_are_checked_before_the_kernel_dtype(torch, name):
    _same(torch, lambda lib: getattr(lib, name)(lib.ones(5, dtype=lib.bool),
                                                lib.ones(4, dtype=lib.bool)))


@pytest.mark.torch
@pytest.mark.parametrize("name", ["remainder", "fmod", "floor_divide"])
@pytest.mark.parametrize("shapes", [((0,), ()), ((1,), (0,)), ((1,), ())])
def test_integer_division_by_zero_only_raises_for_a_nonempty_result(torch, name, shapes):
    _same(torch, lambda lib: getattr(lib, name)(lib.ones(shapes[0], dtype=lib.int64),
                                                lib.zeros(shapes[1], dtype=lib.bool)))


@pytest.mark.torch
@pytest.mark.parametrize("alpha", [2, 0, -1])
def test_add_alpha_of_bools_stays_bool(torch, alpha):
    """PyTorch casts alpha to the result dtype, bool here: nonzero is True."""
    a, b = [True, False, True, False], [True, True, False, False]
    _same(torch, lambda lib: lib.add(lib.tensor(a), lib.tensor(b), alpha=alpha))
    _same(torch, lambda lib: lib.tensor(a).add_(lib.tensor(b), alpha=alpha))


@pytest.mark.torch
@pytest.mark.parametrize(("x", "other", "alpha"), [
    ([1.0, 2.0], [3.0, 4.0], True), ([1, 2], [3, 4], 2.5), ([1, 2], 3, 2.5),
    ([1.0, 2.0], 3, True), ([1, 2], 3, 2), ([1.0], 3.0, 1j), ([1j], 2, 1j)])
def test_rsub_checks_alpha_as_sub(torch, x, other, alpha):
    """A bool alpha for a bool result only, no float alpha for integers, no complex for
    reals: rsub took any (an int result with a float alpha came out float64)."""
    _same(torch, lambda lib: lib.rsub(lib.tensor(x), lib.tensor(other)
                                      if isinstance(other, list) else other, alpha=alpha))


@pytest.mark.torch
@pytest.mark.parametrize("alpha", [numpy.float64(2.5), numpy.float32(2.5), numpy.bool_(True),
                                   numpy.int64(2), numpy.uint8(3), numpy.complex128(1j),
                                   numpy.complex64(1 + 1j)], ids=repr)
@pytest.mark.parametrize("dtype", ["int64", "float32", "complex64", "bool"])
@pytest.mark.parametrize("name", ["add", "sub", "rsub", "add_", "sub_"])
@pytest.mark.filterwarnings("ignore::numpy.exceptions.ComplexWarning")
def test_a_numpy_scalar_alpha_is_read_as_pytorch_reads_it(torch, name, dtype, alpha):
    """An integer as an int, complex128 as a complex, anything else as a float (a bool and
    complex64's real part too): a float alpha with integers came out float64 here."""
    def run(lib):
        x = lib.tensor([1, 0]).to(getattr(lib, dtype))
        if name.endswith("_"):
            return getattr(x.clone(), name)(x, alpha=alpha)
        return getattr(lib, name)(x, x, alpha=alpha)
    _same(torch, run)


@pytest.mark.torch
def test_div_gradients_compute_in_the_result_dtype(torch):
    """PyTorch's ``(self / other) / other`` rounds to float16 at each step (overflowing
    where it does); a 0-d operand joins as a float32 scalar, unrounded."""
    def div(lib, x, y):
        return lib.div(x, y)
    _same_grads(torch, div, numpy.array([-0.546, -1.016, 1.585], dtype="float16"),
                numpy.array(0.15278097987174988, dtype="float32"))
    _same_grads(torch, div, numpy.array([300.0, -2.0], dtype="float16"),
                numpy.array(0.01, dtype="float32"))
    _same_grads(torch, div, numpy.array([[30000, -7, 1]]),
                numpy.array([0.0015, 0.3, 1e-4], dtype="float16"), grad=(False, True))


@pytest.mark.torch
def test_remainder_gradient_computes_in_the_result_dtype(torch):
    """PyTorch's ``-grad * floor(self / other)`` is float16 where the result is: it
    overflows there, where NumPy's promotion to a 0-d float64 operand did not."""
    def remainder(lib, x, y):
        return lib.remainder(x, y)
    _same_grads(torch, remainder, numpy.array([0.5, -32752.0, -40000.0], dtype="float16"),
                numpy.array(-0.6269665491802744))
    _same_grads(torch, remainder, numpy.array(-429.24, dtype="float32"),
                numpy.array([12088.0, -0.00604, 5.26e-05], dtype="float16"))
    _same_grads(torch, remainder, numpy.array(3000), numpy.array([0.0013], dtype="float16"),
                grad=(False, True))


@pytest.mark.torch
def test_hypot_gradient_in_float16(torch):
    """PyTorch's ``grad * other / result`` runs in float16, rounding at each step: a
    gradient of 4 times -64832 overflows before the division."""
    def hypot(lib, x, y):
        return lib.hypot(x, y) * 4
    _same_grads(torch, hypot, numpy.array(3),
                numpy.array([0.000811, 407.0, -64832.0, 2.69, 765.5, -22368.0], dtype="float16"),
                grad=(False, True))
    _same_grads(torch, hypot, numpy.array([-0.7], dtype="float16"),
                numpy.array([True, False, True, False]), grad=(True, False))


@pytest.mark.torch
def test_atan2_gradient_in_float16(torch):
    """PyTorch's ``grad * -self`` is a float16 tensor before the reciprocal scales it: 3
    times a wider 0-d 34736 overflows to -inf, and -inf times 1/inf is NaN."""
    def atan2(lib, y, x):
        return lib.atan2(y, x) * 3
    _same_grads(torch, atan2, numpy.array(34735.77), numpy.array([4360.0], dtype="float16"))
    _same_grads(torch, atan2, numpy.array([4360.0, 1.5], dtype="float16"), numpy.array(-34735.77))


@pytest.mark.torch
def test_norm_gradient_in_float16(torch):
    """PyTorch's norm backward (``self * |self|**(p-2) * grad / norm**(p-1)``) runs in
    float16, overflowing and underflowing where a float32 computation does not."""
    x = numpy.array([[7.70e-05, 0.00744], [4.28e-05, 683.0], [0.00224, 9.695],
                     [-6.91e-06, -0.000107]], dtype="float16")
    _same_grads(torch, lambda lib, a: lib.norm(a, dim=0, keepdim=True, p=3), x, grad=(True,))


@pytest.mark.torch
def test_fmod_gradient_computes_in_the_result_dtype(torch):
    """``trunc(self / other)`` in float16, as PyTorch's: dividing by a subnormal
    overflows to inf there, and -inf + inf sums to NaN."""
    def fmod(lib, x, y):
        return lib.fmod(x, y)
    _same_grads(torch, fmod, numpy.array([[-2], [-1], [3]]),
                numpy.array([-5.960464477539063e-08], dtype="float16"), grad=(False, True))


def _pow_number(lib, x, g, exponent):
    """``x ** exponent`` (``square(x)`` for "square") and its gradient for the cotangent
    ``g``, as NumPy arrays."""
    x = lib.tensor(x, requires_grad=True)
    y = lib.square(x) if exponent == "square" else x ** exponent
    y.backward(lib.tensor(g))
    return y.detach().numpy(), x.grad.numpy()


def _bitwise_equal(got, want):
    """Equal values with equal signs (so -0.0 is not 0.0), NaN where ``want`` is NaN."""
    nan = numpy.isnan(want)
    assert got.dtype == want.dtype
    assert (numpy.isnan(got) == nan).all()
    assert (got[~nan] == want[~nan]).all()
    assert (numpy.signbit(got[~nan]) == numpy.signbit(want[~nan])).all()


@pytest.mark.torch
@pytest.mark.parametrize("exponent", [0, 1, 2, 3, -1, -2, 0.5, -0.5, 2.5, 0.1, "square"])
def test_pow_number_in_float16_on_every_value(torch, exponent):
    """PyTorch's float16 pow has no sqrt or rsqrt case (-inf ** 0.5 is inf, -0.0 ** -0.5
    inf, where float32's are NaN and -inf), and its backward rounds each step of
    ``grad * (exponent * x ** (exponent - 1))`` to half (x ** -2 overflows there, and
    2 * x past 32752, for square too: pow(x, 2) in PyTorch)."""
    x = numpy.arange(2 ** 16, dtype="uint16").view("float16")
    g = numpy.random.default_rng(0).standard_normal(x.shape).astype("float16")
    for got, want in zip(_pow_number(retrograd, x, g, exponent),
                         _pow_number(torch, x, g, exponent), strict=True):
        _bitwise_equal(got, want)


@pytest.mark.torch
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("exponent", [0, 2, 3, -1, -2, 0.5, -0.5])
def test_pow_number_special_cases_in_float32_and_float64(torch, dtype, exponent):
    """Here 0.5 and -0.5 are sqrt and rsqrt (-0.0 ** -0.5 is -inf, -inf ** 0.5 NaN), and the
    exponent multiplies the power before the cotangent: 3 * 2e38 overflows float32."""
    x = numpy.array([-0.0, 0.0, -numpy.inf, numpy.inf, numpy.nan, -1.0, 4.0, 1e-30, 1.4e19],
                    dtype)
    g = numpy.array([-1.5, 2.0, -1.0, 0.5, 1.0, -0.25, 3.0, 1e-3, 1e-3], dtype)
    for got, want in zip(_pow_number(retrograd, x, g, exponent),
                         _pow_number(torch, x, g, exponent), strict=True):
        _bitwise_equal(got, want)


@pytest.mark.torch
@pytest.mark.parametrize("x, d, dtype", [
    (8.988465674311579e307, 0.02102857083082199, "float64"), (-3.0, 5e-324, "float64"),
    (1e10, 1e-300, "float64"), (3e38, 0.5, "float32"), (1.0, 1e-39, "float32")])
def test_fmod_where_the_quotient_overflows_is_the_exact_remainder(torch, x, d, dtype):
    """C's fmod is exact: PyTorch's scalar loop (one element) gives it; its vectorised
    loop gives NaN where x / d overflows, and retrograd the remainder at every position."""
    ours, theirs = (lib.fmod(lib.tensor([x], dtype=getattr(lib, dtype)),
                             lib.tensor([d], dtype=getattr(lib, dtype))).numpy()
                    for lib in (retrograd, torch))
    _bitwise_equal(ours, theirs)
    assert numpy.isfinite(ours).all()


def _pow_number_grad_grad(lib, dtype, exponent):
    """The gradient of ``x ** exponent`` and its gradient, or the second's error message."""
    x = lib.tensor([0.7, -1.3, 2.0, 0.0, numpy.nan], dtype=getattr(lib, dtype),
                   requires_grad=True)
    (g,) = lib.autograd.grad((x ** exponent).sum(), x, create_graph=True)
    try:
        (gg,) = lib.autograd.grad(g.sum(), x)
    except RuntimeError as e:
        return g.detach().numpy(), str(e)
    return g.detach().numpy(), gg.numpy()


@pytest.mark.torch
@pytest.mark.parametrize("dtype", ["float16", "float64"])
@pytest.mark.parametrize("exponent", [0, 1, 2, 3, -1, 0.5, 2.5])
def test_pow_number_double_backward(torch, dtype, exponent):
    """The backward's own power is pow's op, with pow's derivative (inf at 0 for x ** -1,
    where the kernel's 1 / (x * x) would give NaN); x ** 1's gradient has a zero gradient,
    x ** 0's is a constant, whose gradient PyTorch refuses."""
    ours, theirs = (_pow_number_grad_grad(lib, dtype, exponent) for lib in (retrograd, torch))
    _bitwise_equal(ours[0], theirs[0])
    if isinstance(theirs[1], str):
        assert ours[1] == theirs[1]
    else:
        numpy.testing.assert_allclose(ours[1], theirs[1],
                                      rtol=1e-3 if dtype == "float16" else 1e-12)


@pytest.mark.torch
@pytest.mark.parametrize("bounds", [(1.0, 1.0), (1.0, 2.0), (2.0, 1.0), (1.0, True)])
def test_clamp_tensor_bounds_gradients_when_they_meet(torch, bounds):
    """PyTorch's clamp backward gives ``min`` the gradient where self < min < max (strictly):
    where the bounds are equal the output is max, so max takes it (the fuzz case: an int64
    input clamped to a float32 min of 1 and a bool max of True)."""
    def grads(lib):
        x = lib.tensor([[0, 1], [2, -2]])
        lo = lib.tensor(bounds[0], requires_grad=True)
        hi = lib.tensor(bounds[1]) if bounds[1] is True else lib.tensor(bounds[1],
                                                                         requires_grad=True)
        y = lib.clamp(x, min=lo, max=hi)
        inputs = (lo, hi) if hi.requires_grad else (lo,)
        return [g.tolist() for g in lib.autograd.grad(y, inputs, lib.tensor([[1., 2.], [4., 8.]]))]
    assert grads(retrograd) == grads(torch)


@pytest.mark.torch
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_remainder_zero_takes_the_dividends_sign(torch, dtype):
    """PyTorch's remainder is fmod plus the divisor where the signs differ, so an exact zero
    keeps the dividend's sign (-4 % 2 is -0.0; NumPy's takes the divisor's), 0-d too."""
    a, b = [-4.0, 4.0, -4.0, 4.0, -0.0, 0.0, 3.0, -3.0, 7.5], [2.0, 2.0, -2.0, -2.0, 2.0, -2.0,
                                                                    numpy.inf, numpy.inf, -2.5]

    def signs(lib):
        x, y = lib.tensor(a, dtype=getattr(lib, dtype)), lib.tensor(b, dtype=getattr(lib, dtype))
        outs = (lib.remainder(x, y), lib.remainder(x[0], y[0]), x % 2.0, lib.remainder(-4.0, y))
        return [numpy.signbit(o.numpy()).tolist() + o.tolist() for o in outs]
    assert signs(retrograd) == signs(torch)


@pytest.mark.torch
def test_xlogy_gradient_in_float16(torch):
    """PyTorch's ``grad * self / other`` and ``grad * xlogy(self != 0, other)`` are half ops:
    a gradient of 4 times 40192 overflows before the division (kl_div's target gradient)."""
    def xlogy(lib, x, y):
        return lib.xlogy(x, y) * 4
    t = numpy.array([40192.0, -0.2379, 53536.0, 0.00338, 2.0, 0.0], dtype="float16")
    _same_grads(torch, xlogy, t, t, grad=(True, True))
    _same_grads(torch, xlogy, t, numpy.array(3.5), grad=(True, False))


@pytest.mark.torch
def test_xlogy_gradient_beside_a_wider_0d_other(torch):
    """A 0-d ``other`` wider than ``self`` is cast to the gradient's dtype in backward: a
    float64 2.2e-308 underflows to 0 in float32 (infinite gradients), while a float32
    1e6 beside float16 is read in float32 by the division (finite, not 0)."""
    x32 = numpy.array([0.40277597, 4.575e-05], dtype="float32")
    _same_grads(torch, lambda lib, x, y: lib.xlogy(x, y) * -0.5, x32,
                numpy.array(2.2250738585072014e-308))
    _same_grads(torch, lambda lib, x, y: lib.xlogy(x, y) * -0.5, x32.astype("float16"),
                numpy.array(1e6, dtype="float32"))


@pytest.mark.torch
def test_xlogy_gradient_beside_a_wider_0d_self(torch):
    """A float32 0-d ``self`` beside float16: ``grad * self`` is a float16 product (in
    float32, rounded), so 66295 times 1.2 overflows to inf before the division."""
    _same_grads(torch, lambda lib, x, y: lib.xlogy(x, y) * 1.2, numpy.array(66295.13, "float32"),
                numpy.array([0.0704, -0.2364, 1.299], dtype="float16"))


@pytest.mark.torch
@pytest.mark.parametrize("other", [math.nan, -2.0, -1.0, 0.0, 2.0, math.inf])
@pytest.mark.parametrize("name", ["xlogy", "xlog1py"])
def test_xlogy_gradient_beside_a_number_and_a_tensor(torch, name, other):
    """PyTorch's two overloads mask self == 0 differently: with a number ``other`` wherever
    it is not > 0 (> -1 for xlog1py; NaN included: 0 there), with a tensor where it is
    <= 0 (NaN: NaN); a zero gradient stays 0 but at a NaN ``other``."""
    def grads(lib):
        f = getattr(lib.special, name)
        x = lib.tensor([0.0, 1.0, 0.0, 1.0], requires_grad=True)
        g = lib.tensor([1.0, 1.0, 0.0, 0.0])
        return [lib.autograd.grad(f(x, y), x, g)[0].tolist()
                for y in (other, lib.tensor([other] * 4))]
    numpy.testing.assert_array_equal(grads(retrograd), grads(torch))


@pytest.mark.torch
@pytest.mark.parametrize("name, other", [("hypot", numpy.array(-1.7e38, dtype="float32")),
                                         ("atan2", numpy.array(-8.99e307))])
def test_gradient_beside_a_huge_wider_0d_operand(torch, name, other):
    """float16 beside a wider 0-d number outside half's range: PyTorch's ``grad * other``
    takes it as a float32 scalar (-inf) and rounds to half before the division by the
    infinite result (hypot) or the product with the reciprocal 0 (atan2): NaN."""
    _same_grads(torch, lambda lib, x, y: getattr(lib, name)(x, y) * 0.5,
                numpy.array([0.2524, -1.0625, 0.0], dtype="float16"), other, grad=(True, True))


@pytest.mark.torch
def test_logaddexp_gradient_of_a_wider_operand(torch):
    """A float32 0-d operand beside float16: the result rounds to 34176, far from 34183.9;
    x's share is PyTorch's 1 / (1 + exp(other - x)), not exp(x - result) (2800 times)."""
    a = numpy.array(34183.9375, dtype="float32")
    b = numpy.array([-0.343], dtype="float16")
    _same_grads(torch, lambda lib, x, y: lib.logaddexp(x, y), a, b)
    _same_grads(torch, lambda lib, x, y: lib.logaddexp2(x, y), a, b)


@pytest.mark.torch
def test_pow_and_copysign_gradients_beside_a_wider_0d_self(torch):
    """The 0-d self is read in the result's dtype: -1.4e-45 is -0.0 in float16 (log -inf,
    so pow's exponent gradient is inf, not NaN); 2.2e-308 is 0 in float32 (copysign's
    result / self is 0 / 0, NaN, while its mask sees a nonzero self)."""
    _same_grads(torch, lambda lib, x, y: lib.pow(x, y), numpy.array(-1.4e-45, "float32"),
                numpy.array([-0.6577, -0.4104, 1.28], dtype="float16"))
    _same_grads(torch, lambda lib, x, y: lib.copysign(x, y),
                numpy.array(2.2250738585072014e-308), numpy.array([-0.917, 0.32], "float32"))


_BIG = numpy.array([65024.0, -0.0086, 0.04608, -38944.0], dtype="float16")


@pytest.mark.torch
@pytest.mark.parametrize("a, b", [
    (_BIG, numpy.array(-0.000731, "float16")), (numpy.array(1.5, "float16"), _BIG),
    (_BIG, numpy.array(-0.000731, "float32")), (numpy.array(3.0, "float64"), _BIG),
    (_BIG.reshape(2, 2), _BIG.reshape(2, 2).T), (_BIG.reshape(4, 1), _BIG[:3]),
    (_BIG.astype("float32"), numpy.array(1.5, "float16"))])
def test_mul_gradient_rounds_each_float16_product_before_the_sum(torch, a, b):
    """mul_tensor_backward is a half mul, so a float16 ``grad * self`` overflows to inf per
    element before the broadcast operand's sum, as in PyTorch (not a finite float32 sum);
    a 0-d operand of another dtype as its kernel takes it."""
    _same_grads(torch, lambda lib, x, y: lib.mul(x, y) * 2, a, b)


@pytest.mark.torch
@pytest.mark.parametrize("name", ["add_", "mul_", "div_", "copysign_", "clamp_"])
@pytest.mark.parametrize("self_shape, self_dtype, other_shape, other_dtype", [
    ((3,), "int64", (2, 3), "float32"),  # both wrong: the shape is named first
    ((3,), "bool", (2, 1), "int64"),
    ((2, 3), "int64", (3,), "float16"),  # the common dtype is Half (computed in float32)
    ((2, 3), "uint8", (), "float16"),
])
def test_inplace_checks_shape_then_the_common_dtype(torch, name, self_shape, self_dtype,
                                                    other_shape, other_dtype):
    """In-place binary ops: PyTorch refuses a broadcast past self's shape before a result
    dtype self cannot hold, and names that dtype as the inputs' common one."""
    def fn(lib):
        x = lib.ones(self_shape, dtype=getattr(lib, self_dtype))
        return getattr(x, name)(lib.ones(other_shape, dtype=getattr(lib, other_dtype)))
    _same(torch, fn)


@pytest.mark.torch
@pytest.mark.parametrize("dtype, fn", [
    ("uint8", lambda x: x + -1), ("uint8", lambda x: x.add_(-1)), ("uint8", lambda x: x * 300),
    ("int8", lambda x: x + 200), ("uint8", lambda x: x.remainder(-1)),
    ("int32", lambda x: x.floor_divide(-2**40)), ("int16", lambda x: x.sub_(70000)),
    ("uint8", lambda x: x + 2**63), ("int64", lambda x: x + 2**63),
    ("int64", lambda x: x - 2**63), ("uint8", lambda x: x + 2**64),
    ("uint8", lambda x: x + -2**63 - 1),
])
def test_int_scalar_outside_the_dtype_wraps(torch, dtype, fn):
    """A Python int beyond an integer tensor's range wraps into its dtype, as PyTorch casts
    the scalar (NumPy raised OverflowError); PyTorch reads it as a 64-bit integer, signed
    or not, and past those raises its OverflowError."""
    _same(torch, lambda lib: fn(lib.tensor([1, 2], dtype=getattr(lib, dtype))))


@pytest.mark.torch
@pytest.mark.parametrize("name", ["atan2_", "arctan2_", "hypot_", "xlogy_", "subtract_"])
@pytest.mark.parametrize("self_dtype, other", [
    ("float32", lambda lib: lib.tensor([3.0, -0.5])), ("float64", lambda lib: 2),
    ("int64", lambda lib: lib.tensor([1.0, 2.0])), ("int64", lambda lib: lib.tensor([1, 2])),
    ("float32", lambda lib: lib.ones(3)),
])
def test_inplace_binary_methods(torch, name, self_dtype, other):
    """In-place forms the sweep found missing (AttributeError): PyTorch's results, dtype
    checks, refusal of a number where only a tensor is taken, and broadcast errors."""
    def fn(lib):
        return getattr(lib.tensor([0.5, 2.0]).to(getattr(lib, self_dtype)), name)(other(lib))
    want, got = _outcome(torch, fn), _outcome(retrograd, fn)
    assert got[0] == want[0]
    if isinstance(want[1], str):
        assert got[1] == want[1]
    else:  # (float32 atan2 is NumPy's, within an ulp of PyTorch's)
        numpy.testing.assert_allclose(got[1], want[1], rtol=1e-6)


@pytest.mark.torch
@pytest.mark.parametrize("fn", [
    lambda lib: lib.ones(2) - True, lambda lib: True - lib.ones(2),
    lambda lib: lib.ones(2).sub_(True), lambda lib: lib.ones(2, dtype=lib.bool).sub_(True),
    lambda lib: lib.rsub(lib.ones(2), False), lambda lib: lib.ones(2, dtype=lib.int64) - False,
])
def test_sub_refuses_a_python_bool_as_a_bool_tensor(torch, fn):
    """PyTorch wraps a Python bool operand of subtraction as a bool tensor, which it refuses
    (retrograd subtracted 1 or 0)."""
    _same(torch, fn)


@pytest.mark.torch
@pytest.mark.parametrize("name", ["maximum", "minimum", "fmax", "fmin"])
def test_extremum_gradients_compare_in_the_result_dtype(torch, name):
    """Slow-run seed 13: a float32 tensor beside a 0-d float64 one that equals it once
    rounded to float32 ties (PyTorch's backward compares in the result dtype)."""
    def grads(lib):
        x = lib.tensor([0.1257302165031433, 1.0, float("nan")], requires_grad=True)
        y = lib.tensor(0.1257302210933933, dtype=lib.float64, requires_grad=True)
        g = lib.autograd.grad(getattr(lib, name)(x, y), (x, y), lib.tensor([1.0, 2.0, 4.0]))
        return [t.tolist() for t in g]
    assert grads(retrograd) == grads(torch)


@pytest.mark.torch
@pytest.mark.parametrize("fn", [
    lambda lib: lib.tensor([True, False]).pow(True),
    lambda lib: lib.tensor([True, False]).pow_(True),
    lambda lib: lib.tensor([True, False]).pow(False),
    lambda lib: lib.pow(True, lib.tensor([True, False])),
    lambda lib: True ** lib.tensor([True, False]),
    lambda lib: lib.pow(2, lib.tensor([True, False])),
])
def test_pow_of_bools(torch, fn):
    """A bool tensor to a bool power stays bool (it was int64, and pow_ refused it); a bool
    number to a bool tensor's power is PyTorch's unimplemented bool kernel (it was int8)."""
    _same(torch, fn)


@pytest.mark.torch
@pytest.mark.parametrize("name", ["bitwise_and_", "pow_", "fmod_", "remainder_",
                                  "floor_divide_", "lt_", "gcd_", "lcm_", "hypot_"])
@pytest.mark.parametrize("dtype, other", [
    ("bool", lambda lib: lib.ones(2, 3, dtype=lib.bool)),
    ("int64", lambda lib: lib.zeros(2, 3, dtype=lib.int64)),
    ("int64", lambda lib: lib.ones(3)), ("bool", lambda lib: lib.ones(2, 3)),
    ("int64", lambda lib: lib.ones(3, dtype=lib.complex64)),
    ("float32", lambda lib: lib.ones(2, 3, dtype=lib.complex64)),
    ("int64", lambda lib: lib.ones(2, 4, dtype=lib.int64)),
])
def test_inplace_checks_precede_the_kernels_dtype_refusal(torch, name, dtype, other):
    """The shape, then the result dtype, is checked before a kernel refuses its dtype, as
    PyTorch's TensorIterator (bool fmod_ of a (2, 3) tensor named the Bool kernel, int64
    bitwise_and_ of a float tensor the Float one); a comparison casts no result."""
    _same(torch, lambda lib: getattr(lib.ones(3, dtype=getattr(lib, dtype)), name)(other(lib)))


@pytest.mark.torch
def test_inplace_bitwise_of_a_float_number_names_the_cast(torch):
    _same(torch, lambda lib: lib.ones(3, dtype=lib.int64).bitwise_and_(1.5))


_BOOLS = "lib.tensor([True, False])"


@pytest.mark.torch
@pytest.mark.parametrize("call", [
    f"{_BOOLS}.{name}({args})"
    for name in ("clamp", "clamp_", "clip", "clip_")
    for args in ("True", "max=False", "True, False", "1", "0.5, 1", "max=0.5",
                 f"{_BOOLS}", f"max={_BOOLS}", f"{_BOOLS}, {_BOOLS}", "lib.tensor([1, 0])")
] + [
    f"{_BOOLS}.{name}({args})"
    for name in ("clamp_min", "clamp_min_", "clamp_max", "clamp_max_")
    for args in ("True", "False", "1", "0.5", f"{_BOOLS}", "lib.tensor(1)")
] + [f"lib.clamp({_BOOLS}, True)", f"lib.clamp_min({_BOOLS}, False)",
     f"lib.clamp_max({_BOOLS}, True)", "lib.tensor([1, 2]).clamp_(True)",
     "lib.tensor([1.0, 2.0]).clamp_(False, True)"] + [
    f"lib.ones(2, dtype=lib.{dtype}).{name}({args})"
    for dtype in ("int64", "int32", "int16", "int8", "uint8")
    for name, args in (("clamp_", "0.5"), ("clamp_", "max=0.5"), ("clamp_min_", "0.5"),
                       ("clamp_max_", "0.5"), ("clamp_", "1, 2"), ("clamp_", "True"))
])
def test_clamp_of_bools_and_its_in_place_cast_check(torch, call):
    """PyTorch's clamp kernels with number bounds have no bool loop (bool bounds keep a bool
    tensor bool: retrograd clamped it), and its in-place clamp with number bounds checks the
    cast itself, naming self's C++ element type ("long int", "bool"; it said Long, Bool)."""
    _same(torch, lambda lib: eval(call, {"lib": lib}))


_COMPLEX = "lib.ones(2, dtype=lib.complex64)"


@pytest.mark.torch
@pytest.mark.parametrize("call", [
    f"{_COMPLEX}.{name}({args})"
    for name in ("clamp", "clamp_", "clip")
    for args in ("1", "0, 1", "max=1j", "lib.ones(2)", "max=lib.ones(2)", "lib.ones(3, 2)")
] + [
    f"{_COMPLEX}.{name}({args})" for name in ("clamp_min", "clamp_max", "clamp_min_",
                                             "clamp_max_") for args in ("1", "lib.ones(2)")
] + [
    f"lib.ones(2, dtype=lib.{dtype}).{name}({args})"
    for dtype in ("float32", "float16", "int64", "bool")
    for name, args in (("clamp", "1j"), ("clamp", "max=1j"), ("clamp_", "1j, 2"),
                       ("clamp_min", "1j"), ("clamp_max_", "1j"), ("clamp_min_", "1j"),
                       ("clamp", _COMPLEX), ("clamp", f"max={_COMPLEX}"),
                       ("clamp", f"{_COMPLEX}, {_COMPLEX}"), ("clamp_max", _COMPLEX),
                       ("clamp_", _COMPLEX))
])
def test_clamp_has_no_complex_form(torch, call):
    """PyTorch refuses a complex clamp (a complex tensor first, then a complex number
    bound, which clamp's two-number overload converts to double for a float tensor; a
    complex tensor bound reaches the maximum/minimum/clamp kernel): retrograd clamped."""
    _same(torch, lambda lib: eval(call, {"lib": lib}))


@pytest.mark.torch
@pytest.mark.parametrize("call", [
    "lib.clamp(lib.ones(2), lib.ones(2), 1)", "lib.clamp(lib.ones(2), 0, lib.ones(2))",
    "lib.clamp(lib.ones(2), lib.ones(2), 1.5)", "lib.ones(2).clamp_(lib.ones(2), 1)",
    "lib.ones(2).clamp_(0.5, lib.ones(2))", "lib.clamp(lib.ones(2), lib.ones(2), None)",
    "lib.clamp(lib.ones(2), None, 1)",
])
def test_clamp_bounds_are_both_tensors_or_both_numbers(torch, call):
    """A tensor bound beside a number bound matches neither of PyTorch's clamp overloads
    (retrograd clamped); the in-place message lists the method's overloads, without the
    "didn't match" lines (docs/deviations.md)."""
    def outcome(lib):
        try:
            return eval(call, {"lib": lib}).tolist()
        except TypeError as e:
            return str(e).replace("\n      didn't match because some of the arguments have "
                                  "invalid types: (!Tensor!, !int!)", "").replace(
                "\n      didn't match because some of the arguments have invalid types: "
                "(!float!, !Tensor!)", "")
    assert outcome(retrograd) == outcome(torch)
