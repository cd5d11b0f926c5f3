"""``Bernoulli(probs=None, logits=None)``: one event, 1 with probability ``probs``."""

from .._creation import arange
from .._tensor import Size
from ..autograd.grad_mode import no_grad
from ..nn._functional_losses import binary_cross_entropy_with_logits
from ..ops.random_sampling import bernoulli
from . import constraints
from .exp_family import ExponentialFamily
from ._probs_logits import BinaryParams
from .utils import broadcast_all

__all__ = ["Bernoulli"]


class Bernoulli(BinaryParams, ExponentialFamily):
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True
    _mean_carrier_measure = 0

    def __init__(self, probs=None, logits=None, validate_args=None):
        self._init_binary(probs, logits, validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_binary(Bernoulli, batch_shape, _instance)

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        mode = (self.probs >= 0.5).to(self.probs)
        mode[self.probs == 0.5] = float("nan")
        return mode

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return bernoulli(self.probs.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self):
        return binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")

    def enumerate_support(self, expand=True):
        values = arange(2, dtype=self._param.dtype, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + self._batch_shape) if expand else values

    @property
    def _natural_params(self):
        return (self.probs.logit(),)

    def _log_normalizer(self, x):
        return x.exp().log1p()
