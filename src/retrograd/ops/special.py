"""Special functions and small elementwise extras: logaddexp, logaddexp2, erfc, erfinv,
lgamma, digamma, polygamma, i0, sinc, deg2rad, rad2deg, copysign, heaviside.

The gamma family, erfinv and the Bessel functions come from SciPy (CuPy's
``cupyx.scipy.special`` on the GPU); without SciPy, erfc and lgamma fall back to
``math`` elementwise and the others raise. Their derivatives are each other
(lgamma' = digamma, digamma' = polygamma(1), i0' = i1), so rules call those ops with
``shape.call``: recorded under create_graph, straight on arrays otherwise.
"""

import math

from .._dtype import get_default_dtype, is_inexact, is_low, np_finfo
from .._tensor import Tensor
from ..backend import get_array_module, special_functions
from ..backend.functions import functions
from ._registry import (_broadcast_error, _pretty, apply, apply_inplace, defop, register,
                        register_pair)
from .binary import (_NYI, _check_tensor, _kernel, _no_derivative, _refuse_bool_sub, x_times,
                     x_times_grad)
from .pointwise import _rounded, _times
from .shape import call

__all__ = ["logaddexp", "logaddexp2", "erfc", "erfinv", "lgamma", "digamma", "polygamma",
           "mvlgamma", "igamma", "igammac",
           "i0", "sinc", "deg2rad", "rad2deg", "copysign", "heaviside"]

_S = ("self",)
_BOTH = ("self", "other")
_LN2 = 0.6931471805599453


def _unary(name, forward, rule, node=None, upcast=True):
    return defop(name, forward, vjp={"self": rule}, promote=_S, to_float=True, node=node,
                 jvp="elementwise", upcast=upcast)


# PyTorch's backward of these is a composite of half ops for float16, each step rounded
# (the number multiplied in float32), as erf's
_erfc = _unary("erfc", lambda xp, self: functions(xp).special("erfc", self),
               lambda xp, grad, self:
               _times(xp, _rounded(xp, xp.exp, -(self * self)), -1.1283791670955126) * grad,
               upcast="forward")
_erfinv = _unary("erfinv", lambda xp, self: functions(xp).special("erfinv", self),
                 lambda xp, grad, result:
                 _times(xp, _rounded(xp, xp.exp, result * result), 0.886226925452758) * grad,
                 upcast="forward")
_digamma = _unary("digamma", lambda xp, self: functions(xp).special("psi", self),
                  lambda xp, grad, self: grad * call(xp, _polygamma, self, attrs=(1,)))
def _lgamma_fwd(xp, self):
    """SciPy's gammaln, but inf at -inf (SciPy: -inf) and -log|x| at subnormals (SciPy:
    inf, its 1/x overflowing), as PyTorch."""
    r = functions(xp).special("gammaln", self)
    a = xp.abs(self)
    sub = (a < np_finfo(self.dtype).tiny) & (a > 0)
    if functions(xp).any_true(sub):
        r = xp.where(sub, -xp.log(xp.where(sub, a, 1)), r)
    return xp.where(self == -math.inf, math.inf, r)


# PyTorch's backward is grad * digamma(self), two half ops for float16: the digamma of a
# tiny input overflows to inf there.
_lgamma = _unary("lgamma", _lgamma_fwd,
                 lambda xp, grad, self: grad * call(xp, _digamma, self), upcast="forward")
def _mvlgamma_fwd(xp, self, p):
    r = sum(_lgamma_fwd(xp, self - i / 2) for i in range(p))
    return (r + p * (p - 1) / 4 * math.log(math.pi)).astype(self.dtype)


# the multivariate log-gamma: lgamma(x - i/2) summed over i < p, plus a constant
_mvlgamma = _unary("mvlgamma", _mvlgamma_fwd,
                   lambda xp, grad, self, p:
                   grad * sum(call(xp, _digamma, self - i / 2) for i in range(p)),
                   upcast="forward")


def _igamma_input_grad(name):
    def rule(grad):
        raise NotImplementedError(f"the derivative for '{name}: input' is not implemented.")
    return rule


def _igamma_density(xp, self, other):
    """d igamma(a, x) / dx: x^(a-1) e^-x / Gamma(a)."""
    return xp.exp((self - 1) * xp.log(other) - other - _lgamma_fwd(xp, self))


def _igamma_op(name, scipy_name, sign):
    return defop(name, lambda xp, self, other: functions(xp).special(
        scipy_name, *_kernel(f"{name}_cpu", self, other, refuse="biuc")),
        vjp={"self": _igamma_input_grad(name),
             "other": lambda xp, grad, self, other: grad * sign * _igamma_density(
                 xp, self, other)},
        promote=_BOTH, jvp="elementwise")


# the regularized lower and upper incomplete gamma functions (no derivative in a)
_igamma = _igamma_op("igamma", "gammainc", 1)
_igammac = _igamma_op("igammac", "gammaincc", -1)


def _polygamma_fwd(xp, self, n):
    """SciPy's polygamma in its own steps, ``(-1)^(n+1) n! zeta(n + 1, x)`` (psi at n = 0),
    on the arrays' ufuncs: its Python function takes the arguments to host arrays."""
    if not n:
        return functions(xp).special("psi", self)
    sp = special_functions(xp)
    if sp is None:  # pragma: no cover - exercised only without SciPy
        return functions(xp).special("polygamma", n, self)
    coef = (-1.0) ** (n + 1) * sp.gamma(n + 1.0)
    return xp.asarray(sp.zeta(xp.asarray(n + 1), self) * coef, dtype=self.dtype)


_polygamma = defop("polygamma", _polygamma_fwd,
                   vjp={"self": lambda xp, grad, self, n:
                        grad * call(xp, _polygamma, self, attrs=(n + 1,))},
                   promote=_S, to_float=True, jvp="elementwise")
_polygamma_inplace = defop("polygamma", _polygamma.forward, vjp=_polygamma.vjp, promote=_S,
                           to_float=True, node="PolygammaBackward1", jvp="elementwise")


def _tiny(xp, x):
    """Where ``|x|`` is not above its dtype's epsilon (NaN included): PyTorch's i1 and i1e
    gradients take their limit 1/2 there (the formula's 1/x loses it)."""
    eps = float(np_finfo(getattr(x.dtype, "np", x.dtype)).eps)
    return xp.logical_not(xp.abs(x) > eps)


def _i1_rule(xp, grad, self, result):
    """i1' = i0 - i1 / x (1/2 where x is tiny)."""
    tiny = _tiny(xp, self)
    return grad * xp.where(tiny, 0.5, call(xp, _i0, self)
                           - result / xp.where(tiny, 1, self))


_i0 = _unary("i0", lambda xp, self: functions(xp).special("i0", self),
             lambda xp, grad, self: grad * call(xp, _i1, self))
_i1 = _unary("i1", lambda xp, self: functions(xp).special("i1", self), _i1_rule,
             node="SpecialI1Backward0")


# ---- torch.special's own functions (retrograd.special) -------------------------------------
_SQRT_2PI = math.sqrt(2 * math.pi)
_SQRT_2_OVER_PI, _SQRT1_2 = math.sqrt(2 / math.pi), math.sqrt(0.5)


def _scipy(name):
    return lambda xp, self: functions(xp).special(name, self)


def _sign(xp, x):
    return xp.where(x > 0, 1.0, xp.where(x < 0, -1.0, 0.0))


_entr = _unary("entr", _scipy("entr"),
               lambda xp, grad, self: grad * -(1 + xp.log(self)), node="SpecialEntrBackward0")
def _log_ndtr_rule(xp, grad, self, result):
    """``phi(x) / ndtr(x)``: PyTorch's ``exp(-(log_ndtr(x) + x^2 / 2)) / sqrt(2 pi)`` for x >=
    0; below, where those two terms cancel (in float32 from about -10, to garbage or inf
    from -1e4), its exact equal ``sqrt(2 / pi) / erfcx(-x / sqrt 2)``."""
    left = self < 0
    tail = _SQRT_2_OVER_PI / call(xp, _erfcx, xp.where(left, self, 0) * -_SQRT1_2)
    return grad * xp.where(left, tail, xp.exp(-(result + self * self / 2)) / _SQRT_2PI)


_log_ndtr = _unary("log_ndtr", _scipy("log_ndtr"), _log_ndtr_rule,
                   node="SpecialLogNdtrBackward0")
_ndtri = _unary("ndtri", _scipy("ndtri"),
                lambda xp, grad, result: grad * _SQRT_2PI * xp.exp(result * result / 2),
                node="SpecialNdtriBackward0")
_erfcx = _unary("erfcx", _scipy("erfcx"),
                lambda xp, grad, self, result:
                grad * (2 * self * result - 2 / math.sqrt(math.pi)),
                node="SpecialErfcxBackward0")
_i0e = _unary("i0e", _scipy("i0e"),
              lambda xp, grad, self, result:
              grad * (call(xp, _i1e, self) - _sign(xp, self) * result),
              node="SpecialI0EBackward0")


def _i1e_rule(xp, grad, self, result):
    """i1e' = i0e - i1e (sgn(x) + 1/x) (1/2 where x is tiny)."""
    tiny = _tiny(xp, self)
    x = xp.where(tiny, 1, self)
    return grad * xp.where(tiny, 0.5, call(xp, _i0e, self) - result * (_sign(xp, self) + 1 / x))


_i1e = _unary("i1e", _scipy("i1e"), _i1e_rule, node="SpecialI1EBackward0")


_XLOG1PY = {"self": x_times_grad("log1p", -1),
            "other": lambda xp, grad, self, other: grad * self / (other + 1)}
_xlog1py = {kind: defop("xlog1py", x_times("log1p"), inputs=_BOTH, promote=_BOTH, to_float=True,
                        vjp={k: r for k, r in _XLOG1PY.items() if k in grads},
                        node=f"SpecialXlog1PyBackward{n}", jvp="elementwise")
            for n, (kind, grads) in enumerate((("both", _BOTH), ("number_self", ("other",)),
                                               ("number_other", ("self",))))}


_NO_HALF = ("log_ndtr", "ndtri", "erfcx")  # no float16 or bfloat16 kernels in PyTorch


def special_function(name):
    """The public form of torch.special's ``name`` (entr, log_ndtr, ndtri, erfcx, i0e, i1,
    i1e): integer inputs give floats."""
    op = {"entr": _entr, "log_ndtr": _log_ndtr, "ndtri": _ndtri, "erfcx": _erfcx, "i0e": _i0e,
          "i1": _i1, "i1e": _i1e}[name]

    def fn(input, *, out=None):
        if out is not None:
            raise NotImplementedError(f"special.{name}: out= is not supported")
        _check_tensor(input, "input", f"special_{name}", 1)
        if name in _NO_HALF and is_low(input._data.dtype):  # (PyTorch's CPU kernels)
            raise NotImplementedError(f'"{name}_cpu" not implemented for '
                                      f"'{_pretty(input._data.dtype)}'")
        return apply(op, (input,))
    fn.__name__ = fn.__qualname__ = name
    return fn


def xlog1py(input, other, *, out=None):
    """``input * log1p(other)``, 0 where input is 0; either may be a Python number."""
    if out is not None:
        raise NotImplementedError("special.xlog1py: out= is not supported")
    if not isinstance(input, Tensor):
        return apply(_xlog1py["number_self"], (input, _check_tensor(other, "other",
                                                                   "special_xlog1py")))
    kind = "both" if isinstance(other, Tensor) else "number_other"
    return apply(_xlog1py[kind], (input, other))


def _sinc_rule(xp, grad, self):
    """(cos(pi x) pi x - sin(pi x)) / (pi x^2); 0 at 0."""
    zero = self == 0
    px = math.pi * xp.where(zero, 1, self)
    return grad * xp.where(zero, 0, (xp.cos(px) * px - xp.sin(px)) / (px * xp.where(zero, 1,
                                                                                    self)))


_sinc = _unary("sinc", lambda xp, self: xp.sinc(self), _sinc_rule)
_deg2rad = _unary("deg2rad", lambda xp, self: self * (math.pi / 180),
                  lambda grad: grad * (math.pi / 180), node="Deg2RadBackward0")
_rad2deg = _unary("rad2deg", lambda xp, self: self * (180 / math.pi),
                  lambda grad: grad * (180 / math.pi), node="Rad2DegBackward0")


def _share(xp, grad, x, other, base2=False):
    """x's share of the gradient, PyTorch's ``grad / (1 + exp(other - x))`` (``2 **`` for
    logaddexp2): all of it where x alone is +inf, none where exp overflows, each step
    rounded in float16 as PyTorch's composite. Not ``exp(x - result)``: a result rounded
    to float16 is far from a wider x (34176 for 34183.9, and exp(7.9) is no share). On
    the facade (create_graph) ``grad * sigmoid((x - other) * ln b)``, the same value,
    whose derivatives do not overflow (PyTorch's give NaN for |x - other| > 710). A bool
    operand fails as PyTorch's subtraction."""
    _refuse_bool_sub(x.dtype == bool, other.dtype == bool)
    return functions(xp).kernel_or_composite(
        _share_kernel2 if base2 else _share_kernel,
        lambda g, a, b: g * functions(xp).sigmoid((a - b) * _LN2 if base2 else a - b),
        grad, x, other)


def _share_kernel(grad, x, other):
    return grad / (1 + _rounded(get_array_module(x), get_array_module(x).exp, other - x))


def _share_kernel2(grad, x, other):
    return grad / (1 + _rounded(get_array_module(x), lambda d: 2.0 ** d, other - x))


_logaddexp = defop("logaddexp", lambda xp, self, other: xp.logaddexp(self, other),
                   vjp={"self": lambda xp, grad, self, other:
                        _share(xp, grad, self, other),
                        "other": lambda xp, grad, self, other:
                        _share(xp, grad, other, self)},
                   promote=_BOTH, jvp="elementwise", upcast="forward")
_logaddexp2 = defop("logaddexp2", lambda xp, self, other: xp.logaddexp2(self, other),
                    vjp={"self": lambda xp, grad, self, other:
                         _share(xp, grad, self, other, True),
                         "other": lambda xp, grad, self, other:
                         _share(xp, grad, other, self, True)},
                    promote=_BOTH, jvp="elementwise", upcast="forward")


def _copysign_rule(xp, grad, self, result):
    """d|x| sign(y)/dx = result / self, 0 at self == 0 (PyTorch's choice). The division
    takes self in the result's dtype, as PyTorch's (a float64 2.2e-308 beside float32 is
    0 there: 0 / 0, NaN); the mask, self as given."""
    zero = self == 0
    nonzero = xp.where(zero, 1, self)
    if nonzero.dtype != result.dtype:
        nonzero = xp.astype(nonzero, result.dtype, copy=False)
    return grad * xp.where(zero, 0, result / nonzero)


def _zero(xp, grad):
    return xp.zeros_like(grad)


_copysign = defop("copysign", lambda xp, self, other: xp.copysign(self, other),
                  vjp={"self": _copysign_rule, "other": _zero}, promote=_BOTH, to_float=True,
                  jvp="elementwise")
_copysign_scalar = defop("copysign", lambda xp, self, other: xp.copysign(self, other),
                         vjp={"self": _copysign_rule}, inputs=_BOTH, promote=_BOTH,
                         to_float=True, node="CopysignBackward1", jvp="elementwise")
_heaviside = defop("heaviside", lambda xp, self, values:
                   xp.where(self == 0, values, (self > 0).astype(self.dtype)).astype(self.dtype),
                   vjp={"self": _no_derivative("heaviside"),
                        "values": _no_derivative("heaviside")},
                   node=_NYI, jvp="elementwise")


# ---- public functions -------------------------------------------------------------------

def _public(name, op):
    """Function, method and in-place method of a unary op."""
    def fn(input, *, out=None):
        return apply(op, (input,))

    def fn_(self):
        return apply_inplace(op, self, ())
    return register_pair(name, fn, fn_, f"Elementwise ``{name}``; integer inputs give floats.")


erfc, erfc_ = _public("erfc", _erfc)
erfinv, erfinv_ = _public("erfinv", _erfinv)
lgamma, lgamma_ = _public("lgamma", _lgamma)
digamma, digamma_ = _public("digamma", _digamma)
i0, i0_ = _public("i0", _i0)
sinc, sinc_ = _public("sinc", _sinc)
deg2rad, deg2rad_ = _public("deg2rad", _deg2rad)
rad2deg, rad2deg_ = _public("rad2deg", _rad2deg)


def _mvlgamma_p(p):
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    return (p,)


def _mvlgamma_fn(input, p, *, out=None):
    return apply(_mvlgamma, (input,), _mvlgamma_p(p))


def _mvlgamma_fn_(self, p):
    attrs = _mvlgamma_p(p)
    if not is_inexact(self._data.dtype):  # (PyTorch's wording names self's dtype first)
        raise RuntimeError(f"mvlgamma: result type {_pretty(self._data.dtype)} can't be cast "
                           f"to the desired output type {_pretty(get_default_dtype().np)}")
    return apply_inplace(_mvlgamma, self, (), attrs)


mvlgamma, mvlgamma_ = register_pair(
    "mvlgamma", _mvlgamma_fn, _mvlgamma_fn_,
    """The multivariate log-gamma of dimension ``p``; integer inputs give floats.""")


def _igamma_public(name, op):
    def fn(input, other, *, out=None):
        return apply(op, (input, _check_tensor(other, "other", name)))

    def fn_(self, other):
        return apply_inplace(op, self, (_check_tensor(other, "other", name + "_", 1),))
    return register_pair(name, fn, fn_, f"The regularized ``{name}`` of ``input`` (a) and "
                                        f"``other`` (x); no derivative in a, as PyTorch.")


igamma, igamma_ = _igamma_public("igamma", _igamma)
igammac, igammac_ = _igamma_public("igammac", _igammac)


def _check_n(n):
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    return int(n)


@register(method=False)
def polygamma(n, input, *, out=None):
    """The ``n``-th derivative of digamma (``polygamma(0, x)`` is digamma)."""
    return apply(_polygamma, (input,), (_check_n(n),))


@register(function=False, name="polygamma")
def _polygamma_method(self, n):
    return apply(_polygamma, (self,), (_check_n(n),))


@register(function=False)
def polygamma_(self, n):
    return apply_inplace(_polygamma_inplace, self, (), (_check_n(n),))


def _binary_public(name, op, kernel):
    def fn(input, other, *, out=None):
        _check_tensor(other, "other", name)
        if not is_inexact(input._data.dtype) and not is_inexact(other._data.dtype):
            raise _broadcast_error((input, other), NotImplementedError(
                f'"{kernel}" not implemented for \'{_pretty(input._data.dtype)}\''))
        return apply(op, (input, other))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``{name}``: the log of the sum of exponentials, without overflow."
    return register(fn)


logaddexp = _binary_public("logaddexp", _logaddexp, "logaddexp_cpu")
logaddexp2 = _binary_public("logaddexp2", _logaddexp2, "logaddexp2_cpu")


@register
def copysign(input, other, *, out=None):
    """``|input|`` with the sign of ``other`` (a Tensor or a number)."""
    return apply(_copysign if hasattr(other, "_data") else _copysign_scalar, (input, other))


@register(function=False)
def copysign_(self, other):
    return apply_inplace(_copysign if hasattr(other, "_data") else _copysign_scalar, self,
                         (other,))


@register
def heaviside(input, values, *, out=None):
    """The step function: 0 below zero, 1 above, ``values`` at zero (no gradient)."""
    _check_tensor(values, "values", "heaviside")
    if input._data.dtype != values._data.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different "
                           "dtypes.")
    return apply(_heaviside, (input, values))


@register(function=False)
def heaviside_(self, values):
    _check_tensor(values, "values", "heaviside")
    return apply_inplace(_heaviside, self, (values,))

