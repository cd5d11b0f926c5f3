"""Unary elementwise ops. Integer inputs of the transcendental ones give floats."""

import functools
import math

from .. import backend
from .._dtype import bfloat16, get_default_dtype, is_float, is_low, np_finfo
from .._tensor import Tensor, wrap
from ..backend import cpu_kernels
from ._registry import _pretty, apply, apply_inplace, defop, kernel, register, register_pair

__all__ = ["neg", "abs", "reciprocal", "exp", "exp2", "log", "log2", "log10", "log1p", "expm1",
           "sqrt", "rsqrt", "square", "sin", "cos", "tan", "asin", "acos", "atan", "sinh",
           "cosh", "tanh", "asinh", "acosh", "atanh", "sigmoid", "relu", "erf", "sign", "floor",
           "ceil", "round", "trunc", "frac", "logit", "nan_to_num", "positive", "sgn",
           "signbit", "conj", "conj_physical", "angle"]

_S = ("self",)


def _unary(name, forward, rule, *, to_float=False, node=None, upcast=True, **backward):
    return defop(name, forward, vjp={"self": rule} if rule else {"self": _zero},
                 promote=_S, to_float=to_float, node=node, jvp="elementwise", upcast=upcast,
                 **backward)


def _zero(xp, grad):
    """Piecewise-constant ops (floor, sign, ...): PyTorch's zero gradient."""
    return xp.zeros_like(grad)


def _negate(xp, self):
    if self.dtype == bool:
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If "
                           "you are trying to invert a mask, use the `~` or `logical_not()` "
                           "operator instead.")
    return -self


def _torch_sign(xp, self):
    """PyTorch's sign: 0 at NaN (NumPy's is NaN); the gradients of abs and norm use it."""
    return xp.where(self != self, 0, xp.sign(self))


def _sign_fwd(xp, self):
    """A bool input's sign is a copy of it (NumPy has no bool loop)."""
    return self.copy() if self.dtype.kind == "b" else _torch_sign(xp, self)


def _no_bool(kernel, forward):
    """``forward`` of an op whose PyTorch CPU kernel has no bool loop."""
    @functools.wraps(forward)  # keeps the signature that names the op's attributes
    def checked(xp, self, *args):
        if self.dtype.kind == "b":
            raise NotImplementedError(f'"{kernel}" not implemented for \'Bool\'')
        return forward(xp, self, *args)
    return checked


def _relu_fwd(xp, self):
    if self.dtype.kind == "b":
        raise RuntimeError("Boolean inputs not supported for relu")
    return xp.maximum(self, 0)


def _square_fwd(xp, self):
    """``pow(self, 2)`` in PyTorch: a bool input gives int64, as bool ** 2 promotes."""
    if self.dtype.kind == "b":
        self = self.astype("int64")
    return self * self


# Exponents PyTorch's float32/64 kernel takes without pow (its PowKernel.cpp). Each
# product equals C's pow at every value, so float16 (pow in float32 for PyTorch) takes them
# too, in float32; sqrt and rsqrt differ from pow at -0.0 and -inf, so float16 does not.
_POW_PRODUCTS = {1: lambda xp, x: x * 1, 2: lambda xp, x: x * x, 3: lambda xp, x: x * x * x,
                 -1: lambda xp, x: 1 / x, -2: lambda xp, x: 1 / (x * x)}
_POW_ROOTS = {0.5: lambda xp, x: xp.sqrt(x), -0.5: lambda xp, x: 1 / xp.sqrt(x)}


def _is_half(a):
    """Whether an array or a Tensor of the facade is float16 or bfloat16 (``is_low``)."""
    return is_low(a.dtype)


def _pow_number(xp, self, exponent):
    """``self ** exponent`` as PyTorch's kernel: exponent 0 fills ones (1 at NaN); float32/64
    take 0.5 and -0.5 as sqrt and rsqrt (-0.0 ** 0.5 is -0.0, -inf ** 0.5 NaN, -0.0 ** -0.5
    -inf), but float16 has no such case: C's pow in float32, rounded once (0.0, inf, inf),
    which NumPy's float16 ``power`` is."""
    if exponent == 0:
        return xp.ones_like(self)
    if self.dtype == bool:  # bool ** True: a bool result, self (NumPy's has no bool loop)
        return xp.logical_and(self, True)
    product = _POW_PRODUCTS.get(exponent)
    if _is_half(self):
        if product is None:
            return xp.power(self, exponent)
        return xp.astype(product(xp, xp.astype(self, "float32")), self.dtype)
    kernel = product or _POW_ROOTS.get(exponent)
    return kernel(xp, self) if kernel is not None else self ** exponent


def _times(xp, a, number):
    """``a * number`` as PyTorch's tensor-by-number mul: float16 multiplies in float32 and
    rounds once (NumPy's float16 loop would round the number to half first)."""
    if _is_half(a):
        return xp.astype(xp.astype(a, "float32") * number, a.dtype)
    return a * number


def _rounded(xp, fn, a):
    """``fn(a)`` as PyTorch's float16 kernel computes it inside a backward composite: in
    float32, rounded once (NumPy's own float16 sin, cos, exp and log are an ulp off at a
    few values)."""
    if _is_half(a):
        return xp.astype(fn(xp.astype(a, "float32")), "float16")
    return fn(a)


def _pow_op(xp, self, exponent):
    """PyTorch's ``self.pow(exponent)`` in a rule: the kernel on arrays; on the facade
    (create_graph) the recorded pow op, whose derivative is pow's, where the kernel's products
    would differentiate otherwise (1 / (x * x) gives NaN at 0, pow inf)."""
    return self ** exponent if isinstance(self, Tensor) else _pow_number(xp, self, exponent)


# PyTorch's backward of most ops below is a composite of float16 ops for float16, each
# rounded to half (derivatives.yaml's formula, step by step): upcast="forward" hands the
# rules the float16 arrays, and each rule is written in that formula's order, so that
# intermediate squares overflow to inf as PyTorch's do (tan's gradient past |tan x| = 256,
# reciprocal's below |x| = 0.0039). A number multiplies in float32 (``_times``), as
# PyTorch's tensor-by-Scalar mul.

# Exact in any dtype (upcast=False: float16 in float32 would only cost time and memory).
_neg = _unary("neg", _negate, lambda grad: -grad, upcast=False)
_abs = _unary("abs", _no_bool("abs_cpu", lambda xp, self: xp.abs(self)),
              lambda xp, grad, self: grad * _torch_sign(xp, self), upcast=False)
_reciprocal = _unary("reciprocal", lambda xp, self: 1 / self,
                     lambda grad, result: -grad * (result * result), to_float=True,
                     upcast="forward")
_exp = _unary("exp", lambda xp, self: xp.exp(self), lambda grad, result: grad * result,
              to_float=True)
# PyTorch's backward of these is a composite of float16 ops, each rounded to half, where
# one rounding would differ (log10's gradient at the smallest subnormal is -inf, not -6e4).
_exp2 = _unary("exp2", lambda xp, self: xp.exp2(self),
               lambda xp, grad, result: _times(xp, grad * result, 0.6931471805599453),
               to_float=True, upcast="forward")
_log = _unary("log", lambda xp, self: xp.log(self), lambda grad, self: grad / self,
              to_float=True)
_log2 = _unary("log2", lambda xp, self: xp.log2(self),
               lambda xp, grad, self: grad / _times(xp, self, 0.6931471805599453),
               to_float=True, upcast="forward")
_log10 = _unary("log10", lambda xp, self: xp.log10(self),
                lambda xp, grad, self: grad / _times(xp, self, 2.302585092994046),
                to_float=True, upcast="forward")
_log1p = _unary("log1p", lambda xp, self: xp.log1p(self), lambda grad, self: grad / (self + 1),
                to_float=True, node="Log1PBackward0", upcast="forward")
_expm1 = _unary("expm1", lambda xp, self: xp.expm1(self),
                lambda grad, result: grad * (result + 1), to_float=True, upcast="forward")
# sqrt_ of a large float32 tensor (Adam's denominator) in parts on OpenBLAS's threads.
_sqrt = _unary("sqrt", lambda xp, self: xp.sqrt(self), lambda grad, result: grad / (2 * result),
               to_float=True,
               into=kernel(lambda xp, out, self: xp.sqrt(self, out=out),
                           lambda xp, out, self: cpu_kernels.sqrt_(out),
                           lambda out, self: out is self and cpu_kernels.takes(out)
                           and cpu_kernels.splits("sqrt", out)))
# PyTorch's rsqrt backward, -0.5 * grad * result.pow(3), is a composite of half ops for
# float16: the cube overflows to inf where rsqrt's result is above 40. Its float16 kernel
# (the scalar loop every small tensor takes) is 1 / sqrt(x) with sqrt rounded to half
# first, so the forward is two half ops too (upcast=False).
_rsqrt = _unary("rsqrt", lambda xp, self: 1 / xp.sqrt(self),
                lambda xp, grad, result: -0.5 * grad * _pow_op(xp, result, 3),
                to_float=True, upcast=False)
# square is PyTorch's pow(self, 2), with pow's backward: 2 * self first, in float16 too
_square = _unary("square", _square_fwd, lambda grad, self: grad * (2 * self),
                 node="PowBackward0", upcast="forward")
_sin = _unary("sin", lambda xp, self: xp.sin(self),
              lambda xp, grad, self: grad * _rounded(xp, xp.cos, self), to_float=True,
              upcast="forward")
_cos = _unary("cos", lambda xp, self: xp.cos(self),
              lambda xp, grad, self: grad * -_rounded(xp, xp.sin, self), to_float=True,
              upcast="forward")
_tan = _unary("tan", lambda xp, self: xp.tan(self),
              lambda grad, result: grad * (1 + result * result), to_float=True,
              upcast="forward")
# rsqrt inside these is 1 / sqrt, each rounded (PyTorch's rsqrt kernel, above)
_asin = _unary("asin", lambda xp, self: xp.arcsin(self),
               lambda xp, grad, self: grad * (1 / xp.sqrt(1 - self * self)), to_float=True,
               upcast="forward")
_acos = _unary("acos", lambda xp, self: xp.arccos(self),
               lambda xp, grad, self: grad * -(1 / xp.sqrt(1 - self * self)), to_float=True,
               upcast="forward")
_atan = _unary("atan", lambda xp, self: xp.arctan(self),
               lambda grad, self: grad / (self * self + 1), to_float=True, upcast="forward")
# PyTorch's backward multiplies by a float16 cosh/sinh tensor: inf from |x| > 11.8, so an
# inf gradient even where grad * cosh(x) would fit in float16.
_sinh = _unary("sinh", lambda xp, self: xp.sinh(self),
               lambda xp, grad, self: grad * xp.cosh(self), to_float=True, upcast="forward")
_cosh = _unary("cosh", lambda xp, self: xp.cosh(self),
               lambda xp, grad, self: grad * xp.sinh(self), to_float=True, upcast="forward")
_tanh = _unary("tanh", lambda xp, self: xp.tanh(self),
               lambda grad, result: grad * (1 - result * result), to_float=True)
# x * x overflows to inf in float16 (so a zero gradient) from |x| > 256
_asinh = _unary("asinh", lambda xp, self: xp.arcsinh(self),
                lambda xp, grad, self: grad * (1 / xp.sqrt(self * self + 1)), to_float=True,
                upcast="forward")
_acosh = _unary("acosh", lambda xp, self: xp.arccosh(self),
                lambda xp, grad, self: grad * (1 / xp.sqrt(self * self - 1)), to_float=True,
                upcast="forward")
_atanh = _unary("atanh", lambda xp, self: xp.arctanh(self),
                lambda grad, self: grad / (1 - self * self), to_float=True, upcast="forward")


def _sigmoid_fwd(xp, self):
    """PyTorch's kernel, 1 / (1 + exp(-x)): exp's overflow to inf gives 0 (exp(x) / (1 +
    exp(x)) below 0 would round differently at a few float16 values near 0.5)."""
    return 1 / (1 + xp.exp(-self))


# PyTorch's sigmoid_backward kernel: grad * (1 - result) * result, in half for float16
_sigmoid = _unary("sigmoid", _sigmoid_fwd, lambda grad, result: grad * (1 - result) * result,
                  to_float=True, upcast="forward")


def _relu_grad(xp, grad, result):
    """grad * mask, not where(mask, grad, 0): 15x faster on NumPy for random signs; differs
    from PyTorch only for an inf/nan gradient at a clipped element (nan, not 0). The mask is
    PyTorch's threshold_backward's "not result <= 0", so a NaN input passes its gradient."""
    return grad * xp.logical_not(result <= 0)


# The compiled kernels: one pass each way, 3x and 2x NumPy's (whose maximum checks for NaN)
_relu = _unary("relu", kernel(_relu_fwd, lambda xp, self: cpu_kernels.relu(self),
                              lambda self: cpu_kernels.takes(self), leading=True),
               kernel(_relu_grad, lambda xp, grad, result: cpu_kernels.relu_grad(grad, result),
                      lambda grad, result: cpu_kernels.takes(result, grad), leading=True),
               upcast=False, backward_reads="self", backward_node="ThresholdBackwardBackward0")
_erf = _unary("erf", lambda xp, self: backend.erf(xp, self),
              lambda xp, grad, self:
              _times(xp, _rounded(xp, xp.exp, -(self * self)), 1.1283791670955126) * grad,
              to_float=True, upcast="forward")


def _logit_fwd(xp, self, bounds):
    if bounds is not None:  # (bounds are numbers: ml_dtypes' clip would widen bfloat16)
        self = xp.astype(xp.clip(self, *bounds), self.dtype)
    return xp.log(self / (1 - self))


def _logit_rule(xp, grad, self, bounds):
    """PyTorch's logit_backward: NaN outside [0, 1] (a plain 0 outside [eps, 1 - eps] with
    eps), grad * inf at 0 and 1, else grad / (x (1 - x)), finite where 1 / (x (1 - x))
    alone overflows. grad * inf is written grad / +0, and outside the denominator is 1,
    so that no branch of a where has an infinite derivative (NaN in double backward)."""
    (lo, hi), outside = ((0, 1), math.nan) if bounds is None else (bounds, 0)
    out = (self < lo) | (self > hi)
    d = xp.where(out, 1, xp.where((self == 0) | (self == 1), 0, self * (1 - self)))
    return xp.where(out, outside, grad / d)


# PyTorch's float16 logit and logit_backward kernels compute in half, each step rounded
_logit = _unary("logit", _logit_fwd, _logit_rule, to_float=True, upcast=False)
_sign = _unary("sign", _sign_fwd, None, upcast=False)
_sgn = _unary("sgn", _sign_fwd, None, upcast=False)
_floor = _unary("floor", _no_bool("floor_vml_cpu", lambda xp, self: xp.floor(self)), None,
               upcast=False)
_ceil = _unary("ceil", _no_bool("ceil_vml_cpu", lambda xp, self: xp.ceil(self)), None,
               upcast=False)
_round = _unary("round", _no_bool("round_vml_cpu",
                                   lambda xp, self, decimals: xp.round(self, decimals)), None,
               upcast=False)
_round_decimals = _unary("round", lambda xp, self, decimals: xp.round(self, decimals), None,
                         node="RoundBackward1")
_trunc = _unary("trunc", _no_bool("trunc_vml_cpu", lambda xp, self: xp.trunc(self)), None,
               upcast=False)
_frac = _unary("frac", lambda xp, self: self - xp.trunc(self), lambda grad: grad, upcast=False)
# Native: infinities become the largest finite value of the input's own dtype.
def _nan_to_num_fwd(xp, self, nan, posinf, neginf):
    """NumPy's nan_to_num; bfloat16 (which it leaves alone, not knowing it for a float)
    through float32, infinities defaulting to bfloat16's own limits."""
    if self.dtype is not bfloat16.np:
        return xp.nan_to_num(self, nan=nan, posinf=posinf, neginf=neginf)
    big = float(np_finfo(self.dtype).max)
    return xp.astype(xp.nan_to_num(xp.astype(self, "float32"), nan=nan, posinf=(
        big if posinf is None else posinf), neginf=-big if neginf is None else neginf),
        self.dtype)


_nan_to_num = _unary("nan_to_num", _nan_to_num_fwd,
                     lambda xp, grad, self: xp.where(xp.isfinite(self), grad, 0), upcast=False)


def _unary_public(name, op, *, aliases=(), doc=None, inplace_op=None):
    """The function and in-place method of ``op``; ``inplace_op`` where PyTorch's in-place
    form is another op (``asinh_`` records AsinhBackward1)."""
    inplace_op = inplace_op or op

    def fn(input, *, out=None):
        return apply(op, (input,))

    def fn_(self):
        return apply_inplace(inplace_op, self, ())
    return register_pair(name, fn, fn_, doc or f"Elementwise ``{name}``.", aliases)


def _inplace_without_derivative(op, node):
    """PyTorch records ``asinh_`` & co. with a node of their own that has no derivative."""
    def rule(grad):
        raise NotImplementedError(f"the derivative for 'inplace version of {op.name}' is not "
                                  "implemented.")
    return defop(op.name, op.forward, vjp={"self": rule}, promote=_S, to_float=op.to_float,
                 node=node, jvp="elementwise")


neg, neg_ = _unary_public("neg", _neg, aliases=("negative",))
abs, abs_ = _unary_public("abs", _abs, aliases=("absolute",))
reciprocal, reciprocal_ = _unary_public("reciprocal", _reciprocal)
exp, exp_ = _unary_public("exp", _exp)
exp2, exp2_ = _unary_public("exp2", _exp2)
log, log_ = _unary_public("log", _log)
log2, log2_ = _unary_public("log2", _log2)
log10, log10_ = _unary_public("log10", _log10)
log1p, log1p_ = _unary_public("log1p", _log1p)
expm1, expm1_ = _unary_public("expm1", _expm1)
sqrt, sqrt_ = _unary_public("sqrt", _sqrt)
rsqrt, rsqrt_ = _unary_public("rsqrt", _rsqrt)
square, square_ = _unary_public("square", _square)
sin, sin_ = _unary_public("sin", _sin)
cos, cos_ = _unary_public("cos", _cos)
tan, tan_ = _unary_public("tan", _tan)
asin, asin_ = _unary_public("asin", _asin, aliases=("arcsin",))
acos, acos_ = _unary_public("acos", _acos, aliases=("arccos",))
atan, atan_ = _unary_public("atan", _atan, aliases=("arctan",))
sinh, sinh_ = _unary_public("sinh", _sinh)
cosh, cosh_ = _unary_public("cosh", _cosh)
tanh, tanh_ = _unary_public("tanh", _tanh)
asinh, asinh_ = _unary_public("asinh", _asinh, aliases=("arcsinh",),
                              inplace_op=_inplace_without_derivative(_asinh, "AsinhBackward1"))
acosh, acosh_ = _unary_public("acosh", _acosh, aliases=("arccosh",),
                              inplace_op=_inplace_without_derivative(_acosh, "AcoshBackward1"))
atanh, atanh_ = _unary_public("atanh", _atanh, aliases=("arctanh",),
                              inplace_op=_inplace_without_derivative(_atanh, "AtanhBackward1"))
sigmoid, sigmoid_ = _unary_public("sigmoid", _sigmoid)
relu, relu_ = _unary_public("relu", _relu)
erf, erf_ = _unary_public("erf", _erf)
sign, sign_ = _unary_public("sign", _sign)
floor, floor_ = _unary_public("floor", _floor)
ceil, ceil_ = _unary_public("ceil", _ceil)
trunc, trunc_ = _unary_public("trunc", _trunc, aliases=("fix",))
sgn, sgn_ = _unary_public("sgn", _sgn)


@register
def positive(input):
    """``input`` itself; PyTorch refuses a bool tensor as it does unary ``+``."""
    if input._data.dtype.kind == "b":
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


def _logit_bounds(input, eps):
    """``[eps, 1 - eps]`` as PyTorch's kernel computes it, in the result's dtype: for
    float16, 1 - 1e-6 rounds to 1 (so logit gives inf there)."""
    if eps is None:
        return None
    dt = input._data.dtype if is_float(input._data.dtype) else get_default_dtype().np
    lo = dt.type(eps)
    return float(lo), float(dt.type(1) - lo)


@register
def logit(input, eps=None, *, out=None):
    """log(p / (1 - p)); with ``eps`` the input is first clamped to [eps, 1 - eps]."""
    return apply(_logit, (input,), (_logit_bounds(input, eps),))


@register(function=False)
def logit_(self, eps=None):
    return apply_inplace(_logit, self, (), (_logit_bounds(self, eps),))


def _float_only(input, kernel):
    """Kernels PyTorch defines for floating types only."""
    if input._data.dtype.kind in "biu":
        raise NotImplementedError(f'"{kernel}_cpu" not implemented for '
                                  f"'{_pretty(input._data.dtype)}'")


@register
def frac(input, *, out=None):
    _float_only(input, "frac")
    return apply(_frac, (input,))


@register(function=False)
def frac_(self):
    _float_only(self, "frac")
    return apply_inplace(_frac, self, ())


def _round_op(input, decimals):
    """Without ``decimals`` PyTorch's plain overload (an integer input comes back as a
    copy); with it, even 0, the ``decimals`` overload (RoundBackward1), which has floating
    kernels only: for 0 its message names the plain kernel."""
    if decimals is None:
        return _round
    _float_only(input, "round_vml" if decimals == 0 else "round")
    return _round_decimals


@register
def round(input, *, decimals=None, out=None):
    return apply(_round_op(input, decimals), (input,), (decimals or 0,))


@register(function=False)
def round_(self, *, decimals=None):
    return apply_inplace(_round_op(self, decimals), self, (), (decimals or 0,))


@register
def nan_to_num(input, nan=0.0, posinf=None, neginf=None, *, out=None):
    return apply(_nan_to_num, (input,), (nan, posinf, neginf))


@register
def signbit(input, *, out=None):
    return wrap(backend.get_array_module(input._data).signbit(input._data))


@register
def conj(input):
    """The conjugate: a real tensor is returned as it is (as PyTorch); a complex one's is
    materialized, where PyTorch's is a view with the conjugate bit set (see
    docs/deviations.md)."""
    return conj_physical(input) if input.is_complex() else input


@register
def is_conj(input):
    """False: no tensor carries a lazy conjugate (``conj`` materializes it)."""
    return False


@register
def is_neg(input):
    """False: no tensor carries a lazy negation."""
    return False


@register
def resolve_conj(input):
    """``input``: its conjugate, if any, is already materialized."""
    return input


@register
def resolve_neg(input):
    """``input``: no negation is ever pending."""
    return input


_CONJ_PHYSICAL = {"vjp": {"self": lambda xp, grad: xp.conj(grad)}, "jvp": "linear"}
_conj_physical = defop("conj_physical", lambda xp, self: xp.conj(self), **_CONJ_PHYSICAL)
_conj_physical_inplace = defop("conj_physical", lambda xp, self: xp.conj(self),
                               node="ConjPhysicalBackward1", **_CONJ_PHYSICAL)


@register
def conj_physical(input, *, out=None):
    """The conjugate, materialized; a real tensor is returned as it is (as PyTorch)."""
    if not input.is_complex():
        return input
    return apply(_conj_physical, (input,))


@register  # (torch.conj_physical_ too)
def conj_physical_(self):
    """Written even into a real tensor: its version bumps and ConjPhysicalBackward1 is
    recorded, as PyTorch."""
    return apply_inplace(_conj_physical_inplace, self, ())


@register
def angle(input, *, out=None):
    return apply(_angle, (input,))


_angle = _unary("angle", lambda xp, self: xp.where(self < 0, xp.pi, xp.where(
    self != self, self, 0.0)).astype(self.dtype if is_float(self.dtype) else "float32"),
    None, to_float=True)

Tensor.__neg__ = neg
Tensor.__abs__ = abs
Tensor.__pos__ = positive
