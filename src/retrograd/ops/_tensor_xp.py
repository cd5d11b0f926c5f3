"""A NumPy-named, differentiable namespace over Tensors.

vjp/jvp rules are written against ``xp``: NumPy in a plain backward, this
module under ``create_graph=True``, so the backward of a backward is recorded
like any forward. NumPy names that are retrograd ops taking the same arguments
come from the name map (``_SAME``, ``_RENAMED``); the functions below adapt the
others' signatures. A rule that needs a new NumPy name adds it to the map, or
an adapter here. ``on(device)`` is this namespace for Tensors on a device (its
factories create there); the engine picks it by the gradients' device. Being made of
the op families' functions and the creation functions, it sits with them; the registry,
forward AD and the view nodes below reach it through ``backend.functions.facade``.
"""

import sys
import types

import numpy

from .. import _creation, _dtype
from ..autograd.node import DelayedError, collect_next
from ..backend import cpu, device_of, get_array_module, to_device
from ..backend.functions import ArrayFunctions, functions, register_facade, register_functions
from .._tensor import Tensor, wrap
from ._registry import FUNCTIONS as F, apply

device = cpu  # where the factories below create; ``on(device)`` is the namespace of another


def _t(x, like=None):
    """Tensors pass through; numbers stay numbers; arrays are wrapped, on the device of
    Tensor ``like``."""
    if isinstance(x, Tensor) or x is None or isinstance(x, (int, float, bool, complex)):
        return x
    if not hasattr(x, "dtype"):
        x = numpy.asarray(x)
    return wrap(x if not isinstance(like, Tensor) else to_device(x, like.device))


def _dt(np_dtype):
    if isinstance(np_dtype, _dtype.dtype):  # ``grad.dtype`` of a Tensor in a rule
        return np_dtype
    return _dtype.from_numpy_dtype(numpy.dtype(np_dtype))


def _axes(axis):
    return axis if axis is None or isinstance(axis, int) else tuple(axis)


# ---- the name map: NumPy names that are retrograd ops taking the same arguments --------------
_SAME = (
    "exp", "log", "log1p", "expm1", "sqrt", "sin", "cos", "tan", "tanh", "sinh", "cosh",
    "sign", "abs", "floor", "trunc", "reciprocal", "erf", "sigmoid", "isnan", "isinf",
    "isfinite", "logical_and", "logical_or", "logical_not", "matmul", "outer",
)
_RENAMED = {"power": "pow", "equal": "eq", "not_equal": "ne", "less": "lt", "less_equal": "le",
            "greater": "gt", "greater_equal": "ge", "subtract": "sub", "multiply": "mul"}


def _op(name, np_name):
    """NumPy's ``np_name`` as retrograd's op ``name`` (looked up when called: the op
    families register after this module loads)."""
    def f(*args):
        return F[name](*args)
    f.__name__ = f.__qualname__ = np_name
    return f


globals().update({n: _op(n, n) for n in _SAME})
globals().update({n: _op(op, n) for n, op in _RENAMED.items()})


# ---- elementwise --------------------------------------------------------------------------
def floor_divide(x, y):
    """PyTorch's ``div(rounding_mode="floor")``: zero derivative, where floor_divide has none."""
    return F["div"](x, y, rounding_mode="floor")


def conj(x):
    """The conjugate (recorded: conj_physical's vjp runs on complex gradients)."""
    return F["conj"](x)


def square(x):
    return x * x


def maximum(x, y):
    return F["maximum"](_t(x, y), _t(y, x))


def minimum(x, y):
    return F["minimum"](_t(x, y), _t(y, x))


def where(cond, x, y):
    if not isinstance(x, Tensor) and not isinstance(y, Tensor):
        x = _creation.full_like(cond, x, dtype=_dtype.get_default_dtype())
    like = next((v for v in (cond, x, y) if isinstance(v, Tensor)), None)
    return F["where"](_t(cond, like), _t(x, like), _t(y, like))


# ---- comparisons and predicates (bool results, no gradient) -------------------------------
# ---- creation -----------------------------------------------------------------------------
def zeros_like(x, dtype=None):
    return _creation.zeros_like(x, dtype=_dt(dtype) if dtype is not None else None)


def ones_like(x, dtype=None):
    return _creation.ones_like(x, dtype=_dt(dtype) if dtype is not None else None)


def _factories(dev):
    """The functions that create values from nothing but a shape, creating on ``dev``."""
    def zeros(shape, dtype=float):
        return _creation.zeros(*((shape,) if isinstance(shape, int) else shape),
                               dtype=_dt(dtype), device=dev)

    def arange(stop):
        return _creation.arange(stop, device=dev)

    def eye(n, m=None, dtype=float):
        return _creation.eye(n, m, dtype=_dt(dtype), device=dev)

    def full(shape, fill_value, dtype=float):
        return _creation.full(tuple(shape), fill_value, dtype=_dt(dtype), device=dev)

    def triu_indices(n, k=0, m=None):
        rows_cols = F["triu_indices"](n, n if m is None else m, k, device=dev)
        return rows_cols[0], rows_cols[1]

    return {"zeros": zeros, "arange": arange, "eye": eye, "full": full,
            "triu_indices": triu_indices, "device": dev}


def astype(x, dtype, copy=True):
    return x.to(_dt(dtype))


# ---- shapes and reductions ----------------------------------------------------------------
def reshape(x, shape):
    return F["reshape"](x, tuple(shape) if not isinstance(shape, int) else (shape,))


def broadcast_to(x, shape):
    return x.expand(*shape)


def expand_dims(x, axis):
    if isinstance(axis, int):
        return x.unsqueeze(axis)
    for a in sorted(axis):
        x = x.unsqueeze(a)
    return x


def squeeze(x, axis=None):
    return x.squeeze() if axis is None else x.squeeze(axis)


def transpose(x, axes=None):
    return x.permute(*(axes if axes is not None else range(x.ndim - 1, -1, -1)))


def swapaxes(x, a, b):
    return x.transpose(a, b)


def sum(x, axis=None, keepdims=False, dtype=None):
    if axis == ():  # NumPy reduces nothing; torch's empty dim list means every dim
        return x
    if axis is None:
        s = F["sum"](x)
        return s.reshape((1,) * x.ndim) if keepdims else s
    return F["sum"](x, dim=_axes(axis), keepdim=keepdims)


def mean(x, axis=None, keepdims=False):
    if axis == ():
        return x
    if axis is None:
        m = F["mean"](x)
        return m.reshape((1,) * x.ndim) if keepdims else m
    return F["mean"](x, dim=_axes(axis), keepdim=keepdims)


def moveaxis(x, source, destination):
    return F["movedim"](x, source, destination)


def cumsum(x, axis):
    return F["cumsum"](x, axis)


def cumprod(x, axis):
    return F["cumprod"](x, axis)


def roll(x, shift, axis):
    return F["roll"](x, shift, axis)


def bincount(x, minlength=0):
    return F["bincount"](x, minlength=minlength)


def any(x, axis=None):
    return F["any"](x) if axis is None else F["any"](x, axis)


def flip(x, axis):
    return F["flip"](x, (axis,) if isinstance(axis, int) else tuple(axis))


def concatenate(xs, axis=0):
    return F["cat"](list(xs), axis)


def stack(xs, axis=0):
    return F["stack"](list(xs), axis)


def split(x, indices, axis=0):
    """NumPy's split at the given section ends (the form the list ops' jvps use)."""
    ends = [int(i) for i in indices]
    sizes = [b - a for a, b in zip([0] + ends, ends + [x.shape[axis]], strict=True)]
    return list(F["split"](x, sizes, axis))


def take(x, index, axis):
    """NumPy's take along ``axis``: an integer ``index`` selects that slice; an index
    tensor gathers the slices it names, in its shape (``index_select``)."""
    if not isinstance(index, Tensor):
        return F["select"](x, axis, index)
    axis %= x.ndim
    out = F["index_select"](x, axis, index.reshape(-1))
    return out.reshape(*x.shape[:axis], *index.shape, *x.shape[axis + 1:])


def tile(x, reps):
    return x.repeat(*reps)


def diagonal(a, offset=0, axis1=0, axis2=1):
    return F["diagonal"](a, offset, axis1, axis2)


def tril(m, k=0):
    return F["tril"](m, k)


def triu(m, k=0):
    return F["triu"](m, k)


def take_along_axis(x, indices, axis):
    return F["gather"](x, axis, _t(indices, x))


# ---- linear algebra -----------------------------------------------------------------------
def einsum(eq, *operands, optimize=False):
    return F["einsum"](eq, *operands)  # retrograd's einsum picks its own contraction order


def tensordot(a, b, axes=2):
    return F["tensordot"](a, b, dims=axes)


def cross(a, b, axis=-1):
    return F["cross"](a, b, dim=axis)


def copy(a):
    return a.clone()


linalg = types.SimpleNamespace()  # numpy.linalg's names rules use: see register_linalg


def register_linalg(**ops):
    """The ``numpy.linalg`` names rules use (solve, inv, det, svd, pinv, eigh, and the
    LinAlgError they raise), as the differentiable ops the linear-algebra family provides."""
    vars(linalg).update(ops)


class _Functions(ArrayFunctions):
    """The backend functions (:mod:`..backend.functions`) on Tensors: their array forms
    written in this namespace, except where the op itself must be recorded (so a backward
    of a backward differentiates it) or the arrays' numerics tricks do not apply."""

    def where(self, cond, a, b):
        return where(cond, a, b)

    def sigmoid(self, x):
        return F["sigmoid"](x)

    def erf(self, x):
        return F["erf"](x)

    def call(self, op, values, attrs=()):
        return apply(op, values, attrs)

    def constant(self, a):
        return wrap(to_device(a, self.xp.device) if hasattr(a, "dtype") else numpy.asarray(a))

    def recomputed(self, saved, recompute):
        return recompute()

    def kernel_or_composite(self, kernel, composite, *args):
        return composite(*args)

    def once_differentiable(self, g, msg):
        if not g.requires_grad:
            return g
        err = DelayedError(msg)
        err.next_functions = collect_next((g,), None)[0]
        out = g.detach()
        out._grad_fn, out._requires_grad = err, True
        return out

    def clamp_min(self, x, c):
        return F["clamp_min"](x, c)

    def clamp_max(self, x, c):
        return F["clamp_max"](x, c)

    def expm(self, a):
        return F["matrix_exp"](a)

    def fused_mul_sub(self, a, b, c):
        return a * b - c

    def in_float32(self, f, x):  # ops on Tensors round so themselves
        return f(self.xp, x)

    def scalar_mul(self, a, b, opmath):  # Tensors promote so themselves
        return a * b

    def index_add(self, a, index, values):
        return F["index_add"](a, 0, _t(index, a), values)

    # Checks and formula choices on values ask the arrays' functions: a Tensor of batched
    # data (under vmap) refuses bool(), where the batch's functions read every member.
    def any_true(self, mask):
        return _of_data(mask).any_true(mask._data)

    def all_true(self, mask):
        return _of_data(mask).all_true(mask._data)

    def checked_values(self, a):
        return _of_data(a).checked_values(a._data)

    def all_finite(self, a):
        return _of_data(a).all_finite(a._data)


def _of_data(a):
    """The backend functions of Tensor ``a``'s array."""
    return functions(get_array_module(a._data))


globals().update(_factories(cpu))
_here = sys.modules[__name__]
register_functions(_here, _Functions(_here))
_on = {cpu: _here}


def on(dev):
    """This namespace for Tensors on device ``dev``: its factories create there, as a
    CuPy rule's do on the current device (the engine picks it by the gradients' device)."""
    ns = _on.get(dev)
    if ns is None:
        ns = types.ModuleType(__name__ + ".on_" + str(dev).replace(":", "_"))
        ns.__dict__.update({k: v for k, v in vars(_here).items() if not k.startswith("__")})
        ns.__dict__.update(_factories(dev))
        register_functions(ns, _Functions(ns))
        _on[dev] = ns
    return ns


def of(t):
    """The namespace for Tensor ``t``'s device (the CPU's for None)."""
    if t is None:
        return _here
    d = t._data
    return _here if type(d) is numpy.ndarray else on(device_of(d))


register_facade(of)
