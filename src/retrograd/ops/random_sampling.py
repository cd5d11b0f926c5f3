"""Random sampling from a tensor's values or into it: bernoulli, poisson, multinomial
and the in-place samplers (uniform_, normal_, exponential_, geometric_, log_normal_,
cauchy_, bernoulli_, random_), drawn from a ``Generator``; bernoulli and poisson record a node
whose gradient is zero, as PyTorch's. The generator is NumPy's, on the host
(``functions(xp).draw``), so a device draws the values the CPU draws; the arithmetic
on them runs where the tensor lives."""


import math
import operator
import warnings

from .._dtype import C10_NAMES, CPP_NAMES, float32, float64, int64, is_float, np_finfo, \
    np_iinfo
from .. import _random
from .._tensor import Tensor, wrap
from ..autograd._batched import INPLACE, RANDOMNESS, SAME_BATCHED, levels_of
from ..backend import get_array_module, host_array_module
from ..backend.functions import functions
from ._registry import _pretty, apply, defop, register
from .binary import _NYI, _no_derivative

__all__ = ["bernoulli", "bernoulli_", "poisson", "binomial", "_standard_gamma", "multinomial",
           "uniform_", "normal_", "exponential_", "geometric_", "log_normal_", "cauchy_",
           "random_"]


def _gen(generator):
    return (generator or _random.default_generator)._rng


_DIFFERENT_UNBATCHED = ("vmap: Cannot ask for different inplace randomness on an unbatched "
                        "tensor. This will appear like same randomness. If this is necessary "
                        "for your usage, please file an issue with functorch.")


def _refuse_same_batched(a):
    """vmap(randomness='same') draws one batch element's values for all, which cannot
    follow probabilities that vary over the batch: PyTorch refuses a batched input at any
    level whose randomness is 'same'."""
    if any(RANDOMNESS.get(level) == "same" for level in levels_of(a)):
        raise RuntimeError(SAME_BATCHED)


def _refuse_unbatched_fill(a):
    """vmap(randomness='different') gives each batch element its own values, which an
    in-place draw cannot write into a tensor without that batch: PyTorch refuses."""
    levels = levels_of(a)
    if any(r == "different" and level not in levels for level, r in RANDOMNESS.items()):
        raise RuntimeError(_DIFFERENT_UNBATCHED)


def _drawn(xp, rng, name, args, shape):
    """``rng.<name>(*args, shape)`` as an array of ``xp`` (drawn on the host)."""
    f = functions(xp)
    return f.constant(f.draw(rng, name, args, shape))


def _zero(xp, grad):
    return xp.zeros_like(grad)


def _below(xp, rng, p, like):
    """1 where a uniform draw is below probability ``p`` (a number or an array), else 0,
    in the dtype of array ``like``."""
    return xp.astype(_drawn(xp, rng, "random", (), like.shape) < p, like.dtype)


_bernoulli = defop("bernoulli", lambda xp, self, rng: _below(xp, rng, self, self),
                   vjp={"self": _zero}, jvp="elementwise")
_poisson = defop("poisson", lambda xp, self, rng:
                 xp.astype(_drawn(xp, rng, "poisson", (self,), self.shape), self.dtype),
                 vjp={"self": _zero}, jvp="elementwise")


def _gamma_fwd(xp, self, rng):
    """Gamma(alpha, 1) draws, as PyTorch's kernel: never below the dtype's smallest normal
    number (so a log of a sample is finite), that number where alpha is not positive or is
    NaN, inf where alpha is."""
    tiny = np_finfo(self.dtype).tiny
    finite = (self > 0) & (self < math.inf)
    x = _drawn(xp, rng, "standard_gamma", (xp.where(finite, self, 1),), self.shape)
    x = xp.where(finite, xp.maximum(x, tiny), tiny)
    return xp.astype(xp.where(self == math.inf, math.inf, x), self.dtype)


def _gamma_sample_grad(xp, grad, self, result):
    """d(sample)/d(alpha) at the sample's fixed quantile (implicit reparameterization):
    ``-(dP/dalpha) / p(x)``, P the regularized lower incomplete gamma and p the density.
    dP/dalpha by central differences of P in float64, over a step on alpha's own scale
    (alpha below 1, sqrt(alpha) above: P's width there): within 2e-7 of the quantile's
    exact derivative from alpha = 1e-4 to 1e7, where PyTorch's approximations are within
    1e-3."""
    f = functions(xp)
    a, x = xp.astype(self, float64.np), xp.astype(result, float64.np)
    h = 1e-5 * xp.minimum(a, xp.sqrt(a))
    dp = (f.special("gammainc", a + h, x) - f.special("gammainc", a - h, x)) / (2 * h)
    density = xp.exp((a - 1) * xp.log(x) - x - f.special("gammaln", a))
    return grad * xp.astype(-dp / density, grad.dtype)


_standard_gamma_op = defop("_standard_gamma", _gamma_fwd,
                           vjp={"self": _gamma_sample_grad}, node="StandardGammaBackward0")


@register(method=False)
def _standard_gamma(input, generator=None):
    """Gamma(``input``, 1) samples whose gradient in ``input`` is the implicit
    reparameterization's (``torch._standard_gamma``: Gamma, Beta and Dirichlet's
    ``rsample``)."""
    dt = input._data.dtype
    if not is_float(dt) or dt.itemsize < 4:
        raise NotImplementedError(f"\"gamma_cpu\" not implemented for '{_pretty(dt)}'")
    return apply(_standard_gamma_op, (input,), (_gen(generator),))


def _binomial_fwd(xp, count, prob, rng):
    """Binomial(count, prob) draws in count's dtype: a count below one draws 0 and a
    probability outside [0, 1] reads as the nearer end, as PyTorch's kernel."""
    n = xp.astype(xp.where(count > 0, xp.floor(count), 0), int64.np)
    p = xp.clip(xp.where(prob == prob, prob, 0), 0, 1)
    return xp.astype(_drawn(xp, rng, "binomial", (n, p), count.shape), count.dtype)


_binomial = defop("binomial", _binomial_fwd, inputs=("count", "prob"),
                  vjp={"count": _no_derivative("binomial"),
                       "prob": _no_derivative("binomial")}, node=_NYI)


@register(method=False)
def binomial(count, prob, generator=None):
    """Binomial draws of ``count`` trials of probability ``prob``, elementwise."""
    if not is_float(count._data.dtype):
        raise ValueError(f"binomial only supports floating-point dtypes for count, got: "
                         f"{_pretty(count._data.dtype)}")
    if prob._data.dtype != count._data.dtype:
        raise RuntimeError(f"Found dtype {_pretty(prob._data.dtype)} but expected "
                           f"{_pretty(count._data.dtype)}")
    return apply(_binomial, (count, prob), (_gen(generator),))


@register
def bernoulli(input, p=None, *, generator=None, out=None):
    """1 with probability ``input`` (or ``p``) elementwise, else 0, in input's dtype."""
    _refuse_same_batched(input._data)
    rng = _gen(generator)
    if p is not None:
        return wrap(_below(get_array_module(input._data), rng, p, input._data))
    return apply(_bernoulli, (input,), (rng,))


@register(function=False)
def bernoulli_(self, p=0.5, *, generator=None):
    prob = p._data if isinstance(p, Tensor) else p
    _refuse_same_batched(prob)
    if any(RANDOMNESS[level] != "error" for level in levels_of(prob) - levels_of(self._data)):
        raise RuntimeError(INPLACE.replace("arithmetic", "bernoulli"))  # ('error': the draw's)
    return _fill(self, generator, lambda d: d("random") < prob)


@register(method=False)
def poisson(input, generator=None):
    """A Poisson sample with rate ``input`` elementwise."""
    return apply(_poisson, (input,), (_gen(generator),))


@register
def multinomial(input, num_samples, replacement=False, *, generator=None, out=None):
    """``num_samples`` category indices per row, drawn with probabilities proportional to
    the (non-negative) weights in ``input``."""
    a = input._data
    if not is_float(a.dtype):
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: "
                           f"{_pretty(a.dtype)}")
    if a.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    if not replacement and num_samples > a.shape[-1]:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without "
                           "replacement")
    xp = get_array_module(a)
    f = functions(xp)
    if f.any_true(~xp.isfinite(a) | (a < 0)):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    rows = xp.astype(xp.reshape(a, (-1, a.shape[-1])), float64.np)
    total = xp.sum(rows, -1, keepdims=True)
    if f.any_true(total <= 0):
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    rng = _gen(generator)
    if replacement:
        cdf = xp.cumsum(rows / total, -1)
        u = _drawn(xp, rng, "random", (), (rows.shape[0], num_samples))
        out = xp.stack([xp.searchsorted(c, x, side="right") for c, x in zip(cdf, u,
                                                                               strict=True)])
        out = xp.minimum(out, rows.shape[1] - 1)
    else:  # Gumbel top-k: the order of exponential races, weights as rates
        keys = _drawn(xp, rng, "exponential", (1.0,), rows.shape) / xp.where(rows > 0, rows,
                                                                             math.nan)
        out = xp.argsort(xp.where(xp.isnan(keys), math.inf, keys), -1,
                         kind="stable")[:, :num_samples]
    return wrap(xp.astype(xp.reshape(out, a.shape[:-1] + (num_samples,)), int64.np))


def _fill(self, generator, draw):
    """Write ``draw(d)`` into ``self`` in place, where ``d(name, *args)`` draws
    ``rng.<name>(*args)`` in self's shape from ``generator``. Under
    vmap(randomness='different'), an unbatched ``self`` cannot hold a draw per element."""
    _refuse_unbatched_fill(self._data)
    xp, rng, shape = get_array_module(self._data), _gen(generator), self._data.shape
    return self.copy_(wrap(draw(lambda name, *args: _drawn(xp, rng, name, args, shape))))


def _require(ok, message):
    if not ok:
        raise RuntimeError(message)


@register(function=False)
def uniform_(self, from_=0.0, to=1.0, *, generator=None, **kwargs):
    """Fill with U[from, to) samples; ``from`` may be passed by keyword, as in PyTorch."""
    from_ = kwargs.pop("from", from_)
    if kwargs:
        raise TypeError(f"uniform_() got an unexpected keyword argument {next(iter(kwargs))!r}")
    _check_uniform_bounds(self._data.dtype, float(from_), float(to))
    return _fill(self, generator, lambda d: d("uniform", from_, to))


def _check_uniform_bounds(dtype, lo, hi):
    """PyTorch's checks of uniform_'s range: a floating dtype, both ends and the width
    within its finite range, ``from <= to``."""
    if not is_float(dtype):
        raise NotImplementedError(f"\"check_uniform_bounds\" not implemented for "
                                  f"'{_pretty(dtype)}'")
    big = float(np_finfo(dtype).max)
    for name, v in (("from", lo), ("to", hi)):
        _require(-big <= v <= big, f"{name} is out of bounds for "
                                   f"{C10_NAMES.get(dtype.name, dtype.name)}")
    _require(lo <= hi, f"uniform_ expects to return a [from, to) range, but found "
                       f"from={lo:g} > to={hi:g}")
    _require(hi - lo <= big, f"uniform_ expects to-from <= std::numeric_limits<"
                             f"{_pretty(dtype)}>::max(), but found to={hi:g} and from={lo:g} "
                             f"which result in to-from to exceed the limit")


@register(function=False)
def normal_(self, mean=0.0, std=1.0, *, generator=None):
    """Fill with N(mean, std**2) samples."""
    _require(std >= 0, f"normal expects std >= 0.0, but found std {std:g}")
    return _fill(self, generator, lambda d: d("normal", mean, std))


@register(function=False)
def exponential_(self, lambd=1.0, *, generator=None):
    """Fill with Exp(lambd) samples."""
    _require(lambd > 0, f"exponential_ expects lambda > 0.0, but found lambda={lambd:g}")
    return _fill(self, generator, lambda d: d("exponential", 1 / lambd))


@register(function=False)
def geometric_(self, p, *, generator=None):
    """Fill with Geometric(p) samples (trials to the first success)."""
    _require(0 < p < 1, f"geometric_ expects p to be in (0, 1), but got p={p:g}")
    return _fill(self, generator, lambda d: d("geometric", p))


@register(function=False)
def log_normal_(self, mean=1.0, std=2.0, *, generator=None):
    """Fill with samples whose log is N(mean, std**2)."""
    _require(std > 0, f"log_normal_ expects std > 0.0, but found std={std:g}")
    return _fill(self, generator, lambda d: d("lognormal", mean, std))


@register(function=False)
def cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
    """Fill with Cauchy(median, sigma) samples."""
    _require(sigma > 0, f"cauchy_ expects sigma > 0.0, but found sigma={sigma:g}")
    return _fill(self, generator, lambda d: median + sigma * d("standard_cauchy"))


# ---- random_: integers drawn uniformly, checked as PyTorch's DistributionTemplates.h ------

_RANDOM_SIGNATURES = ("*, torch.Generator generator = None",
                      "int from, int to, *, torch.Generator generator = None",
                      "int to, *, torch.Generator generator = None")
_INT64_MIN, _INT64_MAX = -2 ** 63, 2 ** 63 - 1
_FULL_RANGE = ("int64", "float32", "float64", "bfloat16")  # what a 64-bit draw fills


@register(function=False)
def random_(self, *args, generator=None, **kwargs):
    """Fill with integers drawn uniformly from [from, to): ``random_(to)``,
    ``random_(from, to)``; ``to=None`` (or ``random_()``, from 0) runs to the dtype's
    largest value, for floats to ``2**mantissa`` so that every integer is exact.

    >>> _ = retrograd.manual_seed(0); retrograd.zeros(3).random_(5)
    tensor([4., 3., 2.])
    """
    lo, hi = _random_args(args, kwargs)
    dtype, empty = self._data.dtype, self._data.size == 0
    if lo is not None and (hi is not None or lo != _INT64_MIN):
        lo, top = _checked_random_range(dtype, lo, hi)
    if empty:  # (checked, and no kernel runs)
        return self
    if lo is None:  # random_()
        if dtype.kind == "c":
            raise NotImplementedError(f"\"random_kernel_cpu\" not implemented for "
                                      f"'{_pretty(dtype)}'")
        lo, top = 0, _largest(dtype)
    elif hi is None and lo == _INT64_MIN:  # every int64, cast to the dtype
        _check_full_range(dtype)
        top = _INT64_MAX
    return _fill(self, generator, lambda d: d("integers", lo, top + 1))


def _random_args(args, kwargs):
    """random_'s overloads, ``()``, ``(to)`` and ``(from, to)``, as ``(from, to)`` (both
    None for ``()``; ``to`` None for ``random_(from, None)``), with PyTorch's TypeErrors."""
    for k in kwargs:
        if k not in ("from", "to"):
            raise TypeError(f"random_() got an unexpected keyword argument {k!r}")
    if len(args) > 2:
        raise TypeError(f"random_() takes 2 positional arguments but {len(args)} were given")
    if not args and not kwargs:
        return None, None
    names = ("to",) if len(args) == 1 and not kwargs else ("from", "to")[:len(args)]
    named = dict(zip(names, args, strict=True))
    for k, v in kwargs.items():
        if k in named:
            raise TypeError(f"random_() got multiple values for argument {k!r}")
        named[k] = v
    if named.keys() == {"from", "to"}:
        to = named["to"]
        return (_int64_arg(named["from"], args, kwargs),
                None if to is None else _int64_arg(to, args, kwargs))
    if named.keys() == {"to"} and named["to"] is not None:
        return 0, _int64_arg(named["to"], args, kwargs)
    raise _invalid_random(args, kwargs)


def _int64_arg(v, args, kwargs):
    """An ``int`` argument as PyTorch's parser reads it: anything with ``__index__`` but a
    bool, within int64."""
    try:
        if isinstance(v, bool):  # (NumPy's bool has no __index__)
            raise TypeError
        v = operator.index(v)
    except TypeError:
        raise _invalid_random(args, kwargs) from None
    if not _INT64_MIN <= v <= _INT64_MAX:
        raise ValueError("Overflow when unpacking long long")
    return v


def _invalid_random(args, kwargs):
    name = lambda v: "Tensor" if isinstance(v, Tensor) else type(v).__name__  # noqa: E731
    got = ", ".join([name(a) for a in args] +  # (keywords last first, as PyTorch lists them)
                    [f"{k}={name(v)}" for k, v in reversed(kwargs.items())])
    got += ", " if kwargs and not args else ""
    return TypeError(f"random_() received an invalid combination of arguments - got ({got}), "
                     "but expected one of:\n" + "".join(f" * ({s})\n" for s in
                                                        _RANDOM_SIGNATURES))


def _largest(dtype):
    """The top of random_'s default range: 2**digits for a float (the largest integer
    below which all are exact), the largest value for an integer, 1 for bool."""
    if is_float(dtype):
        return min(2 ** _digits(dtype), _INT64_MAX)
    return 1 if dtype.kind == "b" else int(np_iinfo(dtype).max)


def _digits(dtype):
    return int(np_finfo(dtype).nmant) + 1


def _check_full_range(dtype):
    if dtype.name in _FULL_RANGE:
        return
    if dtype.kind in "iu":
        raise RuntimeError("random_full_64_bits_range_kernel_cpu handles only int64, double, "
                           "float and bfloat16")
    raise NotImplementedError(f"\"random_full_64_bits_range_kernel_cpu\" not implemented for "
                              f"'{_pretty(dtype)}'")


def _checked_random_range(dtype, lo, hi):
    """``[lo, top]``, the integers random_(from=lo, to=hi) draws for ``dtype`` (``hi`` None:
    up to the dtype's largest), after PyTorch's checks. A float's ends move inwards to the
    nearest integers that stay inside once rounded to the dtype."""
    if hi is not None:
        _require(lo < hi, f"random_ expects 'from' to be less than 'to', but got from={lo} >= "
                          f"to={hi}")
        if is_float(dtype):
            lo, hi = _float_from(dtype, lo), _float_to(dtype, hi)
            _require(lo < hi, f"random_ expects 'from' casted to dtype to be less than 'to' "
                              f"casted to dtype, but got from={lo} >= to={hi}")
        top = hi - 1
    elif is_float(dtype) or dtype.kind in "iub":
        top = _largest(dtype)
        if is_float(dtype):
            lo = _float_from(dtype, lo)
            _require(lo < top, f"random_ expects 'from' casted to dtype to be less than or "
                               f"equal to 'to_inc' casted to dtype, but got from={lo} > "
                               f"to_inc={top}")
    else:
        raise RuntimeError("random_from_to_impl handles only integral, floating-point and "
                           "boolean types")
    _check_random_bounds(dtype, lo, top)
    return lo, top


def _rounded(dtype, v):
    """``v`` (an int64) rounded to float ``dtype`` and back to int64 as C++ casts it (Half
    and BFloat16 are made from a float; what int64 cannot hold becomes its minimum, as on
    x86)."""
    wide = float64.np if dtype == float64.np else float32.np
    x = float(host_array_module().asarray(v, dtype=int64.np).astype(wide).astype(dtype))
    return int(x) if -2.0 ** 63 <= x < 2.0 ** 63 else _INT64_MIN


def _float_from(dtype, lo):
    """The smallest integer at or above ``lo`` that stays at or above it in ``dtype``."""
    if lo == _INT64_MAX:  # (where PyTorch's int64 arithmetic overflows, and never ends)
        return lo
    up = _rounded(dtype, lo + 1)
    if up < lo:
        lo = up + (1 << (abs(lo + 1).bit_length() - 1 - _digits(dtype) + 1))
    return lo


def _float_to(dtype, hi):
    """An exclusive end whose predecessor stays below ``hi`` once rounded to ``dtype``."""
    down = _rounded(dtype, hi - 1)
    if down >= hi:
        hi = down - (1 << (abs(hi - 1).bit_length() - 1 - _digits(dtype) + 1))
    return hi


def _check_random_bounds(dtype, lo, top):
    """Both ends within the dtype's range; for a float, a warning where they pass
    ``2**digits``, beyond which not every integer is a value of the dtype."""
    if dtype.kind == "c":
        raise RuntimeError("check_random_bounds handles only integral, floating-point and "
                           "boolean types")
    name = CPP_NAMES[dtype.name]
    if is_float(dtype):
        low, high = -float(np_finfo(dtype).max), float(np_finfo(dtype).max)
    elif dtype.kind == "b":
        low, high = 0, 1
    else:
        low, high = int(np_iinfo(dtype).min), int(np_iinfo(dtype).max)
    for label, v in (("from", lo), ("to - 1", top)):
        _require(low <= v <= high, f"{label} is out of bounds for {name}")
    if is_float(dtype):
        digits = _digits(dtype)
        for label, v in (("from", lo), ("to - 1", top)):
            if not -(1 << digits) <= v <= 1 << digits:
                warnings.warn(f"{label} is out of bounds [-(2^{digits}), 2^{digits}]. Due to "
                              f"precision limitations {name} can support discrete uniform "
                              f"distribution only within this range. This warning will become "
                              f"an error in version 1.7 release, please fix the code in "
                              f"advance", UserWarning, stacklevel=4)
