"""A saved output that is not differentiable (nll_loss's total_weight, batch norm's saved
mean and 1/std, a max pool's indices) unpacks with no history and no forward-mode tangent,
as PyTorch's: forward-over-reverse through those ops, beside PyTorch."""

import functools

import numpy as np
import pytest
import torch

import retrograd

X = [-1.0, 0.5, 2.0, 0.3, -0.2, 1.5, 0.7, -3.5]


def _nll(T, x):
    return T.nn.functional.nll_loss(x.view(2, 4), T.tensor([0, 3])) * x.sum()


def _cross_entropy(T, x):
    return T.nn.functional.cross_entropy(x.view(2, 4), T.tensor([0, 3]))


def _batch_norm(T, x):
    return (T.nn.functional.batch_norm(x.view(4, 2), None, None, training=True) ** 3).sum()


def _max_pool(T, x):
    return (T.nn.functional.max_pool1d(x.view(1, 1, 8), 2) ** 2).sum() * x.sum()


def _layer_norm(T, x):
    return (T.nn.functional.layer_norm(x.view(2, 4), (4,)) ** 3).sum()


@pytest.mark.parametrize("f", [_nll, _cross_entropy, _batch_norm, _max_pool, _layer_norm])
def test_forward_over_reverse_hessian(f):
    out = []
    for T in (torch, retrograd):
        x = T.tensor(X, dtype=T.float64)
        v = T.tensor(X[::-1], dtype=T.float64)
        g = functools.partial(f, T)
        out.append((T.func.jacfwd(T.func.jacrev(g))(x).numpy(),
                    T.func.jvp(T.func.grad(g), (x,), (v,))[1].numpy()))
    for t, r in zip(*out, strict=True):
        np.testing.assert_allclose(r, t, rtol=1e-10, atol=1e-12)


def test_saved_total_weight_has_no_history():
    x = retrograd.tensor(X, requires_grad=True)
    loss = retrograd.nn.functional.nll_loss(x.view(2, 4), retrograd.tensor([0, 3]))
    w = loss.grad_fn._saved_total_weight
    assert w.grad_fn is None and not w.requires_grad and w.item() == 2.0
