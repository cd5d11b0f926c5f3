"""``out=``: PyTorch's contract for writing a function's result into a given tensor.

Every public function whose signature has ``out`` gets this wrapper at registration
(its Tensor method stays the plain function: PyTorch's methods take no ``out``, so none
is expected there). The result is computed as
usual, then copied into ``out``: its dtype must be castable to ``out``'s (PyTorch's
``canCast``: no float into integers, no complex into reals, nothing but bool into bool),
a wrong-shaped ``out`` is resized (with PyTorch's deprecation warning unless it was
empty), and autograd refuses, as PyTorch's does, when grad mode is on and anything
involved requires grad.
"""

import functools
import inspect
import warnings

from .._dtype import SCALAR_NAMES, can_cast, from_numpy_dtype
from .._tensor import Tensor
from .._tensor import wrap as _wrap
from ..autograd import grad_mode
from ..backend import get_array_module


def write(name, result, out):
    """Copy ``result`` (a Tensor, or a tuple of them) into ``out``; returns ``out``."""
    if isinstance(result, tuple):
        if not isinstance(out, (tuple, list)) or len(out) != len(result):
            raise TypeError(f"{name}(): argument 'out' must be tuple of {len(result)} Tensors")
        written = tuple(write(name, r, o) for r, o in zip(result, out, strict=True))
        return type(result)(written)  # (a plain tuple, or a return_types structseq)
    if not isinstance(out, Tensor):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if grad_mode.state.enabled and (result.requires_grad or out.requires_grad):
        raise RuntimeError(f"{name}(): functions with out=... arguments don't support "
                           "automatic differentiation, but one of the arguments requires "
                           "grad.")
    src, dst = result._data, out._data
    if not can_cast(from_numpy_dtype(src.dtype), from_numpy_dtype(dst.dtype)):
        raise RuntimeError(f"result type {SCALAR_NAMES[src.dtype.name]} can't be cast to the "
                           f"desired output type {SCALAR_NAMES[dst.dtype.name]}")
    if dst.shape != src.shape:
        if dst.size:
            warnings.warn(f"An output with one or more elements was resized since it had shape "
                          f"{list(dst.shape)}, which does not match the required output shape "
                          f"{list(src.shape)}. This behavior is deprecated, and in a future "
                          "PyTorch release outputs will not be resized unless they have zero "
                          "elements. You can explicitly reuse an out tensor t by resizing it, "
                          "inplace, to zero elements with t.resize_(0).", stacklevel=3)
        out.data = _wrap(src.astype(dst.dtype, copy=True))
    else:
        get_array_module(dst).copyto(dst, src, casting="unsafe")
    out._vc[0] += 1
    return out


def wrap(f, name):
    """``f`` taking ``out=``: computed, then written into ``out`` when one is given."""
    @functools.wraps(f)
    def with_out(*args, out=None, **kwargs):
        if out is None:
            return f(*args, **kwargs)
        return write(name, f(*args, **kwargs), out)
    return with_out


def takes_out(f):
    try:
        return "out" in inspect.signature(f).parameters
    except (TypeError, ValueError):  # a builtin without a signature
        return False
