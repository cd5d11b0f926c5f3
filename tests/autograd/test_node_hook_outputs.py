"""The output gradients a node's hooks see, as PyTorch's: its node of an op has the op's
differentiable outputs, and only the first where its formulas read ``grad`` alone
(max's values, batch norm's result), however many outputs the op returns. ``torch`` here is
PyTorch."""

import numpy
import pytest
import torch

import retrograd


def _cases(T):
    rng = numpy.random.default_rng(0)
    x = T.from_numpy(rng.standard_normal((4, 3))).requires_grad_()
    sq = T.from_numpy(rng.standard_normal((3, 3)) + 3 * numpy.eye(3)).requires_grad_()
    spd = (sq @ sq.T).detach().requires_grad_()
    img = T.from_numpy(rng.standard_normal((2, 2, 4, 4))).requires_grad_()
    F = T.nn.functional
    return {
        "sort": lambda: T.sort(x, 1)[0], "topk": lambda: T.topk(x, 2)[0],
        "kthvalue": lambda: T.kthvalue(x, 2)[0], "max": lambda: T.max(x, 1)[0],
        "median": lambda: T.median(x, 1)[0], "mode": lambda: T.mode(x, 1)[0],
        "cummax": lambda: T.cummax(x, 1)[0],
        "max_pool2d": lambda: F.max_pool2d(img, 2, return_indices=True)[0],
        "adaptive_max_pool2d": lambda: F.adaptive_max_pool2d(img, 2, return_indices=True)[0],
        "nll_loss": lambda: F.nll_loss(x, T.tensor([0, 1, 2, 0])),
        "batch_norm": lambda: F.batch_norm(img, None, None, training=True),
        "layer_norm": lambda: F.layer_norm(x, (3,)),
        "group_norm": lambda: F.group_norm(img, 1),
        "inv_ex": lambda: T.linalg.inv_ex(sq)[0],
        "cholesky_ex": lambda: T.linalg.cholesky_ex(spd)[0],
        "lu": lambda: T.linalg.lu(sq)[1], "lu_factor": lambda: T.linalg.lu_factor(sq)[0],
        "lstsq": lambda: T.linalg.lstsq(sq, x.T[:3])[0],
        "eigh": lambda: T.linalg.eigh(spd)[0], "slogdet": lambda: T.linalg.slogdet(sq)[1],
        "var_mean": lambda: T.var_mean(x, 1)[0], "aminmax": lambda: T.aminmax(x, dim=1)[0],
    }


def _hooks_see(T, name):
    out = _cases(T)[name]()
    pre, post = [], []
    out.grad_fn.register_prehook(lambda g: pre.append(len(g)))
    out.grad_fn.register_hook(lambda grad_inputs, grad_outputs: post.append(len(grad_outputs)))
    out.sum().backward()
    return out.grad_fn.name(), pre, post


@pytest.mark.parametrize("name", sorted(_cases(torch)))
def test_node_hooks_see_pytorchs_output_gradients(name):
    assert _hooks_see(retrograd, name) == _hooks_see(torch, name)


def test_a_pre_hook_replaces_the_gradients_it_sees():
    """LinalgLuBackward0 has L and U (P is not differentiable): a pre-hook doubling both
    doubles the gradient, as PyTorch's."""
    grads = []
    for T in (retrograd, torch):
        a = T.from_numpy(numpy.arange(9.0).reshape(3, 3) + 4 * numpy.eye(3)).requires_grad_()
        _, lower, upper = T.linalg.lu(a)
        lower.grad_fn.register_prehook(lambda g: tuple(None if t is None else 2 * t for t in g))
        (lower.sum() + upper.sum()).backward()
        grads.append(a.grad.numpy())
    numpy.testing.assert_allclose(*grads)
