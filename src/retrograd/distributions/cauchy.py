"""``Cauchy(loc, scale)``, and ``HalfCauchy(scale)`` (its absolute value about 0)."""

import math

from .._creation import full
from .._tensor import Size
from . import constraints
from ._loc_scale import LocScale
from .distribution import Distribution
from .half_normal import Folded

__all__ = ["Cauchy", "HalfCauchy"]


class Cauchy(LocScale, Distribution):
    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Cauchy, batch_shape, _instance, ("loc", "scale"))

    def _filled(self, value):
        return full(self._extended_shape(), value, dtype=self.loc.dtype, device=self.loc.device)

    @property
    def mean(self):
        return self._filled(math.nan)

    @property
    def variance(self):
        return self._filled(math.inf)

    def rsample(self, sample_shape=Size()):
        eps = self.loc.new_empty(self._extended_shape(sample_shape)).cauchy_()
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return (-math.log(math.pi) - self.scale.log()
                - (((value - self.loc) / self.scale) ** 2).log1p())

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return ((value - self.loc) / self.scale).atan() / math.pi + 0.5

    def icdf(self, value):
        return (math.pi * (value - 0.5)).tan() * self.scale + self.loc

    def entropy(self):
        return math.log(4 * math.pi) + self.scale.log()


class HalfCauchy(Folded):
    arg_constraints = {"scale": constraints.positive}
    _value_in_scale_dtype = True

    def __init__(self, scale, validate_args=None):
        super().__init__(Cauchy(0, scale, validate_args=False), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return super().expand(batch_shape, _instance=self._get_checked_instance(
            HalfCauchy, _instance))

    @property
    def mean(self):
        return full(self._extended_shape(), math.inf, dtype=self.scale.dtype,
                    device=self.scale.device)

    @property
    def variance(self):
        return self.base_dist.variance
