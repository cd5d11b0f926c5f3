"""vmap on device "cuda" (the emulator): entering and leaving a level keep the arrays on
the device, an output that did not depend on the mapped input included."""

import numpy

import retrograd
from device.emulated_run import emulating


def _on_device(t, expected):
    assert t.device == retrograd.device("cuda", 0)
    numpy.testing.assert_array_equal(t.cpu().numpy(), expected)


def test_unbatched_output_is_repeated_on_the_device():
    with emulating():
        x = retrograd.arange(6.0, device="cuda").reshape(3, 2)
        y = retrograd.tensor([1.0, 2.0], device="cuda")
        _on_device(retrograd.vmap(lambda a: y * 2)(x), [[2.0, 4.0]] * 3)
        _on_device(retrograd.vmap(lambda a: y * 2, out_dims=1)(x), [[2.0] * 3, [4.0] * 3])
        _on_device(retrograd.vmap(retrograd.vmap(lambda a: y))(x), [[[1.0, 2.0]] * 2] * 3)


def test_batched_output_moves_its_batch_dim_on_the_device():
    with emulating():
        x = retrograd.arange(6.0, device="cuda").reshape(3, 2)
        _on_device(retrograd.vmap(lambda a: a + 1, out_dims=1)(x), [[1.0, 3.0, 5.0],
                                                                      [2.0, 4.0, 6.0]])
        _on_device(retrograd.vmap(retrograd.vmap(lambda a: a * 2), in_dims=1)(x),
                   [[0.0, 4.0, 8.0], [2.0, 6.0, 10.0]])


def _on_both(fn):
    """``fn(device)`` on the CPU and on device "cuda": the device's result is there and
    equal to the CPU's."""
    want = fn("cpu")
    with emulating():
        got = fn("cuda")
        _on_device(got, want.numpy())


def test_batched_gradients_run_on_the_device():
    """``is_grads_batched`` walks the graph once with the batch of cotangents on the device
    (a select's backward writes into a batched buffer made by the data's module)."""
    def grads(device):
        x = retrograd.arange(6.0, device=device).reshape(2, 3).requires_grad_()
        w = retrograd.linspace(-1.0, 1.0, 12, device=device).reshape(3, 4)
        y = (x[1] * 2 + (x @ w).sum(0)[:3]).sin()
        return retrograd.autograd.grad(y, x, retrograd.eye(3, device=device),
                                       is_grads_batched=True)[0]
    _on_both(grads)


def test_jacobians_run_on_the_device():
    """jacrev (a batched backward) and jacfwd (batched tangents) over a gather, a product
    and a reduction."""
    def f(x):
        return (x[[2, 0]] * x.cumsum(0)[:2]).exp()

    def jac(device, transform):
        return transform(f)(retrograd.tensor([0.5, -1.0, 2.0], device=device))
    _on_both(lambda device: jac(device, retrograd.func.jacrev))
    _on_both(lambda device: jac(device, retrograd.func.jacfwd))
