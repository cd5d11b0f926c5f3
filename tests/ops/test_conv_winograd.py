"""3x3 convolutions at unit stride by Winograd's F(2x2, 3x3) (``ops/_conv_winograd.py``):
the forward, the input gradient (a convolution of the gradient) and the weight gradient
against the float64 im2col path, in one thread and two, in chunks of images; the
compiled transforms against their adjoints; the cases it leaves to im2col; and a value
that is not finite, which goes back to im2col's result."""

import numpy
import pytest

import retrograd
from retrograd.backend import cpu_kernels
from retrograd.ops import _conv_numpy, _conv_winograd

from _conv_paths import beside_pytorch, close, counting

pytestmark = pytest.mark.skipif(not cpu_kernels.ready(), reason="numba is not installed")

# (x shape, output channels, padding, bias)
CASES = [
    ((2, 16, 9, 7), 16, 1, True),  # odd sizes: a cropped last tile row and column
    ((3, 16, 8, 8), 24, 0, False),
    ((2, 17, 5, 6), 16, 2, True),
    ((2, 20, 6, 11), 18, (1, 0), True),
    ((5, 16, 10, 10), 16, 1, False),
]


@pytest.fixture
def small(monkeypatch):
    """This way on these tests' few channels and tiles too."""
    monkeypatch.setattr(_conv_winograd, "_MIN_WEIGHT_GRAD_CHANNELS", 16 * 16)
    monkeypatch.setattr(_conv_winograd, "_MIN_TILES", 1)
    monkeypatch.setattr(_conv_winograd, "_MIN_FORWARD_WORK", 0)


@pytest.fixture
def taken(monkeypatch, small):
    """How many times the Winograd forward and weight gradient ran, and returned a result."""
    return counting(monkeypatch, _conv_winograd, "conv", "conv_dw")


def _run(xs, k, padding, bias, dtype, seed=0):
    rng = numpy.random.default_rng(seed)
    x = retrograd.from_numpy(rng.standard_normal(xs).astype(dtype)).requires_grad_()
    w = retrograd.from_numpy(rng.standard_normal((k, xs[1], 3, 3)).astype(dtype) / 8)
    w.requires_grad_()
    b = retrograd.from_numpy(rng.standard_normal(k).astype(dtype)).requires_grad_() \
        if bias else None
    out = retrograd.nn.functional.conv2d(x, w, b, padding=padding)
    g = retrograd.from_numpy(rng.standard_normal(tuple(out.shape)).astype(dtype))
    out.backward(g)
    return [out.detach().numpy(), x.grad.numpy(), w.grad.numpy()]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_forward_and_gradients_match_float64(case, taken, monkeypatch):
    if case == len(CASES) - 1:  # chunks of two images, the last of one
        monkeypatch.setattr(_conv_winograd, "_CHUNK_BYTES", 16 * 32 * 25 * 4 * 2)
        assert len(_conv_winograd._chunks(5, 32, 25)) == 3
    got = _run(*CASES[case], numpy.float32)
    assert taken == {"conv": 2, "conv_dw": 1}  # the forward, the input gradient, the weights
    close(got, _run(*CASES[case], numpy.float64))


def test_the_same_bits_in_one_thread_and_two(monkeypatch, taken):
    names = [n for n in cpu_kernels._SPLIT_MIN if n.startswith("winograd_")]
    assert len(names) == 5
    for name in names:
        monkeypatch.setitem(cpu_kernels._SPLIT_MIN, name, 1 << 40)
    one = _run((4, 32, 12, 12), 32, 1, True, numpy.float32)
    for name in names:
        monkeypatch.setitem(cpu_kernels._SPLIT_MIN, name, 0)
    for a, b in zip(one, _run((4, 32, 12, 12), 32, 1, True, numpy.float32), strict=True):
        numpy.testing.assert_array_equal(a, b)
    assert taken == {"conv": 4, "conv_dw": 2}


def test_the_transforms_are_adjoint():
    """<untile(m), g> = <m, grad_tiles(g)> and <weights(w), du> = <w, weights_grad(du)>:
    the gradients are the forward's transposes."""
    rng = numpy.random.default_rng(3)
    m = rng.standard_normal((16, 5, 2 * 4 * 3)).astype(numpy.float32)
    g = rng.standard_normal((2, 5, 7, 5)).astype(numpy.float32)
    out = numpy.empty_like(g)
    assert cpu_kernels.winograd_untile(m, numpy.zeros(5, numpy.float32), out)
    lhs = numpy.dot(out.ravel().astype(float), g.ravel())
    rhs = numpy.dot(m.ravel().astype(float), cpu_kernels.winograd_grad_tiles(g).ravel())
    assert lhs == pytest.approx(rhs, rel=1e-5)
    w = rng.standard_normal((6, 4, 3, 3)).astype(numpy.float32)
    du = rng.standard_normal((16, 6, 4)).astype(numpy.float32)
    lhs = numpy.dot(cpu_kernels.winograd_weights(w).ravel().astype(float), du.ravel())
    rhs = numpy.dot(w.ravel().astype(float), cpu_kernels.winograd_weights_grad(du).ravel())
    assert lhs == pytest.approx(rhs, rel=1e-5)


def test_the_flipped_transform_reads_the_kernels_as_they_are(monkeypatch):
    """The input gradient's kernels, flipped with their channel axes swapped, transformed
    from the weight itself: the same bits as from a copy of that view, in parts too."""
    w = numpy.random.default_rng(5).standard_normal((24, 40, 3, 3)).astype(numpy.float32)
    view = numpy.ascontiguousarray(_conv_numpy._flipped(w, 1))
    for parts in (1 << 40, 0):
        monkeypatch.setitem(cpu_kernels._SPLIT_MIN, "winograd_weights", parts)
        numpy.testing.assert_array_equal(cpu_kernels.winograd_weights(w, flipped=True),
                                         cpu_kernels.winograd_weights(view))


def test_the_tiles_are_the_transformed_windows():
    rng = numpy.random.default_rng(4)
    x = rng.standard_normal((2, 3, 7, 9)).astype(numpy.float32)
    th, tw = 4, 6  # a padding of (1, 2): 7 x 11 outputs
    v = cpu_kernels.winograd_tiles(x, th, tw, (1, 2))
    padded = numpy.zeros((2, 3, 2 * th + 2, 2 * tw + 2))
    padded[:, :, 1:8, 2:11] = x
    bt = numpy.array([[1, 0, -1, 0], [0, 1, 1, 0], [0, -1, 1, 0], [0, 1, 0, -1]])
    for n, c, a, b in ((0, 0, 0, 0), (1, 2, 3, 5), (1, 1, 1, 2), (0, 2, 3, 0)):
        d = padded[n, c, 2 * a:2 * a + 4, 2 * b:2 * b + 4]
        numpy.testing.assert_allclose(v[:, c, (n * th + a) * tw + b], (bt @ d @ bt.T).ravel(),
                                      rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("x_shape, w_shape, stride, padding, dilation, groups, dtype, forward, "
                         "weight_grad", [
                             ((8, 64, 56, 56), (64, 64, 3, 3), 1, 1, 1, 1, "f", True, True),
                             ((8, 64, 56, 56), (64, 64, 3, 3), 2, 1, 1, 1, "f", False, False),
                             ((8, 64, 56, 56), (64, 64, 3, 3), 1, 2, 2, 1, "f", False, False),
                             ((8, 64, 56, 56), (64, 32, 3, 3), 1, 1, 1, 2, "f", False, False),
                             ((8, 64, 56, 56), (64, 64, 5, 5), 1, 2, 1, 1, "f", False, False),
                             ((8, 64, 56, 56), (64, 64, 3, 3), 1, 1, 1, 1, "d", False, False),
                             ((8, 8, 56, 56), (64, 8, 3, 3), 1, 1, 1, 1, "f", False, False),
                             # w3's second layer: too few channels for the weight gradient
                             ((64, 32, 16, 16), (64, 32, 3, 3), 1, 1, 1, 1, "f", True, False),
                             ((8, 64, 2, 2), (64, 64, 3, 3), 1, 1, 1, 1, "f", False, False),
                             ((0, 64, 56, 56), (64, 64, 3, 3), 1, 1, 1, 1, "f", False, False),
                             # ResNet's last layer: 128 tiles at batch 8, 64 at 4
                             ((8, 512, 7, 7), (512, 512, 3, 3), 1, 1, 1, 1, "f", True, True),
                             ((4, 512, 7, 7), (512, 512, 3, 3), 1, 1, 1, 1, "f", False, False),
                             # one 28x28 image: GEMMs too small for the forward
                             ((1, 128, 28, 28), (128, 128, 3, 3), 1, 1, 1, 1, "f", False, True),
                             # 1024 channels each way: transforms of 64 MB
                             ((8, 1024, 14, 14), (1024, 1024, 3, 3), 1, 1, 1, 1, "f", False,
                              False),
                         ])
def test_where_it_applies(x_shape, w_shape, stride, padding, dilation, groups, dtype, forward,
                          weight_grad):
    arrays = (numpy.zeros(1, dtype),)
    geometry = ((stride,) * 2, (padding,) * 2, (dilation,) * 2, groups, arrays)
    assert _conv_winograd.applies(x_shape, w_shape, *geometry) is forward
    assert _conv_winograd.applies(x_shape, w_shape, *geometry, weight_grad=True) is weight_grad


def test_an_output_cut_short_takes_im2col():
    """A transposed convolution's input gradient may ask for fewer rows than the
    convolution makes (its output_padding): im2col's path cuts them."""
    args = ((8, 64, 56, 56), (64, 64, 3, 3), (1, 1), (1, 1), (1, 1), 1, ())
    assert _conv_winograd.applies(*args, ohw=(56, 56))
    assert not _conv_winograd.applies(*args, ohw=(55, 56))


@pytest.mark.parametrize("where, value", [("x", numpy.inf), ("x", numpy.nan), ("w", -numpy.inf),
                                          ("x", 3e38)])
def test_values_that_are_not_finite_take_im2col(where, value, monkeypatch, small):
    """An infinity makes NaN in the transforms where the direct sums keep it (and 3e38 -
    -3e38 overflows there): such results are computed again by im2col, as before."""
    def run():
        rng = numpy.random.default_rng(5)
        x = rng.standard_normal((2, 16, 6, 6)).astype(numpy.float32)
        w = rng.standard_normal((16, 16, 3, 3)).astype(numpy.float32)
        (x if where == "x" else w)[1, 3, 2, 2] = value
        if value == 3e38:
            x[1, 3, 4, 2] = -value
        xt, wt = retrograd.from_numpy(x).requires_grad_(), retrograd.from_numpy(w)
        out = retrograd.nn.functional.conv2d(xt, wt.requires_grad_(), None, padding=1)
        out.backward(retrograd.ones_like(out))
        return [out.detach().numpy(), xt.grad.numpy(), wt.grad.numpy()]
    got = run()
    monkeypatch.setattr(_conv_winograd, "applies", lambda *a, **k: False)
    want = run()
    # what was computed from the value (the output, and the gradient of the other operand)
    # is im2col's bit for bit; the operand's own gradient does not read it
    same, other = ((0, 2), 1) if where == "x" else ((0, 1), 2)
    for i in same:
        numpy.testing.assert_array_equal(got[i], want[i])
    close([got[other]], [want[other]])


def test_beside_pytorch(taken):
    rng = numpy.random.default_rng(6)
    x = rng.standard_normal((4, 32, 13, 14)).astype(numpy.float32)
    w = (rng.standard_normal((48, 32, 3, 3)) / 16).astype(numpy.float32)
    res = beside_pytorch(x, w, rng.standard_normal(48).astype(numpy.float32), 1)
    assert taken == {"conv": 2, "conv_dw": 1}
    close(*res)


def test_a_transposed_convolution(taken):
    """At unit stride it is the convolution of its input with the flipped kernel, and its
    input gradient a convolution: both go this way."""
    def run(dtype):
        rng = numpy.random.default_rng(7)
        x = retrograd.from_numpy(rng.standard_normal((2, 16, 7, 8)).astype(dtype))
        w = retrograd.from_numpy((rng.standard_normal((16, 24, 3, 3)) / 8).astype(dtype))
        x.requires_grad_(), w.requires_grad_()
        out = retrograd.nn.functional.conv_transpose2d(x, w, padding=1)
        out.backward(retrograd.from_numpy(rng.standard_normal(tuple(out.shape)).astype(dtype)))
        return [out.detach().numpy(), x.grad.numpy(), w.grad.numpy()]
    got = run(numpy.float32)
    assert taken["conv"] == 2
    close(got, run(numpy.float64))
