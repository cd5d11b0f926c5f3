"""The convolution family's NumPy-only kernels (``ops/_conv_numpy.py``: the row-grid GEMMs
and the depthwise multiply-adds, declared with ``kernel()``) pinned to the family's rules,
which are written on any array namespace: with the kernels withdrawn, the same rules run on
NumPy through im2col and col2im, and every output and gradient must agree, in float64 and
on more layouts than the op database's entries (which tests/ops/test_kernels.py runs)."""

import numpy
import pytest

import retrograd
from retrograd.backend import cpu_kernels
from retrograd.backend.cpu_kernels import col2im
from retrograd.ops import _conv_numpy, convolution
from retrograd.ops._registry import KERNELS

CASES = [
    ("conv2d", (2, 3, 7, 6), (4, 3, 3, 3), {"padding": 1}),
    ("conv2d", (2, 3, 7, 17), (4, 3, 3, 3), {"padding": 1}),  # the row grid (16+ columns)
    ("conv2d", (2, 3, 9, 18), (4, 3, 3, 2), {"padding": (2, 1), "stride": (2, 1),
                                            "dilation": (1, 2)}),
    ("conv2d", (2, 4, 7, 7), (6, 2, 3, 3), {"padding": 1, "groups": 2}),
    ("conv2d", (2, 1, 6, 7), (12, 1, 3, 3), {"padding": 1}),  # the ungridded layout
    ("conv2d", (2, 1, 30, 30), (12, 1, 3, 3), {"padding": 1}),  # and chunks of one image
    ("conv2d", (2, 4, 7, 7), (4, 1, 3, 3), {"padding": 2, "groups": 4, "dilation": 2}),
    ("conv2d", (2, 4, 7, 7), (8, 1, 3, 3), {"stride": 2, "groups": 4}),  # multiplier 2
    ("conv2d", (0, 3, 5, 5), (2, 3, 3, 3), {}),
    # unit stride: the input gradient as a convolution with the flipped kernel
    ("conv2d", (2, 4, 8, 19), (6, 2, 3, 2), {"padding": (0, 2), "dilation": (1, 3),
                                            "groups": 2}),
    ("conv2d", (2, 3, 6, 6), (5, 3, 2, 2), {"padding": 2}),  # wider than full: col2im
    ("conv_transpose2d", (2, 4, 5, 6), (4, 3, 3, 3), {"dilation": 2, "output_padding": 1}),
    ("conv1d", (2, 3, 11), (5, 3, 4), {"padding": 2, "stride": 2}),
    ("conv_transpose2d", (2, 4, 5, 6), (4, 3, 3, 3), {"stride": 2, "output_padding": 1}),
    ("conv_transpose2d", (2, 4, 5, 5), (4, 2, 2, 3), {"groups": 2, "padding": 1}),
    ("conv_transpose1d", (2, 3, 7), (3, 2, 3), {"stride": 3, "dilation": 2}),
]


def _run(name, xs, ws, kw, seed, dtype=numpy.float64):
    rng = numpy.random.default_rng(seed)
    x = retrograd.from_numpy(rng.standard_normal(xs).astype(dtype)).requires_grad_()
    w = retrograd.from_numpy(rng.standard_normal(ws).astype(dtype)).requires_grad_()
    c_out = ws[1] * kw.get("groups", 1) if "transpose" in name else ws[0]
    b = retrograd.from_numpy(rng.standard_normal(c_out).astype(dtype)).requires_grad_()
    out = getattr(retrograd.nn.functional, name)(x, w, b, **kw)
    g = retrograd.from_numpy(rng.standard_normal(tuple(out.shape)).astype(dtype))
    out.backward(g)
    return [out.detach().numpy(), x.grad.numpy(), w.grad.numpy(), b.grad.numpy()]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_numpy_kernels_match_the_rules(monkeypatch, case):
    fast = _run(*CASES[case], seed=case)
    for k in KERNELS:
        if k.op == "convolution":
            monkeypatch.setattr(k, "when", lambda *a: False)
    plain = _run(*CASES[case], seed=case)
    for a, b in zip(fast, plain, strict=True):
        assert a.shape == b.shape and a.dtype == b.dtype
        numpy.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_the_kernels_are_taken_on_numpy(monkeypatch):
    """The pinning above compares two paths only while the kernels are in use."""
    calls = []
    kernel = convolution._conv_numpy.conv
    monkeypatch.setattr(convolution._conv_numpy, "conv",
                        lambda *a, **k: calls.append(1) or kernel(*a, **k))
    _run(*CASES[0], seed=0)
    assert calls


# col2im at a stride (the input gradient, and a transposed convolution's forward)
STRIDED = [
    ("conv2d", (2, 3, 9, 18), (4, 3, 3, 2), {"padding": (2, 1), "stride": (2, 1),
                                            "dilation": (1, 2)}),
    ("conv2d", (2, 4, 11, 13), (6, 2, 3, 3), {"padding": 1, "stride": 2, "groups": 2}),
    ("conv_transpose2d", (2, 4, 5, 6), (4, 3, 3, 3), {"stride": 2, "output_padding": 1}),
]


@pytest.mark.skipif(not cpu_kernels.ready(), reason="numba is not installed")
@pytest.mark.parametrize("case", range(len(STRIDED)))
def test_the_compiled_col2im_adds_as_numpy(monkeypatch, case):
    """In float32, bit for bit: the kernel adds each plane's kernel offsets in NumPy's
    order."""
    calls = []
    monkeypatch.setattr(_conv_numpy, "col2im", lambda *a: calls.append(1) or col2im(*a))
    fast = _run(*STRIDED[case], seed=case, dtype=numpy.float32)
    assert calls
    monkeypatch.setattr(_conv_numpy, "takes", lambda *a: False)
    for a, b in zip(fast, _run(*STRIDED[case], seed=case, dtype=numpy.float32), strict=True):
        numpy.testing.assert_array_equal(a, b)
