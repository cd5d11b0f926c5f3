"""Differential-fuzz mismatches on convolution, adaptive pooling, the class losses and
embedding, each checked against PyTorch on the case that found it."""

import numpy
import pytest

import retrograd

pytestmark = pytest.mark.torch


def _grads(T, fn, *arrays, grad=None):
    """fn's result and the gradients of its sum with respect to the float inputs."""
    ts = [T.from_numpy(a.copy()) for a in arrays]
    leaves = [t.requires_grad_() if t.is_floating_point() else t for t in ts]
    out = fn(T, *leaves)
    out.sum().backward() if grad is None else out.backward(grad(T, out))
    return [out.detach().numpy()] + [t.grad.numpy() for t in leaves if t.is_floating_point()]


def _check(torch, fn, *arrays, **kw):
    for a, b in zip(_grads(retrograd, fn, *arrays), _grads(torch, fn, *arrays), strict=True):
        numpy.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6, **kw)


def test_conv2d_weight_grad_of_step_sliced_size_one_width(torch):
    """A step-sliced size-1 last dim keeps its step as stride on a "contiguous" array;
    the depthwise weight gradient's strided views used to step by it."""
    x = numpy.array([0.11, 1.34, 1.05, -0.85], dtype=numpy.float32).reshape(1, 1, 4, 1)
    w = numpy.array([0.95, 0.03], dtype=numpy.float32).reshape(1, 1, 2, 1)
    _check(torch, lambda T, x, w: T.nn.functional.conv2d(
        x[..., ::2], w.expand(2, 1, 2, 1), padding="valid"), x, w)
    _check(torch, lambda T, x, w: T.nn.functional.conv2d(x[..., ::3], w), x, w)
