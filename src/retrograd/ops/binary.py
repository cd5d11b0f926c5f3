"""Binary arithmetic with broadcasting and PyTorch's type promotion.

Each op is one ``defop`` entry; the public function, its in-place ``_``
form, the Tensor method and the operators all call that entry.
"""

import numbers

from .._tensor import Tensor
from ._registry import apply, apply_inplace, defop, register

__all__ = ["add", "sub", "rsub", "mul", "div", "true_divide", "floor_divide", "remainder",
           "fmod", "pow", "maximum", "minimum", "fmax", "fmin", "where", "clamp",
           "clamp_min", "clamp_max", "clip", "lerp", "addcmul", "addcdiv", "atan2", "hypot",
           "xlogy"]

_BOTH = ("self", "other")


def _check(x, name, fn):
    if not isinstance(x, (Tensor, numbers.Number)):
        raise TypeError(f"{fn}(): argument '{name}' must be Tensor or Number, not "
                        f"{type(x).__name__}")
    return x


_add = defop("add", lambda xp, self, other, alpha: self + other * alpha if alpha != 1
             else self + other,
             vjp={"self": lambda grad: grad,
                  "other": lambda grad, alpha: grad * alpha if alpha != 1 else grad},
             promote=_BOTH)
_sub = defop("sub", lambda xp, self, other, alpha: self - other * alpha if alpha != 1
             else self - other,
             vjp={"self": lambda grad: grad,
                  "other": lambda grad, alpha: -grad * alpha if alpha != 1 else -grad},
             promote=_BOTH)
_rsub = defop("rsub", lambda xp, self, other, alpha: other - self * alpha,
              vjp={"self": lambda grad, alpha: -grad * alpha, "other": lambda grad: grad},
              promote=_BOTH, node="RsubBackward1")
_mul = defop("mul", lambda xp, self, other: self * other,
             vjp={"self": lambda grad, other: grad * other,
                  "other": lambda grad, self: grad * self},
             promote=_BOTH)
_div = defop("div", lambda xp, self, other: self / other,
             vjp={"self": lambda grad, other: grad / other,
                  "other": lambda grad, self, other: -grad * self / (other * other)},
             promote=_BOTH, to_float=True)
_div_rounding = defop(
    "div_rounding",
    lambda xp, self, other, rounding_mode: (xp.trunc(self / other) if self.dtype.kind in "fc"
                                            else _int_trunc_div(xp, self, other))
    if rounding_mode == "trunc" else xp.floor_divide(self, other),
    vjp={"self": lambda xp, grad: xp.zeros_like(grad),
         "other": lambda xp, grad: xp.zeros_like(grad)},
    promote=_BOTH, node="DivBackward1")
_remainder = defop("remainder", lambda xp, self, other: xp.remainder(self, other),
                   vjp={"self": lambda grad: grad,
                        "other": lambda xp, grad, self, other:
                        -grad * xp.floor(self / other)},
                   promote=_BOTH)
_fmod = defop("fmod", lambda xp, self, other: xp.fmod(self, other),
              vjp={"self": lambda grad: grad,
                   "other": lambda xp, grad, self, other: -grad * xp.trunc(self / other)},
              promote=_BOTH)
_pow_scalar = defop("pow", lambda xp, self, exponent: self ** exponent,
                    vjp={"self": lambda grad, self, exponent: grad * 0 if exponent == 0
                         else grad * exponent * self ** (exponent - 1)},
                    promote=("self", "exponent"), inputs=("self", "exponent"))
_pow_tensor = defop(
    "pow_tensor", lambda xp, self, exponent: self ** exponent,
    vjp={"self": lambda xp, grad, self, exponent:
         xp.where(exponent == 0, 0, grad * exponent * self ** (exponent - 1)),
         "exponent": lambda xp, grad, self, result:
         xp.where(self == 0, 0, grad * result * xp.log(xp.where(self == 0, 1, self)))},
    promote=("self", "exponent"), node="PowBackward1")
_pow_scalar_base = defop(
    "pow_scalar_base", lambda xp, self, exponent: self ** exponent,
    vjp={"exponent": lambda xp, grad, self, result: grad * result * xp.log(self)},
    promote=("self", "exponent"), inputs=("self", "exponent"), node="PowBackward2")


def _int_trunc_div(xp, a, b):
    q = xp.floor_divide(a, b)
    return q + ((q < 0) & (q * b != a))


def _maxmin_rule(pick_self):
    """Gradient of maximum/minimum: to the winner, split evenly on ties (as PyTorch)."""
    def rule(xp, grad, self, other):
        wins = (self > other) if pick_self else (self < other)
        return xp.where(self == other, grad / 2, xp.where(wins, grad, 0))
    return rule


_maximum = defop("maximum", lambda xp, self, other: xp.maximum(self, other),
                 vjp={"self": _maxmin_rule(True),
                      "other": lambda xp, grad, self, other:
                      _maxmin_rule(True)(xp, grad, other, self)},
                 promote=_BOTH)
_minimum = defop("minimum", lambda xp, self, other: xp.minimum(self, other),
                 vjp={"self": _maxmin_rule(False),
                      "other": lambda xp, grad, self, other:
                      _maxmin_rule(False)(xp, grad, other, self)},
                 promote=_BOTH)
_fmax = defop("fmax", lambda xp, self, other: xp.fmax(self, other),
              vjp={"self": lambda xp, grad, self, other:
                   xp.where((self >= other) | (other != other), grad, 0),
                   "other": lambda xp, grad, self, other:
                   xp.where((self >= other) | (other != other), 0, grad)},
              promote=_BOTH)
_fmin = defop("fmin", lambda xp, self, other: xp.fmin(self, other),
              vjp={"self": lambda xp, grad, self, other:
                   xp.where((self <= other) | (other != other), grad, 0),
                   "other": lambda xp, grad, self, other:
                   xp.where((self <= other) | (other != other), 0, grad)},
              promote=_BOTH)
_where = defop("where", lambda xp, condition, self, other: xp.where(condition, self, other),
               inputs=("condition", "self", "other"),
               vjp={"self": lambda xp, grad, condition: xp.where(condition, grad, 0),
                    "other": lambda xp, grad, condition: xp.where(condition, 0, grad)},
               promote=_BOTH)


def _in_range(self, min, max):
    if min is None:
        return self <= max
    if max is None:
        return self >= min
    return (self >= min) & (self <= max)


_clamp = defop("clamp", lambda xp, self, min, max: xp.clip(self, min, max),
               inputs=("self", "min", "max"),
               vjp={"self": lambda xp, grad, self, min, max:
                    xp.where(_in_range(self, min, max), grad, 0),
                    "min": lambda xp, grad, self, min, max:
                    xp.where(self < min, grad, 0) if max is None
                    else xp.where((self < min) & (min <= max), grad, 0),
                    "max": lambda xp, grad, self, min, max:
                    xp.where(self > max, grad, 0) if min is None
                    else xp.where((self > max) | (min > max), grad, 0)},
               promote=("self", "min", "max"))
_clamp_scalar = defop("clamp_scalar", lambda xp, self, min, max: xp.clip(self, min, max),
                      vjp={"self": lambda xp, grad, self, min, max:
                           xp.where(_in_range(self, min, max), grad, 0)},
                      promote=("self", "min", "max"), inputs=("self", "min", "max"),
                      node="ClampBackward1")
_lerp = defop("lerp", lambda xp, self, end, weight: self + weight * (end - self),
              inputs=("self", "end", "weight"),
              vjp={"self": lambda grad, weight: grad * (1 - weight),
                   "end": lambda grad, weight: grad * weight,
                   "weight": lambda grad, self, end: grad * (end - self)},
              promote=("self", "end", "weight"))
_addcmul = defop("addcmul", lambda xp, self, tensor1, tensor2, value:
                 self + value * tensor1 * tensor2,
                 inputs=("self", "tensor1", "tensor2"),
                 vjp={"self": lambda grad: grad,
                      "tensor1": lambda grad, tensor2, value: grad * tensor2 * value,
                      "tensor2": lambda grad, tensor1, value: grad * tensor1 * value},
                 promote=("self", "tensor1", "tensor2"))
_addcdiv = defop("addcdiv", lambda xp, self, tensor1, tensor2, value:
                 self + value * tensor1 / tensor2,
                 inputs=("self", "tensor1", "tensor2"),
                 vjp={"self": lambda grad: grad,
                      "tensor1": lambda grad, tensor2, value: grad * value / tensor2,
                      "tensor2": lambda grad, tensor1, tensor2, value:
                      -grad * value * tensor1 / (tensor2 * tensor2)},
                 promote=("self", "tensor1", "tensor2"), to_float=True)
_atan2 = defop("atan2", lambda xp, self, other: xp.arctan2(self, other),
               vjp={"self": lambda grad, self, other: grad * other / (self * self +
                                                                      other * other),
                    "other": lambda grad, self, other: -grad * self / (self * self +
                                                                       other * other)},
               promote=_BOTH, to_float=True)
_hypot = defop("hypot", lambda xp, self, other: xp.hypot(self, other),
               vjp={"self": lambda grad, self, result: grad * self / result,
                    "other": lambda grad, other, result: grad * other / result},
               promote=_BOTH, to_float=True)
_xlogy = defop("xlogy", lambda xp, self, other: xp.where(
    self == 0, xp.where(other != other, other, 0), self * xp.log(xp.where(self == 0, 1, other))),
    vjp={"self": lambda xp, grad, self, other:
         xp.where((self == 0) & (other == other), 0, grad * xp.log(other)),
         "other": lambda xp, grad, self, other: xp.where(self == 0, 0, grad * self / other)},
    promote=_BOTH, to_float=True)


# ---- public functions ---------------------------------------------------------------------

@register
def add(input, other, *, alpha=1, out=None):
    """``input + alpha * other``."""
    return apply(_add, (input, _check(other, "other", "add")), (alpha,))


@register
def sub(input, other, *, alpha=1, out=None):
    """``input - alpha * other``."""
    return apply(_sub, (input, _check(other, "other", "sub")), (alpha,))


subtract = register(sub, name="subtract")


@register
def rsub(input, other, *, alpha=1):
    """``other - alpha * input``."""
    return apply(_rsub, (input, other), (alpha,))


@register(aliases=("multiply",))
def mul(input, other, *, out=None):
    return apply(_mul, (input, _check(other, "other", "mul")))


@register(aliases=("divide",))
def div(input, other, *, rounding_mode=None, out=None):
    """True division (float result), or rounded with ``rounding_mode`` 'trunc'/'floor'."""
    if rounding_mode is None:
        return apply(_div, (input, _check(other, "other", "div")))
    if rounding_mode not in ("trunc", "floor"):
        raise ValueError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' "
                         f"but found '{rounding_mode}'")
    return apply(_div_rounding, (input, other), (rounding_mode,))


@register
def true_divide(input, other):
    return div(input, other)


@register
def floor_divide(input, other):
    return div(input, other, rounding_mode="floor")


@register
def remainder(input, other):
    return apply(_remainder, (input, other))


@register
def fmod(input, other):
    return apply(_fmod, (input, other))


@register
def pow(input, exponent, *, out=None):
    """``input ** exponent``; either may be a Python number."""
    if not isinstance(input, Tensor):
        return apply(_pow_scalar_base, (input, exponent))
    if isinstance(exponent, Tensor):
        return apply(_pow_tensor, (input, exponent))
    return apply(_pow_scalar, (input, exponent))


@register
def float_power(input, exponent):
    from .. import _dtype
    return pow(input.to(_dtype.float64) if isinstance(input, Tensor) else input,
               exponent.to(_dtype.float64) if isinstance(exponent, Tensor) else exponent)


@register
def maximum(input, other):
    return apply(_maximum, (input, other))


@register
def minimum(input, other):
    return apply(_minimum, (input, other))


@register
def fmax(input, other):
    return apply(_fmax, (input, other))


@register
def fmin(input, other):
    return apply(_fmin, (input, other))


@register
def where(condition, input=None, other=None):
    """Elements of ``input`` where ``condition`` holds, else of ``other``."""
    if input is None and other is None:
        return condition.nonzero(as_tuple=True)
    return apply(_where, (condition, input, other))


def _clamp_args(min, max):
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")


@register(aliases=("clip",))
def clamp(input, min=None, max=None):
    """Limit values to [min, max]; bounds may be numbers or tensors."""
    _clamp_args(min, max)
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        return apply(_clamp, (input, min, max))
    return apply(_clamp_scalar, (input, min, max))


@register
def clamp_min(input, min):
    return clamp(input, min=min)


@register
def clamp_max(input, max):
    return clamp(input, max=max)


@register
def lerp(input, end, weight):
    return apply(_lerp, (input, end, weight))


@register
def addcmul(input, tensor1, tensor2, *, value=1):
    return apply(_addcmul, (input, tensor1, tensor2), (value,))


@register
def addcdiv(input, tensor1, tensor2, *, value=1):
    return apply(_addcdiv, (input, tensor1, tensor2), (value,))


@register(aliases=("arctan2",))
def atan2(input, other):
    return apply(_atan2, (input, other))


@register
def hypot(input, other):
    return apply(_hypot, (input, other))


@register
def xlogy(input, other):
    return apply(_xlogy, (input, other))


clip = clamp


# ---- in-place forms -----------------------------------------------------------------------

@register(function=False)
def add_(self, other, *, alpha=1):
    return apply_inplace(_add, self, (other,), (alpha,))


@register(function=False)
def sub_(self, other, *, alpha=1):
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
    return div_(self, other, rounding_mode="floor")


@register(function=False)
def remainder_(self, other):
    return apply_inplace(_remainder, self, (other,))


@register(function=False)
def fmod_(self, other):
    return apply_inplace(_fmod, self, (other,))


@register(function=False)
def pow_(self, exponent):
    if isinstance(exponent, Tensor):
        return apply_inplace(_pow_tensor, self, (exponent,))
    return apply_inplace(_pow_scalar, self, (exponent,))


@register(function=False, aliases=("clip_",))
def clamp_(self, min=None, max=None):
    _clamp_args(min, max)
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        return apply_inplace(_clamp, self, (min, max))
    return apply_inplace(_clamp_scalar, self, (min, max))


@register(function=False)
def clamp_min_(self, min):
    return clamp_(self, min=min)


@register(function=False)
def clamp_max_(self, max):
    return clamp_(self, max=max)


@register(function=False)
def lerp_(self, end, weight):
    return apply_inplace(_lerp, self, (end, weight))


@register(function=False)
def addcmul_(self, tensor1, tensor2, *, value=1):
    return apply_inplace(_addcmul, self, (tensor1, tensor2), (value,))


@register(function=False)
def addcdiv_(self, tensor1, tensor2, *, value=1):
    return apply_inplace(_addcdiv, self, (tensor1, tensor2), (value,))


# ---- operators ----------------------------------------------------------------------------

def _binary_operand(other):
    return isinstance(other, (Tensor, numbers.Number))


def _operator(fn, reflected=False):
    def op(self, other):
        if not _binary_operand(other):
            return NotImplemented
        return fn(other, self) if reflected else fn(self, other)
    return op


Tensor.__add__ = Tensor.__radd__ = _operator(add)
Tensor.__iadd__ = add_
Tensor.__sub__ = _operator(sub)
Tensor.__rsub__ = lambda self, other: rsub(self, other) if _binary_operand(other) \
    else NotImplemented
Tensor.__isub__ = sub_
Tensor.__mul__ = Tensor.__rmul__ = _operator(mul)
Tensor.__imul__ = mul_
Tensor.__truediv__ = _operator(div)
Tensor.__rtruediv__ = _operator(div, reflected=True)
Tensor.__itruediv__ = div_
Tensor.__floordiv__ = _operator(floor_divide)
Tensor.__rfloordiv__ = _operator(floor_divide, reflected=True)
Tensor.__ifloordiv__ = floor_divide_
Tensor.__mod__ = _operator(remainder)
Tensor.__rmod__ = _operator(remainder, reflected=True)
Tensor.__imod__ = remainder_
Tensor.__pow__ = _operator(pow)
Tensor.__rpow__ = _operator(pow, reflected=True)
Tensor.__ipow__ = pow_
