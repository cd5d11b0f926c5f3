"""3x3 convolutions at unit stride by Winograd's F(2x2, 3x3) (Lavin and Gray, 2016): the
forward, and through it the input gradient (a convolution of the gradient,
:func:`._conv_numpy.conv_dx`), and the weight gradient by the adjoint transforms.

Each 2x2 output block takes sixteen products per input and output channel where im2col's
GEMM takes thirty-six, so the GEMMs (sixteen per chunk of images, one per position of the
transformed 4x4 tile) do 4/9 of the work; the transforms are one pass each over the
input, the products and the output (compiled kernels: ``cpu_kernels.winograd_*``). The
sums round differently from the direct ones (float32 errors of a few units in the last
place of the largest terms, as the direct sums' own). A transform adds values of
opposite sign, where an infinity makes NaN the direct sum would not: a result that is not
finite goes back to the im2col path, which then computes PyTorch's.
"""

import numpy

from ..backend import cpu_kernels

__all__ = ["applies", "conv", "conv_dw"]

# Bytes of transformed tiles and products a chunk of images makes, so the GEMMs read them
# from cache.
_CHUNK_BYTES = 1 << 23
# Channels from which the transforms pay for themselves: fewer input channels make GEMMs
# with too short an inner dimension, fewer output ones products too thin for OpenBLAS.
_MIN_CHANNELS = 16
_MIN_WEIGHT_GRAD_CHANNELS = 64 * 64  # input times output channels
_MIN_TILES = 96  # in the batch
# Input times output channels up to which it goes this way: the kernels' transforms,
# (16, K, C), are transients 16/9 the weights' size (16.8 MB at ResNet's 512x512, the
# largest measured to pay); past them im2col, whose transients stay a few MB.
_MAX_CHANNEL_PAIRS = 512 * 512
_MIN_FORWARD_WORK = 1 << 22  # multiply-adds of one of the forward's GEMMs


def _tiles(oh, ow):
    return -(-oh // 2), -(-ow // 2)


def applies(x_shape, w_shape, stride, padding, dilation, groups, arrays, weight_grad=False,
            ohw=None):
    """Whether a convolution of ``x_shape`` by ``w_shape`` (or, ``weight_grad``, its
    kernels' gradient) goes this way: compiled kernels, float32 ``arrays``, a 3x3 kernel
    at unit stride and dilation, no groups, enough channels, an output of its full size
    (``ohw``: a transposed convolution's gradient may ask for less).

    Each needs tiles enough to amortize the kernels' transform, (16, K, C): ResNet's 7x7
    maps of 512 channels gain at batch 8 (128 tiles: 10.5 ms against im2col's 12.6) and
    lose at 4 (7.4 against 6.4). The forward's GEMMs, (K, C) by (C, tiles), also need
    work enough: a single 28x28 or 56x56 image of ResNet's (3.2M multiply-adds a GEMM)
    runs a tenth slower than im2col's one GEMM. The weight gradient's GEMMs make (K, C)
    matrices over all the tiles: below 64x64 channels they run too far below OpenBLAS's
    speed (w3's 32 -> 64: 6.0 ms against im2col's 5.3); above, rn_layer4 gains 26 -> 15.
    """
    if not (cpu_kernels.ready() and cpu_kernels.native_float32(*arrays)
            and tuple(w_shape[2:]) == (3, 3) and tuple(stride) == (1, 1)
            and tuple(dilation) == (1, 1) and groups == 1):
        return False
    n, c, h, w = x_shape
    k = w_shape[0]
    oh, ow = h + 2 * padding[0] - 2, w + 2 * padding[1] - 2
    th, tw = _tiles(oh, ow)
    tiles = n * th * tw
    if weight_grad:
        enough = c * k >= _MIN_WEIGHT_GRAD_CHANNELS
    else:
        enough = k * c * tiles >= _MIN_FORWARD_WORK
    return (min(c, k) >= _MIN_CHANNELS and c * k <= _MAX_CHANNEL_PAIRS and min(th, tw) >= 2
            and tiles >= _MIN_TILES and (ohw is None or tuple(ohw) == (oh, ow)) and enough)


def _chunks(n, channels, tiles):
    """Image chunks whose transformed tiles and products (``channels`` in all) fit
    ``_CHUNK_BYTES``."""
    step = max(1, _CHUNK_BYTES // (16 * channels * tiles * 4))
    return [(a, min(n, a + step)) for a in range(0, n, step)]


def _buffers(chunks, tiles, *channels):
    """A flat buffer for each of ``channels``, holding (16, c, tiles) for the largest chunk:
    one allocation a call, which every chunk reuses."""
    most = max(b - a for a, b in chunks) * tiles
    return [numpy.empty(16 * c * most, numpy.float32) for c in channels]


def _part(buffer, c, tiles):
    return buffer[:16 * c * tiles].reshape(16, c, tiles)


def conv(x, w, bias, padding, flipped=False):
    """The convolution (N, K, OH, OW) of ``x`` (N, C, H, W) by ``w`` (K, C, 3, 3), plus
    ``bias``; None where a value is not finite. ``flipped``: by ``w`` (C, K, 3, 3)'s
    kernels flipped, its channel axes swapped (an input gradient)."""
    n, c, h, wd = x.shape
    k = w.shape[1 if flipped else 0]
    oh, ow = h + 2 * padding[0] - 2, wd + 2 * padding[1] - 2
    th, tw = _tiles(oh, ow)
    u = cpu_kernels.winograd_weights(w, flipped)
    b = numpy.zeros(k, numpy.float32) if bias is None else numpy.ascontiguousarray(bias)
    out = numpy.empty((n, k, oh, ow), numpy.float32)
    chunks = _chunks(n, c + k, th * tw)
    vb, mb = _buffers(chunks, th * tw, c, k)
    for a, z in chunks:
        tiles = (z - a) * th * tw
        v = cpu_kernels.winograd_tiles(x[a:z], th, tw, padding, _part(vb, c, tiles))
        m = numpy.matmul(u, v, out=_part(mb, k, tiles))
        if not cpu_kernels.winograd_untile(m, b, out[a:z]):
            return None
    return out


def conv_dw(g, x, padding):
    """The gradient of the 3x3 kernels from that of the output ``g`` (N, K, OH, OW) and
    the input ``x``; None where a value is not finite."""
    n, c = x.shape[:2]
    k = g.shape[1]
    th, tw = _tiles(*g.shape[2:])
    chunks = _chunks(n, c + k, th * tw)
    vb, mb = _buffers(chunks, th * tw, c, k)
    du = cpu_kernels.winograd_positions(k, c)
    for i, (a, z) in enumerate(chunks):
        tiles = (z - a) * th * tw
        v = cpu_kernels.winograd_tiles(x[a:z], th, tw, padding, _part(vb, c, tiles))
        dm = cpu_kernels.winograd_grad_tiles(numpy.ascontiguousarray(g[a:z]),
                                             _part(mb, k, tiles))
        if i == 0:
            numpy.matmul(dm, v.transpose(0, 2, 1), out=du)
        else:
            du += numpy.matmul(dm, v.transpose(0, 2, 1))
    dw = cpu_kernels.winograd_weights_grad(du)
    return dw if cpu_kernels.all_finite(dw) else None
