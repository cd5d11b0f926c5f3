"""Random sampling from a tensor's values or into it: bernoulli, poisson, multinomial
and the in-place samplers (uniform_, normal_, exponential_, geometric_, log_normal_,
cauchy_, bernoulli_), drawn from a ``Generator``; bernoulli and poisson record a node
whose gradient is zero, as PyTorch's. The generator is NumPy's, on the host
(``functions(xp).draw``), so a device draws the values the CPU draws; the arithmetic
on them runs where the tensor lives."""


import math

from .._dtype import C10_NAMES as _C10_NAMES, float64, int64, is_float, np_finfo
from .. import _random
from .._tensor import Tensor, wrap
from ..autograd._batched import INPLACE, RANDOMNESS, SAME_BATCHED, levels_of
from ..backend import get_array_module
from ..backend.functions import functions
from ._registry import _pretty, apply, defop, register

__all__ = ["bernoulli", "bernoulli_", "poisson", "multinomial", "uniform_", "normal_",
           "exponential_", "geometric_", "log_normal_", "cauchy_"]


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
                                   f"{_C10_NAMES.get(dtype.name, dtype.name)}")
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
