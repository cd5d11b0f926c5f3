"""``Geometric(probs=None, logits=None)``: failures before the first success."""

from .._tensor import Size
from ..autograd.grad_mode import no_grad
from ..nn._functional_losses import binary_cross_entropy_with_logits
from ..ops.dtype_info import finfo
from . import constraints
from .distribution import Distribution
from ._probs_logits import BinaryParams
from .utils import broadcast_all

__all__ = ["Geometric"]


class Geometric(BinaryParams, Distribution):
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs=None, logits=None, validate_args=None):
        self._init_binary(probs, logits, validate_args)
        if self._validate_args and probs is not None:
            valid = self.probs > 0
            if not valid.all():
                raise ValueError(
                    f"Expected parameter probs ({type(self.probs).__name__} of shape "
                    f"{tuple(self.probs.shape)}) of distribution {self!r} to be positive but "
                    f"found invalid values:\n{self.probs.detach()[~valid]}")

    def expand(self, batch_shape, _instance=None):
        return self._expand_binary(Geometric, batch_shape, _instance)

    @property
    def mean(self):
        return 1.0 / self.probs - 1.0

    @property
    def mode(self):
        return self.probs.new_zeros(self.probs.shape)

    @property
    def variance(self):
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        with no_grad():
            u = self.probs.new_empty(shape).uniform_(finfo(self.probs.dtype).tiny, 1)
            return (u.log() / (-self.probs).log1p()).floor()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        probs = probs.clone()
        probs[(probs == 1) & (value == 0)] = 0
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self):
        return binary_cross_entropy_with_logits(self.logits, self.probs,
                                                reduction="none") / self.probs
