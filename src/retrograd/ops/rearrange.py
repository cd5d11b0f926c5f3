"""Rearranging ops: pixel_shuffle / pixel_unshuffle, channel_shuffle, unfold / fold
(PyTorch's im2col / col2im ops, from :mod:`.im2col`),
rot90 (a primitive with its own node, as in PyTorch) and repeat_interleave (a composite).

Each pair is linear and each member is the other's vjp (channel_shuffle is its own, with
the complementary group count), so every backward is itself differentiable. Kernels work
on trailing dims, so a batch of gradients (``is_grads_batched``) runs as more leading dims.
"""

import functools
import math
import operator

from ..backend import get_array_module
from ..backend.functions import functions
from .._dtype import int64
from .._tensor import Tensor, _wrap_dim, wrap
from ._registry import apply, defop, register
from ._kernels import run_kernel
from .im2col import _col2im, _im2col, out_sizes

# Rearrangements are exact, and PyTorch's col2im adds in the tensor's dtype: float16
# stays float16.
defop = functools.partial(defop, upcast=False)

__all__ = ["pixel_shuffle", "pixel_unshuffle", "channel_shuffle", "unfold", "fold", "rot90",
           "repeat_interleave"]

# ---- pixel shuffle ------------------------------------------------------------------------
def _shuffle(xp, x, r):
    """(..., C*r*r, H, W) -> (..., C, H*r, W*r)."""
    *lead, c, h, w = x.shape
    y = xp.reshape(x, (*lead, c // (r * r), r, r, h, w))
    n = y.ndim
    y = xp.transpose(y, tuple(range(n - 5)) + (n - 5, n - 2, n - 4, n - 1, n - 3))
    y = xp.array(y, order="C")  # a copy even when r == 1
    return xp.reshape(y, (*lead, c // (r * r), h * r, w * r))


def _unshuffle(xp, x, r):
    """(..., C, H*r, W*r) -> (..., C*r*r, H, W)."""
    *lead, c, h, w = x.shape
    y = xp.reshape(x, (*lead, c, h // r, r, w // r, r))
    n = y.ndim
    y = xp.transpose(y, tuple(range(n - 5)) + (n - 5, n - 3, n - 1, n - 4, n - 2))
    return xp.reshape(xp.array(y, order="C"), (*lead, c * r * r, h // r, w // r))


_pixel_shuffle = defop(
    "pixel_shuffle", lambda xp, self, r: run_kernel(xp, _shuffle, None, self, r),
    vjp={"self": lambda xp, grad, r: run_kernel(xp, _unshuffle, _pixel_unshuffle, grad, r)},
    jvp="linear")
_pixel_unshuffle = defop(
    "pixel_unshuffle", lambda xp, self, r: run_kernel(xp, _unshuffle, None, self, r),
    vjp={"self": lambda xp, grad, r: run_kernel(xp, _shuffle, _pixel_shuffle, grad, r)},
    jvp="linear")


def _check_shuffle(input, factor, name, what):
    if input.ndim < 3:
        raise RuntimeError(f"{name} expects input to have at least 3 dimensions, but got "
                           f"input with {input.ndim} dimension(s)")
    if factor <= 0:
        raise RuntimeError(f"{name} expects a positive {what}, but got {factor}")


@register(method=False)
def pixel_shuffle(input, upscale_factor):
    r = upscale_factor
    _check_shuffle(input, r, "pixel_shuffle", "upscale_factor")
    c = input.shape[-3]
    if c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be "
                           f"divisible by the square of upscale_factor, but input.size(-3)={c} "
                           f"is not divisible by {r * r}")
    return apply(_pixel_shuffle, (input,), (r,))


@register(method=False)
def pixel_unshuffle(input, downscale_factor):
    r = downscale_factor
    _check_shuffle(input, r, "pixel_unshuffle", "downscale_factor")
    for d, name in ((-2, "height"), (-1, "width")):
        if input.shape[d] % r:
            raise RuntimeError(f"pixel_unshuffle expects {name} to be divisible by "
                               f"downscale_factor, but input.size({d})={input.shape[d]} is not "
                               f"divisible by {r}")
    return apply(_pixel_unshuffle, (input,), (r,))


# ---- channel shuffle ----------------------------------------------------------------------
def _channel_shuffle_kernel(xp, x, groups, rank):
    """Channels (axis 1 of a ``rank``-dim input, more leading dims in a batch) seen as
    (groups, C/groups), transposed."""
    a = x.ndim - rank + 1
    c = x.shape[a]
    y = xp.reshape(x, x.shape[:a] + (groups, c // groups) + x.shape[a + 1:])
    return xp.reshape(xp.array(xp.swapaxes(y, a, a + 1), order="C"), x.shape)


_channel_shuffle = defop(
    "channel_shuffle",
    lambda xp, self, groups, rank:
    run_kernel(xp, _channel_shuffle_kernel, None, self, groups, rank),
    vjp={"self": lambda xp, grad, self_shape, groups, rank:
         run_kernel(xp, _channel_shuffle_kernel, _channel_shuffle, grad,
              self_shape[-rank + 1] // groups, rank)},
    jvp="linear")


@register(method=False)
def channel_shuffle(input, groups):
    if input.ndim <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with "
                           f"sizes {list(input.shape)}")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value "
                           f"of groups:{groups}")
    c = input.shape[1]
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels "
                           f"and {groups} groups.")
    return apply(_channel_shuffle, (input,), (groups, input.ndim))


# ---- unfold / fold ------------------------------------------------------------------------
def _pair(v, name):
    v = tuple(v) if isinstance(v, (tuple, list)) else (v, v)
    if len(v) != 2:
        raise RuntimeError(f"It is expected {name} equals to 2, but got size {len(v)}")
    return v


def _geometry(kernel_size, dilation, padding, stride):
    """The window's (kernel, dilation, padding, stride) as pairs, checked as PyTorch's
    im2col and col2im check them."""
    kernel, dilation = _pair(kernel_size, "kernel_size"), _pair(dilation, "dilation")
    padding, stride = _pair(padding, "padding"), _pair(stride, "stride")
    for (a, b), what in ((kernel, "kernel size"), (stride, "stride"), (dilation, "dilation")):
        if a < 1 or b < 1:
            name = what.split()[0]
            raise RuntimeError(f"{what} should be greater than zero, but got {name}_height: "
                               f"{a} {name}_width: {b}")
    if padding[0] < 0 or padding[1] < 0:
        raise RuntimeError(f"padding should be non-negative, but got pad_height: {padding[0]} "
                           f"pad_width: {padding[1]}")
    return kernel, dilation, padding, stride


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """Sliding windows of an (N, C, H, W) or (C, H, W) input as columns (PyTorch's im2col)."""
    kernel, dilation, padding, stride = _geometry(kernel_size, dilation, padding, stride)
    shape = tuple(input.shape)
    if input.ndim not in (3, 4) or 0 in shape[-3:]:
        raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor with possibly 0 batch size "
                           f"and other non-zero dimensions for input, but got: {list(shape)}")
    pads = ((padding[0], padding[0]), (padding[1], padding[1]))
    blocks = out_sizes(shape[-2:], kernel, stride, pads, dilation)
    if min(blocks) < 1:
        raise RuntimeError(f"Given input with spatial size {shape[-2:]}, kernel_size={kernel}, "
                           f"dilation={dilation}, padding={padding}, calculated shape of the "
                           f"array of sliding blocks as {blocks}, but its components must be "
                           "at least one.")
    return apply(_im2col, (input,), (kernel, stride, pads, dilation, blocks))


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """Columns of windows summed back into an (N, C, H, W) or (C, H, W) image (col2im)."""
    size = _pair(output_size, "output_size")
    kernel, dilation, padding, stride = _geometry(kernel_size, dilation, padding, stride)
    shape = tuple(input.shape)
    if input.ndim not in (2, 3) or 0 in shape[-2:]:
        raise RuntimeError(f"Expected 2D or 3D (batch mode) tensor for input with possibly 0 "
                           f"batch size and non-zero dimensions for input, but got: "
                           f"{list(shape)}")
    k = kernel[0] * kernel[1]
    if shape[-2] % k:
        raise RuntimeError(f"Expected size of input's dimension {input.ndim - 2} to be "
                           f"divisible by the product of kernel_size, but got "
                           f"input.size({input.ndim - 2})={shape[-2]} and "
                           f"kernel_size={kernel}.")
    pads = ((padding[0], padding[0]), (padding[1], padding[1]))
    blocks = out_sizes(size, kernel, stride, pads, dilation)
    if min(blocks) < 1 or math.prod(blocks) != shape[-1]:
        raise RuntimeError(f"Given output_size={size}, kernel_size={kernel}, "
                           f"dilation={dilation}, padding={padding}, stride={stride}, expected "
                           f"size of input's dimension {input.ndim - 1} to match the "
                           f"calculated number of sliding blocks {blocks[0]} * {blocks[1]} = "
                           f"{math.prod(blocks)}, but got input.size({input.ndim - 1})="
                           f"{shape[-1]}.")
    return apply(_col2im, (input,), (size, kernel, stride, pads, dilation, blocks))


@register
def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """Repeat each element (slice along ``dim``; of the flattened input when None)
    ``repeats`` times; ``repeat_interleave(counts)`` gives the indices repeated."""
    if repeats is None:  # torch.repeat_interleave(repeats)
        r = input._data
        if r.ndim != 1:
            raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
        xp = get_array_module(r)
        return wrap(xp.repeat(xp.arange(r.shape[0], dtype=int64.np), r))
    if dim is None:
        input, d = input.reshape(-1), 0
    else:
        d = _wrap_dim(dim, max(input._data.ndim, 1))
        if input._data.ndim == 0:
            input = input.reshape(1)
    n = input._data.shape[d]
    if isinstance(repeats, Tensor):
        r = repeats._data
        if r.ndim > 1:
            raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
        if r.size == 1:
            r = get_array_module(r).broadcast_to(r.reshape(-1), (n,))
        if r.shape[0] != n:
            raise RuntimeError("repeats must have the same size as input along dim, but got "
                               f"repeats.size(0) = {r.shape[0]} and input.size({d}) = {n}")
        xp = get_array_module(r)
        if functions(xp).any_true(r < 0):
            raise RuntimeError("repeats can not be negative")
        if output_size is None:
            index = xp.repeat(xp.arange(n, dtype=int64.np), r)
        else:  # output j repeats the first input whose running count of repeats passes
            # j: a length known without the values (meta has none)
            if functions(xp).any_true(xp.sum(r) != output_size):
                raise RuntimeError("allocated size does not match required size")
            index = xp.searchsorted(xp.cumsum(r), xp.arange(output_size), side="right")
        return input.index_select(d, wrap(index.astype(int64.np, copy=False)))
    k = operator.index(repeats)
    if k < 0:
        raise RuntimeError("Repeats must be non-negative")
    shape = list(input._data.shape)
    expanded = input.unsqueeze(d + 1).expand(*shape[:d + 1], k, *shape[d + 1:])
    return expanded.contiguous().flatten(d, d + 1)


def _rot(xp, a, k, dims):
    """NumPy's rot90 from flip and swapaxes (which every array module here has)."""
    d0, d1 = dims
    k %= 4
    if k == 0:
        return a
    if k == 2:
        return xp.flip(xp.flip(a, d0), d1)
    if k == 1:
        return xp.swapaxes(xp.flip(a, d1), d0, d1)
    return xp.flip(xp.swapaxes(a, d0, d1), d1)


_rot90 = defop("rot90",
               lambda xp, self, k, dims: xp.ascontiguousarray(_rot(xp, self, k, dims)),
               vjp={"self": lambda xp, grad, k, dims: _rot(xp, grad, -k, dims)},
               jvp=lambda xp, self_t, k, dims: _rot(xp, self_t, k, dims))


@register
def rot90(input, k=1, dims=(0, 1)):
    """Rotate by 90 degrees ``k`` times in the plane ``dims``, from the first toward the
    second."""
    dims = tuple(dims)
    nd = input._data.ndim
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if nd < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {nd}")
    if dims[0] == dims[1] or abs(dims[0] - dims[1]) == nd:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {dims[0]} "
                           f"and dim1 = {dims[1]}")
    d = tuple(_wrap_dim(x, nd) for x in dims)
    return apply(_rot90, (input,), (k % 4, d))
