"""Discrete Fourier transforms (``torch.fft``) on PyTorch's three primitives.

``fft_c2c`` (complex to complex), ``fft_r2c`` (real to complex, one-sided or full) and
``fft_c2r`` (one-sided complex to real) transform over a tuple of dims with a
normalization (none, 1/sqrt(n) or 1/n): PyTorch's ``_fft_c2c``, ``_fft_r2c``,
``_fft_c2r``, with derivatives.yaml's gradients. Each is linear, so its vjp is the
adjoint transform: c2c's the opposite direction; r2c's the inverse c2c of the gradient
zero-padded to the full length, real part kept (``fft_r2c_backward``); c2r's the
one-sided r2c of the gradient with the bins that stand for two doubled
(``fft_c2r_backward``). The public functions below do what PyTorch's ``SpectralOps.cpp``
does around them: argument checks, promotion, padding or cropping to ``n``/``s`` (a
``constant_pad_nd``), a conjugate for ``ifft`` of real input, ``hfft`` and ``ihfft``.

The dims handed to the primitives are negative, so that a batch dim in front (vmap)
leaves them valid. Half-precision input is refused, as PyTorch's CPU build refuses it
(its half FFTs, on CUDA, return complex32, which NumPy lacks).
"""

import math
import operator

from .._dtype import SCALAR_NAMES, get_default_dtype, dtype_arg
from .. import _creation
from .._layout import check_layout
from .._tensor import _wrap_dim
from . import _out
from ._registry import apply, defop
from .binary import where
from .complex_parts import _view_as_real, as_complex
from .nn_ops import _constant_pad
from .pointwise import conj
from .shape import call, roll

__all__ = ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2",
           "rfftn", "irfftn", "hfft", "ihfft", "hfft2", "ihfft2", "hfftn", "ihfftn", "fftshift",
           "ifftshift", "fftfreq", "rfftfreq"]

NONE, BY_ROOT_N, BY_N = 0, 1, 2  # PyTorch's fft_norm_mode


def _np_norm(normalization, forward):
    """numpy.fft's ``norm`` that scales a transform of this direction by ``normalization``."""
    return (("backward", "ortho", "forward") if forward
            else ("forward", "ortho", "backward"))[normalization]


def _c2c(xp, self, dim, normalization, forward):
    if not dim:
        return xp.copy(self)
    f = xp.fft.fftn if forward else xp.fft.ifftn
    return f(self, axes=dim, norm=_np_norm(normalization, forward))


def _r2c(xp, self, dim, normalization, onesided):
    f = xp.fft.rfftn if onesided else xp.fft.fftn
    return f(self, axes=dim, norm=_np_norm(normalization, True))


def _c2r(xp, self, dim, normalization, last_dim_size):
    s = tuple(self.shape[d] for d in dim[:-1]) + (last_dim_size,)
    return xp.fft.irfftn(self, s=s, axes=dim, norm=_np_norm(normalization, False))


def _pad_last(xp, grad, axis, amount):
    """``grad`` zero-padded by ``amount`` at the end of (negative) ``axis``."""
    pad = [0] * (-2 * axis)
    pad[-1] = amount
    return call(xp, _constant_pad, grad, attrs=(tuple(pad), 0))


def _r2c_vjp(xp, grad, self_shape, dim, normalization, onesided):
    """PyTorch's fft_r2c_backward: the one-sided gradient zero-padded to the full length,
    the inverse c2c, its real part."""
    last = dim[-1]
    if onesided and self_shape[last] > grad.shape[last]:
        grad = _pad_last(xp, grad, last, self_shape[last] - grad.shape[last])
    full = call(xp, _fft_c2c, grad, attrs=(dim, normalization, False))
    return call(xp, _view_as_real, full)[..., 0]


def _c2r_vjp(xp, grad, dim, normalization):
    """PyTorch's fft_c2r_backward: the one-sided r2c of the gradient, the bins whose mirror
    image lies outside the one-sided half (1 .. n - n//2 - 1) doubled."""
    gi = call(xp, _fft_r2c, grad, attrs=(dim, normalization, True))
    last = dim[-1]
    double = grad.shape[last] - gi.shape[last]
    if double <= 0:
        return gi

    def part(a, b):
        return gi[(Ellipsis, slice(a, b)) + (slice(None),) * (-last - 1)]
    return xp.concatenate([part(0, 1), part(1, 1 + double) * 2, part(1 + double, None)],
                          axis=last)


_fft_c2c = defop("fft_c2c", _c2c, node="FftC2CBackward0", jvp="linear", upcast=False,
                 vjp={"self": lambda xp, grad, dim, normalization, forward:
                      call(xp, _fft_c2c, grad, attrs=(dim, normalization, not forward))})
_fft_r2c = defop("fft_r2c", _r2c, vjp={"self": _r2c_vjp}, node="FftR2CBackward0",
                 jvp="linear", upcast=False)
_fft_c2r = defop("fft_c2r", _c2r, vjp={"self": _c2r_vjp}, node="FftC2RBackward0",
                 jvp="linear", upcast=False)


# ---- arguments, as SpectralOps.cpp checks and defaults them ---------------------------------

def _norm(norm, forward):
    """PyTorch's norm_from_string: the normalization of a transform of this direction."""
    if norm is None or norm == "backward":
        return NONE if forward else BY_N
    if norm == "forward":
        return BY_N if forward else NONE
    if norm == "ortho":
        return BY_ROOT_N
    raise RuntimeError(f'Invalid normalization mode: "{norm}"')


def _promote(x, require_complex=False):
    """PyTorch's promote_tensor_fft: integers to the default float dtype, float and double
    only (to complex when ``require_complex``); complex input passes."""
    if x.is_complex():
        return x
    dt = x.dtype if x.is_floating_point() else get_default_dtype()
    if dt.name not in ("float32", "float64"):
        raise RuntimeError(f"Unsupported dtype {SCALAR_NAMES[dt.name]}")
    if dt is not x.dtype:
        x = x.to(dt)
    return apply(as_complex, (x,)) if require_complex else x


def _dim(x, dim):
    if x.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return _wrap_dim(dim, x.ndim) - x.ndim


def _int(fn, name, v):
    if isinstance(v, bool) or not isinstance(v, int):
        try:
            return operator.index(v)
        except TypeError:
            raise TypeError(f"fft_{fn}(): argument '{name}' must be int, not "
                            f"{type(v).__name__}") from None
    return v


def _check_n(n):
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")


def _resize(x, dims, sizes):
    """PyTorch's resize_fft_input: ``x`` zero-padded or cropped at the end of each dim (a
    size of -1 keeps the dim's)."""
    pad = [0] * (2 * x.ndim)
    for d, n in zip(dims, sizes, strict=True):
        if n != -1 and n != x.shape[d]:
            pad[-2 * d - 1] = n - x.shape[d]
    if not any(pad):
        return x
    return apply(_constant_pad, (x,), (tuple(pad), 0))


def _check_out(fn, out, complex_out):
    if out is None:
        return
    if complex_out and not out.is_complex():
        raise RuntimeError(f"{fn} expects a complex output tensor, but got "
                           f"{SCALAR_NAMES[out.dtype.name]}")
    if not complex_out and not out.is_floating_point():
        raise RuntimeError(f"{fn} expects a floating point output tensor, but got "
                           f"{SCALAR_NAMES[out.dtype.name]}")


def _written(primitive, result, out):
    """``result``, or ``out`` written with it (PyTorch's messages name the primitive that
    wrote it: ``_fft_c2c``, ``_fft_r2c``, ``_fft_c2r`` or ``conj_physical``)."""
    return result if out is None else _out.write(primitive, result, out)


# ---- one dim ----------------------------------------------------------------------------------

def _c2c_1d(fn, input, n, dim, norm, forward, out):
    d = _dim(input, dim)
    n = input.shape[d] if n is None else _int(fn, "n", n)
    _check_n(n)
    x = _resize(input, (d,), (n,))
    _check_out(fn, out, True)
    return _written("_fft_c2c", apply(_fft_c2c, (x,), ((d,), _norm(norm, forward), forward)),
                    out)


def _r2c_1d(fn, input, n, dim, norm, forward, onesided, out):
    if input.is_complex():
        raise RuntimeError(f"{fn} expects a real input tensor, but got "
                           f"{SCALAR_NAMES[input.dtype.name]}")
    _check_out(fn, out, True)
    x = _promote(input)
    d = _dim(x, dim)
    n = x.shape[d] if n is None else _int(fn, "n", n)
    _check_n(n)
    x = _resize(x, (d,), (n,))
    y = apply(_fft_r2c, (x,), ((d,), _norm(norm, forward), onesided))
    return _written("_fft_r2c", y, out) if forward else _written("conj_physical", conj(y), out)


def _c2r_1d(fn, input, n, dim, norm, forward, out):
    _check_out(fn, out, False)
    x = _promote(input, require_complex=True)
    d = _dim(x, dim)
    last = 2 * (x.shape[d] - 1) if n is None else _int(fn, "n", n)
    _check_n(last)
    if n is not None:
        x = _resize(x, (d,), (last // 2 + 1,))
    if forward:
        x = conj(x)
    return _written("_fft_c2r", apply(_fft_c2r, (x,), ((d,), _norm(norm, forward), last)), out)


def fft(input, n=None, dim=-1, norm=None, *, out=None):
    """The one-dimensional discrete Fourier transform (complex result).

    >>> import retrograd as torch
    >>> torch.fft.fft(torch.tensor([1., 2., 3., 4.]))
    tensor([10.+0.j, -2.+2.j, -2.+0.j, -2.-2.j])
    """
    if input.is_complex():
        return _c2c_1d("fft", input, n, dim, norm, True, out)
    return _r2c_1d("fft", input, n, dim, norm, True, False, out)


def ifft(input, n=None, dim=-1, norm=None, *, out=None):
    """The inverse of :func:`fft`."""
    if input.is_complex():
        return _c2c_1d("ifft", input, n, dim, norm, False, out)
    return _r2c_1d("ifft", input, n, dim, norm, False, False, out)


def rfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The FFT of real input: the ``n // 2 + 1`` non-negative frequencies."""
    return _r2c_1d("rfft", input, n, dim, norm, True, True, out)


def irfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The inverse of :func:`rfft`: ``n`` real points (default ``2 * (size - 1)``)."""
    return _c2r_1d("irfft", input, n, dim, norm, False, out)


def hfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The FFT of a Hermitian-symmetric signal given by its one-sided half (real result)."""
    return _c2r_1d("hfft", input, n, dim, norm, True, out)


def ihfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The inverse of :func:`hfft`: the one-sided half of the inverse FFT of real input."""
    return _r2c_1d("ihfft", input, n, dim, norm, False, True, out)


# ---- several dims -----------------------------------------------------------------------------

def _shape_and_dims(fn, input, s, dim):
    """PyTorch's canonicalize_fft_shape_and_dim_args: (sizes, negative dims)."""
    nd = input.ndim
    if dim is not None:
        dim = (dim,) if isinstance(dim, int) else tuple(dim)
        if nd == 0 and dim:
            raise IndexError(f"Dimension specified as {dim[0]} but tensor has no dimensions")
        dim = tuple(_wrap_dim(d, nd) for d in dim)
        if len(set(dim)) != len(dim):
            raise RuntimeError("FFT dims must be unique")
    if s is not None:
        s = tuple(_int(fn, "s", n) for n in s)
        if dim is not None and len(dim) != len(s):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
        if len(s) > nd:
            raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has "
                               f"{nd} dimensions.")
        if dim is None:
            dim = tuple(range(nd - len(s), nd))
        s = tuple(input.shape[d] if n == -1 else n for d, n in zip(dim, s, strict=True))
    else:
        dim = tuple(range(nd)) if dim is None else dim
        s = tuple(input.shape[d] for d in dim)
    for n in s:
        _check_n(n)
    return s, tuple(d - nd for d in dim)


def _c2r_shape_and_dims(fn, input, s, dim):
    """The sizes and dims of a c2r transform, and the output's last size."""
    shape, dims = _shape_and_dims(fn, input, s, dim)
    if not shape:
        raise RuntimeError(f"{fn} must transform at least one axis")
    last = 2 * (input.shape[dims[-1]] - 1) if s is None or s[-1] == -1 else shape[-1]
    _check_n(last)
    return shape[:-1] + (last // 2 + 1,), dims, last


def _c2c_nd(fn, input, s, dim, norm, forward, out):
    shape, dims = _shape_and_dims(fn, input, s, dim)
    _check_out("fftn" if forward else "ifftn", out, True)
    x = _resize(_promote(input, require_complex=True), dims, shape)
    return _written("_fft_c2c", apply(_fft_c2c, (x,), (dims, _norm(norm, forward), forward)),
                    out)


def _rfftn(fn, input, s, dim, norm, out):
    if input.is_complex():
        raise RuntimeError(f"rfftn expects a real-valued input tensor, but got "
                           f"{SCALAR_NAMES[input.dtype.name]}")
    shape, dims = _shape_and_dims(fn, input, s, dim)
    if not shape:
        raise RuntimeError("rfftn must transform at least one axis")
    _check_out("rfftn", out, True)
    x = _resize(_promote(input), dims, shape)
    return _written("_fft_r2c", apply(_fft_r2c, (x,), (dims, _norm(norm, True), True)), out)


def _irfftn(fn, input, s, dim, norm, out):
    shape, dims, last = _c2r_shape_and_dims("irfftn", input, s, dim)
    _check_out("irfftn", out, False)
    x = _resize(_promote(input, require_complex=True), dims, shape)
    return _written("_fft_c2r", apply(_fft_c2r, (x,), (dims, _norm(norm, False), last)), out)


def _hfftn(fn, input, s, dim, norm, out):
    shape, dims, last = _c2r_shape_and_dims("hfftn", input, s, dim)
    _check_out("hfftn", out, False)
    x = _resize(_promote(input, require_complex=True), dims, shape)
    normalization = _norm(norm, True)
    if len(dims) > 1:
        x = apply(_fft_c2c, (x,), (dims[:-1], normalization, True))
    x = apply(_fft_c2r, (conj(x),), (dims[-1:], normalization, last))
    return _written("_fft_c2r", x, out)


def _ihfftn(fn, input, s, dim, norm, out):
    if input.is_complex():
        raise RuntimeError(f"ihfftn expects a real-valued input tensor, but got "
                           f"{SCALAR_NAMES[input.dtype.name]}")
    shape, dims = _shape_and_dims(fn, input, s, dim)
    if not shape:
        raise RuntimeError("ihfftn must transform at least one axis")
    _check_out("ihfftn", out, True)
    x = _resize(_promote(input), dims, shape)
    normalization = _norm(norm, False)
    y = conj(apply(_fft_r2c, (x,), (dims[-1:], normalization, True)))
    if len(dims) == 1:
        return _written("conj_physical", y, out)
    return _written("_fft_c2c", apply(_fft_c2c, (y,), (dims[:-1], normalization, False)), out)


def fftn(input, s=None, dim=None, norm=None, *, out=None):
    """The N-dimensional FFT over ``dim`` (default: the last ``len(s)`` dims, or all).

    >>> import retrograd as torch
    >>> torch.fft.fftn(torch.ones(2, 2))
    tensor([[4.+0.j, 0.+0.j],
            [0.+0.j, 0.+0.j]])
    """
    return _c2c_nd("fftn", input, s, dim, norm, True, out)


def ifftn(input, s=None, dim=None, norm=None, *, out=None):
    """The inverse of :func:`fftn`."""
    return _c2c_nd("ifftn", input, s, dim, norm, False, out)


def fft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """:func:`fftn` over the last two dims."""
    return _c2c_nd("fft2", input, s, dim, norm, True, out)


def ifft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """:func:`ifftn` over the last two dims."""
    return _c2c_nd("ifft2", input, s, dim, norm, False, out)


def rfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The N-dimensional FFT of real input, one-sided in the last of ``dim``."""
    return _rfftn("rfftn", input, s, dim, norm, out)


def rfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return _rfftn("rfft2", input, s, dim, norm, out)


def irfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The inverse of :func:`rfftn` (real result)."""
    return _irfftn("irfftn", input, s, dim, norm, out)


def irfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return _irfftn("irfft2", input, s, dim, norm, out)


def hfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The N-dimensional :func:`hfft`: Hermitian-symmetric input given by its half in the
    last of ``dim`` (real result)."""
    return _hfftn("hfftn", input, s, dim, norm, out)


def hfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return _hfftn("hfft2", input, s, dim, norm, out)


def ihfftn(input, s=None, dim=None, norm=None, *, out=None):
    """The inverse of :func:`hfftn`: one-sided in the last of ``dim``."""
    return _ihfftn("ihfftn", input, s, dim, norm, out)


def ihfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return _ihfftn("ihfft2", input, s, dim, norm, out)


# ---- shifts -----------------------------------------------------------------------------------

def _shift(input, dim, half):
    if dim is None:
        dims = tuple(range(input.ndim))
    else:
        dims = tuple(_wrap_dim(d, input.ndim)
                     for d in ((dim,) if isinstance(dim, int) else dim))
    return roll(input, [half(input.shape[d]) for d in dims], dims)


def fftshift(input, dim=None):
    """The zero frequency moved to the middle of each of ``dim`` (default: all).

    >>> import retrograd as torch
    >>> torch.fft.fftshift(torch.fft.fftfreq(5))
    tensor([-0.4000, -0.2000,  0.0000,  0.2000,  0.4000])
    """
    return _shift(input, dim, lambda n: n // 2)


def ifftshift(input, dim=None):
    """The inverse of :func:`fftshift`."""
    return _shift(input, dim, lambda n: (n + 1) // 2)


# ---- sample frequencies -----------------------------------------------------------------------

def _freqs(fn, n, d, out, dtype, layout, device, requires_grad, values):
    """``values(k)`` (from an int64 arange ``k`` of the output's length) in ``dtype``, times
    ``1 / (n * d)`` as PyTorch multiplies (inf for d = 0)."""
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"fft_{fn}(): argument 'n' (position 1) must be int, not "
                        f"{type(n).__name__}")
    check_layout(layout, f"fft_{fn}")
    dt = dtype if dtype is not None else (out.dtype if out is not None
                                          else get_default_dtype())
    if not (dt.is_floating_point or dt.is_complex):
        raise RuntimeError(f"{fn} requires a floating point or complex dtype")
    if dt.is_complex:
        raise NotImplementedError(f'"arange_cpu" not implemented for \'{SCALAR_NAMES[dt.name]}\'')
    size = n if fn == "fftfreq" else int(n / 2) + 1  # (C++'s division: -1 / 2 == 0)
    if size < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {size}: [{size}]")
    scale = n * d
    scale = 1.0 / scale if scale else math.copysign(math.inf, scale)
    k = values(_creation.arange(size, device=device)).to(dt) * scale
    if out is not None:
        return _out.write(f"fft_{fn}", k, out)
    return k.requires_grad_(requires_grad)


def fftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """The sample frequencies of an ``n``-point FFT, for a sample spacing ``d``.

    >>> import retrograd as torch
    >>> torch.fft.fftfreq(4)
    tensor([ 0.0000,  0.2500, -0.5000, -0.2500])
    """
    dtype = dtype_arg(dtype, "fftfreq")
    return _freqs("fftfreq", n, d, out, dtype, layout, device, requires_grad,
                  lambda k: where(k < (n + 1) // 2, k, k - n))


def rfftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None,
             requires_grad=False):
    """The sample frequencies of :func:`rfft`: the ``n // 2 + 1`` non-negative ones."""
    dtype = dtype_arg(dtype, "rfftfreq")
    return _freqs("rfftfreq", n, d, out, dtype, layout, device, requires_grad, lambda k: k)
