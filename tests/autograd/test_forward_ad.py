"""Forward-mode AD: dual levels, dual tensors, tangents through ops and in-place writes."""

import numpy
import pytest

import retrograd
from retrograd.autograd import forward_ad as fwAD


def _t(*shape, seed=0):
    return retrograd.from_numpy(numpy.random.default_rng(seed).standard_normal(shape))


def _f(T, x):
    """A composite: elementwise, broadcasting, reductions, matmul, views, cat."""
    y = (x.sin() * x + 1).exp().sum(1, keepdim=True) / x.norm()
    z = T.cat([x.t() @ x, y.expand(3, 3)], 0)
    return z[1:, ::2].tanh().cumsum(0).logsumexp(0)


def test_unpack_dual_is_a_named_tuple():
    x, v = _t(3), _t(3, seed=1)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, v)
        res = fwAD.unpack_dual(d)
        assert isinstance(res, tuple) and res._fields == ("primal", "tangent")
        primal, tangent = res
        assert tangent is res.tangent
        numpy.testing.assert_array_equal(primal.numpy(), x.numpy())
        numpy.testing.assert_array_equal(tangent.numpy(), v.numpy())
        assert fwAD.unpack_dual(primal).tangent is None
        assert fwAD.unpack_dual(x).tangent is None  # make_dual does not touch its input


def test_tangents_are_dropped_when_the_level_exits():
    x, v = _t(3), _t(3, seed=1)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, v)
    assert fwAD.unpack_dual(d).tangent is None
    with fwAD.dual_level():
        assert fwAD.unpack_dual(d).tangent is None


def test_nested_levels_raise():
    with fwAD.dual_level():
        with pytest.raises(RuntimeError, match="Nested forward mode AD is not supported"):
            with fwAD.dual_level():
                pass


def test_make_dual_outside_a_level_raises():
    with pytest.raises(RuntimeError, match="no level exists, make sure to enter_dual_level"):
        fwAD.make_dual(_t(2), _t(2))


def test_make_dual_checks_shapes():
    with fwAD.dual_level():
        with pytest.raises(RuntimeError, match="different size"):
            fwAD.make_dual(_t(2), _t(3))


def test_no_tangent_no_cost():
    with fwAD.dual_level():
        y = _t(3).exp()
        assert y._fw is None


def test_composite_matches_finite_differences():
    x, v = _t(3, 3), _t(3, 3, seed=1)
    with fwAD.dual_level():
        t = fwAD.unpack_dual(_f(retrograd, fwAD.make_dual(x, v))).tangent
    eps = 1e-6
    fd = (_f(retrograd, x + eps * v) - _f(retrograd, x - eps * v)) / (2 * eps)
    numpy.testing.assert_allclose(t.numpy(), fd.numpy(), rtol=1e-6, atol=1e-8)


@pytest.mark.torch
def test_composite_matches_torch():
    torch = pytest.importorskip("torch")
    x, v = _t(3, 3), _t(3, 3, seed=1)
    with fwAD.dual_level():
        t = fwAD.unpack_dual(_f(retrograd, fwAD.make_dual(x, v))).tangent
    import torch.autograd.forward_ad as tfw
    with tfw.dual_level():
        tt = tfw.unpack_dual(_f(torch, tfw.make_dual(torch.from_numpy(x.numpy()),
                                                     torch.from_numpy(v.numpy())))).tangent
    numpy.testing.assert_allclose(t.numpy(), tt.numpy(), rtol=1e-10)


def test_in_place_ops_update_the_tangent():
    x, v = _t(4), _t(4, seed=1)
    x0 = x.numpy().copy()  # d is a view of x: the writes go through to it
    with fwAD.dual_level():
        d = fwAD.make_dual(x, v)
        d.mul_(3).sin_()
        t = fwAD.unpack_dual(d).tangent
    numpy.testing.assert_allclose(t.numpy(), numpy.cos(3 * x0) * 3 * v.numpy())


def test_in_place_write_into_a_view_reaches_the_base():
    base, v = _t(3, 4), _t(2, seed=1)
    with fwAD.dual_level():
        b = base.clone()
        b[1, 1:3] = fwAD.make_dual(_t(2, seed=2), v)
        t = fwAD.unpack_dual(b).tangent
    expected = numpy.zeros((3, 4))
    expected[1, 1:3] = v.numpy()
    numpy.testing.assert_array_equal(t.numpy(), expected)


def test_tangent_is_differentiable_forward_over_reverse():
    """With a primal that requires grad, the tangent carries a graph: d/dx <J(x) v, 1>."""
    x = _t(4).requires_grad_()
    v = _t(4, seed=1)
    with fwAD.dual_level():
        y = (fwAD.make_dual(x, v).sin() * 2).sum()
        t = fwAD.unpack_dual(y).tangent
    (g,) = retrograd.autograd.grad(t, x)
    numpy.testing.assert_allclose(g.numpy(), -2 * numpy.sin(x.detach().numpy()) * v.numpy())


def test_op_without_forward_rule_raises():
    from retrograd.ops._registry import apply, defop
    op = defop("nofw", lambda xp, self: self * 2, vjp={"self": lambda grad: grad * 2})
    with fwAD.dual_level():
        d = fwAD.make_dual(_t(2), _t(2))
        with pytest.raises(NotImplementedError, match="Trying to use forward AD with nofw"):
            apply(op, (d,))
