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
