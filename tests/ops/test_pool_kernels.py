"""The compiled max-pool kernels (the 2-D pools and the gradient scatter of
backend/cpu_kernels.py, declared beside pooling.py's rules) against those rules, on what
the op database's samples rarely hold: NaN, infinities, ties (a ReLU's zeros), odd sizes
the floor mode crops, an unbatched input, and windows that overlap or lie in padding.
Values and indices must agree exactly, input gradients to float32's rounding (the rule
sums overlapping windows' gradients in float64), NaN for NaN."""

import numpy
import pytest

import retrograd
from retrograd.backend import cpu_kernels
from retrograd.ops._registry import KERNELS

pytestmark = pytest.mark.skipif(not cpu_kernels.ready(), reason="numba is not compiling")

CASES = [
    ((2, 3, 8, 8), {"kernel_size": 2}),
    ((2, 3, 7, 9), {"kernel_size": 2}),  # floor mode: the last row and column unread
    ((3, 5, 6), {"kernel_size": 2}),  # unbatched
    ((2, 2, 7, 8), {"kernel_size": 3, "stride": 2, "padding": 1}),  # overlapping windows
    ((1, 2, 5, 5), {"kernel_size": 2, "padding": 1, "dilation": 3}),  # windows in padding
    ((1, 2, 7, 7), {"kernel_size": 2, "ceil_mode": True}),
    ((2, 3, 9, 10), {"kernel_size": (3, 2), "stride": (2, 3), "padding": 1}),  # uneven
    ((1, 2, 8, 9), {"kernel_size": 3, "stride": 2, "padding": 1, "dilation": 2,
                    "ceil_mode": True}),
    ((2, 4, 12, 12), {"kernel_size": 3, "stride": 2, "padding": 1}),  # a ResNet's stem pool
    # rows long enough for the vectorized windows, at a stride and at none
    ((2, 3, 9, 70), {"kernel_size": 3, "stride": 2, "padding": 1}),
    ((1, 2, 6, 53), {"kernel_size": (2, 4), "stride": (1, 3), "padding": (0, 2),
                     "ceil_mode": True}),
    ((1, 2, 5, 40), {"kernel_size": 3, "stride": 1}),
]


def _input(shape, seed):
    rng = numpy.random.default_rng(seed)
    x = numpy.maximum(rng.standard_normal(shape), 0).astype(numpy.float32)  # ties at 0
    hit = rng.random(shape) < 0.1
    x[hit] = rng.choice(numpy.float32([numpy.nan, numpy.inf, -numpy.inf, -0.0]), hit.sum())
    return x


def _run(shape, kw, seed):
    x = retrograd.from_numpy(_input(shape, seed)).requires_grad_()
    out, idx = retrograd.nn.functional.max_pool2d(x, return_indices=True, **kw)
    g = numpy.random.default_rng(seed + 1).standard_normal(tuple(out.shape))
    out.backward(retrograd.from_numpy(g.astype(numpy.float32)))
    return [out.detach().numpy(), idx.numpy(), x.grad.numpy()]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_compiled_max_pool_matches_the_rules(case, monkeypatch):
    calls = []
    takes = cpu_kernels.takes
    monkeypatch.setattr(cpu_kernels, "takes", lambda *a: calls.append(1) or takes(*a))
    compiled = _run(*CASES[case], seed=case)
    assert calls, "the compiled kernels were not asked"
    for k in KERNELS:
        if k.op == "max_pool2d":
            monkeypatch.setattr(k, "when", lambda *a: False)
    plain = _run(*CASES[case], seed=case)
    for a, b in zip(compiled, plain, strict=True):
        assert a.dtype == b.dtype
    numpy.testing.assert_array_equal(compiled[0], plain[0])
    numpy.testing.assert_array_equal(compiled[1], plain[1])
    numpy.testing.assert_allclose(compiled[2], plain[2], rtol=1e-6, atol=1e-6)


def test_compiled_2x2_pool_on_every_window_pattern(monkeypatch):
    """Every 2x2 window over NaN, a tie, a smaller value and -inf: each NaN placement and
    tie order the kernel's row-by-row selection must resolve as the running maximum."""
    values = numpy.float32([numpy.nan, 1.0, 1.0, 0.0, -numpy.inf])
    windows = numpy.array(numpy.meshgrid(*[values] * 4, indexing="ij")).reshape(4, -1)
    x = numpy.empty((1, 1, 2, 2 * windows.shape[1]), numpy.float32)
    x[0, 0, 0, 0::2], x[0, 0, 0, 1::2], x[0, 0, 1, 0::2], x[0, 0, 1, 1::2] = windows
    got = [t.numpy() for t in retrograd.nn.functional.max_pool2d(
        retrograd.from_numpy(x), 2, return_indices=True)]
    for k in KERNELS:
        if k.op == "max_pool2d":
            monkeypatch.setattr(k, "when", lambda *a: False)
    want = [t.numpy() for t in retrograd.nn.functional.max_pool2d(
        retrograd.from_numpy(x), 2, return_indices=True)]
    numpy.testing.assert_array_equal(got[0], want[0])
    numpy.testing.assert_array_equal(got[1], want[1])


def _running_max(x, kernel, stride, pad, dilation, out_shape):
    """The rule the kernel follows, element by element: each window's running maximum in
    row-major order from its first element inside the plane, a later value taking it when
    greater or NaN; -inf and index -1 for a window wholly in padding."""
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = kernel, stride, pad, dilation
    n, h, w = x.shape
    out, idx = numpy.full(out_shape, -numpy.inf, numpy.float32), numpy.full(out_shape, -1)
    for b, oy, ox in numpy.ndindex(*out_shape):
        for i, j in numpy.ndindex(kh, kw):
            y, c = oy * sh - ph + i * dh, ox * sw - pw + j * dw
            if 0 <= y < h and 0 <= c < w:
                v = x[b, y, c]
                if idx[b, oy, ox] < 0 or v > out[b, oy, ox] or v != v:
                    out[b, oy, ox], idx[b, oy, ox] = v, y * w + c
    return out, idx


def test_the_pool_kernel_is_the_running_maximum():
    """Random pools (kernels, strides, paddings, dilations, an extra output row or column as
    a ceil mode's) over NaN, ties and -inf: values and indices as the rule's."""
    from retrograd.backend import _numba_kernels
    rng = numpy.random.default_rng(11)
    for _ in range(150):
        (kh, kw), (sh, sw) = rng.integers(1, 6, 2), rng.integers(1, 4, 2)
        dh, dw = rng.choice([1, 1, 2], 2)
        ph, pw = rng.integers(0, (kh - 1) * dh // 2 + 2), rng.integers(0, (kw - 1) * dw // 2 + 2)
        h, w = rng.integers(1, 12), rng.integers(1, 24)
        oh = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1 + rng.integers(0, 2)
        ow = (w + 2 * pw - dw * (kw - 1) - 1) // sw + 1 + rng.integers(0, 2)
        if oh <= 0 or ow <= 0:
            continue
        x = rng.integers(-2, 3, (2, h, w)).astype(numpy.float32)  # ties
        x[rng.random(x.shape) < 0.15] = rng.choice(numpy.float32([numpy.nan, -numpy.inf]))
        out, idx = numpy.empty((2, oh, ow), numpy.float32), numpy.empty((2, oh, ow), numpy.int64)
        geometry = ((kh, kw), (sh, sw), (ph, pw), (dh, dw))
        _numba_kernels.max_pool_2d(x, out, idx, *geometry)
        want, at = _running_max(x, *geometry, (2, oh, ow))
        numpy.testing.assert_array_equal(idx, at, err_msg=str(geometry))
        numpy.testing.assert_array_equal(out, want, err_msg=str(geometry))
