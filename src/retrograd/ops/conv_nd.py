"""N-d (3-D) convolutions, and the ``conv*`` functions PyTorch exposes at the top level.

``conv.py`` keeps its specialised 1-D/2-D paths; a convolution of any other rank comes
here: im2col as one ``as_strided`` copy of the padded input, then one batched GEMM per
image and group; the input gradient (and a transposed convolution's forward) is the GEMM
the other way then col2im, one strided add per kernel offset. Under ``create_graph`` the
same functions run on Tensors, with im2col/col2im differentiable ops each the other's
vjp (double backward). The node is PyTorch's ConvolutionBackward0.
"""

import itertools
import math

import numpy
from numpy.lib.stride_tricks import as_strided

from ._registry import apply, defop, register
from .conv import _is_np, convolution

__all__ = ["convolution_nd", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
           "conv_transpose2d", "conv_transpose3d"]


def _natural_outs(shape, kernel, stride, padding, dilation):
    nd = len(kernel)
    return tuple((shape[len(shape) - nd + i] + 2 * padding[i] - dilation[i] * (kernel[i] - 1)
                  - 1) // stride[i] + 1 for i in range(nd))


# ---- im2col / col2im over the last nd dims (any leading dims) ---------------------------------
def _im2col_np(x, kernel, stride, padding, dilation, outs):
    """(..., *S) -> (..., *K, *O): every window of the zero-padded input, contiguous."""
    nd = len(kernel)
    if any(padding):
        x = numpy.pad(x, ((0, 0),) * (x.ndim - nd) + tuple((p, p) for p in padding))
    st = x.strides[x.ndim - nd:]
    steps = tuple(s * d for s, d in zip(st, dilation, strict=True))
    steps += tuple(s * t for s, t in zip(st, stride, strict=True))
    view = as_strided(x, x.shape[:x.ndim - nd] + tuple(kernel) + tuple(outs),
                      x.strides[:x.ndim - nd] + steps, writeable=False)
    return numpy.ascontiguousarray(view)


def _col2im_np(cols, shape, kernel, stride, padding, dilation):
    """The adjoint of :func:`_im2col_np`: windows summed back into ``shape``'s last nd dims
    (the leading dims are the columns')."""
    nd = len(kernel)
    outs = cols.shape[cols.ndim - nd:]
    sp = tuple(shape[len(shape) - nd:])
    lead = cols.shape[:cols.ndim - 2 * nd]
    padded = tuple(n + 2 * p for n, p in zip(sp, padding, strict=True))
    out = numpy.zeros(lead + padded, dtype=cols.dtype)
    rest = (slice(None),) * nd
    for off in itertools.product(*(range(k) for k in kernel)):
        at = (Ellipsis,) + tuple(slice(o * d, o * d + s * (n - 1) + 1, s)
                                 for o, d, s, n in zip(off, dilation, stride, outs, strict=True))
        out[at] += cols[(Ellipsis,) + off + rest]
    return out[(Ellipsis,) + tuple(slice(p, p + n) for n, p in zip(sp, padding, strict=True))]


_im2col_op = defop(
    "im2col_nd", lambda xp, self, kernel, stride, padding, dilation, outs:
    _im2col_np(self, kernel, stride, padding, dilation, outs),
    vjp={"self": lambda xp, grad, self_shape, kernel, stride, padding, dilation:
         _col2im(xp, grad, self_shape, kernel, stride, padding, dilation)},
    batched={"self": lambda grad, self_shape, kernel, stride, padding, dilation, batch:
             _col2im_np(grad, (batch, *self_shape), kernel, stride, padding, dilation)},
    jvp="linear", node="Im2ColBackward0")
_col2im_op = defop(
    "col2im_nd", lambda xp, self, shape, kernel, stride, padding, dilation, outs:
    _col2im_np(self, shape, kernel, stride, padding, dilation),
    vjp={"self": lambda xp, grad, kernel, stride, padding, dilation, outs:
         _im2col(xp, grad, kernel, stride, padding, dilation, outs)},
    batched={"self": lambda grad, kernel, stride, padding, dilation, outs:
             _im2col_np(grad, kernel, stride, padding, dilation, outs)},
    jvp="linear", node="Col2ImBackward0")


def _im2col(xp, x, kernel, stride, padding, dilation, outs):
    if _is_np(xp):
        return _im2col_np(x, kernel, stride, padding, dilation, outs)
    return apply(_im2col_op, (x,), (kernel, stride, padding, dilation, outs))


def _col2im(xp, cols, shape, kernel, stride, padding, dilation):
    if _is_np(xp):
        return _col2im_np(cols, tuple(shape), kernel, stride, padding, dilation)
    outs = tuple(cols.shape[cols.ndim - len(kernel):])
    return apply(_col2im_op, (cols,), (tuple(shape), kernel, stride, padding, dilation, outs))


# ---- NumPy path: one (C*K, N*P) column matrix and one GEMM per group --------------------------
def _np_cols(x, kernel, stride, padding, dilation, outs):
    """(N, C, *S) -> (C*K, N*P): the windows laid out for a single GEMM."""
    nd = len(kernel)
    if any(padding):
        x = numpy.pad(x, ((0, 0), (0, 0)) + tuple((p, p) for p in padding))
    st = x.strides
    steps = tuple(s * d for s, d in zip(st[2:], dilation, strict=True))
    steps += tuple(s * t for s, t in zip(st[2:], stride, strict=True))
    n, c = x.shape[:2]
    view = as_strided(x, (c,) + tuple(kernel) + (n,) + tuple(outs),
                      (st[1],) + steps[:nd] + (st[0],) + steps[nd:], writeable=False)
    return numpy.ascontiguousarray(view).reshape(c * math.prod(kernel), -1)


def _np_uncols(cols, x_shape, kernel, stride, padding, dilation, outs):
    """The adjoint of :func:`_np_cols`: one strided add per kernel offset into a (C, N,
    *padded) buffer, returned as an (N, C, *S) view."""
    n, c = x_shape[:2]
    sp = tuple(x_shape[2:])
    cols = cols.reshape((c,) + tuple(kernel) + (n,) + tuple(outs))
    padded = tuple(v + 2 * p for v, p in zip(sp, padding, strict=True))
    out = numpy.zeros((c, n) + padded, dtype=cols.dtype)
    head = (slice(None), slice(None))
    for off in itertools.product(*(range(k) for k in kernel)):
        at = head + tuple(slice(o * d, o * d + s * (v - 1) + 1, s)
                          for o, d, s, v in zip(off, dilation, stride, outs, strict=True))
        out[at] += cols[(slice(None),) + off]
    out = out[head + tuple(slice(p, p + v) for v, p in zip(sp, padding, strict=True))]
    return out.swapaxes(0, 1)


def _np_grouped(a, b, groups):
    """``a @ b`` per group: a (O, K) and b (K, M) split into ``groups`` blocks of rows."""
    if groups == 1:
        return numpy.matmul(a, b)
    out = numpy.matmul(a.reshape(groups, a.shape[0] // groups, -1),
                       b.reshape(groups, b.shape[0] // groups, -1))
    return out.reshape(a.shape[0], -1)


def _np_rows(g):
    """(N, O, *O) -> (O, N*P)."""
    return numpy.ascontiguousarray(g.swapaxes(0, 1)).reshape(g.shape[1], -1)


# ---- the three GEMM forms -----------------------------------------------------------------------
def _conv(xp, x, w, stride, padding, dilation, groups, outs=None):
    """(N, C, *S) conv (O, C/g, *K) -> (N, O, *outs)."""
    kernel = tuple(w.shape[2:])
    if outs is None:
        outs = _natural_outs(x.shape, kernel, stride, padding, dilation)
    outs = tuple(outs)
    n, o = x.shape[0], w.shape[0]
    if _is_np(xp):
        cols = _np_cols(x, kernel, stride, padding, dilation, outs)
        out = _np_grouped(w.reshape(o, -1), cols, groups).reshape((o, n) + outs)
        return numpy.ascontiguousarray(out.swapaxes(0, 1))
    cols = _im2col(xp, x, kernel, stride, padding, dilation, outs)
    cols = xp.reshape(cols, (n, groups, -1, math.prod(outs)))
    out = xp.matmul(xp.reshape(w, (groups, o // groups, -1)), cols)  # (N, G, O/G, P)
    return xp.reshape(out, (n, o) + outs)


def _conv_t(xp, g, w, x_shape, stride, padding, dilation, groups):
    """The adjoint of :func:`_conv` in its input: (N, O, *O) -> (N, C, *x_shape)."""
    n, o = g.shape[:2]
    outs = tuple(g.shape[2:])
    kernel = tuple(w.shape[2:])
    if _is_np(xp):
        wt = w.reshape(groups, o // groups, -1).swapaxes(1, 2)  # (G, C/g*K, O/G)
        cols = numpy.matmul(wt, _np_rows(g).reshape(groups, o // groups, -1))
        return _np_uncols(cols, x_shape, kernel, stride, padding, dilation, outs)
    wt = xp.swapaxes(xp.reshape(w, (groups, o // groups, -1)), 1, 2)
    cols = xp.matmul(wt, xp.reshape(g, (n, groups, o // groups, math.prod(outs))))
    cols = xp.reshape(cols, (n, x_shape[1]) + kernel + outs)
    return _col2im(xp, cols, x_shape, kernel, stride, padding, dilation)


def _conv_w(xp, g, x, w_shape, stride, padding, dilation, groups):
    """The adjoint of :func:`_conv` in its weight: sum over images of g @ cols(x).T."""
    kernel = tuple(w_shape[2:])
    outs = tuple(g.shape[2:])
    o = g.shape[1]
    if _is_np(xp):  # (cols @ rows.T).T: OpenBLAS's faster orientation for these operands
        cols = _np_cols(x, kernel, stride, padding, dilation, outs)
        rows = _np_rows(g)
        dw = numpy.matmul(cols.reshape(groups, cols.shape[0] // groups, -1),
                          rows.reshape(groups, o // groups, -1).swapaxes(1, 2))
        return numpy.ascontiguousarray(dw.swapaxes(1, 2)).reshape(w_shape)
    cols = _im2col(xp, x, kernel, stride, padding, dilation, outs)
    n = g.shape[0]
    gm = xp.reshape(g, (n, groups, o // groups, math.prod(outs)))
    cm = xp.reshape(cols, (n, groups, -1, math.prod(outs)))
    dw = xp.sum(xp.matmul(gm, xp.swapaxes(cm, -1, -2)), axis=0)
    return xp.reshape(dw, tuple(w_shape))


# ---- the op -------------------------------------------------------------------------------------
def _transposed_shape(x_shape, w_shape, stride, padding, dilation, output_padding, groups):
    return (x_shape[0], w_shape[1] * groups) + tuple(
        (x_shape[2 + i] - 1) * stride[i] - 2 * padding[i] + dilation[i] * (w_shape[2 + i] - 1)
        + output_padding[i] + 1 for i in range(len(w_shape) - 2))


def _forward(xp, input, weight, bias, stride, padding, dilation, transposed, output_padding,
             groups):
    nd = weight.ndim - 2
    if transposed:
        shape = _transposed_shape(input.shape, weight.shape, stride, padding, dilation,
                                  output_padding, groups)
        out = _conv_t(xp, input, weight, shape, stride, padding, dilation, groups)
        if _is_np(xp):
            out = numpy.ascontiguousarray(out)
    else:
        out = _conv(xp, input, weight, stride, padding, dilation, groups)
    if bias is not None:
        out = out + xp.reshape(bias, (-1,) + (1,) * nd)
    return out


def _input_grad(xp, grad, weight, input_shape, stride, padding, dilation, transposed, groups):
    if transposed:
        return _conv(xp, grad, weight, stride, padding, dilation, groups,
                     tuple(input_shape[2:]))
    return _conv_t(xp, grad, weight, tuple(input_shape), stride, padding, dilation, groups)


def _weight_grad(xp, grad, input, weight_shape, stride, padding, dilation, transposed, groups):
    if transposed:  # the roles of the image and the gradient swap
        return _conv_w(xp, input, grad, weight_shape, stride, padding, dilation, groups)
    return _conv_w(xp, grad, input, weight_shape, stride, padding, dilation, groups)


def _bias_grad(xp, grad):
    return xp.sum(grad, axis=(0,) + tuple(range(2, grad.ndim)))


def _input_grad_batched(grad, weight, input_shape, stride, padding, dilation, transposed,
                        groups, batch):
    """The batch folds into the images: one input-gradient convolution for all of it."""
    shape = (batch * input_shape[0],) + tuple(input_shape[1:])
    g = grad.reshape(shape[:1] + grad.shape[2:])
    dx = _input_grad(numpy, g, weight, shape, stride, padding, dilation, transposed, groups)
    return dx.reshape((batch,) + tuple(input_shape))


def _weight_grad_batched(grad, input, weight_shape, stride, padding, dilation, transposed,
                         groups, batch):
    """One weight-gradient GEMM per gradient of the batch."""
    return numpy.stack([_weight_grad(numpy, g, input, weight_shape, stride, padding, dilation,
                                     transposed, groups) for g in grad])


def _jvp(xp, input_t, weight_t, bias_t, input, weight, stride, padding, dilation, transposed,
         output_padding, groups):
    """Bilinear in (input, weight): conv(x_t, w) + conv(x, w_t) + b_t."""
    attrs = (stride, padding, dilation, transposed, output_padding, groups)
    nd = weight.ndim - 2
    if getattr(xp, "batched", False):  # a batch of tangents: folded into the images, or
        from ..autograd._batched import Batched  # one convolution per weight tangent
        out = None
        if input_t is not None:
            d = input_t.data
            r = _forward(numpy, d.reshape((-1,) + d.shape[2:]), weight, None, *attrs)
            out = r.reshape(d.shape[:2] + r.shape[1:])
        if weight_t is not None:
            r = numpy.stack([_forward(numpy, input, w, None, *attrs) for w in weight_t.data])
            out = r if out is None else out + r
        if bias_t is not None:
            t = bias_t.data.reshape((bias_t.data.shape[0], 1, -1) + (1,) * nd)
            out = t if out is None else out + t
        return Batched(out)
    out = None
    if input_t is not None:
        out = _forward(xp, input_t, weight, None, *attrs)
    if weight_t is not None:
        t = _forward(xp, input, weight_t, None, *attrs)
        out = t if out is None else out + t
    if bias_t is not None:
        t = xp.reshape(bias_t, (-1,) + (1,) * nd)
        out = t if out is None else out + t
    return out


_convolution_nd = defop(
    "convolution_nd", _forward, inputs=("input", "weight", "bias"),
    vjp={"input": _input_grad, "weight": _weight_grad, "bias": _bias_grad},
    batched={"input": _input_grad_batched, "weight": _weight_grad_batched},
    jvp=_jvp, promote=("input", "weight", "bias"), node="ConvolutionBackward0")


def convolution_nd(input, weight, bias, stride, padding, dilation, transposed, output_padding,
                   groups):
    """The N-d kernel (used for 3-D) behind ``conv.convolution``, which has checked and
    normalised the arguments (batched input, tuples, string padding resolved)."""
    return apply(_convolution_nd, (input, weight, bias),
                 (stride, padding, dilation, bool(transposed), output_padding, groups))


# ---- PyTorch's functions ------------------------------------------------------------------------
def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return convolution(input, weight, bias, stride, padding, dilation, False, 0, groups)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return convolution(input, weight, bias, stride, padding, dilation, False, 0, groups)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return convolution(input, weight, bias, stride, padding, dilation, False, 0, groups)


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0,
                     groups=1, dilation=1):
    return convolution(input, weight, bias, stride, padding, dilation, True, output_padding,
                       groups)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0,
                     groups=1, dilation=1):
    return convolution(input, weight, bias, stride, padding, dilation, True, output_padding,
                       groups)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0,
                     groups=1, dilation=1):
    return convolution(input, weight, bias, stride, padding, dilation, True, output_padding,
                       groups)


for _f in (conv1d, conv2d, conv3d, conv_transpose1d, conv_transpose2d, conv_transpose3d):
    register(_f, method=False)
