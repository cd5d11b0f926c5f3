"""``Binomial(total_count=1, probs=None, logits=None)``: successes in ``total_count``
trials."""

from .._creation import arange
from .._tensor import Size
from ..autograd.grad_mode import no_grad
from ..ops.random_sampling import binomial
from . import constraints
from .distribution import Distribution
from ._probs_logits import BinaryParams

__all__ = ["Binomial"]


def _clamp_by_zero(x):
    """max(x, 0) with a gradient of 1/2 at 0."""
    return (x.clamp(min=0) + x - x.clamp(max=0)) / 2


class Binomial(BinaryParams, Distribution):
    arg_constraints = {"total_count": constraints.nonnegative_integer,
                       "probs": constraints.unit_interval, "logits": constraints.real}
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        self._init_binary(probs, logits, validate_args, total_count=total_count)

    def expand(self, batch_shape, _instance=None):
        return self._expand_binary(Binomial, batch_shape, _instance, ("total_count",))

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self):
        return self.total_count * self.probs

    @property
    def mode(self):
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return binomial(self.total_count.expand(shape), self.probs.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        n = self.total_count
        normalize = (n * _clamp_by_zero(self.logits) + n * (-self.logits.abs()).exp().log1p()
                     - (n + 1).lgamma())
        return value * self.logits - (value + 1).lgamma() - (n - value + 1).lgamma() - normalize

    def _homogeneous(self, what):
        n = int(self.total_count.max())
        if not self.total_count.min() == n:
            raise NotImplementedError(f"Inhomogeneous total count not supported by `{what}`.")
        return n

    def entropy(self):
        self._homogeneous("entropy")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(log_prob.exp() * log_prob).sum(0)

    def enumerate_support(self, expand=True):
        n = self._homogeneous("enumerate_support")
        values = arange(1 + n, dtype=self._param.dtype, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + self._batch_shape) if expand else values
