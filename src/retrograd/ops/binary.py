"""Binary arithmetic with broadcasting and PyTorch's type promotion.

Each op is one ``defop`` entry; the public function, its in-place ``_``
form, the Tensor method and the operators all call that entry.
"""

import builtins
import cmath
import math
import numbers
import operator

from .. import _dtype
from .._dtype import BOOL, COMPLEX, FLOAT, is_float, is_inexact, is_low, kind_of, result_type
from .._tensor import Tensor
from ..backend import cpu_kernels
from ..backend.functions import functions
from ._registry import (_broadcast_conflict, _broadcast_error, _pretty, apply, apply_inplace,
                        defop, inplace_shape, kernel, register)
from .comparison import _invalid
from .shape import broadcast_shapes
from .pointwise import _is_half, _negate, _pow_number, _pow_op

__all__ = ["add", "sub", "rsub", "mul", "div", "true_divide", "floor_divide", "remainder",
           "fmod", "pow", "maximum", "minimum", "fmax", "fmin", "where", "clamp",
           "clamp_min", "clamp_max", "clip", "lerp", "addcmul", "addcdiv", "atan2", "ldexp",
           "nextafter", "hypot", "xlogy"]

_BOTH = ("self", "other")


def _check(x, name, fn):
    if type(x) not in _FAST_OPERANDS and not isinstance(x, (Tensor, numbers.Number)):
        raise TypeError(f"{fn}(): argument '{name}' must be Tensor or Number, not "
                        f"{type(x).__name__}")
    return x


def _check_tensor(x, name, fn, position=2):
    """Overloads that take no Python number (maximum, atan2, ...) refuse one as PyTorch."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): argument '{name}' (position {position}) must be Tensor, "
                        f"not {type(x).__name__}")
    return x


def _check_alpha(input, other, alpha):
    """``alpha``, checked in PyTorch's order (a bool alpha for a bool result only, no
    float for integers, no complex for reals) and cast as PyTorch casts it to the result
    dtype: for a bool result any nonzero alpha is True, so ``True + True * 2`` stays bool.
    Called for any alpha but the default int 1. A NumPy scalar is read as PyTorch reads
    it: an integer as an int, a Python complex's subclass (complex128) as a complex,
    anything else (a bool, complex64: its real part) as a float."""
    if type(alpha) is float and isinstance(input, Tensor) and input._data.dtype.kind in "fc":
        return alpha  # (a floating or complex result: the common case, without result_type)
    if type(alpha) not in (bool, int, float, complex):
        alpha = (int(alpha) if isinstance(alpha, numbers.Integral) else
                 complex(alpha) if isinstance(alpha, complex) else float(alpha))
    rt = result_type(input, other)
    if type(alpha) is bool and rt.category != BOOL:
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    if type(alpha) in (float, complex) and rt.category < FLOAT:
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating "
                           "point number.")
    if type(alpha) is complex and rt.category != COMPLEX:
        raise RuntimeError("For non-complex input tensors, argument alpha must not be a "
                           "complex number.")
    return builtins.bool(alpha) if rt.category == BOOL else alpha


def _is_bool(x):
    """A bool tensor or a Python bool (PyTorch wraps the number as a bool tensor)."""
    return type(x) is bool or isinstance(x, Tensor) and x._data.dtype.kind == "b"


def _check_sub(input, other):
    _refuse_bool_sub(_is_bool(input), _is_bool(other))


def _refuse_bool_sub(a, b):
    if a and b:
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not "
                           "supported. Use the `^` or `logical_xor()` operator instead.")
    if a or b:
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not "
                           "supported. If you are trying to invert a mask, use the `~` or "
                           "`logical_not()` operator instead.")


_NYI = "torch::autograd::NotImplemented"  # PyTorch's node for overloads without a derivative


def _no_derivative(name):
    def rule(grad):
        raise RuntimeError(f"derivative for aten::{name} is not implemented")
    return rule


def _kernel(name, *operands, refuse="b"):
    """PyTorch's CPU kernel ``name`` has no loop for the kinds in ``refuse`` (bool, or with
    "biu" every integer): the promoted operands' dtype decides, as PyTorch's dispatch."""
    d = next(a.dtype for a in operands if hasattr(a, "dtype"))
    if kind_of(d) in refuse:
        raise (_broadcast_conflict([getattr(a, "shape", ()) for a in operands]) or
               NotImplementedError(f'"{name}" not implemented for \'{_pretty(d)}\''))
    return operands


def _int_divisor(xp, self, other):
    """``other``, checked: integer division by zero raises in PyTorch (NumPy gives 0), in
    its kernel's loop, so not where the broadcast result is empty."""
    d = getattr(other, "dtype", None)
    if d is not None:
        zero = d.kind in "iu" and not other.all()
    else:
        zero = type(other) is int and other == 0 and self.dtype.kind in "iu"
    if zero and math.prod(xp.broadcast_shapes(*(getattr(a, "shape", ()) for a in (self, other)))):
        raise RuntimeError("ZeroDivisionError")
    return other


def _fusable(addend, scaled):
    """The dtype in which ``addend + alpha * scaled`` is an fma in PyTorch (float32 or
    float64: arrays of it, or an array and a number), else None."""
    dts = [x.dtype for x in (addend, scaled) if hasattr(x, "dtype")]
    if not dts or dts[0] not in _dtype.FUSED or dts[-1] != dts[0]:
        return None  # (a dtype equals None: NumPy's float64, so not `in` with None)
    if any(type(x) is bool for x in (addend, scaled)):
        return None
    return dts[0]


def _plus_scaled(xp, self, other, alpha, out=None):
    """``self + alpha * other``: PyTorch's add with an alpha, an fma for float32 and float64
    (rounded once; a product and a sum differ in the last bit on 9-11% of random values),
    a number operand and ``alpha`` first rounded to the dtype; plain for other dtypes."""
    if alpha == 1:
        return xp.add(self, other, out=out)
    dt = _fusable(self, other)
    if dt is not None:
        return functions(xp).fused_mul_add(_in(dt, other), dt.type(alpha), _in(dt, self), out)
    return xp.add(self, _scaled(xp, other, alpha), out=out)


def _minus_scaled(xp, self, other, alpha, out=None):
    """``self - alpha * other``, as :func:`_plus_scaled` (sub is add of ``-alpha``)."""
    if alpha == 1:
        return xp.subtract(self, other, out=out)
    dt = _fusable(self, other)
    if dt is not None:
        return functions(xp).fused_mul_add(_in(dt, other), dt.type(-alpha), _in(dt, self), out)
    return xp.subtract(self, _scaled(xp, other, alpha), out=out)


def _in(dt, x):
    """``x``, a number rounded to ``dt`` (an array is of it already)."""
    return x if hasattr(x, "dtype") else dt.type(x)


def _scaled(xp, x, alpha):
    """``x * alpha`` as written (a number times a number stays a number), an integer
    ``alpha`` taken in integer ``x``'s dtype modulo its range (NumPy refuses a number out of
    it; PyTorch's integers wrap around: uint8 times -3)."""
    dt = getattr(x, "dtype", None)
    if dt is None:
        return x * alpha
    if dt.kind in "iu" and type(alpha) is int:
        alpha = xp.asarray(alpha).astype(dt)
    return x * alpha


def _broadcast(name, unit=False):
    """``self <name> other`` compiled where one is a row or a column of the other
    (``cpu_kernels.broadcast``), as a rule's (fast, when) pair: a forward, or a gradient
    times or over a factor; ``unit``: the op takes an ``alpha``, which must then be 1."""
    if unit:
        return (lambda xp, self, other, alpha: cpu_kernels.broadcast(name, self, other),
                lambda self, other, alpha: alpha == 1 and cpu_kernels.broadcasts(self, other))
    return lambda xp, self, other: cpu_kernels.broadcast(name, self, other), \
        cpu_kernels.broadcasts


def _by_number(name, unit=False):
    """An in-place ``self <name>= number`` of a large float32 tensor (Adam's ``add_(eps)``)
    by ``cpu_kernels.broadcast`` into ``self``, as an ``into`` rule's (fast, when) pair;
    ``unit``: the op takes an ``alpha``, which must then be 1."""
    def when(out, self, other, *alpha):
        return (out is self and type(other) in (float, int) and (not alpha or alpha[0] == 1)
                and cpu_kernels.broadcasts(out, other))
    return lambda xp, out, self, other, *alpha: cpu_kernels.broadcast(name, out, other, out), when


# self.add_(other, alpha=a) (an optimizer's update) by the compiled kernel: one pass, where
# NumPy makes a temporary of other * a and reads it back (2.3x the time), in parts on
# OpenBLAS's threads when large (as self.mul_(number)). With alpha 1 NumPy's one pass is
# as fast on one thread, and its call cheaper: the kernel only where it splits.
_add = defop("add", kernel(lambda xp, self, other, alpha: _plus_scaled(xp, self, other, alpha),
                           *_broadcast("add", unit=True)),
             vjp={"self": lambda grad: grad,
                  "other": lambda grad, alpha: grad * alpha if alpha != 1 else grad},
             promote=_BOTH,
             into=kernel(kernel(lambda xp, out, self, other, alpha:
                                _plus_scaled(xp, self, other, alpha, out),
                                lambda xp, out, self, other, alpha:
                                cpu_kernels.add_scaled(out, other, alpha),
                                lambda out, self, other, alpha: out is self
                                and getattr(other, "shape", None) == out.shape
                                and cpu_kernels.takes(out, other)
                                and (alpha != 1 or cpu_kernels.splits("add_scaled", out))),
                         *_by_number("add", unit=True)),
             jvp="elementwise")
_sub = defop("sub", kernel(lambda xp, self, other, alpha: _minus_scaled(xp, self, other, alpha),
                           *_broadcast("sub", unit=True)),
             vjp={"self": lambda grad: grad,
                  "other": lambda grad, alpha: -grad * alpha if alpha != 1 else -grad},
             promote=_BOTH,
             into=kernel(lambda xp, out, self, other, alpha:
                         _minus_scaled(xp, self, other, alpha, out), *_by_number("sub", unit=True)),
             jvp="elementwise")
_rsub = defop("rsub", lambda xp, self, other, alpha: _minus_scaled(xp, other, self, alpha),
              vjp={"self": lambda grad, alpha: -grad * alpha, "other": lambda grad: grad},
              promote=_BOTH, jvp="elementwise")
_rsub_scalar = defop("rsub", lambda xp, self, other, alpha:
                     _minus_scaled(xp, other, self, alpha),
                     vjp={"self": lambda grad, alpha: -grad * alpha}, inputs=_BOTH,
                     promote=_BOTH, node="RsubBackward1", jvp="elementwise")
def _times(xp, grad, factor):
    """PyTorch's mul_tensor_backward, ``grad * factor`` as its mul computes it: a float16
    product is rounded per element before the engine sums it for a broadcast input (65024 *
    1.5 is inf there, not a finite float32 sum); a factor of another dtype is taken as
    :func:`_in_result_dtype` says."""
    d = getattr(factor, "dtype", None)
    if d is None or d == grad.dtype:
        return grad * factor
    return grad * _in_result_dtype(xp, grad, factor)[0]


def _rounded_times(xp, grad, factor):
    """:func:`_times` in the gradient's dtype, as PyTorch's mul returns it, for a formula
    that goes on from the product (beside float16, a wider 0-d -1.7e38 makes -inf)."""
    return xp.astype(_times(xp, grad, factor), grad.dtype, copy=False)


_mul = defop("mul", kernel(lambda xp, self, other: xp.multiply(self, other),
                           *_broadcast("mul")),
             vjp={"self": kernel(lambda xp, grad, other: _times(xp, grad, other),
                                 *_broadcast("mul")),
                  "other": lambda xp, grad, self: _times(xp, grad, self)},
             promote=_BOTH,
             into=kernel(lambda xp, out, self, other: xp.multiply(self, other, out=out),
                         lambda xp, out, self, other: cpu_kernels.scale(out, other),
                         lambda out, self, other: out is self and type(other) in (float, int)
                         and cpu_kernels.takes(out) and cpu_kernels.splits("scale", out)),
             jvp="elementwise", upcast="forward", scalar_other=True)
def _div_other_rule(xp, grad, self, other):
    """PyTorch's ``-grad * ((self / other) / other)``, each step rounded to the result's
    dtype (so float16 overflows where PyTorch's does)."""
    self, other = _in_result_dtype(xp, grad, self, other)
    q = xp.astype(self / other, grad.dtype, copy=False)
    return -grad * xp.astype(q / other, grad.dtype, copy=False)


_div = defop("div", kernel(lambda xp, self, other: xp.divide(self, other), *_broadcast("div")),
             vjp={"self": kernel(lambda xp, grad, other:
                                 grad / _in_result_dtype(xp, grad, other)[0], *_broadcast("div")),
                  "other": _div_other_rule},
             promote=_BOTH, to_float=True,
             into=kernel(lambda xp, out, self, other: xp.divide(self, other, out=out),
                         *_by_number("div")),
             jvp="elementwise", upcast="forward", scalar_other=True)
def _div_rounding_fwd(xp, self, other, rounding_mode):
    self, other = _kernel(f"div_{rounding_mode}_cpu", self, other)
    if rounding_mode == "floor":
        return xp.floor_divide(self, _int_divisor(xp, self, other))
    return (xp.trunc(self / other) if is_inexact(self.dtype)
            else _int_trunc_div(xp, self, other))


_div_rounding = defop(
    "div_rounding",
    _div_rounding_fwd,
    vjp={"self": lambda xp, grad: xp.zeros_like(grad),
         "other": lambda xp, grad: xp.zeros_like(grad)},
    promote=_BOTH, node="DivBackward2", jvp="elementwise", scalar_other=True)
_floor_divide = defop("floor_divide",
                      lambda xp, self, other: _div_rounding_fwd(xp, self, other, "floor"),
                      vjp={"self": _no_derivative("floor_divide"),
                           "other": _no_derivative("floor_divide")},
                      promote=_BOTH, node=_NYI, jvp="elementwise", scalar_other=True)


def _in_result_dtype(xp, grad, *arrays):
    """``arrays`` as PyTorch's backward formula sees them, computing in the result's dtype
    (``grad``'s): a wider operand is rounded to it, except a 0-d one, which its kernels
    take as a scalar of the compute type (float32 for float16)."""
    compute = "float32" if is_low(grad.dtype) else grad.dtype
    return [a if not hasattr(a, "dtype") else
            xp.astype(a, compute if a.ndim == 0 else grad.dtype, copy=False) for a in arrays]


def _remainder_fwd(xp, self, other):
    """PyTorch's kernel is fmod plus ``other`` where the signs differ, so a zero result has
    self's sign (NumPy's has other's: remainder(-4., 2.) is -0.0 in PyTorch)."""
    self, other = _kernel("remainder_cpu", self, other)
    out = xp.remainder(self, _int_divisor(xp, self, other))
    if not is_float(out.dtype):
        return out
    return xp.where(out == 0, xp.copysign(out, self), out)


def _fmod_fwd(xp, self, other):
    self, other = _kernel("fmod_cpu", self, other)
    return xp.fmod(self, _int_divisor(xp, self, other))


def _remainder_other_rule(xp, grad, self, other):
    """PyTorch's ``-grad * self.div(other, rounding_mode="floor")``, in the result's dtype."""
    self, other = _in_result_dtype(xp, grad, self, other)
    return -grad * xp.astype(xp.floor_divide(self, other), grad.dtype, copy=False)


_remainder = defop("remainder", _remainder_fwd,
                   vjp={"self": lambda grad: grad, "other": _remainder_other_rule},
                   promote=_BOTH, node="RemainderBackward1", jvp="elementwise",
                   upcast="forward")
_remainder_scalar = defop("remainder", _remainder_fwd, vjp={"self": lambda grad: grad},
                          inputs=_BOTH, promote=_BOTH, jvp="elementwise")
_remainder_scalar_self = defop("remainder", _remainder_fwd,
                               vjp={"other": _no_derivative("remainder")}, inputs=_BOTH,
                               promote=_BOTH, node=_NYI, jvp="elementwise")
def _fmod_other_rule(xp, grad, self, other):
    """PyTorch's ``-grad * self.div(other, rounding_mode="trunc")``, in the result's dtype."""
    self, other = _in_result_dtype(xp, grad, self, other)
    return -grad * xp.astype(xp.trunc(self / other), grad.dtype, copy=False)


_fmod = defop("fmod", _fmod_fwd,
              vjp={"self": lambda grad: grad, "other": _fmod_other_rule},
              promote=_BOTH, node="FmodBackward1", jvp="elementwise", upcast="forward")
_fmod_scalar = defop("fmod", _fmod_fwd,
                     vjp={"self": lambda grad: grad}, inputs=_BOTH, promote=_BOTH,
                     jvp="elementwise")
def _pow_number_rule(xp, grad, self, exponent):
    """PyTorch's pow_backward, ``grad * (exponent * self.pow(exponent - 1))`` (zeros for
    exponent 0), each step rounded to self's dtype, as its composite of half ops: a float16
    power of a small base overflows to inf where float32 would not."""
    if exponent == 0:
        return xp.zeros_like(grad)
    power = _pow_op(xp, self, exponent - 1)
    if not _is_half(power):
        return grad * (exponent * power)
    # the number multiplies in float32 (NumPy's float16 loop would round it to half first)
    return grad * xp.astype(xp.astype(power, "float32") * exponent, power.dtype)


_pow_scalar = defop("pow", _pow_number, vjp={"self": _pow_number_rule},
                    promote=("self", "exponent"), inputs=("self", "exponent"), jvp="elementwise",
                    upcast=False)
def _pow_tensor_fwd(xp, self, exponent):
    """``self ** exponent``; an integer to a negative power is 1 / self truncated (1, -1
    or 0, and 0 for a base of 0), as PyTorch's kernel, where NumPy refuses it."""
    self = _kernel("pow", self, exponent)[0]
    if self.dtype.kind not in "iu" or not (exponent < 0).any():
        return self ** exponent
    negative = exponent < 0
    power = self ** xp.where(negative, 0, exponent)
    odd = exponent % 2 != 0
    return xp.where(negative, xp.where(self == 1, 1, xp.where(self == -1, 1 - 2 * odd, 0)),
                    power).astype(power.dtype, copy=False)


def _pow_self_rule(xp, grad, self, exponent):
    """PyTorch's pow_backward_self, ``exponent * self ** (exponent - 1)``: ``exponent - 1``
    in the exponent's own dtype (a bool one fails as PyTorch's), then the power in the
    result's, so a float16 operand rounds it (near -1 that is -1, not NaN at a negative base)."""
    _refuse_bool_sub(exponent.dtype == bool, False)
    d = grad.dtype
    power = xp.astype(self, d, copy=False) ** xp.astype(exponent - 1, d, copy=False)
    return xp.where(exponent == 0, 0, grad * (xp.astype(exponent, d, copy=False) * power))


_pow_tensor = defop(
    "pow_tensor", _pow_tensor_fwd,
    vjp={"self": _pow_self_rule,
         "exponent": lambda xp, grad, self, exponent, result:
         _pow_exponent_rule(xp, grad, self, exponent, result)},
    promote=("self", "exponent"), node="PowBackward1", jvp="elementwise", upcast="forward")
def _log_number(x):
    """The log of a number base, as a number: a scalar of the rule wherever it runs (a
    tensor of it would be a host tensor saved beside device gradients)."""
    if isinstance(x, complex):
        return cmath.log(x)
    return math.log(x) if x > 0 else math.nan


_pow_scalar_base = defop(
    "pow_scalar_base", lambda xp, self, exponent: self ** exponent,
    vjp={"exponent": lambda xp, grad, self, exponent, result:
         grad * result * _log_number(self) if self != 0
         else grad * xp.where(exponent >= 0, 0, result * -math.inf)},
    promote=("self", "exponent"), inputs=("self", "exponent"), node="PowBackward2",
                         jvp="elementwise")


def _pow_exponent_rule(xp, grad, self, exponent, result):
    """PyTorch's pow_backward_exponent: result * log(self), but 0 where the base is 0 and
    the exponent >= 0 (so 0 ** -1 still gives -inf, and a negative base NaN). The
    unselected branch stays in the graph, so second derivatives carry its NaNs as PyTorch's.
    The log takes self in the result's dtype, as PyTorch's (a float32 -1.4e-45 beside a
    float16 exponent is -0.0 there: log -inf, not NaN); the mask, self as given."""
    base = xp.astype(self, result.dtype, copy=False) if self.dtype != result.dtype else self
    return grad * xp.where((self == 0) & (exponent >= 0), 0, result * xp.log(base))


def _check_int_pow(input, exponent):
    if type(exponent) is int and exponent < 0 and input._data.dtype.kind in "biu":
        raise RuntimeError("Integers to negative integer powers are not allowed.")


def _int_trunc_div(xp, a, b):
    q = xp.floor_divide(a, _int_divisor(xp, a, b))
    return q + ((q < 0) & (q * b != a))


def _as_result(xp, grad, *operands):
    """The operands in the result's dtype (the gradient's), where PyTorch's backward
    compares them: a 0-d float64 beside a float32 tensor ties with it once rounded."""
    return [a if a.dtype == grad.dtype else xp.astype(a, grad.dtype) for a in operands]


def _maxmin_rule(pick_self):
    """Gradient of maximum/minimum: none to the loser, split evenly on ties, and (as
    PyTorch) all of it to both where a NaN makes them incomparable."""
    def rule(xp, grad, self, other):
        self, other = _as_result(xp, grad, self, other)
        loses = (self < other) if pick_self else (self > other)
        return xp.where(self == other, grad / 2, xp.where(loses, 0, grad))
    return rule


_maximum = defop("maximum", lambda xp, self, other: xp.maximum(self, other),
                 vjp={"self": _maxmin_rule(True),
                      "other": lambda xp, grad, self, other:
                      _maxmin_rule(True)(xp, grad, other, self)},
                 promote=_BOTH, jvp="elementwise")
_minimum = defop("minimum", lambda xp, self, other: xp.minimum(self, other),
                 vjp={"self": _maxmin_rule(False),
                      "other": lambda xp, grad, self, other:
                      _maxmin_rule(False)(xp, grad, other, self)},
                 promote=_BOTH, jvp="elementwise")
def _fmaxmin_rule(picks, to_self):
    """Gradient of fmax/fmin: all to self where it wins or ties (``picks``) or other is
    NaN, else all to other."""
    def rule(xp, grad, self, other):
        self, other = _as_result(xp, grad, self, other)
        to = picks(self, other) | (other != other)
        return xp.where(to, grad, 0) if to_self else xp.where(to, 0, grad)
    return rule


_fmax = defop("fmax", lambda xp, self, other: xp.fmax(self, other),
              vjp={"self": _fmaxmin_rule(operator.ge, True),
                   "other": _fmaxmin_rule(operator.ge, False)},
              promote=_BOTH, jvp="elementwise")
_fmin = defop("fmin", lambda xp, self, other: xp.fmin(self, other),
              vjp={"self": _fmaxmin_rule(operator.le, True),
                   "other": _fmaxmin_rule(operator.le, False)},
              promote=_BOTH, jvp="elementwise")
_where = defop("where", lambda xp, condition, self, other: xp.where(condition, self, other),
               inputs=("condition", "self", "other"),
               vjp={"self": lambda xp, grad, condition: xp.where(condition, grad, 0),
                    "other": lambda xp, grad, condition: xp.where(condition, 0, grad)},
               promote=_BOTH, jvp="elementwise", upcast=False)  # a selection: exact


def _in_range(self, min, max):
    if min is None:
        return self <= max
    if max is None:
        return self >= min
    return (self >= min) & (self <= max)


def _clamp_fwd(xp, self, min, max):
    if min is not None and max is not None:  # one bound is maximum's or minimum's kernel
        _kernel("clamp_cpu", self, refuse="bc")
    else:
        _kernel("maximum_cpu" if max is None else "minimum_cpu", self, refuse="c")
    return xp.clip(self, min, max)


def _clamp_min_fwd(xp, self, min):
    _kernel("maximum_cpu", self, refuse="c")
    return xp.maximum(self, min)


def _clamp_max_fwd(xp, self, max):
    _kernel("minimum_cpu", self, refuse="c")
    return xp.minimum(self, max)


_clamp = defop("clamp", _clamp_fwd,
               inputs=("self", "min", "max"),
               vjp={"self": lambda xp, grad, self, min, max:
                    xp.where(_in_range(self, min, max), grad, 0),
                    "min": lambda xp, grad, self, min, max:
                    xp.where(self < min, grad, 0) if max is None
                    else xp.where((self < min) & (min < max), grad, 0),
                    "max": lambda xp, grad, self, min, max:
                    xp.where(self > max, grad, 0) if min is None
                    else xp.where((self > max) | (min > max), grad, 0)},
               promote=("self", "min", "max"), jvp="elementwise")
def _clamp_scalar_fwd(xp, self, min, max):
    _kernel("clamp_max_scalar_cpu" if min is None else "clamp_min_scalar_cpu" if max is None
            else "clamp_scalar_cpu", self)  # bool bounds leave a bool dtype, which they refuse
    return xp.clip(self, min, max)


def _clamp_min_scalar_fwd(xp, self, min):
    _kernel("clamp_min_scalar_cpu", self)
    return xp.maximum(self, min)


def _clamp_max_scalar_fwd(xp, self, max):
    _kernel("clamp_max_scalar_cpu", self)
    return xp.minimum(self, max)


_clamp_scalar = defop("clamp_scalar", _clamp_scalar_fwd,
                      vjp={"self": lambda xp, grad, self, min, max:
                           xp.where(_in_range(self, min, max), grad, 0)},
                      promote=("self", "min", "max"), inputs=("self", "min", "max"),
                      node="ClampBackward1", jvp="elementwise")
_clamp_min = defop("clamp_min", _clamp_min_fwd,
                   vjp={"self": lambda xp, grad, self, min: xp.where(self >= min, grad, 0),
                        "min": lambda xp, grad, self, min: xp.where(self < min, grad, 0)},
                   promote=("self", "min"), node="ClampMinBackward1", jvp="elementwise")
_clamp_min_scalar = defop("clamp_min", _clamp_min_scalar_fwd,
                          vjp={"self": lambda xp, grad, self, min:
                               xp.where(self >= min, grad, 0)},
                          inputs=("self", "min"), promote=("self", "min"), jvp="elementwise")
_clamp_max = defop("clamp_max", _clamp_max_fwd,
                   vjp={"self": lambda xp, grad, self, max: xp.where(self <= max, grad, 0),
                        "max": lambda xp, grad, self, max: xp.where(self > max, grad, 0)},
                   promote=("self", "max"), node="ClampMaxBackward1", jvp="elementwise")
_clamp_max_scalar = defop("clamp_max", _clamp_max_scalar_fwd,
                          vjp={"self": lambda xp, grad, self, max:
                               xp.where(self <= max, grad, 0)},
                          inputs=("self", "max"), promote=("self", "max"), jvp="elementwise")


def _lerp_kernel(self, weight):
    _kernel("lerp_kernel_tensor" if hasattr(weight, "dtype") else "lerp_kernel_scalar", self,
            refuse="biu")


def _lerp_fwd(xp, self, end, weight):
    return _interpolated(xp, self, end, weight)


def _interpolated(xp, self, end, weight, out=None):
    """``lerp``, into ``out`` if given: PyTorch's two-sided formula, from ``end`` when
    |weight| >= 0.5, which is exact at weight 1 and gives NaN, not inf, for an infinite
    ``end`` there. float32 and float64
    take each side as PyTorch's vectorized kernel does, an fma: ``fma(w, end - self,
    self)``, and ``fma(w - 1, end - self, end)`` (the weight rounded to the dtype first;
    ``w - 1`` is +0 at 1, which decides the sign of a zero result)."""
    _lerp_kernel(self, weight)
    d = xp.subtract(end, self)  # (xp's ufuncs: a plain device array may meet a batch)
    fused = d.dtype in _dtype.FUSED and getattr(weight, "dtype", d.dtype) == d.dtype
    if not hasattr(weight, "dtype"):
        if fused:
            w = d.dtype.type(weight)
            return (functions(xp).fused_mul_add(d, w, self, out) if builtins.abs(w) < 0.5
                    else functions(xp).fused_mul_add(d, w - 1, end, out))
        r = (xp.add(self, weight * d) if builtins.abs(weight) < 0.5
             else xp.subtract(end, d * (1 - weight)))
    elif fused:
        r = xp.where(xp.abs(weight) < 0.5, functions(xp).fused_mul_add(d, weight, self),
                     functions(xp).fused_mul_add(d, weight - 1, end))
    else:
        r = xp.where(xp.abs(weight) < 0.5, xp.add(self, xp.multiply(weight, d)),
                     xp.subtract(end, xp.multiply(d, 1 - weight)))
    if out is None:
        return r
    xp.copyto(out, r, casting="same_kind")
    return out


def _lerp_into(xp, out, self, end, weight):
    _interpolated(xp, self, end, weight, out)


def _addcmul_fwd(xp, self, tensor1, tensor2, value):
    """PyTorch's CPU kernel: ``value * tensor1``, then a fused multiply-add with ``tensor2``
    and ``self`` (float32's and float64's rounded once; other dtypes as written)."""
    _kernel("addcmul_cpu_out", self)
    scaled = value * tensor1
    if scaled.dtype in _dtype.FUSED:
        return functions(xp).fused_mul_add(scaled, tensor2, self)
    return self + scaled * tensor2


def _addcdiv_fwd(xp, self, tensor1, tensor2, value):
    """PyTorch's CPU kernel's order: ``(value * tensor1) / tensor2``, then the sum."""
    return self + value * tensor1 / tensor2


def _addc_into(forward, compiled):
    """The in-place form: ``forward``'s result written into ``out`` (every path rounds as
    PyTorch's); a write of float32 operands of its shape (Adam's updates) by ``compiled``,
    the compiled pass, with no temporary."""
    def into(xp, out, self, tensor1, tensor2, value):
        xp.copyto(out, forward(xp, self, tensor1, tensor2, value), casting="same_kind")

    def takes(out, self, tensor1, tensor2, value):
        return (out is self and type(value) in (float, int)
                and getattr(tensor1, "shape", None) == out.shape
                and getattr(tensor2, "shape", None) == out.shape
                and cpu_kernels.takes(out, tensor1, tensor2))
    return kernel(into, lambda xp, out, self, tensor1, tensor2, value:
                  compiled(out, tensor1, tensor2, value), takes)


_lerp = defop("lerp", _lerp_fwd, inputs=("self", "end", "weight"),
              vjp={"self": lambda grad, weight: grad * (1 - weight),
                   "end": lambda grad, weight: grad * weight,
                   "weight": lambda grad, self, end: grad * (end - self)},
              promote=("self", "end", "weight"), node="LerpBackward1", jvp="elementwise")
_lerp_scalar = defop("lerp", _lerp_fwd, inputs=("self", "end", "weight"),
                     vjp={"self": lambda grad, weight: grad * (1 - weight),
                          "end": lambda grad, weight: grad * weight},
                     promote=("self", "end"), into=_lerp_into, jvp="elementwise")
_addcmul = defop("addcmul", _addcmul_fwd, inputs=("self", "tensor1", "tensor2"),
                 vjp={"self": lambda grad: grad,
                      "tensor1": lambda grad, tensor2, value: grad * tensor2 * value,
                      "tensor2": lambda grad, tensor1, value: grad * tensor1 * value},
                 promote=("self", "tensor1", "tensor2"),
                 into=_addc_into(_addcmul_fwd, cpu_kernels.addcmul), jvp="elementwise")
_addcdiv = defop("addcdiv", _addcdiv_fwd, inputs=("self", "tensor1", "tensor2"),
                 vjp={"self": lambda grad: grad,
                      "tensor1": lambda grad, tensor2, value: grad * value / tensor2,
                      "tensor2": lambda grad, tensor1, tensor2, value:
                      -grad * value * tensor1 / (tensor2 * tensor2)},
                 promote=("self", "tensor1", "tensor2"), to_float=True,
                 into=_addc_into(_addcdiv_fwd, cpu_kernels.addcdiv), jvp="elementwise")
def _atan2_recip(xp, grad, self, other):
    """PyTorch's atan2_backward: 1 / (self² + other²) in the result's dtype (so an integer
    operand does not widen it) and in float16 where the operands are, zeroed where the sum
    is 0, so the gradient at (0, 0) is 0, not NaN (its own derivative there is NaN, as
    PyTorch's)."""
    denom = xp.astype(self * self + other * other, grad.dtype, copy=False)
    return xp.where(denom == 0, 0, 1 / denom)


_atan2 = defop("atan2", lambda xp, self, other: xp.arctan2(self, other),
               vjp={"self": lambda xp, grad, self, other:
                    _rounded_times(xp, grad, other) * _atan2_recip(xp, grad, self, other),
                    "other": lambda xp, grad, self, other:
                    _rounded_times(xp, grad, _negate(xp, self))
                    * _atan2_recip(xp, grad, self, other)},
               promote=_BOTH, to_float=True, jvp="elementwise", upcast="forward")
_hypot = defop("hypot", lambda xp, self, other: xp.hypot(self, other),
               vjp={"self": lambda xp, grad, self, result:
                    _rounded_times(xp, grad, self) / result,
                    "other": lambda xp, grad, other, result:
                    _rounded_times(xp, grad, other) / result},
               promote=_BOTH, to_float=True, jvp="elementwise", upcast="forward")
_nextafter = defop("nextafter", lambda xp, self, other: xp.nextafter(self, other),
                   vjp={"self": lambda xp, grad, self, other:
                        xp.where(self != other, grad, 0),
                        "other": lambda xp, grad: xp.zeros_like(grad)},
                   promote=_BOTH, jvp="elementwise", upcast=False)  # (a half's own neighbour)


def _check_nextafter(input, other, fn, position, inplace=False):
    """A floating result only; an in-place one first checks the shape it writes, as PyTorch."""
    rt = result_type(input, _check_tensor(other, "other", fn, position))
    if rt.category != FLOAT:
        error = _broadcast_error((input, other), NotImplementedError(
            f'"nextafter_cpu" not implemented for \'{_pretty(rt.np)}\''))
        shape = input.shape
        if inplace and type(error) is NotImplementedError and \
                broadcast_shapes(shape, other.shape) != shape:
            error = RuntimeError(f"output with shape {list(shape)} doesn't match the "
                                 f"broadcast shape {list(broadcast_shapes(shape, other.shape))}")
        raise error


def _ldexp_scale(xp, other, int_other):
    """``2 ** other`` as PyTorch's backward computes it for ``self``: in ``other``'s dtype,
    so an integer exponent takes integer powers (0 below 2**0, wrapping past its width)."""
    if int_other is None:
        return xp.exp2(other)
    k = other.astype(int_other)
    bits = 8 * k.itemsize
    one = xp.ones_like(k)
    scale = xp.where((k < 0) | (k >= bits), 0, xp.left_shift(one, xp.clip(k, 0, bits - 1)))
    return scale.astype(other.dtype)


_ldexp = defop("ldexp", lambda xp, self, other, int_other: self * xp.exp2(other),
               vjp={"self": lambda xp, grad, other, int_other:
                    grad * _ldexp_scale(xp, other, int_other),
                    "other": lambda grad, result: grad * result * math.log(2.0)},
               promote=_BOTH, to_float=True, jvp="elementwise", upcast="forward")


def _ldexp_attrs(other):
    dt = other._data.dtype
    return (dt if dt.kind in "iu" else None,)


def x_times(log):
    """The forward of ``self * log(other)`` (xlogy; xlog1py with ``log1p``): 0 where self
    is 0 (unless other is NaN); a Python number operand joins as an array of the tensor's
    dtype, so it cannot widen the result."""
    def forward(xp, self, other):
        if not hasattr(other, "dtype"):
            other = xp.asarray(other, dtype=self.dtype)
        elif not hasattr(self, "dtype"):
            self = xp.asarray(self, dtype=other.dtype)
        return xp.where(self == 0, xp.where(other != other, other, 0),
                        xp.multiply(self, getattr(xp, log)(other)))
    return forward


_xlogy_fwd = x_times("log")


def x_times_grad(log, pole):
    """The gradient of ``self`` of :func:`x_times`'s op: PyTorch's ``xlogy(grad, other)``
    (xlog1py's with ``log1p``; 0 where grad is, but at a NaN ``other``), zero where self
    == 0 and other <= ``pole`` (for a number ``other``, where it is not > ``pole``: NaN
    too, as their Scalar overloads' formulas). ``other`` is taken in the gradient's dtype
    first, as that call takes it: a wider 0-d one rounds there (a float64 2.2e-308 beside
    float32 ``self`` is 0, and the gradient infinite), a bool or integer one becomes a
    float (NumPy's log1p of bools is float16)."""
    def rule(xp, grad, self, other):
        tensor = hasattr(other, "dtype")
        logged = getattr(xp, log)(xp.astype(other, grad.dtype, copy=False) if tensor else other)
        masked = other <= pole if tensor else not other > pole
        return xp.where((self == 0) & masked | (grad == 0) & (other == other), 0,
                        grad * logged)
    return rule


_xlogy_self_rule = x_times_grad("log", 0)


def _xlogy_other_rule(xp, grad, self, other):
    """``grad * self / other``, each step a half op for float16 as in PyTorch's composite
    (so ``grad * self`` overflows to inf where PyTorch's does, a wider 0-d ``self`` too);
    the division takes a wider 0-d ``other`` as its kernel does (see
    :func:`_in_result_dtype`)."""
    num = _rounded_times(xp, grad, self)
    if not hasattr(other, "dtype") or other.dtype == grad.dtype:
        return num / other
    return xp.astype(num / _in_result_dtype(xp, grad, other)[0], grad.dtype, copy=False)


_xlogy = defop("xlogy", _xlogy_fwd, vjp={"self": _xlogy_self_rule, "other": _xlogy_other_rule},
               promote=_BOTH, to_float=True, jvp="elementwise", upcast="forward")
_xlogy_scalar_self = defop("xlogy", _xlogy_fwd, vjp={"other": _xlogy_other_rule},
                           inputs=_BOTH, promote=_BOTH, to_float=True, node="XlogyBackward1",
                           jvp="elementwise", upcast="forward")
_xlogy_scalar_other = defop("xlogy", _xlogy_fwd, vjp={"self": _xlogy_self_rule},
                            inputs=_BOTH, promote=_BOTH, to_float=True, node="XlogyBackward2",
                            jvp="elementwise", upcast="forward")


# ---- public functions ---------------------------------------------------------------------

@register
def add(input, other, *, alpha=1, out=None):
    """``input + alpha * other``."""
    if alpha != 1 or type(alpha) is not int:
        alpha = _check_alpha(input, other, alpha)
    return apply(_add, (input, _check(other, "other", "add")), (alpha,))


@register
def sub(input, other, *, alpha=1, out=None):
    """``input - alpha * other``."""
    _check_sub(input, other)
    if alpha != 1 or type(alpha) is not int:
        alpha = _check_alpha(input, other, alpha)
    return apply(_sub, (input, _check(other, "other", "sub")), (alpha,))


subtract = register(sub, name="subtract")


@register
def rsub(input, other, *, alpha=1):
    """``other - alpha * input``."""
    _check_sub(input, other)
    if alpha != 1 or type(alpha) is not int:
        alpha = _check_alpha(input, other, alpha)
    return apply(_rsub if isinstance(other, Tensor) else _rsub_scalar, (input, other), (alpha,))


@register(aliases=("multiply",))
def mul(input, other, *, out=None):
    return apply(_mul, (input, _check(other, "other", "mul")))


@register(aliases=("divide",))
def div(input, other, *, rounding_mode=None, out=None):
    """True division (float result), or rounded with ``rounding_mode`` 'trunc'/'floor'."""
    if rounding_mode is None:
        return apply(_div, (input, _check(other, "other", "div")))
    if rounding_mode not in ("trunc", "floor"):
        raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or "
                           f"'floor' but found '{rounding_mode}'")
    return apply(_div_rounding, (input, other), (rounding_mode,))


@register
def true_divide(input, other):
    return div(input, other)


@register
def floor_divide(input, other, *, out=None):
    """``floor(input / other)``; like PyTorch's, it has no derivative."""
    return apply(_floor_divide, (input, other))


def _remainder_op(input, other):
    if not isinstance(other, Tensor):
        return _remainder_scalar
    return _remainder if isinstance(input, Tensor) else _remainder_scalar_self


@register
def remainder(input, other, *, out=None):
    return apply(_remainder_op(input, other), (input, other))


@register
def fmod(input, other, *, out=None):
    return apply(_fmod if isinstance(other, Tensor) else _fmod_scalar, (input, other))


@register
def pow(input, exponent, *, out=None):
    """``input ** exponent``; either may be a Python number."""
    _check_int_pow(input, exponent)
    if not isinstance(input, Tensor):
        if type(input) is bool and exponent._data.dtype == bool:  # PyTorch's bool kernel
            raise NotImplementedError("\"pow\" not implemented for 'Bool'")
        return apply(_pow_scalar_base, (input, exponent))
    if isinstance(exponent, Tensor):
        return apply(_pow_tensor, (input, exponent))
    return apply(_pow_scalar, (input, exponent))


def _float_power_dtype(input, exponent):
    """float64, or complex128 when either operand is complex (a Python complex too)."""
    complex_ = any(isinstance(v, complex) or isinstance(v, Tensor) and v._data.dtype.kind == "c"
                   for v in (input, exponent))
    return _dtype.complex128 if complex_ else _dtype.float64


@register
def float_power(input, exponent, *, out=None):
    dt = _float_power_dtype(input, exponent)
    return pow(input.to(dt) if isinstance(input, Tensor) else input,
               exponent.to(dt) if isinstance(exponent, Tensor) else exponent)


@register
def maximum(input, other, *, out=None):
    return apply(_maximum, (input, _check_tensor(other, "other", "maximum")))


@register
def minimum(input, other, *, out=None):
    return apply(_minimum, (input, _check_tensor(other, "other", "minimum")))


@register
def fmax(input, other, *, out=None):
    return apply(_fmax, (input, _check_tensor(other, "other", "fmax")))


@register
def fmin(input, other, *, out=None):
    return apply(_fmin, (input, _check_tensor(other, "other", "fmin")))


@register(method=False)
def where(condition, input=None, other=None, *, out=None):
    """Elements of ``input`` where ``condition`` holds, else of ``other``."""
    if input is None and other is None:
        return condition.nonzero(as_tuple=True)
    return apply(_where, (condition, input, other))


def _where_method(self, condition, other):
    """``self.where(condition, other)``: ``where(condition, self, other)``, as PyTorch's
    method (the tensor is the values kept, not the condition)."""
    return apply(_where, (condition, self, other))


_where_method.__name__ = _where_method.__qualname__ = "where"
register(_where_method, function=False)


_CLAMP_SIGNATURES = ("Tensor input, Tensor min = None, Tensor max = None, *, Tensor out = None",
                     "Tensor input, Number min = None, Number max = None, *, Tensor out = None")


def _clamp_args(input, min, max, inplace=False):
    """The bounds match one of PyTorch's overloads: both tensors or both numbers (None is
    either); an in-place call's message lists the method's overloads."""
    if None not in (min, max) and isinstance(min, Tensor) != isinstance(max, Tensor):
        if inplace:
            raise _invalid("clamp_", (min, max), tuple(s.removeprefix("Tensor input, ")
                                                       .removesuffix(", *, Tensor out = None")
                                                       for s in _CLAMP_SIGNATURES))
        raise _invalid("clamp", (input, min, max), _CLAMP_SIGNATURES)
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")


_NO_COMPLEX = "clamp is not supported for complex types"


def _real_clamp(input, *bounds, number_pair=False):
    """PyTorch's clamp has no complex form: a complex tensor is refused first, and so is a
    complex number bound, except that clamp's two-number overload converts a float
    tensor's bounds to double first (``number_pair``)."""
    if input._data.dtype.kind == "c":
        raise NotImplementedError(_NO_COMPLEX)
    if any(type(b) is complex for b in bounds):
        if number_pair and input._data.dtype.kind not in "biu":
            raise RuntimeError("value cannot be converted to type double without overflow")
        raise NotImplementedError(_NO_COMPLEX)


@register(aliases=("clip",))
def clamp(input, min=None, max=None, *, out=None):
    """Limit values to [min, max]; bounds may be numbers or tensors."""
    _clamp_args(input, min, max)
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        _real_clamp(input)
        return apply(_clamp, (input, min, max))
    _real_clamp(input, min, max, number_pair=True)
    return apply(_clamp_scalar, (input, min, max))


@register
def clamp_min(input, min):
    if isinstance(min, Tensor):
        return apply(_clamp_min, (input, min))
    _real_clamp(input, min)
    return apply(_clamp_min_scalar, (input, min))


@register
def clamp_max(input, max):
    if isinstance(max, Tensor):
        return apply(_clamp_max, (input, max))
    _real_clamp(input, max)
    return apply(_clamp_max_scalar, (input, max))


@register
def lerp(input, end, weight, *, out=None):
    return apply(_lerp if isinstance(weight, Tensor) else _lerp_scalar, (input, end, weight))


@register
def addcmul(input, tensor1, tensor2, *, value=1, out=None):
    return apply(_addcmul, (input, tensor1, tensor2), (value,))


def _check_addcdiv(tensor1, tensor2):
    if tensor1._data.dtype.kind in "biu" and tensor2._data.dtype.kind in "biu":
        raise RuntimeError(
            "Integer division with addcdiv is no longer supported, and in a future  release "
            "addcdiv will perform a true division of tensor1 and tensor2. The historic "
            "addcdiv behavior can be implemented as (input + value * torch.trunc(tensor1 / "
            "tensor2)).to(input.dtype) for integer inputs and as (input + value * tensor1 / "
            "tensor2) for float inputs. The future addcdiv behavior is just the latter "
            "implementation: (input + value * tensor1 / tensor2), for all dtypes.")


@register
def addcdiv(input, tensor1, tensor2, *, value=1, out=None):
    _check_addcdiv(tensor1, tensor2)
    return apply(_addcdiv, (input, tensor1, tensor2), (value,))


@register(aliases=("arctan2",))
def atan2(input, other, *, out=None):
    return apply(_atan2, (input, _check_tensor(other, "other", "atan2")))


@register
def ldexp(input, other, *, out=None):
    """``input * 2 ** other`` in the promoted floating dtype."""
    _check_tensor(other, "other", "ldexp")
    return apply(_ldexp, (input, other), _ldexp_attrs(other))


@register
def nextafter(input, other, *, out=None):
    """The next representable value after ``input`` toward ``other``; PyTorch passes the
    gradient to ``input`` unchanged but where the two are equal (and zeros to ``other``)."""
    _check_nextafter(input, other, "nextafter", 2)
    return apply(_nextafter, (input, other))


@register
def hypot(input, other, *, out=None):
    if result_type(input, _check_tensor(other, "other", "hypot")).category < FLOAT:
        raise _broadcast_error((input, other), NotImplementedError(
            f'"hypot_cpu" not implemented for \'{_pretty(result_type(input, other).np)}\''))
    return apply(_hypot, (input, _check_tensor(other, "other", "hypot")))


@register
def xlogy(input, other, *, out=None):
    if not isinstance(input, Tensor):
        return apply(_xlogy_scalar_self, (input, other))
    return apply(_xlogy if isinstance(other, Tensor) else _xlogy_scalar_other, (input, other))


clip = clamp


# ---- in-place forms -----------------------------------------------------------------------

@register(function=False)
def add_(self, other, *, alpha=1):
    if alpha != 1 or type(alpha) is not int:
        alpha = _check_alpha(self, other, alpha)
    return apply_inplace(_add, self, (other,), (alpha,))


@register(function=False, aliases=("subtract_",))
def sub_(self, other, *, alpha=1):
    _check_sub(self, other)
    if alpha != 1 or type(alpha) is not int:
        alpha = _check_alpha(self, other, alpha)
    return apply_inplace(_sub, self, (other,), (alpha,))


@register(function=False, aliases=("multiply_",))
def mul_(self, other):
    return apply_inplace(_mul, self, (other,))


@register(function=False, aliases=("divide_", "true_divide_"))
def div_(self, other, *, rounding_mode=None):
    if rounding_mode is None:
        return apply_inplace(_div, self, (other,))
    return apply_inplace(_div_rounding, self, (other,), (rounding_mode,))


@register(function=False)
def floor_divide_(self, other):
    return apply_inplace(_floor_divide, self, (other,))


@register(function=False)
def remainder_(self, other):
    return apply_inplace(_remainder_op(self, other), self, (other,))


@register(function=False)
def fmod_(self, other):
    return apply_inplace(_fmod if isinstance(other, Tensor) else _fmod_scalar, self, (other,))


@register(function=False)
def pow_(self, exponent):
    _check_int_pow(self, exponent)
    if isinstance(exponent, Tensor):
        return apply_inplace(_pow_tensor, self, (exponent,))
    return apply_inplace(_pow_scalar, self, (exponent,))


def _scalar_bounds(self, *bounds):
    """``bounds``, once PyTorch's in-place clamp with number bounds has checked that their
    result type casts to ``self``: its own check, naming self's C++ element type."""
    rt = result_type(self, *(b for b in bounds if b is not None))
    if not _dtype.can_cast(rt, self.dtype):
        raise RuntimeError(f"result type {_pretty(rt.np)} can't be cast to the desired output "
                           f"type {_dtype.CPP_NAMES[self._data.dtype.name]}")
    return bounds


@register(function=False)
def float_power_(self, exponent):
    """``pow_`` in double precision: ``self`` must already hold float_power's result dtype."""
    dt = _float_power_dtype(self, exponent)
    if self.dtype != dt:
        raise RuntimeError(f"the base given to float_power_ has dtype "
                           f"{_pretty(self._data.dtype)} but the operation's result requires "
                           f"dtype {_pretty(dt.np)}")
    return pow_(self, exponent.to(dt) if isinstance(exponent, Tensor) else exponent)


@register(function=False, aliases=("clip_",))
def clamp_(self, min=None, max=None):
    _clamp_args(self, min, max, inplace=True)
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        _real_clamp(self)
        return apply_inplace(_clamp, self, (min, max))
    if self._data.dtype.kind not in "biu":  # (an integer self checks the cast first)
        _real_clamp(self, min, max, number_pair=True)
    return apply_inplace(_clamp_scalar, self, _scalar_bounds(self, min, max))


@register(function=False)
def clamp_min_(self, min):
    if isinstance(min, Tensor):
        return apply_inplace(_clamp_min, self, (min,))
    _real_clamp(self, min)
    return apply_inplace(_clamp_min_scalar, self, _scalar_bounds(self, min))


@register(function=False)
def clamp_max_(self, max):
    if isinstance(max, Tensor):
        return apply_inplace(_clamp_max, self, (max,))
    _real_clamp(self, max)
    return apply_inplace(_clamp_max_scalar, self, _scalar_bounds(self, max))


@register(function=False)
def atan2_(self, other):
    return apply_inplace(_atan2, self, (_check_tensor(other, "other", "atan2_", 1),))


@register(function=False)
def arctan2_(self, other):  # (not an alias: PyTorch's errors name the method called)
    return apply_inplace(_atan2, self, (_check_tensor(other, "other", "arctan2_", 1),))


@register(function=False)
def hypot_(self, other):
    if result_type(self, _check_tensor(other, "other", "hypot_", 1)).category < FLOAT:
        inplace_shape((self, other))
        raise _broadcast_error((self, other), NotImplementedError(
            f'"hypot_cpu" not implemented for \'{_pretty(result_type(self, other).np)}\''))
    return apply_inplace(_hypot, self, (other,))


@register  # (torch.ldexp_ too)
def ldexp_(self, other):
    _check_tensor(other, "other", "ldexp_", 1)
    if self._data.dtype.kind in "biu":  # (PyTorch's own wording for an integral self)
        raise RuntimeError(f"ldexp can't be cast to the desired output type "
                           f"{_pretty(self._data.dtype)}")
    return apply_inplace(_ldexp, self, (other,), _ldexp_attrs(other))


@register(function=False)
def nextafter_(self, other):
    _check_nextafter(self, other, "nextafter_", 1, inplace=True)
    return apply_inplace(_nextafter, self, (other,))


@register(function=False)
def xlogy_(self, other):
    return apply_inplace(_xlogy if isinstance(other, Tensor) else _xlogy_scalar_other, self,
                         (other,))


@register(function=False)
def lerp_(self, end, weight):
    return apply_inplace(_lerp if isinstance(weight, Tensor) else _lerp_scalar, self,
                         (end, weight))


@register(function=False)
def addcmul_(self, tensor1, tensor2, *, value=1):
    return apply_inplace(_addcmul, self, (tensor1, tensor2), (value,))


@register(function=False)
def addcdiv_(self, tensor1, tensor2, *, value=1):
    _check_addcdiv(tensor1, tensor2)
    return apply_inplace(_addcdiv, self, (tensor1, tensor2), (value,))


# ---- operators ----------------------------------------------------------------------------

_FAST_OPERANDS = frozenset((Tensor, float, int, bool))


def _binary_operand(other):
    return type(other) in _FAST_OPERANDS or isinstance(other, (Tensor, numbers.Number))


def _operator(op):
    """``self <op> other`` straight to the op entry (operators have no alpha/rounding)."""
    def method(self, other):
        if not _binary_operand(other):
            return NotImplemented
        return apply(op, (self, other))
    return method


def _add_operator(self, other):
    if not _binary_operand(other):
        return NotImplemented
    return apply(_add, (self, other), (1,))


def _sub_operator(self, other):
    if not _binary_operand(other):
        return NotImplemented
    _check_sub(self, other)
    return apply(_sub, (self, other), (1,))


def _rsub_operator(self, other):
    if not _binary_operand(other):
        return NotImplemented
    _check_sub(self, other)
    return apply(_rsub if isinstance(other, Tensor) else _rsub_scalar, (self, other), (1,))


def _rtruediv_operator(self, other):
    """``number / tensor`` is ``reciprocal(tensor) * number`` in PyTorch (MulBackward0)."""
    if not _binary_operand(other):
        return NotImplemented
    return apply(_mul, (self.reciprocal(), other))


def _pow_operator(self, other):
    if not _binary_operand(other):
        return NotImplemented
    return pow(self, other)


def _rpow_operator(self, other):
    if not _binary_operand(other):
        return NotImplemented
    return pow(other, self)


def _floordiv_operator(self, other):
    if not _binary_operand(other):
        return NotImplemented
    return apply(_floor_divide, (self, other))


def _rfloordiv_operator(self, other):
    if not _binary_operand(other):
        return NotImplemented
    return apply(_floor_divide, (other, self))


def _mod_operator(self, other):
    if not _binary_operand(other):
        return NotImplemented
    return apply(_remainder if isinstance(other, Tensor) else _remainder_scalar, (self, other))


def _rmod_operator(self, other):
    if not _binary_operand(other):
        return NotImplemented
    return apply(_remainder_scalar_self, (other, self))


Tensor.__add__ = Tensor.__radd__ = _add_operator
Tensor.__iadd__ = add_
Tensor.__sub__ = _sub_operator
Tensor.__rsub__ = _rsub_operator
Tensor.__isub__ = sub_
Tensor.__mul__ = Tensor.__rmul__ = _operator(_mul)
Tensor.__imul__ = mul_
Tensor.__truediv__ = _operator(_div)
Tensor.__rtruediv__ = _rtruediv_operator
Tensor.__itruediv__ = div_
Tensor.__floordiv__ = _floordiv_operator
Tensor.__rfloordiv__ = _rfloordiv_operator
Tensor.__ifloordiv__ = floor_divide_
Tensor.__mod__ = _mod_operator
Tensor.__rmod__ = _rmod_operator
Tensor.__imod__ = remainder_
Tensor.__pow__ = _pow_operator
Tensor.__rpow__ = _rpow_operator
Tensor.__ipow__ = pow_
