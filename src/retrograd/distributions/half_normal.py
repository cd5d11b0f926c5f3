"""Folded distributions: ``|x|`` for ``x`` from a distribution symmetric about 0 (its
density doubled on the half line), and ``HalfNormal(scale)``, the folded Normal."""

import math

from .._creation import as_tensor
from . import constraints
from .normal import Normal
from .transformed_distribution import TransformedDistribution
from .transforms import AbsTransform

__all__ = ["HalfNormal"]


class Folded(TransformedDistribution):
    """``|x|`` for ``x`` from ``base`` (symmetric about 0, with a ``scale``)."""

    support = constraints.nonnegative
    has_rsample = True
    _value_in_scale_dtype = False  # (PyTorch's HalfCauchy casts the value; HalfNormal not)

    def __init__(self, base, validate_args=None):
        super().__init__(base, AbsTransform(), validate_args=validate_args)

    @property
    def scale(self):
        return self.base_dist.scale

    @property
    def mode(self):
        return self.scale.new_zeros(self.scale.shape)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        if self._value_in_scale_dtype:
            value = as_tensor(value, dtype=self.scale.dtype, device=self.scale.device)
        log_prob = self.base_dist.log_prob(value) + math.log(2)
        return log_prob.where(value >= 0, -math.inf)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob):
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self):
        return self.base_dist.entropy() - math.log(2)


class HalfNormal(Folded):
    arg_constraints = {"scale": constraints.positive}

    def __init__(self, scale, validate_args=None):
        super().__init__(Normal(0, scale, validate_args=False), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return super().expand(batch_shape, _instance=self._get_checked_instance(
            HalfNormal, _instance))

    @property
    def mean(self):
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def variance(self):
        return self.scale.pow(2) * (1 - 2 / math.pi)
