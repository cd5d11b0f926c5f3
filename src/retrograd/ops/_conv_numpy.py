"""NumPy-only kernels of the convolution family (:mod:`.convolution`): 2-D convolutions on
a padded row grid, in chunks of images that stay in cache (``conv``, ``conv_dx``,
``conv_dw``; those of few taps by direct sums, :mod:`._conv_direct`, and 3x3 ones at unit
stride by Winograd's transforms, :mod:`._conv_winograd`), and depthwise ones the direct
tiles do not take as one multiply-add per kernel offset. They read strides
and write into views, which only NumPy arrays allow; the family's rules, written on any
array namespace, compute the same maps, and ``tests/ops/test_conv_kernels.py`` pins the
two together. Their copies and padding go through ``cpu_kernels`` (``copy_into``,
``pad_planes``): in parts on OpenBLAS's threads where numba is installed, else NumPy's.
"""

import math

import numpy
from numpy.lib.stride_tricks import as_strided

from ..backend.cpu_kernels import all_finite, col2im, contiguous, copy_into, pad_planes, takes
from . import _conv_direct, _conv_winograd

__all__ = ["conv", "conv_dx", "conv_dw", "conv_transpose", "bias_grad", "finite"]


def _out_len(n, k, s, pads, d):
    return (n + pads[0] + pads[1] - d * (k - 1) - 1) // s + 1


# NumPy path. With unit column stride, the image rows are laid ``r >= W + pw`` apart in a
# zeroed buffer (the gap after one row is the left padding of the next) and each output row
# is computed across all ``r`` columns (the last ``r - OW`` of them junk: cropped from
# outputs, zero in gradients). Each (channel, kernel offset, image) block of the im2col
# matrix is then one contiguous run of the buffer, and col2im one long add per offset.
def _gridded(w_shape, width):
    """Whether to use the row grid: it speeds up the im2col copy and col2im, which scale
    with C*kh*kw, but slows the output's crop and the gradient's transpose, which scale
    with the output channels (so not for a first layer's few input channels), and its junk
    columns are GEMM work: on maps narrower than 16 columns more than a sixteenth of it
    (ResNet's 7x7 maps of 512 channels: 12 -> 11 ms a forward without the grid)."""
    return w_shape[1] * w_shape[2] * w_shape[3] > w_shape[0] and width >= 16


def _grid(hw, ohw, kernel, stride, padding, dilation, grid):
    """(r, wq, hb): buffer row length, columns computed per output row, buffer rows (the
    padded height, plus what the junk columns of the last output row read past it)."""
    (kh, kw), (sh, sw), (dh, dw) = kernel, stride, dilation
    if sw == 1 and grid:  # at least ``ow`` columns (a padding wider than the kernel's reach)
        r = wq = max(hw[1] + padding[1], ohw[1])
    else:
        r, wq = hw[1] + 2 * padding[1], ohw[1]
    last = ((ohw[0] - 1) * sh + (kh - 1) * dh) * r + (wq - 1) * sw + (kw - 1) * dw
    return r, wq, max(hw[0] + 2 * padding[0], last // r + 1)


def _windows(x, kernel, stride, padding, dilation, grid, ohw=None):
    """The windows of ``x`` (N, C, H, W) as a (C, kh, kw, N, OH, Wq) strided view of its
    zero-padded buffer, and (OH, OW, Wq). ``ohw`` limits the output size (a transposed
    convolution's output_padding)."""
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = kernel, stride, padding, dilation
    n, c, h, w = x.shape
    if ohw is None:
        ohw = ((h + 2 * ph - dh * (kh - 1) - 1) // sh + 1,
               (w + 2 * pw - dw * (kw - 1) - 1) // sw + 1)
    oh, ow = ohw
    r, wq, hb = _grid((h, w), ohw, kernel, stride, padding, dilation, grid)
    if hb != h or r != w or not x.flags.c_contiguous:
        x = pad_planes(x, hb, r, ph, pw)
    s0, s1, s2, s3 = _c_strides(x)
    return as_strided(x, (c, kh, kw, n, oh, wq), (s1, s2 * dh, s3 * dw, s0, s2 * sh, s3 * sw),
                      writeable=False), oh, ow, wq


def _c_strides(x):
    """The strides of C-contiguous ``x`` as its layout implies: NumPy flags an array
    contiguous whatever the stride of a size-1 dim (a step-sliced view keeps its step
    there), and the grid's views step along those dims."""
    strides, step = [], x.itemsize
    for n in reversed(x.shape):
        strides.append(step)
        step *= n
    return tuple(reversed(strides))


# The GEMMs run on chunks of images whose im2col matrix stays in cache (4 MiB measured
# best on 2 cores), so each chunk's columns are still cached when the GEMM reads them (or
# col2im adds them) and its result when copied out (a tenth off w3's step). An im2col
# matrix of at most _SHORT rows (a first layer's 27) is also cut to at most
# _CHUNK_COLUMNS columns (or one image): OpenBLAS's GEMMs with so short an inner
# dimension run up to half again slower on wider operands (w3's first convolution: 4.4
# ms in chunks of 38 images, 2.5 in single images). Taller ones keep the larger chunks:
# more GEMM calls, each a sync of OpenBLAS's threads, slowed w3's second layer on 2
# busy cores.
_CHUNK_BYTES = 1 << 22
_SHORT = 64
_CHUNK_COLUMNS = 1536


def _chunks(n, k, columns, itemsize):
    """(start, stop) of the image chunks, an image's im2col matrix being ``k`` rows of
    ``columns`` columns."""
    step = _CHUNK_BYTES // max(k * columns * itemsize, 1)
    if k <= _SHORT:
        step = min(step, _CHUNK_COLUMNS // max(columns, 1))
    step = max(1, step)
    return [(a, min(n, a + step)) for a in range(0, n, step)] or [(0, 0)]


def _rows(g, wq):
    """(N, O, OH, OW) -> (O, N*OH*Wq), zero in the junk columns."""
    n, o, oh, ow = g.shape
    rows = numpy.empty((o, n, oh, wq), dtype=g.dtype)
    copy_into(rows[..., :ow], g.transpose(1, 0, 2, 3))
    rows[..., ow:] = 0
    return rows.reshape(o, -1)


def _grouped(a, b, groups):
    """``a @ b`` per group: a (O, K) and b (K, M) split into ``groups`` blocks of rows."""
    if groups == 1:
        return numpy.matmul(a, b)
    out = numpy.matmul(a.reshape(groups, a.shape[0] // groups, a.shape[1]),
                       b.reshape(groups, b.shape[0] // groups, b.shape[1]))
    return out.reshape(a.shape[0], b.shape[1])  # explicit sizes: M may be 0


def conv(x, w, bias, stride, padding, dilation, groups, ohw=None, flipped=False):
    """Convolution as GEMMs over chunks of images (a bias rides along as one more column of
    the weight, against a row of ones); each result's crop of junk columns and transpose
    back to NCHW is one copy into the output. ``flipped``: by :func:`_flipped` of ``w``
    (the input gradient's convolution), which the Winograd path reads from ``w`` itself."""
    original, w = w, (_flipped(w, groups) if flipped else w)
    arrays = (x, w) if bias is None else (x, w, bias)
    if _conv_direct.depthwise_applies(x.shape, w.shape, stride, padding, dilation, groups,
                                      arrays, ohw=ohw):
        return _conv_direct.depthwise(x, w, bias, stride, padding, dilation)
    if _depthwise(w.shape, groups):
        return _dw_conv(x, w, bias, stride, padding, dilation, ohw)
    if _conv_direct.applies(x.shape, w.shape, stride, padding, dilation, groups, arrays,
                            ohw=ohw):
        return _conv_direct.conv(x, w, bias, stride, padding, dilation)
    if _conv_winograd.applies(x.shape, w.shape, stride, padding, dilation, groups, arrays,
                              ohw=ohw):
        out = _conv_winograd.conv(x, original, bias, padding, flipped)
        if out is not None:
            return out
    o = w.shape[0]
    view, oh, ow, wq = _windows(x, w.shape[2:], stride, padding, dilation,
                                   _gridded(w.shape, x.shape[3]), ohw)
    n, k, lq = x.shape[0], view.shape[0] * view.shape[1] * view.shape[2], oh * wq
    fused = bias is not None and groups == 1
    wm = w.reshape(o, -1)
    if fused:
        wm = numpy.concatenate((wm, bias.reshape(o, 1)), axis=1)
    chunks = _chunks(n, k, lq, x.itemsize)
    cols = numpy.empty((k + fused, (chunks[0][1] - chunks[0][0]) * lq), dtype=x.dtype)
    if fused:
        cols[k] = 1
    out = numpy.empty((n, o, oh, ow), dtype=x.dtype)
    direct = wq == ow and groups == 1 and chunks[0][1] - chunks[0][0] == 1
    for a, b in chunks:
        c = cols[:, :(b - a) * lq]
        copy_into(c[:k].reshape(view.shape[:3] + (b - a, oh, wq)), view[:, :, :, a:b])
        if direct:  # one image, no junk columns: the GEMM writes its output plane
            numpy.matmul(wm, c, out=out[a].reshape(o, lq))
            continue
        res = _grouped(wm, c, groups).reshape(o, b - a, oh, wq)
        copy_into(out[a:b], res[..., :ow].transpose(1, 0, 2, 3))
    if bias is not None and not fused:
        out += bias.reshape(-1, 1, 1)
    return out


def conv_dx(g, w, x_shape, stride, padding, dilation, groups):
    """The input gradient: at unit stride a convolution (:func:`_full_padding`), else per
    chunk of images a GEMM to columns, then one strided add per kernel offset into a (C,
    N, padded H, W) buffer, returned as a compact (N, C, H, W) copy, as PyTorch's (a view
    would keep the padded buffer alive as the gradient)."""
    full = _full_padding(w.shape, g.shape, x_shape, stride, padding, dilation)
    if full is not None and (not _depthwise(w.shape, groups) or _conv_direct.depthwise_applies(
            g.shape, w.shape, (1, 1), full, dilation, groups, (g, w))):
        return conv(g, w, None, (1, 1), full, dilation, groups, flipped=True)
    if _conv_direct.depthwise_dx_applies(g.shape, w.shape, x_shape, stride, groups, (g, w)):
        return _conv_direct.depthwise_dx(g, w, x_shape, stride, padding, dilation)
    if _depthwise(w.shape, groups):
        return _dw_conv_dx(g, w, x_shape, stride, padding, dilation)
    n, o, oh, ow = g.shape
    kh, kw = w.shape[2:]
    c, h, wd = x_shape[1:]
    (ph, pw), (sh, sw), (dh, dw) = padding, stride, dilation
    r, wq, hb = _grid((h, wd), (oh, ow), (kh, kw), stride, padding, dilation,
                      _gridded(w.shape, wd))
    lq = oh * wq
    rows = _rows(g, wq)
    if groups == 1:
        wt = w.reshape(o, -1).T
    else:
        wt = w.reshape(groups, o // groups, -1).transpose(0, 2, 1)
    out = numpy.zeros((c, n, hb, r), dtype=g.dtype)
    flat = out.reshape(-1)
    s0, s1, s2, s3 = out.strides
    for a, b in _chunks(n, c * kh * kw, lq, g.itemsize):
        part = rows[:, a * lq:b * lq]
        if groups > 1:
            part = part.reshape(groups, o // groups, -1)
        cols = numpy.matmul(wt, part).reshape(c, kh, kw, b - a, oh, wq)
        if takes(out, cols):
            col2im(cols, out, a, stride, dilation)
            continue
        for i in range(kh):
            for j in range(kw):
                at = as_strided(flat[a * r * hb + i * dh * r + j * dw:], (c, b - a, oh, wq),
                                (s0, s1, s2 * sh, s3 * sw))
                at += cols[:, i, j]
    return contiguous(out[:, :, ph:ph + h, pw:pw + wd].transpose(1, 0, 2, 3))


# At unit stride the input gradient is itself a convolution: of the gradient, padded to
# its "full" size, with the kernel flipped and its channel axes swapped. Its im2col copy
# gathers where col2im adds into strided windows, one pass per kernel offset: measured
# faster at every channel ratio tried, 3 -> 32 to 64 -> 64 (w3's second layer: 11.5 ms ->
# 10.1, thread time).
def _full_padding(w_shape, g_shape, x_shape, stride, padding, dilation):
    """The padding of the input gradient as a convolution, or None where it is not one (a
    stride, a padding wider than the kernel's reach, or a transposed convolution's
    output_padding: rows and columns the convolution would not reach)."""
    full = tuple(dilation[i] * (w_shape[2 + i] - 1) - padding[i] for i in range(2))
    if tuple(stride) != (1, 1) or min(full) < 0 or any(
            g_shape[2 + i] + full[i] - padding[i] != x_shape[2 + i] for i in range(2)):
        return None
    return full


def _flipped(w, groups):
    """(O, C/g, kh, kw) -> (C, O/g, kh, kw), each group's channel axes swapped and its
    kernel flipped: the weight of the input gradient as a convolution."""
    o, cg, kh, kw = w.shape
    w = w.reshape(groups, o // groups, cg, kh, kw)[..., ::-1, ::-1].transpose(0, 2, 1, 3, 4)
    return w.reshape(groups * cg, o // groups, kh, kw)


def conv_dw(g, x, w_shape, stride, padding, dilation, groups):
    """The weight gradient: per chunk of images, (cols @ rows.T).T summed (OpenBLAS's
    faster orientation for these long, thin operands), returned row-major as PyTorch's
    (AccumulateGrad then keeps it instead of copying it into the weight's layout)."""
    if _conv_direct.depthwise_applies(x.shape, w_shape, stride, padding, dilation, groups,
                                      (g, x), weight_grad=True, ohw=g.shape[2:]):
        return _conv_direct.depthwise_dw(g, x, w_shape, stride, padding, dilation)
    if _depthwise(w_shape, groups, 2):
        return _dw_conv_dw(g, x, w_shape, stride, padding, dilation)
    if _conv_direct.applies(x.shape, w_shape, stride, padding, dilation, groups, (g, x),
                            weight_grad=True, ohw=g.shape[2:]):
        return _conv_direct.conv_dw(g, x, w_shape, stride, padding, dilation)
    if _conv_winograd.applies(x.shape, w_shape, stride, padding, dilation, groups, (g, x),
                              weight_grad=True):
        dw = _conv_winograd.conv_dw(g, x, padding)
        if dw is not None:
            return dw
    view, _, _, wq = _windows(x, w_shape[2:], stride, padding, dilation,
                              _gridded(w_shape, x.shape[3]), g.shape[2:])
    n, o, oh = x.shape[0], g.shape[1], view.shape[4]
    k, lq = view.shape[0] * view.shape[1] * view.shape[2], oh * wq
    chunks = _chunks(n, k, lq, x.itemsize)
    # chunks of one image without junk columns take the gradient's planes as they are
    # (w3's first layer: its whole-batch transpose was a third of the weight gradient)
    rows = None if wq == g.shape[3] and chunks[0][1] - chunks[0][0] == 1 else _rows(g, wq)
    cols = numpy.empty((k, (chunks[0][1] - chunks[0][0]) * lq), dtype=x.dtype)
    dw = None
    for a, b in chunks:
        c = cols[:, :(b - a) * lq]
        copy_into(c.reshape(view.shape[:3] + (b - a, oh, wq)), view[:, :, :, a:b])
        part = g[a].reshape(o, lq) if rows is None else rows[:, a * lq:b * lq]
        if groups > 1:
            d = numpy.matmul(part.reshape(groups, o // groups, -1),
                             c.reshape(groups, k // groups, -1).transpose(0, 2, 1))
        else:
            d = numpy.matmul(c, part.T).T
        if dw is None:
            dw = d
        else:
            dw += d
    return contiguous(dw).reshape(w_shape)


# Depthwise convolutions (one input channel per group, a weight of (C*M, 1, kh, kw)): the
# im2col copy of the GEMM path costs kh*kw times the input for GEMMs of one row per group.
# Here each kernel offset is instead one broadcast multiply (and add) over a strided view
# of the padded row grid, block by block of images or channels, so the block's accumulator
# stays in cache. That work grows with the channel multiplier M and the GEMMs' does not:
# measured, the GEMMs win from M = 2 on for the forward and input gradient, and by M = 4
# for the weight gradient (one dot product per kernel offset here), as for the large M of a
# batched weight gradient (its batch folded into the channels).
_DW_CHUNK_BYTES = 1 << 20
_DW_TABLE_BYTES = 1 << 20


def _depthwise(w_shape, groups, most=1):
    """Whether to take the depthwise path: one input channel per group, at most ``most``
    output channels per group."""
    return w_shape[1] == 1 and w_shape[0] <= most * groups


def _dw_space(ohq, stride, r):
    """The spatial shape of a window: (OH*Wq,) when its rows are one run of the grid."""
    return (ohq[0] * ohq[1],) if stride == (1, 1) and ohq[1] == r else ohq


def _dw_taps(buf, ohq, kernel, stride, dilation, writeable=False):
    """Per kernel offset, the (N, C, *space) window of ``buf`` (N, C, hb, r) it reads."""
    (kh, kw), (sh, sw), (dh, dw) = kernel, stride, dilation
    flat = buf.reshape(-1)
    s0, s1, s2, s3 = _c_strides(buf)
    r = buf.shape[3]
    shape, strides = buf.shape[:2] + ohq, (s0, s1, s2 * sh, s3 * sw)
    if len(_dw_space(ohq, tuple(stride), r)) == 1:
        shape, strides = shape[:2] + (ohq[0] * ohq[1],), strides[:2] + (s3,)
    return [as_strided(flat[i * dh * r + j * dw:], shape, strides, writeable=writeable)
            for i in range(kh) for j in range(kw)]


def _dw_padded(x, hb, r, padding):
    n, c, h, w = x.shape
    if hb == h and r == w and x.flags.c_contiguous:
        return x
    buf = numpy.zeros((n, c, hb, r), dtype=x.dtype)
    buf[:, :, padding[0]:padding[0] + h, padding[1]:padding[1] + w] = x
    return buf


def _dw_weights(w, c, space):
    """(C*M, 1, kh, kw) -> (kh*kw, C, M) + (1,) * len(space): each kernel offset's weights,
    broadcast over a window of one run when small (whole-run loops multiply faster)."""
    wk = numpy.ascontiguousarray(w.reshape(c, w.shape[0] // c, -1).transpose(2, 0, 1))
    wk = wk.reshape(wk.shape + (1,) * len(space))
    if len(space) == 1 and wk.nbytes * space[0] <= _DW_TABLE_BYTES:
        wk = numpy.ascontiguousarray(numpy.broadcast_to(wk, wk.shape[:-1] + space))
    return wk


def _dw_grid_rows(g, c, wq, space):
    """(N, C*M, OH, OW) -> (N, C, M, *space), zero in the junk columns."""
    n, o, oh, ow = g.shape
    if wq == ow:
        return g.reshape((n, c, o // c) + space)
    rows = numpy.zeros((n, c, o // c, oh, wq), dtype=g.dtype)
    rows[..., :ow] = g.reshape(n, c, o // c, oh, ow)
    return rows.reshape((n, c, o // c) + space)


def _dw_blocks(n, c, channel_bytes):
    """Blocks (images a:b, channels c0:c1) of about ``_DW_CHUNK_BYTES`` of working set
    (``channel_bytes`` per image and channel): whole images, or channels of one image."""
    per = max(1, _DW_CHUNK_BYTES // max(channel_bytes, 1))
    if per >= c:
        step = per // c
        blocks = [(a, min(n, a + step), 0, c) for a in range(0, n, step)]
    else:
        blocks = [(a, a + 1, c0, min(c, c0 + per)) for a in range(n) for c0 in range(0, c, per)]
    return blocks or [(0, 0, 0, c)]


def _dw_conv(x, w, bias, stride, padding, dilation, ohw):
    n, c, h, wd = x.shape
    o, kernel = w.shape[0], w.shape[2:]
    m = o // c
    if ohw is None:
        ohw = tuple(_out_len(x.shape[2 + i], kernel[i], stride[i], (padding[i],) * 2,
                             dilation[i]) for i in range(2))
    oh, ow = ohw
    r, wq, hb = _grid((h, wd), ohw, kernel, stride, padding, dilation, True)
    space = _dw_space((oh, wq), tuple(stride), r)
    taps = _dw_taps(_dw_padded(x, hb, r, padding), (oh, wq), kernel, stride, dilation)
    wk = _dw_weights(w, c, space)
    out = numpy.empty((n, o, oh, ow), dtype=x.dtype)
    blocks = _dw_blocks(n, c, 2 * m * oh * wq * x.itemsize)
    shape = (blocks[0][1] - blocks[0][0], blocks[0][3] - blocks[0][2], m) + space
    tmp = numpy.empty(shape, dtype=x.dtype)
    if wq == ow:  # accumulate in the output itself
        acc = out.reshape((n, c, m) + space)
    else:
        acc = numpy.empty(shape, dtype=x.dtype)
    for a, b, c0, c1 in blocks:
        t = tmp[:b - a, :c1 - c0]
        s = acc[a:b, c0:c1] if wq == ow else acc[:b - a, :c1 - c0]
        numpy.multiply(taps[0][a:b, c0:c1, None], wk[0, c0:c1], out=s)
        for tap, wt in zip(taps[1:], wk[1:], strict=True):
            numpy.multiply(tap[a:b, c0:c1, None], wt[c0:c1], out=t)
            numpy.add(s, t, out=s)
        if wq != ow:
            out[a:b, c0 * m:c1 * m] = s.reshape(b - a, (c1 - c0) * m, oh, wq)[..., :ow]
    if bias is not None:
        out += bias.reshape(-1, 1, 1)
    return out


def _dw_conv_dx(g, w, x_shape, stride, padding, dilation):
    """(A channel multiplier of 1.) With unit stride, the convolution of the gradient with
    the flipped kernel (a gather: a third faster than adding into strided windows), else
    one multiply and one strided add per kernel offset."""
    n, c, oh, ow = g.shape
    h, wd = x_shape[2:]
    kernel = w.shape[2:]
    full = tuple(dilation[i] * (kernel[i] - 1) - padding[i] for i in range(2))
    if tuple(stride) == (1, 1) and min(full) >= 0 and all(
            _out_len(g.shape[2 + i], kernel[i], 1, (full[i],) * 2, dilation[i]) == x_shape[2 + i]
            for i in range(2)):
        return _dw_conv(g, w[:, :, ::-1, ::-1], None, (1, 1), full, dilation, None)
    r, wq, hb = _grid((h, wd), (oh, ow), kernel, stride, padding, dilation, True)
    space = _dw_space((oh, wq), tuple(stride), r)
    rows = _dw_grid_rows(g, c, wq, space)
    rows = rows.reshape(rows.shape[:2] + space)
    wk = _dw_weights(w, c, space)[:, :, 0]
    out = numpy.zeros((n, c, hb, r), dtype=g.dtype)
    taps = _dw_taps(out, (oh, wq), kernel, stride, dilation, writeable=True)
    blocks = _dw_blocks(n, c, 3 * oh * wq * g.itemsize)
    tmp = numpy.empty((blocks[0][1] - blocks[0][0], blocks[0][3] - blocks[0][2]) + space,
                      dtype=g.dtype)
    for a, b, c0, c1 in blocks:
        t = tmp[:b - a, :c1 - c0]
        for tap, wt in zip(taps, wk, strict=True):
            at = tap[a:b, c0:c1]
            numpy.multiply(rows[a:b, c0:c1], wt[c0:c1], out=t)
            numpy.add(at, t, out=at)
    return out[:, :, padding[0]:padding[0] + h, padding[1]:padding[1] + wd]


def _dw_conv_dw(g, x, w_shape, stride, padding, dilation):
    n, c, h, wd = x.shape
    o, kernel = w_shape[0], w_shape[2:]
    oh, ow = g.shape[2:]
    r, wq, hb = _grid((h, wd), (oh, ow), kernel, stride, padding, dilation, True)
    space = _dw_space((oh, wq), tuple(stride), r)
    rows = _dw_grid_rows(g, c, wq, space)
    taps = _dw_taps(_dw_padded(x, hb, r, padding), (oh, wq), kernel, stride, dilation)
    dw = numpy.zeros((len(taps), c, o // c), dtype=numpy.result_type(g, x))
    axes = (0,) + tuple(range(3, 2 + len(space)))  # images, and output rows if not in runs
    for a, b, c0, c1 in _dw_blocks(n, c, (o // c + 1) * oh * wq * g.itemsize):
        for k, tap in enumerate(taps):
            dw[k, c0:c1] += numpy.vecdot(rows[a:b, c0:c1], tap[a:b, c0:c1, None]).sum(axis=axes)
    return numpy.ascontiguousarray(dw.transpose(1, 2, 0)).reshape(w_shape)



def conv_transpose(x, w, out_shape, stride, padding, dilation, groups, bias):
    """A transposed convolution: the input gradient's map, made row-major, the bias added in
    place."""
    out = numpy.ascontiguousarray(conv_dx(x, w, out_shape, stride, padding, dilation, groups))
    if bias is not None:
        out += bias.reshape(-1, 1, 1)
    return out


def bias_grad(grad):
    """A matrix-vector product: faster than a reduction over the outer and inner axes."""
    n, o = grad.shape[:2]
    g = grad.reshape(n * o, math.prod(grad.shape[2:]))
    return numpy.matmul(g, numpy.ones(g.shape[1], dtype=g.dtype)).reshape(n, o).sum(0)


def finite(a):
    """Whether ``a`` holds no infinity or NaN. The kernels' zero products (junk grid columns,
    a depthwise gradient's padded gather) would spread one as NaN into gradients PyTorch
    keeps finite: then the family's plain im2col GEMMs run instead, as PyTorch's."""
    if a.size and takes(a):
        return all_finite(a)
    return bool(numpy.isfinite(a).all())
