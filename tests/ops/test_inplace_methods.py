"""In-place Tensor methods PyTorch has beside an out-of-place op (tril_, float_power_, ...),
against PyTorch: the values and dtype written, the dtype checks, the node recorded, the
version counter and the gradients that flow back through the write."""

import numpy
import pytest

import retrograd


def _numpy(t):
    t = t.detach()
    return (t.float() if str(t.dtype).endswith("bfloat16") else t).numpy().copy()


def _run(lib, make, call):
    """``call`` applied to a non-leaf copy of ``make(lib)``: whether it returned that copy,
    the result's dtype, node and value, the copy's version and the leaf's gradient; or the
    exception raised."""
    x = make(lib)
    grad = x.dtype.is_floating_point  # (retrograd has no complex autograd: deviations.md)
    if grad:
        x.requires_grad_()
    y = x * 1
    try:
        out = call(lib, y)
    except (RuntimeError, NotImplementedError, TypeError, ValueError, IndexError) as e:
        return type(e).__name__, str(e)
    node = type(out.grad_fn).__name__ if out.grad_fn is not None else None
    got = [out is y, str(out.dtype), node, y._version, _numpy(out)]
    if grad:
        w = lib.arange(1.0, out.numel() + 1).reshape(out.shape).to(out.dtype)
        (out * w).sum().abs().backward()
        got.append(_numpy(x.grad))
    return got


def _same(torch, make, call, rtol=1e-6):
    want, got = _run(torch, make, call), _run(retrograd, make, call)
    if isinstance(want, tuple):
        assert got == want
        return
    assert not isinstance(got, tuple), got
    assert got[:4] == want[:4]
    for g, w in zip(got[4:], want[4:], strict=True):
        numpy.testing.assert_allclose(g, w, rtol=rtol, atol=1e-6)  # (float32 cancellation)


_MATRICES = [
    lambda lib: lib.arange(12.0).reshape(3, 4),
    lambda lib: lib.arange(12.0).reshape(4, 3).t(),
    lambda lib: lib.arange(24, dtype=lib.int64).reshape(2, 3, 4),
    lambda lib: lib.arange(3.0),
]


@pytest.mark.torch
@pytest.mark.parametrize("make", _MATRICES)
@pytest.mark.parametrize("name", ["tril_", "triu_"])
@pytest.mark.parametrize("diagonal", [0, 1, -2])
def test_triangles(torch, make, name, diagonal):
    _same(torch, make, lambda lib, y: getattr(y, name)(diagonal))


def test_triangle_of_a_transposed_view_writes_its_base():
    base = retrograd.ones(3, 3)
    base.t().tril_()
    assert base.numpy().tolist() == [[1, 1, 1], [0, 1, 1], [0, 0, 1]]


@pytest.mark.torch
@pytest.mark.parametrize("make", [
    lambda lib: lib.tensor([0.5, 2.0, 3.0], dtype=lib.float64),
    lambda lib: lib.tensor([0.5, 2.0, 3.0]),
    lambda lib: lib.tensor([1, 2, 3]),
    lambda lib: lib.tensor([0.5 + 1j, 2.0, 3.0j], dtype=lib.complex128),
    lambda lib: lib.tensor([0.5 + 1j, 2.0, 3.0j], dtype=lib.complex64),
])
@pytest.mark.parametrize("exponent", [
    lambda lib: 2, lambda lib: -1.5, lambda lib: 2j, lambda lib: lib.tensor([1.0, 2.0, 0.5]),
    lambda lib: lib.tensor([1, 2, 3]), lambda lib: lib.tensor([1j, 2.0, 0.5]),
])
def test_float_power_(torch, make, exponent):
    """float_power_ needs ``self`` already in the double result dtype (complex128 with a
    complex operand), and records pow's node."""
    _same(torch, make, lambda lib, y: y.float_power_(exponent(lib)))


@pytest.mark.torch
@pytest.mark.parametrize("exponent", [lambda lib: 2j, lambda lib: lib.tensor([1j, 2.0])])
def test_float_power_of_a_complex_operand_is_complex128(torch, exponent):
    def fn(lib):
        return lib.float_power(lib.tensor([0.5, 2.0]), exponent(lib))
    want, got = fn(torch), fn(retrograd)
    assert str(got.dtype) == str(want.dtype)
    numpy.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)


@pytest.mark.torch
@pytest.mark.parametrize("make", [
    lambda lib: lib.arange(9.0).reshape(3, 3), lambda lib: lib.arange(6.0).reshape(3, 2),
    lambda lib: lib.arange(21.0).reshape(7, 3), lambda lib: lib.arange(21.0).reshape(3, 7),
    lambda lib: lib.arange(8, dtype=lib.int64).reshape(2, 2, 2),
    lambda lib: lib.arange(12.0).reshape(2, 3, 2), lambda lib: lib.arange(3.0),
    lambda lib: lib.ones(0, 0), lambda lib: lib.ones(2, 2, dtype=lib.bool),
])
@pytest.mark.parametrize("value", [5, 5.5, False, lambda lib: lib.tensor(4.0), "a",
                                   lambda lib: lib.ones(2)])
@pytest.mark.parametrize("wrap", [False, True])
def test_fill_diagonal_(torch, make, value, wrap):
    """fill_diagonal_ is fill_ of a strided view: CopySlices, the number cast into self's
    dtype, wrapping below a tall matrix; PyTorch's checks of the value and shape."""
    def call(lib, y):
        return y.fill_diagonal_(value(lib) if callable(value) else value, wrap=wrap)
    _same(torch, make, call)


@pytest.mark.torch
def test_fill_diagonal_of_a_transposed_matrix_and_of_a_leaf(torch):
    def transposed(lib):
        base = lib.arange(21.0).reshape(3, 7)
        base.t().fill_diagonal_(-1, wrap=True)
        return base.numpy()
    numpy.testing.assert_array_equal(transposed(retrograd), transposed(torch))
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
        retrograd.ones(2, 2, requires_grad=True).fill_diagonal_(1)
    with pytest.raises(TypeError, match="must be Number, not Tensor"):
        retrograd.ones(2, 2).fill_diagonal_(retrograd.tensor(1.0, requires_grad=True))


@pytest.mark.torch
@pytest.mark.parametrize("make", [
    lambda lib: lib.tensor([0.5, -2.0, 3.0]), lambda lib: lib.tensor([0.5, -2.0, 3.0],
                                                                     dtype=lib.float64),
    lambda lib: lib.tensor([1, 2, 3], dtype=lib.int32), lambda lib: lib.tensor([1.0, 2.0]),
])
@pytest.mark.parametrize("other", [
    lambda lib: lib.tensor([1, -2, 3]), lambda lib: lib.tensor([0.5, 2.0, -1.0]),
    lambda lib: lib.tensor([1.5, 2.0, 0.0], dtype=lib.float64), lambda lib: lib.tensor(2.0),
    lambda lib: lib.tensor([1j, 2.0, 0.5]), lambda lib: lib.ones(2, 3), lambda lib: 2,
])
def test_ldexp_(torch, make, other):
    """ldexp_ records LdexpBackward0 (gradients to self and to other), casts a wider result
    into a float self, refuses an integral self in its own words and a number for other."""
    _same(torch, make, lambda lib, y: y.ldexp_(other(lib)))


@pytest.mark.torch
@pytest.mark.parametrize("dtypes", [("float32", "float64"), ("int64", "int64"),
                                    ("float16", "int64"), ("bool", "bool")])
def test_ldexp_dtype(torch, dtypes):
    def fn(lib):
        a, b = (lib.tensor([1, 0, 1]).to(getattr(lib, d)) for d in dtypes)
        return lib.ldexp(a, b)
    want, got = fn(torch), fn(retrograd)
    assert str(got.dtype) == str(want.dtype)
    numpy.testing.assert_array_equal(got.numpy(), want.numpy())
    numpy.testing.assert_array_equal(retrograd.tensor([1.0, 2.0]).ldexp(retrograd.tensor(
        [1, 2])).numpy(), [2.0, 8.0])


@pytest.mark.torch
@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "float32"])
def test_ldexp_gradient_of_an_integer_exponent(torch, dtype):
    """PyTorch's self gradient takes ``2 ** other`` in other's dtype: an integer exponent
    gives 0 below zero and wraps past the integer's width."""
    def fn(lib):
        x = lib.ones(6, dtype=lib.float64, requires_grad=True)
        k = lib.tensor([62, 63, 64, 31, 7, 0]).to(getattr(lib, dtype))
        lib.ldexp(x, k if dtype == "uint8" else k - lib.tensor([0, 0, 0, 0, 9, 0]).to(
            k.dtype)).sum().backward()
        return x.grad.numpy()
    numpy.testing.assert_array_equal(fn(retrograd), fn(torch))


_ROWS = [[1.0, 2.0, 3.0], [0.1, 0.2, 0.1], [4.0, -5.0, 6.0], [0.0, 0.0, 0.0]]


@pytest.mark.torch
@pytest.mark.parametrize("p", [1, 2, 3.5, float("inf"), 0.5, 1.5])
@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_renorm_(torch, p, dim, dtype):
    """renorm_ records RenormBackward0; its gradient carries the scaled slices' factor
    derivative (PyTorch's renorm_backward), slices under maxnorm pass it through."""
    _same(torch, lambda lib: lib.tensor(_ROWS, dtype=getattr(lib, dtype)),
          lambda lib, y: y.renorm_(p, dim, 2.0), rtol=2e-5)  # (float32 powers: NumPy's)


@pytest.mark.torch
@pytest.mark.parametrize("make, args", [
    (lambda lib: lib.ones(3, dtype=lib.int64), (2, 0, 1)),
    (lambda lib: lib.ones(3, 3, dtype=lib.int64), (2, 0, 1)),
    (lambda lib: lib.ones(3, 3, dtype=lib.int64), (0, 5, 1)),
    (lambda lib: lib.ones(3, 3), (-1, 0, 1)), (lambda lib: lib.ones(3, 3), (1, 5, -1)),
    (lambda lib: lib.ones(3, 3), (1, 5, 1)), (lambda lib: lib.ones(3, 0), (2, 0, 1)),
    (lambda lib: lib.ones(0, 3), (2, 0, 1)), (lambda lib: lib.ones(3, 3), (2, 0, 0)),
    (lambda lib: lib.ones(3, 3, dtype=lib.float16), (2, 0, 1)),
    (lambda lib: lib.ones(2, 3, 4), (2, 1, 1)), (lambda lib: lib.tensor(2.0), (2, 0, 1)),
])
def test_renorm_checks_and_dtypes(torch, make, args):
    _same(torch, make, lambda lib, y: y.renorm_(*args))
    _same(torch, make, lambda lib, y: lib.renorm(y, *args))


@pytest.mark.torch
@pytest.mark.parametrize("p", [1, 2, 3.5, float("inf")])
def test_renorm_forward_ad(torch, p):
    def fn(lib):
        fwa = lib.autograd.forward_ad
        with fwa.dual_level():
            x = fwa.make_dual(lib.tensor(_ROWS), lib.arange(12.0).reshape(4, 3))
            return fwa.unpack_dual(lib.renorm(x, p, 0, 2.0)).tangent.numpy()
    numpy.testing.assert_allclose(fn(retrograd), fn(torch), rtol=1e-5, atol=1e-6)


@pytest.mark.torch
@pytest.mark.parametrize("make", [
    lambda lib: lib.tensor([1.0, 2.0, 0.0]), lambda lib: lib.tensor([1.0, 2.0, 0.0],
                                                                   dtype=lib.float64),
    lambda lib: lib.tensor([1.0, 2.0, 0.0], dtype=lib.float16),
    lambda lib: lib.tensor([1.0, 2.0, 0.0], dtype=lib.bfloat16),
    lambda lib: lib.tensor([1, 2, 0]), lambda lib: lib.tensor([1.0 + 1j, 2.0, 0.0]),
])
@pytest.mark.parametrize("other", [
    lambda lib: lib.tensor([2.0, 1.0, -1.0]), lambda lib: lib.tensor([2, 1, -1]),
    lambda lib: lib.tensor([2.0, 1.0, 0.0], dtype=lib.float64), lambda lib: lib.tensor(3.0),
    lambda lib: lib.ones(2, 3), lambda lib: 2.0, lambda lib: lib.ones(2, dtype=lib.int64),
])
def test_nextafter_(torch, make, other):
    """nextafter_ steps each element one ulp of self's dtype, records NextafterBackward0
    (the gradient passes through), and refuses integral results and a number for other."""
    _same(torch, make, lambda lib, y: y.nextafter_(other(lib)), rtol=0)
    _same(torch, make, lambda lib, y: lib.nextafter(y, other(lib)), rtol=0)


@pytest.mark.torch
@pytest.mark.parametrize("name", ["bitwise_left_shift", "bitwise_right_shift"])
@pytest.mark.parametrize("dtype, values, amounts", [
    ("int64", [1, -8, 5, 3, -1, 7], [1, 2, 63, 64, 70, -1]),
    ("uint8", [1, 128, 5, 3, 255, 7], [1, 2, 7, 8, 9, 0]),
    ("int8", [1, -128, 5, 3, -1, 7], [1, 2, 7, 8, 9, -1]),
    ("int32", [1, -2, 5, 3, -1, 7], [0, 31, 32, 33, 1, 2]),
])
def test_shift_amounts(torch, name, dtype, values, amounts):
    """A shift by a negative amount or by the width or more gives 0 (or -1 for a right
    shift of a negative value), as PyTorch, where NumPy's is undefined."""
    def make(lib):
        return lib.tensor(values, dtype=getattr(lib, dtype))
    other = (lambda lib: lib.tensor(amounts, dtype=getattr(lib, dtype)))
    _same(torch, make, lambda lib, y: getattr(y, name + "_")(other(lib)))
    _same(torch, make, lambda lib, y: getattr(lib, name)(y, other(lib)))


@pytest.mark.torch
@pytest.mark.parametrize("name", ["bitwise_left_shift_", "bitwise_right_shift_"])
@pytest.mark.parametrize("make", [
    lambda lib: lib.tensor([1, 2]), lambda lib: lib.tensor([1, 2], dtype=lib.int32),
    lambda lib: lib.tensor([1, 2], dtype=lib.uint8), lambda lib: lib.tensor([1.0, 2.0]),
    lambda lib: lib.tensor([True, False]),
])
@pytest.mark.parametrize("other", [
    lambda lib: 1, lambda lib: 1.5, lambda lib: 300, lambda lib: 2 ** 40,
    lambda lib: lib.tensor([1, 2]), lambda lib: lib.tensor(2), lambda lib: lib.tensor([1.0, 2.0]),
    lambda lib: lib.tensor([True, True]), lambda lib: lib.ones(2, 2, dtype=lib.int64),
    lambda lib: "a",
])
def test_shifts_in_place(torch, name, make, other):
    """The shift written into self: the number wrapped into self's dtype, PyTorch's cast
    and kernel errors."""
    _same(torch, make, lambda lib, y: getattr(y, name)(other(lib)))


@pytest.mark.torch
@pytest.mark.parametrize("make, mat, vec", [
    (lambda lib: lib.tensor([1.0, -2.0]), (2, 3), (3,)),
    (lambda lib: lib.tensor([1.0, -2.0]), (2, 3), (4,)),
    (lambda lib: lib.tensor([1.0, -2.0]), (3,), (3,)),
    (lambda lib: lib.tensor([1.0, -2.0]), (2, 3), (3, 1)),
    (lambda lib: lib.tensor([1.0, -2.0, 3.0]), (2, 3), (3,)),
    (lambda lib: lib.tensor([1.0]), (2, 3), (3,)),
    (lambda lib: lib.tensor(1.0), (2, 3), (3,)),
    (lambda lib: lib.tensor([1.0, -2.0], dtype=lib.float64), (2, 3), (3,)),
    (lambda lib: lib.tensor([1, -2]), (2, 3), (3,)),
])
@pytest.mark.parametrize("scales", [{}, {"beta": 0.5, "alpha": 2}, {"beta": 0},
                                    {"beta": 2, "alpha": 1.5}])
@pytest.mark.parametrize("inplace", [True, False])
def test_addmv(torch, make, mat, vec, scales, inplace):
    """addmv_ records AddmvBackward0 with the gradients of beta * self + alpha * mat @ vec,
    and PyTorch's checks of dims, sizes, the in-place size and the dtypes."""
    def call(lib, y):
        dt = y.dtype if y.dtype != lib.float64 else lib.float32
        m = lib.arange(1.0, 1 + numpy.prod(mat)).reshape(mat).to(dt)
        v = lib.linspace(-1, 2, numpy.prod(vec)).reshape(vec).to(dt)
        return (y.addmv_ if inplace else lambda *a, **k: lib.addmv(y, *a, **k))(m, v, **scales)
    _same(torch, make, call)


@pytest.mark.torch
def test_addmv_gradients_of_mat_and_vec(torch):
    def fn(lib):
        m = lib.arange(6.0).reshape(2, 3).requires_grad_()
        v = lib.tensor([1.0, -1.0, 2.0], requires_grad=True)
        y = lib.tensor([0.5, 0.25], requires_grad=True) * 1
        y.addmv_(m, v, beta=3, alpha=-2).pow(2).sum().backward()
        return m.grad.numpy(), v.grad.numpy()
    for g, w in zip(fn(retrograd), fn(torch), strict=True):
        numpy.testing.assert_allclose(g, w, rtol=1e-6)


@pytest.mark.torch
@pytest.mark.parametrize("name, shapes", [("addmm", [(2, 2), (2, 3), (3, 2)]),
                                          ("baddbmm", [(1, 2, 2), (1, 2, 3), (1, 3, 2)]),
                                          ("addmv", [(2,), (2, 3), (3,)])])
def test_beta_scales_the_input_gradient_alone(torch, name, shapes):
    """Only the input needing grad: its rule still reads beta (the node kept the empty
    slots of the saved operands before it; beta was read from a shape before)."""
    def fn(lib):
        x = lib.ones(shapes[0], requires_grad=True)
        a, b = (lib.arange(1.0, 1 + numpy.prod(s)).reshape(s) for s in shapes[1:])
        getattr(lib, name)(x, a, b, beta=0.5).sum().backward()
        return x.grad.numpy()
    numpy.testing.assert_array_equal(fn(retrograd), fn(torch))


@pytest.mark.torch
@pytest.mark.parametrize("make, v1, v2", [
    (lambda lib: lib.ones(2, 3), lambda lib: lib.tensor([1.0, -2.0]),
     lambda lib: lib.tensor([0.5, 1.0, 2.0])),
    (lambda lib: lib.ones(2, 3), lambda lib: lib.ones(2, 1), lambda lib: lib.ones(3)),
    (lambda lib: lib.ones(2, 3), lambda lib: lib.ones(2), lambda lib: lib.ones(3, 1)),
    (lambda lib: lib.ones(2, 3), lambda lib: lib.ones(3), lambda lib: lib.ones(3)),
    (lambda lib: lib.ones(3), lambda lib: lib.ones(2), lambda lib: lib.ones(3)),
    (lambda lib: lib.ones(1, 3), lambda lib: lib.ones(2), lambda lib: lib.ones(3)),
    (lambda lib: lib.ones(4, 2, 3), lambda lib: lib.ones(2), lambda lib: lib.ones(3)),
    (lambda lib: lib.ones(2, 3, dtype=lib.float64), lambda lib: lib.tensor([1.0, -2.0]),
     lambda lib: lib.ones(3)),
    (lambda lib: lib.ones(2, 3), lambda lib: lib.tensor([1.0, -2.0], dtype=lib.float64),
     lambda lib: lib.ones(3)),
    (lambda lib: lib.ones(2, 3, dtype=lib.int64), lambda lib: lib.tensor([1, -2]),
     lambda lib: lib.tensor([1, 2, 3])),
    (lambda lib: lib.ones(2, 3, dtype=lib.bool), lambda lib: lib.tensor([True, False]),
     lambda lib: lib.tensor([True, False, True])),
])
@pytest.mark.parametrize("scales", [{}, {"beta": 0.5, "alpha": 2}, {"beta": 0},
                                    {"beta": 2, "alpha": 3}, {"alpha": 1.5}])
@pytest.mark.parametrize("inplace", [True, False])
def test_addr(torch, make, v1, v2, scales, inplace):
    """addr_ records AddrBackward0; the inputs promote together (an in-place result cast
    into self), bools take and/or, integral inputs refuse float factors."""
    def call(lib, y):
        f = y.addr_ if inplace else (lambda *a, **k: lib.addr(y, *a, **k))
        return f(v1(lib), v2(lib), **scales)
    _same(torch, make, call)


@pytest.mark.torch
def test_addr_gradients_and_tangent(torch):
    def fn(lib):
        v1 = lib.tensor([1.0, -2.0], requires_grad=True)
        v2 = lib.tensor([0.5, 1.0, 3.0], requires_grad=True)
        y = lib.ones(2, 3, requires_grad=True) * 2
        y.addr_(v1, v2, beta=3, alpha=-2).pow(2).sum().backward()
        fwa = lib.autograd.forward_ad
        with fwa.dual_level():
            d = fwa.make_dual(lib.tensor([1.0, 2.0]), lib.tensor([0.5, -1.0]))
            t = fwa.unpack_dual(lib.addr(lib.ones(2, 3), d, v2.detach(), alpha=2)).tangent
        return v1.grad.numpy(), v2.grad.numpy(), t.numpy()
    for g, w in zip(fn(retrograd), fn(torch), strict=True):
        numpy.testing.assert_allclose(g, w, rtol=1e-6)


@pytest.mark.torch
@pytest.mark.parametrize("make", [
    lambda lib: lib.tensor([1.0, -2.0]), lambda lib: lib.tensor([1, 2]),
    lambda lib: lib.tensor([True, False]), lambda lib: lib.tensor([1 + 2j, -1j]),
])
def test_conj_physical_(torch, make):
    """conj_physical_ writes even a real tensor (ConjPhysicalBackward1, version bumped);
    the function returns a real input itself."""
    _same(torch, make, lambda lib, y: y.conj_physical_())
    _same(torch, make, lambda lib, y: lib.conj_physical(y))
    for lib in (torch, retrograd):
        x = make(lib)
        assert (lib.conj_physical(x) is x) == (not x.is_complex())


@pytest.mark.torch
@pytest.mark.parametrize("make", [
    lambda lib: lib.tensor([2.5, 3.0, 0.4]), lambda lib: lib.tensor([2.5, 3.0, 7.0],
                                                                   dtype=lib.float64),
    lambda lib: lib.tensor([2, 3]), lambda lib: lib.tensor([2.0, float("nan")]),
])
@pytest.mark.parametrize("p", [1, 2, 3, 0])
@pytest.mark.parametrize("inplace", [True, False])
def test_mvlgamma(torch, make, p, inplace):
    """mvlgamma_ records MvlgammaBackward0 (the gradient: digammas summed), refuses an
    integral self and p below 1 in PyTorch's words."""
    def call(lib, y):
        return y.mvlgamma_(p) if inplace else lib.mvlgamma(y, p)
    _same(torch, make, call, rtol=2e-6)


@pytest.mark.torch
@pytest.mark.parametrize("name", ["igamma", "igammac"])
@pytest.mark.parametrize("make, other", [
    (lambda lib: lib.tensor([1.0, 2.0, 0.5]), lambda lib: lib.tensor([0.5, 3.0, 2.0])),
    (lambda lib: lib.tensor([1.0, 2.0, 0.5], dtype=lib.float64),
     lambda lib: lib.tensor([0.5, 3.0, 2.0])),
    (lambda lib: lib.tensor([1, 2, 3]), lambda lib: lib.tensor([0.5, 3.0, 2.0])),
    (lambda lib: lib.tensor([1, 2, 3]), lambda lib: lib.tensor([1, 2, 3])),
    (lambda lib: lib.tensor([1.0, 2.0]), lambda lib: 2.0),
])
@pytest.mark.parametrize("inplace", [True, False])
def test_igamma_values_and_checks(torch, name, make, other, inplace):
    def fn(lib):
        x = make(lib)
        return getattr(x, name + "_")(other(lib)) if inplace else getattr(lib, name)(
            x, other(lib))
    want, got = _outcome(torch, fn), _outcome(retrograd, fn)
    assert got[0] == want[0]
    if isinstance(want[1], str):
        assert got[1] == want[1]
    else:
        numpy.testing.assert_allclose(got[1], want[1], rtol=1e-6)


def _outcome(lib, fn):
    try:
        out = fn(lib)
    except (RuntimeError, NotImplementedError, TypeError) as e:
        return type(e).__name__, str(e)
    return str(out.dtype), out.numpy()


@pytest.mark.torch
@pytest.mark.parametrize("name", ["igamma", "igammac"])
def test_igamma_gradients(torch, name):
    """IgammaBackward0 / IgammacBackward0: the density's gradient to x, none to a."""
    def fn(lib):
        a = lib.tensor([1.0, 2.0, 0.5])
        x = lib.tensor([0.5, 3.0, 2.0], requires_grad=True)
        y = a * 1
        getattr(y, name + "_")(x)
        y.backward(lib.tensor([1.0, 2.0, 3.0]))
        a2 = lib.tensor([1.0, 2.0], requires_grad=True)
        try:
            getattr(lib, name)(a2, lib.tensor([1.0, 2.0])).sum().backward()
        except NotImplementedError as e:
            return type(y.grad_fn).__name__, x.grad.numpy(), str(e)
        return None
    want, got = fn(torch), fn(retrograd)
    assert got[0] == want[0] and got[2] == want[2]
    numpy.testing.assert_allclose(got[1], want[1], rtol=1e-5)


def _no_grad_write(lib, dtype, call):
    """``call`` on a float tensor under no_grad, as an optimizer's update: the value
    written, the version, and whether a backward that saved the tensor then refuses; or
    the exception the write raised."""
    leaf = lib.tensor([[0.5, -1.25, 3.0], [2.0, 0.75, -4.0]], dtype=getattr(lib, dtype),
                      requires_grad=True)
    y = leaf * 2
    z = y.sin()  # saves y
    try:
        with lib.no_grad():
            out = call(lib, y)
    except RuntimeError as e:
        return type(e).__name__, str(e)
    try:
        z.sum().backward()
        refused = None
    except RuntimeError as e:
        refused = str(e)
    return out is y, str(y.dtype), y._version, _numpy(y).tolist(), refused


@pytest.mark.torch
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("call", [
    lambda lib, y: y.mul_(0.9),
    lambda lib, y: y.add_(y * 3),
    lambda lib, y: y.add_(lib.ones(2, 3, dtype=y.dtype), alpha=-0.25),
    lambda lib, y: y.add_(lib.ones(3, dtype=y.dtype)),  # broadcast: the general path
    lambda lib, y: y.add_(lib.ones(2, 3, dtype=lib.float64), alpha=2),  # another dtype
    lambda lib, y: y.mul_(2).add_(3).sub_(y.detach() * 0.5).div_(4),
    lambda lib, y: y[:, :2].add_(y[:, 1:]),  # partial overlap: refused
    lambda lib, y: y.add_(True),
    lambda lib, y: y.expand(3, 2, 3).add_(1),  # one memory location, several elements
], ids=["mul_number", "add_tensor", "add_alpha", "broadcast", "float64_other", "chain",
        "overlap", "bool", "stride0"])
def test_writes_under_no_grad_match_pytorch(torch, dtype, call):
    """Updates under no_grad take a plain path (no promotion or broadcast checks) where
    every operand is a tensor of self's dtype and shape or a number: the same values,
    version, errors and saved-tensor checks as PyTorch's."""
    assert _no_grad_write(retrograd, dtype, call) == _no_grad_write(torch, dtype, call)
