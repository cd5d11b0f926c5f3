"""``kl_divergence(p, q)`` and ``register_kl``: KL(p || q) by the most specific
registered pair of types (the closed forms below), as PyTorch dispatches."""

import math
import warnings
from functools import total_ordering

from .._creation import full_like
from ..autograd._backward import grad
from ..nn.functional import softplus
from ..ops.binary import where, xlogy
from ..ops.linalg_decomp import solve_triangular
from ..ops.shape import broadcast_shapes
from .bernoulli import Bernoulli
from .binomial import Binomial
from .categorical import Categorical
from .cauchy import Cauchy
from .continuous_bernoulli import ContinuousBernoulli
from .dirichlet import Beta, Dirichlet
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .exponential import Exponential
from .gamma import Gamma
from .geometric import Geometric
from .gumbel import EULER, Gumbel
from .half_normal import HalfNormal
from .independent import Independent
from .laplace import Laplace
from .lowrank_multivariate_normal import LowRankMultivariateNormal, _logdet, _mahalanobis
from .multivariate_normal import MultivariateNormal, _batch_mahalanobis
from .normal import Normal
from .one_hot_categorical import OneHotCategorical
from .poisson import Poisson
from .transformed_distribution import TransformedDistribution
from .uniform import Uniform
from .utils import sum_rightmost
from .weibull import Pareto

__all__ = ["kl_divergence", "register_kl"]

_KL_REGISTRY = {}  # (type_p, type_q) -> fun
_KL_MEMOIZE = {}  # (type(p), type(q)) -> the fun dispatch chose


def register_kl(type_p, type_q):
    """Register ``fun(p, q)`` (the decorated function) as KL(p || q) for these types and
    their subclasses, unless a more specific pair is registered."""
    for name, t in (("type_p", type_p), ("type_q", type_q)):
        if not (isinstance(t, type) and issubclass(t, Distribution)):
            raise TypeError(f"Expected {name} to be a Distribution subclass but got {t}")

    def decorator(fun):
        _KL_REGISTRY[type_p, type_q] = fun
        _KL_MEMOIZE.clear()  # a new pair may be more specific than what was chosen
        return fun
    return decorator


@total_ordering
class _Match:
    """A registered pair, ordered by specificity (lexicographically by subclassing)."""

    __slots__ = ("types",)

    def __init__(self, *types):
        self.types = types

    def __eq__(self, other):
        return self.types == other.types

    def __le__(self, other):
        for x, y in zip(self.types, other.types, strict=True):
            if not issubclass(x, y):
                return False
            if x is not y:
                break
        return True


def _dispatch_kl(type_p, type_q):
    """The function of the most specific registered pair above (type_p, type_q); a
    RuntimeWarning when specificity by p first and by q first disagree."""
    matches = [(sp, sq) for sp, sq in _KL_REGISTRY
               if issubclass(type_p, sp) and issubclass(type_q, sq)]
    if not matches:
        return NotImplemented
    left_p, left_q = min(_Match(*m) for m in matches).types
    right_q, right_p = min(_Match(*reversed(m)) for m in matches).types
    left, right = _KL_REGISTRY[left_p, left_q], _KL_REGISTRY[right_p, right_q]
    if left is not right:
        warnings.warn(f"Ambiguous kl_divergence({type_p.__name__}, {type_q.__name__}). "
                      f"Please register_kl({left_p.__name__}, {right_q.__name__})",
                      RuntimeWarning, stacklevel=2)
    return left


def kl_divergence(p, q):
    """KL(p || q) = E_p[log p(x) - log q(x)], over the batch."""
    key = type(p), type(q)
    fun = _KL_MEMOIZE.get(key)
    if fun is None:
        fun = _KL_MEMOIZE[key] = _dispatch_kl(*key)
    if fun is NotImplemented:
        raise NotImplementedError(f"No KL(p || q) is implemented for p type "
                                  f"{type(p).__name__} and q type {type(q).__name__}")
    return fun(p, q)


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    t1 = p.probs * (softplus(-q.logits) - softplus(-p.logits))
    t1[q.probs == 0] = math.inf
    t1[p.probs == 0] = 0
    t2 = (1 - p.probs) * (softplus(q.logits) - softplus(p.logits))
    t2[q.probs == 1] = math.inf
    t2[p.probs == 1] = 0
    return t1 + t2


@register_kl(ContinuousBernoulli, ContinuousBernoulli)
def _kl_continuous_bernoulli_continuous_bernoulli(p, q):
    return (p.mean * (p.logits - q.logits) + p._cont_bern_log_norm() + (-p.probs).log1p()
            - q._cont_bern_log_norm() - (-q.probs).log1p())


@register_kl(Beta, Beta)
def _kl_beta_beta(p, q):
    sum_p = p.concentration1 + p.concentration0
    sum_q = q.concentration1 + q.concentration0
    t1 = q.concentration1.lgamma() + q.concentration0.lgamma() + sum_p.lgamma()
    t2 = p.concentration1.lgamma() + p.concentration0.lgamma() + sum_q.lgamma()
    t3 = (p.concentration1 - q.concentration1) * p.concentration1.digamma()
    t4 = (p.concentration0 - q.concentration0) * p.concentration0.digamma()
    t5 = (sum_q - sum_p) * sum_p.digamma()
    return t1 - t2 + t3 + t4 + t5


@register_kl(Binomial, Binomial)
def _kl_binomial_binomial(p, q):
    if (p.total_count < q.total_count).any():
        raise NotImplementedError("KL between Binomials where q.total_count > "
                                  "p.total_count is not implemented")
    kl = p.total_count * (p.probs * (p.logits - q.logits) + (-p.probs).log1p()
                          - (-q.probs).log1p())
    kl[p.total_count > q.total_count] = math.inf
    return kl


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    t = p.probs * (p.logits - q.logits)
    t[(q.probs == 0).expand_as(t)] = math.inf
    t[(p.probs == 0).expand_as(t)] = 0
    return t.sum(-1)


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehotcategorical_onehotcategorical(p, q):
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Cauchy, Cauchy)
def _kl_cauchy_cauchy(p, q):
    t1 = ((p.scale + q.scale).pow(2) + (p.loc - q.loc).pow(2)).log()
    return t1 - (4 * p.scale * q.scale).log()


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p, q):
    sum_p = p.concentration.sum(-1)
    sum_q = q.concentration.sum(-1)
    t1 = sum_p.lgamma() - sum_q.lgamma()
    t2 = (p.concentration.lgamma() - q.concentration.lgamma()).sum(-1)
    t3 = p.concentration - q.concentration
    t4 = p.concentration.digamma() - sum_p.digamma().unsqueeze(-1)
    return t1 - t2 + (t3 * t4).sum(-1)


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p, q):
    rate_ratio = q.rate / p.rate
    return -rate_ratio.log() + rate_ratio - 1


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p, q):
    t1 = q.concentration * (p.rate / q.rate).log()
    t2 = q.concentration.lgamma() - p.concentration.lgamma()
    t3 = (p.concentration - q.concentration) * p.concentration.digamma()
    t4 = (q.rate - p.rate) * (p.concentration / p.rate)
    return t1 + t2 + t3 + t4


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p, q):
    return -p.entropy() - (-q.probs).log1p() / p.probs - q.logits


@register_kl(Gumbel, Gumbel)
def _kl_gumbel_gumbel(p, q):
    ct1, ct2, ct3 = p.scale / q.scale, q.loc / q.scale, p.loc / q.scale
    t3 = (ct2 + (1 + ct1).lgamma() - ct3).exp()
    return -ct1.log() - ct2 + ct3 + ct1 * EULER + t3 - (1 + EULER)


@register_kl(Independent, Independent)
def _kl_independent_independent(p, q):
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError
    return sum_rightmost(kl_divergence(p.base_dist, q.base_dist), p.reinterpreted_batch_ndims)


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p, q):
    scale_ratio = p.scale / q.scale
    loc_abs_diff = (p.loc - q.loc).abs()
    return (-scale_ratio.log() + loc_abs_diff / q.scale
            + scale_ratio * (-loc_abs_diff / p.scale).exp() - 1)


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_multivariatenormal_multivariatenormal(p, q):
    if p.event_shape != q.event_shape:
        raise ValueError("KL-divergence between two Multivariate Normals with different "
                         "event shapes cannot be computed")
    half_term1 = q._half_log_det() - p._half_log_det()
    n = p.event_shape[0]
    batch = broadcast_shapes(q._unbroadcasted_scale_tril.shape[:-2],
                             p._unbroadcasted_scale_tril.shape[:-2])
    q_tril = q._unbroadcasted_scale_tril.expand(batch + (n, n))
    p_tril = p._unbroadcasted_scale_tril.expand(batch + (n, n))
    term2 = solve_triangular(q_tril, p_tril, upper=False).pow(2).sum((-2, -1))
    term3 = _batch_mahalanobis(q._unbroadcasted_scale_tril, q.loc - p.loc)
    return half_term1 + 0.5 * (term2 + term3 - n)


@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(Pareto, Pareto)
def _kl_pareto_pareto(p, q):
    scale_ratio, alpha_ratio = p.scale / q.scale, q.alpha / p.alpha
    result = q.alpha * scale_ratio.log() - alpha_ratio.log() + alpha_ratio - 1
    result[p.support.lower_bound < q.support.lower_bound] = math.inf
    return result


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p, q):
    return p.rate * (p.rate.log() - q.rate.log()) - (p.rate - q.rate)


@register_kl(TransformedDistribution, TransformedDistribution)
def _kl_transformed_transformed(p, q):
    """Transforms that match leave the divergence of the bases unchanged."""
    if p.transforms != q.transforms or p.event_shape != q.event_shape:
        raise NotImplementedError
    return kl_divergence(p.base_dist, q.base_dist)


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p, q):
    result = ((q.high - q.low) / (p.high - p.low)).log()
    result[(q.low > p.low) | (q.high < p.high)] = math.inf
    return result


@register_kl(ExponentialFamily, ExponentialFamily)
def _kl_expfamily_expfamily(p, q):
    """The Bregman divergence of the log normalizer ``F`` in natural parameters:
    ``F(q) - F(p) - <q - p, grad F(p)>``, each term summed over its parameter's own event
    dims. PyTorch 2.13 detaches p's parameters (no gradient reaches them) and sums every
    term over the event's dims (a batch of Wisharts' df terms into one): see
    docs/deviations.md."""
    if type(p) is not type(q):
        raise NotImplementedError("The cross KL-divergence between different exponential "
                                  "families cannot be computed using Bregman divergences")
    p_params = [t if t.requires_grad else t.detach().requires_grad_()
                for t in p._natural_params]
    lg_normal = p._log_normalizer(*p_params)
    gradients = grad(lg_normal.sum(), p_params, create_graph=True)
    q_params = q._natural_params
    result = q._log_normalizer(*q_params) - lg_normal
    batch_ndims = len(p.batch_shape)
    for pnp, qnp, g in zip(p_params, q_params, gradients, strict=True):
        result = result - sum_rightmost((qnp - pnp) * g, max(pnp.dim() - batch_ndims, 0))
    return result


@register_kl(HalfNormal, HalfNormal)
def _kl_halfnormal_halfnormal(p, q):
    """Folding both at 0 leaves the divergence of the Normals."""
    return _kl_normal_normal(p.base_dist, q.base_dist)


def _trace_XXT(x):
    return x.pow(2).sum((-2, -1))


def _check_mvn_event_shapes(p, q, kind="(Low Rank)"):
    if p.event_shape != q.event_shape:
        raise ValueError(f"KL-divergence between two {kind} Multivariate Normals with "
                         "different event shapes cannot be computed")


def _lowrank_precision_root(q):
    """``A`` with ``inv(W W^T + D) = inv(D) - A^T A`` (Woodbury, through q's capacitance)."""
    W, D = q._unbroadcasted_cov_factor, q._unbroadcasted_cov_diag
    return solve_triangular(q._capacitance_tril, W.mT / D.unsqueeze(-2), upper=False)


def _lowrank_logdet(p):
    return _logdet(p._unbroadcasted_cov_diag, p._capacitance_tril)


def _lowrank_mahalanobis(q, x):
    return _mahalanobis(q._unbroadcasted_cov_factor, q._unbroadcasted_cov_diag, x,
                        q._capacitance_tril)


@register_kl(LowRankMultivariateNormal, LowRankMultivariateNormal)
def _kl_lowrank_lowrank(p, q):
    """``tr(inv(Sq) Sp)`` expanded over ``Sp = pW pW^T + pD`` and q's Woodbury form:
    O(n m^2) like the densities, never an n x n matrix."""
    _check_mvn_event_shapes(p, q, "Low Rank")
    pD, qD = p._unbroadcasted_cov_diag, q._unbroadcasted_cov_diag
    pW, A = p._unbroadcasted_cov_factor, _lowrank_precision_root(q)
    term1 = _lowrank_logdet(q) - _lowrank_logdet(p)
    term2 = ((pD / qD).sum(-1) + _trace_XXT(pW * qD.rsqrt().unsqueeze(-1))
             - _trace_XXT(A * pD.sqrt().unsqueeze(-2)) - _trace_XXT(A @ pW))
    term3 = _lowrank_mahalanobis(q, q.loc - p.loc)
    return 0.5 * (term1 + term2 + term3 - p.event_shape[0])


@register_kl(MultivariateNormal, LowRankMultivariateNormal)
def _kl_multivariatenormal_lowrank(p, q):
    _check_mvn_event_shapes(p, q)
    p_tril, qD = p._unbroadcasted_scale_tril, q._unbroadcasted_cov_diag
    A = _lowrank_precision_root(q)
    term1 = _lowrank_logdet(q) - 2 * p._half_log_det()
    term2 = _trace_XXT(p_tril * qD.rsqrt().unsqueeze(-1)) - _trace_XXT(A @ p_tril)
    term3 = _lowrank_mahalanobis(q, q.loc - p.loc)
    return 0.5 * (term1 + term2 + term3 - p.event_shape[0])


@register_kl(LowRankMultivariateNormal, MultivariateNormal)
def _kl_lowrank_multivariatenormal(p, q):
    _check_mvn_event_shapes(p, q)
    q_tril, pW = q._unbroadcasted_scale_tril, p._unbroadcasted_cov_factor
    n = p.event_shape[0]
    batch = broadcast_shapes(q_tril.shape[:-2], pW.shape[:-2])
    q_tril = q_tril.expand(batch + (n, n))
    term1 = 2 * q._half_log_det() - _lowrank_logdet(p)
    term2 = (_trace_XXT(solve_triangular(q_tril, pW.expand(batch + pW.shape[-2:]), upper=False))
             + _trace_XXT(solve_triangular(
                 q_tril, p._unbroadcasted_cov_diag.sqrt().diag_embed().expand(batch + (n, n)),
                 upper=False)))
    term3 = _batch_mahalanobis(q._unbroadcasted_scale_tril, q.loc - p.loc)
    return 0.5 * (term1 + term2 + term3 - n)


# Different families: -H(p) - E_p[log q(x)], the expectation in closed form; infinite where
# q's support misses a part of p's (p gives mass where q has none).

def _infinite_where(mask, kl):
    return where(mask, math.inf, kl)


def _infinite(param):
    """KL(p || q) for pairs where q's support misses p's for every parameter: infinite,
    shaped like p's ``param`` (no gradient)."""
    def kl(p, q):
        return full_like(getattr(p, param), math.inf)
    kl.__name__ = kl.__qualname__ = f"_kl_infinite_{param}"
    return kl


for _p, _param, _qs in (
        (Beta, "concentration1", (Pareto,)),
        (ContinuousBernoulli, "probs", (Pareto,)),
        (Exponential, "rate", (Beta, ContinuousBernoulli, Pareto, Uniform)),
        (Gamma, "concentration", (Beta, ContinuousBernoulli, Pareto, Uniform)),
        (Gumbel, "loc", (Beta, ContinuousBernoulli, Exponential, Gamma, Pareto, Uniform)),
        (Laplace, "loc", (Beta, ContinuousBernoulli, Exponential, Gamma, Pareto, Uniform)),
        (Normal, "loc", (Beta, ContinuousBernoulli, Exponential, Gamma, Pareto, Uniform)),
        (Pareto, "scale", (Beta, ContinuousBernoulli, Uniform)),
        (Poisson, "rate", (Bernoulli, Binomial))):
    _fun = _infinite(_param)  # one function for p's type, as PyTorch registers them
    for _q in _qs:
        register_kl(_p, _q)(_fun)
del _p, _param, _qs, _q, _fun


def _normal_cross_entropy(q, mean, second_moment):
    """``-E[log q(x)]`` of a Normal q, from p's first two moments. (The log of q's scale,
    not of its square, which underflows to 0 for a tiny scale; ``loc (loc - 2 mean)``,
    not ``loc^2 - 2 loc mean``, which is inf - inf where ``loc^2`` overflows.)"""
    return (q.scale.log() + 0.5 * math.log(2 * math.pi)
            + (second_moment + q.loc * (q.loc - 2 * mean)) / (2 * q.scale.pow(2)))


def _gamma_cross_entropy(q, mean, mean_log):
    """``-E[log q(x)]`` of a Gamma q, from p's ``E[x]`` and ``E[log x]``."""
    return (q.concentration.lgamma() - q.concentration * q.rate.log()
            - (q.concentration - 1) * mean_log + q.rate * mean)


def _cont_bern_cross_entropy(q, mean):
    return -mean * q.logits - (-q.probs).log1p() - q._cont_bern_log_norm()


def _uniform_mean_log(p):
    """``E[log x]`` for x uniform on [low, high] (0 log 0 read as 0)."""
    width = p.high - p.low
    return (xlogy(p.high, p.high) - xlogy(p.low, p.low) - width) / width


@register_kl(Bernoulli, Poisson)
def _kl_bernoulli_poisson(p, q):
    return -p.entropy() - (p.probs * q.rate.log() - q.rate)


@register_kl(Beta, ContinuousBernoulli)
def _kl_beta_continuous_bernoulli(p, q):
    return -p.entropy() + _cont_bern_cross_entropy(q, p.mean)


@register_kl(Beta, Exponential)
def _kl_beta_exponential(p, q):
    return -p.entropy() - q.rate.log() + q.rate * p.mean


@register_kl(Beta, Gamma)
def _kl_beta_gamma(p, q):
    mean_log = p.concentration1.digamma() - (p.concentration1 + p.concentration0).digamma()
    return -p.entropy() + _gamma_cross_entropy(q, p.mean, mean_log)


@register_kl(Beta, Normal)
def _kl_beta_normal(p, q):
    mean = p.mean
    second = mean * (1 - mean) / (p.concentration1 + p.concentration0 + 1) + mean.pow(2)
    return -p.entropy() + _normal_cross_entropy(q, mean, second)


@register_kl(Beta, Uniform)
def _kl_beta_uniform(p, q):
    return _infinite_where((q.low > 0) | (q.high < 1),
                           -p.entropy() + (q.high - q.low).log())


@register_kl(ContinuousBernoulli, Exponential)
def _kl_continuous_bernoulli_exponential(p, q):
    return -p.entropy() - q.rate.log() + q.rate * p.mean


@register_kl(ContinuousBernoulli, Normal)
def _kl_continuous_bernoulli_normal(p, q):
    mean = p.mean
    return -p.entropy() + _normal_cross_entropy(q, mean, p.variance + mean.pow(2))


@register_kl(ContinuousBernoulli, Uniform)
def _kl_continuous_bernoulli_uniform(p, q):
    """Infinite only where q misses part of [0, 1]; PyTorch 2.13 also answers infinity where
    q's support just reaches an end of it (Uniform(0, 1)): see docs/deviations.md."""
    return _infinite_where((q.low > 0) | (q.high < 1),
                           -p.entropy() + (q.high - q.low).log())


@register_kl(Exponential, Gamma)
def _kl_exponential_gamma(p, q):
    ratio = q.rate / p.rate
    return (-q.concentration * ratio.log() + ratio + q.concentration.lgamma()
            + q.concentration * EULER - (1 + EULER))


@register_kl(Exponential, Gumbel)
def _kl_exponential_gumbel(p, q):
    """``E[exp(-x / scale)]`` is the Exponential's Laplace transform, ``rate / (rate + 1 /
    scale)``."""
    prod = p.rate * q.scale
    loc_ratio = q.loc / q.scale
    return prod.log() - 1 - loc_ratio + loc_ratio.exp() * prod / (prod + 1) + prod.reciprocal()


@register_kl(Exponential, Normal)
def _kl_exponential_normal(p, q):
    return p.rate.log() - 1 + _normal_cross_entropy(q, p.rate.reciprocal(),
                                                   2 * p.rate.pow(-2))


@register_kl(Gamma, Exponential)
def _kl_gamma_exponential(p, q):
    return -p.entropy() - q.rate.log() + q.rate * p.concentration / p.rate


def _gamma_neg_entropy(p):
    a = p.concentration
    return (a - 1) * a.digamma() - a.lgamma() - a + p.rate.log()


@register_kl(Gamma, Gumbel)
def _kl_gamma_gumbel(p, q):
    """``E[exp(-x / scale)]`` is the Gamma's Laplace transform, ``(1 + 1 / (rate scale))
    ** -concentration``."""
    prod = p.rate * q.scale
    loc_ratio = q.loc / q.scale
    return (_gamma_neg_entropy(p) + q.scale.log() + p.concentration / prod - loc_ratio
            + loc_ratio.exp() * (1 + prod.reciprocal()).pow(-p.concentration))


@register_kl(Gamma, Normal)
def _kl_gamma_normal(p, q):
    a, mean = p.concentration, p.concentration / p.rate
    return _gamma_neg_entropy(p) + _normal_cross_entropy(q, mean, (a + 1) * a / p.rate.pow(2))


@register_kl(Gumbel, Normal)
def _kl_gumbel_normal(p, q):
    ratio = p.scale / q.scale
    return (-(ratio / math.sqrt(2 * math.pi)).log() + (math.pi * ratio * 0.5).pow(2) / 3
            + ((p.loc + p.scale * EULER - q.loc) / q.scale).pow(2) * 0.5 - (EULER + 1))


@register_kl(Laplace, Normal)
def _kl_laplace_normal(p, q):
    """A Laplace's second moment is ``loc^2 + 2 scale^2``."""
    return -(1 + (2 * p.scale).log()) + _normal_cross_entropy(
        q, p.loc, p.loc.pow(2) + 2 * p.scale.pow(2))


@register_kl(Normal, Gumbel)
def _kl_normal_gumbel(p, q):
    """``E[exp(-x / scale)]`` is the Normal's moment generating function at ``-1 / scale``."""
    mean_ratio = p.loc / q.scale
    var_ratio = (p.scale / q.scale).pow(2)
    loc_ratio = q.loc / q.scale
    return (-0.5 * var_ratio.log() + mean_ratio - loc_ratio
            + (-mean_ratio + 0.5 * var_ratio + loc_ratio).exp()
            - 0.5 * (1 + math.log(2 * math.pi)))


@register_kl(Normal, Laplace)
def _kl_normal_laplace(p, q):
    """``E|x - loc_q|`` of a Normal: its folded Normal's mean."""
    diff = p.loc - q.loc
    abs_mean = (math.sqrt(2 / math.pi) * p.scale * (-0.5 * (diff / p.scale).pow(2)).exp()
                + diff * (math.sqrt(0.5) * diff / p.scale).erf())
    return (-(p.scale / q.scale).log() + abs_mean / q.scale
            - 0.5 * (1 + math.log(0.5 * math.pi)))


def _pareto_neg_entropy(p):
    return (p.alpha / p.scale).log() - p.alpha.reciprocal() - 1


@register_kl(Pareto, Exponential)
def _kl_pareto_exponential(p, q):
    """Infinite where p has no mean (alpha <= 1)."""
    mean = p.alpha * p.scale / (p.alpha - 1)
    return _infinite_where(p.alpha <= 1,
                           _pareto_neg_entropy(p) - q.rate.log() + q.rate * mean)


@register_kl(Pareto, Gamma)
def _kl_pareto_gamma(p, q):
    """Infinite where p has no mean (alpha <= 1)."""
    mean = p.alpha * p.scale / (p.alpha - 1)
    mean_log = p.scale.log() + p.alpha.reciprocal()
    return _infinite_where(p.alpha <= 1,
                           _pareto_neg_entropy(p) + _gamma_cross_entropy(q, mean, mean_log))


@register_kl(Pareto, Normal)
def _kl_pareto_normal(p, q):
    """Infinite where p has no variance (alpha <= 2)."""
    a, root = p.alpha, p.scale / (p.alpha - 1)
    mean = a * root
    second = a * root.pow(2) / (a - 2) + mean.pow(2)
    return _infinite_where(a <= 2, _pareto_neg_entropy(p) + _normal_cross_entropy(q, mean, second))


@register_kl(Uniform, Beta)
def _kl_uniform_beta(p, q):
    width = p.high - p.low
    mean_log1m = (xlogy(1 - p.low, 1 - p.low) - xlogy(1 - p.high, 1 - p.high) - width) / width
    kl = (-width.log() + q.concentration1.lgamma() + q.concentration0.lgamma()
          - (q.concentration1 + q.concentration0).lgamma()
          - (q.concentration1 - 1) * _uniform_mean_log(p) - (q.concentration0 - 1) * mean_log1m)
    return _infinite_where((p.high > 1) | (p.low < 0), kl)


@register_kl(Uniform, ContinuousBernoulli)
def _kl_uniform_continuous_bernoulli(p, q):
    """Infinite only where p reaches outside [0, 1]; PyTorch 2.13 also answers infinity
    where p's support reaches an end of it (Uniform(0, 1)): see docs/deviations.md."""
    return _infinite_where((p.high > 1) | (p.low < 0),
                           -p.entropy() + _cont_bern_cross_entropy(q, p.mean))


@register_kl(Uniform, Exponential)
def _kl_uniform_exponential(p, q):
    kl = q.rate * (p.high + p.low) / 2 - ((p.high - p.low) * q.rate).log()
    return _infinite_where(p.low < 0, kl)


@register_kl(Uniform, Gamma)
def _kl_uniform_gamma(p, q):
    kl = -(p.high - p.low).log() + _gamma_cross_entropy(q, p.mean, _uniform_mean_log(p))
    return _infinite_where(p.low < 0, kl)


@register_kl(Uniform, Gumbel)
def _kl_uniform_gumbel(p, q):
    ratio = q.scale / (p.high - p.low)
    high, low = (p.high - q.loc) / q.scale, (p.low - q.loc) / q.scale
    return ratio.log() + 0.5 * (high + low) - ratio * ((-high).exp() - (-low).exp())


@register_kl(Uniform, Normal)
def _kl_uniform_normal(p, q):
    width = p.high - p.low
    mean = p.mean
    return -width.log() + _normal_cross_entropy(q, mean, width.pow(2) / 12 + mean.pow(2))


@register_kl(Uniform, Pareto)
def _kl_uniform_pareto(p, q):
    width = p.high - p.low
    kl = ((q.alpha + 1) * _uniform_mean_log(p)
          - (q.alpha * q.scale.pow(q.alpha) * width).log())
    return _infinite_where(p.low < q.scale, kl)
