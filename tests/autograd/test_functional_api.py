"""``autograd.functional`` against PyTorch, and batched gradients."""

import numpy
import pytest

import retrograd
from retrograd.autograd import functional as F

pytestmark = pytest.mark.torch
torch = pytest.importorskip("torch")

_rng = numpy.random.default_rng(0)
_W1, _B1, _W2 = (_rng.standard_normal(s) for s in ((5, 4), (5,), (3, 5)))


def _net(T):
    w1, b1, w2 = (T.from_numpy(a) for a in (_W1, _B1, _W2))
    return lambda x: T.tanh(w2 @ T.tanh(w1 @ x + b1))


def _pair(T):
    """Two inputs, two outputs (one a matrix)."""
    return lambda x, y: (x.sin() * y, T.outer(x, y).exp())


def _scalar(T):
    net = _net(T)
    return lambda x: (net(x) ** 2).sum() + (x ** 3).sum()


def _np(x):
    if isinstance(x, (tuple, list)):
        return [_np(e) for e in x]
    return x.detach().numpy()


def _same(a, b):
    if isinstance(a, (tuple, list)):
        assert isinstance(b, (tuple, list)) and len(a) == len(b)
        for u, v in zip(a, b, strict=True):
            _same(u, v)
        return
    assert tuple(a.shape) == tuple(b.shape)
    numpy.testing.assert_allclose(_np(a), _np(b), rtol=1e-10, atol=1e-12)


def _both(*arrays):
    return (tuple(retrograd.from_numpy(a.copy()) for a in arrays),
            tuple(torch.from_numpy(a.copy()) for a in arrays))


@pytest.mark.parametrize("vectorize", [False, True])
def test_jacobian_of_network_matches_torch(vectorize):
    (x,), (tx,) = _both(_rng.standard_normal(4))
    _same(F.jacobian(_net(retrograd), x, vectorize=vectorize),
          torch.autograd.functional.jacobian(_net(torch), tx))


def test_jacobian_forward_mode_matches_torch():
    (x,), (tx,) = _both(_rng.standard_normal(4))
    _same(F.jacobian(_net(retrograd), x, vectorize=True, strategy="forward-mode"),
          torch.autograd.functional.jacobian(_net(torch), tx, vectorize=True,
                                             strategy="forward-mode"))


@pytest.mark.parametrize("vectorize", [False, True])
def test_jacobian_tuple_nesting_matches_torch(vectorize):
    (x, y), (tx, ty) = _both(_rng.standard_normal(3), _rng.standard_normal(3))
    _same(F.jacobian(_pair(retrograd), (x, y), vectorize=vectorize),
          torch.autograd.functional.jacobian(_pair(torch), (tx, ty)))
    # a tuple of one input keeps the tuple level
    _same(F.jacobian(_net(retrograd), (x.new_ones(4),), vectorize=vectorize),
          torch.autograd.functional.jacobian(_net(torch), (tx.new_ones(4),)))


@pytest.mark.parametrize("vectorize", [False, True])
def test_hessian_of_network_matches_torch(vectorize):
    (x,), (tx,) = _both(_rng.standard_normal(4))
    _same(F.hessian(_scalar(retrograd), x, vectorize=vectorize),
          torch.autograd.functional.hessian(_scalar(torch), tx))


def test_hessian_tuple_inputs_matches_torch():
    (x, y), (tx, ty) = _both(_rng.standard_normal(3), _rng.standard_normal(3))
    f = lambda T: lambda a, b: (a.exp() * b * b).sum()  # noqa: E731
    _same(F.hessian(f(retrograd), (x, y)), torch.autograd.functional.hessian(f(torch), (tx, ty)))


def test_jacobian_create_graph_is_differentiable():
    (x,), (tx,) = _both(_rng.standard_normal(4))
    x.requires_grad_()
    tx.requires_grad_()
    j = F.jacobian(_net(retrograd), x, create_graph=True)
    tj = torch.autograd.functional.jacobian(_net(torch), tx, create_graph=True)
    assert j.requires_grad
    (g,) = retrograd.autograd.grad(j.sum(), x)
    (tg,) = torch.autograd.grad(tj.sum(), tx)
    _same(g, tg)


@pytest.mark.parametrize("name", ["vjp", "jvp"])
@pytest.mark.parametrize("create_graph", [False, True])
def test_vjp_jvp_match_torch(name, create_graph):
    (x, y), (tx, ty) = _both(_rng.standard_normal(3), _rng.standard_normal(3))
    shapes = ((3,), (3, 3)) if name == "vjp" else ((3,), (3,))  # outputs' / inputs' shapes
    vs = [_rng.standard_normal(s) for s in shapes]
    v, tv = _both(*vs)
    res = getattr(F, name)(_pair(retrograd), (x, y), v, create_graph=create_graph)
    t_res = getattr(torch.autograd.functional, name)(_pair(torch), (tx, ty), tv,
                                                     create_graph=create_graph)
    _same(res, t_res)


@pytest.mark.parametrize("name", ["vhp", "hvp"])
def test_vhp_hvp_match_torch(name):
    (x, v), (tx, tv) = _both(_rng.standard_normal(4), _rng.standard_normal(4))
    _same(getattr(F, name)(_scalar(retrograd), x, v),
          getattr(torch.autograd.functional, name)(_scalar(torch), tx, tv))


def test_single_tensor_in_and_out_is_not_wrapped():
    (x,), _ = _both(_rng.standard_normal(4))
    out, g = F.vjp(_net(retrograd), x, retrograd.ones(3, dtype=retrograd.float64))
    assert isinstance(out, retrograd.Tensor) and isinstance(g, retrograd.Tensor)


def test_strict_mode_errors_match_torch():
    (x, y), (tx, ty) = _both(_rng.standard_normal(3), _rng.standard_normal(3))
    f = lambda a, b: a * 2  # noqa: E731 - independent of b
    with pytest.raises(RuntimeError) as t_err:
        torch.autograd.functional.jacobian(f, (tx, ty), strict=True)
    with pytest.raises(RuntimeError) as err:
        F.jacobian(f, (x, y), strict=True)
    assert str(err.value) == str(t_err.value)
    with pytest.raises(RuntimeError) as t_err:
        torch.autograd.functional.vjp(lambda a: a.detach(), tx, ty, strict=True)
    with pytest.raises(RuntimeError) as err:
        F.vjp(lambda a: a.detach(), x, y, strict=True)
    assert str(err.value) == str(t_err.value)
    # without strict the Jacobian of an unused input is zeros
    _same(F.jacobian(f, (x, y)), torch.autograd.functional.jacobian(f, (tx, ty)))


def test_bad_v_errors_match_torch():
    (x,), (tx,) = _both(_rng.standard_normal(3))
    for v, tv in [(retrograd.ones(2, dtype=retrograd.float64), torch.ones(2,
                                                                            dtype=torch.float64))]:
        with pytest.raises(RuntimeError) as t_err:
            torch.autograd.functional.vjp(torch.sin, tx, tv)
        with pytest.raises(RuntimeError) as err:
            F.vjp(retrograd.sin, x, v)
        assert str(err.value) == str(t_err.value)
    with pytest.raises(TypeError):
        F.jacobian(retrograd.sin, [x])


def test_grad_is_grads_batched_matches_rows():
    g = numpy.random.default_rng(1)
    x = retrograd.from_numpy(g.standard_normal((3, 4))).requires_grad_()
    w = retrograd.from_numpy(g.standard_normal((4, 5)))
    y = (x @ w).tanh().sum(0) * x.sum()  # elementwise, matmul and fallback (sum) nodes
    cots = g.standard_normal((6, 5))
    (batched,) = retrograd.autograd.grad(y, x, retrograd.from_numpy(cots), retain_graph=True,
                                         is_grads_batched=True)
    assert tuple(batched.shape) == (6, 3, 4)
    for b in range(6):
        (row,) = retrograd.autograd.grad(y, x, retrograd.from_numpy(cots[b]), retain_graph=True)
        numpy.testing.assert_allclose(batched[b].numpy(), row.numpy(), rtol=1e-12)
    tx = torch.from_numpy(x.detach().numpy()).requires_grad_()
    ty = (tx @ torch.from_numpy(w.numpy())).tanh().sum(0) * tx.sum()
    (t_batched,) = torch.autograd.grad(ty, tx, torch.from_numpy(cots), is_grads_batched=True)
    _same(batched, t_batched)


def test_is_grads_batched_shape_error():
    x = retrograd.ones(3, dtype=retrograd.float64, requires_grad=True)
    with pytest.raises(RuntimeError, match="we interpret the first dimension"):
        retrograd.autograd.grad(x * 2, x, retrograd.ones(2, 4, dtype=retrograd.float64),
                                is_grads_batched=True)


def test_w5_network_jacobian_matches_torch():
    """The benchmark's 256->256 tanh MLP (smaller), vectorized, float32."""
    g = numpy.random.default_rng(2)
    arrays = [g.uniform(-0.1, 0.1, s).astype(numpy.float32)
              for s in ((32, 32), (32,), (32, 32), (32,), (32,))]
    (w1, b1, w2, b2, x), (tw1, tb1, tw2, tb2, tx) = _both(*arrays)

    def net(T, w1, b1, w2, b2):
        return lambda v: T.tanh(T.tanh(v @ w1.t() + b1) @ w2.t() + b2)
    j = F.jacobian(net(retrograd, w1, b1, w2, b2), x, vectorize=True)
    tj = torch.autograd.functional.jacobian(net(torch, tw1, tb1, tw2, tb2), tx, vectorize=True)
    numpy.testing.assert_allclose(j.numpy(), tj.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("fn", [
    lambda T, x: x.index_fill(1, T.tensor([0, 2]), 0.5).sin(),
    lambda T, x: x.masked_fill(x > 0, 1.0) * x,
    lambda T, x: (x.unsqueeze(0) * x.t().unsqueeze(-1)).sum(1),
    lambda T, x: T.cat([x, x.exp()], 1).cumsum(0)[:, 1:],
    lambda T, x: (x @ x.t()).norm(dim=0) * x.t().prod(0) + x.split(1, 0)[1].squeeze(0),
], ids=["index_fill", "masked_fill", "broadcast", "cat_cumsum", "matmul_norm_split"])
@pytest.mark.parametrize("strategy", ["reverse-mode", "forward-mode"])
def test_batched_jacobian_matches_torch(fn, strategy):
    (x,), (tx,) = _both(_rng.standard_normal((3, 3)))
    _same(F.jacobian(lambda v: fn(retrograd, v), x, vectorize=True, strategy=strategy),
          torch.autograd.functional.jacobian(lambda v: fn(torch, v), tx))


def test_forward_mode_jacobian_tuple_and_custom_function():
    class Cube(retrograd.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_forward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            raise AssertionError("forward mode only")

        @staticmethod
        def jvp(ctx, t):
            (x,) = ctx.saved_tensors
            return 3 * x * x * t

    (x, y), (tx, ty) = _both(_rng.standard_normal(3), _rng.standard_normal(3))
    _same(F.jacobian(lambda a, b: (Cube.apply(a) * b, T_outer(a, b)), (x, y), vectorize=True,
                     strategy="forward-mode"),
          torch.autograd.functional.jacobian(lambda a, b: (a ** 3 * b, torch.outer(a, b)),
                                             (tx, ty)))


def T_outer(a, b):  # noqa: N802
    return retrograd.outer(a, b)


def test_hessian_forward_over_reverse_matches_torch():
    (x,), (tx,) = _both(_rng.standard_normal(4))
    _same(F.hessian(_scalar(retrograd), x, vectorize=True,
                    outer_jacobian_strategy="forward-mode"),
          torch.autograd.functional.hessian(_scalar(torch), tx))
