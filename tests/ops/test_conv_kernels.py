"""The convolution family's NumPy-only kernels (``ops/_conv_numpy.py``: the row-grid GEMMs
and the depthwise multiply-adds, declared with ``kernel()``) pinned to the family's rules,
which are written on any array namespace: with the kernels withdrawn, the same rules run on
NumPy through im2col and col2im, and every output and gradient must agree, in float64 and
on more layouts than the op database's entries (which tests/ops/test_kernels.py runs)."""

import numpy
import pytest

import retrograd
from retrograd.ops import convolution
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


def _run(name, xs, ws, kw, seed):
    rng = numpy.random.default_rng(seed)
    x = retrograd.from_numpy(rng.standard_normal(xs)).requires_grad_()
    w = retrograd.from_numpy(rng.standard_normal(ws)).requires_grad_()
    c_out = ws[1] * kw.get("groups", 1) if "transpose" in name else ws[0]
    b = retrograd.from_numpy(rng.standard_normal(c_out)).requires_grad_()
    out = getattr(retrograd.nn.functional, name)(x, w, b, **kw)
    g = retrograd.from_numpy(rng.standard_normal(tuple(out.shape)))
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
                        lambda *a: calls.append(1) or kernel(*a))
    _run(*CASES[0], seed=0)
    assert calls
