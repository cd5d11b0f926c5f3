"""The pooling family beyond ``conv.py``'s 2-D kernels: N-d max/avg pooling (3-D), adaptive
max pooling, N-d adaptive average pooling, max unpooling and power-average pooling.

One-dimensional pooling runs as PyTorch's does: the 2-D op on a height-1 view, squeezed
back (so grad_fns read SqueezeBackward1 over the 2-D node). The N-d kernels work on the
last ``nd`` dims with any leading dims, so a batch of gradients (``is_grads_batched``)
is just one more leading dim.
"""

import itertools
import math

import numpy

from ._registry import FUNCTIONS, _pretty, apply, defop, register
from .conv import (_adaptive_nonempty, _const, _first_inside, _is_np, _outside, _pool_checks,
                   _pool_geometry, _tuple)
from .conv import adaptive_avg_pool2d, avg_pool2d, max_pool2d

__all__ = ["max_pool1d", "max_pool1d_with_indices", "max_pool2d_with_indices", "max_pool3d",
           "max_pool3d_with_indices", "avg_pool1d", "avg_pool3d", "adaptive_avg_pool1d",
           "adaptive_avg_pool3d", "adaptive_max_pool1d", "adaptive_max_pool2d",
           "adaptive_max_pool3d", "adaptive_max_pool1d_with_indices",
           "adaptive_max_pool2d_with_indices", "adaptive_max_pool3d_with_indices",
           "max_unpool1d", "max_unpool2d", "max_unpool3d", "lp_pool1d", "lp_pool2d",
           "lp_pool3d"]


def _unbatch(xp, t):
    """A batch of tangents (vectorized forward mode) as a plain array with the batch as one
    more leading dim, and how to wrap the result back."""
    if getattr(xp, "batched", False):
        from ..autograd._batched import Batched
        return t.data, Batched
    return t, None


def _offset_slices(offset, dilation, stride, outs):
    """The strided view of a padded input read by one kernel offset."""
    return (Ellipsis,) + tuple(slice(o * d, o * d + s * (n - 1) + 1, s)
                               for o, d, s, n in zip(offset, dilation, stride, outs, strict=True))


def _outs(shape, kernel, stride, dilation):
    nd = len(kernel)
    return tuple((shape[len(shape) - nd + i] - dilation[i] * (kernel[i] - 1) - 1) // stride[i]
                 + 1 for i in range(nd))


def _plane_strides(sp):
    return tuple(math.prod(sp[i + 1:]) for i in range(len(sp)))


def _grid_index(sizes, parts):
    """sum_i parts[i] broadcast along spatial axis i (of len(sizes))."""
    nd = len(sizes)
    out = 0
    for i, p in enumerate(parts):
        out = out + numpy.reshape(p, (sizes[i],) + (1,) * (nd - 1 - i))
    return out


# ---- N-d max pooling ------------------------------------------------------------------------
def _max_pool_nd_fwd(xp, self, kernel, stride, pads, dilation):
    """A running maximum over the kernel's strided views; the first maximal offset (a later
    one only when strictly greater, or NaN, as PyTorch's CPU kernel) gives the flat index
    into the input's spatial volume."""
    nd = len(kernel)
    x, size = self, self.shape[self.ndim - nd:]
    padded = any(p for pr in pads for p in pr)
    if padded:
        low = -numpy.inf if x.dtype.kind == "f" else numpy.iinfo(x.dtype).min
        x = numpy.pad(x, ((0, 0),) * (x.ndim - nd) + tuple(pads), constant_values=low)
    outs = _outs(x.shape, kernel, stride, dilation)
    offsets = list(itertools.product(*(range(k) for k in kernel)))
    out = x[_offset_slices(offsets[0], dilation, stride, outs)].copy()
    ctype = numpy.int8 if len(offsets) <= 127 else numpy.int32
    code = numpy.zeros(out.shape, dtype=ctype)
    if padded:  # each window's index starts at its first input (see _first_inside)
        code += _grid_index(outs, [_first_inside(outs[i], stride[i], pads[i][0], kernel[i],
                                                 dilation[i], size[i]) * math.prod(kernel[i + 1:])
                                   for i in range(nd)]).astype(ctype)
    for o, off in enumerate(offsets[1:], 1):
        v = x[_offset_slices(off, dilation, stride, outs)]
        better = (v > out) | (v != v)
        numpy.maximum(out, v, out=out)
        code *= ~better
        code += better * ctype(o)
    st = _plane_strides(self.shape[self.ndim - nd:])
    base = _grid_index(outs, [(numpy.arange(outs[i]) * stride[i] - pads[i][0]) * st[i]
                              for i in range(nd)])
    table = numpy.array([sum(o * d * s for o, d, s in zip(off, dilation, st, strict=True))
                         for off in offsets])
    indices = base + table.take(code)
    empty = _grid_index(outs, [_outside(outs[i], stride[i], pads[i][0], kernel[i], dilation[i],
                                        size[i]) for i in range(nd)])
    if numpy.any(empty):  # windows wholly in padding: no input, index -1
        indices[..., empty.astype(bool)] = -1
    return out, indices


def _scatter_grad(xp, grad, indices, self_shape, nd, overlap):
    """Gradients routed back to the flat spatial ``indices`` they came from."""
    plane = math.prod(self_shape[len(self_shape) - nd:])
    b = math.prod(self_shape[:len(self_shape) - nd])
    if bool((indices < 0).any()):  # windows wholly in padding (index -1): no input's gradient
        grad = xp.where(indices < 0, 0, grad)
        indices = xp.where(indices < 0, 0, indices)
    shape = (b, math.prod(grad.shape[grad.ndim - nd:]))  # explicit: b may be 0
    if _is_np(xp):
        g = grad.reshape(shape)
        idx = indices.reshape(g.shape)
        if overlap:
            flat = idx + (numpy.arange(b) * plane)[:, None]
            out = numpy.bincount(flat.ravel(), weights=g.ravel(),
                                 minlength=b * plane).astype(grad.dtype)
        else:  # each input receives at most one gradient
            out = numpy.zeros(b * plane, dtype=grad.dtype)
            out[(idx + numpy.arange(0, b * plane, plane)[:, None]).reshape(-1)] = g.reshape(-1)
        return out.reshape(self_shape)
    out = FUNCTIONS["scatter_add"](xp.zeros((b, plane), dtype=grad.dtype), 1,
                                   xp.reshape(indices, shape), xp.reshape(grad, shape))
    return xp.reshape(out, tuple(self_shape))


def _max_pool_nd_grad(xp, grad, indices, self_shape, kernel, stride, dilation):
    overlap = any(s <= d * (k - 1) for s, k, d in zip(stride, kernel, dilation, strict=True))
    return _scatter_grad(xp, grad, indices, self_shape, len(kernel), overlap)


_max_pool3d = defop(
    "max_pool3d", _max_pool_nd_fwd, inputs=("self",), vjp={"self": _max_pool_nd_grad},
    jvp="transpose", outputs=("result", "indices"), nondiff_outputs=("indices",),
    batched={"self": lambda grad, indices, self_shape, kernel, stride, dilation, batch:
             _max_pool_nd_grad(numpy, grad, numpy.broadcast_to(indices, grad.shape),
                               (batch, *self_shape), kernel, stride, dilation)},
    node="MaxPool3DWithIndicesBackward0")


def _pool_args_nd(input, nd, kernel_size, stride, padding, dilation, ceil_mode, avg=False):
    """PyTorch's checks and geometry for an N-d (N >= 3) pooling: kernel, stride, the
    (left, right) padding of each dim (ceil_mode's extra on the right), dilation."""
    k = _tuple(kernel_size, nd)
    s = _tuple(stride, nd) if stride not in (None, [], ()) else k
    p, d = _tuple(padding, nd), _tuple(dilation, nd)
    _pool_checks(k, s, p, d)
    if input.ndim not in (nd + 1, nd + 2) or 0 in input.shape[-nd - 1:]:
        raise RuntimeError(f"non-empty {nd + 1}D or {nd + 2}D (batch mode) tensor expected "
                           f"for input")
    sp = tuple(input.shape[-nd:])
    geo = [_pool_geometry(sp[i], k[i], s[i], p[i], d[i], ceil_mode) for i in range(nd)]
    if any(g[0] < 1 for g in geo):
        if avg:
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


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    k, s, pads, d = _pool_args_nd(input, 3, kernel_size, stride, padding, dilation, ceil_mode)
    out, idx = apply(_max_pool3d, (input,), (k, s, pads, d))
    return (out, idx) if return_indices else out


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


# ---- N-d average pooling ----------------------------------------------------------------------
def _avg_divisor_nd(shape, kernel, stride, pads, count_include_pad, override):
    if override:
        return float(override)
    nd = len(kernel)
    counts = []
    for i in range(nd):
        n, k, s = shape[len(shape) - nd + i], kernel[i], stride[i]
        p, right = pads[i]
        start = numpy.arange((n + p + right - k) // s + 1) * s - p
        end = numpy.minimum(start + k, n + p)  # the ceil_mode overhang never counts
        if not count_include_pad:
            start, end = numpy.maximum(start, 0), numpy.minimum(end, n)
        counts.append(end - start)
    div = counts[0]
    for c in counts[1:]:
        div = numpy.multiply.outer(div, c)
    return div


def _avg_pool_nd_fwd(xp, self, kernel, stride, pads, divisor):
    """A running sum over the kernel's strided views of the zero-padded input."""
    x, back = _unbatch(xp, self)
    nd = len(kernel)
    if any(p for pr in pads for p in pr):
        x = numpy.pad(x, ((0, 0),) * (x.ndim - nd) + tuple(pads))
    outs = _outs(x.shape, kernel, stride, (1,) * nd)
    offsets = itertools.product(*(range(k) for k in kernel))
    exact = x.dtype.kind != "f"  # integers: summed in int64, divided toward zero
    out = x[_offset_slices(next(offsets), (1,) * nd, stride, outs)].astype(
        numpy.int64 if exact else x.dtype)
    for off in offsets:
        out += x[_offset_slices(off, (1,) * nd, stride, outs)]
    if exact:
        out = (out / divisor).astype(x.dtype)
    else:
        out /= divisor
    return back(out) if back else out


def _avg_pool_nd_bwd_np(grad, self_shape, kernel, stride, pads, divisor):
    """The adjoint of :func:`_avg_pool_nd_fwd`: each window's share added back."""
    nd = len(kernel)
    lead = tuple(grad.shape[:grad.ndim - nd])
    sp = tuple(self_shape[len(self_shape) - nd:])
    padded = tuple(n + a + b for n, (a, b) in zip(sp, pads, strict=True))
    buf = numpy.zeros(lead + padded, dtype=grad.dtype)
    g = grad / divisor
    outs = tuple(grad.shape[grad.ndim - nd:])
    for off in itertools.product(*(range(k) for k in kernel)):
        buf[_offset_slices(off, (1,) * nd, stride, outs)] += g
    return buf[(Ellipsis,) + tuple(slice(a, a + n) for n, (a, _) in zip(sp, pads, strict=True))]


def _avg_pool_nd_bwd(xp, grad, self_shape, kernel, stride, pads, divisor):
    if _is_np(xp):
        return _avg_pool_nd_bwd_np(grad, self_shape, kernel, stride, pads, divisor)
    return apply(_avg_pool_nd_bwd_op, (grad,), (tuple(self_shape), kernel, stride, pads, divisor))


_avg_pool3d = defop(
    "avg_pool3d", _avg_pool_nd_fwd, inputs=("self",), vjp={"self": _avg_pool_nd_bwd},
    jvp="linear", node="AvgPool3DBackward0",
    batched={"self": lambda grad, self_shape, kernel, stride, pads, divisor, batch:
             _avg_pool_nd_bwd_np(grad, (batch, *self_shape), kernel, stride, pads, divisor)})

def _avg_pool_nd_bwd_fwd(xp, self, shape, kernel, stride, pads, divisor):
    g, back = _unbatch(xp, self)
    if back:
        shape = (g.shape[0], *shape)
    out = _avg_pool_nd_bwd_np(g, shape, kernel, stride, pads, divisor)
    return back(out) if back else out


def _avg_pool_nd_bwd_vjp(xp, grad, kernel, stride, pads, divisor):
    if _is_np(xp):
        return _avg_pool_nd_fwd(xp, grad, kernel, stride, pads, divisor)
    return apply(_avg_pool3d, (grad,), (kernel, stride, pads, divisor))


# The backward as an op of its own, whose vjp is the forward: double backward.
_avg_pool_nd_bwd_op = defop(
    "avg_pool3d_backward", _avg_pool_nd_bwd_fwd, vjp={"self": _avg_pool_nd_bwd_vjp},
    batched={"self": lambda grad, kernel, stride, pads, divisor:
             _avg_pool_nd_fwd(numpy, grad, kernel, stride, pads, divisor)},
    jvp="linear", node="AvgPool3DBackwardBackward0")


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    k, s, pads, _ = _pool_args_nd(input, 3, kernel_size, stride, padding, 1, ceil_mode, True)
    div = _avg_divisor_nd(input.shape, k, s, pads, count_include_pad, divisor_override)
    if not isinstance(div, float) and input.is_floating_point():
        div = div.astype(input._data.dtype)
    return apply(_avg_pool3d, (input,), (k, s, pads, div))


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


# ---- adaptive pooling ---------------------------------------------------------------------------
def _adaptive_size(input, output_size, nd):
    sizes = _tuple(output_size, nd)
    return tuple(input.shape[input.ndim - nd + i] if o is None else o
                 for i, o in enumerate(sizes))


def _adaptive_matrix(n, o):
    """(o, n) averaging matrix of PyTorch's adaptive bins [floor(i n/o), ceil((i+1) n/o))."""
    m = numpy.zeros((o, n))
    for i in range(o):
        a, b = (i * n) // o, -(-((i + 1) * n) // o)
        m[i, a:b] = 1 / (b - a)
    return m


def _apply_mats(xp, x, mats, transpose=False):
    """``x`` with spatial dim i (of the last len(mats)) multiplied by ``mats[i]``: one
    matmul per dim, over a (lead, before, n, after) view."""
    nd = len(mats)
    lead = tuple(x.shape[:x.ndim - nd])
    for i, m in enumerate(mats):
        m = m.T if transpose else m
        sp = tuple(x.shape[len(lead):])
        x = xp.reshape(x, lead + (math.prod(sp[:i]), sp[i], math.prod(sp[i + 1:])))
        x = xp.matmul(_const(xp, m), x)
        x = xp.reshape(x, lead + sp[:i] + (m.shape[0],) + sp[i + 1:])
    return x


_adaptive_avg3d = defop(
    "adaptive_avg_pool3d", lambda xp, self, mats: _apply_mats(xp, self, mats),
    vjp={"self": lambda xp, grad, mats: _apply_mats(xp, grad, mats, True)},
    jvp="linear", node="AdaptiveAvgPool3DBackward0")


def adaptive_avg_pool3d(input, output_size):
    if input.ndim not in (4, 5):
        raise RuntimeError(f"adaptive_avg_pool3d(): Expected 4D or 5D tensor, but got "
                           f"{list(input.shape)}")
    _float_only(input, "adaptive_avg_pool3d_cpu")
    _adaptive_nonempty(input, 3, "adaptive_avg_pool3d")
    size = _adaptive_size(input, output_size, 3)
    if size == (1, 1, 1):  # PyTorch takes a mean here (MeanBackward1)
        return input.mean((-3, -2, -1), keepdim=True)
    dt = input._data.dtype
    mats = tuple(_adaptive_matrix(n, o).astype(dt)
                 for n, o in zip(input.shape[-3:], size, strict=True))
    return apply(_adaptive_avg3d, (input,), (mats,))


def adaptive_avg_pool1d(input, output_size):
    _check_1d(input, "adaptive_avg_pool1d")
    o, = _tuple(output_size, 1)
    return adaptive_avg_pool2d(input.unsqueeze(-2), (1, o)).squeeze(-2)


def _adaptive_table(n, o):
    """(o, kmax) input positions of each adaptive bin, the short bins padded with their
    last position (a repeat never changes a maximum, nor its first position)."""
    a = (numpy.arange(o) * n) // o
    b = -(-((numpy.arange(o) + 1) * n) // o)
    k = int((b - a).max()) if o else 1
    return numpy.minimum(a[:, None] + numpy.arange(k), b[:, None] - 1)


def _adaptive_max_fwd(xp, self, tables):
    """Every bin gathered into a (..., *out, K) block (one copy per dim), then argmax."""
    nd = len(tables)
    lead = self.ndim - nd
    sp = self.shape[lead:]
    x = self
    for i, t in enumerate(tables):
        x = numpy.take(x, t.reshape(-1), axis=lead + i)
    outs = tuple(t.shape[0] for t in tables)
    ks = tuple(t.shape[1] for t in tables)
    x = x.reshape(x.shape[:lead] + tuple(v for t in tables for v in t.shape))
    perm = (*range(lead), *(lead + 2 * i for i in range(nd)),
            *(lead + 2 * i + 1 for i in range(nd)))
    x = x.transpose(perm).reshape(x.shape[:lead] + outs + (math.prod(ks),))  # may be empty
    code = numpy.argmax(x, axis=-1)
    out = numpy.take_along_axis(x, code[..., None], -1)[..., 0]
    if numpy.isnan(out).any():  # PyTorch's kernel keeps the last NaN (argmax the first)
        nan = numpy.isnan(x)
        last = x.shape[-1] - 1 - numpy.argmax(nan[..., ::-1], axis=-1)
        code = numpy.where(nan.any(-1), last, code)
    parts = numpy.unravel_index(code, ks)
    idx = 0
    for i, (t, p) in enumerate(zip(tables, parts, strict=True)):
        rows = numpy.arange(outs[i]).reshape((outs[i],) + (1,) * (nd - 1 - i))
        idx = idx * sp[i] + t[rows, p]
    return out, numpy.asarray(idx, dtype=numpy.int64)


def _adaptive_max_grad(xp, grad, indices, self_shape, tables):
    return _scatter_grad(xp, grad, indices, self_shape, len(tables), True)


def _adaptive_max_op(nd):
    return defop(
        f"adaptive_max_pool{nd}d", _adaptive_max_fwd, inputs=("self",),
        vjp={"self": _adaptive_max_grad}, jvp="transpose", outputs=("result", "indices"),
        nondiff_outputs=("indices",),
        batched={"self": lambda grad, indices, self_shape, tables, batch:
                 _adaptive_max_grad(numpy, grad, numpy.broadcast_to(indices, grad.shape),
                                    (batch, *self_shape), tables)},
        node=f"AdaptiveMaxPool{nd}DBackward0")


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
    tables = tuple(_adaptive_table(n, o) for n, o in zip(input.shape[-nd:], size, strict=True))
    out, idx = apply(_adaptive_max[nd], (input,), (tables,))
    return (out, idx) if return_indices else out


def adaptive_max_pool2d(input, output_size, return_indices=False):
    return _adaptive_max_nd(input, output_size, 2, return_indices)


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


# ---- max unpooling ------------------------------------------------------------------------------
def _unpool_fwd(xp, self, indices, out_size):
    """Each value written at its flat index of a zeroed output volume."""
    x, back = _unbatch(xp, self)
    nd = len(out_size)
    extra = x.shape[:x.ndim - indices.ndim]  # a batch of tangents
    rows = (math.prod(indices.shape[:indices.ndim - nd]), -1)
    vals = x.reshape(extra + rows)
    idx = indices.reshape((1,) * len(extra) + rows)
    out = numpy.zeros(vals.shape[:-1] + (math.prod(out_size),), dtype=x.dtype)
    numpy.put_along_axis(out, idx, vals, -1)
    out = out.reshape(extra + tuple(indices.shape[:indices.ndim - nd]) + tuple(out_size))
    return back(out) if back else out


def _unpool_grad(xp, grad, indices, self_shape, out_size):
    """The gradient read back at each value's index."""
    nd = len(out_size)
    if _is_np(xp):
        g = grad.reshape(grad.shape[:grad.ndim - indices.ndim]
                         + (-1, math.prod(out_size)))
        idx = indices.reshape((1,) * (g.ndim - 2) + (g.shape[-2], -1))
        res = numpy.take_along_axis(g, idx, -1)
        return res.reshape(grad.shape[:grad.ndim - indices.ndim] + tuple(indices.shape))
    b = math.prod(self_shape[:len(self_shape) - nd])
    g = xp.reshape(grad, (b, -1))
    res = xp.take_along_axis(g, xp.reshape(indices, (b, -1)), 1)
    return xp.reshape(res, tuple(self_shape))


def _unpool_jvp(xp, self_t, indices, out_size):
    """Linear in the values: the op itself on the tangent (through the op under
    create_graph, so the tangent is differentiable)."""
    if _is_np(xp) or getattr(xp, "batched", False):
        return _unpool_fwd(xp, self_t, indices, out_size)
    return apply(_max_unpool[len(out_size)], (self_t, _const(xp, indices)), (out_size,))


def _unpool_op(nd):
    return defop(
        f"max_unpool{nd}d", _unpool_fwd, inputs=("self", "indices"),
        vjp={"self": _unpool_grad},
        jvp=lambda xp, self_t, indices, out_size: _unpool_jvp(xp, self_t, indices, out_size),
        batched={"self": lambda grad, indices, self_shape, out_size, batch:
                 _unpool_grad(numpy, grad, indices, self_shape, out_size)},
        node=f"MaxUnpool{nd}DBackward0")


_max_unpool = {2: _unpool_op(2), 3: _unpool_op(3)}


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
    if bad.any():  # (PyTorch's threads report one of them; here the first)
        value = idx[bad.argmax()]
        raise RuntimeError(f"Found an invalid max index: {value} (output volumes "
                           f"are of size {'x'.join(str(v) for v in out_size)})")
    return apply(_max_unpool[nd], (input, indices), (out_size,))


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    k = _tuple(kernel_size)
    s = _tuple(stride) if stride is not None else k
    size = _unpool_output_size(input, k, s, _tuple(padding), output_size)
    return _max_unpool_nd(input, indices, size, 2)


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
    from .. import where
    a = out.abs()
    return (out.sign() * where(a > 0, a, 0)).mul(count).pow(1.0 / norm_type)


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
