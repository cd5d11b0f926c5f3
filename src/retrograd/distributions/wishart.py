"""``Wishart(df, covariance_matrix=None, precision_matrix=None, scale_tril=None)``: the law
of ``X^T X`` for ``df`` rows of ``X`` drawn from a zero-mean multivariate normal of that
covariance (``df`` real, above ``p - 1``). Draws by Bartlett's decomposition, Chi2
diagonal and standard-normal lower triangle, redrawn (up to ``max_try_correction`` times,
with a warning) where a draw is not positive definite in floating point."""

import math
import warnings
from numbers import Number

from .._creation import arange, eye, randn, tensor
from .._tensor import Size
from ..ops.dtype_info import finfo
from ..ops.linalg import einsum
from ..ops.linalg_decomp import _legacy_cholesky_solve, cholesky, slogdet
from ..ops.matrices import tril_indices
from ..ops.shape import broadcast_shapes
from . import constraints
from .exp_family import ExponentialFamily
from .gamma import Chi2
from .multivariate_normal import _precision_to_scale_tril
from .utils import lazy_property

__all__ = ["Wishart"]

_LOG_2 = math.log(2)


def _mvdigamma(x, p):
    """The multivariate digamma ``sum_{i < p} digamma(x - i / 2)``."""
    if not x.gt((p - 1) / 2).all():
        raise AssertionError("Wrong domain for multivariate digamma function.")
    return (x.unsqueeze(-1) - arange(p, dtype=x.dtype, device=x.device).div(2).expand(
        x.shape + (-1,))).digamma().sum(-1)


class Wishart(ExponentialFamily):
    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def arg_constraints(self):
        return {"covariance_matrix": constraints.positive_definite,
                "precision_matrix": constraints.positive_definite,
                "scale_tril": constraints.lower_cholesky,
                "df": constraints.greater_than(self.event_shape[-1] - 1)}

    def __init__(self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None):
        given = [p for p in (covariance_matrix, precision_matrix, scale_tril) if p is not None]
        if len(given) != 1:
            raise AssertionError("Exactly one of covariance_matrix or precision_matrix or "
                                 "scale_tril may be specified.")
        param = given[0]
        if param.dim() < 2:
            raise ValueError("scale_tril must be at least two-dimensional, with optional "
                             "leading batch dimensions")
        if isinstance(df, Number):  # (over the batch: PyTorch 2.13 keeps it 0-d, and its
            batch_shape = Size(param.shape[:-2])  # moments fail on a batch: deviations.md)
            self.df = tensor(df, dtype=param.dtype, device=param.device).expand(batch_shape)
        else:
            batch_shape = broadcast_shapes(param.shape[:-2], df.shape)
            self.df = df.expand(batch_shape)
        event_shape = param.shape[-2:]
        p = event_shape[-1]
        if self.df.le(p - 1).any():
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = {p - 1}.")
        name = ("scale_tril" if scale_tril is not None else "covariance_matrix"
                if covariance_matrix is not None else "precision_matrix")
        setattr(self, name, param.expand(batch_shape + (-1, -1)))
        if self.df.lt(p).any():
            warnings.warn("Low df values detected. Singular samples are highly likely to "
                          "occur for ndim - 1 < df < ndim.", stacklevel=2)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        self._batch_dims = [-(x + 1) for x in range(len(self._batch_shape))]
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)
        self._dist_chi2 = self._chi2(batch_shape)

    def _chi2(self, batch_shape):
        """The Chi2 of Bartlett's diagonal: ``df - i`` degrees of freedom in row i."""
        L = self._unbroadcasted_scale_tril
        return Chi2(df=self.df.unsqueeze(-1) - arange(
            self._event_shape[-1], dtype=L.dtype, device=L.device).expand(batch_shape + (-1,)))

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Wishart, _instance)
        batch_shape = Size(batch_shape)
        cov_shape = batch_shape + self.event_shape
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(cov_shape)
        new.df = self.df.expand(batch_shape)
        new._batch_dims = [-(x + 1) for x in range(len(batch_shape))]
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(cov_shape))
        ExponentialFamily.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._dist_chi2 = new._chi2(batch_shape)
        new._validate_args = self._validate_args
        return new

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._batch_shape + self._event_shape)

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return (L @ L.transpose(-2, -1)).expand(self._batch_shape + self._event_shape)

    @lazy_property
    def precision_matrix(self):
        L = self._unbroadcasted_scale_tril
        identity = eye(self._event_shape[-1], device=L.device, dtype=L.dtype)
        return _legacy_cholesky_solve(identity, L).expand(self._batch_shape + self._event_shape)

    @property
    def mean(self):
        return self.df.view(self._batch_shape + (1, 1)) * self.covariance_matrix

    @property
    def mode(self):
        factor = self.df - self.covariance_matrix.shape[-1] - 1
        factor[factor <= 0] = math.nan
        return factor.view(self._batch_shape + (1, 1)) * self.covariance_matrix

    @property
    def variance(self):
        V = self.covariance_matrix
        diag = V.diagonal(dim1=-2, dim2=-1)
        return self.df.view(self._batch_shape + (1, 1)) * (
            V.pow(2) + einsum("...i,...j->...ij", diag, diag))

    def _bartlett_sampling(self, sample_shape=Size()):
        p = self._event_shape[-1]
        noise = self._dist_chi2.rsample(sample_shape).sqrt().clamp(
            min=finfo(self.df.dtype).eps).diag_embed(dim1=-2, dim2=-1)
        i, j = tril_indices(p, p, offset=-1)
        noise[..., i, j] = randn(Size(sample_shape) + self._batch_shape + (p * (p - 1) // 2,),
                                 dtype=noise.dtype, device=noise.device)
        chol = self._unbroadcasted_scale_tril @ noise
        return chol @ chol.transpose(-2, -1)

    def _singular(self, sample):
        """Per sample (over the whole batch), whether some draw is not positive definite."""
        bad = ~self.support.check(sample)
        return bad.amax(self._batch_dims) if self._batch_shape else bad

    def rsample(self, sample_shape=Size(), max_try_correction=None):
        """Draws whose every matrix is positive definite, or after ``max_try_correction``
        (10) redraws of the singular ones the last draws. PyTorch 2.13 redraws and warns
        about the draws that are fine instead (docs/deviations.md)."""
        max_try_correction = 10 if max_try_correction is None else max_try_correction
        sample_shape = Size(sample_shape)
        sample = self._bartlett_sampling(sample_shape)
        singular = self._singular(sample)
        if singular.any():
            warnings.warn("Singular sample detected.", stacklevel=2)
            for _ in range(max_try_correction):
                new = self._bartlett_sampling(singular[singular].shape)
                sample[singular] = new
                singular[singular.clone()] = self._singular(new)
                if not singular.any():
                    break
        return sample

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        nu, p = self.df, self._event_shape[-1]
        L = self._unbroadcasted_scale_tril
        return (-nu * (p * _LOG_2 / 2 + L.diagonal(dim1=-2, dim2=-1).log().sum(-1))
                - (nu / 2).mvlgamma(p) + (nu - p - 1) / 2 * slogdet(value).logabsdet
                - _legacy_cholesky_solve(value, L).diagonal(dim1=-2, dim2=-1).sum(dim=-1) / 2)

    def entropy(self):
        nu, p = self.df, self._event_shape[-1]
        L = self._unbroadcasted_scale_tril
        return ((p + 1) * (p * _LOG_2 / 2 + L.diagonal(dim1=-2, dim2=-1).log().sum(-1))
                + (nu / 2).mvlgamma(p) - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p)
                + nu * p / 2)

    @property
    def _natural_params(self):
        return -self.precision_matrix / 2, (self.df - self._event_shape[-1] - 1) / 2

    def _log_normalizer(self, x, y):
        p = self._event_shape[-1]
        return ((y + (p + 1) / 2) * (-slogdet(-2 * x).logabsdet + _LOG_2 * p)
                + (y + (p + 1) / 2).mvlgamma(p))
