"""retrograd.special against torch.special: every name it has is PyTorch's, and gives
PyTorch's values and gradients (its own ops are in the op database: misc.py)."""

import numpy
import pytest

import retrograd

pytestmark = pytest.mark.torch

_X = numpy.array([0.05, 0.3, 0.5, 0.8, 0.95])
_CALLS = {"gammainc": lambda f, x: f(x.detach() + 1, x),  # (no derivative in a, as PyTorch)
          "gammaincc": lambda f, x: f(x.detach() + 1, x),
          "xlogy": lambda f, x: f(x, x), "xlog1py": lambda f, x: f(x, x),
          "polygamma": lambda f, x: f(1, x), "multigammaln": lambda f, x: f(x + 2, 2),
          "softmax": lambda f, x: f(x, 0), "log_softmax": lambda f, x: f(x, 0),
          "logsumexp": lambda f, x: f(x, 0), "round": lambda f, x: f(x, decimals=1)}


def test_every_name_is_pytorchs(torch):
    assert set(retrograd.special.__all__) <= set(dir(torch.special))


@pytest.mark.parametrize("name", retrograd.special.__all__)
def test_values_and_gradients_match_torch(torch, name):
    out = []
    for T in (torch, retrograd):
        x = T.from_numpy(_X.copy()).requires_grad_()
        y = _CALLS.get(name, lambda f, x: f(x))(getattr(T.special, name), x)
        (g,) = T.autograd.grad(y.sum(), x, allow_unused=True)
        out.append((y.detach().numpy(), None if g is None else g.numpy()))
    numpy.testing.assert_allclose(out[1][0], out[0][0], rtol=1e-9, atol=1e-12)
    if out[0][1] is None:
        assert out[1][1] is None or not out[1][1].any()
    else:
        numpy.testing.assert_allclose(out[1][1], out[0][1], rtol=1e-8, atol=1e-12)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_log_ndtr_gradient_in_the_left_tail(dtype):
    """phi(x) / ndtr(x), where PyTorch's exp(-(log_ndtr(x) + x^2 / 2)) cancels (see
    docs/deviations.md): against the asymptotic series -x / (1 - 1/x^2 + 3/x^4 - 15/x^6 +
    105/x^8) far out, and SciPy's float64 log-density minus log-probability nearer."""
    from scipy import stats
    far = numpy.array([-1.08e5, -7.1e4, -1.6e4, -300.0, -60.5])
    near = numpy.array([-20.0, -10.0, -3.0, -0.5, 0.0, 2.0])
    x = retrograd.tensor(numpy.concatenate([far, near]), dtype=getattr(retrograd, dtype),
                         requires_grad=True)
    (g,) = retrograd.autograd.grad(retrograd.special.log_ndtr(x).sum(), x)
    u = 1 / far**2
    want_far = -far / (1 - u + 3 * u**2 - 15 * u**3 + 105 * u**4)
    want_near = numpy.exp(stats.norm.logpdf(near) - stats.norm.logcdf(near))
    rtol = 2e-6 if dtype == "float32" else 1e-12
    numpy.testing.assert_allclose(g.numpy(), numpy.concatenate([want_far, want_near]),
                                  rtol=rtol)
    inf = retrograd.tensor([-numpy.inf], requires_grad=True)
    (g,) = retrograd.autograd.grad(retrograd.special.log_ndtr(inf).sum(), inf)
    assert g.item() == numpy.inf  # (the limit; PyTorch's formula gives NaN)
