"""``retrograd.backends``: the switches PyTorch keeps in ``torch.backends``.

Each submodule answers as PyTorch's CPU-only build does on this machine: no CUDA,
cuDNN or MPS; its flags are readable and settable (a tutorial's
``torch.backends.cudnn.benchmark = True`` works) and, as in PyTorch without those
libraries, change no CPU computation. ``mkldnn`` and ``openmp`` say False: retrograd's
kernels are NumPy's or its own, not oneDNN's or OpenMP's; ``mkl`` says whether its matrix
products are MKL's (the ``mkl`` wheel installed).
"""

__all__ = ["cpu", "cuda", "cudnn", "mkl", "mkldnn", "mps", "openmp", "opt_einsum"]

from . import cpu, cuda, cudnn, mkl, mkldnn, mps, openmp, opt_einsum  # noqa: F401
