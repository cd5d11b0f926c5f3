"""The convolution family: ``torch.convolution`` and conv1d/2d/3d, conv_transpose1d/2d/3d,
all one op (ConvolutionBackward0) for any number of spatial dims, groups and transposition.

Its rules are three linear maps written once on the array namespace they get: the
convolution (im2col, then one GEMM per group), its adjoint in the input (the GEMM the
other way, then col2im: the input gradient, and a transposed convolution's forward) and
its adjoint in the weight. Under ``create_graph`` they run on Tensors, im2col and col2im
being differentiable ops (:mod:`.im2col`), so double backward works. On NumPy arrays the
1-D and 2-D maps run as the NumPy-only kernels of :mod:`._conv_numpy` (a 1-D convolution
as a 2-D one of height 1): the row-grid GEMMs and the depthwise multiply-adds, declared
with ``kernel()`` beside the rules they stand in for.
"""

import math

from .. import _autocast
from .._tensor import warn_once
from . import _conv_numpy
from ._registry import apply, defop, register
from ._registry import kernel as declare_kernel
from .im2col import col2im, im2col, out_sizes
from .nn_ops import constant_pad

__all__ = ["convolution", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
           "conv_transpose2d", "conv_transpose3d"]


def _pads(padding):
    return tuple((p, p) for p in padding)


def _up(a, nd):
    """A 1-D convolution's array as the 2-D one of height 1 the kernels take."""
    return a.reshape(a.shape[:2] + (1,) + a.shape[2:]) if nd == 1 else a


def _up_shape(shape, nd):
    shape = tuple(shape)
    return shape[:2] + (1,) + shape[2:] if nd == 1 else shape


def _up_geometry(nd, stride, padding, dilation):
    if nd == 1:
        return (1,) + stride, (0,) + padding, (1,) + dilation
    return stride, padding, dilation


def _down(a, nd):
    return a.reshape(a.shape[:2] + a.shape[3:]) if nd == 1 else a


# ---- the three linear maps ----------------------------------------------------------------
def _conv(xp, x, w, bias, stride, padding, dilation, groups, outs=None):
    """(N, C, *S) conv (O, C/g, *K) -> (N, O, *outs) (``outs`` crops the output: the input
    gradient of a transposed convolution with output_padding)."""
    nd = w.ndim - 2
    kernel, pads = tuple(w.shape[2:]), _pads(padding)
    if outs is None:
        outs = out_sizes(x.shape[2:], kernel, stride, pads, dilation)
    cols = im2col(xp, x, kernel, stride, pads, dilation, outs)  # (N, C*K, P)
    n, o, k = x.shape[0], w.shape[0], w.shape[1] * math.prod(kernel)
    cols = xp.reshape(cols, (n, groups, k, math.prod(outs)))  # explicit sizes: any may be 0
    out = xp.reshape(xp.matmul(xp.reshape(w, (groups, o // groups, k)), cols),
                     (n, o) + tuple(outs))
    return out if bias is None else out + xp.reshape(bias, (-1,) + (1,) * nd)


def _conv_t(xp, g, w, x_shape, stride, padding, dilation, groups):
    """The adjoint of :func:`_conv` in its input: (N, O, *O) -> (N, C, *x_shape[2:])."""
    n, o = g.shape[:2]
    outs, kernel = tuple(g.shape[2:]), tuple(w.shape[2:])
    k = w.shape[1] * math.prod(kernel)
    wt = xp.swapaxes(xp.reshape(w, (groups, o // groups, k)), 1, 2)  # (G, C/g*K, O/G)
    cols = xp.matmul(wt, xp.reshape(g, (n, groups, o // groups, math.prod(outs))))
    cols = xp.reshape(cols, (n, x_shape[1] * math.prod(kernel), math.prod(outs)))
    return col2im(xp, cols, tuple(x_shape[2:]), kernel, stride, _pads(padding), dilation, outs)


def _conv_w(xp, g, x, w_shape, stride, padding, dilation, groups):
    """The adjoint of :func:`_conv` in its weight: the sum over images of g @ cols(x).T."""
    kernel, outs = tuple(w_shape[2:]), tuple(g.shape[2:])
    cols = im2col(xp, x, kernel, stride, _pads(padding), dilation, outs)
    n, o, p = g.shape[0], g.shape[1], math.prod(outs)
    k = w_shape[1] * math.prod(kernel)
    gm = xp.reshape(g, (n, groups, o // groups, p))
    cm = xp.reshape(cols, (n, groups, k, p))
    dw = xp.sum(xp.matmul(gm, xp.swapaxes(cm, -1, -2)), axis=0)
    return xp.reshape(dw, tuple(w_shape))


# ---- the op --------------------------------------------------------------------------------
def _transposed_shape(x_shape, w_shape, stride, padding, dilation, output_padding, groups):
    return (x_shape[0], w_shape[1] * groups) + tuple(
        (x_shape[2 + i] - 1) * stride[i] - 2 * padding[i] + dilation[i] * (w_shape[2 + i] - 1)
        + output_padding[i] + 1 for i in range(len(w_shape) - 2))


def _forward(xp, input, weight, bias, stride, padding, dilation, transposed, output_padding,
             groups):
    if not transposed:
        return _conv(xp, input, weight, bias, stride, padding, dilation, groups)
    nd = weight.ndim - 2
    shape = _transposed_shape(input.shape, weight.shape, stride, padding, dilation,
                              output_padding, groups)
    out = _conv_t(xp, input, weight, shape, stride, padding, dilation, groups)
    return out if bias is None else out + xp.reshape(bias, (-1,) + (1,) * nd)


def _input_grad(xp, grad, weight, input_shape, stride, padding, dilation, transposed, groups):
    if transposed:
        return _conv(xp, grad, weight, None, stride, padding, dilation, groups,
                     tuple(input_shape[2:]))
    return _conv_t(xp, grad, weight, tuple(input_shape), stride, padding, dilation, groups)


def _weight_grad(xp, grad, input, weight_shape, stride, padding, dilation, transposed, groups):
    if transposed:  # the roles of the image and the gradient swap
        return _conv_w(xp, input, grad, weight_shape, stride, padding, dilation, groups)
    return _conv_w(xp, grad, input, weight_shape, stride, padding, dilation, groups)


def _bias_grad(xp, grad):
    return xp.sum(grad, axis=(0,) + tuple(range(2, grad.ndim)))


# ---- the NumPy kernels, beside the rules they stand in for ---------------------------------
# 1-D and 2-D maps, a 1-D one as the 2-D one of height 1; an input gradient, a weight
# gradient or a transposed forward takes them only when the factor it multiplies by is
# finite (``_conv_numpy.finite``). Pinned to the rules by tests/ops/test_kernels.py (the
# op database's ``convolution`` entry) and tests/ops/test_conv_kernels.py.
def _forward_np(xp, input, weight, bias, stride, padding, dilation, transposed, output_padding,
                groups):
    nd = weight.ndim - 2
    geo = _up_geometry(nd, stride, padding, dilation)
    if not transposed:
        return _down(_conv_numpy.conv(_up(input, nd), _up(weight, nd), bias, *geo, groups), nd)
    shape = _transposed_shape(input.shape, weight.shape, stride, padding, dilation,
                              output_padding, groups)
    return _down(_conv_numpy.conv_transpose(_up(input, nd), _up(weight, nd), _up_shape(shape, nd),
                                            *geo, groups, bias), nd)


def _forward_np_when(input, weight, bias, stride, padding, dilation, transposed,
                     output_padding, groups):
    return weight.ndim <= 4 and (not transposed or _conv_numpy.finite(weight))


def _input_grad_np(xp, grad, weight, input_shape, stride, padding, dilation, transposed,
                   groups):
    nd = weight.ndim - 2
    geo = _up_geometry(nd, stride, padding, dilation)
    if transposed:
        ohw = _up_shape((0, 0) + tuple(input_shape[2:]), nd)[2:]
        return _down(_conv_numpy.conv(_up(grad, nd), _up(weight, nd), None, *geo, groups, ohw),
                     nd)
    return _down(_conv_numpy.conv_dx(_up(grad, nd), _up(weight, nd),
                                     _up_shape(input_shape, nd), *geo, groups), nd)


def _input_grad_np_when(grad, weight, input_shape, stride, padding, dilation, transposed,
                        groups):
    return weight.ndim <= 4 and (transposed or _conv_numpy.finite(weight))


def _weight_grad_np(xp, grad, input, weight_shape, stride, padding, dilation, transposed,
                    groups):
    g, x = (input, grad) if transposed else (grad, input)
    nd = len(weight_shape) - 2
    return _down(_conv_numpy.conv_dw(_up(g, nd), _up(x, nd), _up_shape(weight_shape, nd),
                                     *_up_geometry(nd, stride, padding, dilation), groups), nd)


def _weight_grad_np_when(grad, input, weight_shape, stride, padding, dilation, transposed,
                         groups):
    return len(weight_shape) <= 4 and _conv_numpy.finite(grad if transposed else input)


_forward = declare_kernel(_forward, _forward_np, _forward_np_when)  # (the jvp calls it too)
_input_grad = declare_kernel(_input_grad, _input_grad_np, _input_grad_np_when)
_weight_grad = declare_kernel(_weight_grad, _weight_grad_np, _weight_grad_np_when)
_bias_grad = declare_kernel(_bias_grad, lambda xp, grad: _conv_numpy.bias_grad(grad),
                            lambda grad: True)


def _jvp(xp, input_t, weight_t, bias_t, input, weight, stride, padding, dilation, transposed,
         output_padding, groups):
    """Bilinear in (input, weight): the tangent is conv(x_t, w) + conv(x, w_t) + b_t."""
    attrs = (stride, padding, dilation, transposed, output_padding, groups)
    out = None
    if input_t is not None:
        out = _forward(xp, input_t, weight, None, *attrs)
    if weight_t is not None:
        t = _forward(xp, input, weight_t, None, *attrs)
        out = t if out is None else out + t
    if bias_t is not None:
        t = xp.reshape(bias_t, (-1,) + (1,) * (weight.ndim - 2))
        out = t if out is None else out + t
    return out


_convolution = defop("convolution", _forward, inputs=("input", "weight", "bias"),
                     vjp={"input": _input_grad, "weight": _weight_grad, "bias": _bias_grad},
                     jvp=_jvp, promote=("input", "weight", "bias"),
                     node="ConvolutionBackward0")


def _tuple(v, n=2):
    return tuple(v) if isinstance(v, (tuple, list)) else (v,) * n


@register(method=False)
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
    sizes, kernel, geo = tuple(input.shape[2:]), tuple(weight.shape[2:]), (stride, padding,
                                                                           dilation)
    if nd == 1:  # checked, as PyTorch, on the 2-d shape it runs as
        sizes, kernel, geo = (1,) + sizes, (1,) + kernel, _up_geometry(1, *geo)
    _check_transposed_size(sizes, kernel, *geo, transposed,
                           (0,) * (len(sizes) - nd) + output_padding)
    return apply(_convolution, (input, weight, bias),
                 (stride, padding, dilation, bool(transposed), output_padding, groups))


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




# ---- PyTorch's functions ------------------------------------------------------------------
@_autocast.policy("conv1d")
def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return convolution(input, weight, bias, stride, padding, dilation, False, 0, groups)


@_autocast.policy("conv2d")
def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return convolution(input, weight, bias, stride, padding, dilation, False, 0, groups)


@_autocast.policy("conv3d")
def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return convolution(input, weight, bias, stride, padding, dilation, False, 0, groups)


@_autocast.policy("conv_transpose1d")
def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0,
                     groups=1, dilation=1):
    return convolution(input, weight, bias, stride, padding, dilation, True, output_padding,
                       groups)


@_autocast.policy("conv_transpose2d")
def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0,
                     groups=1, dilation=1):
    return convolution(input, weight, bias, stride, padding, dilation, True, output_padding,
                       groups)


@_autocast.policy("conv_transpose3d")
def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0,
                     groups=1, dilation=1):
    return convolution(input, weight, bias, stride, padding, dilation, True, output_padding,
                       groups)


for _f in (conv1d, conv2d, conv3d, conv_transpose1d, conv_transpose2d, conv_transpose3d):
    register(_f, method=False)
