"""``LKJCholesky(dim, concentration=1.0)``: the LKJ law over Cholesky factors of dim x dim
correlation matrices, density proportional to ``det(L L^T) ** (concentration - 1)``.
Draws by the onion method (Lewandowski, Kurowicka and Joe, 2009, section 3.2): row i a
uniform direction on the sphere scaled by the root of a Beta draw."""

import math

from .._creation import arange, randn
from .._tensor import Size
from ..ops.dtype_info import finfo
from ..ops.joining import cat
from . import constraints
from .dirichlet import Beta
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim, concentration=1.0, validate_args=None):
        if dim < 2:
            raise ValueError(f"Expected dim to be an integer greater than or equal to 2. "
                             f"Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        marginal = self.concentration + 0.5 * (self.dim - 2)
        offset = arange(self.dim - 1, dtype=self.concentration.dtype,
                        device=self.concentration.device)
        offset = cat([offset.new_zeros((1,)), offset])
        self._beta = Beta(offset + 0.5, marginal.unsqueeze(-1) - 0.5 * offset)
        super().__init__(self.concentration.size(), Size((dim, dim)), validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = Size(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(batch_shape)
        new._beta = self._beta.expand(batch_shape + (self.dim,))
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape=Size()):
        y = self._beta.sample(sample_shape).unsqueeze(-1)
        u = randn(self._extended_shape(sample_shape), dtype=y.dtype, device=y.device).tril(-1)
        u = u / u.norm(dim=-1, keepdim=True)
        u[..., 0, :].fill_(0.0)  # (row 0 is e_1: its direction 0/0 dropped)
        w = y.sqrt() * u
        diag = (1 - (w ** 2).sum(dim=-1)).clamp(min=finfo(w.dtype).tiny).sqrt()
        return w + diag.diag_embed()

    def log_prob(self, value):
        """The density up to the normalizer, ``sum_i (2 (c - 1) + dim - i) log L_ii`` over
        the rows i >= 2 (the Jacobian of the Cholesky map included), less the log
        normalizer."""
        if self._validate_args:
            self._validate_sample(value)
        diag = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = arange(2, self.dim + 1, device=self.concentration.device)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        log_norm = (0.5 * dm1 * math.log(math.pi) + (alpha - 0.5).mvlgamma(dm1)
                    - alpha.lgamma() * dm1)
        return (order * diag.log()).sum(dim=-1) - log_norm
