"""Convolutions with few taps (input channels times kernel size, a first layer's 27) by
their direct sums: compiled tiles of output channels by columns, each summing over the
taps with the weights and the padded input read in place (``cpu_kernels.direct_conv``,
and ``direct_conv_dw`` for the weight gradient). A tap is an offset into the input's
planes, so a dilation is only other offsets; a row stride reads the padded planes rows
further apart, and a column stride reads them cut into the stride's phases, each strided
tap a unit-stride one there. Depthwise convolutions (a group per channel) go the same
way, each output channel's tiles reading its own input planes (at a column stride of 2
in place, every other value of their loads kept: see :func:`_planes`); at a stride their
input gradient is one such convolution per phase of the input.

im2col's GEMM has then an inner dimension of the taps alone, which OpenBLAS runs far
below its speed, after copying the input once per tap; Winograd's transforms need more
channels to pay. Measured on 2 cores against the im2col and Winograd paths (ms; the
weight gradient of w3's second layer stays im2col's, see ``_LARGE_MAP``):

==============================  ==============  ===============
layer (N, C -> K, size; 3x3)    forward         weight gradient
==============================  ==============  ===============
64, 3 -> 32, 32x32 (w3's)       0.67 vs 2.43    0.90 vs 1.82
8, 3 -> 64, 224x224             7.6 vs 17.6     12.6 vs 20.3
64, 16 -> 32, 32x32             3.46 vs 5.81    4.11 vs 6.93
16, 32 -> 32, 32x32             1.49 vs 2.48    2.19 vs 2.65
64, 16 -> 32, 16x16             -               1.29 vs 1.72
64, 32 -> 64, 16x16 (w3's)      3.28 vs 4.10    5.61 vs 4.96
64, 64 -> 32, 16x16 (its dx)    3.39 vs 4.94    -
8, 3 -> 64, 224x224 7x7 /2     10.7 vs 15.3    15.2 vs 17.8
==============================  ==============  ===============

The sums round as a direct convolution's do, in another order than im2col's GEMMs; a
value that is not finite propagates as in any direct sum.
"""

import numpy

from ..backend import cpu_kernels

__all__ = ["applies", "conv", "conv_dw", "depthwise_applies", "depthwise", "depthwise_dw",
           "depthwise_dx_applies", "depthwise_dx"]

# Taps (C * kh * kw) up to which the direct sums go faster. Past them Winograd's
# transforms win (measured at 576 taps: 28x28 maps of 64 channels, 3.4 ms against 2.6;
# 56x56, 12.2 against 8.7) and so do im2col's GEMMs; but on maps of at most _SMALL_MAP
# positions, where those make small GEMMs, up to _MAX_SMALL_MAP_TAPS (16x16 maps at 576
# taps, w3's second layer's input gradient: 3.4 against 4.9).
_MAX_TAPS = 288
_SMALL_MAP = 256
_MAX_SMALL_MAP_TAPS = 576
# The weight gradient's tiles sum over whole images (about a thousand positions at a
# time, one image on larger maps): on maps smaller than _LARGE_MAP positions, im2col's
# GEMMs catch up with them sooner, at 288 taps (16x16 maps of 32 channels: 5.6 ms against
# 5.0), not at 144 (1.3 against 1.7), nor on 32x32 maps at 288 (2.2 against 2.7).
_LARGE_MAP = 1024
_MAX_SMALL_MAP_WEIGHT_GRAD_TAPS = 144
# Input channels under which a strided convolution goes this way (at a column stride,
# its input cut into the stride's phases first: a copy): a first layer's few, where
# im2col's GEMM is thin (ResNet's 7x7 stem at stride 2: 10.7 ms against 15.3, its weight
# gradient 15.2 against 17.8); with 16 channels or more im2col keeps up (3x3 at stride 2
# from 16 channels: a weight gradient of 6.0 ms against 5.2).
_STRIDED_CHANNELS = 16
_TILE_CHANNELS = 4  # output channels of a tile (``_numba_direct.KB``)


def applies(x_shape, w_shape, stride, padding, dilation, groups, arrays, weight_grad=False,
            ohw=None):
    """Whether a convolution of ``x_shape`` by ``w_shape`` (or, ``weight_grad``, its
    kernels' gradient) goes this way: compiled kernels, float32 ``arrays``, no groups, few
    taps, an output of its full size (``ohw``) at least 16 columns wide (a tile's), 4
    channels for the weight gradient; at a stride, fewer than _STRIDED_CHANNELS input
    channels."""
    if not (_compiled(arrays) and groups == 1):
        return False
    k, c, kh, kw = w_shape
    oh, ow = _out_size(x_shape[2:], (kh, kw), stride, padding, dilation)
    taps = c * kh * kw
    if (ow < 16 or oh < 1 or 0 in x_shape  # (a tile: 16 columns)
            or (ohw is not None and tuple(ohw) != (oh, ow))
            or (tuple(stride) != (1, 1) and c >= _STRIDED_CHANNELS)):
        return False
    if weight_grad:
        if k < _TILE_CHANNELS:  # (each tile sums 4 channels of the output's gradient)
            return False
        most = _MAX_TAPS if oh * ow >= _LARGE_MAP else _MAX_SMALL_MAP_WEIGHT_GRAD_TAPS
        return 2 <= taps <= most
    return taps <= (_MAX_SMALL_MAP_TAPS if oh * ow <= _SMALL_MAP else _MAX_TAPS)


def _compiled(arrays):
    """Whether the compiled kernels run and take these arrays' dtype (float32)."""
    return cpu_kernels.ready() and cpu_kernels.native_float32(*arrays)


def _out_size(hw, kernel, stride, padding, dilation):
    return tuple((hw[i] + 2 * padding[i] - dilation[i] * (kernel[i] - 1) - 1) // stride[i] + 1
                 for i in range(2))


def depthwise_applies(x_shape, w_shape, stride, padding, dilation, groups, arrays,
                      weight_grad=False, ohw=None):
    """Whether a depthwise convolution (a group per input channel, one output channel each)
    of ``x_shape`` by ``w_shape`` (or its kernels' gradient) goes this way: each output
    channel's tiles read its own input planes, at any stride (NumPy's path makes a pass
    per tap over a strided view: 4-14x PyTorch's time on MobileNet's and ConvNeXt's
    layers). Compiled kernels, float32, 4 channels or more, as :func:`applies`, but from 8
    columns (tiles of 8 below 16)."""
    if not (_compiled(arrays) and groups == x_shape[1] == w_shape[0] and w_shape[1] == 1):
        return False
    kh, kw = w_shape[2:]
    oh, ow = _out_size(x_shape[2:], (kh, kw), stride, padding, dilation)
    if (groups < 4 or ow < 8 or oh < 1 or 0 in x_shape
            or (ohw is not None and tuple(ohw) != (oh, ow))):
        return False
    return not weight_grad or kh * kw >= 2


def _planes(x, kernel, stride, padding, dilation, strided=False):
    """The planes the kernels read: ``x`` zero-padded (N, C, hq, wq), or cut into its
    stride's phases (N, P * C, hq, wq), phase (a, b) holding the padded planes' rows a, a +
    sh, ... and their columns b, b + sw, ... (only the phases a tap reads). With the
    offsets (int64) of the taps (row, column) in input channel 0's planes, the step from a
    channel's to the next's (hq * wq), and the stride the tiles read the planes at. The
    padded planes at a column stride of 1, and, for a depthwise convolution's tiles
    (``strided``), of 2 where the taps read both phases of a column: those tiles' loads
    take every other value (cutting the phases apart took twice the convolution's time on
    MobileNet's (8, 144, 56, 56); a convolution's taps, many more, each read by four
    output channels, pay for the cut: ResNet's stem is 15-25% slower read strided). There
    tap (i, j) of output (y, z) reads row y sh + i dh, column z sw + j dw, and one row more
    is padded where the tiles' last load would end past the planes. Else the phases, read
    at unit stride: tap (i, j) reads phase ((i dh) % sh, (j dw) % sw) at row y + (i dh) //
    sh, column z + (j dw) // sw."""
    n, c, h, w = x.shape
    (kh, kw), (sh, sw), (ph, pw) = kernel, stride, padding
    rows, cols = numpy.arange(kh) * dilation[0], numpy.arange(kw) * dilation[1]
    hp, wp = h + 2 * ph, w + 2 * pw
    if sw == 1 or strided and sw == 2 and kw > 1 and dilation[1] % 2:
        oh, ow = _out_size((h, w), kernel, stride, padding, dilation)
        last = (((oh - 1) * sh + rows[-1]) * wp + ow * sw + cols[-1]).item()
        hq, wq = hp + (last > hp * wp), wp
        planes = (cpu_kernels.pad_planes(x, hq, wq, ph, pw) if ph or pw or hq > hp
                  else numpy.ascontiguousarray(x))
        return planes, (rows[:, None] * wq + cols).reshape(-1), hq * wq, (sh, sw)
    hq, wq = -(-hp // sh), -(-wp // sw)
    used = sorted({(a % sh, b % sw) for a in rows.tolist() for b in cols.tolist()})
    phase = numpy.array([[used.index((a % sh, b % sw)) for b in cols.tolist()]
                         for a in rows.tolist()], numpy.int64)
    planes = cpu_kernels.phase_planes(numpy.ascontiguousarray(x), stride, padding,
                                      numpy.array(used, numpy.int64), hq, wq)
    taps = (phase * c * (hq * wq) + (rows // sh)[:, None] * wq + cols // sw).reshape(-1)
    return planes, taps, hq * wq, (1, 1)


def _padded(x, kernel, stride, padding, dilation):
    """:func:`_planes`'s planes, the offsets of every tap (channel, row, column) in an
    image's planes (a convolution's, whose output channels all read every input channel),
    and the stride the tiles read them at."""
    planes, taps, step, tiles = _planes(x, kernel, stride, padding, dilation)
    return planes, (numpy.arange(x.shape[1])[:, None] * step + taps).reshape(-1), tiles


def conv(x, w, bias, stride, padding, dilation):
    """The convolution (N, K, OH, OW) of ``x`` (N, C, H, W) by ``w`` (K, C, kh, kw), plus
    ``bias``. Fewer than a tile's 4 output channels (a first layer's input gradient, a
    convolution of the gradient into 3 channels) are computed as 4, the others of zero
    weights, and copied out."""
    k = w.shape[0]
    planes, offs, tiles = _padded(x, w.shape[2:], stride, padding, dilation)
    tiled = max(k, _TILE_CHANNELS)
    weights = numpy.zeros((tiled, offs.size), numpy.float32)
    weights[:k] = w.reshape(k, -1)
    b = numpy.zeros(tiled, numpy.float32)
    if bias is not None:
        b[:k] = bias
    out = numpy.empty((x.shape[0], tiled, *_out_size(x.shape[2:], w.shape[2:], stride,
                                                      padding, dilation)), numpy.float32)
    cpu_kernels.direct_conv(planes, offs, weights, b, out, stride=tiles)
    return out if tiled == k else numpy.ascontiguousarray(out[:, :k])


def conv_dw(g, x, w_shape, stride, padding, dilation):
    """The gradient of the kernels ``w_shape`` from that of the output ``g`` (N, K, OH, OW)
    and the input ``x``."""
    planes, offs, tiles = _padded(x, w_shape[2:], stride, padding, dilation)
    return cpu_kernels.direct_conv_dw(numpy.ascontiguousarray(g), planes, offs,
                                      stride=tiles).reshape(w_shape)


def depthwise(x, w, bias, stride, padding, dilation):
    """The depthwise convolution (N, C, OH, OW) of ``x`` (N, C, H, W) by ``w`` (C, 1, kh,
    kw), plus ``bias``: each channel's tiles read its own planes."""
    c = x.shape[1]
    planes, taps, step, tiles = _planes(x, w.shape[2:], stride, padding, dilation, True)
    out = numpy.empty((x.shape[0], c, *_out_size(x.shape[2:], w.shape[2:], stride, padding,
                                                  dilation)), numpy.float32)
    b = numpy.zeros(c, numpy.float32) if bias is None else numpy.ascontiguousarray(bias)
    return cpu_kernels.direct_conv(planes, taps, numpy.ascontiguousarray(w).reshape(c, -1), b,
                                   out, own=step, stride=tiles)


def depthwise_dw(g, x, w_shape, stride, padding, dilation):
    """The gradient of a depthwise convolution's kernels ``w_shape`` (C, 1, kh, kw)."""
    planes, taps, step, tiles = _planes(x, w_shape[2:], stride, padding, dilation, True)
    return cpu_kernels.direct_conv_dw(numpy.ascontiguousarray(g), planes, taps, own=step,
                                      stride=tiles).reshape(w_shape)


def depthwise_dx_applies(g_shape, w_shape, x_shape, stride, groups, arrays):
    """Whether a strided depthwise convolution's input gradient goes this way: as
    :func:`depthwise_applies`, each of the input's stride phases 8 columns wide or more (the
    tiles' output)."""
    if not (_compiled(arrays) and groups == x_shape[1] == w_shape[0] == g_shape[1]
            and w_shape[1] == 1):
        return False
    return (tuple(stride) != (1, 1) and groups >= 4 and 0 not in x_shape
            and x_shape[3] // stride[1] >= 8)


def depthwise_dx(g, w, x_shape, stride, padding, dilation):
    """The input gradient (N, C, H, W) of a depthwise convolution at a stride. The padded
    input's positions fall into the stride's phases (rows a, a + sh, ...; columns b, b + sw,
    ...), and each phase receives the taps whose offset is its own modulo the stride: a
    unit-stride depthwise convolution of the gradient by those taps, flipped, with
    :func:`depthwise`'s tiles (NumPy's path adds each tap's products through a strided
    view). At a column stride of 2 with taps in both column phases, a row phase's two are
    interleaved into its rows in one pass (``cpu_kernels.interleave_columns``; MobileNet's
    (8, 144, 56, 56): 0.9 ms a gradient where copies into each phase's strided view took
    2.6)."""
    n, c, h, wd = x_shape
    (sh, sw), (ph, pw), (dh, dw) = stride, padding, dilation
    kh, kw = w.shape[2:]
    oh, ow = g.shape[2:]
    # tap i of phase a reads the gradient's row u - (i dh - a) // sh for the phase's row u
    shift_h, shift_w = (kh - 1) * dh // sh, (kw - 1) * dw // sw
    # the phases' rows (columns) up to the input's last, u1 (v1): a bound for every phase,
    # each cut to its own rows below
    u1, v1 = -(-(ph + h) // sh), -(-(pw + wd) // sw)
    gh, gw = shift_h + max(oh, u1), shift_w + max(ow, v1)
    padded = cpu_kernels.pad_planes(numpy.ascontiguousarray(g), gh, gw, shift_h, shift_w)
    weights = numpy.ascontiguousarray(w).reshape(c, kh, kw)
    zero = numpy.zeros(c, numpy.float32)
    dx = numpy.empty(x_shape, numpy.float32)
    paired = sw == 2 and kw > 1 and dw % 2  # (taps in both column phases)
    # a phase's, each written whole; two, a row phase's, where they are interleaved
    parts = [numpy.empty((n, c, u1, v1), numpy.float32) for _ in range(2 if paired else 1)]
    for a in range(sh):
        rows = [i for i in range(kh) if i * dh % sh == a]
        u0 = max(0, -((a - ph) // sh))
        for b in range(sw):
            cols = [j for j in range(kw) if j * dw % sw == b]
            v0 = max(0, -((b - pw) // sw))
            into = dx[:, :, a + u0 * sh - ph::sh, b + v0 * sw - pw::sw]
            if not (rows and cols):
                into[...] = 0
                continue
            part = parts[b if paired else 0]
            taps = numpy.array([(shift_h - i * dh // sh) * gw + shift_w - j * dw // sw
                                for i in rows for j in cols], numpy.int64)
            cpu_kernels.direct_conv(padded, taps, numpy.ascontiguousarray(
                weights[:, rows][:, :, cols]).reshape(c, -1), zero, part, own=gh * gw)
            if not paired:
                cpu_kernels.copy_into(into, part[:, :, u0:u0 + into.shape[2],
                                                 v0:v0 + into.shape[3]])
        if paired and rows:
            count = len(range(a + u0 * sh - ph, h, sh))  # the row phase's rows
            if count:
                cpu_kernels.interleave_columns(dx, *parts, a, sh, ph, pw, u0, count)
    return dx
