"""The base of every distribution (``torch.distributions.Distribution``): batch and event
shapes, argument and sample validation with PyTorch's messages, and the defaults built
on what a subclass defines (``sample`` from ``rsample`` under no_grad, ``stddev`` from
``variance``, ``perplexity`` from ``entropy``)."""

import warnings
from numbers import Number

from .._tensor import Size, Tensor
from ..autograd.grad_mode import no_grad
from . import constraints
from .utils import broadcast_all, lazy_property

__all__ = ["Distribution"]


class Distribution:
    """A distribution over values of ``batch_shape + event_shape``."""

    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__  # as Python's assert: off under ``python -O``

    @staticmethod
    def set_default_validate_args(value):
        """Turn argument and sample validation on or off for every distribution."""
        if value not in (True, False):
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape=Size(), event_shape=Size(), validate_args=None):
        self._batch_shape = batch_shape
        self._event_shape = event_shape
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            try:
                arg_constraints = self.arg_constraints
            except NotImplementedError:
                arg_constraints = {}
                warnings.warn(f"{self.__class__} does not define `arg_constraints`. Please set "
                              "`arg_constraints = {}` or initialize the distribution with "
                              "`validate_args=False` to turn off validation.", stacklevel=2)
            for param, constraint in arg_constraints.items():
                if constraints.is_dependent(constraint):
                    continue
                if param not in self.__dict__ and isinstance(getattr(type(self), param),
                                                             lazy_property):
                    continue  # a parameter computed from another: not given
                value = getattr(self, param)
                if not constraint.check(value).all():
                    raise ValueError(
                        f"Expected parameter {param} ({type(value).__name__} of shape "
                        f"{tuple(value.shape)}) of distribution {self!r} to satisfy the "
                        f"constraint {constraint!r}, but found invalid values:\n{value}")

    def _init_params(self, validate_args, **params):
        """Set the parameters, broadcast to one shape (numbers become tensors), and
        initialize with their batch shape: none when every parameter is a number."""
        tensors = broadcast_all(*params.values())
        for name, t in zip(params, tensors, strict=True):
            setattr(self, name, t)
        numbers = all(isinstance(v, Number) for v in params.values())
        Distribution.__init__(self, Size() if numbers else tensors[0].size(),
                              validate_args=validate_args)

    def _expand_params(self, cls, batch_shape, _instance, names):
        """``expand`` for a distribution of parameters ``names`` of the batch's shape (those
        it has: a probs/logits pair holds one until the other is read)."""
        new = self._get_checked_instance(cls, _instance)
        batch_shape = Size(batch_shape)
        for name in names:
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(batch_shape))
        Distribution.__init__(new, batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def expand(self, batch_shape, _instance=None):
        """A distribution of the same parameters, expanded (not copied) to
        ``batch_shape``."""
        raise NotImplementedError

    @property
    def batch_shape(self):
        return self._batch_shape

    @property
    def event_shape(self):
        return self._event_shape

    @property
    def arg_constraints(self):
        raise NotImplementedError

    @property
    def support(self):
        raise NotImplementedError

    @property
    def mean(self):
        raise NotImplementedError

    @property
    def mode(self):
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self):
        raise NotImplementedError

    @property
    def stddev(self):
        return self.variance.sqrt()

    def sample(self, sample_shape=Size()):
        """A sample (of ``sample_shape`` more leading dims), without gradients."""
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=Size()):
        """A reparameterized sample: differentiable in the parameters."""
        raise NotImplementedError

    def sample_n(self, n):
        warnings.warn("`sample_n(n)` will be deprecated. Use `sample((n,))` instead.",
                      FutureWarning, stacklevel=2)
        return self.sample(Size((n,)))

    def log_prob(self, value):
        raise NotImplementedError

    def cdf(self, value):
        raise NotImplementedError

    def icdf(self, value):
        raise NotImplementedError

    def enumerate_support(self, expand=True):
        raise NotImplementedError

    def entropy(self):
        raise NotImplementedError

    def perplexity(self):
        return self.entropy().exp()

    def _extended_shape(self, sample_shape=Size()):
        """The shape of a sample of ``sample_shape``."""
        return Size(tuple(sample_shape) + self._batch_shape + self._event_shape)

    def _validate_sample(self, value):
        """PyTorch's checks of a value to score: a tensor whose rightmost dims are the event
        shape, broadcastable with the batch, within the support."""
        if not isinstance(value, Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        start = len(value.size()) - len(self._event_shape)
        if value.size()[start:] != self._event_shape:
            raise ValueError(f"The right-most size of value must match event_shape: "
                             f"{value.size()} vs {self._event_shape}.")
        actual, expected = value.size(), self._batch_shape + self._event_shape
        for i, j in zip(reversed(actual), reversed(expected), strict=False):
            if i != 1 and j != 1 and i != j:
                raise ValueError(f"Value is not broadcastable with batch_shape+event_shape: "
                                 f"{actual} vs {expected}.")
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(f"{self.__class__} does not define `support` to enable sample "
                          "validation. Please initialize the distribution with "
                          "`validate_args=False` to turn off validation.", stacklevel=2)
            return
        if not support.check(value).all():
            raise ValueError(f"Expected value argument ({type(value).__name__} of shape "
                             f"{tuple(value.shape)}) to be within the support ({support!r}) "
                             f"of the distribution {self!r}, but found invalid values:\n{value}")

    def _get_checked_instance(self, cls, _instance=None):
        """The instance ``expand`` fills: a bare one of this type, which a subclass with
        its own ``__init__`` cannot take."""
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(
                f"Subclass {self.__class__.__name__} of {cls.__name__} that defines a custom "
                "__init__ method must also define a custom .expand() method.")
        return self.__new__(type(self)) if _instance is None else _instance

    def __repr__(self):
        params = [k for k in self.arg_constraints if k in self.__dict__]
        args = ", ".join(f"{p}: {v if v.numel() == 1 else v.size()}"
                         for p in params for v in (self.__dict__[p],))
        return f"{type(self).__name__}({args})"
