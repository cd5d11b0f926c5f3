"""im2col and col2im over the last ``nd`` dims of an array (any leading dims): the windows
a convolution, an average pool or ``unfold`` reads, and their adjoint, which sums windows
back (``fold``, the input gradients).

The kernels are written once on the array namespace ``xp`` (``pad``, ``as_strided``,
strided adds: NumPy and CuPy alike). :func:`im2col` and :func:`col2im` run them on the
arrays a rule holds; under ``create_graph`` a rule holds Tensors, and they apply the
differentiable ops instead (each the other's vjp, so double backward works); a batch of
gradients (``is_grads_batched``) is one more leading dim of the arrays.
"""

import itertools
import math

from ._kernels import run_kernel
from ._registry import defop

__all__ = ["im2col", "col2im", "im2col_kernel", "col2im_kernel", "out_sizes"]


def out_sizes(sizes, kernel, stride, pads, dilation):
    """The window counts along each dim of ``sizes`` padded by ``pads`` ((left, right)
    per dim)."""
    return tuple((n + p[0] + p[1] - d * (k - 1) - 1) // s + 1
                 for n, k, s, p, d in zip(sizes, kernel, stride, pads, dilation, strict=True))


def _window(offset, stride, dilation, outs):
    """The strided slices of a padded input read by one kernel offset."""
    return (Ellipsis,) + tuple(slice(o * d, o * d + s * (n - 1) + 1, s)
                               for o, d, s, n in zip(offset, dilation, stride, outs, strict=True))


def im2col_kernel(xp, x, kernel, stride, pads, dilation, outs=None):
    """(..., *S) -> (..., *K, *O): every window of the zero-padded input, in a new array.
    ``outs`` limits the window counts (a transposed convolution's output_padding)."""
    nd = len(kernel)
    lead = x.ndim - nd
    if any(p for pr in pads for p in pr):
        x = xp.pad(x, ((0, 0),) * lead + tuple(pads))
    else:
        x = xp.ascontiguousarray(x)
    if outs is None:
        outs = out_sizes(x.shape[lead:], kernel, stride, ((0, 0),) * nd, dilation)
    st = x.strides[lead:]
    steps = tuple(s * d for s, d in zip(st, dilation, strict=True))
    steps += tuple(s * t for s, t in zip(st, stride, strict=True))
    view = xp.lib.stride_tricks.as_strided(x, x.shape[:lead] + tuple(kernel) + tuple(outs),
                                           x.strides[:lead] + steps)
    return xp.array(view, order="C")  # a copy even of 1x1 windows (the input itself)


def col2im_kernel(xp, cols, shape, kernel, stride, pads, dilation):
    """The adjoint of :func:`im2col_kernel`: windows summed back into ``shape``'s last nd
    dims (the leading dims are the columns')."""
    nd = len(kernel)
    outs = tuple(cols.shape[cols.ndim - nd:])
    sizes = tuple(shape[len(shape) - nd:])
    lead = tuple(cols.shape[:cols.ndim - 2 * nd])
    padded = tuple(n + a + b for n, (a, b) in zip(sizes, pads, strict=True))
    out = xp.zeros(lead + padded, dtype=cols.dtype)
    rest = (slice(None),) * nd
    for off in itertools.product(*(range(k) for k in kernel)):
        at = _window(off, stride, dilation, outs)
        out[at] += cols[(Ellipsis,) + off + rest]
    if not any(a or b for a, b in pads):
        return out
    # a compact copy of the crop: a view would keep the padded buffer alive as the result
    return xp.ascontiguousarray(out[(Ellipsis,) + tuple(
        slice(a, a + n) for n, (a, _) in zip(sizes, pads, strict=True))])


def _unfold_kernel(xp, x, kernel, stride, pads, dilation, outs):
    """(..., C, *S) -> (..., C*prod(K), prod(O)): PyTorch's im2col layout."""
    nd = len(kernel)
    cols = im2col_kernel(xp, x, kernel, stride, pads, dilation, outs)
    k, o = math.prod(cols.shape[cols.ndim - 2 * nd:cols.ndim - nd]), cols.shape[cols.ndim - nd:]
    shape = cols.shape[:cols.ndim - 2 * nd - 1] + (cols.shape[cols.ndim - 2 * nd - 1] * k,
                                                   math.prod(o))
    return xp.reshape(cols, shape)


def _fold_kernel(xp, cols, size, kernel, stride, pads, dilation, outs):
    """The adjoint of :func:`_unfold_kernel`: (..., C*prod(K), prod(O)) -> (..., C, *size)."""
    lead, c = cols.shape[:-2], cols.shape[-2] // math.prod(kernel)
    cols = xp.reshape(cols, lead + (c,) + tuple(kernel) + tuple(outs))
    return xp.ascontiguousarray(col2im_kernel(xp, cols, lead + (c,) + tuple(size), kernel,
                                              stride, pads, dilation))


# PyTorch's unfold and fold (``rearrange``) and the windows of the convolution family's rules
# under create_graph. Exact: PyTorch's col2im adds in the tensor's dtype, float16 too.
_im2col = defop(
    "im2col", lambda xp, self, kernel, stride, pads, dilation, outs:
    run_kernel(xp, _unfold_kernel, None, self, kernel, stride, pads, dilation, outs),
    vjp={"self": lambda xp, grad, self_shape, kernel, stride, pads, dilation, outs:
         col2im(xp, grad, tuple(self_shape[-len(kernel):]), kernel, stride, pads, dilation,
                outs)},
    jvp="linear", node="Im2ColBackward0", upcast=False)
_col2im = defop(
    "col2im", lambda xp, self, size, kernel, stride, pads, dilation, outs:
    run_kernel(xp, _fold_kernel, None, self, size, kernel, stride, pads, dilation, outs),
    vjp={"self": lambda xp, grad, kernel, stride, pads, dilation, outs:
         im2col(xp, grad, kernel, stride, pads, dilation, outs)},
    jvp="linear", node="Col2ImBackward0", upcast=False)


def im2col(xp, x, kernel, stride, pads, dilation, outs=None):
    """The windows of ``x`` (..., C, *S) as columns (..., C*prod(K), prod(O)): the kernel
    on arrays, the differentiable op on Tensors."""
    nd = len(kernel)
    if outs is None:
        outs = out_sizes(x.shape[x.ndim - nd:], kernel, stride, pads, dilation)
    return run_kernel(xp, _unfold_kernel, _im2col, x, tuple(kernel), tuple(stride), tuple(pads),
                tuple(dilation), tuple(outs))


def col2im(xp, cols, size, kernel, stride, pads, dilation, outs=None):
    """The adjoint of :func:`im2col`: columns summed back into (..., C, *size)."""
    if outs is None:
        outs = out_sizes(size, kernel, stride, pads, dilation)
    return run_kernel(xp, _fold_kernel, _col2im, cols, tuple(size), tuple(kernel), tuple(stride),
                tuple(pads), tuple(dilation), tuple(outs))
