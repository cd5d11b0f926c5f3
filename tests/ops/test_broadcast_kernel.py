"""The compiled broadcast pass (``cpu_kernels.broadcast``): add, sub, mul and div of an
array and a row (its trailing dims) or a column (one value per index of its leading dims)
of it, either way round, or of two arrays of one shape or of an array and a number where
the pass splits on OpenBLAS's threads, give NumPy's result bit for bit, in one part or in
parts, and the ops take it forward and for mul's and div's input gradients, the engine to
sum two gradients of one input. What it does not take stays NumPy's."""

import numpy
import pytest

import retrograd
from retrograd.backend import cpu_kernels

pytestmark = pytest.mark.skipif(not cpu_kernels.ready(), reason="numba is not installed")

_NUMPY = {"add": numpy.add, "sub": numpy.subtract, "mul": numpy.multiply, "div": numpy.divide}
_ROWS_AND_COLUMNS = [((64, 33), (33,)), ((64, 33), (1, 33)), ((4, 5, 8, 8), (8, 8)),
                     ((4, 5, 8, 8), (1, 1, 8, 8)), ((64, 33), (64, 1)),
                     ((4, 5, 8, 8), (4, 5, 1, 1)), ((4, 5, 8, 8), (4, 5, 8, 1)),
                     ((1, 1), (1,)), ((5, 1), (1,)), ((1, 7), (7,)), ((4, 1, 7), (1, 7))]


@pytest.fixture
def passes(monkeypatch):
    """The ops ``cpu_kernels.broadcast`` runs, in order."""
    calls = []
    run = cpu_kernels.broadcast
    monkeypatch.setattr(cpu_kernels, "broadcast", lambda *a, **k: calls.append(a[0]) or
                        run(*a, **k))
    return calls


@pytest.fixture
def split_passes(passes, monkeypatch):
    """:func:`passes`, every pass split as where OpenBLAS has threads."""
    monkeypatch.setattr(cpu_kernels, "splits", lambda name, first: True)
    return passes


def _values(shape, seed):
    """Normal values with NaN, infinities, zeros and negative zeros among them."""
    x = numpy.random.default_rng(seed).standard_normal(shape).astype(numpy.float32)
    flat = x.reshape(-1)
    flat[::7], flat[1::11], flat[2::13], flat[3::5] = numpy.nan, numpy.inf, 0.0, -0.0
    flat[4::17] = -numpy.inf
    return x


def _same(got, want):
    """Equal bits, NaN where NumPy's is NaN (whatever its payload)."""
    nan = numpy.isnan(want)
    assert (numpy.isnan(got) == nan).all()
    assert numpy.array_equal(got[~nan].view(numpy.int32), want[~nan].view(numpy.int32))


@pytest.mark.parametrize("parts", [False, True], ids=["one", "parts"])
@pytest.mark.parametrize("swapped", [False, True], ids=["x_v", "v_x"])
@pytest.mark.parametrize("shapes", _ROWS_AND_COLUMNS, ids=str)
@pytest.mark.parametrize("op", list(_NUMPY))
def test_broadcast_is_numpys_bit_for_bit(op, shapes, swapped, parts, monkeypatch):
    monkeypatch.setattr(cpu_kernels, "pays", lambda first: True)
    monkeypatch.setattr(cpu_kernels, "_SPLIT_MIN", {
        **cpu_kernels._SPLIT_MIN, "by_row": 0 if parts else 1 << 62,
        "by_column": 0 if parts else 1 << 62})
    x, v = _values(shapes[0], 0), _values(shapes[1], 1)
    a, b = (v, x) if swapped else (x, v)
    assert cpu_kernels.broadcasts(a, b)
    with numpy.errstate(all="ignore"):
        _same(cpu_kernels.broadcast(op, a, b), _NUMPY[op](a, b))


@pytest.mark.parametrize("parts", [False, True], ids=["one", "parts"])
@pytest.mark.parametrize("shape", [(5,), (3, 1001), (2, 64, 193)], ids=str)
@pytest.mark.parametrize("op", list(_NUMPY))
def test_arrays_of_one_shape_are_numpys_bit_for_bit(op, shape, parts, monkeypatch):
    """Odd lengths (a part starts on an aligned element), NaN, infinities, signed zeros."""
    monkeypatch.setattr(cpu_kernels, "_SPLIT_MIN", {
        **cpu_kernels._SPLIT_MIN, "elementwise": 0 if parts else 1 << 62})
    a, b = _values(shape, 5), _values(shape, 6)
    assert cpu_kernels.broadcasts(a, b) == parts
    with numpy.errstate(all="ignore"):
        _same(cpu_kernels.broadcast(op, a, b), _NUMPY[op](a, b))
        _same(cpu_kernels.broadcast(op, b, a), _NUMPY[op](b, a))


_NUMBERS = [0.1, 3, -0.0, 0.0, numpy.inf, -numpy.inf, numpy.nan, 1e-45, 2**70, -3.4e38]


@pytest.mark.parametrize("parts", [False, True], ids=["one", "parts"])
@pytest.mark.parametrize("swapped", [False, True], ids=["x_n", "n_x"])
@pytest.mark.parametrize("number", _NUMBERS, ids=str)
@pytest.mark.parametrize("op", list(_NUMPY))
def test_an_array_and_a_number_are_numpys_bit_for_bit(op, number, swapped, parts,
                                                      monkeypatch):
    """The number as NumPy takes it (its float32), either side; odd lengths."""
    monkeypatch.setattr(cpu_kernels, "_SPLIT_MIN", {
        **cpu_kernels._SPLIT_MIN, "by_number": 0 if parts else 1 << 62})
    for shape in [(5,), (3, 1001), (2, 64, 193)]:
        x = _values(shape, 7)
        a, b = (number, x) if swapped else (x, number)
        assert cpu_kernels.broadcasts(a, b) == parts
        with numpy.errstate(all="ignore"):
            _same(cpu_kernels.broadcast(op, a, b), _NUMPY[op](a, b))


def test_what_a_number_does_not_take(monkeypatch):
    """Beyond float32's range (NumPy's cast overflows, with its warning), a bool, a float64
    or strided array: NumPy's."""
    monkeypatch.setattr(cpu_kernels, "_SPLIT_MIN", {**cpu_kernels._SPLIT_MIN, "by_number": 0})
    x = numpy.ones((8, 6), "f")
    assert cpu_kernels.broadcasts(x, 2.0) and cpu_kernels.broadcasts(-5, x)
    for a, b in [(x, 1e40), (-1e39, x), (x, 2**200), (x, True), (x.astype("d"), 2.0),
                 (x[:, ::2], 2.0), (x, numpy.float32(2.0))]:
        assert not cpu_kernels.broadcasts(a, b)


def test_a_tensor_and_a_number_take_the_pass_forward_and_for_the_gradient(split_passes):
    """sdpa's ``q * scale`` and Adam's ``v / (1 - beta2 ** t)`` of a large float32 tensor,
    and ``x * s``'s input gradient (``grad * s``), split on OpenBLAS's threads (where there
    is one) as NumPy's values."""
    rng = numpy.random.default_rng(9)
    xs, g = (rng.standard_normal((32, 3, 64, 64)).astype(numpy.float32) for _ in range(2))
    x = retrograd.from_numpy(xs).requires_grad_()
    out = x * 0.125
    out.backward(retrograd.from_numpy(g))
    _same(out.detach().numpy(), xs * 0.125)
    _same(x.grad.numpy(), g * 0.125)
    _same((x.detach() / (1 - 0.999 ** 3)).numpy(), xs / (1 - 0.999 ** 3))
    assert split_passes == ["mul", "mul", "div"]


@pytest.mark.parametrize("op", ["add", "sub", "div"])
def test_an_update_in_place_by_a_number_takes_the_pass(op, split_passes):
    """Adam's ``denom.add_(eps)``, a ``div_`` by a count, of a large float32 tensor: in
    place by the pass (its loops on the one array), NumPy's bits."""
    x = _values((300, 1001), 11)
    with numpy.errstate(all="ignore"):
        want = _NUMPY[op](x, 0.3)
    t = retrograd.from_numpy(x)
    with retrograd.no_grad():
        getattr(t, op + "_")(0.3)
    _same(t.numpy(), want)
    assert split_passes == [op]


def test_a_residual_add_and_its_gradients_sum_take_the_pass_on_threads(split_passes):
    """``x + f(x)`` of w4's (32, 64, 192) activations forward, and the engine's sum of x's
    two gradients, split on OpenBLAS's threads (where there is one) as NumPy's values."""
    rng = numpy.random.default_rng(8)
    xs, g = (rng.standard_normal((32, 64, 192)).astype(numpy.float32) for _ in range(2))
    x = retrograd.from_numpy(xs).requires_grad_()
    out = x + x.tanh()
    out.backward(retrograd.from_numpy(g))
    _same(out.detach().numpy(), xs + numpy.tanh(xs))
    want = g + g * (1 - numpy.tanh(xs) ** 2)
    numpy.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-6, atol=1e-6)
    assert split_passes == ["add", "add"]  # (the forward, the two gradients' sum)


@pytest.mark.parametrize("shapes", [((300, 70), (70,)), ((1, 1), (1,)), ((6, 1), (1,))],
                         ids=str)
def test_broadcast_into_the_larger_operand(shapes):
    """The linear layer's bias, added in place to its product (one output feature too)."""
    x, b = _values(shapes[0], 2), _values(shapes[1], 3)
    want = x + b
    assert cpu_kernels.broadcast("add", x, b, x) is x
    _same(x, want)


def test_a_linear_layer_of_one_output_takes_its_bias():
    layer = retrograd.nn.Linear(3, 1)
    x = retrograd.randn(1, 3)
    want = x.numpy() @ layer.weight.detach().numpy().T + layer.bias.detach().numpy()
    numpy.testing.assert_allclose(layer(x).detach().numpy(), want, rtol=1e-6)


@pytest.mark.parametrize("shapes,dtypes", [
    (((8, 3), (8, 3)), "ff"),  # the same shape, small: NumPy's one pass
    (((8, 3), (1, 1)), "ff"),  # a single value
    (((8, 3, 4), (1, 3, 1)), "ff"),  # neither a row nor a column
    (((8, 3, 4), (3, 1)), "ff"),  # a column of the last two dims only
    (((8, 3), (3,)), "fd"),  # float64
    (((0, 3), (3,)), "ff"),  # empty
])
def test_what_the_broadcast_does_not_take(shapes, dtypes, monkeypatch):
    monkeypatch.setattr(cpu_kernels, "pays", lambda first: True)
    a, b = (numpy.ones(s, d) for s, d in zip(shapes, dtypes, strict=True))
    assert not cpu_kernels.broadcasts(a, b)
    assert not cpu_kernels.broadcasts(numpy.ones((8, 6), "f")[:, ::2], numpy.ones(3, "f"))
    assert not cpu_kernels.broadcasts(numpy.ones((8, 3), "f"), 2.0)


def test_small_arrays_stay_numpys():
    assert cpu_kernels.broadcasts(numpy.ones((128, 128), "f"), numpy.ones(128, "f"))
    assert not cpu_kernels.broadcasts(numpy.ones((4, 3), "f"), numpy.ones(3, "f"))


@pytest.mark.parametrize("op", ["mul", "div"])
def test_mul_and_div_by_a_column_take_it_forward_and_for_the_gradient(op, passes):
    """``x * col`` and ``x / col`` (a row's statistic), each way, and their gradients."""
    rng = numpy.random.default_rng(4)
    xs, cs = rng.standard_normal((256, 96)), rng.uniform(0.5, 2, (256, 1))
    g = rng.standard_normal((256, 96)).astype(numpy.float32)
    x = retrograd.tensor(xs, dtype=retrograd.float32, requires_grad=True)
    c = retrograd.tensor(cs, dtype=retrograd.float32, requires_grad=True)
    out = getattr(retrograd, op)(x, c)
    out.backward(retrograd.from_numpy(g))
    x32, c32 = xs.astype(numpy.float32), cs.astype(numpy.float32)
    _same(out.detach().numpy(), _NUMPY[op](x32, c32))
    _same(x.grad.numpy(), _NUMPY[op](g, c32))
    assert passes == [op, op]  # (the forward, the input's gradient)
    want_c = (g * x32).sum(1, keepdims=True) if op == "mul" else \
        (-g * (x32 / c32 / c32)).sum(1, keepdims=True)
    numpy.testing.assert_allclose(c.grad.numpy(), want_c, rtol=1e-5, atol=1e-5)
