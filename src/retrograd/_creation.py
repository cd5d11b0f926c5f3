"""Tensor creation: from data, filled, ranges, random, and the ``*_like`` forms."""

import builtins
import math
import numbers
import warnings

import numpy

from . import _dtype
from ._deterministic import fill_uninitialized
from ._layout import check_layout
from .backend.spacing import linspace_array, logspace_array
from ._dtype import get_default_dtype
from ._tensor import Size, Tensor, _init, _set_requires_grad, wrap
from .backend import (check_device, cpu, get_array_module, host_array_module, meta, on_device,
                      to_device)
from .backend.functions import functions
from . import _random

__all__ = ["tensor", "as_tensor", "asarray", "from_numpy", "zeros", "ones", "full", "empty",
           "arange", "linspace", "logspace", "eye", "rand", "randn", "randint", "randperm",
           "zeros_like", "ones_like", "full_like", "empty_like", "rand_like", "randn_like",
           "randint_like", "normal", "scalar_tensor", "range", "empty_strided"]


def _infer_dtype(data):
    """PyTorch's dtype for Python data: bool, int64, default float, default complex."""
    kinds = set()
    _collect_dtypes(data, kinds)
    if not kinds:
        return get_default_dtype()
    res = None
    for d in kinds:
        res = d if res is None else _dtype.promote_types(res, d)
    return res


def _collect_dtypes(x, kinds):
    """Add the dtype of every element of nested data to ``kinds`` (a module-level
    recursion: a recursive closure would leave a reference cycle per call)."""
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
            _collect_dtypes(e, kinds)
    elif isinstance(x, str):
        raise TypeError(f"new(): invalid data type '{type(x).__name__}'")
    else:
        raise RuntimeError(f"Could not infer dtype of {type(x).__name__}")


def _to_array(data, dtype):
    if isinstance(data, Tensor):
        return data._data.astype(dtype.np if dtype else data._data.dtype, copy=True)
    if isinstance(data, numpy.ndarray):
        return numpy.array(data, dtype=dtype.np if dtype else None, copy=True)
    if dtype is None:
        dtype = _infer_dtype(data)
    try:
        return numpy.array(_unwrap(data), dtype=dtype.np)
    except ValueError:
        _check_nesting(data, _sizes(data), 0, dtype)
        raise


def _sizes(data):
    """The shape nested sequences should have, read along their first elements."""
    sizes = []
    while isinstance(data, (list, tuple)):
        sizes.append(len(data))
        if not data:
            break
        data = data[0]
    return sizes


def _check_nesting(data, sizes, dim, dtype):
    """PyTorch's errors for ragged nested sequences."""
    if dim == len(sizes):
        if isinstance(data, (list, tuple)):
            if dtype.category >= _dtype.FLOAT:
                raise TypeError(f"must be real number, not {type(data).__name__}")
            raise TypeError(f"'{type(data).__name__}' object cannot be interpreted as an "
                            "integer")
        return
    if not isinstance(data, (list, tuple)):
        raise TypeError("not a sequence")
    if len(data) != sizes[dim]:
        raise ValueError(f"expected sequence of length {sizes[dim]} at dim {dim} (got "
                         f"{len(data)})")
    for e in data:
        _check_nesting(e, sizes, dim + 1, dtype)


def _unwrap(x):
    if isinstance(x, Tensor):
        return x._data
    if isinstance(x, (list, tuple)):
        return [_unwrap(e) for e in x]
    return x


def _drawn(dev, shape, dtype, draw):
    """``draw()``'s host array (the host generator's), or for the meta device an array of
    ``shape`` and ``dtype`` made without memory (a model too big for the host can be
    built there)."""
    if dev.type == "meta":
        return meta.namespace.empty(shape, dtype)
    return draw()


def _finish(arr, requires_grad=False, dev=cpu):
    """The tensor of ``arr``, moved to ``dev`` (a host array of parsed data or of the host
    generator's draws; the filled and range functions, and a batch's ``*_like``, make
    theirs where it belongs and pass the default ``dev``)."""
    t = wrap(arr if dev is cpu else to_device(arr, dev))
    if requires_grad:
        _set_requires_grad(t, True, "Only Tensors of floating point and complex dtype")
    return t


_HOST = host_array_module()  # the CPU's, asked once: the default device's fast path


def _made(dev, make, requires_grad):
    """The tensor of ``make(xp)``'s array, made on ``dev`` by its array module ``xp``
    (:func:`..backend.on_device`)."""
    return _finish(make(_HOST) if dev is cpu else on_device(dev, make), requires_grad)


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A new tensor holding a copy of ``data``.

    >>> tensor([1., 2.])
    tensor([1., 2.])
    """
    dtype = _dtype.dtype_arg(dtype, "tensor")
    dev = check_device(device)
    return _finish(_to_array(data, dtype), requires_grad, dev)


def as_tensor(data, dtype=None, device=None):
    """Like ``tensor`` but shares memory with a Tensor or ndarray when it can."""
    dtype = _dtype.dtype_arg(dtype, "as_tensor")
    dev = check_device(device)
    if isinstance(data, Tensor):
        return data.to(dev if device is not None else data.device, dtype or data.dtype)
    if isinstance(data, numpy.ndarray) and dev.type == "cpu":
        _dtype.from_numpy_dtype(data.dtype)
        return wrap(data if dtype is None else data.astype(dtype.np, copy=False))
    return tensor(data, dtype=dtype, device=dev)


asarray = as_tensor


def from_numpy(ndarray):
    """A tensor sharing ``ndarray``'s memory."""
    if not isinstance(ndarray, numpy.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    _dtype.from_numpy_dtype(ndarray.dtype)
    return wrap(ndarray)


def _size(size, fn):
    """``size`` given as ints or as one sequence, checked with PyTorch's messages."""
    if len(size) == 1 and not isinstance(size[0], (int, numpy.integer)):
        if not isinstance(size[0], (tuple, list)):
            raise TypeError(f"{fn}(): argument 'size' (position 1) must be tuple of ints, not "
                            f"{type(size[0]).__name__}")
        size = tuple(size[0])
    for i, s in enumerate(size):
        if not isinstance(s, (int, numpy.integer)) or isinstance(s, builtins.bool):
            raise TypeError(f"{fn}(): argument 'size' failed to unpack the object at pos "
                            f"{i + 1} with error \"type must be tuple of ints,but got "
                            f"{type(s).__name__}\"")
        if s < 0:
            if fn == "zeros":
                raise RuntimeError("zeros: Dimension size must be non-negative.")
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: "
                               f"{list(size)}")
    return tuple(builtins.int(s) for s in size)


def _no_out(out):
    if out is not None:
        raise NotImplementedError("out= is not supported by retrograd's creation functions")


def _dt(dtype):
    return (dtype or get_default_dtype()).np


def _number(v):
    """A range's end or step given as a 0-d tensor, as the Python number the device
    builds from."""
    return v.item() if isinstance(v, Tensor) else v


def zeros(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """>>> zeros(2, 3).shape
    torch.Size([2, 3])"""
    check_layout(layout, "zeros")
    dtype = _dtype.dtype_arg(dtype, "zeros")
    dev = check_device(device)
    _no_out(out)
    shape, dt = _size(size, "zeros"), _dt(dtype)
    return _made(dev, lambda xp: xp.zeros(shape, dt), requires_grad)


def ones(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    check_layout(layout, "ones")
    dtype = _dtype.dtype_arg(dtype, "ones")
    dev = check_device(device)
    _no_out(out)
    shape, dt = _size(size, "ones"), _dt(dtype)
    return _made(dev, lambda xp: xp.ones(shape, dt), requires_grad)


def empty(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False,
          memory_format=None, pin_memory=False):
    check_layout(layout, "empty")
    dtype = _dtype.dtype_arg(dtype, "empty")
    dev = check_device(device)
    _no_out(out)
    shape, dt = _size(size, "empty"), _dt(dtype)
    return _made(dev, lambda xp: fill_uninitialized(xp.empty(shape, dt)), requires_grad)


def empty_strided(size, stride, *, out=None, dtype=None, layout=None, device=None,
                  requires_grad=False, pin_memory=False):
    """An uninitialized tensor with exactly these strides (in elements), over a storage
    just large enough for them.

    >>> empty_strided((2, 3), (1, 2)).stride()
    (1, 2)
    """
    check_layout(layout, "empty_strided")
    dtype = _dtype.dtype_arg(dtype, "empty_strided")
    dev = check_device(device)
    _no_out(out)
    return strided_empty(size, stride, _dt(dtype), dev, requires_grad, "empty_strided")


def strided_empty(size, stride, dt, dev, requires_grad, fn):
    """The uninitialized tensor of ``fn`` (``empty_strided``, ``Tensor.new_empty_strided``)
    in NumPy dtype ``dt`` on ``dev``."""
    shape, strides = _strided_geometry(size, stride, fn)
    n, steps = _extent(shape, strides), tuple(s * dt.itemsize for s in strides)
    return _made(dev, lambda xp: xp.lib.stride_tricks.as_strided(
        fill_uninitialized(xp.empty(n, dt)), shape, steps), requires_grad)


def _ints(value, fn, arg, pos):
    """A ``SymInt[]`` argument as PyTorch's parser takes it: a sequence of ints."""
    if not isinstance(value, (tuple, list)):
        raise TypeError(f"{fn}(): argument '{arg}' (position {pos}) must be tuple of ints, "
                        f"not {type(value).__name__}")
    for i, v in enumerate(value):
        if not isinstance(v, (builtins.int, numpy.integer)) or isinstance(v, builtins.bool):
            raise TypeError(f"{fn}(): argument '{arg}' (position {pos}) must be tuple of ints, "
                            f"but found element of type {type(v).__name__} at pos {i}")
    return tuple(builtins.int(v) for v in value)


def _strided_geometry(size, stride, fn):
    """``empty_strided``'s sizes and strides, checked in ATen's order. A negative stride is
    accepted where it reaches nothing (a dim of size 1, or an empty tensor) and then, as
    ``TensorImpl::set_sizes_and_strides`` does, replaced by the row-major one."""
    shape, strides = _ints(size, fn, "size", 1), _ints(stride, fn, "stride", 2)
    if any(s < 0 for s in shape):
        neg = next(s for s in shape if s < 0)
        raise RuntimeError(f"Trying to create tensor with negative dimension {neg}: "
                           f"{list(shape)}")
    if len(shape) != len(strides):
        raise RuntimeError(f"dimensionality of sizes ({len(shape)}) must match dimensionality "
                           f"of strides ({len(strides)})")
    if all(shape) and any(s < 0 and n > 1 for n, s in zip(shape, strides, strict=True)):
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(shape)} and "
                           f"strides={list(strides)}")
    fixed, inner = [], 1
    for n, s in zip(reversed(shape), reversed(strides), strict=True):
        fixed.append(s if s >= 0 else inner)
        inner = max(n, 1) * fixed[-1]
    return shape, tuple(reversed(fixed))


def _extent(shape, strides):
    """The elements a geometry reaches: one past its last (none for an empty tensor)."""
    return 1 + sum((n - 1) * s for n, s in zip(shape, strides, strict=True)) if all(shape) else 0


def full(size, fill_value, *, out=None, dtype=None, layout=None, device=None,
         requires_grad=False):
    """Filled with ``fill_value``; the dtype is inferred from it as PyTorch does."""
    check_layout(layout, "full")
    dtype = _dtype.dtype_arg(dtype, "full")
    dev = check_device(device)
    _no_out(out)
    if isinstance(fill_value, Tensor):  # a Python scalar, whatever device builds from it
        fill_value = fill_value.item()
    if not isinstance(fill_value, numbers.Number):
        raise TypeError(f"full(): argument 'fill_value' (position 2) must be Number, not "
                        f"{type(fill_value).__name__}")
    if dtype is None:
        dtype = _infer_dtype(fill_value)
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"full(): argument 'size' (position 1) must be tuple of ints, not "
                        f"{type(size).__name__}")
    shape = _size((size,), "full")
    dt = dtype.np
    # (c10's check: 300 overflows uint8, -1 wraps; a single element skips it in half precision)
    value = _dtype.checked_convert(fill_value, dt, math.prod(shape) == 1)
    return _made(dev, lambda xp: xp.full(shape, value, dt), requires_grad)


def scalar_tensor(s, *, dtype=None, device=None, requires_grad=False):
    dtype = _dtype.dtype_arg(dtype, "scalar_tensor")
    dev = check_device(device)
    dt = (dtype or get_default_dtype()).np
    if isinstance(s, Tensor):
        s = s.item()
    return _made(dev, lambda xp: xp.array(s, dt), requires_grad)


def arange(start, end=None, step=1, *, out=None, dtype=None, layout=None, device=None,
           requires_grad=False):
    """int64 for integer arguments, else the default float dtype."""
    check_layout(layout, "arange")
    dtype = _dtype.dtype_arg(dtype, "arange")
    dev = check_device(device)
    _no_out(out)
    if end is None:
        start, end = 0, start
    if isinstance(start, Tensor) or isinstance(end, Tensor) or isinstance(step, Tensor):
        start, end, step = (_number(v) for v in (start, end, step))
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    if dtype is None:
        ints = (int, numpy.integer)
        dtype = (_dtype.int64 if isinstance(start, ints) and isinstance(end, ints)
                 and isinstance(step, ints) else get_default_dtype())
    if dtype is _dtype.bool or dtype.is_complex:
        raise NotImplementedError(
            f"\"arange_cpu\" not implemented for '{_dtype.SCALAR_NAMES[dtype.name]}'")
    wide = _dtype.float64.np if dtype.is_floating_point else None  # steps in float64
    dt = dtype.np
    return _made(dev, lambda xp: xp.arange(start, end, step, dtype=wide)
                 .astype(dt, copy=False), requires_grad)


def range(start, end, step=1, *, out=None, dtype=None, layout=None, device=None,  # noqa: A001
          requires_grad=False, pin_memory=False):
    """PyTorch's deprecated range: ``end`` included, the default float dtype whatever the
    arguments. Values are ``start + i * step`` in float64 (int64 for integer dtypes), as
    ATen's ``range_cpu``.

    >>> range(1, 2, 0.5)
    tensor([1.0000, 1.5000, 2.0000])
    """
    warnings.warn("torch.range is deprecated and will be removed in a future release because "
                  "its behavior is inconsistent with Python's range builtin. Instead, use "
                  "torch.arange, which produces values in [start, end).", UserWarning,
                  stacklevel=2)
    check_layout(layout, "range")
    dtype = _dtype.dtype_arg(dtype, "range") or get_default_dtype()
    dev = check_device(device)
    _no_out(out)
    if dtype is _dtype.bool or dtype.is_complex:
        raise NotImplementedError(
            f"\"range_cpu\" not implemented for '{_dtype.SCALAR_NAMES[dtype.name]}'")
    acc = builtins.float if dtype.is_floating_point else builtins.int
    start, end, step = (acc(_number(v)) for v in (start, end, step))
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if not (math.isfinite(start) and math.isfinite(end)):
        raise RuntimeError(f"unsupported range: {start:g} -> {end:g}")
    if (end - start) * step < 0:
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    n = builtins.int((end - start) / step + 1)
    wide, dt = (_dtype.float64 if acc is builtins.float else _dtype.int64).np, dtype.np
    return _made(dev, lambda xp: (xp.arange(n, dtype=wide) * step + start)
                 .astype(dt, copy=False), requires_grad)


def linspace(start, end, steps, *, out=None, dtype=None, layout=None, device=None,
             requires_grad=False):
    check_layout(layout, "linspace")
    dtype = _dtype.dtype_arg(dtype, "linspace")
    dev = check_device(device)
    _no_out(out)
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    if isinstance(start, Tensor) or isinstance(end, Tensor):
        start, end = _number(start), _number(end)
    dt = _dt(dtype)
    return _made(dev, lambda xp: linspace_array(xp, start, end, steps, dt), requires_grad)


def logspace(start, end, steps, base=10.0, *, out=None, dtype=None, layout=None, device=None,
             requires_grad=False):
    check_layout(layout, "logspace")
    dtype = _dtype.dtype_arg(dtype, "logspace")
    dev = check_device(device)
    _no_out(out)
    start, end, dt = _number(start), _number(end), _dt(dtype)
    return _made(dev, lambda xp: logspace_array(xp, start, end, steps, base, dt),
                 requires_grad)


def eye(n, m=None, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    check_layout(layout, "eye")
    dtype = _dtype.dtype_arg(dtype, "eye")
    dev = check_device(device)
    _no_out(out)
    if n < 0 or m is not None and m < 0:
        name, v = ("n", n) if n < 0 else ("m", m)
        raise RuntimeError(f"{name} must be greater or equal to 0, got {v}")
    dt = _dt(dtype)
    return _made(dev, lambda xp: xp.eye(n, m, dtype=dt), requires_grad)


def rand(*size, generator=None, out=None, dtype=None, layout=None, device=None,
         requires_grad=False, pin_memory=False):
    """Uniform on [0, 1)."""
    check_layout(layout, "rand")
    dtype = _dtype.dtype_arg(dtype, "rand")
    dev = check_device(device)
    _no_out(out)
    g = generator or _random.default_generator
    shape, dt = _size(size, "rand"), _dt(dtype)
    return _finish(_drawn(dev, shape, dt, lambda: g._rng.random(shape).astype(dt)),
                   requires_grad, dev)


def randn(*size, generator=None, out=None, dtype=None, layout=None, device=None,
          requires_grad=False, pin_memory=False):
    """Standard normal."""
    check_layout(layout, "randn")
    dtype = _dtype.dtype_arg(dtype, "randn")
    dev = check_device(device)
    _no_out(out)
    g = generator or _random.default_generator
    shape, dt = _size(size, "randn"), _dt(dtype)
    return _finish(_drawn(dev, shape, dt, lambda: g._rng.standard_normal(shape).astype(dt)),
                   requires_grad, dev)


def randint(low=0, high=None, size=None, *, generator=None, out=None, dtype=None, layout=None,
            device=None, requires_grad=False):
    """Integers in [low, high); ``randint(high, size)`` also works, as in PyTorch."""
    check_layout(layout, "randint")
    dtype = _dtype.dtype_arg(dtype, "randint")
    dev = check_device(device)
    _no_out(out)
    if size is None:
        low, high, size = 0, low, high
    g = generator or _random.default_generator
    return _finish(g._rng.integers(low, high, _size((size,), "randint"))
                   .astype((dtype or _dtype.int64).np), requires_grad, dev)


def randperm(n, *, generator=None, out=None, dtype=None, layout=None, device=None,
             requires_grad=False):
    check_layout(layout, "randperm")
    dtype = _dtype.dtype_arg(dtype, "randperm")
    dev = check_device(device)
    _no_out(out)
    g = generator or _random.default_generator
    return _finish(g._rng.permutation(n).astype((dtype or _dtype.int64).np), requires_grad, dev)


def normal(mean, std, size=None, *, generator=None, out=None):
    _no_out(out)
    g = generator or _random.default_generator
    if size is not None:
        return wrap(g._rng.normal(mean, std, _size((size,), "normal")).astype(_dt(None)))
    m = mean._data if isinstance(mean, Tensor) else mean
    s = std._data if isinstance(std, Tensor) else std
    ref = mean if isinstance(mean, Tensor) else std
    xp = get_array_module(ref._data)
    shape = xp.broadcast_shapes(getattr(m, "shape", ()), getattr(s, "shape", ()))
    # drawn on the host from the tensors' values, on their device (nothing drawn on meta)
    return wrap(functions(xp).draw(g._rng, "normal", (m, s), shape).astype(ref._data.dtype))


def _batched_like(input, device, dtype, requires_grad, make):
    """Under vmap, the like of a batched ``input`` is batched too (each element its own
    buffer, which may then take batched writes), as torch.vmap's: ``make(xp, shape,
    dtype)`` with ``xp`` the namespace of ``input``'s batch, whose buffers are batches.
    None where ``input`` is not batched or the result goes to another device."""
    d = input._data
    if not hasattr(type(d), "batched_namespace") or (
            device is not None and check_device(device) != input.device):
        return None
    xp = get_array_module(d)
    return _finish(make(xp, tuple(input.shape), (dtype or input.dtype).np), requires_grad)


def _like(fn, batched=None):
    """``fn``'s ``*_like``; ``batched(xp, shape, dtype)``: the array of a batched input's."""
    def like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
             memory_format=None, **kw):
        check_layout(layout, like.__name__)
        dtype = _dtype.dtype_arg(dtype, like.__name__)
        if batched is not None:
            t = _batched_like(input, device, dtype, requires_grad, batched)
            if t is not None:
                return t
        return fn(*input.shape, dtype=dtype or input.dtype, device=device or input.device,
                  requires_grad=requires_grad, **kw)
    like.__name__ = fn.__name__ + "_like"
    like.__doc__ = (f"``{fn.__name__}`` with the shape (and by default dtype and device) of "
                    f"``input``.")
    return like


zeros_like = _like(zeros, lambda xp, shape, dt: xp.zeros(shape, dt))
ones_like = _like(ones, lambda xp, shape, dt: xp.ones(shape, dt))
empty_like = _like(empty, lambda xp, shape, dt: fill_uninitialized(xp.empty(shape, dt)))
rand_like = _like(rand)  # (vmap's randomness decides how the draws batch)
randn_like = _like(randn)


def full_like(input, fill_value, *, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=None):
    check_layout(layout, "full_like")
    dtype = _dtype.dtype_arg(dtype, "full_like")
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    t = _batched_like(input, device, dtype, requires_grad,
                      lambda xp, shape, dt: xp.full(shape, fill_value, dt))
    if t is not None:
        return t
    return full(tuple(input.shape), fill_value, dtype=dtype or input.dtype,
                device=device or input.device, requires_grad=requires_grad)


def randint_like(input, low=0, high=None, *, dtype=None, layout=None, device=None,
                 requires_grad=False, memory_format=None):
    check_layout(layout, "randint_like")
    dtype = _dtype.dtype_arg(dtype, "randint_like")
    if high is None:
        low, high = 0, low
    return randint(low, high, tuple(input.shape), dtype=dtype or input.dtype,
                   device=device or input.device)


def _legacy_init(self, *args, dtype=None, device=None):
    """Legacy constructor: ``Tensor(data)`` (float32), ``Tensor(*sizes)`` or
    ``Tensor(size)``; ``Tensor(tensor)`` shares the tensor's memory, as in PyTorch.
    It ignores ``set_default_device``, as PyTorch's does."""
    device = device or "cpu"
    if len(args) == 1 and isinstance(args[0], Tensor):
        data = args[0]._data
    elif len(args) == 1 and not isinstance(args[0], (int, Size)):
        data = tensor(args[0], dtype=dtype or _dtype.float32, device=device)._data
    else:
        data = empty(*args or (0,), dtype=dtype or _dtype.float32, device=device)._data
    _init(self, data)


Tensor.__init__ = _legacy_init
