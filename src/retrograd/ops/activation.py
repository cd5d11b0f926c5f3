"""The activation functions of ``torch.nn.functional`` beyond relu/gelu/silu (and silu's
``inplace``), one op each where PyTorch has its own kernel and backward node
(``EluBackward0``, ...).

The in-place forms record the node PyTorch records for them: most reuse the out-of-place
op (the node keeps a copy of the input), but ``leaky_relu_``, ``elu_``, ``celu_`` and
``rrelu_`` save their *result* instead (``LeakyReluBackward1``, ...), so their rules are
written on the result and, as in PyTorch, refuse a negative slope, where the result no
longer tells which side of zero the input was on.

The functions have the signatures of ``torch.nn.functional``; the ones PyTorch also
exposes as ``torch.<name>`` / ``Tensor.<name>`` are registered there.
"""

from .. import _autocast
from .._dtype import bfloat16, float16, float32, float64, is_float, np_finfo, dtype_arg
from .._random import default_generator
from .._tensor import _wrap_dim, wrap
from . import nn_ops as _nn
from . import pointwise as _pw
from ._registry import _pretty, apply, apply_inplace, defop, register
from ..backend import get_array_module, to_device
from ..backend.functions import functions
from .nn_ops import _max_scalar
from .shape import call

__all__ = ["leaky_relu", "leaky_relu_", "elu", "elu_", "selu", "selu_", "celu", "celu_",
           "relu_", "silu", "relu6", "hardtanh", "hardtanh_", "softplus", "mish", "hardswish",
           "hardsigmoid", "logsigmoid", "prelu", "glu", "softsign", "softshrink",
           "hardshrink", "tanhshrink", "threshold", "threshold_", "rrelu", "rrelu_",
           "softmax", "log_softmax"]

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946
# PyTorch's hardsigmoid backward multiplies by the float 1/6 whatever the dtype.
_SIXTH32 = 0.1666666716337204



def _num(v):
    """A scalar argument as a Python number: a NumPy scalar or 0-d tensor (whatever has
    ``item()``, which Python's numbers lack) would otherwise promote the result's dtype
    (float32 input, float64 slope -> float64 output)."""
    return v.item() if hasattr(v, "item") else v


def _expose(fn, name):
    """Register ``fn`` as ``torch.<name>``, where its signature differs from F's."""
    fn.__name__ = fn.__qualname__ = name
    return register(fn, method=False)


def _floating(input, kernel):
    """PyTorch defines these kernels for real floating types only."""
    if not is_float(input._data.dtype):
        raise NotImplementedError(f'"{kernel}" not implemented for '
                                  f"'{_pretty(input._data.dtype)}'")


def _where(xp, cond, a, b):
    """``xp.where(cond, a, b)`` (on NumPy, the fast bit select for large arrays)."""
    return functions(xp).where(cond, a, b)


def _sigmoid(xp, x):
    """The overflow-free sigmoid (the op on the facade's Tensors)."""
    return functions(xp).sigmoid(x)


def _min0(xp, x):
    """``minimum(x, 0)``: keeps exp() of the unselected branch of a where finite, so
    that its double backward has no 0 * inf."""
    return functions(xp).clamp_max(x, 0)


def _softplus0(xp, x):
    """``log(1 + exp(x))`` without overflow, in forwards (their rules call the softplus
    op: differentiating the max and abs pieces would give 1, not 1/2, at 0)."""
    return _max_scalar(xp, x, 0) + xp.log1p(xp.exp(-xp.abs(x)))


def _negative_slope_check(slope, what):
    if slope < 0:
        if what == "elu":
            raise RuntimeError(
                "In-place elu backward calculation is triggered with a negative slope which "
                "is not supported. This is caused by calling in-place forward function with "
                "a negative slope, please call out-of-place version instead.")
        raise RuntimeError(
            "In-place leakyReLu backward calculation is triggered with a negative slope which "
            "is not supported. This is caused by calling in-place forward function with a "
            "negative slope, please call out-of-place version instead. File an issue at "
            "https://github.com/pytorch/pytorch if you do require supporting in-place "
            "leakRelu backward calculation with negative slope")


# ---- leaky_relu ---------------------------------------------------------------------------
def _leaky(xp, x, slope, lo, hi):
    """``x`` where positive, else ``x * slope`` (a number or noise in [lo, hi]): for
    slopes in (0, 1] that is ``maximum(x, x * slope)``, one branch-free pass (a slope of 0
    makes inf * 0 NaN, which ``maximum`` would pick over inf)."""
    if 0 < lo and hi <= 1:
        return xp.maximum(x, x * slope)
    return _where(xp, x > 0, x, x * slope)


def _leaky_fwd(xp, self, negative_slope):
    return _leaky(xp, self, negative_slope, negative_slope, negative_slope)


def _leaky_result_rule(xp, grad, result, negative_slope):
    _negative_slope_check(negative_slope, "leaky_relu")
    return _where(xp, result > 0, grad, grad * negative_slope)


_leaky_relu = defop(
    "leaky_relu", _leaky_fwd,
    vjp={"self": lambda xp, grad, self, negative_slope:
         _where(xp, self > 0, grad, grad * negative_slope)},
    jvp="elementwise", backward_reads="self")
_leaky_relu_ = defop("leaky_relu_", _leaky_fwd, vjp={"self": _leaky_result_rule},
                     jvp="elementwise", node="LeakyReluBackward1", backward_reads="self")


def leaky_relu(input, negative_slope=0.01, inplace=False):
    _floating(input, "leaky_relu_cpu")
    if inplace:
        return apply_inplace(_leaky_relu_, input, (), (_num(negative_slope),))
    return apply(_leaky_relu, (input,), (_num(negative_slope),))


def leaky_relu_(input, negative_slope=0.01):
    return leaky_relu(input, negative_slope, True)


# ---- elu, selu, celu ----------------------------------------------------------------------
def _elu_fwd(xp, self, alpha, scale, input_scale):
    neg = xp.expm1(self * (self <= 0) * input_scale)  # -0.0 kept; inf only where unused
    neg *= alpha * scale
    return _where(xp, self <= 0, neg, self * scale if scale != 1 else self)


def _elu_rule(xp, grad, self, alpha, scale, input_scale):
    d = xp.exp(_min0(xp, self) * input_scale) * (alpha * scale * input_scale)
    return _where(xp, self <= 0, grad * d, grad * scale)  # PyTorch's test: nan -> scale


def _elu_result_rule(xp, grad, result, alpha, scale, input_scale):
    """From the result: ``exp(x s) a c`` is ``(result + a c)`` on the negative side."""
    _negative_slope_check(alpha, "elu")
    return _where(xp, result <= 0, grad * (input_scale * (result + alpha * scale)),
                  grad * scale)


_elu = defop("elu", _elu_fwd, vjp={"self": _elu_rule}, jvp="elementwise")
_elu_ = defop("elu_", _elu_fwd, vjp={"self": _elu_result_rule}, jvp="elementwise",
              node="EluBackward1")
_celu = defop("celu", lambda xp, self, alpha: _elu_fwd(xp, self, alpha, 1.0, 1.0 / alpha),
              vjp={"self": lambda xp, grad, self, alpha:
                   _elu_rule(xp, grad, self, alpha, 1.0, 1.0 / alpha)},
              jvp="elementwise")
_celu_ = defop("celu_", lambda xp, self, alpha: _elu_fwd(xp, self, alpha, 1.0, 1.0 / alpha),
               vjp={"self": lambda xp, grad, result, alpha:
                    _elu_result_rule(xp, grad, result, alpha, 1.0, 1.0 / alpha)},
               jvp="elementwise", node="CeluBackward1")


def _elu_apply(input, inplace, alpha, scale=1.0, input_scale=1.0):
    _floating(input, "elu_cpu")
    attrs = (_num(alpha), scale, input_scale)
    return apply_inplace(_elu_, input, (), attrs) if inplace else apply(_elu, (input,), attrs)


def elu(input, alpha=1.0, inplace=False):
    return _elu_apply(input, inplace, alpha)


def elu_(input, alpha=1.0):
    return _elu_apply(input, True, alpha)


def selu(input, inplace=False):
    """``scale * elu(x, alpha)`` with the self-normalizing constants (EluBackward0)."""
    return _elu_apply(input, inplace, _SELU_ALPHA, _SELU_SCALE)


@register(method=False)
def selu_(input):
    return _elu_apply(input, True, _SELU_ALPHA, _SELU_SCALE)


def celu(input, alpha=1.0, inplace=False):
    _floating(input, "elu_cpu")
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    if inplace:
        return apply_inplace(_celu_, input, (), (_num(alpha),))
    return apply(_celu, (input,), (_num(alpha),))


@register(method=False)
def celu_(input, alpha=1.0):
    return celu(input, alpha, True)


_expose(lambda input: selu(input), "selu")
_expose(lambda input, alpha=1.0: celu(input, alpha), "celu")


# ---- hardtanh, relu6 ----------------------------------------------------------------------
def _hardtanh_fwd(xp, self, min_val, max_val):
    if self.dtype.kind in "iu":  # PyTorch converts the bounds to the integer type
        min_val, max_val = int(min_val), int(max_val)
    return xp.clip(self, min_val, max_val)


# The gradient is zero at the bounds too (PyTorch's hardtanh_backward), unlike clamp's;
# each mask is PyTorch's comparison, so that a nan input takes PyTorch's side.
_hardtanh = defop(
    "hardtanh", _hardtanh_fwd,
    vjp={"self": lambda xp, grad, self, min_val, max_val:
         _where(xp, xp.logical_or(self <= min_val, self >= max_val), 0, grad)},
    jvp="elementwise", backward_reads="self")


def _hardtanh_apply(input, min_val, max_val, inplace):
    if input._data.dtype.kind == "b":
        raise RuntimeError("Bool inputs not supported for hardtanh")
    if input._data.dtype.kind == "c":
        raise NotImplementedError("clamp is not supported for complex types")
    if inplace:
        return apply_inplace(_hardtanh, input, (), (_num(min_val), _num(max_val)))
    return apply(_hardtanh, (input,), (_num(min_val), _num(max_val)))


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return _hardtanh_apply(input, min_val, max_val, inplace)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    return _hardtanh_apply(input, min_val, max_val, True)


def relu6(input, inplace=False):
    """hardtanh(0, 6), as PyTorch computes and records it (HardtanhBackward0)."""
    return _hardtanh_apply(input, 0, 6, inplace)


relu_ = register(_pw.relu_, method=False)


def silu(input, inplace=False):
    """``nn_ops.silu`` with F's ``inplace`` (SiluBackward0 either way, as in PyTorch)."""
    if inplace:
        _nn.check_silu(input)
        return apply_inplace(_nn._silu, input, ())
    return _nn.silu(input)


# ---- softplus, mish, logsigmoid -----------------------------------------------------------
def _softplus_fwd(xp, self, beta, threshold):
    z = self * beta
    return _where(xp, z > threshold, self, _softplus0(xp, z) / beta)


_softplus = defop(
    "softplus", _softplus_fwd,
    vjp={"self": lambda xp, grad, self, beta, threshold:
         _where(xp, self * beta > threshold, grad, grad * _sigmoid(xp, self * beta))},
    jvp="elementwise")


def softplus(input, beta=1.0, threshold=20.0):
    _floating(input, "softplus_cpu")
    return apply(_softplus, (input,), (_num(beta), _num(threshold)))


def _mish_rule(xp, grad, self):
    t = xp.tanh(call(xp, _softplus, self, attrs=(1.0, 20.0)))
    return grad * (t + self * _sigmoid(xp, self) * (1 - t * t))


_mish = defop("mish", lambda xp, self: self * xp.tanh(_softplus0(xp, self)),
              vjp={"self": _mish_rule}, jvp="elementwise")


def mish(input, inplace=False):
    _floating(input, "mish_cpu")
    return apply_inplace(_mish, input, ()) if inplace else apply(_mish, (input,))


def _log_sigmoid_rule(xp, grad, self):
    """PyTorch's log_sigmoid_backward kernel: its forward's buffer b = exp(-|x|), kept in the
    input's dtype (rounded to half for float16), then ``1 - b / (1 + b)`` below 0 and
    ``b / (1 + b)`` above, times grad, in float32 rounded once. On the facade
    (create_graph) the smooth grad * sigmoid(-x), whose derivative is PyTorch's
    log_sigmoid_double_backward."""
    return functions(xp).kernel_or_composite(
        _log_sigmoid_kernel, lambda grad, self: grad * _sigmoid(xp, -self), grad, self)


def _log_sigmoid_kernel(grad, self):
    xp = get_array_module(self)
    b = _pw._rounded(xp, lambda a: xp.exp(-xp.abs(a)), self)
    half = _pw._is_half(self)
    if half:
        b, grad = xp.astype(b, "float32"), xp.astype(grad, "float32")
    q = b / (1 + b)
    d = _where(xp, self < 0, 1 - q, q) * grad
    return xp.astype(d, "float16") if half else d


_log_sigmoid = defop(
    "log_sigmoid",
    lambda xp, self: xp.minimum(self, 0) - xp.log1p(xp.exp(-xp.abs(self))),
    vjp={"self": _log_sigmoid_rule}, jvp="elementwise", upcast="forward")


def logsigmoid(input):
    _floating(input, "log_sigmoid_cpu")
    return apply(_log_sigmoid, (input,))


# ---- hardswish, hardsigmoid ---------------------------------------------------------------
def _hardswish_rule(xp, grad, self):
    inner = _where(xp, self > -3, grad * (self / 3 + 0.5), 0)
    return _where(xp, self < 3, inner, grad)


_hardswish = defop("hardswish", lambda xp, self: self * xp.clip(self + 3, 0, 6) / 6,
                   vjp={"self": _hardswish_rule}, jvp="elementwise")
_hardsigmoid = defop(
    "hardsigmoid", lambda xp, self: xp.clip(self + 3, 0, 6) / 6,
    vjp={"self": lambda xp, grad, self:
         _where(xp, xp.logical_and(self > -3, self < 3), grad * _SIXTH32, 0)},
    jvp="elementwise", backward_reads="self")


def hardswish(input, inplace=False):
    _floating(input, "hardswish_cpu")
    return apply_inplace(_hardswish, input, ()) if inplace else apply(_hardswish, (input,))


def hardsigmoid(input, inplace=False):
    _floating(input, "hardsigmoid_cpu")
    if inplace:
        return apply_inplace(_hardsigmoid, input, ())
    return apply(_hardsigmoid, (input,))


# ---- shrinks and threshold ----------------------------------------------------------------
_softshrink = defop(
    "softshrink", lambda xp, self, lambd: self - xp.clip(self, -lambd, lambd),
    vjp={"self": lambda xp, grad, self, lambd: _where(xp, xp.abs(self) <= lambd, 0, grad)},
    jvp="elementwise", backward_reads="self")
_hardshrink = defop(
    "hardshrink", lambda xp, self, lambd: _where(xp, xp.abs(self) <= lambd, 0, self),
    vjp={"self": lambda xp, grad, self, lambd: _where(xp, xp.abs(self) <= lambd, 0, grad)},
    jvp="elementwise", backward_reads="self")

# keyed by NumPy dtype: its ``.name`` costs microseconds a call in NumPy 2
_FINFO_MAX = {d.np: float(np_finfo(d.np).max) for d in (float16, bfloat16, float32, float64)}


def softshrink(input, lambd=0.5):
    _floating(input, "softshrink_check")
    dt = input._data.dtype
    top = _FINFO_MAX.get(dt)
    if top is not None and not 0 <= lambd <= top:
        raise RuntimeError(f"lambda must be in range [0, {top:g}] for input dtype "
                           f"{_pretty(dt)}, but found {lambd:g}")
    return apply(_softshrink, (input,), (_num(lambd),))


@register
def hardshrink(input, lambd=0.5):
    _floating(input, "hardshrink_cpu")
    return apply(_hardshrink, (input,), (_num(lambd),))


def _threshold_fwd(xp, self, threshold, value):
    if self.dtype.kind in "iu":  # PyTorch converts the scalars to the integer type
        threshold, value = int(threshold), int(value)
    out = _where(xp, self <= threshold, value, self)
    return out if out.dtype == self.dtype else out.astype(self.dtype)


def _threshold_rule(xp, grad, self, threshold):
    return _where(xp, self <= threshold, 0, grad)


_threshold = defop("threshold", _threshold_fwd, vjp={"self": _threshold_rule},
                   jvp="elementwise", backward_reads="self")
_threshold_ = defop("threshold_", _threshold_fwd, vjp={"self": _threshold_rule},
                    jvp="elementwise", node="ThresholdBackward1", backward_reads="self")


def threshold(input, threshold, value, inplace=False):
    """``value`` where ``input <= threshold``."""
    if input._data.dtype.kind in "cb":
        raise NotImplementedError(f'"threshold_cpu" not implemented for '
                                  f"'{_pretty(input._data.dtype)}'")
    if inplace:
        return apply_inplace(_threshold_, input, (), (_num(threshold), _num(value)))
    return apply(_threshold, (input,), (_num(threshold), _num(value)))


@register(method=False)
def threshold_(input, threshold, value):
    return apply_inplace(_threshold_, input, (), (threshold, value))


_expose(lambda input, threshold, value: apply(_threshold, (input,), (threshold, value)),
        "threshold")


# ---- composites (PyTorch builds them from other ops too) ----------------------------------
def softsign(input):
    return input / (input.abs() + 1)


def tanhshrink(input):
    return input - input.tanh()


# ---- prelu --------------------------------------------------------------------------------
_prelu_kernel = defop(
    "_prelu_kernel", lambda xp, self, weight: _where(xp, self > 0, self, self * weight),
    vjp={"self": lambda xp, grad, self, weight: _where(xp, self > 0, grad, weight * grad),
         "weight": lambda xp, grad, self: _where(xp, self > 0, 0, grad * self)},
    jvp="elementwise", backward_reads="self")


@register
@_autocast.policy("prelu")
def prelu(input, weight):
    """``max(0, x) + weight * min(0, x)``, one weight per channel (dim 1) or one for all."""
    _floating(input, "prelu_cpu")
    if weight.ndim > 1:
        raise RuntimeError("prelu: Expected `weight` to be a scalar or 1D tensor, but got: "
                           f"ndim = {weight.ndim}")
    n = weight.numel()
    if n != 1:
        if input.ndim == 0:
            raise RuntimeError("Not allow zero-dim input tensor.")
        channels = input.shape[1] if input.ndim > 1 else 1
        if channels != n:
            raise RuntimeError("Mismatch of parameter numbers and input channel size. Found "
                               f"parameter numbers = {n} and channel size = {channels}.")
    if weight.dtype != input.dtype:
        raise RuntimeError("prelu: Type promoting not supported. Got "
                           f"{_pretty(input._data.dtype)} and {_pretty(weight._data.dtype)}")
    if input.ndim != weight.ndim:  # PyTorch's view of the weight along dim 1
        shape = [1] * input.ndim
        if input.ndim > 1:
            shape[1] = n
        weight = weight.reshape(shape)
    return apply(_prelu_kernel, (input, weight))


# ---- glu ----------------------------------------------------------------------------------
def _halves(x, dim):
    h = x.shape[dim] // 2
    lead = (slice(None),) * dim
    return x[lead + (slice(0, h),)], x[lead + (slice(h, None),)]


def _glu_fwd(xp, self, dim):
    a, b = _halves(self, dim)
    return a * _sigmoid(xp, b)


def _glu_rule(xp, grad, self, dim):
    a, b = _halves(self, dim)
    s = _sigmoid(xp, b)
    ga = grad * s
    return xp.concatenate([ga, ga * a * (1 - s)], axis=dim)


def _glu_jvp(xp, self_t, self, dim):
    a, b = _halves(self, dim)
    at, bt = _halves(self_t, dim)
    s = _sigmoid(xp, b)
    return s * (at + a * (1 - s) * bt)


_glu = defop("glu", _glu_fwd, vjp={"self": _glu_rule}, jvp=_glu_jvp)


def glu(input, dim=-1):
    if input.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    _floating(input, "glu_cpu")
    d = _wrap_dim(dim, input.ndim)
    if input.shape[d] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size "
                           f"{input.shape[d]}")
    return apply(_glu, (input,), (d,))


# ---- rrelu ---------------------------------------------------------------------------------
# The noise is drawn for every element (uniform in [lower, upper]) and used where x <= 0,
# where PyTorch draws it there only; in eval mode there is none and the slope is the mean.
def _rrelu_fwd(xp, self, noise, lower, upper, training):
    return _leaky(xp, self, noise if training else (lower + upper) / 2, lower, upper)


def _rrelu_grad(xp, grad, x, noise, lower, upper, training):
    if training:  # PyTorch's noise is 1 where x <= 0 fails (a nan included)
        return _where(xp, x <= 0, grad * noise, grad)
    return _where(xp, x > 0, grad, grad * ((lower + upper) / 2))


def _rrelu_rule(xp, grad, self, noise, lower, upper, training):
    return _rrelu_grad(xp, grad, self, noise, lower, upper, training)


def _rrelu_result_rule(xp, grad, result, noise, lower, upper, training):
    if not training:
        _negative_slope_check((lower + upper) / 2, "leaky_relu")
    return _rrelu_grad(xp, grad, result, noise, lower, upper, training)


_rrelu = defop("rrelu_with_noise", _rrelu_fwd, inputs=("self", "noise"),
               vjp={"self": _rrelu_rule}, jvp="elementwise", backward_reads="self")
_rrelu_ = defop("rrelu_with_noise_", _rrelu_fwd, inputs=("self", "noise"),
                vjp={"self": _rrelu_result_rule}, jvp="elementwise",
                node="RreluWithNoiseBackward1", backward_reads="self")


def _rrelu_apply(input, lower, upper, training, inplace, generator):
    _floating(input, "leaky_relu_cpu")
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    noise = None
    if training:
        rng = (generator or default_generator)._rng
        noise = wrap(to_device(rng.uniform(lower, upper, input.shape).astype(input._data.dtype),
                               input.device))
    attrs = (_num(lower), _num(upper), training)
    if inplace:
        return apply_inplace(_rrelu_, input, (noise,), attrs)
    return apply(_rrelu, (input, noise), attrs)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    return _rrelu_apply(input, lower, upper, training, inplace, None)


@register(method=False)
def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    return _rrelu_apply(input, lower, upper, training, True, generator)


_expose(lambda input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None:
        _rrelu_apply(input, lower, upper, training, False, generator), "rrelu")


# ---- torch.softmax / Tensor.softmax -------------------------------------------------------
def _in_dtype(name, input, dim, dtype):
    """``input`` cast to ``dtype`` (when given), after PyTorch's check of ``dim``."""
    if not isinstance(dim, int) or isinstance(dim, bool):
        raise TypeError(f"{name}(): argument 'dim' (position 2) must be int, not "
                        f"{type(dim).__name__}")
    return input if dtype is None else input.to(dtype)


@register
def softmax(input, dim, dtype=None):
    dtype = dtype_arg(dtype, "softmax")
    return _nn.softmax(_in_dtype("softmax", input, dim, dtype), dim)


@register(method=False)
def _safe_softmax(input, dim, dtype=None):
    """``softmax``, but a slice of -inf alone gives zeros (PyTorch's, which sdpa uses:
    a query whose keys are all masked out attends to nothing)."""
    dtype = dtype_arg(dtype, "_safe_softmax")
    return _nn.safe_softmax(_in_dtype("_safe_softmax", input, dim, dtype), dim)


@register
def log_softmax(input, dim, dtype=None):
    dtype = dtype_arg(dtype, "log_softmax")
    return _nn.log_softmax(_in_dtype("log_softmax", input, dim, dtype), dim)

