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
