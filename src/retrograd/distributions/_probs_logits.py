"""Distributions given by ``probs`` or ``logits`` (exactly one): the check, and for one
event's probability (Bernoulli, Geometric, Binomial, ...) the other parameter computed
on first read, and their construction and expansion."""

from numbers import Number

from .._tensor import Size
from .distribution import Distribution
from .utils import broadcast_all, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["BinaryParams", "one_of"]


def one_of(probs, logits):
    """The one of ``probs`` and ``logits`` given, as PyTorch's discrete distributions
    take exactly one."""
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")
    return probs if probs is not None else logits


class BinaryParams:
    """A mixin for a Distribution of one event's probability, as ``probs`` or ``logits``
    (its log-odds); ``_param`` is the one given."""

    def _init_binary(self, probs, logits, validate_args, total_count=None):
        """Set the given parameter (broadcast with ``total_count``, which takes its dtype,
        where there is one) and initialize with its batch shape."""
        param = one_of(probs, logits)
        name = "probs" if probs is not None else "logits"
        if total_count is None:
            (t,) = broadcast_all(param)
            batch = Size() if isinstance(param, Number) else t.size()
        else:
            count, t = broadcast_all(total_count, param)
            self.total_count = count.type_as(t)
            batch = t.size()
        setattr(self, name, t)
        self._param = t
        Distribution.__init__(self, batch, validate_args=validate_args)

    def _expand_binary(self, cls, batch_shape, _instance, names=()):
        new = self._expand_params(cls, batch_shape, _instance, names + ("probs", "logits"))
        new._param = new.__dict__["probs" if "probs" in new.__dict__ else "logits"]
        return new

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        return self._param.size()
