"""The legacy typed constructors: ``torch.FloatTensor(2, 3)``, ``torch.LongTensor([1, 2])``,
``isinstance(x, torch.FloatTensor)``, and ``torch.cuda``'s, which a CPU-only build has
but cannot call.

Each is an instance of :class:`tensortype` (``torch.tensortype``): not a subclass of
Tensor, but ``isinstance`` asks whether a tensor has its dtype and device, and calling
it makes a plain Tensor.
"""

import numbers

import numpy

from . import _dtype
from ._creation import empty, tensor
from ._dtype import CPP_NAMES, LEGACY_NAMES
from ._tensor import Size, Tensor
from .backend import Device

__all__ = ["tensortype", "LEGACY_NAMES", "cpu_types", "cuda_types"]

_NOT_EXPORTED = ("complex64", "complex128")  # PyTorch has no torch.ComplexFloatTensor

_SIGNATURES = ("but expected one of:\n * (*, torch.device device = None)\n{}"
               " * (torch.Storage storage)\n * (Tensor other)\n"
               " * (tuple of ints size, *, torch.device device = None)\n"
               " * (object data, *, torch.device device = None)\n")


class tensortype(type):
    """The type of ``torch.FloatTensor`` and its kin."""

    def __new__(mcls, name, dtype, device_type):
        cls = super().__new__(mcls, name, (), {"dtype": dtype, "is_cuda": device_type == "cuda",
                                               "is_sparse": False})
        cls.__module__ = "torch.cuda" if device_type == "cuda" else "torch"
        cls._device_type = device_type
        return cls

    def __init__(cls, name, dtype, device_type):
        super().__init__(name, (), {})

    def __instancecheck__(cls, obj):
        return (isinstance(obj, Tensor) and obj.dtype is cls.dtype
                and obj.device.type == cls._device_type)

    def __call__(cls, *args, **kwargs):
        if cls._device_type == "cuda":
            raise TypeError(f"type {cls.__module__}.{cls.__name__} not available. Torch not "
                            f"compiled with CUDA enabled.")
        device = kwargs.pop("device", None)
        if kwargs:
            got = ", ".join([type(a).__name__ for a in args]
                            + [f"{k}={_type_name(v)}" for k, v in kwargs.items()])
            detail = ("      didn't match because some of the keywords were incorrect: "
                      f"{', '.join(kwargs)}\n")
            raise TypeError(f"new() received an invalid combination of arguments - got "
                            f"({got}), {_SIGNATURES.format(detail)}")
        if device is not None and Device(device).type != "cpu":
            raise RuntimeError(f"legacy constructor expects device type: cpu but device type: "
                               f"{Device(device).type} was passed")
        return _construct(cls, args)


def _type_name(v):
    return "torch.dtype" if isinstance(v, _dtype.dtype) else type(v).__name__


def _construct(cls, args):
    """``()``, ``(*sizes)``, ``(Size)``, ``(tensor)`` or ``(data)``, as PyTorch's legacy
    ``new()`` (on the CPU, whatever ``set_default_device`` says)."""
    if not args:
        return empty(0, dtype=cls.dtype, device="cpu")
    if len(args) == 1:
        (a,) = args
        if isinstance(a, Tensor):
            if a.dtype is not cls.dtype:
                raise TypeError(f"expected {_options(cls.dtype)} (got {_options(a.dtype)})")
            return a.detach()
        if isinstance(a, Size):
            return empty(*a, dtype=cls.dtype, device="cpu")
        if isinstance(a, str):
            raise TypeError(f"new(): invalid data type '{type(a).__name__}'")
        if isinstance(a, (list, tuple, numpy.ndarray)):
            return tensor(a, dtype=cls.dtype, device="cpu")
        if not isinstance(a, numbers.Integral):
            raise TypeError(f"new(): data must be a sequence (got {type(a).__name__})")
    if not all(isinstance(a, numbers.Integral) for a in args):
        got = ", ".join(type(a).__name__ for a in args)
        raise TypeError(f"new() received an invalid combination of arguments - got ({got}), "
                        f"{_SIGNATURES.format('')}")
    return empty(*args, dtype=cls.dtype, device="cpu")


def _options(dtype):
    return (f"TensorOptions(dtype={CPP_NAMES[dtype.name]}, device=cpu, layout=Strided, "
            f"requires_grad=false (default), pinned_memory=false (default), "
            f"memory_format=(nullopt))")


def _types(device_type):
    return {name: tensortype(name, _dtype._names[dt], device_type)
            for dt, name in LEGACY_NAMES.items() if dt not in _NOT_EXPORTED}


cpu_types = _types("cpu")
cuda_types = _types("cuda")
