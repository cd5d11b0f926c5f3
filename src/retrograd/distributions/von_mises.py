"""``VonMises(loc, concentration)``: the circular normal law on [-pi, pi), density
``exp(kappa cos(x - loc)) / (2 pi I0(kappa))``. The Bessel functions are the polynomial
approximations of Abramowitz and Stegun (9.8.1-9.8.4, relative error below 2e-7), as
PyTorch's, so densities agree with it; draws come from Best and Fisher's (1979) rejection
sampler, in float64."""

import math

from .._creation import empty, rand, zeros
from .._tensor import Size
from .._dtype import bool as bool_, float64
from ..autograd.grad_mode import no_grad
from ..ops.binary import where
from . import constraints
from .distribution import Distribution
from .utils import lazy_property

__all__ = ["VonMises"]

# ascending powers of (x / 3.75) ** 2 below 3.75, of 3.75 / x above (then scaled by
# exp(x) / sqrt(x))
_SMALL = ((1.0, 3.5156229, 3.0899424, 1.2067492, 0.2659732, 0.360768e-1, 0.45813e-2),
          (0.5, 0.87890594, 0.51498869, 0.15084934, 0.2658733e-1, 0.301532e-2, 0.32411e-3))
_LARGE = ((0.39894228, 0.1328592e-1, 0.225319e-2, -0.157565e-2, 0.916281e-2, -0.2057706e-1,
           0.2635537e-1, -0.1647633e-1, 0.392377e-2),
          (0.39894228, -0.3988024e-1, -0.362018e-2, 0.163801e-2, -0.1031555e-1,
           0.2282967e-1, -0.2895312e-1, 0.1787654e-1, -0.420059e-2))


def _polynomial(y, coefficients):
    """Horner's rule, the coefficients in ascending powers."""
    result = coefficients[-1]
    for c in reversed(coefficients[:-1]):
        result = c + y * result
    return result


def _log_bessel_i(x, order):
    """``log I_order(x)`` for order 0 or 1, x > 0."""
    small = _polynomial((x / 3.75) ** 2, _SMALL[order])
    if order == 1:
        small = x.abs() * small
    large = x - 0.5 * x.log() + _polynomial(3.75 / x, _LARGE[order]).log()
    return where(x < 3.75, small.log(), large)


class VonMises(Distribution):
    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc, concentration, validate_args=None):
        self._init_params(validate_args, loc=loc, concentration=concentration)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(VonMises, batch_shape, _instance, ("loc", "concentration"))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return (self.concentration * (value - self.loc).cos() - math.log(2 * math.pi)
                - _log_bessel_i(self.concentration, 0))

    @lazy_property
    def _proposal_r(self):
        kappa = self.concentration.to(float64)
        tau = 1 + (1 + 4 * kappa ** 2).sqrt()
        rho = (tau - (2 * tau).sqrt()) / (2 * kappa)
        return where(kappa < 1e-5, 1 / kappa + kappa, (1 + rho ** 2) / (2 * rho))

    def sample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        with no_grad():
            loc, kappa = self.loc.to(float64), self.concentration.to(float64)
            r = self._proposal_r
            x = empty(shape, dtype=float64)
            done = zeros(shape, dtype=bool_)
            while not done.all():
                u1, u2, u3 = rand((3,) + tuple(shape), dtype=float64).unbind()
                z = (math.pi * u1).cos()
                f = (1 + r * z) / (r + z)
                c = kappa * (r - f)
                accept = ((c * (2 - c) - u2) > 0) | ((c / u2).log() + 1 - c >= 0)
                x = where(accept & ~done, (u3 - 0.5).sign() * f.acos(), x)
                done = done | accept
            return ((x + math.pi + loc) % (2 * math.pi) - math.pi).to(self.loc.dtype)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        """The circular variance ``1 - I1(kappa) / I0(kappa)``."""
        kappa = self.concentration
        return 1 - (_log_bessel_i(kappa, 1) - _log_bessel_i(kappa, 0)).exp()
