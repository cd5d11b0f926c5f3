"""``NegativeBinomial(total_count, probs=None, logits=None)``: successes before
``total_count`` failures; drawn as a Poisson of a Gamma rate."""

from .._tensor import Size
from ..autograd.grad_mode import no_grad
from ..nn.functional import logsigmoid
from ..ops.random_sampling import poisson
from . import constraints
from .distribution import Distribution
from .gamma import Gamma
from ._probs_logits import BinaryParams
from .utils import lazy_property

__all__ = ["NegativeBinomial"]


class NegativeBinomial(BinaryParams, Distribution):
    arg_constraints = {"total_count": constraints.greater_than_eq(0),
                       "probs": constraints.half_open_interval(0.0, 1.0),
                       "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        self._init_binary(probs, logits, validate_args, total_count=total_count)

    def expand(self, batch_shape, _instance=None):
        return self._expand_binary(NegativeBinomial, batch_shape, _instance, ("total_count",))

    @property
    def mean(self):
        return self.total_count * self.logits.exp()

    @property
    def mode(self):
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self):
        return self.mean / (-self.logits).sigmoid()

    @lazy_property
    def _gamma(self):
        return Gamma(concentration=self.total_count, rate=(-self.logits).exp(),
                     validate_args=False)

    def sample(self, sample_shape=Size()):
        with no_grad():
            return poisson(self._gamma.sample(sample_shape=sample_shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        n = self.total_count
        unnormalized = n * logsigmoid(-self.logits) + value * logsigmoid(self.logits)
        normalization = -(n + value).lgamma() + (1.0 + value).lgamma() + n.lgamma()
        return unnormalized - normalization.masked_fill(n + value == 0.0, 0.0)
