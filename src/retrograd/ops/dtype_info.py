"""Facts about dtypes: finfo, iinfo (PyTorch's printed forms) and can_cast."""


import ml_dtypes

from .. import _dtype
from ._registry import register

__all__ = ["finfo", "iinfo", "can_cast"]


def _g(x):
    return format(x, ".6g")


@register(method=False)
class finfo:
    """``torch.finfo``: the limits of a floating dtype (the default dtype when None)."""

    def __init__(self, type=None):
        dt = type or _dtype.get_default_dtype()
        if not _dtype.is_inexact(dt.np):
            raise TypeError("torch.finfo() requires a floating point input type. Use "
                            "torch.iinfo to handle 'torch.finfo'")
        info = _dtype.np_finfo(dt.np)  # bfloat16 included
        self.bits = info.bits
        self.eps, self.max, self.min = float(info.eps), float(info.max), float(info.min)
        self.tiny = self.smallest_normal = float(info.smallest_normal)
        self.resolution = 10.0 ** -info.precision
        self.dtype = info.dtype.name

    def __eq__(self, other):
        return isinstance(other, finfo) and other.dtype == self.dtype

    __hash__ = object.__hash__

    def __repr__(self):
        return (f"finfo(resolution={_g(self.resolution)}, min={_g(self.min)}, "
                f"max={_g(self.max)}, eps={_g(self.eps)}, "
                f"smallest_normal={_g(self.smallest_normal)}, tiny={_g(self.tiny)}, "
                f"dtype={self.dtype})")


@register(method=False)
class iinfo:
    """``torch.iinfo``: the limits of an integer dtype."""

    def __init__(self, type):
        if type.category == _dtype.BOOL:
            raise TypeError("torch.bool is not supported by torch.iinfo")
        if type.category != _dtype.INT:
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo "
                            "to handle 'torch.iinfo'")
        info = ml_dtypes.iinfo(type.np)
        self.bits, self.max, self.min = info.bits, int(info.max), int(info.min)
        self.dtype = type.name

    def __eq__(self, other):
        return isinstance(other, iinfo) and other.dtype == self.dtype

    __hash__ = object.__hash__

    def __repr__(self):
        return f"iinfo(min={_g(self.min)}, max={_g(self.max)}, dtype={self.dtype})"


@register(method=False)
def can_cast(from_, to):
    """Whether PyTorch's casting rules allow ``from_`` to ``to`` in type-promoting ops:
    never to a lower category (complex > float > integer > bool)."""
    return from_.category <= to.category
