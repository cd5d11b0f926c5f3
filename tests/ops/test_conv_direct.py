"""Convolutions of few taps by direct sums (``ops/_conv_direct.py``): the forward and the
weight gradient against the float64 path, in one thread and two, at strides and
dilations; the tiles at the edges (a last tile of columns or of channels moved back over
the one before); where it applies; values that are not finite; beside PyTorch."""

import numpy
import pytest

import retrograd
from retrograd.backend import blas_threads, cpu_kernels, mkl_gemm
from retrograd.ops import _conv_direct

from _conv_paths import beside_pytorch, close, counting

pytestmark = pytest.mark.skipif(not cpu_kernels.ready(), reason="numba is not installed")

# (x shape, output channels, kernel, padding, bias), and how many convolutions (the
# forward, and the input gradient's, a convolution of the gradient) and weight gradients
# go this way
CASES = [
    # w3's first layer, on fewer images; its input gradient makes 3 channels, computed as 4
    (((3, 3, 32, 32), 32, (3, 3), 1, True), 2, 1),
    # 17 columns: a second tile over 15 of the first; the weights' a vector and a column
    (((2, 3, 9, 17), 5, (3, 3), 1, True), 2, 1),
    (((2, 2, 5, 21), 7, (2, 4), (0, 2), False), 2, 1),  # even kernel, padding on columns
    (((1, 5, 6, 24), 9, (3, 3), 1, False), 2, 1),  # 9 channels: a last tile over 3
    (((2, 4, 8, 18), 4, (1, 3), 0, True), 2, 1),
    (((2, 16, 32, 32), 8, (3, 3), (2, 1), True), 2, 1),  # 144 taps, a taller output
]


@pytest.fixture(autouse=True)
def no_mkl(monkeypatch):
    """Batches of products by the tiles or NumPy: MKL (the mkl extra) would take them."""
    monkeypatch.setattr(mkl_gemm, "_gemms", lambda: None)


@pytest.fixture
def taken(monkeypatch):
    """How many times the direct forward and weight gradient ran."""
    return counting(monkeypatch, _conv_direct, "conv", "conv_dw")


def _run(xs, k, kernel, padding, bias, dtype, seed=0, x_grad=False, stride=1, dilation=1):
    """The output, the weights' gradient (and the bias's), and the input's if asked."""
    rng = numpy.random.default_rng(seed)
    x = retrograd.from_numpy(rng.standard_normal(xs).astype(dtype)).requires_grad_(x_grad)
    w = retrograd.from_numpy(rng.standard_normal((k, xs[1], *kernel)).astype(dtype) / 4)
    w.requires_grad_()
    b = retrograd.from_numpy(rng.standard_normal(k).astype(dtype)).requires_grad_() \
        if bias else None
    out = retrograd.nn.functional.conv2d(x, w, b, stride=stride, padding=padding,
                                         dilation=dilation)
    g = retrograd.from_numpy(rng.standard_normal(tuple(out.shape)).astype(dtype))
    out.backward(g)
    got = [out.detach().numpy(), w.grad.numpy()]
    return got + [t.grad.numpy() for t in (b, x) if t is not None and t.requires_grad]


@pytest.mark.parametrize("case, convs, weight_grads", CASES)
def test_forward_and_gradients_match_float64(case, convs, weight_grads, taken):
    got = _run(*case, numpy.float32, x_grad=True)
    assert taken == {"conv": convs, "conv_dw": weight_grads}
    close(got, _run(*case, numpy.float64, x_grad=True))


@pytest.mark.parametrize("xs, k, kernel, stride, padding, dilation, weight_grads", [
    ((2, 3, 40, 45), 8, (7, 7), 2, 3, 1, 0),  # a stem: 20x20 at stride 2, four phases
    ((2, 3, 35, 64), 8, (3, 3), (3, 2), 1, 1, 1),  # six phases, 12x32
    ((2, 2, 20, 40), 5, (3, 3), 1, 2, 2, 1),  # dilated
    ((2, 3, 30, 70), 4, (3, 5), 2, (1, 2), (2, 3), 1),  # both: phases (0, 0), (0, 1)
    ((2, 5, 17, 36), 6, (1, 1), 2, 0, 1, 1),  # one phase of four
    ((2, 3, 30, 40), 8, (3, 3), (2, 1), 1, 1, 1),  # rows at a stride: the padded planes
])
def test_strides_and_dilations_match_float64(xs, k, kernel, stride, padding, dilation,
                                             weight_grads, taken):
    args = (xs, k, kernel, padding, True)
    kw = {"stride": stride, "dilation": dilation}
    got = _run(*args, numpy.float32, **kw)
    assert taken == {"conv": 1, "conv_dw": weight_grads}
    close(got, _run(*args, numpy.float64, **kw))


@pytest.mark.skipif(blas_threads.threads() < 2, reason="OpenBLAS runs one thread here")
def test_the_same_bits_in_one_thread_and_two(monkeypatch, taken):
    names = ("direct_conv", "direct_conv_dw")
    for name in names:
        monkeypatch.setitem(cpu_kernels._SPLIT_MIN, name, 1 << 40)
    # 8x32 maps: the weight gradient's tiles sum over 4 images, then the last 2
    one = _run((6, 3, 8, 32), 12, (3, 3), 1, True, numpy.float32)
    for name in names:
        monkeypatch.setitem(cpu_kernels._SPLIT_MIN, name, 0)
    jobs = []
    real = blas_threads.run_jobs
    monkeypatch.setattr(blas_threads, "run_jobs", lambda f, rows: jobs.append(len(rows)) or
                        real(f, rows))
    for a, b in zip(one, _run((6, 3, 8, 32), 12, (3, 3), 1, True, numpy.float32), strict=True):
        numpy.testing.assert_array_equal(a, b)
    assert jobs.count(2) >= 2  # the forward and the weight gradient each in two parts
    assert taken == {"conv": 2, "conv_dw": 2}


def test_the_kernels_sum_each_tap_once():
    """Integers small enough to sum exactly: the kernels' results are the exact sums,
    whatever the order, each tile's overlap with the one before included."""
    rng = numpy.random.default_rng(1)
    x = rng.integers(-3, 4, (2, 3, 7, 19)).astype(numpy.float32)
    w = rng.integers(-3, 4, (6, 3, 3, 3)).astype(numpy.float32)
    b = rng.integers(-3, 4, 6).astype(numpy.float32)
    out = _conv_direct.conv(x, w, b, (1, 1), (1, 1), (1, 1))
    padded = numpy.pad(x.astype(numpy.int64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    want = numpy.zeros(out.shape, numpy.int64) + b.astype(numpy.int64)[:, None, None]
    for i in range(3):
        for j in range(3):
            want += numpy.einsum("nchw,kc->nkhw", padded[:, :, i:i + 7, j:j + 19],
                                 w[:, :, i, j].astype(numpy.int64))
    numpy.testing.assert_array_equal(out, want)
    g = rng.integers(-3, 4, (2, 6, 7, 16)).astype(numpy.float32)
    dw = _conv_direct.conv_dw(g, x[..., :16], w.shape, (1, 1), (1, 1), (1, 1))
    p = numpy.pad(x[..., :16].astype(numpy.int64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    want = numpy.stack([numpy.einsum("nkhw,nchw->kc", g.astype(numpy.int64),
                                     p[:, :, i:i + 7, j:j + 16])
                        for i in range(3) for j in range(3)], -1).reshape(w.shape)
    numpy.testing.assert_array_equal(dw, want)
    # rows of 19: two vectors and a masked tail of 3
    g = rng.integers(-3, 4, (2, 6, 7, 19)).astype(numpy.float32)
    dw = _conv_direct.conv_dw(g, x, w.shape, (1, 1), (1, 1), (1, 1))
    want = numpy.stack([numpy.einsum("nkhw,nchw->kc", g.astype(numpy.int64),
                                     padded[:, :, i:i + 7, j:j + 19])
                        for i in range(3) for j in range(3)], -1).reshape(w.shape)
    numpy.testing.assert_array_equal(dw, want)


@pytest.mark.parametrize("x_shape, w_shape, stride, padding, dilation, groups, dtype, forward, "
                         "weight_grad", [
                             ((64, 3, 32, 32), (32, 3, 3, 3), 1, 1, 1, 1, "f", True, True),
                             ((8, 3, 224, 224), (64, 3, 3, 3), 1, 1, 1, 1, "f", True, True),
                             # w3's second layer: too small a map for 288 taps' weight gradient
                             ((64, 32, 16, 16), (64, 32, 3, 3), 1, 1, 1, 1, "f", True, False),
                             ((64, 16, 16, 16), (32, 16, 3, 3), 1, 1, 1, 1, "f", True, True),
                             ((16, 32, 32, 32), (32, 32, 3, 3), 1, 1, 1, 1, "f", True, True),
                             # ResNet's first stage: Winograd's (576 taps)
                             ((8, 64, 56, 56), (64, 64, 3, 3), 1, 1, 1, 1, "f", False, False),
                             # ... but this way on 16x16 maps (w3's second input gradient)
                             ((64, 64, 16, 16), (32, 64, 3, 3), 1, 1, 1, 1, "f", True, False),
                             ((64, 128, 16, 16), (32, 128, 3, 3), 1, 1, 1, 1, "f", False,
                              False),
                             # a first layer at a stride (16x16 maps) or dilated
                             ((64, 3, 32, 32), (32, 3, 3, 3), 2, 1, 1, 1, "f", True, True),
                             ((64, 3, 32, 32), (32, 3, 3, 3), 1, 2, 2, 1, "f", True, True),
                             # ResNet's stem
                             ((8, 3, 224, 224), (64, 3, 7, 7), 2, 3, 1, 1, "f", True, True),
                             # 16 channels at a stride: im2col's
                             ((64, 16, 32, 32), (32, 16, 3, 3), 2, 1, 1, 1, "f", False,
                              False),
                             ((64, 4, 32, 32), (32, 2, 3, 3), 1, 1, 1, 2, "f", False, False),
                             ((64, 3, 32, 32), (32, 3, 3, 3), 1, 1, 1, 1, "d", False, False),
                             # 3 output channels: computed as 4 (not their weights' gradient)
                             ((64, 3, 32, 32), (3, 3, 3, 3), 1, 1, 1, 1, "f", True, False),
                             ((64, 3, 32, 12), (32, 3, 3, 3), 1, 1, 1, 1, "f", False, False),
                             ((0, 3, 32, 32), (32, 3, 3, 3), 1, 1, 1, 1, "f", False, False),
                             # 20 columns: the weight gradient's rows end in 4 more
                             ((64, 3, 32, 20), (32, 3, 3, 3), 1, 1, 1, 1, "f", True, True),
                             ((64, 1, 32, 32), (32, 1, 1, 1), 1, 0, 1, 1, "f", True, False),
                         ])
def test_where_it_applies(x_shape, w_shape, stride, padding, dilation, groups, dtype, forward,
                          weight_grad):
    arrays = (numpy.zeros(1, dtype),)
    geometry = ((stride,) * 2, (padding,) * 2, (dilation,) * 2, groups, arrays)
    assert _conv_direct.applies(x_shape, w_shape, *geometry) is forward
    assert _conv_direct.applies(x_shape, w_shape, *geometry, weight_grad=True) is weight_grad


def test_an_output_cut_short_takes_another_path():
    args = ((8, 3, 32, 32), (16, 3, 3, 3), (1, 1), (1, 1), (1, 1), 1, ())
    assert _conv_direct.applies(*args, ohw=(32, 32))
    assert not _conv_direct.applies(*args, ohw=(31, 32))


@pytest.mark.parametrize("where, value", [("x", numpy.inf), ("x", numpy.nan), ("w", -numpy.inf)])
def test_values_that_are_not_finite_propagate_as_in_a_direct_sum(where, value, taken):
    rng = numpy.random.default_rng(5)
    x = rng.standard_normal((2, 3, 6, 16)).astype(numpy.float32)
    w = rng.standard_normal((8, 3, 3, 3)).astype(numpy.float32)
    (x if where == "x" else w)[1, 2, 2, 2] = value
    out = _conv_direct.conv(x, w, None, (1, 1), (1, 1), (1, 1))
    want = _conv_direct_reference(x.astype(numpy.float64), w.astype(numpy.float64))
    numpy.testing.assert_array_equal(numpy.isnan(out), numpy.isnan(want))
    numpy.testing.assert_array_equal(numpy.isinf(out), numpy.isinf(want))
    finite = numpy.isfinite(want)
    numpy.testing.assert_allclose(out[finite], want[finite], rtol=1e-5, atol=1e-5)


def _conv_direct_reference(x, w):
    """The padded 3x3 convolution as a sum of nine products, in float64."""
    padded = numpy.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    h, wd = x.shape[2:]
    with numpy.errstate(invalid="ignore"):
        return sum(numpy.einsum("nchw,kc->nkhw", padded[:, :, i:i + h, j:j + wd], w[:, :, i, j])
                   for i in range(3) for j in range(3))


def test_beside_pytorch(taken):
    rng = numpy.random.default_rng(6)
    x = rng.standard_normal((4, 3, 32, 32)).astype(numpy.float32)
    w = (rng.standard_normal((32, 3, 3, 3)) / 4).astype(numpy.float32)
    res = beside_pytorch(x, w, rng.standard_normal(32).astype(numpy.float32), 1)
    assert taken == {"conv": 2, "conv_dw": 1}  # (the input gradient: 32 channels into 3)
    close(*res)


def test_conv1d_goes_this_way(taken):
    """A 1-D convolution is a 2-D one of one row: a sequence model's taps."""
    def run(dtype):
        rng = numpy.random.default_rng(7)
        x = retrograd.from_numpy(rng.standard_normal((2, 4, 100)).astype(dtype))
        w = retrograd.from_numpy(rng.standard_normal((8, 4, 9)).astype(dtype)).requires_grad_()
        out = retrograd.nn.functional.conv1d(x, w, padding=2)
        out.backward(retrograd.from_numpy(rng.standard_normal(tuple(out.shape)).astype(dtype)))
        return [out.detach().numpy(), w.grad.numpy()]
    got = run(numpy.float32)
    assert taken == {"conv": 1, "conv_dw": 1}  # (96 columns: whole vectors)
    close(got, run(numpy.float64))


@pytest.mark.parametrize("change", ["offsets past the planes", "a negative offset", "weights",
                                    "narrow output", "float64 input", "int32 offsets"])
def test_the_kernels_refuse_arrays_that_do_not_fit(change):
    """The kernels index unchecked: a call whose arrays disagree raises first."""
    x = numpy.zeros((2, 3, 10, 20), numpy.float32)
    xp, offs, _ = _conv_direct._padded(x, (3, 3), (1, 1), (1, 1), (1, 1))
    w, b = numpy.zeros((8, 27), numpy.float32), numpy.zeros(8, numpy.float32)
    out = numpy.empty((2, 8, 10, 20), numpy.float32)
    if change == "offsets past the planes":
        offs = offs + 3
    elif change == "a negative offset":
        offs = offs - 1
    elif change == "weights":
        w = w[:, :26].copy()
    elif change == "narrow output":  # (narrower than a vector)
        out = numpy.empty((2, 8, 10, 4), numpy.float32)
    elif change == "float64 input":
        xp = xp.astype(numpy.float64)
    else:
        offs = offs.astype(numpy.int32)
    with pytest.raises(ValueError, match="does not fit"):
        cpu_kernels.direct_conv(xp, offs, w, b, out)
    cpu_kernels.direct_conv(*_conv_direct._padded(x, (3, 3), (1, 1), (1, 1), (1, 1))[:2],
                            numpy.zeros((8, 27), numpy.float32), b,
                            numpy.empty((2, 8, 10, 20), numpy.float32))


@pytest.mark.parametrize("change", ["narrower than a vector", "one tap", "three channels",
                                    "offsets past the planes"])
def test_the_weight_gradient_refuses_arrays_that_do_not_fit(change):
    x = numpy.zeros((2, 3, 10, 24), numpy.float32)
    xp, offs, _ = _conv_direct._padded(x, (3, 3), (1, 1), (1, 1), (1, 1))
    g = numpy.zeros((2, 8, 10, 24), numpy.float32)
    if change == "narrower than a vector":
        g = numpy.zeros((2, 8, 10, 4), numpy.float32)
    elif change == "one tap":
        offs = offs[:1].copy()
    elif change == "three channels":
        g = numpy.zeros((2, 3, 10, 24), numpy.float32)
    else:
        offs = offs + numpy.int64(2**62)
    with pytest.raises(ValueError, match="does not fit"):
        cpu_kernels.direct_conv_dw(g, xp, offs)
    assert cpu_kernels.direct_conv_dw(numpy.ones((2, 8, 10, 24), numpy.float32), xp,
                                      _conv_direct._padded(x, (3, 3), (1, 1), (1, 1),
                                                           (1, 1))[1]).shape == (8, 27)


@pytest.fixture
def depthwise_taken(monkeypatch):
    """How many times the depthwise forward, weight gradient and input gradient ran."""
    return counting(monkeypatch, _conv_direct, "depthwise", "depthwise_dw", "depthwise_dx")


@pytest.mark.parametrize("xs, kernel, stride, padding, dilation, calls", [
    ((2, 8, 12, 32), (3, 3), 1, 1, 1, (2, 1, 0)),  # forward, input gradient (a convolution)
    ((3, 6, 9, 12), (7, 7), 1, 3, 1, (2, 1, 0)),  # 12 columns: tiles of 8, the last over 4
    # at a stride: the input gradient by phases
    ((2, 5, 20, 40), (3, 3), 2, 1, 1, (1, 1, 1)),
    ((2, 4, 19, 37), (5, 4), (3, 2), (2, 1), (1, 3), (1, 1, 1)),
    ((2, 4, 20, 24), (3, 3), (2, 1), 1, 1, (1, 1, 1)),  # rows at a stride
    # the input gradient's two column phases interleaved: no padding, and 2, odd widths
    ((2, 4, 15, 33), (3, 3), 2, 0, 1, (1, 1, 1)),
    ((1, 6, 16, 35), (5, 5), 2, 2, 1, (1, 1, 1)),
    ((2, 4, 9, 40), (3, 3), (3, 2), (2, 1), 1, (1, 1, 1)),
    # three phases with no tap, zeros; one tap, the weights' NumPy's
    ((2, 4, 10, 33), (1, 1), 2, 0, 1, (1, 0, 1)),
    ((2, 4, 10, 24), (3, 5), 1, (1, 4), 2, (2, 1, 0)),
    ((2, 4, 10, 14), (3, 3), 2, 1, 1, (0, 0, 0)),  # 7 columns out, narrower than a vector
])
def test_depthwise_matches_float64(xs, kernel, stride, padding, dilation, calls,
                                   depthwise_taken):
    def run(dtype):
        rng = numpy.random.default_rng(8)
        c = xs[1]
        x = retrograd.from_numpy(rng.standard_normal(xs).astype(dtype)).requires_grad_()
        w = retrograd.from_numpy(rng.standard_normal((c, 1, *kernel)).astype(dtype) / 4)
        b = retrograd.from_numpy(rng.standard_normal(c).astype(dtype))
        out = retrograd.nn.functional.conv2d(x, w.requires_grad_(), b, stride=stride,
                                             padding=padding, dilation=dilation, groups=c)
        out.backward(retrograd.from_numpy(rng.standard_normal(tuple(out.shape)).astype(dtype)))
        return [out.detach().numpy(), x.grad.numpy(), w.grad.numpy()]
    got = run(numpy.float32)
    assert tuple(depthwise_taken.values()) == calls
    close(got, run(numpy.float64))


@pytest.mark.parametrize("x_shape, w_shape, stride, groups, dtype, forward, weight_grad", [
    ((8, 256, 28, 28), (256, 1, 3, 3), 1, 256, "f", True, True),  # 28 columns: 3.5 vectors
    ((8, 384, 14, 14), (384, 1, 7, 7), 1, 384, "f", True, True),
    ((8, 96, 56, 56), (96, 1, 3, 3), 2, 96, "f", True, True),
    ((8, 64, 32, 32), (64, 1, 3, 3), 1, 64, "f", True, True),
    ((8, 64, 7, 7), (64, 1, 3, 3), 1, 64, "f", False, False),  # narrower than a vector
    ((8, 3, 32, 32), (3, 1, 3, 3), 1, 3, "f", False, False),  # fewer than 4 channels
    ((8, 64, 32, 32), (128, 1, 3, 3), 1, 64, "f", False, False),  # two outputs a channel
    ((8, 64, 32, 32), (64, 1, 3, 3), 1, 64, "d", False, False),
])
def test_where_depthwise_applies(x_shape, w_shape, stride, groups, dtype, forward,
                                 weight_grad):
    geometry = ((stride,) * 2, (1, 1), (1, 1), groups, (numpy.zeros(1, dtype),))
    assert _conv_direct.depthwise_applies(x_shape, w_shape, *geometry) is forward
    assert _conv_direct.depthwise_applies(x_shape, w_shape, *geometry,
                                          weight_grad=True) is weight_grad


def _at_a_guard_page(a, kept):
    """A copy of ``a`` whose last byte is the last before a page that may not be read (a
    read past it ends the process); ``kept`` keeps the mapping alive."""
    mmap = pytest.importorskip("mmap")
    ctypes = pytest.importorskip("ctypes")
    page = mmap.PAGESIZE
    pages = -(-a.nbytes // page) + 1
    buffer = mmap.mmap(-1, pages * page)
    start = ctypes.addressof(ctypes.c_char.from_buffer(buffer))
    if ctypes.CDLL(None).mprotect(ctypes.c_void_p(start + (pages - 1) * page), page, 0):
        pytest.skip("mprotect refused")
    kept.append(buffer)
    out = numpy.frombuffer(buffer, a.dtype, a.size, (pages - 1) * page - a.nbytes)
    out = out.reshape(a.shape)
    out[...] = a
    return out


@pytest.mark.parametrize("own, stride", [(False, 1), (True, 1), (True, 2)])
def test_the_tiles_read_nothing_past_their_arrays(own, stride):
    """Inputs and gradients that end where memory may not be read: the last row's masked
    tail (19 columns: two vectors and 3) and the narrow tiles (12 columns) stay inside; at
    a stride of 2 (a depthwise convolution's) the tiles' loads of 2 OW values from a row's
    first need a row more of padding, which the planes then have."""
    kept = []
    rng = numpy.random.default_rng(9)
    x = rng.standard_normal((2, 4, 6, 19) if stride == 1 else (2, 4, 11, 37))
    k, kernel = (4, (3, 3))
    planes, taps, step, tiles = _conv_direct._planes(x.astype(numpy.float32), kernel,
                                                     (stride,) * 2, (1, 1), (1, 1), own)
    assert tiles == (stride,) * 2
    assert planes.shape[2] == (8 if stride == 1 else 14)  # (11 rows padded to 13, and 1)
    offs = taps if own else (numpy.arange(4)[:, None] * step + taps).reshape(-1)
    own = step if own else 0
    planes = _at_a_guard_page(planes, kept)
    g = _at_a_guard_page(rng.standard_normal((2, k, 6, 19)).astype(numpy.float32), kept)
    dw = cpu_kernels.direct_conv_dw(g, planes, offs, own=own, stride=tiles)
    w = _at_a_guard_page(rng.standard_normal((k, offs.size)).astype(numpy.float32), kept)
    narrow = _at_a_guard_page(numpy.empty((2, k, 6, 12), numpy.float32), kept)
    cpu_kernels.direct_conv(planes, offs, w, numpy.zeros(k, numpy.float32), narrow, own=own,
                            stride=tiles)
    # the full width: at a stride of 2 the last tile's last load is the padded row's first
    full = _at_a_guard_page(numpy.empty((2, k, 6, 19), numpy.float32), kept)
    cpu_kernels.direct_conv(planes, offs, w, numpy.zeros(k, numpy.float32), full, own=own,
                            stride=tiles)
    # against sums in float64 over the same taps
    flat = planes.reshape(2, -1).astype(numpy.float64)
    want_dw = numpy.zeros((k, offs.size))
    want_out = numpy.zeros((2, k, 6, 19))
    for m in range(k):
        for y in range(6):
            at = offs + m * own + y * stride * planes.shape[3]
            window = flat[:, at[:, None] + stride * numpy.arange(19)]  # (N, T, 19)
            want_dw[m] += numpy.einsum("nz,ntz->t", g[:, m, y].astype(numpy.float64), window)
            want_out[:, m, y] = numpy.einsum("t,ntz->nz", w[m], window)
    numpy.testing.assert_allclose(dw, want_dw, rtol=1e-5, atol=1e-5)
    numpy.testing.assert_allclose(narrow, want_out[..., :12], rtol=1e-5, atol=1e-5)
    numpy.testing.assert_allclose(full, want_out, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("stride, rows, own, fits", [
    ((1, 3), 13, True, False), ((2, 2), 13, True, False), ((2, 2), 14, True, True),
    ((0, 1), 13, True, False), ((2, 2), 14, False, False)])
def test_the_kernels_refuse_a_stride_they_do_not_read(stride, rows, own, fits):
    """A column stride other than 1 or 2 (2 a depthwise convolution's alone), a row stride
    under 1, or a stride of 2 whose last load would end past the planes (one row short of
    the padding :func:`_planes` adds)."""
    planes = numpy.zeros((2, 4, rows, 39), numpy.float32)
    taps = numpy.array([i * 39 + j for i in range(3) for j in range(3)], numpy.int64)
    out = numpy.empty((2, 4, 6, 19), numpy.float32)
    w, b = numpy.zeros((4, 9), numpy.float32), numpy.zeros(4, numpy.float32)
    step = rows * 39 if own else 0
    calls = [lambda: cpu_kernels.direct_conv(planes, taps, w, b, out, own=step, stride=stride),
             lambda: cpu_kernels.direct_conv_dw(out, planes, taps, own=step, stride=stride)]
    for call in calls:
        if fits:
            call()
        else:
            with pytest.raises(ValueError, match="does not fit"):
                call()


@pytest.mark.parametrize("kernel, stride, dilation, strided, tiles", [
    # a depthwise convolution's taps in both column phases: the padded planes at stride 2
    ((3, 3), (2, 2), (1, 1), True, (2, 2)),
    ((3, 3), (2, 2), (1, 1), False, (1, 1)),  # a convolution's: the phases
    ((3, 3), (2, 1), (1, 1), False, (2, 1)),  # rows at a stride: the padded planes
    ((1, 1), (2, 2), (1, 1), True, (1, 1)),  # one column phase: cut out, read at unit stride
    ((3, 3), (2, 2), (2, 2), True, (1, 1)),  # an even dilation reads one column phase too
    ((3, 3), (3, 3), (1, 1), True, (1, 1)),
])
def test_the_planes_a_stride_reads(kernel, stride, dilation, strided, tiles):
    x = numpy.zeros((1, 4, 20, 40), numpy.float32)
    assert _conv_direct._planes(x, kernel, stride, (1, 1), dilation, strided)[3] == tiles


def test_the_kernels_refuse_a_channel_step_past_the_planes():
    x = numpy.zeros((2, 4, 10, 20), numpy.float32)
    planes, taps, step, _ = _conv_direct._planes(x, (3, 3), (1, 1), (1, 1), (1, 1))
    out = numpy.empty((2, 4, 10, 20), numpy.float32)
    w, b = numpy.zeros((4, 9), numpy.float32), numpy.zeros(4, numpy.float32)
    for own in (step + 1, -1):
        with pytest.raises(ValueError, match="does not fit"):
            cpu_kernels.direct_conv(planes, taps, w, b, out, own=own)
        with pytest.raises(ValueError, match="does not fit"):
            cpu_kernels.direct_conv_dw(out, planes, taps, own=own)
    cpu_kernels.direct_conv(planes, taps, w, b, out, own=step)


@pytest.mark.parametrize("stride, padding, phases", [((2, 2), (1, 1), [(0, 0), (1, 1)]),
                                                     ((3, 2), (0, 2), [(2, 1), (0, 0)]),
                                                     ((2, 3), (3, 0), [(1, 2)])])
def test_phase_planes_are_the_padded_planes_strided(stride, padding, phases):
    rng = numpy.random.default_rng(10)
    x = rng.standard_normal((2, 3, 7, 11)).astype(numpy.float32)
    padded = numpy.pad(x, ((0, 0), (0, 0), (padding[0],) * 2, (padding[1],) * 2))
    hq, wq = -(-padded.shape[2] // stride[0]), -(-padded.shape[3] // stride[1])
    got = cpu_kernels.phase_planes(x, stride, padding, numpy.array(phases, numpy.int64), hq, wq)
    for p, (a, b) in enumerate(phases):
        want = numpy.zeros((2, 3, hq, wq), numpy.float32)
        part = padded[:, :, a::stride[0], b::stride[1]]
        want[:, :, :part.shape[2], :part.shape[3]] = part
        numpy.testing.assert_array_equal(got[:, p * 3:(p + 1) * 3], want)
    with pytest.raises(ValueError, match="int64"):
        cpu_kernels.phase_planes(x, stride, padding, numpy.array(phases, numpy.int32), hq, wq)


@pytest.mark.parametrize("width, pw", [(16, 0), (16, 1), (17, 1), (17, 2), (19, 3)])
@pytest.mark.parametrize("a, sh, ph", [(0, 1, 0), (1, 2, 1), (2, 3, 1)])
def test_interleave_columns(width, pw, a, sh, ph):
    """A row phase's rows of dx from its two column phases, against NumPy's strided
    writes; the other rows untouched."""
    rng = numpy.random.default_rng(11)
    n, c, h = 2, 3, 7
    u1, v1 = -(-(ph + h) // sh), -(-(pw + width) // 2)
    even, odd = (rng.standard_normal((n, c, u1, v1)).astype(numpy.float32) for _ in range(2))
    u0 = max(0, -((a - ph) // sh))
    count = len(range(a + u0 * sh - ph, h, sh))
    dx = numpy.full((n, c, h, width), 7, numpy.float32)
    want = dx.copy()
    for b, part in ((0, even), (1, odd)):
        v0 = max(0, -((b - pw) // 2))
        into = want[:, :, a + u0 * sh - ph::sh, b + v0 * 2 - pw::2]
        into[...] = part[:, :, u0:u0 + into.shape[2], v0:v0 + into.shape[3]]
    cpu_kernels.interleave_columns(dx, even, odd, a, sh, ph, pw, u0, count)
    numpy.testing.assert_array_equal(dx, want)


@pytest.mark.parametrize("change", ["rows past the parts", "columns past the parts",
                                    "a row before dx's first", "a row past dx's last",
                                    "float64", "no rows", "parts of five dims", "read-only dx",
                                    "dx over a part"])
def test_interleave_columns_refuses_what_does_not_fit(change):
    dx = numpy.zeros((1, 4, 8, 16), numpy.float32)
    parts = numpy.zeros((2, 1, 4, 5, 9), numpy.float32)
    args = [0, 2, 1, 1, 1, 4]  # a, sh, ph, pw, u0, rows: dx rows 1, 3, 5, 7
    if change == "parts of five dims":  # (the job's row would shift every size after)
        parts = numpy.zeros((2, 1, 4, 5, 9, 2), numpy.float32)
    elif change == "read-only dx":
        dx.setflags(write=False)
    elif change == "dx over a part":  # (C-contiguous views of one buffer, overlapping)
        flat = numpy.zeros(dx.size + 100, numpy.float32)
        dx = flat[:dx.size].reshape(dx.shape)
        parts = [flat[100:100 + 180].reshape(1, 4, 5, 9)] * 2
    elif change == "rows past the parts":
        args[5] = 5
    elif change == "columns past the parts":
        parts = parts[:, :, :, :, :8].copy()
    elif change == "a row before dx's first":
        args[4] = 0
    elif change == "a row past dx's last":
        args[0] = 2
    elif change == "float64":
        dx = dx.astype(numpy.float64)
    else:
        args[5] = 0
    with pytest.raises(ValueError, match="do not fit"):
        cpu_kernels.interleave_columns(dx, *parts, *args)


@pytest.mark.skipif(blas_threads.threads() < 2, reason="OpenBLAS runs one thread here")
@pytest.mark.parametrize("rows", [7, 8])
def test_depthwise_rows_in_pairs_the_same_bits_in_parts(monkeypatch, rows):
    """A depthwise convolution's narrow tiles take two output rows at a time: an odd count
    of rows, or a part of the rows (one per thread) ending inside a pair, leaves one row
    alone; the bits are the same in one part or two, and match float64's sums."""
    rng = numpy.random.default_rng(12)
    x = rng.standard_normal((3, 8, rows + 6, 14))
    w = rng.standard_normal((8, 1, 7, 7)) / 8
    got = []
    for split in (1 << 40, 0):
        monkeypatch.setitem(cpu_kernels._SPLIT_MIN, "direct_conv", split)
        got.append(_conv_direct.depthwise(x.astype(numpy.float32), w.astype(numpy.float32),
                                          None, (1, 1), (0, 3), (1, 1)))
    assert got[0].shape == (3, 8, rows, 14)
    numpy.testing.assert_array_equal(got[0], got[1])
    want = retrograd.nn.functional.conv2d(retrograd.from_numpy(x), retrograd.from_numpy(w),
                                          None, 1, (0, 3), 1, 8).numpy()
    numpy.testing.assert_allclose(got[0], want, rtol=1e-5, atol=1e-5)


def test_interleave_columns_takes_whole_numbers_alone():
    """A fraction would pass the bounds in exact arithmetic and be cut to an integer by
    the job: refused."""
    dx = numpy.zeros((1, 4, 8, 16), numpy.float32)
    even = odd = numpy.zeros((1, 4, 5, 9), numpy.float32)
    with pytest.raises(TypeError):
        cpu_kernels.interleave_columns(dx, even, odd, -0.9, 2, 1, 1, 1, 4)
    cpu_kernels.interleave_columns(dx, even, odd, numpy.int64(0), 2, 1, 1, 1, 4)


# ---- products of small matrices by the tiles (cpu_kernels.matmuls) ------------------------

def _products_within_rounding(got, a, b):
    """``got`` is ``a @ b`` to float32 rounding: within K ulps of each sum of magnitudes."""
    a64, b64 = a.astype(numpy.float64), b.astype(numpy.float64)
    err = numpy.abs(got - numpy.matmul(a64, b64))
    bound = a.shape[-1] * numpy.finfo(numpy.float32).eps * numpy.matmul(abs(a64), abs(b64))
    assert numpy.all(err <= bound + 1e-37)


def _batches(z, m, k, n, seed):
    rng = numpy.random.default_rng(seed)
    return (rng.standard_normal((z, m, k)).astype(numpy.float32),
            rng.standard_normal((z, k, n)).astype(numpy.float32))


@pytest.mark.parametrize("z, m, k, n", [
    (1, 4, 1, 8), (3, 5, 3, 9), (2, 7, 48, 15), (2, 6, 17, 16), (2, 9, 5, 17),
    (2, 4, 2, 31), (2, 4, 2, 32), (2, 5, 3, 33), (2, 8, 8, 47), (2, 8, 8, 48),
    (2, 4, 3, 65), (5, 33, 64, 100), (128, 64, 48, 64)])
def test_small_products_by_tiles_in_one_part_or_several(z, m, k, n, monkeypatch):
    """Columns in tiles of 32, 16 and 8, the last moved back over the one before, rows in
    fours, the last moved back: each product to float32 rounding, the same bits whether
    the batch runs in one part or one per thread."""
    a, b = _batches(z, m, k, n, z * m + k * n)
    monkeypatch.setattr(blas_threads, "threads", lambda: 2)  # (in turn where no OpenBLAS)
    got = cpu_kernels.matmuls(a, b)
    assert got.shape == (z, m, n) and got.dtype == numpy.float32
    _products_within_rounding(got, a, b)
    monkeypatch.setattr(blas_threads, "threads", lambda: 1)
    numpy.testing.assert_array_equal(cpu_kernels.matmuls(a, b), got)


def test_small_products_carry_infinities_and_nan_as_numpy():
    """A NaN, an infinity times a zero (NaN down a column), a row of infinities: the same
    NaN and infinities as NumPy's product, the finite values to rounding."""
    a, b = _batches(3, 6, 5, 20, 4)
    a[0, 1, 2] = numpy.nan
    b[1, 3, 7] = numpy.inf
    a[1, :, 3] = 0
    b[2, 0, :] = -numpy.inf
    got, want = cpu_kernels.matmuls(a, b), numpy.matmul(a, b)
    assert numpy.isnan(got[1, :, 7]).all() and numpy.isinf(want).any()
    numpy.testing.assert_array_equal(numpy.isnan(got), numpy.isnan(want))
    finite = numpy.isfinite(want)
    numpy.testing.assert_array_equal(got[~finite], want[~finite])
    numpy.testing.assert_allclose(got[finite], want[finite], rtol=1e-5, atol=1e-5)


_NARROW = """
import numpy, sys
from retrograd.backend import _numba_direct, cpu_kernels
rng = numpy.random.default_rng(5)
for n in (8, 15, 16, 17, 31, 47, 48, 64, 65, 100):
    a = rng.standard_normal((3, 9, 20)).astype(numpy.float32)
    b = rng.standard_normal((3, 20, n)).astype(numpy.float32)
    sys.stdout.write(cpu_kernels.matmuls(a, b).tobytes().hex() + "\\n")
sys.stdout.write(str(_numba_direct.WIDE))
"""


@pytest.mark.slow
def test_small_products_the_same_bits_in_avx512s_vectors_and_avx2s(tmp_path):
    """The tiles in vectors of sixteen (AVX-512) and of eight, numba told the machine has
    no AVX-512 (a fresh compile, some 35 s): the same bits, each sum the same fused
    multiply-adds in order."""
    import os
    import subprocess
    import sys
    from llvmlite import binding
    from retrograd.backend import _numba_direct
    if not _numba_direct.WIDE:
        pytest.skip("numba does not compile for AVX-512 here")
    narrow = ",".join(f for f in binding.get_host_cpu_features().flatten().split(",")
                      if "avx512" not in f)
    runs = []
    for env in ({}, {"NUMBA_CPU_FEATURES": narrow, "NUMBA_CACHE_DIR": str(tmp_path)}):
        done = subprocess.run([sys.executable, "-c", _NARROW], env={**os.environ, **env},
                              capture_output=True, text=True, check=True)
        runs.append(done.stdout.split("\n"))
    assert runs[0][-1] == "True" and runs[1][-1] == "False"
    assert runs[0][:-1] == runs[1][:-1]


def test_small_products_read_nothing_past_their_arrays():
    """Operands that end where memory may not be read: the last row's last tile of
    columns (21: 16 and 8 moved back) and the last tile of rows (6: 4 and 4 moved back)
    stay inside."""
    kept = []
    a, b = _batches(3, 6, 5, 21, 5)
    got = cpu_kernels.matmuls(_at_a_guard_page(a, kept), _at_a_guard_page(b, kept))
    _products_within_rounding(got, a, b)


def _heads(x, n, length, heads):
    """(n, length, heads * d) -> (n, heads, length, d): attention's heads, a view."""
    return x.reshape(n, length, heads, -1).transpose(0, 2, 1, 3)


def _strided_cases():
    """Operands the tiles read in place, each with what it is a view of."""
    rng = numpy.random.default_rng(21)
    qkv = rng.standard_normal((3, 9, 3 * 20)).astype(numpy.float32)
    q, k, v = (_heads(qkv[..., i * 20:(i + 1) * 20], 3, 9, 2) for i in range(3))
    p = rng.standard_normal((3, 2, 9, 9)).astype(numpy.float32)
    big = rng.standard_normal((4, 7, 30)).astype(numpy.float32)
    wide = rng.standard_normal((3, 12, 30)).astype(numpy.float32)
    five = rng.standard_normal((2, 3, 2, 6, 9)).astype(numpy.float32)
    return {"scores": (q, k.swapaxes(-1, -2)), "weights times values": (p, v),
            "heads times rows": (q, numpy.broadcast_to(wide[:, None, :10, 5:17], (3, 2, 10, 12))),
            "columns of a wider array": (big[:, :5, 3:10], big[:, :7, 12:24]),
            "every other matrix": (big[::2, :4, :6], big[1::2, :6, 8:16]),
            "a broadcast batch": (big[:, :4, :6], numpy.broadcast_to(big[0, :6, :8], (4, 6, 8))),
            "five dims": (five[..., :4, :], rng.standard_normal((2, 3, 2, 9, 8)).astype(
                numpy.float32)),
            "a transposed a": (p.swapaxes(-1, -2), v),
            "transposed heads": (q.swapaxes(-1, -2), p[..., :10].copy())}


@pytest.mark.parametrize("case", list(_strided_cases()))
def test_small_products_read_views_in_place_with_the_same_bits(case, monkeypatch):
    """Heads of one (N, L, 3E) array, columns of wider rows, every other matrix, a
    broadcast batch, five dims, a transposed ``a`` (a product's gradient): the same bits as
    the operands laid out row-major, with no copy of an operand whose rows (or, for ``a``,
    columns) are runs (the scores' transposed keys, whose rows are not, are copied)."""
    a, b = _strided_cases()[case]
    want = cpu_kernels.matmuls(numpy.ascontiguousarray(a), numpy.ascontiguousarray(b))
    copies = counting(monkeypatch, cpu_kernels, "contiguous")
    got = cpu_kernels.matmuls(a, b)
    assert got.shape == want.shape and got.flags.c_contiguous
    numpy.testing.assert_array_equal(got, want)
    assert copies["contiguous"] == (case == "scores")
    _products_within_rounding(got.reshape(-1, *got.shape[-2:]),
                              numpy.ascontiguousarray(a).reshape(-1, *a.shape[-2:]),
                              numpy.ascontiguousarray(b).reshape(-1, *b.shape[-2:]))


def test_small_products_of_views_read_nothing_past_their_memory():
    """Heads whose memory ends where it may not be read: the last head's last row ends
    the buffer (the view's extent, not its shape times its steps)."""
    kept = []
    rng = numpy.random.default_rng(22)
    qkv = _at_a_guard_page(rng.standard_normal((2, 6, 3 * 24)).astype(numpy.float32), kept)
    p = _at_a_guard_page(rng.standard_normal((2, 3, 6, 6)).astype(numpy.float32), kept)
    v = _heads(qkv[..., 48:], 2, 6, 3)  # (its last row ends the buffer)
    got = cpu_kernels.matmuls(p, v)
    numpy.testing.assert_array_equal(got, cpu_kernels.matmuls(p, numpy.ascontiguousarray(v)))
    wide = _at_a_guard_page(rng.standard_normal((2, 3, 8, 9)).astype(numpy.float32), kept)
    got = cpu_kernels.matmuls(v, wide)
    numpy.testing.assert_array_equal(got, cpu_kernels.matmuls(numpy.ascontiguousarray(v),
                                                              wide))
    vt = v.swapaxes(-1, -2)  # (a transposed a: its last column ends the buffer)
    got = cpu_kernels.matmuls(vt, wide[..., :6, :])
    numpy.testing.assert_array_equal(got, cpu_kernels.matmuls(numpy.ascontiguousarray(vt),
                                                              wide[..., :6, :]))


@pytest.mark.parametrize("change", ["3 rows", "7 columns", "no inner", "float64",
                                    "byte-swapped", "batches", "inner", "matrices"])
def test_small_products_refuse_what_the_tiles_cannot_take(change):
    a, b = _batches(2, 4, 3, 8, 6)
    if change == "3 rows":
        a = a[:, :3].copy()
    elif change == "7 columns":
        b = b[..., :7].copy()
    elif change == "no inner":
        a, b = a[..., :0].copy(), b[:, :0]
    elif change == "float64":
        a = a.astype(numpy.float64)
    elif change == "byte-swapped":
        b = b.astype(b.dtype.newbyteorder())
    elif change == "batches":
        b = numpy.concatenate([b, b])
    elif change == "inner":
        b = numpy.zeros((2, 4, 8), numpy.float32)
    else:
        a, b = a[0], b[0]
    with pytest.raises(ValueError, match="batched small products"):
        cpu_kernels.matmuls(a, b)


def test_attention_products_take_the_tiles_and_match_pytorch(monkeypatch):
    """w4's heads, (32, 4, 64, 48): ``q @ k.transpose(-2, -1)`` and ``p @ v``, forward and
    both gradients of each (six products), by the tiles, as PyTorch's to float32
    rounding."""
    torch = pytest.importorskip("torch")
    calls = counting(monkeypatch, cpu_kernels, "matmuls")
    rng = numpy.random.default_rng(7)
    q, k, v = (rng.standard_normal((32, 4, 64, 48)).astype(numpy.float32) for _ in range(3))
    g = rng.standard_normal((32, 4, 64, 48)).astype(numpy.float32)
    got = {}
    for lib in (retrograd, torch):
        Q, K, V = (lib.from_numpy(x.copy()).requires_grad_() for x in (q, k, v))
        s = Q @ K.transpose(-2, -1) / 8
        o = s.softmax(-1) @ V
        o.backward(lib.from_numpy(g))
        got[lib] = [t.detach().numpy() for t in (s, o, Q.grad, K.grad, V.grad)]
        if lib is retrograd:
            assert calls["matmuls"] == 6
    for a, b in zip(got[retrograd], got[torch], strict=True):
        numpy.testing.assert_allclose(a, b, rtol=1e-4, atol=2e-5 * numpy.abs(b).max())


@pytest.mark.parametrize("case", ["float64", "broadcast", "few", "matrices"])
def test_products_the_tiles_do_not_take_go_to_numpy(case, monkeypatch):
    """A float64 batch, a broadcast one, too little work for the call and plain matrices
    go to NumPy's matmul."""
    from retrograd.backend.functions import functions
    calls = counting(monkeypatch, cpu_kernels, "matmuls")
    a, b = _batches(128, 64, 48, 64, 8)
    if case == "float64":
        a, b = a.astype(numpy.float64), b.astype(numpy.float64)
    elif case == "broadcast":
        a = a[:1]
    elif case == "few":
        a, b = a[:8], b[:8]
    elif case == "matrices":
        a, b = a[0], b[0]
    got = functions(numpy).batched_matmul(a, b)
    numpy.testing.assert_array_equal(got, numpy.matmul(a, b))
    assert calls["matmuls"] == 0


@pytest.mark.parametrize("n", [48, 64, 24])
def test_batched_products_have_the_same_bits_at_any_thread_count(n, monkeypatch):
    """The tiles are taken on one thread too: a product's bits do not depend on the
    thread count (N = 24 and 48 end in tiles whose sums are not OpenBLAS's)."""
    from retrograd.backend.functions import functions
    calls = counting(monkeypatch, cpu_kernels, "matmuls")
    a, b = _batches(128, 64, 48, n, 9)
    got = []
    for threads in (1, 2):
        monkeypatch.setattr(blas_threads, "threads", lambda threads=threads: threads)
        got.append(functions(numpy).batched_matmul(a.reshape(32, 4, 64, 48),
                                                   b.reshape(32, 4, 48, n)))
    assert calls["matmuls"] == 2
    numpy.testing.assert_array_equal(got[0], got[1])
    _products_within_rounding(got[0].reshape(128, 64, n), a, b)
