"""F.gumbel_softmax: with the noise fixed, PyTorch's values, nodes and gradients (soft and
hard, straight-through); with it drawn, hard samples follow softmax(logits) (the
Gumbel-max trick)."""

import numpy
import pytest

import retrograd


def _fixed_noise(monkeypatch, T):
    """Exp(1) draws of 1: the Gumbel noise -log(1) is 0."""
    monkeypatch.setattr(T.Tensor, "exponential_", lambda self, *a, **k: self.fill_(1.0))


@pytest.mark.torch
@pytest.mark.parametrize("hard", [False, True])
@pytest.mark.parametrize("dim", [-1, 0])
def test_matches_torch_with_the_noise_fixed(torch, monkeypatch, hard, dim):
    logits = numpy.random.default_rng(0).standard_normal((4, 5))
    weights = numpy.random.default_rng(1).standard_normal((4, 5))
    out = []
    for T in (torch, retrograd):
        _fixed_noise(monkeypatch, T)
        x = T.from_numpy(logits.copy()).requires_grad_()
        y = T.nn.functional.gumbel_softmax(x, tau=0.7, hard=hard, dim=dim)
        (g,) = T.autograd.grad((y * T.from_numpy(weights)).sum(), x)
        out.append((type(y.grad_fn).__name__, y.detach().numpy(), g.numpy()))
    assert out[0][0] == out[1][0]
    numpy.testing.assert_allclose(out[1][1], out[0][1], rtol=1e-12, atol=1e-15)
    numpy.testing.assert_allclose(out[1][2], out[0][2], rtol=1e-10, atol=1e-14)


def test_hard_samples_follow_the_softmax():
    retrograd.manual_seed(0)
    logits = retrograd.tensor([1.0, 0.0, -1.0, 2.0])
    draws = retrograd.nn.functional.gumbel_softmax(logits.expand(8000, 4), hard=True)
    assert ((draws == 0) | (draws == 1)).all() and (draws.sum(-1) == 1).all()
    numpy.testing.assert_allclose(draws.mean(0).numpy(), logits.softmax(0).numpy(), atol=0.02)


def test_eps_is_deprecated():
    with pytest.warns(UserWarning, match="`eps` parameter is deprecated"):
        retrograd.nn.functional.gumbel_softmax(retrograd.zeros(3), eps=1e-5)
