"""The convolution and pooling family's backward of a backward on the emulated device: the
rules run on device Tensors (im2col/col2im, scatter_add, the divisors and averaging
matrices as device tensors) and must give the CPU's second derivatives."""

import numpy
import pytest

import retrograd
from device.emulated_run import emulating

F = retrograd.nn.functional

CASES = {
    "conv2d": lambda x, w: F.conv2d(x, w, padding=1, stride=2),
    "conv_transpose2d": lambda x, w: F.conv_transpose2d(x, w.transpose(0, 1), stride=2,
                                                        output_padding=1),
    "conv3d": lambda x, w: F.conv3d(x.unsqueeze(2), w.unsqueeze(2), padding=(0, 1, 1)),
    "max_pool2d": lambda x, w: F.max_pool2d(x, 2, 1),
    "avg_pool2d": lambda x, w: F.avg_pool2d(x, 3, 2, 1, count_include_pad=False),
    "adaptive_avg_pool2d": lambda x, w: F.adaptive_avg_pool2d(x, 4),
    "adaptive_max_pool2d": lambda x, w: F.adaptive_max_pool2d(x, 4),
    "unfold": lambda x, w: F.unfold(x, 2, padding=1),
}


def _second(fn, dev):
    rng = numpy.random.default_rng(0)
    x = retrograd.from_numpy(rng.standard_normal((2, 3, 6, 6))).to(dev).requires_grad_()
    w = retrograd.from_numpy(rng.standard_normal((4, 3, 3, 3))).to(dev).requires_grad_()
    gx, = retrograd.autograd.grad(fn(x, w).pow(2).sum(), x, create_graph=True)
    assert gx.device == x.device
    gg = retrograd.autograd.grad(gx.pow(3).sum(), (x, w), allow_unused=True)
    return [None if g is None else g.cpu().numpy() for g in gg]


@pytest.mark.parametrize("name", list(CASES))
def test_double_backward_on_the_device_matches_the_cpu(name):
    cpu = _second(CASES[name], "cpu")
    with emulating():
        dev = _second(CASES[name], "cuda")
    for a, b in zip(cpu, dev, strict=True):
        assert (a is None) == (b is None)
        if a is not None:
            numpy.testing.assert_allclose(b, a, rtol=1e-10, atol=1e-10)
