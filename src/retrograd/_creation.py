"""Tensor creation: from data, filled, ranges, random, and the ``*_like`` forms."""

import builtins
import numbers

import numpy

from . import _dtype
from ._dtype import get_default_dtype
from ._tensor import Tensor, wrap
from .backend import check_device
from . import _random

__all__ = ["tensor", "as_tensor", "asarray", "from_numpy", "zeros", "ones", "full", "empty",
           "arange", "linspace", "logspace", "eye", "rand", "randn", "randint", "randperm",
           "zeros_like", "ones_like", "full_like", "empty_like", "rand_like", "randn_like",
           "randint_like", "normal", "scalar_tensor"]


def _infer_dtype(data):
    """PyTorch's dtype for Python data: bool, int64, default float, default complex."""
    kinds = set()

    def walk(x):
        if isinstance(x, Tensor):
            kinds.add(x.dtype)
        elif isinstance(x, numpy.ndarray):
            kinds.add(_dtype.from_numpy_dtype(x.dtype))
        elif isinstance(x, (builtins.bool, numpy.bool_)):
            kinds.add(_dtype.bool)
        elif isinstance(x, numpy.generic):
            kinds.add(_dtype.from_numpy_dtype(x.dtype))
        elif isinstance(x, numbers.Integral):
            kinds.add(_dtype.int64)
        elif isinstance(x, numbers.Real):
            kinds.add(get_default_dtype())
        elif isinstance(x, numbers.Complex):
            kinds.add(get_default_dtype().to_complex())
        elif isinstance(x, (list, tuple)):
            for e in x:
                walk(e)
        else:
            raise TypeError(f"Could not infer dtype of {type(x).__name__}")

    walk(data)
    if not kinds:
        return get_default_dtype()
    res = None
    for d in kinds:
        res = d if res is None else _dtype.promote_types(res, d)
    return res


def _to_array(data, dtype):
    if isinstance(data, Tensor):
        return data._data.astype(dtype.np if dtype else data._data.dtype, copy=True)
    if isinstance(data, numpy.ndarray):
        return numpy.array(data, dtype=dtype.np if dtype else None, copy=True)
    if dtype is None:
        dtype = _infer_dtype(data)
    try:
        return numpy.array(_unwrap(data), dtype=dtype.np)
    except ValueError as e:
        raise ValueError(f"expected sequence of equal-length lists to build a tensor ({e})") \
            from None


def _unwrap(x):
    if isinstance(x, Tensor):
        return x._data
    if isinstance(x, (list, tuple)):
        return [_unwrap(e) for e in x]
    return x


def _finish(arr, requires_grad=False):
    t = wrap(arr)
    if requires_grad:
        t.requires_grad_(True)
    return t


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A new tensor holding a copy of ``data``.

    >>> tensor([1., 2.])
    tensor([1., 2.])
    """
    check_device(device)
    return _finish(_to_array(data, dtype), requires_grad)


def as_tensor(data, dtype=None, device=None):
    """Like ``tensor`` but shares memory with a Tensor or ndarray when it can."""
    check_device(device)
    if isinstance(data, Tensor):
        return data if dtype is None or data.dtype is dtype else data.to(dtype)
    if isinstance(data, numpy.ndarray):
        _dtype.from_numpy_dtype(data.dtype)
        return wrap(data if dtype is None else data.astype(dtype.np, copy=False))
    return tensor(data, dtype=dtype)


asarray = as_tensor


def from_numpy(ndarray):
    """A tensor sharing ``ndarray``'s memory."""
    if not isinstance(ndarray, numpy.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    _dtype.from_numpy_dtype(ndarray.dtype)
    return wrap(ndarray)


def _size(size):
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    for s in size:
        if not isinstance(s, (int, numpy.integer)) or isinstance(s, builtins.bool):
            raise TypeError(f"size must be a sequence of ints, but got {type(s).__name__}")
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: "
                               f"{list(size)}")
    return tuple(builtins.int(s) for s in size)


def _dt(dtype):
    return (dtype or get_default_dtype()).np


def zeros(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """>>> zeros(2, 3).shape
    torch.Size([2, 3])"""
    check_device(device)
    return _finish(numpy.zeros(_size(size), _dt(dtype)), requires_grad)


def ones(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    check_device(device)
    return _finish(numpy.ones(_size(size), _dt(dtype)), requires_grad)


def empty(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False,
          memory_format=None, pin_memory=False):
    check_device(device)
    return _finish(numpy.empty(_size(size), _dt(dtype)), requires_grad)


def full(size, fill_value, *, out=None, dtype=None, layout=None, device=None,
         requires_grad=False):
    """Filled with ``fill_value``; the dtype is inferred from it as PyTorch does."""
    check_device(device)
    if dtype is None:
        dtype = _infer_dtype(fill_value.item() if isinstance(fill_value, Tensor)
                             else fill_value)
    return _finish(numpy.full(_size((size,)),
                              fill_value, dtype.np), requires_grad)


def scalar_tensor(s, *, dtype=None, device=None, requires_grad=False):
    return _finish(numpy.array(s, _dt(dtype)), requires_grad)


def arange(start, end=None, step=1, *, out=None, dtype=None, layout=None, device=None,
           requires_grad=False):
    """int64 for integer arguments, else the default float dtype."""
    check_device(device)
    if end is None:
        start, end = 0, start
    vals = [v.item() if isinstance(v, Tensor) else v for v in (start, end, step)]
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if dtype is None:
        dtype = (_dtype.int64 if all(isinstance(v, (int, numpy.integer)) for v in vals)
                 else get_default_dtype())
    return _finish(numpy.arange(*vals, dtype=numpy.float64 if dtype.is_floating_point
                                else None).astype(dtype.np), requires_grad)


def linspace(start, end, steps, *, out=None, dtype=None, layout=None, device=None,
             requires_grad=False):
    check_device(device)
    return _finish(numpy.linspace(start, end, steps).astype(_dt(dtype)), requires_grad)


def logspace(start, end, steps, base=10.0, *, out=None, dtype=None, layout=None, device=None,
             requires_grad=False):
    check_device(device)
    return _finish(numpy.logspace(start, end, steps, base=base).astype(_dt(dtype)),
                   requires_grad)


def eye(n, m=None, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    check_device(device)
    return _finish(numpy.eye(n, m, dtype=_dt(dtype)), requires_grad)


def rand(*size, generator=None, out=None, dtype=None, layout=None, device=None,
         requires_grad=False, pin_memory=False):
    """Uniform on [0, 1)."""
    check_device(device)
    g = generator or _random.default_generator
    return _finish(g._rng.random(_size(size), dtype=numpy.float64).astype(_dt(dtype)),
                   requires_grad)


def randn(*size, generator=None, out=None, dtype=None, layout=None, device=None,
          requires_grad=False, pin_memory=False):
    """Standard normal."""
    check_device(device)
    g = generator or _random.default_generator
    return _finish(g._rng.standard_normal(_size(size)).astype(_dt(dtype)), requires_grad)


def randint(low=0, high=None, size=None, *, generator=None, out=None, dtype=None, layout=None,
            device=None, requires_grad=False):
    """Integers in [low, high); ``randint(high, size)`` also works, as in PyTorch."""
    check_device(device)
    if size is None:
        low, high, size = 0, low, high
    g = generator or _random.default_generator
    return _finish(g._rng.integers(low, high, _size((size,) if isinstance(size, int)
                                                    else tuple(size)))
                   .astype((dtype or _dtype.int64).np), requires_grad)


def randperm(n, *, generator=None, out=None, dtype=None, layout=None, device=None,
             requires_grad=False):
    g = generator or _random.default_generator
    return _finish(g._rng.permutation(n).astype((dtype or _dtype.int64).np), requires_grad)


def normal(mean, std, size=None, *, generator=None, out=None):
    g = generator or _random.default_generator
    if size is not None:
        return wrap(g._rng.normal(mean, std, _size(tuple(size))).astype(_dt(None)))
    m = mean._data if isinstance(mean, Tensor) else mean
    s = std._data if isinstance(std, Tensor) else std
    ref = mean if isinstance(mean, Tensor) else std
    return wrap(g._rng.normal(m, s, numpy.broadcast_shapes(numpy.shape(m), numpy.shape(s)))
                .astype(ref._data.dtype))


def _like(fn):
    def like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
             memory_format=None, **kw):
        return fn(*input.shape, dtype=dtype or input.dtype, device=device,
                  requires_grad=requires_grad, **kw)
    like.__name__ = fn.__name__ + "_like"
    like.__doc__ = f"``{fn.__name__}`` with the shape (and by default dtype) of ``input``."
    return like


zeros_like = _like(zeros)
ones_like = _like(ones)
empty_like = _like(empty)
rand_like = _like(rand)
randn_like = _like(randn)


def full_like(input, fill_value, *, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=None):
    return full(tuple(input.shape), fill_value, dtype=dtype or input.dtype,
                requires_grad=requires_grad)


def randint_like(input, low=0, high=None, *, dtype=None, layout=None, device=None,
                 requires_grad=False, memory_format=None):
    if high is None:
        low, high = 0, low
    return randint(low, high, tuple(input.shape), dtype=dtype or input.dtype)
