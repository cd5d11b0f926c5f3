"""Differential-fuzz mismatches on activations, softmax, round and a few unary ops,
checked against PyTorch: dtype errors, empty inputs, special-value gradients."""

import numpy
import pytest

import retrograd

pytestmark = pytest.mark.torch

_INTS = ("bool", "uint8", "int8", "int32", "int64")


def _outcome(lib, fn):
    """``fn(lib)``'s result as (dtype name, values), or its exception's (type, message)."""
    try:
        out = fn(lib)
    except Exception as e:  # noqa: BLE001 - the exception is the outcome compared
        return type(e).__name__, str(e)
    return str(out.dtype).split(".")[-1], out.detach().numpy().tolist()


def _same(torch, fn):
    ours, theirs = _outcome(retrograd, fn), _outcome(torch, fn)
    assert ours == theirs


@pytest.mark.parametrize("dtype", _INTS)
@pytest.mark.parametrize("call", [
    lambda lib, x: lib.nn.functional.silu(x),
    lambda lib, x: lib.nn.functional.silu(x, inplace=True),
    lambda lib, x: lib.nn.functional.gelu(x),
    lambda lib, x: lib.nn.functional.gelu(x, approximate="tanh"),
    lambda lib, x: lib.nn.functional.gelu(x, approximate="bad"),
], ids=["silu", "silu_", "gelu", "gelu_tanh", "gelu_bad"])
def test_silu_gelu_refuse_integer_and_bool(torch, dtype, call):
    _same(torch, lambda lib: call(lib, lib.tensor([[1, 0], [2, 3]]).to(getattr(lib, dtype))))


@pytest.mark.parametrize("dtype", _INTS + ("float32",))
@pytest.mark.parametrize("shape,dim", [((0,), 0), ((0, 3), 1), ((3, 0), 0), ((2, 0, 3), -1)])
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_of_empty_input_any_dtype(torch, dtype, shape, dim, name):
    """An empty input never reaches PyTorch's kernel: any dtype gives an empty copy."""
    _same(torch, lambda lib: getattr(lib.nn.functional, name)(
        lib.zeros(shape, dtype=getattr(lib, dtype)), dim))
    _same(torch, lambda lib: getattr(lib, name)(lib.zeros(shape, dtype=getattr(lib, dtype)),
                                                dim))


@pytest.mark.torch
@pytest.mark.parametrize("rows", [1, 300])
def test_log_softmax_gradient_of_an_infinite_sum(torch, rows):
    """``g - exp(y) * sum(g)``: where the sum is infinite, a class whose exponential rounds
    to 0 gets NaN (0 * inf), as PyTorch's (the compiled kernel once gave -inf)."""
    def grad(lib):
        x = lib.tensor([[-3958.99, -39.4, 0.0055]] * rows, requires_grad=True)
        g = lib.tensor([[-1.2, -0.7, numpy.inf]] * rows)
        lib.nn.functional.log_softmax(x, 1).backward(g)
        return x.grad.numpy()
    want = grad(torch)
    assert numpy.isnan(want[:, 0]).all() and numpy.isneginf(want[:, 1]).all()
    numpy.testing.assert_array_equal(grad(retrograd), want)


@pytest.mark.parametrize("dim", [0, 1])
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_of_nonempty_integer_input_still_refused(torch, dim, name):
    _same(torch, lambda lib: getattr(lib.nn.functional, name)(
        lib.ones((2, 3), dtype=lib.int64), dim))


@pytest.mark.parametrize("dtype", _INTS + ("float32", "float16"))
@pytest.mark.parametrize("kw", [{}, {"decimals": 0}, {"decimals": 1}, {"decimals": -1}],
                         ids=["plain", "d0", "d1", "d-1"])
@pytest.mark.parametrize("shape", [(2, 3), (0,)])
def test_round_overloads(torch, dtype, kw, shape):
    """``decimals``, even 0, picks PyTorch's decimals overload: floating kernels only."""
    def run(lib):
        x = lib.arange(6).reshape(2, 3) * 7 - 20 if shape == (2, 3) else lib.zeros(0)
        return lib.round(x.to(getattr(lib, dtype)), **kw)
    _same(torch, run)

    def run_(lib):
        x = lib.arange(6).reshape(2, 3) * 7 - 20 if shape == (2, 3) else lib.zeros(0)
        return x.to(getattr(lib, dtype)).round_(**kw)
    _same(torch, run_)


@pytest.mark.parametrize("kw", [{}, {"decimals": 0}, {"decimals": 2}])
def test_round_node(torch, kw):
    def node(lib):
        x = lib.tensor([0.25, -1.5], requires_grad=True)
        return type(lib.round(x, **kw).grad_fn).__name__
    assert node(retrograd) == node(torch)



def _values_and_grad(lib, fn, values, cot, dtype):
    """``fn(x)`` and the gradient of ``cot``'s dot product with it, as NumPy arrays."""
    x = lib.tensor(values, dtype=getattr(lib, dtype), requires_grad=True)
    out = fn(lib, x)
    (g,) = lib.autograd.grad(out, x, lib.tensor(cot, dtype=getattr(lib, dtype)))
    return out.detach().numpy(), g.numpy()


def _same_values_and_grad(torch, fn, values, cot, dtype):
    """Equal up to float rounding, with the same infinities, NaNs and signs (of zeros
    too)."""
    ours = _values_and_grad(retrograd, fn, values, cot, dtype)
    theirs = _values_and_grad(torch, fn, values, cot, dtype)
    for a, b in zip(ours, theirs, strict=True):
        assert a.dtype == b.dtype
        numpy.testing.assert_allclose(a, b, rtol=2e-3 if dtype == "float16" else 1e-6)
        real = ~numpy.isnan(b)
        assert numpy.array_equal(numpy.signbit(a[real]), numpy.signbit(b[real]))


_LOGIT_X = [0.0, 1.0, 0.5, 1e-7, 1 - 1e-7, 2.0, 182.0, -0.04, 1e-310, 0.25]
_LOGIT_COT = [1.0, -1.0, -2.0, -1.0, -1.0, -1.0, -0.5, -0.5, 1e-3, -1.0]


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("eps", [None, 1e-6, 0.0, 0.25])
def test_logit_bounds_in_input_dtype(torch, dtype, eps):
    """eps and 1 - eps are rounded to the input's dtype (for float16 1 - 1e-6 is 1: inf);
    outside them the gradient is a plain 0; inside it is grad / (x (1 - x)), finite for a
    tiny x where 1 / (x (1 - x)) alone would overflow."""
    _same_values_and_grad(torch, lambda lib, x: lib.logit(x, eps=eps), _LOGIT_X, _LOGIT_COT,
                          dtype)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_lgamma_special_values(torch, dtype):
    """inf at -inf, -log|x| at subnormals, and for float16 the backward's digamma in half
    (inf for a tiny input, before the multiplication by grad)."""
    x = [-numpy.inf, numpy.inf, 5e-324, -5e-324, 1e-40, -3.7e-05, -1.3172626495361328e-05,
         0.51171875, 5112.0]
    cot = [1.0, 1.0, 0.5, 0.5, 1.0, -0.5, -0.75, 1.0, 1.0]
    _same_values_and_grad(torch, lambda lib, x: lib.lgamma(x), x, cot, dtype)


@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_asinh_float16_backward_in_half(torch, dtype):
    """PyTorch's float16 backward computes x * x in half: inf, so a zero gradient, past
    |x| = 256."""
    x = [-319.25, 300.0, 200.0, 1e-3, 0.5, 65504.0, -numpy.inf, 0.0070037841796875]
    _same_values_and_grad(torch, lambda lib, x: lib.asinh(x), x, [1.0, -0.5] * 4, dtype)


@pytest.mark.parametrize("dtype", ["float16", "float32"])
@pytest.mark.parametrize("op", ["acosh", "atanh"])
def test_acosh_atanh_float16_backward_in_half(torch, op, dtype):
    """As asinh's: x * x in half is inf past |x| = 256 (a zero gradient where float32
    gives a small one, as at -330.25), and rounds in half below."""
    x = [-330.25, -121.75, 300.0, 1.5, 2.0, 0.5, -0.25, 0.9995]
    _same_values_and_grad(torch, lambda lib, x: getattr(lib, op)(x), x, [1.0, -0.5] * 4, dtype)


@pytest.mark.parametrize("dtype", ["float16", "float32"])
@pytest.mark.parametrize("op", ["sinh", "cosh"])
def test_sinh_cosh_float16_backward_in_half(torch, op, dtype):
    """PyTorch multiplies grad by a float16 cosh (sinh) tensor: inf past |x| = 11.8, so an
    inf gradient where the float32 product (0.0004 * cosh(13.15) = 110) fits in half."""
    x = [13.1484375, 0.2220458984375, 0.01229095458984375, 17328.0, -12.0, -11.5, 3.0, 0.0]
    cot = [0.000431, 0.47, 0.5, -1.0, 1e-4, 0.25, -0.75, 1.0]
    _same_values_and_grad(torch, lambda lib, x: getattr(lib, op)(x), x, cot, dtype)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_rsqrt_backward_cubes_the_result_in_its_dtype(torch, dtype):
    """PyTorch's ``-0.5 * grad * result.pow(3)`` in float16 is half ops: past a result of
    40 the cube overflows to inf, where a float32 product would stay finite. (Inputs
    where PyTorch's float16 rsqrt, which rounds sqrt to half first outside its vector loop,
    gives the same.)"""
    x = [2.0 ** -11, 2.0 ** -12, 2.0 ** -10, 0.25, 4.0, -15.0, 0.0, -0.0, numpy.inf, 1e-5]
    cot = [0.01, -0.02, -0.6, 1.0, 0.3, 1.0, 1.0, -1.0, 1.0, 2e-3]
    _same_values_and_grad(torch, lambda lib, x: lib.rsqrt(x), x, cot, dtype)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("call", [
    lambda lib, x: lib.nn.functional.leaky_relu(x, 0.0),
    lambda lib, x: lib.nn.functional.leaky_relu(x, 0.5),
    lambda lib, x: lib.nn.functional.rrelu(x, 0.0, 0.0),
], ids=["leaky_relu_0", "leaky_relu_half", "rrelu_eval_0"])
def test_leaky_relu_slope_zero_at_infinity(torch, call, dtype):
    """PyTorch's ``x > 0 ? x : x * slope``: inf at inf whatever the slope (inf * 0 is NaN
    only on the side not taken), NaN at -inf for a slope of 0."""
    x = [numpy.inf, -numpy.inf, numpy.nan, -0.0, 0.0, -2.5, 3.0]
    _same_values_and_grad(torch, call, x, [1.0, -0.5, 2.0, 1.5, -1.0, 0.25, 3.0], dtype)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("op", ["selu", "hardswish", "softshrink", "celu", "elu", "relu6"])
@pytest.mark.parametrize("x", [numpy.nan, numpy.inf, -numpy.inf, -3.0, 3.0, 0.5, 0.0])
def test_activation_gradient_at_special_values_is_pytorchs_scalar_loop(torch, op, x, dtype):
    """PyTorch's vectorised loop gives NaN (selu, hardswish, celu, elu) or 0 (softshrink, relu6)
    at a NaN input, its scalar loop (a one-element tensor) the gradient, as retrograd
    at every position. (Not softshrink's dead zone below 0: there its scalar loop gives
    -0.0, its vectorised loop and retrograd 0.0.)"""
    _same_values_and_grad(torch, lambda lib, t: getattr(lib.nn.functional, op)(t), [x],
                          [1.5], dtype)



@pytest.mark.parametrize("op", ["exp2", "log2", "log10"])
@pytest.mark.parametrize("step", [1, 2])
def test_exp2_log2_log10_float16_backward_rounds_each_step(torch, op, step):
    """PyTorch's ``grad * result * ln2`` and ``grad / (self * ln10)`` are float16 ops, each
    rounded to half (the number multiplies in float32): log10's gradient at the smallest
    subnormal is -inf where one rounding gives -6e4, and exp2's differ by an ulp. Bit for
    bit, on the fuzz reproducers and a spread of values, contiguous and strided."""
    values = numpy.random.default_rng(0).standard_normal(400) * 4
    values[:4] = [-5.960464477539063e-08, -0.0, -0.6484375, 2.333984375]
    cot = numpy.random.default_rng(1).standard_normal(400 // step)
    grads = []
    for lib in (retrograd, torch):
        x = lib.tensor(values, dtype=lib.float16, requires_grad=True)
        y = getattr(lib, op)(x[::step])
        (g,) = lib.autograd.grad(y, x, lib.tensor(cot, dtype=lib.float16))
        grads.append(g.numpy().view("u2"))
    numpy.testing.assert_array_equal(*grads)
