"""``torch.autocast``: regions where matmuls and convolutions run in a low dtype.

The state and the cast live in :mod:`retrograd._autocast` (below the ops it wraps); this
is PyTorch's API over it: the context manager and decorator, the ``torch.*`` state
functions, and ``custom_fwd``/``custom_bwd`` for custom Functions.
"""

import collections.abc
import functools
import warnings

import numpy

from .. import _autocast, _dtype, cuda
from .._tensor import Tensor

__all__ = ["autocast_decorator", "autocast", "is_autocast_available", "custom_fwd",
           "custom_bwd"]

_DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip",
                 "ve", "fpga", "maia", "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia",
                 "privateuseone")


def is_autocast_available(device_type):
    """Whether autocast runs on ``device_type`` here: "cpu" and "cuda" (which then finds
    no GPU and disables itself, as PyTorch's CPU build does)."""
    if device_type not in _DEVICE_TYPES:
        raise RuntimeError(f"Expected one of {', '.join(_DEVICE_TYPES)} device type at start "
                           f"of device string: {device_type}")
    return device_type in _autocast.AVAILABLE


def autocast_decorator(autocast_instance, func):
    @functools.wraps(func)
    def decorate_autocast(*args, **kwargs):
        with autocast_instance:
            return func(*args, **kwargs)
    return decorate_autocast


class autocast:
    """Run the ops of a region in mixed precision: PyTorch's CPU lists decide which ops
    cast to ``dtype`` (matmul, linear, conv, ...), which to float32 (losses, norms of
    linear algebra, ...) and which to their widest input (cat, stack, index_copy).

    >>> import retrograd as torch
    >>> with torch.autocast("cpu"):
    ...     y = torch.mm(torch.ones(2, 2), torch.ones(2, 2))
    >>> y.dtype
    torch.bfloat16
    """

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        self.fast_dtype = get_autocast_dtype(device_type) if dtype is None else dtype
        self.device = device_type
        if not is_autocast_available(device_type):
            raise RuntimeError(f"User specified an unsupported autocast device_type "
                               f"'{device_type}'")
        self._cache_enabled = (is_autocast_cache_enabled() if cache_enabled is None
                               else cache_enabled)
        if enabled:
            if device_type == "cuda":
                if not cuda.is_available():
                    warnings.warn("CUDA is not available or torch_xla is imported. Disabling "
                                  "autocast.", stacklevel=2)
                    enabled = False
            elif self.fast_dtype not in (_dtype.bfloat16, _dtype.float16):
                name = device_type.upper()
                warnings.warn(f"In {name} autocast, but the target dtype is not supported. "
                              f"Disabling autocast.\n{name} Autocast only supports dtypes of "
                              "torch.bfloat16, torch.float16 currently.", stacklevel=2)
                enabled = False
        self._enabled = enabled

    def __enter__(self):
        self.prev_cache_enabled = is_autocast_cache_enabled()
        self.prev = is_autocast_enabled(self.device)
        self.prev_fastdtype = get_autocast_dtype(self.device)
        set_autocast_enabled(self.device, self._enabled)
        set_autocast_dtype(self.device, self.fast_dtype)
        autocast_increment_nesting()
        set_autocast_cache_enabled(self._cache_enabled)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        if autocast_decrement_nesting() == 0:
            clear_autocast_cache()
        set_autocast_enabled(self.device, self.prev)
        set_autocast_dtype(self.device, self.prev_fastdtype)
        set_autocast_cache_enabled(self.prev_cache_enabled)
        return False

    def __call__(self, func):
        if not callable(func):
            raise TypeError(
                f"autocast()(func) requires a callable, but got {type(func).__name__}. "
                "Did you mean to use autocast as a context manager? For example:\n"
                "    with torch.autocast(device_type=...):\n"
                "        output = model(input)")
        return autocast_decorator(self, func)


# ---- torch.* state functions -------------------------------------------------------------
def is_autocast_enabled(device_type="cuda"):
    """Whether autocast is on for ``device_type`` (PyTorch's no-argument form: CUDA)."""
    return _autocast.is_enabled(device_type)


def set_autocast_enabled(device_type, enabled=None):
    if enabled is None:  # PyTorch's legacy one-argument form sets CUDA's
        device_type, enabled = "cuda", device_type
    _autocast.set_enabled(device_type, enabled)


def get_autocast_dtype(device_type):
    """The dtype autocast casts to on ``device_type`` (bfloat16 on CPU, float16 on CUDA)."""
    return _autocast.get_dtype(device_type)


def set_autocast_dtype(device_type, dtype):
    _autocast.set_dtype(device_type, dtype)


def is_autocast_cache_enabled():
    return _autocast.state.cache_enabled


def set_autocast_cache_enabled(enabled):
    _autocast.state.cache_enabled = bool(enabled)


def clear_autocast_cache():
    _autocast.clear_cache()


def autocast_increment_nesting():
    _autocast.state.nesting += 1
    return _autocast.state.nesting


def autocast_decrement_nesting():
    _autocast.state.nesting -= 1
    return _autocast.state.nesting


# ---- custom Functions ----------------------------------------------------------------------
def _cast(value, device_type, dtype):
    if isinstance(value, Tensor):
        eligible = (value.is_floating_point() and value.device.type == device_type
                    and value.dtype is not _dtype.float64)
        return value.to(dtype) if eligible else value
    if isinstance(value, (str, bytes, numpy.ndarray)):
        return value
    if isinstance(value, collections.abc.Mapping):
        return {_cast(k, device_type, dtype): _cast(v, device_type, dtype)
                for k, v in value.items()}
    if isinstance(value, collections.abc.Iterable):
        iterable = (_cast(v, device_type, dtype) for v in value)
        return type(value)(iterable) if isinstance(value, (list, tuple)) else iterable
    return value


def _check_device_type(device_type):
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")


def custom_fwd(fwd=None, *, device_type, cast_inputs=None):
    """Decorate a custom Function's ``forward``: with ``cast_inputs``, inside an autocast
    region its floating inputs are cast to that dtype and it runs with autocast off;
    without, it runs in the surrounding state, which :func:`custom_bwd` restores."""
    _check_device_type(device_type)
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        args[0]._dtype = get_autocast_dtype(device_type)
        if cast_inputs is None:
            args[0]._fwd_used_autocast = is_autocast_enabled(device_type)
            return fwd(*args, **kwargs)
        args[0]._fwd_used_autocast = False
        if is_autocast_enabled(device_type):
            with autocast(device_type=device_type, enabled=False):
                return fwd(*_cast(args, device_type, cast_inputs),
                           **_cast(kwargs, device_type, cast_inputs))
        return fwd(*args, **kwargs)
    return decorate_fwd


def custom_bwd(bwd=None, *, device_type):
    """Decorate a custom Function's ``backward`` to run in its forward's autocast state."""
    _check_device_type(device_type)
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args, **kwargs):
        with autocast(device_type=device_type, enabled=args[0]._fwd_used_autocast,
                      dtype=args[0]._dtype):
            return bwd(*args, **kwargs)
    return decorate_bwd
