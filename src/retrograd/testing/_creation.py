"""``torch.testing.make_tensor``: a random tensor of a shape and dtype, for tests."""

import collections.abc
import math
import warnings

from .. import _dtype
from .._creation import empty, randint
from ..ops.dtype_info import finfo, iinfo

__all__ = ["make_tensor"]


def make_tensor(*shape, dtype, device, low=None, high=None, requires_grad=False,
                noncontiguous=False, exclude_zero=False, memory_format=None):
    """Values drawn uniformly from ``[low, high)`` (by default ``[-9, 9)`` for floating
    types, ``[-9, 10)`` for signed integers, ``[0, 10)`` unsigned, either value for bool),
    from the default generator, so ``manual_seed`` makes them reproducible.

    >>> make_tensor(2, 3, dtype=retrograd.float32, device="cpu", low=-1, high=1).shape
    torch.Size([2, 3])
    """
    if len(shape) == 1 and isinstance(shape[0], collections.abc.Sequence):
        shape = shape[0]
    shape = tuple(shape)
    if noncontiguous and memory_format is not None:
        raise ValueError(f"The parameters `noncontiguous` and `memory_format` are mutually "
                         f"exclusive, but got noncontiguous={noncontiguous} and "
                         f"memory_format={memory_format}")
    if memory_format is not None:
        raise NotImplementedError(f"make_tensor: retrograd tensors have one memory format "
                                  f"(contiguous), not {memory_format}")
    floating = dtype.is_floating_point or dtype.is_complex
    if requires_grad and not floating:
        raise ValueError(f"`requires_grad=True` is not supported for boolean and integral "
                         f"dtypes, but got dtype={dtype}")
    noncontiguous = noncontiguous and math.prod(shape) > 1
    if noncontiguous:
        shape = (*shape[:-1], 2 * shape[-1])
    if dtype is _dtype.bool:
        low, high = _low_high(low, high, dtype, 0, 2, 0, 2)
        result = randint(low, high, shape, dtype=dtype, device=device)
    elif not floating:
        info = iinfo(dtype)
        low, high = _low_high(low, high, dtype, info.min,
                              info.max + (dtype is not _dtype.int64), -9, 10)
        result = randint(low, high, shape, dtype=dtype, device=device)
    else:
        info = finfo(dtype)
        low, high = _low_high(low, high, dtype, info.min, info.max, -9, 9)
        result = _uniform(shape, dtype, device, low, high)
    if noncontiguous:
        result = result[..., 1::2]
    if exclude_zero:
        result[result == 0] = finfo(dtype).tiny if floating else 1
    if floating:
        result.requires_grad = requires_grad
    return result


def _uniform(shape, dtype, device, low, high):
    """``[low, high)``; a complex tensor draws its real and imaginary parts so."""
    if dtype.is_complex:
        part = dtype.to_real()
        return _uniform(shape, part, device, low, high) + \
            1j * _uniform(shape, part, device, low, high)
    t = empty(shape, dtype=dtype, device=device)
    if high - low >= finfo(dtype).max:  # the width would overflow: draw half, double it
        return t.uniform_(low / 2, high / 2).mul_(2)
    return t.uniform_(low, high)


def _low_high(low, high, dtype, lowest, highest, default_low, default_high):
    """The user's bounds checked and clamped to the dtype, as PyTorch's make_tensor."""
    low = default_low if low is None else low
    high = default_high if high is None else high
    if any(isinstance(v, float) and math.isnan(v) for v in (low, high)):
        raise ValueError(f"`low` and `high` cannot be NaN, but got low={low} and high={high}")
    if low == high and (dtype.is_floating_point or dtype.is_complex):
        warnings.warn("Passing `low==high` to `torch.testing.make_tensor` for floating or "
                      "complex types is deprecated since 2.1 and will be removed in 2.3. Use "
                      "`torch.full(...)` instead.", FutureWarning, stacklevel=3)
    elif low >= high:
        raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
    elif high < lowest or low >= highest:
        raise ValueError(f"The value interval specified by `low` and `high` is [{low}, "
                         f"{high}), but {dtype} only supports [{lowest}, {highest})")
    low, high = min(max(low, lowest), highest), min(max(high, lowest), highest)
    if not (dtype.is_floating_point or dtype.is_complex):
        return math.ceil(low), math.ceil(high)
    return low, high
