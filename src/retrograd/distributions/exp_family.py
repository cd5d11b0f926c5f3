"""Exponential families (``torch.distributions.ExponentialFamily``): a density
``exp(<t(x), theta> - F(theta) + k(x))``, whose entropy follows from the log normalizer
``F`` and its gradient (a Bregman divergence)."""

from ..autograd._backward import grad
from .distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """Subclasses give ``_natural_params``, ``_log_normalizer`` and
    ``_mean_carrier_measure`` (the expectation of ``k(x)``)."""

    @property
    def _natural_params(self):
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self):
        raise NotImplementedError

    def entropy(self):
        """``F(theta) - <theta, grad F(theta)> - E[k(x)]``; the inner product sums each
        parameter's non-batch (event) dims, as PyTorch's does."""
        result = -self._mean_carrier_measure
        params = [p.detach().requires_grad_() for p in self._natural_params]
        lg_normal = self._log_normalizer(*params)
        gradients = grad(lg_normal.sum(), params, create_graph=True)
        result = result + lg_normal
        for p, g in zip(params, gradients, strict=True):
            result = result - (p * g).reshape(self._batch_shape + (-1,)).sum(-1)
        return result
