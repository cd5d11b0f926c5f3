"""Convolutions at unit stride with few taps (input channels times kernel size, a first
layer's 27) by their direct sums: compiled tiles of output channels by columns, each
summing over the taps with the weights and the padded input read in place
(``cpu_kernels.direct_conv``, and ``direct_conv_dw`` for the weight gradient).

im2col's GEMM has then an inner dimension of the taps alone, which OpenBLAS runs far
below its speed, after copying the input once per tap; Winograd's transforms need more
channels to pay. Measured on 2 cores against the im2col and Winograd paths (ms; the
weight gradient of w3's second layer stays im2col's, see ``_LARGE_MAP``):

==============================  ==============  ===============
layer (N, C -> K, size)         forward         weight gradient
==============================  ==============  ===============
64, 3 -> 32, 32x32 (w3's)       0.67 vs 2.43    0.90 vs 1.82
8, 3 -> 64, 224x224             7.6 vs 17.6     12.6 vs 20.3
64, 16 -> 32, 32x32             3.46 vs 5.81    4.11 vs 6.93
16, 32 -> 32, 32x32             1.49 vs 2.48    2.19 vs 2.65
64, 16 -> 32, 16x16             -               1.29 vs 1.72
64, 32 -> 64, 16x16 (w3's)      3.28 vs 4.10    5.61 vs 4.96
64, 64 -> 32, 16x16 (its dx)    3.39 vs 4.94    -
==============================  ==============  ===============

The sums round as a direct convolution's do, in another order than im2col's GEMMs; a
value that is not finite propagates as in any direct sum.
"""

import numpy

from ..backend import cpu_kernels

__all__ = ["applies", "conv", "conv_dw"]

# Taps (C * kh * kw) up to which the direct sums go faster. Past them Winograd's
# transforms win (measured at 576 taps: 28x28 maps of 64 channels, 3.4 ms against 2.6;
# 56x56, 12.2 against 8.7) and so do im2col's GEMMs; but on maps of at most _SMALL_MAP
# positions, where those make small GEMMs, up to _MAX_SMALL_MAP_TAPS (16x16 maps at 576
# taps, w3's second layer's input gradient: 3.4 against 4.9).
_MAX_TAPS = 288
_SMALL_MAP = 256
_MAX_SMALL_MAP_TAPS = 576
# The weight gradient's tiles sum over whole images (a thousand positions or more at a
# time): on maps smaller than _LARGE_MAP positions, im2col's GEMMs catch up with them
# sooner, at 288 taps (16x16 maps of 32 channels: 5.6 ms against 5.0), not at 144 (1.3
# against 1.7), nor on 32x32 maps at 288 (2.2 against 2.7).
_LARGE_MAP = 1024
_MAX_SMALL_MAP_WEIGHT_GRAD_TAPS = 144


def applies(x_shape, w_shape, stride, padding, dilation, groups, arrays, weight_grad=False,
            ohw=None):
    """Whether a convolution of ``x_shape`` by ``w_shape`` (or, ``weight_grad``, its
    kernels' gradient) goes this way: compiled kernels, float32 ``arrays``, unit stride
    and dilation, no groups, few taps, an output of its full size (``ohw``) at least 16
    columns wide (8 per vector, a multiple of 8 for the weight gradient) and 4 channels."""
    if not (cpu_kernels.ready() and all(a.dtype.char == "f" for a in arrays)
            and tuple(stride) == (1, 1) and tuple(dilation) == (1, 1) and groups == 1):
        return False
    k, c, kh, kw = w_shape
    oh = x_shape[2] + 2 * padding[0] - kh + 1
    ow = x_shape[3] + 2 * padding[1] - kw + 1
    taps = c * kh * kw
    if k < 4 or ow < 16 or oh < 1 or (ohw is not None and tuple(ohw) != (oh, ow)):
        return False
    if weight_grad:
        most = _MAX_TAPS if oh * ow >= _LARGE_MAP else _MAX_SMALL_MAP_WEIGHT_GRAD_TAPS
        return 2 <= taps <= most and ow % 8 == 0
    return taps <= (_MAX_SMALL_MAP_TAPS if oh * ow <= _SMALL_MAP else _MAX_TAPS)


def _padded(x, kernel, padding):
    """``x`` in zero-padded planes, and the offsets (int64) of the kernel's taps in an
    image's planes (channel, row, column)."""
    n, c, h, w = x.shape
    (ph, pw), (kh, kw) = padding, kernel
    hp, wp = h + 2 * ph, w + 2 * pw
    xp = cpu_kernels.pad_planes(x, hp, wp, ph, pw) if (ph or pw) else numpy.ascontiguousarray(x)
    offs = (numpy.arange(c)[:, None, None] * (hp * wp) + numpy.arange(kh)[:, None] * wp
            + numpy.arange(kw)).reshape(-1)
    return xp, offs


def conv(x, w, bias, padding):
    """The convolution (N, K, OH, OW) of ``x`` (N, C, H, W) by ``w`` (K, C, kh, kw), plus
    ``bias``."""
    n = x.shape[0]
    k, _, kh, kw = w.shape
    xp, offs = _padded(x, (kh, kw), padding)
    out = numpy.empty((n, k, xp.shape[2] - kh + 1, xp.shape[3] - kw + 1), numpy.float32)
    b = numpy.zeros(k, numpy.float32) if bias is None else numpy.ascontiguousarray(bias)
    return cpu_kernels.direct_conv(xp, offs, numpy.ascontiguousarray(w).reshape(k, -1), b, out)


def conv_dw(g, x, w_shape, padding):
    """The gradient of the kernels ``w_shape`` from that of the output ``g`` (N, K, OH, OW)
    and the input ``x``."""
    xp, offs = _padded(x, w_shape[2:], padding)
    return cpu_kernels.direct_conv_dw(numpy.ascontiguousarray(g), xp, offs).reshape(w_shape)
