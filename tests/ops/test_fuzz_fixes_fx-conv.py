"""Differential-fuzz mismatches on convolution, adaptive pooling, the class losses and
embedding, each checked against PyTorch on the case that found it."""

import numpy
import pytest

import retrograd

pytestmark = pytest.mark.torch


def _grads(T, fn, arrays, diff):
    """fn's result and the gradients of its sum with respect to the first ``diff`` inputs
    (all float inputs when None)."""
    ts = [T.from_numpy(a.copy()) for a in arrays]
    n = len(ts) if diff is None else diff
    leaves = [t.requires_grad_() if t.is_floating_point() and k < n else t
              for k, t in enumerate(ts)]
    out = fn(T, *leaves)
    out.sum().backward()
    return [out.detach().numpy()] + [t.grad.numpy() for t in leaves if t.requires_grad]


def _check(torch, fn, *arrays, diff=None):
    r, t = _grads(retrograd, fn, arrays, diff), _grads(torch, fn, arrays, diff)
    for a, b in zip(r, t, strict=True):
        assert a.dtype == b.dtype
        numpy.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_conv2d_weight_grad_of_step_sliced_size_one_width(torch):
    """A step-sliced size-1 last dim keeps its step as stride on a "contiguous" array;
    the depthwise weight gradient's strided views used to step by it."""
    x = numpy.array([0.11, 1.34, 1.05, -0.85], dtype=numpy.float32).reshape(1, 1, 4, 1)
    w = numpy.array([0.95, 0.03], dtype=numpy.float32).reshape(1, 1, 2, 1)
    _check(torch, lambda T, x, w: T.nn.functional.conv2d(
        x[..., ::2], w.expand(2, 1, 2, 1), padding="valid"), x, w)
    _check(torch, lambda T, x, w: T.nn.functional.conv2d(x[..., ::3], w), x, w)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_nll_loss_all_ignored_gives_zero_gradient(torch, reduction, weighted):
    """Ignored targets get 0, not 0 * (grad / total weight) = NaN when all are ignored."""
    x = numpy.array([[0.07, -0.24], [0.3, 0.1]], dtype=numpy.float32)
    t = numpy.array([0, 0])
    w = numpy.array([0.38, 0.37], dtype=numpy.float32)
    args = (x, t, w) if weighted else (x, t)
    _check(torch, lambda T, x, t, *w: T.nn.functional.nll_loss(
        x, t, *w, ignore_index=0, reduction=reduction), *args, diff=1)
    _check(torch, lambda T, x, t, *w: T.nn.functional.nll_loss(
        x[0], t[0], *w, ignore_index=0, reduction=reduction), *args, diff=1)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_ignored_row_with_infinity(torch, reduction):
    """An ignored target's loss is 0 even when its row's log_softmax is NaN."""
    x = numpy.array([[0.5, numpy.inf, 1e4], [-0.9, 0.0, -0.2]], dtype=numpy.float32)
    t = numpy.array([-100, 1])
    _check(torch, lambda T, x, t: T.nn.functional.cross_entropy(
        x, t, reduction=reduction), x, t)


@pytest.mark.parametrize("size", [(3, 1), (2, 3)])
def test_adaptive_max_pool2d_empty_batch(torch, size):
    """An empty batch pools to an empty result, and its gradient is empty too."""
    x = numpy.ones((1, 3, 3, 2), dtype=numpy.float32)
    _check(torch, lambda T, x: T.nn.functional.adaptive_max_pool2d(x.expand(0, 3, 3, 2), size),
           x)
    _check(torch, lambda T, x: T.nn.functional.adaptive_max_pool2d(x[:0], size), x)


@pytest.mark.parametrize("size", [(3, 1), (2, 2), (2, 3)])
def test_adaptive_avg_pool2d_infinity_stays_in_its_bin(torch, size):
    """An infinite input makes its own bins infinite, not every bin NaN."""
    x = numpy.arange(32, dtype=numpy.float32).reshape(2, 2, 4, 2) / 7
    x[0, 1, 3, 0] = -numpy.inf
    x[1, 0, 0, 1] = numpy.inf
    x[1, 1, 2, 0] = numpy.nan
    _check(torch, lambda T, x: T.nn.functional.adaptive_avg_pool2d(x, size), x)


@pytest.mark.parametrize("shape", [(1, 4, 0, 4), (2, 2, 0, 0), (3, 0, 4)])
def test_adaptive_avg_pool2d_of_nothing_to_one(torch, shape):
    """Output size (1, 1) is a mean, so an empty plane gives NaN rather than an error;
    other output sizes still refuse it."""
    x = numpy.zeros(shape, dtype=numpy.float64)
    _check(torch, lambda T, x: T.nn.functional.adaptive_avg_pool2d(x, (1, 1)), x)
    with pytest.raises(RuntimeError, match="Expected input to have non-zero size"):
        retrograd.nn.functional.adaptive_avg_pool2d(retrograd.from_numpy(x), (2, 1))


def test_embedding_padding_idx_of_empty_table(torch):
    """padding_idx 0 is accepted for a table with no rows, and its backward runs."""
    idx = numpy.zeros((0, 1), dtype=numpy.int64)
    w = numpy.zeros((0, 3), dtype=numpy.float32)
    _check(torch, lambda T, i, w: T.nn.functional.embedding(i, w, padding_idx=0), idx, w)


@pytest.mark.parametrize("fn, x, w, kw", [
    ("conv2d", (4, 3, 0), (2, 2, 2, 1), {"groups": 2, "padding": 1}),
    ("conv2d", (2, 1, 5, 0), (1, 1, 3, 2), {"padding": 1}),
    ("conv1d", (1, 1, 0), (1, 1, 3), {"padding": 2}),
    ("conv_transpose2d", (2, 1, 5, 0), (1, 1, 3, 2), {}),
])
def test_conv_of_empty_planes_refused(torch, fn, x, w, kw):
    """An empty input with images and channels is refused (only an empty batch or no
    channels convolve), with the shape ATen shows (1-d viewed as 2-d, batched)."""
    def run(T):
        getattr(T.nn.functional, fn)(T.zeros(x), T.zeros(w), **kw)
    with pytest.raises(RuntimeError) as want:
        run(torch)
    with pytest.raises(RuntimeError) as got:
        run(retrograd)
    assert str(got.value) == str(want.value)


def test_conv_of_empty_batch_still_runs(torch):
    x = numpy.zeros((0, 1, 0), dtype=numpy.float32)
    w = numpy.ones((1, 1, 1), dtype=numpy.float32)
    _check(torch, lambda T, x, w: T.nn.functional.conv1d(x, w, padding=1), x, w)


@pytest.mark.parametrize("x_shape, w_shape, kw", [
    ((1, 2, 3, 7), (2, 2, 2, 2), {"stride": (1, 2)}),  # grid junk columns
    ((1, 2, 2, 4), (2, 1, 2, 1), {"groups": 2}),  # depthwise gradient's padded gather
    ((2, 4, 5), (2, 2, 3), {"groups": 2}),
    ((2, 5), (2, 2, 3), {"padding": 1}),
    ((0, 4, 3, 3), (2, 2, 2, 1), {"groups": 2, "padding": 1}),  # empty batch
])
@pytest.mark.parametrize("where", ["weight", "input"])
def test_conv_gradients_keep_infinities_in_their_windows(torch, x_shape, w_shape, kw, where):
    """An infinite weight (input) makes NaN only the input (weight) gradients it touches,
    as PyTorch's im2col GEMMs."""
    rng = numpy.random.default_rng(0)
    x = rng.standard_normal(x_shape).astype(numpy.float32)
    w = rng.standard_normal(w_shape).astype(numpy.float32)
    a = w if where == "weight" else x
    if a.size:
        a.reshape(-1)[[0, a.size // 2]] = [-numpy.inf, numpy.inf]
    fn = "conv1d" if len(w_shape) == 3 else "conv2d"
    _check(torch, lambda T, x, w: getattr(T.nn.functional, fn)(x, w, **kw), x, w)
