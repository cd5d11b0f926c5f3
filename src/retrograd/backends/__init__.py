"""``retrograd.backends``: the switches PyTorch keeps in ``torch.backends``.

Each submodule answers as PyTorch's CPU-only build does on this machine: no CUDA,
cuDNN or MPS; its flags are readable and settable (a tutorial's
``torch.backends.cudnn.benchmark = True`` works) and, as in PyTorch without those
libraries, change no CPU computation. ``mkldnn``, ``mkl`` and ``openmp`` say False:
retrograd's kernels are NumPy's, not oneDNN's, MKL's or OpenMP's.
"""

import contextlib
import types

__all__ = ["cpu", "cuda", "cudnn", "mkl", "mkldnn", "mps", "openmp", "opt_einsum"]


class Flag:
    """A module attribute holding a bool that refuses other types, with PyTorch's
    message naming its C++ setter (``set_benchmark_cudnn expects a bool, ...``)."""

    def __init__(self, default, setter):
        self.default, self.setter = default, setter

    def __set_name__(self, owner, name):
        self.name = "_" + name

    def __get__(self, obj, objtype=None):
        return self if obj is None else obj.__dict__.get(self.name, self.default)

    def __set__(self, obj, value):
        if not isinstance(value, bool):
            raise RuntimeError(f"{self.setter} expects a bool, but got "
                               f"{type(value).__name__}")
        obj.__dict__[self.name] = value


class FlagModule(types.ModuleType):
    """The class a backend submodule takes (``sys.modules[__name__].__class__ = ...``) so
    that its flags are checked properties, as PyTorch's ``PropModule``."""

    @contextlib.contextmanager
    def _set(self, **values):
        """Set some flags for a ``with`` block, then restore them."""
        old = {k: getattr(self, k) for k in values}
        try:
            for k, v in values.items():
                setattr(self, k, v)
            yield
        finally:
            for k, v in old.items():
                setattr(self, k, v)


from . import cpu, cuda, cudnn, mkl, mkldnn, mps, openmp, opt_einsum  # noqa: E402
