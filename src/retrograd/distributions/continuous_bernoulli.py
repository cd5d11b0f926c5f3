"""``ContinuousBernoulli(probs=None, logits=None, lims=(0.499, 0.501))``: the density on
[0, 1] proportional to ``p ** x (1 - p) ** (1 - x)`` (Loaiza-Ganem and Cunningham, 2019).
Its normalizer and moments divide by ``log(p / (1 - p))``, which vanishes at p = 1/2: for
``probs`` inside ``lims`` they take Taylor expansions around 1/2 instead, and the CDF and
its inverse those of the uniform density there."""

import math
from numbers import Number

from .._creation import ones_like, rand, zeros_like
from .._tensor import Size
from ..autograd.grad_mode import no_grad
from ..nn._functional_losses import binary_cross_entropy_with_logits
from ..ops.binary import where
from . import constraints
from ._probs_logits import BinaryParams, one_of
from .exp_family import ExponentialFamily
from .utils import broadcast_all, clamp_probs, lazy_property, logits_to_probs

__all__ = ["ContinuousBernoulli"]


class ContinuousBernoulli(BinaryParams, ExponentialFamily):
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    _mean_carrier_measure = 0
    has_rsample = True

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501), validate_args=None):
        self._lims = lims
        if one_of(probs, logits) is probs:
            # checked when validate_args is given at all (False too), then clamped into
            # (0, 1), before the default validation sees it: as PyTorch does
            (t,) = broadcast_all(probs)
            if validate_args is not None and not constraints.unit_interval.check(t).all():
                raise ValueError("The parameter probs has invalid values")
            clamped = clamp_probs(t)
            probs = clamped.item() if isinstance(probs, Number) else clamped  # (no batch)
        self._init_binary(probs, logits, validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expand_binary(ContinuousBernoulli, batch_shape, _instance)
        new._lims = self._lims
        return new

    @lazy_property
    def probs(self):
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    def _outside_unstable_region(self):
        return (self.probs <= self._lims[0]) | (self.probs > self._lims[1])

    def _cut_probs(self):
        """``probs``, those inside ``lims`` replaced by its lower end (the closed forms'
        branch is computed everywhere, then not taken there)."""
        return where(self._outside_unstable_region(), self.probs,
                     self._lims[0] * ones_like(self.probs))

    def _cont_bern_log_norm(self):
        p = self._cut_probs()
        below = where(p <= 0.5, p, zeros_like(p))
        above = where(p >= 0.5, p, ones_like(p))
        log_norm = ((-p).log1p() - p.log()).abs().log() - where(
            p <= 0.5, (-2.0 * below).log1p(), (2.0 * above - 1.0).log())
        x = (self.probs - 0.5).pow(2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return where(self._outside_unstable_region(), log_norm, taylor)

    @property
    def mean(self):
        p = self._cut_probs()
        mus = p / (2.0 * p - 1.0) + 1.0 / ((-p).log1p() - p.log())
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x.pow(2)) * x
        return where(self._outside_unstable_region(), mus, taylor)

    @property
    def stddev(self):
        return self.variance.sqrt()

    @property
    def variance(self):
        p = self._cut_probs()
        variances = (p * (p - 1.0) / (1.0 - 2.0 * p).pow(2)
                     + 1.0 / ((-p).log1p() - p.log()).pow(2))
        x = (self.probs - 0.5).pow(2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return where(self._outside_unstable_region(), variances, taylor)

    def sample(self, sample_shape=Size()):
        u = rand(self._extended_shape(sample_shape), dtype=self.probs.dtype)
        with no_grad():
            return self.icdf(u)

    def rsample(self, sample_shape=Size()):
        return self.icdf(rand(self._extended_shape(sample_shape), dtype=self.probs.dtype))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return (-binary_cross_entropy_with_logits(logits, value, reduction="none")
                + self._cont_bern_log_norm())

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        p = self._cut_probs()
        cdfs = (p.pow(value) * (1.0 - p).pow(1.0 - value) + p - 1.0) / (2.0 * p - 1.0)
        inside = where(self._outside_unstable_region(), cdfs, value)
        return where(value <= 0.0, zeros_like(value),
                     where(value >= 1.0, ones_like(value), inside))

    def icdf(self, value):
        p = self._cut_probs()
        return where(self._outside_unstable_region(),
                     ((-p + value * (2.0 * p - 1.0)).log1p() - (-p).log1p())
                     / (p.log() - (-p).log1p()), value)

    def entropy(self):
        log0, log1 = (-self.probs).log1p(), self.probs.log()
        return self.mean * (log0 - log1) - self._cont_bern_log_norm() - log0

    @property
    def _natural_params(self):
        return (self.logits,)

    def _log_normalizer(self, x):
        outside = (x <= self._lims[0] - 0.5) | (x > self._lims[1] - 0.5)
        cut = where(outside, x, (self._lims[0] - 0.5) * ones_like(x))
        log_norm = cut.expm1().abs().log() - cut.abs().log()
        taylor = 0.5 * x + x.pow(2) / 24.0 - x.pow(4) / 2880.0
        return where(outside, log_norm, taylor)
