"""``torch.distributions``: probability distributions with sampling (reparameterized
where PyTorch's are), log-densities, entropies and KL divergences, all differentiable
through retrograd's autograd. The module names are PyTorch's
(``torch.distributions.normal.Normal``)."""

from . import constraint_registry, constraints, transforms
from .constraint_registry import biject_to, transform_to
from .bernoulli import Bernoulli
from .binomial import Binomial
from .categorical import Categorical
from .continuous_bernoulli import ContinuousBernoulli
from .cauchy import Cauchy, HalfCauchy
from .dirichlet import Beta, Dirichlet
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .exponential import Exponential
from .fishersnedecor import FisherSnedecor
from .gamma import Chi2, Gamma, InverseGamma
from .generalized_pareto import GeneralizedPareto
from .geometric import Geometric
from .gumbel import Gumbel
from .half_normal import HalfNormal
from .independent import Independent
from .kumaraswamy import Kumaraswamy
from .kl import kl_divergence, register_kl
from .laplace import Laplace
from .lkj_cholesky import LKJCholesky
from .log_normal import LogNormal
from .lowrank_multivariate_normal import LowRankMultivariateNormal
from .logistic_normal import LogisticNormal
from .mixture_same_family import MixtureSameFamily
from .multinomial import Multinomial
from .multivariate_normal import MultivariateNormal
from .negative_binomial import NegativeBinomial
from .normal import Normal
from .one_hot_categorical import OneHotCategorical, OneHotCategoricalStraightThrough
from .poisson import Poisson
from .relaxed_bernoulli import LogitRelaxedBernoulli, RelaxedBernoulli
from .relaxed_categorical import ExpRelaxedCategorical, RelaxedOneHotCategorical
from .studentT import StudentT
from .transformed_distribution import TransformedDistribution
from .transforms import (AbsTransform, AffineTransform, CatTransform, ComposeTransform,
                         CorrCholeskyTransform, CumulativeDistributionTransform, ExpTransform,
                         IndependentTransform, LowerCholeskyTransform,
                         PositiveDefiniteTransform, PowerTransform, ReshapeTransform,
                         SigmoidTransform, SoftmaxTransform, SoftplusTransform, StackTransform,
                         StickBreakingTransform, TanhTransform, Transform, identity_transform)
from .uniform import Uniform
from .von_mises import VonMises
from .weibull import Pareto, Weibull
from .wishart import Wishart

__all__ = ["AbsTransform", "AffineTransform", "Bernoulli", "Beta", "Binomial", "CatTransform",
           "Categorical", "CorrCholeskyTransform",
           "Cauchy", "Chi2", "ComposeTransform", "ContinuousBernoulli",
           "CumulativeDistributionTransform", "Dirichlet",
           "Distribution",
           "ExpRelaxedCategorical", "ExpTransform", "Exponential", "ExponentialFamily",
           "FisherSnedecor", "Gamma", "GeneralizedPareto",
           "Geometric", "Gumbel", "HalfCauchy", "HalfNormal", "Independent",
           "IndependentTransform", "InverseGamma", "Kumaraswamy", "LKJCholesky", "Laplace",
           "LogNormal",
           "LogisticNormal", "LowRankMultivariateNormal",
           "LogitRelaxedBernoulli", "LowerCholeskyTransform", "MixtureSameFamily", "Multinomial",
           "MultivariateNormal", "NegativeBinomial", "Normal", "OneHotCategorical",
           "OneHotCategoricalStraightThrough", "Pareto", "Poisson", "PositiveDefiniteTransform",
           "PowerTransform", "RelaxedBernoulli", "RelaxedOneHotCategorical",
           "ReshapeTransform", "SigmoidTransform",
           "SoftmaxTransform", "SoftplusTransform", "StackTransform", "StickBreakingTransform",
           "StudentT",
           "TanhTransform", "Transform", "TransformedDistribution", "Uniform", "VonMises",
           "Weibull", "Wishart",
           "biject_to", "constraint_registry", "constraints", "identity_transform",
           "kl_divergence", "register_kl", "transform_to", "transforms"]
