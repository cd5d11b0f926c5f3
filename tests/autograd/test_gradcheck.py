"""``autograd.gradcheck`` / ``gradgradcheck``: what they accept, what they catch, and
PyTorch's errors and messages."""

import warnings

import numpy
import pytest

import retrograd
from retrograd.autograd import gradcheck, gradgradcheck
from retrograd.autograd.gradcheck import GradcheckError
from retrograd.ops._registry import apply, defop


def _x(*shape, low=0.1, high=0.9, seed=0):
    a = numpy.random.default_rng(seed).uniform(low, high, shape)
    return retrograd.from_numpy(a).requires_grad_()


def _op(forward, rule):
    """A one-input op with the given (possibly wrong) vjp rule."""
    op = defop("under_test", forward, vjp={"self": rule})
    return lambda x: apply(op, (x,))


_wrong_sin = _op(lambda xp, self: xp.sin(self), lambda grad, self: grad * self)


def test_correct_functions_pass():
    x, y = _x(2, 3), _x(3, seed=1)
    assert gradcheck(retrograd.sin, (x,)) is True
    assert gradcheck(lambda a, b: (a * b, a / b), (x, y))
    assert gradcheck(lambda a, k: a * k, (x, 2.5))  # a non-tensor argument
    assert gradcheck(retrograd.mul, [x, y], fast_mode=True)
    assert gradgradcheck(retrograd.tanh, (x,))
    assert gradgradcheck(lambda a, b: a * b * b, (x, y), gen_non_contig_grad_outputs=True)


def test_mismatch_message_and_return():
    x = _x(3)
    with pytest.raises(GradcheckError) as info:
        gradcheck(_wrong_sin, (x,))
    assert isinstance(info.value, RuntimeError)
    msg = str(info.value)
    assert msg.startswith("Jacobian mismatch for output 0 with respect to input 0,\nnumerical:")
    analytical = msg.split("\nanalytical:")[1]  # the wrong rule's d/dx is x itself
    assert f"{x.detach().numpy()[0]:.4f}" in analytical
    assert gradcheck(_wrong_sin, (x,), raise_exception=False) is False
    with pytest.raises(GradcheckError, match="computed \nin fast mode"):
        gradcheck(_wrong_sin, (x,), fast_mode=True)


def test_tolerances_decide():
    """The comparison is |analytical - numerical| <= atol + rtol * |numerical|."""
    slightly_off = _op(lambda xp, self: 2 * self, lambda grad: grad * 2.01)
    x = _x(3)
    assert not gradcheck(slightly_off, (x,), raise_exception=False)  # 0.01 > 1e-5 + 2e-3
    assert gradcheck(slightly_off, (x,), rtol=0.006)  # 0.01 <= 1e-5 + 0.012


@pytest.mark.torch
def test_errors_and_warnings_match_torch(torch):
    def run(lib, make):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            try:
                lib.autograd.gradcheck(lib.sin, (make(lib),), eps=1e-3, atol=1e-2)
                err = None
            except Exception as e:  # noqa: BLE001 - compared below
                err = (type(e), str(e))
        return err, [str(m.message) for m in w if m.category is UserWarning]

    float32 = lambda lib: lib.ones(3, dtype=lib.float32).requires_grad_()  # noqa: E731
    no_grad = lambda lib: lib.ones(3, dtype=lib.float64)  # noqa: E731
    for make in (float32, no_grad):
        assert run(retrograd, make) == run(torch, make)


def test_stride_zero_input_raises():
    a = numpy.lib.stride_tricks.as_strided(numpy.ones(3), (3, 4), (8, 0))
    x = retrograd.from_numpy(a).requires_grad_()
    with pytest.raises(RuntimeError, match="The 0th input has a dimension with stride 0"):
        gradcheck(retrograd.sin, (x,))


def test_unimplemented_modes_raise():
    x = _x(2)
    with pytest.raises(NotImplementedError, match="vmap"):
        gradcheck(retrograd.sin, (x,), check_batched_grad=True)
    with pytest.raises(AssertionError, match="requires check_forward_ad"):
        gradcheck(retrograd.sin, (x,), check_batched_forward_grad=True)


def test_outputs_without_gradient():
    """Non-differentiable outputs need a zero numerical gradient."""
    x = _x(3)
    assert gradcheck(lambda t: t > 0.5, (x,))
    with pytest.raises(GradcheckError, match="Numerical gradient for function expected to be "
                                             "zero"):
        gradcheck(lambda t: (t * 1e7).detach(), (x,), eps=1e-3)


def test_backward_must_scale_with_grad_output():
    leaky = _op(lambda xp, self: self * 1,
                lambda xp, grad: grad if grad.any() else xp.ones_like(grad))
    with pytest.raises(GradcheckError, match="backward not multiplied by grad_output"):
        gradcheck(leaky, (_x(3),))


def test_nondeterministic_backward():
    rng = numpy.random.default_rng(0)
    noisy = _op(lambda xp, self: self * 1, lambda grad: grad * (1 + 1e-9 * rng.random()))
    with pytest.raises(GradcheckError, match="Backward is not reentrant"):
        gradcheck(noisy, (_x(3),))
    assert gradcheck(noisy, (_x(3),), nondet_tol=1e-6)


def test_gradgradcheck_catches_a_wrong_second_derivative():
    """The rule's value is right but, under create_graph, it hides its dependence on x."""
    def rule(xp, grad, self):
        sq = self * self if xp is numpy else retrograd.from_numpy(self.detach().numpy() ** 2)
        return grad * 3 * sq
    cube = _op(lambda xp, self: self * self * self, rule)
    x = _x(3)
    assert gradcheck(cube, (x,))
    assert gradgradcheck(cube, (x,), raise_exception=False) is False


@pytest.mark.parametrize("fast_mode", [False, True])
def test_check_forward_ad(fast_mode):
    x, y = _x(3), _x(3)
    assert gradcheck(lambda a, b: (a.sin() * b, a @ b), (x, y), check_forward_ad=True,
                     fast_mode=fast_mode)
    assert gradcheck(retrograd.tanh, (x,), check_forward_ad=True, check_backward_ad=False,
                     fast_mode=fast_mode)


def test_check_forward_ad_mismatch_shows_both_jacobians():
    class BadJvp(retrograd.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

        @staticmethod
        def jvp(ctx, t):
            return t * 3

    with pytest.raises(GradcheckError, match=r"(?s)While considering the forward AD.*"
                                             r"numerical:.*analytical:"):
        gradcheck(BadJvp.apply, (_x(2),), check_forward_ad=True)
    assert gradcheck(BadJvp.apply, (_x(2),), check_forward_ad=False)
    assert not gradcheck(BadJvp.apply, (_x(2),), check_forward_ad=True, raise_exception=False)


def test_gradgradcheck_forward_over_reverse():
    """Tangents flow through a create_graph backward, saved outputs included (tanh)."""
    x, w = _x(3), _x(3)
    assert gradgradcheck(lambda a, b: (a.unsqueeze(1) @ b.unsqueeze(0)).tanh().sum(0),
                         (x, w), check_fwd_over_rev=True)
