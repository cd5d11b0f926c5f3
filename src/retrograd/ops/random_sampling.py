"""Random sampling from a tensor's values or into it: bernoulli, poisson, multinomial
and the in-place samplers (exponential_, geometric_, log_normal_, cauchy_), drawn from
a ``Generator``; bernoulli and poisson record a node whose gradient is zero, as
PyTorch's."""


import numpy

from .._dtype import is_float
from .. import _random
from .._tensor import Tensor, wrap
from ._registry import _pretty, apply, defop, register

__all__ = ["bernoulli", "bernoulli_", "poisson", "multinomial", "exponential_", "geometric_",
           "log_normal_", "cauchy_"]


_INT64 = numpy.dtype(numpy.int64)

def _gen(generator):
    return (generator or _random.default_generator)._rng


def _zero(xp, grad):
    return xp.zeros_like(grad)


_bernoulli = defop("bernoulli", lambda xp, self, rng:
                   (rng.random(self.shape) < self).astype(self.dtype),
                   vjp={"self": _zero}, jvp="elementwise")
_poisson = defop("poisson", lambda xp, self, rng: rng.poisson(self).astype(self.dtype),
                 vjp={"self": _zero}, jvp="elementwise")


@register
def bernoulli(input, p=None, *, generator=None, out=None):
    """1 with probability ``input`` (or ``p``) elementwise, else 0, in input's dtype."""
    rng = _gen(generator)
    if p is not None:
        return wrap((rng.random(input._data.shape) < p).astype(input._data.dtype))
    return apply(_bernoulli, (input,), (rng,))


@register(function=False)
def bernoulli_(self, p=0.5, *, generator=None):
    rng = _gen(generator)
    prob = p._data if isinstance(p, Tensor) else p
    return self.copy_(wrap((rng.random(self._data.shape) < prob).astype(self._data.dtype)))


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
    if not numpy.isfinite(a).all() or (a < 0).any():
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    rows = a.reshape(-1, a.shape[-1]).astype(numpy.float64)
    total = rows.sum(-1, keepdims=True)
    if (total <= 0).any():
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    rng = _gen(generator)
    if replacement:
        cdf = numpy.cumsum(rows / total, -1)
        u = rng.random((rows.shape[0], num_samples))
        out = numpy.stack([numpy.searchsorted(c, x, side="right") for c, x in zip(cdf, u,
                                                                                     strict=True)])
        out = numpy.minimum(out, rows.shape[1] - 1)
    else:  # Gumbel top-k: the order of exponential races, weights as rates
        keys = rng.exponential(size=rows.shape) / numpy.where(rows > 0, rows, numpy.nan)
        out = numpy.argsort(numpy.where(numpy.isnan(keys), numpy.inf, keys), -1,
                            kind="stable")[:, :num_samples]
    return wrap(out.reshape(a.shape[:-1] + (num_samples,)).astype(_INT64))


def _sampler(name, draw, doc):
    def fn(self, *args, generator=None):
        return self.copy_(wrap(numpy.asarray(draw((generator or _random.default_generator)._rng,
                                                  self._data.shape, *args))))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return register(fn, function=False)


exponential_ = _sampler("exponential_", lambda g, shape, lambd=1.0:
                        g.exponential(1 / lambd, shape), "Fill with Exp(lambd) samples.")
geometric_ = _sampler("geometric_", lambda g, shape, p: g.geometric(p, shape),
                      "Fill with Geometric(p) samples (trials to the first success).")
log_normal_ = _sampler("log_normal_", lambda g, shape, mean=1.0, std=2.0:
                       g.lognormal(mean, std, shape),
                       "Fill with samples whose log is N(mean, std**2).")
cauchy_ = _sampler("cauchy_", lambda g, shape, median=0.0, sigma=1.0:
                   median + sigma * g.standard_cauchy(shape),
                   "Fill with Cauchy(median, sigma) samples.")
