"""Pooling, any number of spatial dims: max (with PyTorch's flat indices), average,
power-average, adaptive average and max, and max unpooling.

The kernels work on the last ``nd`` dims with any leading dims, so a batch of gradients
(``is_grads_batched``) is one more leading dim. Their rules are written on the array
namespace they get; what a rule divides or multiplies by (average pools' divisors,
adaptive averaging matrices) comes in as a non-differentiable tensor input, so it lives
on the input's device and is a Tensor under ``create_graph``. One-dimensional pooling
runs as PyTorch's does: the 2-D op on a height-1 view, squeezed back (so grad_fns read
SqueezeBackward1 over the 2-D node).
"""

import itertools
import math

from .. import _autocast
from .._dtype import is_float, np_iinfo
from .._tensor import Tensor, wrap
from ..autograd._batched import Batched
from ..backend import cpu_kernels, get_array_module, on_device
from ..backend.functions import functions
from ._registry import FUNCTIONS, _pretty, apply, defop, kernel, register
from .convolution import _tuple
from .im2col import col2im, out_sizes

__all__ = ["max_pool1d", "max_pool2d", "max_pool3d", "max_pool1d_with_indices",
           "max_pool2d_with_indices", "max_pool3d_with_indices", "avg_pool1d", "avg_pool2d",
           "avg_pool3d", "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d",
           "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d",
           "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices",
           "adaptive_max_pool3d_with_indices", "max_unpool1d", "max_unpool2d", "max_unpool3d",
           "lp_pool1d", "lp_pool2d", "lp_pool3d"]


def _unbatch(xp, t):
    """A batch of tangents (vectorized forward mode) as its data with the batch as one more
    leading dim, its namespace, and how to wrap the result back."""
    if type(t) is Batched:
        return t.data, get_array_module(t.data), t.like
    return t, xp, None


def _linear_in(op, forward, xp, t, others, attrs):
    """The tangent of an op linear in its first input: the op itself on the tangent (through
    the op on Tensors, so the tangent is differentiable)."""
    if isinstance(t, Tensor):
        return apply(op, (t,) + tuple(o if isinstance(o, (Tensor, float)) else wrap(o)
                                      for o in others), attrs)
    return forward(xp, t, *others, *attrs)


def _offset_slices(offset, dilation, stride, outs):
    """The strided view of a padded input read by one kernel offset."""
    return (Ellipsis,) + tuple(slice(o * d, o * d + s * (n - 1) + 1, s)
                               for o, d, s, n in zip(offset, dilation, stride, outs, strict=True))


def _plane_strides(sp):
    return tuple(math.prod(sp[i + 1:]) for i in range(len(sp)))


def _grid_index(xp, sizes, parts):
    """sum_i parts[i] broadcast along spatial axis i (of len(sizes))."""
    nd = len(sizes)
    out = 0
    for i, p in enumerate(parts):
        out = out + xp.reshape(p, (sizes[i],) + (1,) * (nd - 1 - i))
    return out


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


def _pool_args_nd(input, nd, kernel_size, stride, padding, dilation, ceil_mode, avg=False):
    """PyTorch's checks and geometry for an N-d (N >= 2) pooling: kernel, stride, the
    (left, right) padding of each dim (ceil_mode's extra on the right), dilation."""
    k = _tuple(kernel_size, nd)
    s = _tuple(stride, nd) if stride not in (None, [], ()) else k
    p, d = _tuple(padding, nd), _tuple(dilation, nd)
    _pool_checks(k, s, p, d)
    if input.ndim not in (nd + 1, nd + 2) or (nd != 2 and 0 in input.shape[-nd - 1:]):
        raise RuntimeError(f"non-empty {nd + 1}D or {nd + 2}D (batch mode) tensor expected "
                           f"for input")
    if 0 in input.shape[-nd - 1:]:
        raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor with optional 0 dim batch "
                           f"size for input, but got:{list(input.shape)}")
    sp = tuple(input.shape[-nd:])
    geo = [_pool_geometry(sp[i], k[i], s[i], p[i], d[i], ceil_mode) for i in range(nd)]
    if any(g[0] < 1 for g in geo):
        if avg and nd == 3:
            raise RuntimeError("input image (T: {} H: {} W: {}) smaller than kernel size "
                               "(kT: {} kH: {} kW: {})".format(*sp, *k))
        size = "x".join(str(v) for v in input.shape[-nd - 1:])
        out = "x".join(str(v) for v in (input.shape[-nd - 1], *(g[0] for g in geo)))
        raise RuntimeError(f"Given input size: ({size}). Calculated output size: ({out}). "
                           f"Output size is too small")
    return k, s, tuple(g[1] for g in geo), d


def _float_only(input, name):
    if not input.is_floating_point():
        raise NotImplementedError(f"\"{name}\" not implemented for "
                                  f"'{_pretty(input._data.dtype)}'")


# ---- max pooling ---------------------------------------------------------------------------
def _inside(xp, n, stride, pad, kernel, dilation, size):
    """Which kernel offsets of each of ``n`` windows along one dim read the input, not
    padding: an (n, kernel) mask."""
    at = xp.reshape(xp.arange(n) * stride - pad, (n, 1)) + xp.arange(kernel) * dilation
    return (at >= 0) & (at < size)


def _first_inside(xp, n, stride, pad, kernel, dilation, size):
    """The first offset of each window that reads the input. PyTorch's CPU kernel starts a
    window's index there, so a window whose inputs are all -inf (none greater than the
    -inf padding) gives its first input the gradient, not a padding position."""
    return xp.argmax(_inside(xp, n, stride, pad, kernel, dilation, size), axis=1)


def _outside(xp, n, stride, pad, kernel, dilation, size):
    """Which of ``n`` windows along one dim hold no input element (dilated windows of a
    ceil_mode pool can lie wholly in padding): their max is -inf and their index -1, so
    backward gives them no input (PyTorch's index there points outside the plane)."""
    return ~xp.any(_inside(xp, n, stride, pad, kernel, dilation, size), axis=1)


def _max_pool_2x2(xp, x):
    """2x2 windows at stride 2: the max of column pairs, then of row pairs of those, each
    pair's winner a comparison; None when a NaN needs the general path's NaN rule."""
    h, w = x.shape[-2:]
    x = x[..., :h - h % 2, :w - w % 2]
    x0, x1 = x[..., 0::2], x[..., 1::2]
    right = (x1 > x0).view(xp.int8)  # ties keep the first offset, as PyTorch
    m = xp.maximum(x0, x1)
    m0, m1 = m[..., 0::2, :], m[..., 1::2, :]
    out = xp.maximum(m0, m1)
    if out.size and functions(xp).any_true(xp.isnan(out.max())):
        return None
    r0, r1 = right[..., 0::2, :], right[..., 1::2, :]
    down = (m1 > m0).view(xp.int8)
    col = r1 - r0
    col *= down
    col += r0  # the winning row's column: r1 if down else r0
    off = down.astype(xp.int16 if w < 1 << 14 else xp.int64)
    off *= w
    off += col  # the winner's offset in the flat H*W plane from its window's corner
    oh, ow = out.shape[-2:]
    # (the offsets, a batch under vmap, on the left: a device array refuses one on its right)
    return out, off + (xp.reshape(xp.arange(oh) * (2 * w), (oh, 1)) + xp.arange(0, 2 * ow, 2))


def _max_pool_fwd(xp, self, kernel, stride, pads, dilation):
    """A running maximum over the kernel's strided views (no window copy); the first
    maximal offset (a later one only when strictly greater, or NaN, as PyTorch's CPU
    kernel) gives the flat index into the input's spatial volume."""
    nd = len(kernel)
    if kernel == stride == (2, 2) and dilation == (1, 1) and pads == ((0, 0), (0, 0)):
        res = _max_pool_2x2(xp, self)
        if res is not None:
            return res
    x, size = self, self.shape[self.ndim - nd:]
    padded = any(p for pr in pads for p in pr)
    if padded:
        low = -math.inf if is_float(x.dtype) else np_iinfo(x.dtype).min
        x = xp.pad(x, ((0, 0),) * (x.ndim - nd) + tuple(pads), constant_values=low)
    outs = out_sizes(x.shape[x.ndim - nd:], kernel, stride, ((0, 0),) * nd, dilation)
    offsets = list(itertools.product(*(range(k) for k in kernel)))
    out = xp.copy(x[_offset_slices(offsets[0], dilation, stride, outs)])
    ctype = xp.int8 if len(offsets) <= 127 else xp.int32
    codes = xp.arange(len(offsets), dtype=ctype)
    code = xp.zeros(out.shape, dtype=ctype)
    if padded:  # each window's index starts at its first input (see _first_inside)
        code += _grid_index(xp, outs, [_first_inside(xp, outs[i], stride[i], pads[i][0],
                                                     kernel[i], dilation[i], size[i])
                                       * math.prod(kernel[i + 1:])
                                       for i in range(nd)]).astype(ctype)
    for o, off in enumerate(offsets[1:], 1):
        v = x[_offset_slices(off, dilation, stride, outs)]
        better = (v > out) | (v != v)  # branch-free: masked writes are several times slower
        out = xp.where(better, v, out)  # (maximum may keep either zero of a tie of 0 and -0)
        code *= ~better
        code += better * codes[o]
    st = _plane_strides(size)
    base = _grid_index(xp, outs, [(xp.arange(outs[i]) * stride[i] - pads[i][0]) * st[i]
                                  for i in range(nd)])
    table = xp.asarray([sum(o * d * s for o, d, s in zip(off, dilation, st, strict=True))
                        for off in offsets], dtype=xp.int64)
    indices = xp.take(table, code) + base  # (the batch-capable side on the left)
    empty = _grid_index(xp, outs, [_outside(xp, outs[i], stride[i], pads[i][0], kernel[i],
                                            dilation[i], size[i]) for i in range(nd)])
    if functions(xp).any_true(empty):  # windows wholly in padding: no input, index -1
        indices[..., empty.astype(bool)] = -1
    return out, indices


def _scatter_grad(xp, grad, indices, self_shape, nd, overlap):
    """Gradients routed back to the flat spatial ``indices`` they came from (on Tensors,
    under create_graph, by the differentiable scatter_add)."""
    plane = math.prod(self_shape[len(self_shape) - nd:])
    b = math.prod(self_shape[:len(self_shape) - nd])
    if functions(xp).any_true(indices < 0):  # windows wholly in padding (index -1): no grad
        grad = xp.where(indices < 0, 0, grad)
        indices = xp.where(indices < 0, 0, indices)
    shape = (b, math.prod(grad.shape[grad.ndim - nd:]))  # explicit: b may be 0
    g, idx = xp.reshape(grad, shape), xp.reshape(indices, shape)
    if isinstance(g, Tensor):
        out = FUNCTIONS["scatter_add"](g.new_zeros((b, plane)), 1, idx, g)  # on g's device
        return xp.reshape(out, tuple(self_shape))
    flat = xp.reshape(idx + xp.reshape(xp.arange(b) * plane, (b, 1)), (-1,))
    if overlap:
        out = functions(xp).bincount(flat, xp.reshape(g, (-1,)),
                                     b * plane).astype(grad.dtype)
    else:  # each input receives at most one gradient
        out = xp.zeros(b * plane, dtype=grad.dtype)
        out[flat] = xp.reshape(g, (-1,))
    return xp.reshape(out, tuple(self_shape))


def _max_pool_grad(xp, grad, indices, self_shape, kernel, stride, dilation):
    overlap = any(s <= d * (k - 1) for s, k, d in zip(stride, kernel, dilation, strict=True))
    return _scatter_grad(xp, grad, indices, self_shape, len(kernel), overlap)


def _batched_max_pool_grad(grad, indices, self_shape, kernel, stride, dilation, batch):
    """A batch of gradients: the batch one more leading dim of the indices."""
    xp = get_array_module(grad)
    return _max_pool_grad(xp, grad, xp.broadcast_to(indices, grad.shape), (batch, *self_shape),
                          kernel, stride, dilation)


# The compiled kernels (numba, in float32), declared beside the rules they stand in for
# and pinned to them by tests/ops/test_kernels.py and tests/ops/test_pool_kernels.py: a
# 2-D pool in one pass (NumPy's takes a pass per kernel offset, after a padded copy: a
# ResNet's 3x3, stride-2 pool ran at a quarter of PyTorch's speed), the gradient's
# scatter as one indexed add per element (a third of NumPy's fancy-index assignment).
def _max_pool_grad_when(grad, indices, self_shape, kernel, stride, dilation):
    return (cpu_kernels.takes(grad) and indices.dtype.str[1:] == "i8"
            and indices.shape == grad.shape and indices.flags.c_contiguous)


def _max_pool_op(nd):
    """Op ``max_pool{nd}d``, its rules each declared with its own kernels (a declaration
    names one op)."""
    forward = _max_pool_fwd
    if nd == 2:
        forward = kernel(_max_pool_fwd,
                         lambda xp, self, *attrs: cpu_kernels.max_pool_2d(self, *attrs),
                         lambda self, *attrs: cpu_kernels.takes(self), leading=True)
    grad = kernel(_max_pool_grad, lambda xp, grad, indices, self_shape, *attrs:
                  cpu_kernels.max_pool_grad(grad, indices, self_shape,
                                            math.prod(self_shape[len(self_shape) - nd:])),
                  _max_pool_grad_when, leading=True)
    return defop(f"max_pool{nd}d", forward, inputs=("self",), vjp={"self": grad},
                 jvp="transpose", outputs=("result", "indices"), nondiff_outputs=("indices",),
                 batched={"self": _batched_max_pool_grad},
                 node=f"MaxPool{nd}DWithIndicesBackward0", backward_reads="self")


_max_pool = {nd: _max_pool_op(nd) for nd in (2, 3)}


def _max_pool_nd(input, nd, kernel_size, stride, padding, dilation, ceil_mode,
                 return_indices):
    k, s, pads, d = _pool_args_nd(input, nd, kernel_size, stride, padding, dilation,
                                  ceil_mode)
    out, idx = apply(_max_pool[nd], (input,), (k, s, pads, d))
    return (out, idx) if return_indices else out


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    if input._data.dtype.kind in "bc":  # integers pool as PyTorch's do
        raise NotImplementedError(f"\"max_pool2d\" not implemented for "
                                  f"'{_pretty(input._data.dtype)}'")
    return _max_pool_nd(input, 2, kernel_size, stride, padding, dilation, ceil_mode,
                        return_indices)


@_autocast.policy("max_pool3d")
def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    return _max_pool_nd(input, 3, kernel_size, stride, padding, dilation, ceil_mode,
                        return_indices)


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    return max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """The 2-D kernel on a (.., 1, L) view, as PyTorch (whose checks and messages are the
    2-D ones when indices are asked for)."""
    if return_indices:
        return max_pool1d_with_indices(input, kernel_size, stride, padding, dilation,
                                       ceil_mode)
    _float_only(input, "max_pool1d_impl")
    if input.ndim not in (2, 3) or 0 in input.shape[-2:]:
        raise RuntimeError(f"max_pool1d: Expected 2D or 3D (batch mode) tensor with optional "
                           f"0 dim batch size for input, but got:{list(input.shape)}")
    k, = _tuple(kernel_size, 1)
    s, = _tuple(stride, 1) if stride not in (None, [], ()) else (k,)
    p, = _tuple(padding, 1)
    d, = _tuple(dilation, 1)
    for v, what in ((k, "kernel_size"), (s, "stride")):
        if v <= 0:
            raise RuntimeError(f"max_pool1d() {what} must be greater than zero, but got {v}")
    if p < 0:
        raise RuntimeError(f"max_pool1d() padding must be non-negative, but got {p}")
    if p * 2 > k:
        raise RuntimeError(f"max_pool1d() padding should be at most half of kernel size, but "
                           f"got padding={p} and kernel_size={k}")
    if d <= 0:
        raise RuntimeError(f"max_pool1d() dilation must be greater than zero, but got {d}")
    out_len = _pool_geometry(input.shape[-1], k, s, p, d, ceil_mode)[0]
    if out_len < 1:
        raise RuntimeError(f"max_pool1d() Invalid computed output size: {out_len}")
    return max_pool2d(input.unsqueeze(-2), (1, k), (1, s), (0, p), (1, d),
                      ceil_mode).squeeze(-2)


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    k, = _tuple(kernel_size, 1)
    s, = _tuple(stride, 1) if stride not in (None, [], ()) else (k,)
    out, idx = max_pool2d(input.unsqueeze(-2), (1, k), (1, s), (0, _tuple(padding, 1)[0]),
                          (1, _tuple(dilation, 1)[0]), ceil_mode, True)
    return out.squeeze(-2), idx.squeeze(-2)


# ---- average pooling -----------------------------------------------------------------------
def _avg_divisor(input, kernel, stride, pads, count_include_pad, override):
    """Each window's divisor: ``override``, or its size (only what overlaps the input
    without count_include_pad), as a tensor on ``input``'s device."""
    if override:
        return float(override)
    nd = len(kernel)
    dims = [(input.shape[input.ndim - nd + i], kernel[i], stride[i], *pads[i])
            for i in range(nd)]
    dt = input._data.dtype if input.is_floating_point() else None

    def make(xp):
        div = None
        for n, k, s, p, right in dims:
            start = xp.arange((n + p + right - k) // s + 1) * s - p
            end = xp.minimum(start + k, n + p)  # the ceil_mode overhang never counts
            if not count_include_pad:
                start, end = xp.maximum(start, 0), xp.minimum(end, n)
            count = end - start
            div = count if div is None else xp.reshape(div, div.shape + (1,)) * count
        return div if dt is None else div.astype(dt)

    return wrap(on_device(input.device, make))


def _avg_pool_fwd(xp, self, divisor, kernel, stride, pads):
    """A running sum over the kernel's strided views of the zero-padded input."""
    x, xp, back = _unbatch(xp, self)
    nd = len(kernel)
    if any(p for pr in pads for p in pr):
        x = xp.pad(x, ((0, 0),) * (x.ndim - nd) + tuple(pads))
    outs = out_sizes(x.shape[x.ndim - nd:], kernel, stride, ((0, 0),) * nd, (1,) * nd)
    offsets = itertools.product(*(range(k) for k in kernel))
    exact = not is_float(x.dtype)  # integers: summed in int64, divided toward zero
    out = x[_offset_slices(next(offsets), (1,) * nd, stride, outs)].astype(
        xp.int64 if exact else x.dtype)
    for off in offsets:
        out += x[_offset_slices(off, (1,) * nd, stride, outs)]
    if exact:
        out = (out / divisor).astype(x.dtype)
    else:
        out /= divisor
    return back(out) if back else out


def _avg_pool_grad(xp, grad, divisor, self_shape, kernel, stride, pads):
    """Each window's share added back: col2im of the divided gradient, broadcast over the
    kernel offsets (differentiable on Tensors: double backward)."""
    nd = len(kernel)
    g = grad / divisor
    lead, c = tuple(grad.shape[:grad.ndim - nd - 1]), grad.shape[grad.ndim - nd - 1]
    k, p = math.prod(kernel), math.prod(grad.shape[grad.ndim - nd:])
    cols = xp.broadcast_to(xp.reshape(g, lead + (c, 1, p)), lead + (c, k, p))
    return col2im(xp, xp.reshape(cols, lead + (c * k, p)), tuple(self_shape[-nd:]), kernel,
                  stride, pads, (1,) * nd)


_avg_pool = {nd: defop(f"avg_pool{nd}d", _avg_pool_fwd, inputs=("self", "divisor"),
                       vjp={"self": _avg_pool_grad},
                       jvp=lambda xp, self_t, divisor, kernel, stride, pads:
                       _linear_in(_avg_pool[len(kernel)], _avg_pool_fwd, xp, self_t,
                                  (divisor,), (kernel, stride, pads)),
                       node=f"AvgPool{nd}DBackward0", backward_reads="self")
              for nd in (2, 3)}


def _avg_pool_nd(input, nd, kernel_size, stride, padding, ceil_mode, count_include_pad,
                 divisor_override):
    k, s, pads, _ = _pool_args_nd(input, nd, kernel_size, stride, padding, 1, ceil_mode, True)
    div = _avg_divisor(input, k, s, pads, count_include_pad, divisor_override)
    return apply(_avg_pool[nd], (input, div), (k, s, pads))


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    return _avg_pool_nd(input, 2, kernel_size, stride, padding, ceil_mode, count_include_pad,
                        divisor_override)


@_autocast.policy("avg_pool3d")
def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    return _avg_pool_nd(input, 3, kernel_size, stride, padding, ceil_mode, count_include_pad,
                        divisor_override)


def _check_1d(input, name):
    if input.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional "
                           f"tensor for argument #1 'self' (while checking arguments for "
                           f"{name})")


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True):
    _check_1d(input, "avg_pool1d")
    k, = _tuple(kernel_size, 1)
    s, = _tuple(stride, 1) if stride not in (None, [], ()) else (k,)
    p, = _tuple(padding, 1)
    return avg_pool2d(input.unsqueeze(-2), (1, k), (1, s), (0, p), ceil_mode,
                      count_include_pad).squeeze(-2)


# ---- adaptive pooling ----------------------------------------------------------------------
def _adaptive_nonempty(input, nd, name):
    """Adaptive pooling has no window over an empty spatial dim: PyTorch's error."""
    for i in range(input.ndim - nd, input.ndim):
        if input.shape[i] == 0:
            raise RuntimeError(f"{name}(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but input has sizes {list(input.shape)} with "
                               f"dimension {i} being empty")


def _adaptive_size(input, output_size, nd):
    sizes = _tuple(output_size, nd)
    return tuple(input.shape[input.ndim - nd + i] if o is None else o
                 for i, o in enumerate(sizes))


def _bin_ends(i, n, o):
    """Start and end of PyTorch's adaptive bin ``i`` (an int, or an integer array of
    them) of ``n`` positions into ``o``: [floor(i n/o), ceil((i+1) n/o))."""
    return (i * n) // o, -((-(i + 1) * n) // o)


def _bins(n, o):
    """Every adaptive bin's (start, end), as host ints."""
    return [_bin_ends(i, n, o) for i in range(o)]


def _adaptive_matrix(xp, n, o, dtype):
    """(o, n) averaging matrix of the adaptive bins."""
    a, b = _bin_ends(xp.arange(o), n, o)
    j = xp.arange(n)
    inside = (j >= a[:, None]) & (j < b[:, None])
    return (inside / (b - a)[:, None]).astype(dtype)


def _apply_mats(xp, x, mats, transpose=False):
    """``x`` with spatial dim i (of the last len(mats)) multiplied by ``mats[i]``: one
    matmul per dim, over a (lead, before, n, after) view."""
    nd = len(mats)
    lead = tuple(x.shape[:x.ndim - nd])
    for i, m in enumerate(mats):
        m = xp.swapaxes(m, 0, 1) if transpose else m
        sp = tuple(x.shape[len(lead):])
        x = xp.reshape(x, lead + (math.prod(sp[:i]), sp[i], math.prod(sp[i + 1:])))
        x = xp.reshape(xp.matmul(m, x), lead + sp[:i] + (m.shape[0],) + sp[i + 1:])
    return x


def _adaptive_avg_fwd(xp, self, *mats):
    """Averaging GEMMs; where a non-finite input turns their ``0 * inf`` outside a bin into
    NaN, the bins' own means instead (PyTorch sums each window)."""
    out = _apply_mats(xp, self, mats)
    if not functions(xp).any_true(~xp.isfinite(out)):
        return out
    nd = len(mats)
    for i, m in enumerate(mats):
        axis = self.ndim - nd + i
        bins = [xp.take(self, xp.arange(a, b), axis=axis)
                for a, b in _bins(self.shape[axis], m.shape[0])]
        self = xp.stack([xp.mean(b, axis=axis) for b in bins], axis=axis)
    return self


# (the matrices are named inputs: the registry reads the rules' signatures)
_adaptive_avg = {
    2: defop("adaptive_avg_pool2d",
             lambda xp, self, m0, m1: _adaptive_avg_fwd(xp, self, m0, m1),
             inputs=("self", "m0", "m1"),
             vjp={"self": lambda xp, grad, m0, m1: _apply_mats(xp, grad, (m0, m1), True)},
             jvp=lambda xp, self_t, m0, m1: _apply_mats(xp, self_t, (m0, m1)),
             node="AdaptiveAvgPool2DBackward0", backward_reads="self"),
    3: defop("adaptive_avg_pool3d",
             lambda xp, self, m0, m1, m2: _adaptive_avg_fwd(xp, self, m0, m1, m2),
             inputs=("self", "m0", "m1", "m2"),
             vjp={"self": lambda xp, grad, m0, m1, m2: _apply_mats(xp, grad, (m0, m1, m2),
                                                                   True)},
             jvp=lambda xp, self_t, m0, m1, m2: _apply_mats(xp, self_t, (m0, m1, m2)),
             node="AdaptiveAvgPool3DBackward0", backward_reads="self")}


def _adaptive_avg_nd(input, output_size, nd):
    _adaptive_nonempty(input, nd, f"adaptive_avg_pool{nd}d")
    size = _adaptive_size(input, output_size, nd)
    dt = input._data.dtype
    sizes = tuple(zip(input.shape[-nd:], size, strict=True))
    mats = tuple(wrap(m) for m in on_device(
        input.device, lambda xp: [_adaptive_matrix(xp, n, o, dt) for n, o in sizes]))
    return apply(_adaptive_avg[nd], (input,) + mats)


def adaptive_avg_pool2d(input, output_size):
    if not input.is_floating_point():
        raise NotImplementedError(f"\"adaptive_avg_pool2d\" not implemented for "
                                  f"'{_pretty(input._data.dtype)}'")
    if _tuple(output_size) == (1, 1):  # PyTorch takes a mean here (MeanBackward1), even of
        return input.mean((-2, -1), keepdim=True)  # nothing
    return _adaptive_avg_nd(input, output_size, 2)


@_autocast.policy("adaptive_avg_pool3d")
def adaptive_avg_pool3d(input, output_size):
    if input.ndim not in (4, 5):
        raise RuntimeError(f"adaptive_avg_pool3d(): Expected 4D or 5D tensor, but got "
                           f"{list(input.shape)}")
    _float_only(input, "adaptive_avg_pool3d_cpu")
    _adaptive_nonempty(input, 3, "adaptive_avg_pool3d")
    if _adaptive_size(input, output_size, 3) == (1, 1, 1):  # a mean, as PyTorch
        return input.mean((-3, -2, -1), keepdim=True)
    return _adaptive_avg_nd(input, output_size, 3)


def adaptive_avg_pool1d(input, output_size):
    _check_1d(input, "adaptive_avg_pool1d")
    o, = _tuple(output_size, 1)
    return adaptive_avg_pool2d(input.unsqueeze(-2), (1, o)).squeeze(-2)


def _adaptive_table(xp, n, o):
    """(o, kmax) input positions of each adaptive bin, the short bins padded with their
    last position (a repeat never changes a maximum, nor its first position)."""
    k = max((b - a for a, b in _bins(n, o)), default=1)
    a, b = _bin_ends(xp.arange(o), n, o)
    return xp.minimum(a[:, None] + xp.arange(k), b[:, None] - 1)


def _adaptive_max_fwd(xp, self, tables):
    """Every bin gathered into a (..., *out, K) block (one copy per dim), then argmax."""
    nd = len(tables)
    lead = self.ndim - nd
    sp = self.shape[lead:]
    x = self
    for i, t in enumerate(tables):
        x = xp.take(x, xp.reshape(t, (-1,)), axis=lead + i)
    outs = tuple(t.shape[0] for t in tables)
    ks = tuple(t.shape[1] for t in tables)
    x = xp.reshape(x, x.shape[:lead] + tuple(v for t in tables for v in t.shape))
    perm = (*range(lead), *(lead + 2 * i for i in range(nd)),
            *(lead + 2 * i + 1 for i in range(nd)))
    x = xp.reshape(xp.transpose(x, perm), x.shape[:lead] + outs + (math.prod(ks),))
    code = xp.argmax(x, axis=-1)
    out = xp.take_along_axis(x, code[..., None], -1)[..., 0]
    # PyTorch's kernel keeps the last NaN (argmax the first): only the indices change
    if functions(xp).any_true(xp.isnan(out)):
        nan = xp.isnan(x)
        last = x.shape[-1] - 1 - xp.argmax(nan[..., ::-1], axis=-1)
        code = xp.where(xp.any(nan, axis=-1), last, code)
    parts = xp.unravel_index(code, ks)
    idx = 0
    for i, (t, p) in enumerate(zip(tables, parts, strict=True)):
        rows = xp.reshape(xp.arange(outs[i]), (outs[i],) + (1,) * (nd - 1 - i))
        # t[rows, p], as a take: a batched p indexes the table
        idx = idx * sp[i] + xp.take(xp.reshape(t, (-1,)), p + rows * t.shape[1], 0)
    return out, xp.astype(idx, xp.int64)


def _adaptive_max_grad(xp, grad, indices, self_shape, tables):
    return _scatter_grad(xp, grad, indices, self_shape, len(tables), True)


def _batched_adaptive_max_grad(grad, indices, self_shape, tables, batch):
    """A batch of gradients: the batch one more leading dim of the indices."""
    xp = get_array_module(grad)
    return _adaptive_max_grad(xp, grad, xp.broadcast_to(indices, grad.shape),
                              (batch, *self_shape), tables)


def _adaptive_max_op(nd):
    return defop(
        f"adaptive_max_pool{nd}d", _adaptive_max_fwd, inputs=("self",),
        vjp={"self": _adaptive_max_grad}, jvp="transpose", outputs=("result", "indices"),
        nondiff_outputs=("indices",),
        batched={"self": _batched_adaptive_max_grad},
        node=f"AdaptiveMaxPool{nd}DBackward0", backward_reads="self")


_adaptive_max = {2: _adaptive_max_op(2), 3: _adaptive_max_op(3)}


def _adaptive_max_nd(input, output_size, nd, return_indices):
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"adaptive_max_pool{nd}d(): Expected {nd + 1}D or {nd + 2}D tensor, "
                           f"but got: {list(input.shape)}")
    _adaptive_nonempty(input, nd, f"adaptive_max_pool{nd}d")
    size = _adaptive_size(input, output_size, nd)
    if any(o < 0 for o in size):
        shape = list(input.shape[:-nd]) + list(size)
        raise RuntimeError(f"Trying to create tensor with negative dimension "
                           f"{min(size)}: {shape}")
    _float_only(input, "adaptive_max_pool2d" if nd == 2 else "adaptive_max_pool3d_cpu")
    sizes = tuple(zip(input.shape[-nd:], size, strict=True))
    tables = on_device(input.device,
                       lambda xp: tuple(_adaptive_table(xp, n, o) for n, o in sizes))
    out, idx = apply(_adaptive_max[nd], (input,), (tables,))
    return (out, idx) if return_indices else out


def adaptive_max_pool2d(input, output_size, return_indices=False):
    return _adaptive_max_nd(input, output_size, 2, return_indices)


@_autocast.policy("adaptive_max_pool3d")
def adaptive_max_pool3d(input, output_size, return_indices=False):
    return _adaptive_max_nd(input, output_size, 3, return_indices)


def adaptive_max_pool1d(input, output_size, return_indices=False):
    _check_1d(input, "adaptive_max_pool1d")
    o, = _tuple(output_size, 1)
    out, idx = _adaptive_max_nd(input.unsqueeze(-2), (1, o), 2, True)
    return (out.squeeze(-2), idx.squeeze(-2)) if return_indices else out.squeeze(-2)


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):
    return adaptive_max_pool1d(input, output_size, True)


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    return adaptive_max_pool2d(input, output_size, True)


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=False):
    return adaptive_max_pool3d(input, output_size, True)


# ---- max unpooling -------------------------------------------------------------------------
def _unpool_fwd(xp, self, indices, out_size):
    """Each value written at its flat index of a zeroed output volume."""
    nd = len(out_size)
    lead = tuple(indices.shape[:indices.ndim - nd])
    rows = (math.prod(lead), math.prod(indices.shape[-nd:]))
    out = xp.zeros((rows[0], math.prod(out_size)), dtype=self.dtype)
    xp.put_along_axis(out, xp.reshape(indices, rows), xp.reshape(self, rows), -1)
    return xp.reshape(out, lead + tuple(out_size))


def _unpool_grad(xp, grad, indices, self_shape, out_size):
    """The gradient read back at each value's index."""
    nd = len(out_size)
    b = math.prod(self_shape[:len(self_shape) - nd])
    g = xp.reshape(grad, (b, math.prod(out_size)))
    idx = xp.reshape(indices, (b, math.prod(self_shape[len(self_shape) - nd:])))
    return xp.reshape(xp.take_along_axis(g, idx, 1), tuple(self_shape))


def _unpool_jvp(xp, self_t, indices, out_size):
    return _linear_in(_max_unpool[len(out_size)], _unpool_fwd, xp, self_t, (indices,),
                      (out_size,))


_max_unpool = {nd: defop(f"max_unpool{nd}d", _unpool_fwd, inputs=("self", "indices"),
                         vjp={"self": _unpool_grad}, jvp=_unpool_jvp,
                         node=f"MaxUnpool{nd}DBackward0") for nd in (2, 3)}


def _unpool_output_size(input, kernel_size, stride, padding, output_size):
    """PyTorch's ``_unpool_output_size``: the default size, or a checked ``output_size``."""
    nd = len(kernel_size)
    default = [(input.shape[input.ndim - nd + d] - 1) * stride[d] + kernel_size[d]
               - 2 * padding[d] for d in range(nd)]
    if output_size is None:
        return default
    if len(output_size) == nd + 2:
        output_size = output_size[2:]
    if len(output_size) != nd:
        raise ValueError(f"output_size should be a sequence containing {nd} or {nd + 2} "
                         f"elements, but it has a length of '{len(output_size)}'")
    for d in range(nd):
        lo, hi = default[d] - stride[d], default[d] + stride[d]
        if not lo < output_size[d] < hi:
            raise ValueError(f'invalid output_size "{output_size}" (dim {d} must be between '
                             f'{lo} and {hi})')
    return list(output_size)


def _max_unpool_nd(input, indices, out_size, nd):
    if indices.dtype.name != "int64":
        got = f" but got: {_pretty(indices._data.dtype)}" if nd == 2 else ""
        raise RuntimeError(f"elements in indices should be type int64{got}")
    if tuple(indices.shape) != tuple(input.shape):
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor "
                           f"({list(input.shape)}) but got indices tensor with shape: "
                           f"{list(indices.shape)}")
    out_size = tuple(int(v) for v in out_size)
    idx = indices._data.reshape(-1)
    bad = (idx < 0) | (idx >= math.prod(out_size))
    if functions(get_array_module(idx)).any_true(bad):  # PyTorch reports one: the first
        value = idx[bad.argmax()]
        raise RuntimeError(f"Found an invalid max index: {value} (output volumes "
                           f"are of size {'x'.join(str(v) for v in out_size)})")
    return apply(_max_unpool[nd], (input, indices), (out_size,))


@_autocast.policy("max_unpool2d")
def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    k = _tuple(kernel_size)
    s = _tuple(stride) if stride is not None else k
    size = _unpool_output_size(input, k, s, _tuple(padding), output_size)
    return _max_unpool_nd(input, indices, size, 2)


@_autocast.policy("max_unpool3d")
def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    k = _tuple(kernel_size, 3)
    s = _tuple(stride, 3) if stride is not None else k
    size = _unpool_output_size(input, k, s, _tuple(padding, 3), output_size)
    return _max_unpool_nd(input, indices, size, 3)


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The 2-D op on (.., L, 1) views, as PyTorch."""
    k = _tuple(kernel_size, 1)
    s = _tuple(stride, 1) if stride is not None else k
    size = _unpool_output_size(input, k, s, _tuple(padding, 1), output_size)
    return _max_unpool_nd(input.unsqueeze(-1), indices.unsqueeze(-1), size + [1],
                          2).squeeze(-1)


# ---- power-average pooling (composites, as PyTorch's) --------------------------------------------
def _lp_finish(out, norm_type, count):
    """PyTorch's ``(sign(out) * relu(|out|) * count) ** (1/p)``; relu as a select, so an
    all-zero window gets a zero gradient (retrograd's relu multiplies by its mask, and
    0 * inf from the power's derivative would make it NaN)."""
    a = out.abs()
    return (out.sign() * FUNCTIONS["where"](a > 0, a, 0)).mul(count).pow(1.0 / norm_type)


def _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, avg, max_pool, count):
    """p = +-inf: the max (min) of |x| over each window, as PyTorch's."""
    if norm_type == math.inf:
        return max_pool(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    if norm_type == -math.inf:
        return -max_pool(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    out = avg(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return _lp_finish(out, norm_type, count)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, avg_pool1d, max_pool1d,
                    kernel_size)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    kw, kh = _tuple(kernel_size)
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, avg_pool2d, max_pool2d,
                    kw * kh)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    kd, kw, kh = _tuple(kernel_size, 3)
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, avg_pool3d, max_pool3d,
                    kd * kw * kh)


# ``torch.<name>`` top-level functions PyTorch has for these.
register(max_pool1d, method=False)
register(max_pool2d, method=False)
register(max_pool3d, method=False)
register(max_pool1d_with_indices, method=False)
register(avg_pool1d, method=False)
register(adaptive_avg_pool1d, method=False)


@register(method=False, name="adaptive_max_pool1d")
def _torch_adaptive_max_pool1d(input, output_size):
    """``torch.adaptive_max_pool1d`` returns the indices too."""
    return adaptive_max_pool1d(input, output_size, True)
