"""Short-time Fourier transforms: ``torch.stft`` and ``torch.istft``.

Both are composites, as in PyTorch's ``SpectralOps.cpp``, so their gradients (for the
signal and the window) are those of their parts: ``stft`` pads the signal's ends
(``F.pad``), cuts it into overlapping frames (``unfold``, a view), multiplies each by the
window and transforms it (``_fft_r2c`` or ``_fft_c2c``); ``istft`` inverts each frame
(``_fft_c2r`` or ``_fft_c2c``), windows it again, overlap-adds the frames
(``unfold_backward``, the adjoint of the framing) and divides by the overlap-added squared
window (the envelope), which must not vanish (the NOLA condition).

The checks, their order and their messages are PyTorch's, including the quirks: the
n_fft message prints ``win_length``, and ``align_to_window`` with an odd
``n_fft - win_length`` pads one zero too few, so a last frame that needs it fails.
"""

from .. import _creation
from .._dtype import SCALAR_NAMES
from .._tensor import warn_once
from ._registry import apply, register
from .complex_parts import view_as_real
from .nn_ops import constant_pad, pad
from .shape import _unfold_backward
from .spectral import BY_N, BY_ROOT_N, NONE, _fft_c2c, _fft_c2r, _fft_r2c

__all__ = ["stft", "istft"]

_NO_WINDOW = ("A window was not provided. A rectangular window will be applied,which is known "
              "to cause spectral leakage. Other windows such as torch.hann_window or "
              "torch.hamming_window are recommended to reduce spectral leakage.To suppress "
              "this warning and use a rectangular window, explicitly set "
              "`window=torch.ones(n_fft, device=<device>)`.")
_NO_WINDOW_INVERSE = ("A window was not provided. A rectangular window will be applied.Please "
                      "provide the same window used by stft to make the inversion lossless.To "
                      "suppress this warning and use a rectangular window, explicitly set "
                      "`window=torch.ones(n_fft, device=<device>)`.")
_REAL_OUTPUT = ("stft with return_complex=False is deprecated. In a future pytorch release, "
                "stft will return complex tensors for all inputs, and return_complex=False "
                "will raise an error.\nNote: you can still call torch.view_as_real on the "
                "complex output to recover the old return format.")
_SHORT = ("The length of signal is shorter than the length parameter. Result is being padded "
          "with zeros in the tail. Please check your center and hop_length settings.")


def _type(t):
    """ATen's ``Tensor::toString``: the legacy class name, "CPUComplexFloatType" for complex."""
    name = t.type()
    return f"{t.device.type.upper()}{name.rsplit('.', 1)[1][:-6]}Type" if t.is_complex() \
        else name


def _opt(v):
    return "None" if v is None else str(int(v))


def _failing(fn, input, args, window, flags):
    """A function raising PyTorch's RuntimeError for ``fn``: its REPR macro (the call as the
    C++ op saw it, the optional ``flags`` as C++ prints them), then the message."""
    def fail(msg):
        w = "None" if window is None else f"{_type(window)}{{{list(window.shape)}}}"
        head = ", ".join(f"{k}={v}" for k, v in args)
        tail = ", ".join(f"{k}={_opt(v)}" for k, v in flags)
        raise RuntimeError(f"{fn}({_type(input)}{list(input.shape)}, {head}, window={w}, "
                           f"{tail}) {msg}")
    return fail


def _centered(window, n_fft):
    """The window zero-padded on both sides to ``n_fft``."""
    left = (n_fft - window.shape[0]) // 2
    return constant_pad(window, (left, n_fft - window.shape[0] - left)) if \
        window.shape[0] < n_fft else window


def _frames(x, n_fft, hop, win_length, align):
    """(batch, n_frames, n_fft) overlapping frames of a (batch, len) signal, a view; with
    ``align``, one per window position (``len`` padded by ``(n_fft - win_length) // 2``
    on both sides)."""
    if not align:
        return x.unfold(-1, n_fft, hop)
    left = (n_fft - win_length) // 2
    n_frames = 1 + (x.shape[1] - win_length) // hop
    x = constant_pad(x, (left, left))
    batch, length = x.shape
    if length < (n_frames - 1) * hop + n_fft:  # PyTorch's as_strided reads past the end
        item = x.element_size()
        need = item * (1 + (batch - 1) * length + (n_frames - 1) * hop + n_fft - 1)
        raise RuntimeError(f"setStorage: sizes [{batch}, {n_frames}, {n_fft}], strides "
                           f"[{length}, {hop}, 1], storage offset 0, and itemsize {item} "
                           f"requiring a storage size of {need} are out of bounds for storage "
                           f"of size {item * x.numel()}")
    return x.unfold(-1, n_fft, hop)


@register
def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
         pad_mode="reflect", normalized=False, onesided=None, return_complex=None,
         align_to_window=None):
    """The short-time Fourier transform: the FFT of each ``window``-weighted frame of
    ``n_fft`` samples, ``hop_length`` apart, shaped (batch?, freq, n_frames).

    >>> import retrograd as torch
    >>> torch.stft(torch.ones(8), 4, window=torch.ones(4), return_complex=True).shape
    torch.Size([3, 9])
    """
    if center and align_to_window is not None:
        raise RuntimeError("stft align_to_window should only be set when center = false")
    if center:  # as torch.functional.stft pads: F.pad of a 3-d view
        nd, half = input.ndim, n_fft // 2
        x = pad(input.reshape([1] * (3 - nd) + list(input.shape)), [half, half], pad_mode)
        input = x.reshape(x.shape[-nd:] if nd else x.shape)
    if window is None:
        warn_once(_NO_WINDOW)
    hop = n_fft >> 2 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    complex_out = return_complex
    if complex_out is None:
        complex_out = input.is_complex() or (window is not None and window.is_complex())
    if not complex_out:
        if return_complex is None:
            raise RuntimeError("stft requires the return_complex parameter be given for real "
                               "inputs, and will further require that return_complex=True in "
                               "a future PyTorch release.")
        warn_once(_REAL_OUTPUT)
    _check_stft(input, n_fft, hop, win, window, (
        ("normalized", normalized), ("onesided", onesided), ("return_complex", return_complex),
        ("align_to_window", align_to_window)))
    x = input if input.ndim == 2 else input.unsqueeze(0)
    frames = _frames(x, n_fft, hop, win, align_to_window)
    if window is None and win < n_fft:
        window = _creation.ones(win, dtype=input.dtype, device=input.device)
    if window is not None:
        frames = frames * _centered(window, n_fft)
    if frames.dtype.name not in ("float32", "float64", "complex64", "complex128"):
        raise RuntimeError(f"MKL FFT doesn't support tensors of type: "
                           f"{SCALAR_NAMES[frames.dtype.name]}")
    norm = BY_ROOT_N if normalized else NONE
    if frames.is_complex():
        if onesided:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        out = apply(_fft_c2c, (frames,), ((-1,), norm, True))
    else:
        out = apply(_fft_r2c, (frames,), ((-1,), norm, onesided is None or onesided))
    out.transpose_(1, 2)  # in place, as PyTorch: its grad_fn names
    if input.ndim == 1:
        out.squeeze_(0)
    return out if complex_out else view_as_real(out)


def _check_stft(input, n_fft, hop, win, window, flags):
    fail = _failing("stft", input, (("n_fft", n_fft), ("hop_length", hop), ("win_length", win)),
                    window, flags)
    if not (input.is_floating_point() or input.is_complex()):
        fail(": expected a tensor of floating point or complex values")
    if input.ndim not in (1, 2):
        fail(": expected a 1D or 2D tensor")
    length = input.shape[-1]
    if n_fft <= 0 or n_fft > length:
        fail(f": expected 0 < n_fft < {length}, but got n_fft={win}")
    if hop <= 0:
        fail(f": expected hop_length > 0, but got hop_length={hop}")
    if win <= 0 or win > n_fft:
        fail(f": expected 0 < win_length <= n_fft, but got win_length={win}")
    if window is not None and (window.ndim != 1 or window.shape[0] != win):
        fail(f": expected a 1D window tensor of size equal to win_length={win}, but got window "
             f"with size {list(window.shape)}")


@register
def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
          normalized=False, onesided=None, length=None, return_complex=False):
    """The inverse of :func:`stft`: each frame's inverse FFT, windowed, overlap-added and
    divided by the overlap-added squared window; ``length`` crops or zero-pads the result.

    >>> import retrograd as torch
    >>> w, x = torch.hann_window(8), torch.arange(16.)
    >>> s = torch.stft(x, 8, window=w, return_complex=True)
    >>> torch.allclose(torch.istft(s, 8, window=w), x, atol=1e-5)
    True
    """
    if window is None:
        warn_once(_NO_WINDOW_INVERSE)
    hop = n_fft >> 2 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    if not input.is_complex():
        raise RuntimeError("istft requires a complex-valued input tensor matching the output "
                           "from stft with return_complex=True.")
    fail = _failing("istft", input, (("n_fft", n_fft), ("hop_length", hop),
                                     ("win_length", win)), window,
                    (("center", center), ("normalized", normalized), ("onesided", onesided),
                     ("length", length), ("return_complex", return_complex)))
    onesided = _check_istft(fail, input, n_fft, hop, win, window, onesided)
    if window is None:
        window = _creation.ones(win, dtype=input.dtype.to_real(), device=input.device)
    window = _centered(window, n_fft)
    x = input.resolve_conj()
    x = (x if x.ndim == 3 else x.unsqueeze(0)).transpose(1, 2)  # (batch, n_frames, freq)
    batch, n_frames = x.shape[:2]
    norm = BY_ROOT_N if normalized else BY_N
    if return_complex:
        if onesided:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        x = apply(_fft_c2c, (x,), ((-1,), norm, False))
    else:
        if window.is_complex():
            raise RuntimeError("Complex windows are incompatible with return_complex=False")
        if not onesided:
            x = x.narrow(-1, 0, n_fft // 2 + 1)
        x = apply(_fft_c2r, (x,), ((-1,), norm, n_fft))
    full = n_fft + hop * (n_frames - 1)  # overlap-add: the adjoint of framing
    y = apply(_unfold_backward, (x * window,), ((batch, full), 1, n_fft, hop))
    envelope = apply(_unfold_backward, (window.pow(2).expand(1, n_frames, n_fft),),
                     ((1, full), 1, n_fft, hop))
    start = n_fft // 2 if center else 0
    end = start + length if length is not None else -(n_fft // 2) if center else full
    y, envelope = y[:, start:end], envelope[:, start:end]
    if bool(envelope.detach().abs().min() < 1e-11):
        fail("window overlap add min: 1\n[ CPUBoolType{} ]")
    y = y / envelope
    if input.ndim == 2:
        y = y.squeeze(0)
    if end > full:
        warn_once(_SHORT)
        y = constant_pad(y, (0, end - full))
    return y


def _check_istft(fail, input, n_fft, hop, win, window, onesided):
    """PyTorch's checks of istft's arguments, in its order; the default ``onesided``."""
    nd = input.ndim + 1  # as view_as_real's
    if nd < 3:
        raise IndexError(f"Dimension out of range (expected to be in range of [-{nd}, "
                         f"{nd - 1}], but got {-nd - 1})")
    fft_size = input.shape[-2]
    if input.numel() == 0:
        fail(": input tensor cannot be empty.")
    if nd not in (3, 4):
        fail(f": expected a tensor with 3 or 4 dimensions, but got {nd}")
    if onesided is None:
        onesided = fft_size != n_fft
    if onesided and n_fft // 2 + 1 != fft_size:
        fail(": expected the frequency dimension (3rd to the last) of the input tensor to "
             f"match n_fft / 2 + 1 when onesided=True, but got {fft_size}")
    if not onesided and n_fft != fft_size:
        fail(": expected the frequency dimension (3rd to the last) of the input tensor to "
             f"match n_fft when onesided=False, but got {fft_size}")
    if not 0 < hop <= win:
        fail(": expected 0 < hop_length <= win_length")
    if not 0 < win <= n_fft:
        fail(": expected 0 < win_length <= n_fft")
    if window is not None and (window.ndim != 1 or window.shape[0] != win):
        fail(": Invalid window shape. window has to be 1D and length of `win_length`")
    return onesided
