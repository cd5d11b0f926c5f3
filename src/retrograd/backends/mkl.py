"""``torch.backends.mkl``: whether matrix products here are MKL's (the ``mkl`` wheel,
:mod:`retrograd.backend.mkl_gemm`); the other kernels are NumPy's or retrograd's own."""

from ..backend import mkl_gemm

__all__ = ["is_available"]


def is_available():
    return mkl_gemm.available()
