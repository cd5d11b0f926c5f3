"""``_standard_gamma``: Gamma(alpha, 1) draws with the implicit reparameterization's
gradient, against PyTorch's edge values and refusals, against the exact derivative of the
quantile, and (in expectation) against the derivative of the mean."""

import numpy as np
import pytest
from scipy import special

import retrograd

torch = pytest.importorskip("torch")


def test_edge_values_as_pytorch():
    a = [-1.0, 0.0, 1e-30, float("nan"), float("inf")]
    got = retrograd._standard_gamma(retrograd.tensor(a))
    np.testing.assert_array_equal(np.asarray(got), torch._standard_gamma(torch.tensor(a)).numpy())


@pytest.mark.parametrize("dtype", ["int64", "float16", "bfloat16"])
def test_refusals_as_pytorch(dtype):
    with pytest.raises(NotImplementedError) as expected:
        torch._standard_gamma(torch.ones(2, dtype=getattr(torch, dtype)))
    with pytest.raises(NotImplementedError, match=str(expected.value)):
        retrograd._standard_gamma(retrograd.ones(2, dtype=getattr(retrograd, dtype)))


@pytest.mark.parametrize("alpha", [1e-4, 0.01, 0.5, 1.0, 3.0, 100.0, 1e4, 1e7])
def test_gradient_is_the_quantiles_derivative(alpha):
    """d x / d alpha at the draw's quantile u = P(alpha, x), against central differences
    of SciPy's inverse (within 1e-6); PyTorch's approximation is within 3e-3."""
    retrograd.manual_seed(0)
    a = retrograd.full((500,), alpha, dtype=retrograd.float64, requires_grad=True)
    x = retrograd._standard_gamma(a)
    assert x.grad_fn.name() == "StandardGammaBackward0"
    (g,) = retrograd.autograd.grad(x.sum(), a)
    xs = np.asarray(x.detach())
    u = special.gammainc(alpha, xs)
    inner = (u > 1e-12) & (u < 1 - 1e-12)
    ref = (special.gammaincinv(alpha * (1 + 1e-6), u)
           - special.gammaincinv(alpha * (1 - 1e-6), u)) / (2e-6 * alpha)
    np.testing.assert_allclose(np.asarray(g)[inner], ref[inner], rtol=1e-6)
    theirs = torch._standard_gamma_grad(torch.full((500,), alpha, dtype=torch.float64),
                                        torch.tensor(xs)).numpy()
    np.testing.assert_allclose(np.asarray(g)[inner], theirs[inner], rtol=3e-3)


@pytest.mark.parametrize("make,mean_grad", [
    # Gamma(a, b): E[x] = a / b, d/da = 1 / b
    (lambda D, a: D.Gamma(a, 2.0), lambda a: 0.5),
    # Beta(a, 3): E[x] = a / (a + 3), d/da = 3 / (a + 3)^2
    (lambda D, a: D.Beta(a, 3.0), lambda a: 3.0 / (a + 3.0) ** 2),
    # Dirichlet([a, 1, 2]): E[x_0] = a / (a + 3)
    (lambda D, a: D.Dirichlet(retrograd.stack([a, a * 0 + 1, a * 0 + 2])),
     lambda a: 3.0 / (a + 3.0) ** 2),
])
def test_reparameterized_gradient_is_unbiased(make, mean_grad):
    """The mean of d(sample)/d(a) over many draws is d E[sample] / d a."""
    retrograd.manual_seed(0)
    a = retrograd.tensor(1.5, dtype=retrograd.float64, requires_grad=True)
    n = 200_000
    x = make(retrograd.distributions, a).rsample((n,))
    x = x[..., 0] if x.dim() > 1 else x
    (g,) = retrograd.autograd.grad(x.sum(), a)
    # five standard errors: the per-draw gradients' spread is below 0.5 (measured: 0.22 for
    # the Gamma, 0.05 for the Beta)
    assert abs(float(g) / n - mean_grad(1.5)) < 5 * 0.5 / n ** 0.5
