"""Convolution and pooling on strided windows: im2col as an ``as_strided`` copy, then a
GEMM; backward as GEMMs plus col2im (one strided add per kernel offset).

On NumPy arrays the convolution runs on a padded row grid, in chunks of images that stay
in cache (``_np_conv`` and its two gradients). Under ``create_graph`` the rules run on
Tensors instead, through ``_im2col`` and ``_col2im``: adjoint linear maps, each the
other's vjp, so a convolution's backward is itself differentiable (double backward, as
PyTorch's ``convolution_backward``). Depthwise convolutions take their own NumPy path, one
multiply-add per kernel offset (``_np_dw_conv`` and its gradients). One-dimensional
convolutions run as 2-D ones of height 1.
"""

import math

import numpy
from numpy.lib.stride_tricks import as_strided

from ._registry import FUNCTIONS, _pretty, apply, defop
from .._tensor import warn_once, wrap

__all__ = ["convolution", "max_pool2d", "avg_pool2d", "adaptive_avg_pool2d"]


def _is_np(xp):
    return xp is numpy


def _out_len(n, k, s, pads, d):
    return (n + pads[0] + pads[1] - d * (k - 1) - 1) // s + 1


# ---- im2col / col2im ----------------------------------------------------------------------
def _im2col_np(x, kernel, stride, padding, dilation, fill=0):
    """(..., H, W) -> (..., kh, kw, OH, OW): every window of the padded input, contiguous."""
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = kernel, stride, padding, dilation
    if any(ph) or any(pw):
        cfg = ((0, 0),) * (x.ndim - 2) + (ph, pw)
        x = numpy.pad(x, cfg, constant_values=fill)
    oh = (x.shape[-2] - dh * (kh - 1) - 1) // sh + 1
    ow = (x.shape[-1] - dw * (kw - 1) - 1) // sw + 1
    st = x.strides
    view = as_strided(x, x.shape[:-2] + (kh, kw, oh, ow),
                      st[:-2] + (st[-2] * dh, st[-1] * dw, st[-2] * sh, st[-1] * sw),
                      writeable=False)
    return numpy.ascontiguousarray(view)


def _col2im_np(cols, shape, kernel, stride, padding, dilation):
    """The adjoint of :func:`_im2col_np`: windows summed back into an input of ``shape``."""
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = kernel, stride, padding, dilation
    h, w = shape[-2] + ph[0] + ph[1], shape[-1] + pw[0] + pw[1]
    out = numpy.zeros(shape[:-2] + (h, w), dtype=cols.dtype)
    oh, ow = cols.shape[-2:]
    for i in range(kh):
        for j in range(kw):
            out[..., i * dh:i * dh + sh * (oh - 1) + 1:sh,
                j * dw:j * dw + sw * (ow - 1) + 1:sw] += cols[..., i, j, :, :]
    return out[..., ph[0]:h - ph[1], pw[0]:w - pw[1]]


_im2col_op = defop(
    "im2col", lambda xp, self, kernel, stride, padding, dilation:
    _im2col_np(self, kernel, stride, padding, dilation),
    vjp={"self": lambda xp, grad, self_shape, kernel, stride, padding, dilation:
         _col2im(xp, grad, self_shape, kernel, stride, padding, dilation)},
    batched={"self": lambda grad, self_shape, kernel, stride, padding, dilation, batch:
             _col2im_np(grad, (batch, *self_shape), kernel, stride, padding, dilation)},
    jvp="linear", node="Im2ColBackward0")
_col2im_op = defop(
    "col2im", lambda xp, self, shape, kernel, stride, padding, dilation:
    _col2im_np(self, shape, kernel, stride, padding, dilation),
    vjp={"self": lambda xp, grad, kernel, stride, padding, dilation:
         _im2col(xp, grad, kernel, stride, padding, dilation)},
    batched={"self": lambda grad, kernel, stride, padding, dilation:
             _im2col_np(grad, kernel, stride, padding, dilation)},
    jvp="linear", node="Col2ImBackward0")


def _im2col(xp, x, kernel, stride, padding, dilation):
    if _is_np(xp):
        return _im2col_np(x, kernel, stride, padding, dilation)
    return apply(_im2col_op, (x,), (kernel, stride, padding, dilation))


def _col2im(xp, cols, shape, kernel, stride, padding, dilation):
    if _is_np(xp):
        return _col2im_np(cols, tuple(shape), kernel, stride, padding, dilation)
    return apply(_col2im_op, (cols,), (tuple(shape), kernel, stride, padding, dilation))


# ---- convolution --------------------------------------------------------------------------
def _pads(padding):
    return ((padding[0], padding[0]), (padding[1], padding[1]))


# NumPy path. With unit column stride, the image rows are laid ``r >= W + pw`` apart in a
# zeroed buffer (the gap after one row is the left padding of the next) and each output row
# is computed across all ``r`` columns (the last ``r - OW`` of them junk: cropped from
# outputs, zero in gradients). Each (channel, kernel offset, image) block of the im2col
# matrix is then one contiguous run of the buffer, and col2im one long add per offset.
def _gridded(w_shape):
    """Whether to use the row grid: it speeds up the im2col copy and col2im, which scale
    with C*kh*kw, but slows the output's crop and the gradient's transpose, which scale
    with the output channels (so not for a first layer's few input channels)."""
    return w_shape[1] * w_shape[2] * w_shape[3] > w_shape[0]


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


def _np_windows(x, kernel, stride, padding, dilation, grid, ohw=None):
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
        buf = numpy.zeros((n, c, hb, r), dtype=x.dtype)
        buf[:, :, ph:ph + h, pw:pw + w] = x
        x = buf
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
# col2im adds them) and its result when copied out (a tenth off w3's step).
_CHUNK_BYTES = 1 << 22


def _chunks(n, col_bytes):
    """(start, stop) of the image chunks, ``col_bytes`` the im2col bytes of one image."""
    step = max(1, _CHUNK_BYTES // max(col_bytes, 1))
    return [(a, min(n, a + step)) for a in range(0, n, step)] or [(0, 0)]


def _np_rows(g, wq):
    """(N, O, OH, OW) -> (O, N*OH*Wq), zero in the junk columns."""
    n, o, oh, ow = g.shape
    if wq == ow:
        return numpy.ascontiguousarray(g.transpose(1, 0, 2, 3)).reshape(o, -1)
    rows = numpy.empty((o, n, oh, wq), dtype=g.dtype)
    rows[..., :ow] = g.transpose(1, 0, 2, 3)
    rows[..., ow:] = 0
    return rows.reshape(o, -1)


def _np_conv(x, w, bias, stride, padding, dilation, groups, ohw=None):
    """Convolution as GEMMs over chunks of images (a bias rides along as one more column of
    the weight, against a row of ones); each result's crop of junk columns and transpose
    back to NCHW is one copy into the output."""
    if _depthwise(w.shape, groups):
        return _np_dw_conv(x, w, bias, stride, padding, dilation, ohw)
    o = w.shape[0]
    view, oh, ow, wq = _np_windows(x, w.shape[2:], stride, padding, dilation,
                                   _gridded(w.shape), ohw)
    n, k, lq = x.shape[0], view.shape[0] * view.shape[1] * view.shape[2], oh * wq
    fused = bias is not None and groups == 1
    wm = w.reshape(o, -1)
    if fused:
        wm = numpy.concatenate((wm, bias.reshape(o, 1)), axis=1)
    chunks = _chunks(n, k * lq * x.itemsize)
    cols = numpy.empty((k + fused, (chunks[0][1] - chunks[0][0]) * lq), dtype=x.dtype)
    if fused:
        cols[k] = 1
    out = numpy.empty((n, o, oh, ow), dtype=x.dtype)
    for a, b in chunks:
        c = cols[:, :(b - a) * lq]
        numpy.copyto(c[:k].reshape(view.shape[:3] + (b - a, oh, wq)), view[:, :, :, a:b])
        res = _grouped(numpy, wm, c, groups).reshape(o, b - a, oh, wq)
        out[a:b] = res[..., :ow].transpose(1, 0, 2, 3)
    if bias is not None and not fused:
        out += bias.reshape(-1, 1, 1)
    return out


def _np_conv_dx(g, w, x_shape, stride, padding, dilation, groups):
    """The input gradient: per chunk of images a GEMM to columns, then one strided add per
    kernel offset into a (C, N, padded H, W) buffer; returned as an (N, C, H, W) view."""
    if _depthwise(w.shape, groups):
        return _np_dw_conv_dx(g, w, x_shape, stride, padding, dilation)
    n, o, oh, ow = g.shape
    kh, kw = w.shape[2:]
    c, h, wd = x_shape[1:]
    (ph, pw), (sh, sw), (dh, dw) = padding, stride, dilation
    r, wq, hb = _grid((h, wd), (oh, ow), (kh, kw), stride, padding, dilation, _gridded(w.shape))
    lq = oh * wq
    rows = _np_rows(g, wq)
    if groups == 1:
        wt = w.reshape(o, -1).T
    else:
        wt = w.reshape(groups, o // groups, -1).transpose(0, 2, 1)
    out = numpy.zeros((c, n, hb, r), dtype=g.dtype)
    flat = out.reshape(-1)
    s0, s1, s2, s3 = out.strides
    for a, b in _chunks(n, c * kh * kw * lq * g.itemsize):
        part = rows[:, a * lq:b * lq]
        if groups > 1:
            part = part.reshape(groups, o // groups, -1)
        cols = numpy.matmul(wt, part).reshape(c, kh, kw, b - a, oh, wq)
        for i in range(kh):
            for j in range(kw):
                at = as_strided(flat[a * r * hb + i * dh * r + j * dw:], (c, b - a, oh, wq),
                                (s0, s1, s2 * sh, s3 * sw))
                at += cols[:, i, j]
    return out[:, :, ph:ph + h, pw:pw + wd].transpose(1, 0, 2, 3)


def _np_conv_dw(g, x, w_shape, stride, padding, dilation, groups):
    """The weight gradient: per chunk of images, (cols @ rows.T).T summed (OpenBLAS's
    faster orientation for these long, thin operands)."""
    if _depthwise(w_shape, groups, 2):
        return _np_dw_conv_dw(g, x, w_shape, stride, padding, dilation)
    view, _, _, wq = _np_windows(x, w_shape[2:], stride, padding, dilation, _gridded(w_shape),
                                 g.shape[2:])
    rows = _np_rows(g, wq)
    n, oh = x.shape[0], view.shape[4]
    k, lq = view.shape[0] * view.shape[1] * view.shape[2], oh * wq
    o = rows.shape[0]
    chunks = _chunks(n, k * lq * x.itemsize)
    cols = numpy.empty((k, (chunks[0][1] - chunks[0][0]) * lq), dtype=x.dtype)
    dw = None
    for a, b in chunks:
        c = cols[:, :(b - a) * lq]
        numpy.copyto(c.reshape(view.shape[:3] + (b - a, oh, wq)), view[:, :, :, a:b])
        part = rows[:, a * lq:b * lq]
        if groups > 1:
            d = numpy.matmul(part.reshape(groups, o // groups, -1),
                             c.reshape(groups, k // groups, -1).transpose(0, 2, 1))
        else:
            d = numpy.matmul(c, part.T).T
        if dw is None:
            dw = d
        else:
            dw += d
    return dw.reshape(w_shape)


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


def _np_dw_conv(x, w, bias, stride, padding, dilation, ohw):
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


def _np_dw_conv_dx(g, w, x_shape, stride, padding, dilation):
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
        return _np_dw_conv(g, w[:, :, ::-1, ::-1], None, (1, 1), full, dilation, None)
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


def _np_dw_conv_dw(g, x, w_shape, stride, padding, dilation):
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


# Tensor path (create_graph=True): the same maps through the differentiable im2col/col2im.
def _cols(xp, x, kernel, stride, padding, dilation):
    """The windows of ``x`` (N, C, H, W) as one (C*kh*kw, N*OH*OW) matrix."""
    cols = _im2col(xp, x, kernel, stride, _pads(padding), dilation)
    n, c, kh, kw, oh, ow = cols.shape
    cols = xp.transpose(cols, (1, 2, 3, 0, 4, 5))
    return xp.reshape(cols, (c * kh * kw, n * oh * ow)), oh, ow


def _uncols(xp, cols, x_shape, kernel, stride, padding, dilation, oh, ow):
    """The adjoint of :func:`_cols`: a (C*kh*kw, N*OH*OW) matrix summed into ``x_shape``."""
    n, c = x_shape[:2]
    kh, kw = kernel
    cols = xp.transpose(xp.reshape(cols, (c, kh, kw, n, oh, ow)), (3, 0, 1, 2, 4, 5))
    return _col2im(xp, cols, x_shape, kernel, stride, _pads(padding), dilation)


def _to_rows(xp, t):
    """(N, O, OH, OW) -> (O, N*OH*OW)."""
    n, o, oh, ow = t.shape
    return xp.reshape(xp.swapaxes(xp.reshape(t, (n, o, oh * ow)), 0, 1), (o, n * oh * ow))


def _grouped(xp, a, b, groups):
    """``a @ b`` per group: a (O, K) and b (K, M) split into ``groups`` blocks of rows."""
    if groups == 1:
        return xp.matmul(a, b)
    out = xp.matmul(xp.reshape(a, (groups, a.shape[0] // groups, a.shape[1])),
                    xp.reshape(b, (groups, b.shape[0] // groups, b.shape[1])))
    return xp.reshape(out, (a.shape[0], b.shape[1]))  # explicit sizes: M may be 0


def _conv_fwd(xp, x, w, stride, padding, dilation, groups, bias=None, ohw=None):
    """Convolution; ``ohw`` crops the output (to a transposed convolution's input size)."""
    if _is_np(xp):
        return _np_conv(x, w, bias, stride, padding, dilation, groups, ohw)
    o, kh, kw = w.shape[0], w.shape[2], w.shape[3]
    cols, oh, ow = _cols(xp, x, (kh, kw), stride, padding, dilation)
    out = _grouped(xp, xp.reshape(w, (o, -1)), cols, groups)
    out = xp.swapaxes(xp.reshape(out, (o, x.shape[0], oh, ow)), 0, 1)
    if ohw is not None and (oh, ow) != tuple(ohw):
        out = out[:, :, :ohw[0], :ohw[1]]
    return out if bias is None else out + xp.reshape(bias, (-1, 1, 1))


def _nonfinite(a):
    """Whether ``a`` holds an infinity or NaN, which the NumPy paths' zero products (junk
    grid columns, a depthwise gradient's padded gather) would spread as NaN into gradients
    PyTorch keeps finite: then the plain im2col GEMMs run instead, as PyTorch's."""
    return not numpy.isfinite(a).all()


def _conv_dx(xp, grad, w, x_shape, stride, padding, dilation, groups):
    if _is_np(xp) and not _nonfinite(w):
        return _np_conv_dx(grad, w, x_shape, stride, padding, dilation, groups)
    n, o, oh, ow = grad.shape
    kernel = (w.shape[2], w.shape[3])
    wt = xp.swapaxes(xp.reshape(w, (groups, o // groups, -1)), 1, 2)  # (g, K/g, O/g)
    g2 = _to_rows(xp, grad)
    if groups == 1:
        cols = xp.matmul(xp.squeeze(wt, 0), g2)
    else:
        cols = xp.reshape(xp.matmul(wt, xp.reshape(g2, (groups, o // groups, n * oh * ow))),
                          (groups * wt.shape[1], n * oh * ow))
    return _uncols(xp, cols, x_shape, kernel, stride, padding, dilation, oh, ow)


def _conv_dw(xp, grad, x, w_shape, stride, padding, dilation, groups):
    if _is_np(xp) and not _nonfinite(x):
        return _np_conv_dw(grad, x, tuple(w_shape), stride, padding, dilation, groups)
    kernel = (w_shape[2], w_shape[3])
    cols, oh, ow = _cols(xp, x, kernel, stride, padding, dilation)
    n, _, gh, gw = grad.shape
    if (oh, ow) != (gh, gw):  # a transposed convolution's output_padding >= stride
        k = cols.shape[0]
        cols = xp.reshape(xp.reshape(cols, (k, n, oh, ow))[:, :, :gh, :gw], (k, n * gh * gw))
    g2 = _to_rows(xp, grad)
    if groups == 1:
        dw = xp.matmul(g2, xp.swapaxes(cols, 0, 1))
    else:
        m = g2.shape[1]  # explicit: may be 0
        dw = xp.matmul(xp.reshape(g2, (groups, g2.shape[0] // groups, m)),
                       xp.swapaxes(xp.reshape(cols, (groups, cols.shape[0] // groups, m)),
                                   1, 2))
    return xp.reshape(dw, tuple(w_shape))


def _as2d(xp, t, one_d):
    return xp.expand_dims(t, -2) if one_d else t


def _from2d(xp, t, one_d):
    return xp.squeeze(t, -2) if one_d else t


def _conv_forward(xp, input, weight, bias, stride, padding, dilation, transposed,
                  output_padding, groups, one_d):
    x, w = _as2d(xp, input, one_d), _as2d(xp, weight, one_d)
    if transposed:
        out = _conv_dx(xp, x, w, _transposed_shape(x.shape, w.shape, stride, padding, dilation,
                                                   output_padding, groups),
                       stride, padding, dilation, groups)
        if _is_np(xp):  # a view of a fresh buffer: made row-major, the bias added in place
            out = numpy.ascontiguousarray(out)
            if bias is not None:
                out += bias.reshape(-1, 1, 1)
        elif bias is not None:
            out = out + xp.reshape(bias, (-1, 1, 1))
    else:
        out = _conv_fwd(xp, x, w, stride, padding, dilation, groups, bias)
    return _from2d(xp, out, one_d)


def _transposed_shape(x_shape, w_shape, stride, padding, dilation, output_padding, groups):
    return (x_shape[0], w_shape[1] * groups) + tuple(
        (x_shape[2 + i] - 1) * stride[i] - 2 * padding[i] + dilation[i] * (w_shape[2 + i] - 1)
        + output_padding[i] + 1 for i in range(2))


def _conv_input_grad(xp, grad, weight, input_shape, stride, padding, dilation, transposed,
                     groups, one_d):
    g, w = _as2d(xp, grad, one_d), _as2d(xp, weight, one_d)
    shape = tuple(input_shape[:-1]) + (1, input_shape[-1]) if one_d else input_shape
    if transposed:
        dx = _conv_fwd(xp, g, w, stride, padding, dilation, groups, None, shape[2:])
    else:
        dx = _conv_dx(xp, g, w, shape, stride, padding, dilation, groups)
    return _from2d(xp, dx, one_d)


def _conv_weight_grad(xp, grad, input, weight_shape, stride, padding, dilation, transposed,
                      groups, one_d):
    g, x = _as2d(xp, grad, one_d), _as2d(xp, input, one_d)
    shape = tuple(weight_shape[:-1]) + (1, weight_shape[-1]) if one_d else weight_shape
    if transposed:
        dw = _conv_dw(xp, x, g, shape, stride, padding, dilation, groups)
    else:
        dw = _conv_dw(xp, g, x, shape, stride, padding, dilation, groups)
    return _from2d(xp, dw, one_d)


def _conv_bias_grad(xp, grad):
    if _is_np(xp):  # a matrix-vector product beats a reduction over the outer and inner axes
        n, o = grad.shape[:2]
        g = grad.reshape(n * o, math.prod(grad.shape[2:]))
        return numpy.matmul(g, numpy.ones(g.shape[1], dtype=g.dtype)).reshape(n, o).sum(0)
    return xp.sum(grad, axis=(0,) + tuple(range(2, grad.ndim)))


def _conv_jvp(xp, input_t, weight_t, bias_t, input, weight, stride, padding, dilation,
              transposed, output_padding, groups, one_d):
    """Bilinear in (input, weight): the tangent is conv(x_t, w) + conv(x, w_t) + b_t."""
    attrs = (stride, padding, dilation, transposed, output_padding, groups, one_d)
    if getattr(xp, "batched", False):
        return _conv_jvp_batched(xp.batch, input_t, weight_t, bias_t, input, weight, attrs)
    out = None
    if input_t is not None:
        out = _conv_forward(xp, input_t, weight, None, *attrs)
    if weight_t is not None:
        t = _conv_forward(xp, input, weight_t, None, *attrs)
        out = t if out is None else out + t
    if bias_t is not None:
        t = xp.reshape(bias_t, (-1,) + (1,) * (input.ndim - 2))
        out = t if out is None else out + t
    return out


def _conv_jvp_batched(batch, input_t, weight_t, bias_t, input, weight, attrs):
    """Tangents of a batch of directions (``autograd._batched`` arrays, vectorized forward
    mode): the batch folds into the images (input's) and into the output channels, group
    by group (weight's), so each term is one convolution."""
    from ..autograd._batched import Batched
    transposed, groups = attrs[3], attrs[5]
    out = None
    if input_t is not None:
        d = input_t.data
        r = _conv_forward(numpy, d.reshape((batch * d.shape[1],) + d.shape[2:]), weight, None,
                          *attrs)
        out = r.reshape((batch, d.shape[1]) + r.shape[1:])
    if weight_t is not None:
        d = weight_t.data
        if transposed:  # (batch, C_in, C_out/g, ...) -> (C_in, batch * C_out/g, ...)
            w = numpy.moveaxis(d, 0, 1)
        else:  # (batch, C_out, ...) -> (g * batch * C_out/g, ...), as (group, batch, channel)
            w = numpy.moveaxis(d.reshape((batch, groups, d.shape[1] // groups) + d.shape[2:]),
                               0, 1)
        w = w.reshape((d.shape[1], -1) + d.shape[3:] if transposed else (-1,) + d.shape[2:])
        r = _conv_forward(numpy, input, w, None, *attrs)
        n, sp = r.shape[0], r.shape[2:]
        r = numpy.moveaxis(r.reshape((n, groups, batch, -1) + sp), 2, 0)
        r = r.reshape((batch, n, -1) + sp)
        out = r if out is None else out + r
    if bias_t is not None:
        t = bias_t.data.reshape((batch, 1, -1) + (1,) * (input.ndim - 2))
        out = t if out is None else out + t
    return Batched(out)


def _conv_input_grad_batched(grad, weight, input_shape, stride, padding, dilation, transposed,
                             groups, one_d, batch):
    """The batch folds into the images: one input-gradient convolution for all of it."""
    shape = (batch * input_shape[0],) + tuple(input_shape[1:])
    dx = _conv_input_grad(numpy, grad.reshape(shape[:1] + grad.shape[2:]), weight, shape, stride,
                          padding, dilation, transposed, groups, one_d)
    return dx.reshape((batch,) + tuple(input_shape))


def _conv_weight_grad_batched(grad, input, weight_shape, stride, padding, dilation, transposed,
                              groups, one_d, batch):
    """The batch folds into the output channels, group by group (as (group, batch,
    channel)): one weight-gradient GEMM for all of it."""
    n, co, sp = grad.shape[1], grad.shape[2], grad.shape[3:]
    g = grad.reshape((batch, n, groups, co // groups) + sp)
    g = numpy.moveaxis(g, 0, 2).reshape((n, batch * co) + sp)
    ws = tuple(weight_shape)
    k = 1 if transposed else 0  # the weight's output-channel dim
    shape = ws[:k] + (batch * ws[k],) + ws[k + 1:]
    dw = _conv_weight_grad(numpy, g, input, shape, stride, padding, dilation, transposed,
                           groups, one_d)
    if transposed:  # (C_in, batch * C_out/g, ...)
        return numpy.moveaxis(dw.reshape((ws[0], batch) + ws[1:]), 1, 0)
    dw = dw.reshape((groups, batch, ws[0] // groups) + ws[1:])
    return numpy.moveaxis(dw, 1, 0).reshape((batch,) + ws)


_convolution = defop("convolution", _conv_forward, inputs=("input", "weight", "bias"),
                     vjp={"input": _conv_input_grad, "weight": _conv_weight_grad,
                          "bias": _conv_bias_grad},
                     batched={"input": _conv_input_grad_batched,
                              "weight": _conv_weight_grad_batched},
                     jvp=_conv_jvp, promote=("input", "weight", "bias"))


def _tuple(v, n=2):
    return tuple(v) if isinstance(v, (tuple, list)) else (v,) * n


def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding,
                groups):
    """``torch.convolution`` for 3-D/4-D (un)batched inputs; returns ConvolutionBackward0."""
    nd = weight.ndim - 2
    if bias is not None:
        c_out = weight.shape[1] * groups if transposed else weight.shape[0]
        if tuple(bias.shape) != (c_out,):
            raise RuntimeError(f"Given weight of size {list(weight.shape)}, expected bias to be "
                               f"1-dimensional with {c_out} elements, but got bias of size "
                               f"{list(bias.shape)} instead")
    if input.ndim == nd + 1:  # unbatched
        return convolution(input.unsqueeze(0), weight, bias, stride, padding, dilation,
                           transposed, output_padding, groups).squeeze(0)
    if input.ndim != nd + 2:
        raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to "
                           f"conv{nd}d, but got input of size: {list(input.shape)}")
    stride, dilation = _tuple(stride, nd), _tuple(dilation, nd)
    output_padding = _tuple(output_padding, nd)
    if isinstance(padding, str):
        padding, extra = _same_padding(padding, weight.shape[2:], dilation, stride)
        if any(extra):  # an odd total: the extra row/column goes after, in a padded copy
            warn_once("Using padding='same' with even kernel lengths and odd dilation may "
                      "require a zero-padded copy of the input be created")
            from .nn_ops import constant_pad
            input = constant_pad(input, [p for e in reversed(extra) for p in (0, e)])
    padding = _tuple(padding, nd)
    _check_params(stride, padding, dilation, transposed, output_padding)
    cin = weight.shape[0] if transposed else weight.shape[1] * groups
    if input.shape[1] != cin:
        if transposed:
            raise RuntimeError(f"Given transposed=1, weight of size {list(weight.shape)}, "
                               f"expected input{list(input.shape)} to have {cin} channels, "
                               f"but got {input.shape[1]} channels instead")
        raise RuntimeError(f"Given groups={groups}, weight of size {list(weight.shape)}, "
                           f"expected input{list(input.shape)} to have {cin} channels, but "
                           f"got {input.shape[1]} channels instead")
    if not transposed:
        _check_kernel_fits(input.shape[2:], weight.shape[2:], padding, dilation)
    if input.numel() == 0 and input.shape[0] and input.shape[1]:  # ATen's backend choice
        shape = list(input.shape[:2]) + [1] * (nd == 1) + list(input.shape[2:])
        raise RuntimeError(f"Only zero batch or zero channel inputs are supported, but got "
                           f"input shape: {shape}")
    if nd not in (1, 2):  # other ranks (3-D): the generic N-d kernel
        from .conv_nd import convolution_nd
        _check_transposed_size(input.shape[2:], weight.shape[2:], stride, padding, dilation,
                               transposed, output_padding)
        return convolution_nd(input, weight, bias, stride, padding, dilation, transposed,
                              output_padding, groups)
    if nd == 1:
        stride, padding, dilation = (1,) + stride, (0,) + padding, (1,) + dilation
        output_padding = (0,) + output_padding
    _check_transposed_size((1,) * (2 - nd) + tuple(input.shape[2:]),
                           (1,) * (2 - nd) + tuple(weight.shape[2:]), stride, padding, dilation,
                           transposed, output_padding)
    return apply(_convolution, (input, weight, bias),
                 (stride, padding, dilation, bool(transposed), output_padding, groups, nd == 1))


def _check_params(stride, padding, dilation, transposed, output_padding):
    """PyTorch's checks of the convolution parameters (a 1-d dilation is reported as the
    2-d one it runs as)."""
    if any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    if transposed and any(p < 0 for p in output_padding):
        raise RuntimeError("negative output_padding is not supported")
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(d < 0 for d in dilation):
        raise RuntimeError("dilation should be greater than zero")
    if 0 in dilation:
        if transposed and len(dilation) <= 2:
            h, w = ((1,) + dilation)[-2:]
            raise RuntimeError(f"dilation should be greater than zero, but got dilation_height:"
                               f" {h}, dilation_width: {w}")
        shown = list(dilation) if len(dilation) != 1 else [1, dilation[0]]
        raise RuntimeError(f"dilation should be greater than zero, but got {shown}")
    if transposed and any(o >= s and o >= d
                          for o, s, d in zip(output_padding, stride, dilation, strict=True)):
        o, s, d = (((e,) + t)[-2:] for e, t in ((0, output_padding), (1, stride),
                                                (1, dilation)))
        raise RuntimeError(f"output padding must be smaller than either stride or dilation, but "
                           f"got output_padding_height: {o[0]} output_padding_width: {o[1]} "
                           f"stride_height: {s[0]} stride_width: {s[1]} dilation_height: "
                           f"{d[0]} dilation_width: {d[1]}")


def _check_kernel_fits(sizes, kernel, padding, dilation):
    padded = [n + 2 * p for n, p in zip(sizes, padding, strict=True)]
    span = [d * (k - 1) + 1 for k, d in zip(kernel, dilation, strict=True)]
    if any(p < k for p, k in zip(padded, span, strict=True)):
        raise RuntimeError(f"Calculated padded input size per channel: "
                           f"({' x '.join(map(str, padded))}). Kernel size: "
                           f"({' x '.join(map(str, span))}). Kernel size can't be greater "
                           f"than actual input size")


def _check_transposed_size(sizes, kernel, stride, padding, dilation, transposed,
                           output_padding):
    """A transposed convolution's output must have a positive size (checked, as PyTorch,
    on the 2-d shape a 1-d one runs as)."""
    if not transposed:
        return
    out = [(n - 1) * s - 2 * p + d * (k - 1) + o + 1 for n, k, s, p, d, o in
           zip(sizes, kernel, stride, padding, dilation, output_padding, strict=True)]
    if any(n < 1 for n in out):
        raise RuntimeError(f"Given input size per channel: ({' x '.join(map(str, sizes))}). "
                           f"Calculated output size per channel: "
                           f"({' x '.join(map(str, out))}). Output size is too small")


def _same_padding(mode, kernel, dilation, stride):
    """The symmetric padding of a padding string, and what an odd total adds after."""
    if mode == "valid":
        return (0,) * len(kernel), (0,) * len(kernel)
    if mode != "same":
        raise RuntimeError(f"Invalid padding string: '{mode}'")
    if any(s != 1 for s in stride):
        raise RuntimeError("padding='same' is not supported for strided convolutions")
    pads = [d * (k - 1) for k, d in zip(kernel, dilation, strict=True)]
    return tuple(p // 2 for p in pads), tuple(p % 2 for p in pads)


# ---- pooling ------------------------------------------------------------------------------
def _pool_geometry(size, k, s, p, d, ceil_mode):
    """Output length and (left, right) padding, with PyTorch's ceil_mode rule."""
    span = size + 2 * p - d * (k - 1) - 1
    out = (-(-span // s) if ceil_mode else span // s) + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    right = max(p, (out - 1) * s + d * (k - 1) + 1 - size - p)
    return out, (p, right)


def _pool_checks(k, s, p, d):
    """PyTorch's pooling_output_shape checks, dim by dim, then pool{2,3}d_shape_check's on
    the sizes (its messages name the dims T, H, W)."""
    for ki, si, pi, di in zip(k, s, p, d, strict=True):
        if si == 0:
            raise RuntimeError("stride should not be zero")
        if pi < 0:
            raise RuntimeError(f"pad must be non-negative, but got pad: {pi}")
        if pi > int(((ki - 1) * di + 1) / 2):  # C's division, toward zero
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                               f"pad={pi}, kernel_size={ki} and dilation={di}")
    names = "THW"[-len(k):]
    for v, what, prefix, sep in ((k, "kernel size", "k", " "), (s, "stride", "d", " "),
                                 (d, "dilation", "dilation", " ")):
        if any(x <= 0 for x in v):
            got = sep.join(f"{prefix}{n}: {x}" for n, x in zip(names, v, strict=True))
            raise RuntimeError(f"{what} should be greater than zero, but got {got}")
    if any(pi > ki // 2 for pi, ki in zip(p, k, strict=True)):
        if len(k) == 2:
            got = f"padW = {p[1]}, padH = {p[0]}, kW = {k[1]}, kH = {k[0]}"
        else:
            got = (f"kT: {k[0]} kW: {k[2]} kH: {k[1]} padT: {p[0]} padW: {p[2]} "
                   f"padH: {p[1]}")
        raise RuntimeError(f"pad should be smaller than or equal to half of kernel size, but "
                           f"got {got}")


def _pool_args(input, kernel_size, stride, padding, dilation, ceil_mode):
    k = _tuple(kernel_size)
    s = _tuple(stride) if stride not in (None, [], ()) else k
    p, d = _tuple(padding), _tuple(dilation)
    _pool_checks(k, s, p, d)
    if input.ndim not in (3, 4):
        raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
    if 0 in input.shape[-3:]:
        raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor with optional 0 dim batch "
                           f"size for input, but got:{list(input.shape)}")
    geo = [_pool_geometry(input.shape[-2 + i], k[i], s[i], p[i], d[i], ceil_mode)
           for i in range(2)]
    if geo[0][0] < 1 or geo[1][0] < 1:
        c, h, w = input.shape[-3:]
        raise RuntimeError(f"Given input size: ({c}x{h}x{w}). Calculated output size: "
                           f"({c}x{geo[0][0]}x{geo[1][0]}). Output size is too small")
    return k, s, (geo[0][1], geo[1][1]), d


def _max_pool_2x2(x):
    """2x2 windows at stride 2: the max of column pairs, then of row pairs of those, each
    pair's winner a comparison; None when a NaN needs the general path's NaN rule."""
    h, w = x.shape[-2:]
    x = x[..., :h - h % 2, :w - w % 2]
    x0, x1 = x[..., 0::2], x[..., 1::2]
    right = (x1 > x0).view(numpy.int8)  # ties keep the first offset, as PyTorch
    m = numpy.maximum(x0, x1)
    m0, m1 = m[..., 0::2, :], m[..., 1::2, :]
    out = numpy.maximum(m0, m1)
    if out.size and numpy.isnan(out.max()):
        return None
    r0, r1 = right[..., 0::2, :], right[..., 1::2, :]
    down = (m1 > m0).view(numpy.int8)
    col = r1 - r0
    col *= down
    col += r0  # the winning row's column: r1 if down else r0
    off = down.astype(numpy.int16 if w < 1 << 14 else numpy.int64)
    off *= w
    off += col  # the winner's offset in the flat H*W plane from its window's corner
    oh, ow = out.shape[-2:]
    return out, (numpy.arange(oh) * (2 * w))[:, None] + numpy.arange(0, 2 * ow, 2) + off


def _max_pool_fwd(xp, self, kernel, stride, pads, dilation):
    """A running maximum over the kernel's strided views (no window copy); the first
    maximal offset of each window gives PyTorch's flat H*W index."""
    (kh, kw), (sh, sw), (dh, dw) = kernel, stride, dilation
    if kernel == stride == (2, 2) and dilation == (1, 1) and pads == ((0, 0), (0, 0)):
        res = _max_pool_2x2(self)
        if res is not None:
            return res
    x, (h, w) = self, self.shape[-2:]
    padded = any(pads[0]) or any(pads[1])
    if padded:
        low = -numpy.inf if x.dtype.kind == "f" else numpy.iinfo(x.dtype).min
        x = numpy.pad(x, ((0, 0),) * (x.ndim - 2) + pads, constant_values=low)
    oh = (x.shape[-2] - dh * (kh - 1) - 1) // sh + 1
    ow = (x.shape[-1] - dw * (kw - 1) - 1) // sw + 1
    views = [x[..., i * dh:i * dh + sh * (oh - 1) + 1:sh, j * dw:j * dw + sw * (ow - 1) + 1:sw]
             for i in range(kh) for j in range(kw)]
    out = views[0].copy()
    ctype = numpy.int16 if len(views) > 127 else numpy.int8
    code = numpy.zeros(out.shape, dtype=ctype)
    if padded:
        code += (_first_inside(oh, sh, pads[0][0], kh, dh, h)[:, None] * kw
                 + _first_inside(ow, sw, pads[1][0], kw, dw, w)).astype(ctype)
    for o, v in enumerate(views[1:], 1):
        # PyTorch's CPU kernel: a later offset wins when strictly greater, or NaN. Kept
        # branch-free (masked writes are several times slower on NumPy).
        better = (v > out) | (v != v)
        numpy.maximum(out, v, out=out)
        code *= ~better
        code += better * ctype(o)
    base = ((numpy.arange(oh) * sh - pads[0][0])[:, None] * w
            + (numpy.arange(ow) * sw - pads[1][0]))
    table = numpy.array([i * dh * w + j * dw for i in range(kh) for j in range(kw)])
    indices = base + table.take(code)
    empty = _outside(oh, sh, pads[0][0], kh, dh, h)[:, None] | _outside(ow, sw, pads[1][0], kw,
                                                                        dw, w)
    if empty.any():
        indices[..., empty] = -1
    return out, indices


def _inside(n, stride, pad, kernel, dilation, size):
    """Which kernel offsets of each of ``n`` windows along one dim read the input, not
    padding: an (n, kernel) mask."""
    at = (numpy.arange(n) * stride - pad)[:, None] + numpy.arange(kernel) * dilation
    return (at >= 0) & (at < size)


def _first_inside(n, stride, pad, kernel, dilation, size):
    """The first offset of each window that reads the input. PyTorch's CPU kernel starts a
    window's index there, so a window whose inputs are all -inf (none greater than the
    -inf padding) gives its first input the gradient, not a padding position."""
    return _inside(n, stride, pad, kernel, dilation, size).argmax(1)


def _outside(n, stride, pad, kernel, dilation, size):
    """Which of ``n`` windows along one dim hold no input element (dilated windows of a
    ceil_mode pool can lie wholly in padding): their max is -inf and their index -1, so
    backward gives them no input (PyTorch's index there points outside the plane)."""
    return ~_inside(n, stride, pad, kernel, dilation, size).any(1)


def _max_pool_grad(xp, grad, indices, self_shape, kernel, stride, dilation):
    h, w = self_shape[-2:]
    if bool((indices < 0).any()):  # windows wholly in padding (index -1): no input's gradient
        grad = xp.where(indices < 0, 0, grad)
        indices = xp.where(indices < 0, 0, indices)
    lead = tuple(self_shape[:-2])
    b = 1
    for n in lead:
        b *= n
    if _is_np(xp):
        g = grad.reshape(b, grad.shape[-2] * grad.shape[-1])
        idx = indices.reshape(g.shape)
        if all(s > d * (k - 1) for s, k, d in zip(stride, kernel, dilation, strict=True)):
            # windows do not overlap: each input receives at most one gradient
            out = numpy.zeros(b * h * w, dtype=grad.dtype)
            flat = idx + numpy.arange(0, b * h * w, h * w)[:, None]
            out[flat.reshape(-1)] = g.reshape(-1)
        else:
            flat = idx + (numpy.arange(b) * (h * w))[:, None]
            out = numpy.bincount(flat.ravel(), weights=g.ravel(),
                                 minlength=b * h * w).astype(grad.dtype)
        return out.reshape(self_shape)
    out = FUNCTIONS["scatter_add"](xp.zeros((b, h * w), dtype=grad.dtype), 1,
                                   xp.reshape(indices, (b, -1)),
                                   xp.reshape(grad, (b, -1)))
    return xp.reshape(out, tuple(self_shape))


_max_pool2d = defop("max_pool2d", _max_pool_fwd, inputs=("self",),
                    vjp={"self": _max_pool_grad}, jvp="transpose", outputs=("result", "indices"),
                    batched={"self": lambda grad, indices, self_shape, kernel, stride, dilation,
                             batch: _max_pool_grad(numpy, grad, numpy.broadcast_to(
                                 indices, grad.shape), (batch, *self_shape), kernel, stride,
                                 dilation)},
                    nondiff_outputs=("indices",), node="MaxPool2DWithIndicesBackward0")


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    if input._data.dtype.kind in "bc":  # integers pool as PyTorch's do
        raise NotImplementedError(f"\"max_pool2d\" not implemented for "
                                  f"'{_pretty(input._data.dtype)}'")
    k, s, pads, d = _pool_args(input, kernel_size, stride, padding, dilation, ceil_mode)
    out, idx = apply(_max_pool2d, (input,), (k, s, pads, d))
    return (out, idx) if return_indices else out


def _avg_divisor(shape, kernel, stride, pads, count_include_pad, override):
    if override:
        return float(override)
    divs = []
    for i in range(2):
        n, k, s = shape[-2 + i], kernel[i], stride[i]
        p, right = pads[i]
        o = (n + p + right - k) // s + 1
        start = numpy.arange(o) * s - p
        end = numpy.minimum(start + k, n + p)  # the ceil_mode overhang never counts
        if not count_include_pad:
            start, end = numpy.maximum(start, 0), numpy.minimum(end, n)
        divs.append(end - start)
    return numpy.outer(divs[0], divs[1])


def _avg_pool_fwd(xp, self, kernel, stride, pads, divisor):
    if getattr(xp, "batched", False):  # tangents of a batch of directions: more leading dims
        from ..autograd._batched import Batched
        return Batched(_avg_pool_fwd(numpy, self.data, kernel, stride, pads, divisor))
    cols = _im2col_np(self, kernel, stride, pads, (1, 1))
    out = numpy.sum(cols, axis=(-4, -3))
    if out.dtype.kind != "f":  # integers: divided toward zero, as PyTorch
        return (out / divisor).astype(self.dtype)
    out /= divisor
    return out


def _avg_pool_grad(xp, grad, self_shape, kernel, stride, pads, divisor):
    g = grad / (divisor if isinstance(divisor, float) else _const(xp, divisor))
    cols = xp.broadcast_to(xp.expand_dims(xp.expand_dims(g, -3), -3),
                           tuple(grad.shape[:-2]) + tuple(kernel) + tuple(grad.shape[-2:]))
    return _col2im(xp, cols, self_shape, kernel, stride, pads, (1, 1))


_avg_pool2d = defop("avg_pool2d", _avg_pool_fwd, inputs=("self",),
                    vjp={"self": _avg_pool_grad}, jvp="linear", node="AvgPool2DBackward0",
                    batched={"self": lambda grad, self_shape, kernel, stride, pads, divisor, batch:
                             _avg_pool_grad(numpy, grad, (batch, *self_shape), kernel, stride,
                                            pads, divisor)})


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    k, s, pads, _ = _pool_args(input, kernel_size, stride, padding, 1, ceil_mode)
    div = _avg_divisor(input.shape, k, s, pads, count_include_pad, divisor_override)
    if not isinstance(div, float):
        div = div.astype(input._data.dtype)
    return apply(_avg_pool2d, (input,), (k, s, pads, div))


def _adaptive_matrix(n, o):
    """(o, n) averaging matrix of PyTorch's adaptive bins [floor(i n/o), ceil((i+1) n/o))."""
    m = numpy.zeros((o, n))
    for i in range(o):
        a, b = (i * n) // o, -(-((i + 1) * n) // o)
        m[i, a:b] = 1 / (b - a)
    return m


def _const(xp, a):
    return a if _is_np(xp) else wrap(a)


def _adaptive_avg_fwd(xp, self, ph, pwt):
    """Two averaging GEMMs; where a non-finite input turns their ``0 * inf`` outside a bin
    into NaN, the bins' own means instead (PyTorch sums each window)."""
    out = xp.matmul(xp.matmul(ph, self), pwt)
    if not _is_np(xp) or numpy.isfinite(out).all():
        return out
    for axis, o in ((-2, ph.shape[0]), (-1, pwt.shape[1])):
        n = self.shape[axis]
        bins = [numpy.take(self, range((i * n) // o, -(-((i + 1) * n) // o)), axis)
                for i in range(o)]
        self = numpy.stack([b.mean(axis) for b in bins], axis)
    return self


_adaptive_avg = defop(
    "adaptive_avg_pool2d", _adaptive_avg_fwd,
    vjp={"self": lambda xp, grad, ph, pwt:
         xp.matmul(xp.matmul(_const(xp, ph.T), grad), _const(xp, pwt.T))},
    jvp="linear", node="AdaptiveAvgPool2DBackward0")


def _adaptive_nonempty(input, nd, name):
    """Adaptive pooling has no window over an empty spatial dim: PyTorch's error."""
    for i in range(input.ndim - nd, input.ndim):
        if input.shape[i] == 0:
            raise RuntimeError(f"{name}(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but input has sizes {list(input.shape)} with "
                               f"dimension {i} being empty")


def adaptive_avg_pool2d(input, output_size):
    if not input.is_floating_point():
        raise NotImplementedError(f"\"adaptive_avg_pool2d\" not implemented for "
                                  f"'{_pretty(input._data.dtype)}'")
    oh, ow = _tuple(output_size)
    if (oh, ow) == (1, 1):  # PyTorch takes a mean here (MeanBackward1), even of nothing
        return input.mean((-2, -1), keepdim=True)
    _adaptive_nonempty(input, 2, "adaptive_avg_pool2d")
    h, w = input.shape[-2:]
    oh, ow = h if oh is None else oh, w if ow is None else ow
    dt = input._data.dtype
    return apply(_adaptive_avg, (input,), (_adaptive_matrix(h, oh).astype(dt),
                                          _adaptive_matrix(w, ow).T.astype(dt)))
