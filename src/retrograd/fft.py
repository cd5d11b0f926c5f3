"""``torch.fft``: discrete Fourier transforms with gradients (``ops.spectral``), their
sample frequencies and shifts.

>>> import retrograd as torch
>>> torch.fft.irfft(torch.fft.rfft(torch.tensor([1., 2., 3., 4.])))
tensor([1., 2., 3., 4.])
"""

from .ops.spectral import (  # noqa: F401
    fft, fft2, fftfreq, fftn, fftshift, hfft, hfft2, hfftn, ifft, ifft2, ifftn, ifftshift, ihfft,
    ihfft2, ihfftn, irfft, irfft2, irfftn, rfft, rfft2, rfftfreq, rfftn)

__all__ = ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2",
           "rfftn", "irfftn", "hfft", "ihfft", "hfft2", "ihfft2", "hfftn", "ihfftn", "fftfreq",
           "rfftfreq", "fftshift", "ifftshift"]
