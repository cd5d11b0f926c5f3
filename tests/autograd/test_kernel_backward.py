"""Gradients made under create_graph by ops whose PyTorch backward kernel reads a tensor of
zero derivative (``defop(backward_reads=...)``, ``autograd.node.KernelBackward``),
beside PyTorch: whether the gradient requires grad, its node and edges, and the second
and third derivatives."""

import functools

import numpy as np
import pytest
import torch

import retrograd
from retrograd.ops._opdef import defop

X = [-1.0, 0.5, 2.0, 0.3, -0.2, 1.5, 0.0, -3.5]


def _f(T):
    return T.nn.functional


CASES = {
    "relu": lambda T, x: T.relu(x),
    "relu_": lambda T, x: T.relu_(x * 1),
    "relu6": lambda T, x: _f(T).relu6(x * 3),
    "hardtanh": lambda T, x: _f(T).hardtanh(x),
    "hardtanh_": lambda T, x: _f(T).hardtanh(x * 1, inplace=True),
    "leaky_relu": lambda T, x: _f(T).leaky_relu(x, 0.1),
    "leaky_relu_": lambda T, x: _f(T).leaky_relu(x * 1, 0.1, inplace=True),
    "rrelu_eval": lambda T, x: _f(T).rrelu(x, training=False),
    "rrelu_eval_": lambda T, x: _f(T).rrelu(x * 1, training=False, inplace=True),
    "threshold": lambda T, x: _f(T).threshold(x, 0.1, 2.0),
    "threshold_": lambda T, x: _f(T).threshold(x * 1, 0.1, 2.0, inplace=True),
    "hardshrink": lambda T, x: _f(T).hardshrink(x, 0.4),
    "softshrink": lambda T, x: _f(T).softshrink(x, 0.4),
    # (off 0, where PyTorch's double backward takes the other side: docs/deviations.md)
    "prelu": lambda T, x: _f(T).prelu((x + 0.05).reshape(1, 2, 4),
                                      T.tensor([0.2, 0.3], dtype=T.float64)),
    "max_pool2d": lambda T, x: _f(T).max_pool2d(x.reshape(1, 1, 2, 4), (1, 2)),
    "max_pool3d": lambda T, x: _f(T).max_pool3d(x.reshape(1, 1, 1, 2, 4), (1, 1, 2)),
    "adaptive_max_pool2d": lambda T, x: _f(T).adaptive_max_pool2d(x.reshape(1, 1, 2, 4),
                                                                  (1, 3)),
    "avg_pool2d": lambda T, x: _f(T).avg_pool2d(x.reshape(1, 1, 2, 4), (1, 2)),
    "avg_pool3d": lambda T, x: _f(T).avg_pool3d(x.reshape(1, 1, 1, 2, 4), (1, 1, 2)),
    "adaptive_avg_pool2d": lambda T, x: _f(T).adaptive_avg_pool2d(x.reshape(1, 1, 2, 4),
                                                                  (1, 3)),
    "adaptive_avg_pool2d_1x1": lambda T, x: _f(T).adaptive_avg_pool2d(x.reshape(1, 2, 2, 2),
                                                                      1),
    "nll_loss": lambda T, x: _f(T).nll_loss(x.reshape(2, 4), T.tensor([0, 3])),
    "nll_loss2d": lambda T, x: _f(T).nll_loss(x.reshape(1, 2, 2, 2),
                                              T.tensor([[[0, 1], [1, 0]]])),
}


def _first(T, name, weight=False):
    x = T.tensor(X, dtype=T.float64, requires_grad=True)
    y = CASES[name](T, x)
    if weight:  # the incoming gradient requires grad too: its history is the rule's
        w = T.linspace(0.5, 2.0, y.numel(), dtype=T.float64).reshape(y.shape)
        y = y * x.sum() * w
    g, = T.autograd.grad(y.sum(), x, create_graph=True)
    return x, g


def _names(fn):
    return None if fn is None else (fn.name(), [None if n is None else n.name()
                                                for n, _ in fn.next_functions])


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradient_requires_grad_as_pytorch(name):
    (tx, tg), (rx, rg) = _first(torch, name), _first(retrograd, name)
    assert rg.requires_grad == tg.requires_grad
    np.testing.assert_array_equal(rg.detach().numpy(), tg.detach().numpy())
    if "pool" not in name and "nll" not in name and "prelu" not in name:
        # (PyTorch's 2-D pools of a 1-D view, nll_loss and prelu add views around the
        # kernel's node; the elementwise ops show it directly. Where PyTorch's kernel
        # reads the result, its edge leads to the op's node, retrograd's to the input's.)
        if name.startswith(("relu", "leaky_relu_", "rrelu_eval_")):
            assert rg.grad_fn.name() == tg.grad_fn.name()
        else:
            assert _names(rg.grad_fn) == _names(tg.grad_fn)
    if not tg.requires_grad:  # (the 1x1 adaptive pool is a mean: no kernel)
        return
    (tgg,) = torch.autograd.grad(tg.sum(), tx, allow_unused=True)
    (rgg,) = retrograd.autograd.grad(rg.sum(), rx, allow_unused=True)
    assert (rgg is None) == (tgg is None)
    if tgg is not None:
        np.testing.assert_array_equal(rgg.numpy(), tgg.numpy())


@pytest.mark.parametrize("name", sorted(CASES))
def test_second_and_third_derivatives_with_a_differentiable_gradient(name):
    """The rule's own history (edge 0) carries the nonzero part."""
    out = []
    for T in (torch, retrograd):
        x, g = _first(T, name, weight=True)
        gg, = T.autograd.grad((g * g).sum(), x, create_graph=True)
        ggg, = T.autograd.grad(gg.sum(), x)
        out.append((g.detach().numpy(), gg.detach().numpy(), ggg.numpy()))
    for t, r in zip(*out, strict=True):
        np.testing.assert_allclose(r, t, rtol=1e-12, atol=1e-12)


def test_relu_gradient_node_edges():
    """ThresholdBackwardBackward0: no history for the constant incoming gradient, and the
    input's for the tensor its kernel reads (PyTorch's leads there through relu's own
    node: docs/deviations.md)."""
    x = retrograd.tensor([-1.0, 2.0], requires_grad=True)
    y = retrograd.relu(x)
    g, = retrograd.autograd.grad(y.sum(), x, create_graph=True)
    (e0, _), (e1, nr) = g.grad_fn.next_functions
    assert g.grad_fn.name() == "ThresholdBackwardBackward0"
    assert e0 is None and e1 is y.grad_fn.next_functions[0][0] and nr == 0


def test_not_under_create_graph():
    x = retrograd.tensor([-1.0, 2.0], requires_grad=True)
    g, = retrograd.autograd.grad(retrograd.relu(x).sum(), x)
    assert not g.requires_grad and g.grad_fn is None


def test_freed_graph_raises_as_pytorch():
    """With its saved tensors freed, a second backward through a rule that reads them
    raises PyTorch's error."""
    for T in (torch, retrograd):
        x = T.tensor([-1.0, 2.0], requires_grad=True)
        g, = T.autograd.grad(_f(T).hardtanh(x * 1).sum(), x, create_graph=True,
                             retain_graph=False)
        with pytest.raises(RuntimeError, match="backward through the graph a second time"):
            T.autograd.grad(g.sum(), x)


@pytest.mark.parametrize("name", ["relu_", "leaky_relu_", "rrelu_eval_", "hardtanh_",
                                  "threshold_"])
@pytest.mark.parametrize("view", [lambda t: t[1:], lambda t: t.t()[0], lambda t: t.flatten(1)])
def test_in_place_on_a_view_then_a_second_backward(name, view):
    """The kernel's edge never leads to the in-place op's own node, which the view's base
    runs through CopySlices: each node runs once, as in PyTorch (a gradient penalty with
    ``LeakyReLU(inplace=True)`` after ``Flatten``)."""
    ops = {"relu_": lambda T, v: v.relu_(),
           "leaky_relu_": lambda T, v: _f(T).leaky_relu(v, 0.2, inplace=True),
           "rrelu_eval_": lambda T, v: _f(T).rrelu(v, training=False, inplace=True),
           "hardtanh_": lambda T, v: _f(T).hardtanh(v, -0.5, 0.5, inplace=True),
           "threshold_": lambda T, v: _f(T).threshold(v, 0.1, 2.0, inplace=True)}
    out = []
    for T in (torch, retrograd):
        x = T.tensor(np.linspace(-1, 1, 12).reshape(3, 4), requires_grad=True)
        w = T.tensor(np.linspace(0.5, 2, 12).reshape(3, 4))
        h = x * w
        ops[name](T, view(h))
        g, = T.autograd.grad((h * h).sum(), x, create_graph=True)
        ((g * g).sum() + g.sum()).backward()
        out.append((g.detach().numpy(), x.grad.numpy()))
    for t, r in zip(*out, strict=True):
        np.testing.assert_allclose(r, t, rtol=1e-12, atol=0)


def _piecewise(T, x):
    return ((T.relu(x) ** 2).sum() + (_f(T).hardtanh(x) * x).sum()
            + _f(T).leaky_relu(x, 0.1).sum() ** 2)


def test_forward_over_reverse():
    """The kernel's node passes a forward-mode tangent on: jvp of grad, jacfwd of jacrev
    and forward-mode Hessians see the rule's second derivative."""
    out = []
    for T in (torch, retrograd):
        f = functools.partial(_piecewise, T)
        x = T.tensor([-1.0, 0.5, 2.0, 0.25], dtype=T.float64)
        v = T.tensor([1.0, 2.0, 3.0, 4.0], dtype=T.float64)
        out.append([T.func.jvp(T.func.grad(f), (x,), (v,))[1].numpy(),
                    T.func.jacfwd(T.func.jacrev(f))(x).numpy(),
                    T.autograd.functional.hessian(f, x, vectorize=True,
                                                  outer_jacobian_strategy="forward-mode")
                    .detach().numpy()])  # (PyTorch's requires grad here)
    for t, r in zip(*out, strict=True):
        np.testing.assert_allclose(r, t, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("delta", [1.0, 0.5])
def test_huber_double_backward_at_delta(delta):
    """At |input - target| = delta PyTorch's double backward is 0 (``d < delta``)."""
    out = []
    for T in (torch, retrograd):
        x = T.tensor([-delta, delta, 0.25, 3.0, float("nan")], dtype=T.float64,
                     requires_grad=True)
        t = T.zeros(5, dtype=T.float64, requires_grad=True)
        loss = _f(T).huber_loss(x, t, delta=delta)
        gx, gt = T.autograd.grad(loss, (x, t), create_graph=True)
        hx, ht = T.autograd.grad((gx * gx).sum() + gt.sum(), (x, t))
        out.append([v.detach().numpy() for v in (gx, gt, hx, ht)])
    for t, r in zip(*out, strict=True):
        np.testing.assert_allclose(r, t, rtol=1e-15, atol=0)


def test_backward_reads_names_a_differentiable_input():
    with pytest.raises(TypeError, match="backward_reads 'index'"):
        defop("take_test", lambda xp, self, index: self[index], inputs=("self", "index"),
              vjp={"self": lambda xp, grad: grad}, backward_reads="index")


def _times_self(f, v):
    return f(v) * v


def test_batched_and_functional_second_derivatives():
    """is_grads_batched runs the kernel's node on batched arrays; func.grad of func.grad
    under vmap finds the relu's gradient differentiable, as PyTorch's."""
    out = []
    for T in (torch, retrograd):
        x = T.tensor([-1.0, 0.5, 2.0], dtype=T.float64, requires_grad=True)
        g, = T.autograd.grad(_f(T).max_pool1d(x.reshape(1, 1, 3), 2, 1).sum(), x,
                             create_graph=True)
        bg, = T.autograd.grad(g, x, grad_outputs=T.eye(3, dtype=T.float64),
                              is_grads_batched=True)
        fg = [T.func.vmap(T.func.grad(T.func.grad(f)))(x.detach())
              for f in (T.relu, functools.partial(_times_self, _f(T).hardtanh))]
        out.append([v.numpy() for v in (bg, *fg)])
    for t, r in zip(*out, strict=True):
        np.testing.assert_array_equal(r, t)
