"""Window functions (``torch.hann_window`` and its kin), built as PyTorch's
``TensorFactories.cpp`` builds them: an arange in the window's dtype, then one op per
step, so a half-precision window rounds where PyTorch's does. ``periodic=True`` (the
default) computes the ``window_length + 1`` symmetric window and drops its last point
(the form a spectral analysis with an FFT of ``window_length`` wants).
"""

import math

from .. import _creation
from .._dtype import CPP_NAMES, float32, float64, get_default_dtype, dtype_arg
from .._layout import check_layout, strided
from ._registry import register
from .joining import cat
from .pointwise import cos, sqrt
from .special import i0

__all__ = ["hann_window", "hamming_window", "blackman_window", "bartlett_window",
           "kaiser_window"]


def _options(dtype, layout, pin_memory):
    """c10's TensorOptions as PyTorch's messages print them (its binding sets requires_grad
    after the call: the options never carry it)."""
    dt = (CPP_NAMES[dtype.name] if dtype is not None
          else CPP_NAMES[get_default_dtype().name] + " (default)")
    lay = "Strided (default)" if layout is None else \
        "Strided" if layout is strided else "Sparse"
    return (f"TensorOptions(dtype={dt}, device=cpu, layout={lay}, requires_grad=false (default), "
            f"pinned_memory={str(bool(pin_memory)).lower()}, memory_format=(nullopt))")


def _window(fn, window_length, periodic, dtype, layout, device, requires_grad, pin_memory,
            build):
    """PyTorch's window_function_checks, its empty and one-point windows, and ``build(k,
    n)`` on the arange ``k`` of the symmetric window's length ``n``."""
    if isinstance(window_length, bool) or not isinstance(window_length, int):
        raise TypeError(f"{fn}(): argument 'window_length' (position 1) must be int, not "
                        f"{type(window_length).__name__}")
    if layout is not None and layout is not strided:
        raise RuntimeError(f"{fn} is not implemented for sparse types, got: "
                           + _options(dtype, layout, pin_memory))
    check_layout(layout, fn)
    dt = dtype if dtype is not None else get_default_dtype()
    if not (dt.is_floating_point or dt.is_complex):
        raise RuntimeError(f"{fn} expects floating point dtypes, got: "
                           + _options(dtype, layout, pin_memory))
    if window_length < 0:
        raise RuntimeError(f"{fn} requires non-negative window_length, got "
                           f"window_length={window_length}")
    if window_length <= 1:
        w = _creation.ones(window_length, dtype=dt, device=device)
    else:
        n = window_length + 1 if periodic else window_length
        w = build(_creation.arange(n, dtype=dt, device=device), n)
        if periodic:
            w = w[:-1]
    return w.requires_grad_(requires_grad)


def _c(value, like):
    """``value`` as a 0-d tensor of ``like``'s dtype: PyTorch's in-place window steps
    (``mul_(scalar)``) cast their scalar to a half window's dtype before multiplying."""
    return _creation.full((), value, dtype=like.dtype, device=like.device)


def _hamming(alpha, beta):
    return lambda k, n: cos(k * _c(2 * math.pi / (n - 1), k)) * _c(-beta, k) + _c(alpha, k)


@register(method=False)
def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None,
                   layout=None, device=None, pin_memory=False, requires_grad=False):
    """``alpha - beta * cos(2 pi k / (N - 1))``.

    >>> import retrograd as torch
    >>> torch.hamming_window(4)
    tensor([0.0800, 0.5400, 1.0000, 0.5400])
    """
    dtype = dtype_arg(dtype, "hamming_window")
    return _window("hamming_window", window_length, periodic, dtype, layout, device,
                   requires_grad, pin_memory, _hamming(alpha, beta))


@register(method=False)
def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                pin_memory=False, requires_grad=False):
    """``0.5 - 0.5 cos(2 pi k / (N - 1))`` (PyTorch's Hamming window with 0.5, 0.5).

    >>> import retrograd as torch
    >>> torch.hann_window(4)
    tensor([0.0000, 0.5000, 1.0000, 0.5000])
    """
    dtype = dtype_arg(dtype, "hann_window")
    return _window("hann_window", window_length, periodic, dtype, layout, device,
                   requires_grad, pin_memory, _hamming(0.5, 0.5))


def _blackman(k, n):
    w = k * _c(math.pi / (n - 1), k)
    return cos(w * 4) * _c(0.08, k) - cos(w * 2) * 0.5 + 0.42


@register(method=False)
def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    pin_memory=False, requires_grad=False):
    """``0.42 - 0.5 cos(2 pi k / (N - 1)) + 0.08 cos(4 pi k / (N - 1))``."""
    dtype = dtype_arg(dtype, "blackman_window")
    return _window("blackman_window", window_length, periodic, dtype, layout, device,
                   requires_grad, pin_memory, _blackman)


def _bartlett(k, n):
    w = k * _c(2.0 / (n - 1), k)
    return cat([w[:(n - 1) // 2 + 1], 2 - w[(n - 1) // 2 + 1:]])


@register(method=False)
def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    pin_memory=False, requires_grad=False):
    """The triangular window: ``1 - |2k / (N - 1) - 1|``."""
    dtype = dtype_arg(dtype, "bartlett_window")
    return _window("bartlett_window", window_length, periodic, dtype, layout, device,
                   requires_grad, pin_memory, _bartlett)


def _kaiser(beta):
    def build(k, n):
        """``i0(beta sqrt(1 - ((k - a) / a)^2)) / i0(beta)``, a = (N - 1) / 2, computed in
        float (double for a double window) and rounded once, as PyTorch's kernel."""
        up = k.to(float64 if k.dtype is float64 else float32)
        a = (n - 1) / 2.0
        r = (up - a) / a
        ratio = i0(sqrt((1 - r * r).abs()) * beta) / i0(up.new_full((), beta))
        return ratio.to(k.dtype)
    return build


@register(method=False)
def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None,
                  device=None, pin_memory=False, requires_grad=False):
    """The Kaiser window of shape parameter ``beta``."""
    dtype = dtype_arg(dtype, "kaiser_window")
    return _window("kaiser_window", window_length, periodic, dtype, layout, device,
                   requires_grad, pin_memory, _kaiser(beta))
