"""``Laplace(loc, scale)``: the double exponential."""

import math

from .._tensor import Size
from ..ops.dtype_info import finfo
from ._loc_scale import LocScale
from .distribution import Distribution

__all__ = ["Laplace"]


class Laplace(LocScale, Distribution):
    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Laplace, batch_shape, _instance, ("loc", "scale"))

    @property
    def mean(self):
        return self.loc

    @property
    def variance(self):
        return 2 * self.scale.pow(2)

    @property
    def stddev(self):
        return math.sqrt(2) * self.scale

    def rsample(self, sample_shape=Size()):
        """``loc - scale * sign(u) * log(1 - |u|)`` for ``u`` uniform on ``(-1, 1)``
        (from ``eps - 1``: ``u = -1`` would give an infinite sample)."""
        shape = self._extended_shape(sample_shape)
        u = self.loc.new_empty(shape).uniform_(finfo(self.loc.dtype).eps - 1, 1)
        return self.loc - self.scale * u.sign() * (-u.abs()).log1p()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -(2 * self.scale).log() - (value - self.loc).abs() / self.scale

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        d = value - self.loc
        return 0.5 - 0.5 * d.sign() * (-d.abs() / self.scale).expm1()

    def icdf(self, value):
        term = value - 0.5
        return self.loc - self.scale * term.sign() * (-2 * term.abs()).log1p()

    def entropy(self):
        return 1 + (2 * self.scale).log()
