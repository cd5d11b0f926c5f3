"""Custom ``autograd.Function``: ctx methods, node names, errors, higher order."""

import math

import numpy
import pytest

import retrograd
from retrograd.autograd import Function, gradcheck, gradgradcheck
from retrograd.autograd import forward_ad as fwAD
from retrograd.autograd.function import once_differentiable


def _x(*shape, seed=0):
    g = numpy.random.default_rng(seed)
    return retrograd.from_numpy(g.standard_normal(shape)).requires_grad_()


class Exp(Function):
    @staticmethod
    def forward(ctx, x):
        y = x.exp()
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * y

    @staticmethod
    def jvp(ctx, t):
        return t * ctx.result


class ExpCtx(Function):
    """The setup_context style: forward without ctx."""

    @staticmethod
    def forward(x):
        return x.exp()

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(output)

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * y


def test_forward_backward_and_node_name():
    x = _x(3)
    y = Exp.apply(x)
    assert y.grad_fn.name() == "ExpBackward"
    assert type(y.grad_fn).__name__ == "ExpBackward"
    y.sum().backward()
    numpy.testing.assert_allclose(x.grad.numpy(), numpy.exp(x.detach().numpy()))


def test_setup_context_style():
    x = _x(4)
    y = ExpCtx.apply(x)
    assert y.grad_fn.name() == "ExpCtxBackward"
    (g,) = retrograd.autograd.grad(y.sum(), x)
    numpy.testing.assert_allclose(g.numpy(), numpy.exp(x.detach().numpy()))


def test_no_grad_input_gives_no_node():
    x = _x(3).detach()
    y = Exp.apply(x)
    assert y.grad_fn is None and not y.requires_grad


def test_needs_input_grad_and_non_tensor_inputs_outputs():
    seen = {}

    class Scale(Function):
        @staticmethod
        def forward(ctx, x, k, w):
            seen["needs"] = ctx.needs_input_grad
            ctx.k = k
            return x * k + w, k

        @staticmethod
        def backward(ctx, g, g_k):
            seen["g_k"] = g_k
            return g * ctx.k, None, g

    x, w = _x(3), _x(3).detach()
    y, k = Scale.apply(x, 2.5, w)
    assert seen["needs"] == (True, False, False)
    assert k == 2.5
    y.sum().backward()
    assert seen["g_k"] is None  # a non-tensor output has no gradient
    numpy.testing.assert_allclose(x.grad.numpy(), 2.5)


def test_gradient_for_non_tensor_input_must_be_none():
    class Bad(Function):
        @staticmethod
        def forward(ctx, x, k):
            return x * k

        @staticmethod
        def backward(ctx, g):
            return g, g

    with pytest.raises(RuntimeError, match="returned a gradient different than None at "
                                           "position 2"):
        Bad.apply(_x(2), 3.0).sum().backward()


def test_wrong_number_of_gradients_names_the_function():
    class Two(Function):
        @staticmethod
        def forward(ctx, x, y):
            return x + y

        @staticmethod
        def backward(ctx, g):
            return g

    with pytest.raises(RuntimeError, match=r"function TwoBackward returned an incorrect number "
                                           r"of gradients \(expected 2, got 1\)"):
        Two.apply(_x(2), _x(2)).sum().backward()


def test_extra_none_gradients_are_allowed():
    class One(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2, None, None

    x = _x(2)
    One.apply(x).sum().backward()
    numpy.testing.assert_allclose(x.grad.numpy(), 2)


def test_wrong_gradient_shape_names_the_function():
    class Shape(Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            return retrograd.ones(5, dtype=g.dtype)

    with pytest.raises(RuntimeError, match=r"Function ShapeBackward returned an invalid gradient "
                                           r"at index 0 - got \[5\] but expected shape "
                                           r"compatible with \[3\]"):
        Shape.apply(_x(3)).sum().backward()


def test_mark_non_differentiable():
    class Sort(Function):
        @staticmethod
        def forward(ctx, x):
            idx = retrograd.from_numpy(numpy.argsort(x.detach().numpy()))
            out = x[idx]
            ctx.mark_non_differentiable(idx)
            ctx.save_for_backward(idx)
            ctx.n = x.shape[0]
            return out, idx

        @staticmethod
        def backward(ctx, g, g_idx):
            (idx,) = ctx.saved_tensors
            res = retrograd.zeros(ctx.n, dtype=g.dtype)
            res[idx] = g
            return res

    x = _x(4)
    out, idx = Sort.apply(x)
    assert out.requires_grad and not idx.requires_grad
    (out * retrograd.arange(4.0, dtype=retrograd.float64)).sum().backward()
    expected = numpy.empty(4)
    expected[idx.numpy()] = numpy.arange(4.0)
    numpy.testing.assert_allclose(x.grad.numpy(), expected)


def test_mark_dirty():
    class AddOne(Function):
        @staticmethod
        def forward(ctx, x):
            x.add_(1)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    a = _x(3)
    b = a * 2
    c = AddOne.apply(b)
    assert c is b and b.grad_fn.name() == "AddOneBackward"
    c.sum().backward()
    numpy.testing.assert_allclose(a.grad.numpy(), 2)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        AddOne.apply(_x(3))


def test_set_materialize_grads():
    seen = []

    class Two(Function):
        @staticmethod
        def forward(ctx, x, materialize):
            ctx.set_materialize_grads(materialize)
            return x.clone(), x.clone()

        @staticmethod
        def backward(ctx, g1, g2):
            seen.append(g2)
            return g1, None

    Two.apply(_x(2), True)[0].sum().backward()
    Two.apply(_x(2), False)[0].sum().backward()
    assert seen[0] is not None and not seen[0].numpy().any()
    assert seen[1] is None


def test_saved_tensors_go_through_saved_tensor_hooks():
    packed = []

    def pack(t):
        packed.append(t)
        return t * 2

    with retrograd.autograd.graph.saved_tensors_hooks(pack, lambda t: t / 2):
        x = _x(3)
        y = Exp.apply(x)
    assert len(packed) == 1
    y.sum().backward()
    numpy.testing.assert_allclose(x.grad.numpy(), numpy.exp(x.detach().numpy()))


def test_saved_tensors_freed_after_backward():
    x = _x(3)
    y = Exp.apply(x)
    y.sum().backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second"):
        y.grad_fn.saved_tensors  # noqa: B018


def test_saved_input_modified_in_place_is_detected():
    class Square(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * g * x

    a = _x(3)
    b = a * 1
    y = Square.apply(b)
    b.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_once_differentiable():
    class Cube(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        @once_differentiable
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3 * g * x * x

    x = _x(3)
    y = Cube.apply(x)
    (g,) = retrograd.autograd.grad((y * y).sum(), x, create_graph=True)
    numpy.testing.assert_allclose(g.detach().numpy(), 6 * x.detach().numpy() ** 5)
    with pytest.raises(RuntimeError, match="trying to differentiate twice a function that was "
                                           "marked with @once_differentiable"):
        g.sum().backward()


class CubeDouble(Function):
    """x ** 3 whose backward is itself differentiable (it uses differentiable ops)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 3 * g * x * x


def test_double_backward_custom_function_gradgradcheck():
    x = _x(4)
    assert gradcheck(CubeDouble.apply, (x,))
    assert gradgradcheck(CubeDouble.apply, (x,))
    (g,) = retrograd.autograd.grad(CubeDouble.apply(x).sum(), x, create_graph=True)
    (gg,) = retrograd.autograd.grad(g.sum(), x)
    numpy.testing.assert_allclose(gg.numpy(), 6 * x.detach().numpy())


def test_gradgradcheck_catches_a_wrong_double_backward():
    class Wrong(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3 * g * x.detach() * x  # drops half of the second derivative

    x = _x(3)
    assert gradcheck(Wrong.apply, (x,))
    assert not gradgradcheck(Wrong.apply, (x,), raise_exception=False)


def test_function_jvp_in_forward_mode():
    class ExpF(Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_forward(y)
            return y

        @staticmethod
        def backward(ctx, g):
            raise AssertionError("not called")

        @staticmethod
        def jvp(ctx, t):
            (y,) = ctx.saved_tensors
            return t * y

    x = _x(3).detach()
    v = retrograd.ones(3, dtype=retrograd.float64)
    with fwAD.dual_level():
        y = ExpF.apply(fwAD.make_dual(x, v))
        t = fwAD.unpack_dual(y).tangent
    numpy.testing.assert_allclose(t.numpy(), numpy.exp(x.numpy()))


def test_function_without_jvp_raises_in_forward_mode():
    with fwAD.dual_level():
        d = fwAD.make_dual(_x(2).detach(), retrograd.ones(2, dtype=retrograd.float64))
        with pytest.raises(NotImplementedError, match="You must implement the jvp function"):
            ExpCtx.apply(d)


# ---- acceptance: the Legendre polynomial of PyTorch's custom-Function tutorial --------------

def _legendre_class(T):
    class LegendrePolynomial3(T.autograd.Function):
        @staticmethod
        def forward(ctx, input):
            ctx.save_for_backward(input)
            return 0.5 * (5 * input ** 3 - 3 * input)

        @staticmethod
        def backward(ctx, grad_output):
            (input,) = ctx.saved_tensors
            return grad_output * 1.5 * (5 * input ** 2 - 1)
    return LegendrePolynomial3


def _fit_legendre(T, steps):
    """y = a + b * P3(c + d x) fitted to sin(x) by plain gradient descent."""
    P3 = _legendre_class(T)
    dtype = T.float64
    x = T.linspace(-math.pi, math.pi, 2000, dtype=dtype)
    y = T.sin(x)
    a = T.full((), 0.0, dtype=dtype, requires_grad=True)
    b = T.full((), -1.0, dtype=dtype, requires_grad=True)
    c = T.full((), 0.0, dtype=dtype, requires_grad=True)
    d = T.full((), 0.3, dtype=dtype, requires_grad=True)
    lr = 5e-6
    losses = []
    for _ in range(steps):
        y_pred = a + b * P3.apply(c + d * x)
        loss = (y_pred - y).pow(2).sum()
        losses.append(loss.item())
        loss.backward()
        with T.no_grad():
            for p in (a, b, c, d):
                p -= lr * p.grad
                p.grad = None
    return losses, [p.item() for p in (a, b, c, d)]


def test_legendre_fit_decreases_loss():
    losses, _ = _fit_legendre(retrograd, 2000)
    assert losses[-1] < 10  # PyTorch's tutorial ends at 8.88
    assert all(b < a for a, b in zip(losses, losses[1:], strict=False))
    assert gradcheck(_legendre_class(retrograd).apply, (_x(5) * 0.5,))


@pytest.mark.torch
def test_legendre_fit_matches_torch():
    torch = pytest.importorskip("torch")
    losses, params = _fit_legendre(retrograd, 100)
    t_losses, t_params = _fit_legendre(torch, 100)
    numpy.testing.assert_allclose(losses, t_losses, rtol=1e-9)
    numpy.testing.assert_allclose(params, t_params, rtol=1e-9, atol=1e-15)


@pytest.mark.torch
def test_node_name_matches_torch():
    torch = pytest.importorskip("torch")
    t_cls = _legendre_class(torch)
    x = torch.ones(2, requires_grad=True)
    assert t_cls.apply(x).grad_fn.name() == \
        _legendre_class(retrograd).apply(_x(2)).grad_fn.name()


def test_vjp_may_stand_for_backward():
    class Double(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def vjp(ctx, g):
            return g * 2

    x = _x(2)
    Double.apply(x).sum().backward()
    numpy.testing.assert_allclose(x.grad.numpy(), 2)
    assert repr(Double.apply(x).grad_fn).startswith("<retrograd.autograd.function.DoubleBackward "
                                                    "object at 0x")
