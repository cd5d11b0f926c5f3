"""Parametrizations for :func:`~retrograd.nn.utils.parametrize.register_parametrization`:
``weight_norm``."""

from ...ops.weight_norm import _weight_norm as _weight_norm_fn, norm_except_dim
from ..modules.module import Module
from . import parametrize

__all__ = ["weight_norm"]


class _WeightNorm(Module):
    def __init__(self, dim=0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return _weight_norm_fn(weight_v, weight_g, self.dim)

    def right_inverse(self, weight):
        return norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module, name="weight", dim=0):
    """Weight normalization as a parametrization: ``parametrizations.<name>.original0`` is
    the magnitude g, ``original1`` the direction v.

    >>> m = weight_norm(retrograd.nn.Linear(4, 3))
    >>> list(m.state_dict())
    ['bias', 'parametrizations.weight.original0', 'parametrizations.weight.original1']
    """
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
    return module
