"""``GeneralizedPareto(loc, scale, concentration)``: the law of exceedances over a high
threshold, ``loc + scale * ((1 - u) ** -xi - 1) / xi`` for ``u`` uniform (``loc - scale *
log(1 - u)``, an Exponential, at ``xi = 0``), its support bounded above when ``xi < 0``."""

import math

from .._creation import ones_like, rand
from .._tensor import Size
from ..ops.binary import where
from ..ops.comparison import isclose
from . import constraints
from .distribution import Distribution

__all__ = ["GeneralizedPareto"]


class GeneralizedPareto(Distribution):
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive,
                       "concentration": constraints.real}
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args=None):
        self._init_params(validate_args, loc=loc, scale=scale, concentration=concentration)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(GeneralizedPareto, batch_shape, _instance,
                                   ("loc", "scale", "concentration"))

    def _safe_concentration(self):
        """(xi == 0 as PyTorch's ``isclose`` tells it, xi with 1 where it is 0): the
        closed forms divide by xi, and take their limit at 0 apart."""
        xi = self.concentration
        zero = isclose(xi, xi.new_zeros(()))
        return zero, where(zero, ones_like(xi), xi)

    def rsample(self, sample_shape=Size()):
        u = rand(self._extended_shape(sample_shape), dtype=self.loc.dtype)
        return self.icdf(u)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        zero, xi = self._safe_concentration()
        y = 1 / xi + ones_like(z)
        tail = where(y == 0, y, y * (xi * z).log1p())  # (xi = -1: a uniform density)
        return -self.scale.log() - where(zero, z, tail)

    def log_survival_function(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        zero, xi = self._safe_concentration()
        return where(zero, -z, -(xi * z).log1p() / xi)

    def log_cdf(self, value):
        return (-self.log_survival_function(value).exp()).log1p()

    def cdf(self, value):
        return self.log_cdf(value).exp()

    def icdf(self, value):
        zero, xi = self._safe_concentration()
        log_u = (-value).log1p()
        return where(zero, self.loc - self.scale * log_u,
                     self.loc + self.scale / xi * (-xi * log_u).expm1())

    @property
    def mean(self):
        xi = self.concentration
        valid = xi < 1
        return where(valid, self.loc + self.scale / (1 - where(valid, xi, 0.5)), math.nan)

    @property
    def variance(self):
        xi = self.concentration
        valid = xi < 0.5
        safe = where(valid, xi, 0.25)
        return where(valid, self.scale ** 2 / ((1 - safe) ** 2 * (1 - 2 * safe)), math.nan)

    @property
    def mode(self):
        return self.loc

    def entropy(self):
        return (self.scale.log() + self.concentration + 1).broadcast_to(self._batch_shape)

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        xi = self.concentration
        return constraints.interval(self.loc, where(xi < 0, self.loc - self.scale / xi,
                                                    math.inf))
