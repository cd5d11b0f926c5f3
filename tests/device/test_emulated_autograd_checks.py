"""gradcheck, gradgradcheck and autograd.functional on device "cuda" (the emulator): the
finite differences, Jacobians and comparisons run on the device's arrays, pass where
they pass on the CPU, report a wrong backward as on the CPU, and Jacobians and Hessians
equal the CPU's and live on the device."""

import numpy
import pytest

import retrograd
from retrograd.autograd import functional, gradcheck, gradgradcheck
from retrograd.autograd.gradcheck import GradcheckError
from device.emulated_run import emulating

_OPS = {
    "sin": (lambda a, b: a.sin(), ((3,), (2,))),
    "mul": (lambda a, b: a * b, ((2, 3), (3,))),
    "matmul": (lambda a, b: a @ b, ((2, 3), (3, 2))),
    "two_outputs": (lambda a, b: (a.exp(), a.sum() * b), ((3,), (2,))),
}


def _inputs(shapes, device):
    gen = retrograd.Generator().manual_seed(0)
    return tuple(retrograd.randn(s, generator=gen, dtype=retrograd.float64)
                 .to(device).requires_grad_() for s in shapes)


@pytest.mark.parametrize("fast_mode", [False, True])
@pytest.mark.parametrize("name", sorted(_OPS))
def test_gradcheck_and_gradgradcheck_pass_on_the_device(name, fast_mode):
    f, shapes = _OPS[name]
    with emulating():
        inputs = _inputs(shapes, "cuda")
        assert gradcheck(f, inputs, fast_mode=fast_mode, check_forward_ad=name != "matmul")
        assert gradgradcheck(f, inputs, fast_mode=fast_mode)


class _WrongSin(retrograd.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.sin()

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * x.cos() * 2


def _failure(device, fast_mode):
    x = _inputs([(3,)], device)[0]
    with pytest.raises(GradcheckError) as info:
        gradcheck(_WrongSin.apply, (x,), fast_mode=fast_mode)
    return str(info.value)


@pytest.mark.parametrize("fast_mode", [False, True])
def test_a_wrong_backward_is_reported_as_on_the_cpu(fast_mode):
    on_cpu = _failure("cpu", fast_mode)
    with emulating():
        on_device = _failure("cuda", fast_mode)
    head = "Jacobian mismatch for output 0 with respect to input 0,\n"
    assert on_cpu.startswith(head) and on_device.startswith(head)
    # the same report, but for the device the Jacobians print as tensors on it
    assert on_device.replace(", device='cuda:0'", "") == on_cpu
    x = _inputs([(3,)], "cpu")[0]
    assert gradcheck(_WrongSin.apply, (x,), raise_exception=False, fast_mode=fast_mode) is False


def _same_on_device(res, expected):
    if isinstance(expected, tuple):
        assert isinstance(res, tuple) and len(res) == len(expected)
        for r, e in zip(res, expected, strict=True):
            _same_on_device(r, e)
        return
    assert res.device == retrograd.device("cuda", 0)
    numpy.testing.assert_allclose(res.cpu().numpy(), expected.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("kwargs", [{}, {"vectorize": True},
                                    {"vectorize": True, "strategy": "forward-mode"}])
def test_jacobian_equals_the_cpus_on_the_device(kwargs):
    def f(a, b):  # output 1 is independent of b: its zero block is made on the device too
        return a.sin().sum() * b, a.exp()

    expected = functional.jacobian(f, _inputs([(3,), (2,)], "cpu"), **kwargs)
    with emulating():
        _same_on_device(functional.jacobian(f, _inputs([(3,), (2,)], "cuda"), **kwargs),
                        expected)


@pytest.mark.parametrize("name", ["hessian", "hvp", "vhp", "jvp", "vjp"])
def test_hessian_and_products_equal_the_cpus_on_the_device(name):
    def f(a, b):
        return (a.exp() * a).sum() + 0 * b.sum()

    def call(device):
        inputs = _inputs([(3,), (2,)], device)
        if name == "hessian":
            return functional.hessian(f, inputs)
        if name in ("hvp", "vhp"):
            return getattr(functional, name)(f, inputs, inputs)
        g = lambda a, b: a.sin()  # noqa: E731 (b: an input the output is independent of)
        v = inputs if name == "jvp" else inputs[0]
        return getattr(functional, name)(g, inputs, v)

    expected = call("cpu")
    with emulating():
        _same_on_device(call("cuda"), expected)


class _Two(retrograd.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2, x * 3

    @staticmethod
    def backward(ctx, a, b):
        assert a.device == b.device == retrograd.device("cuda", 0)
        return a * 2 + b * 3

    @staticmethod
    def jvp(ctx, t):
        return t * 2, t * 3


def test_a_functions_unused_output_gets_zeros_on_the_device():
    with emulating():
        x = retrograd.ones(3, device="cuda", requires_grad=True)
        p, _ = _Two.apply(x)
        p.sum().backward()
        _same_on_device(x.grad, retrograd.full((3,), 2.0))


def test_a_functions_jvp_runs_per_direction_on_the_device():
    expected = functional.jacobian(_Two.apply, _inputs([(3,)], "cpu"), vectorize=True,
                                   strategy="forward-mode")
    with emulating():
        _same_on_device(functional.jacobian(_Two.apply, _inputs([(3,)], "cuda"),
                                            vectorize=True, strategy="forward-mode"), expected)
