"""``torch.distributions``: probability distributions with sampling (reparameterized
where PyTorch's are), log-densities, entropies and KL divergences, all differentiable
through retrograd's autograd. The module names are PyTorch's
(``torch.distributions.normal.Normal``)."""

from . import constraints
from .bernoulli import Bernoulli
from .categorical import Categorical
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .exponential import Exponential
from .independent import Independent
from .kl import kl_divergence, register_kl
from .laplace import Laplace
from .multivariate_normal import MultivariateNormal
from .normal import Normal
from .one_hot_categorical import OneHotCategorical
from .uniform import Uniform

__all__ = ["Bernoulli", "Categorical", "Distribution", "Exponential", "ExponentialFamily",
           "Independent", "Laplace", "MultivariateNormal", "Normal", "OneHotCategorical",
           "Uniform", "constraints", "kl_divergence", "register_kl"]
