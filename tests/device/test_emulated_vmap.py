"""vmap on device "cuda" (the emulator): entering and leaving a level keep the arrays on
the device, an output that did not depend on the mapped input included."""

import numpy
import pytest

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


def test_batched_and_unbatched_device_tensors_meet_on_the_device():
    """Inside vmap a batched tensor is on its data's device, so it meets an unbatched one
    there (and a Python scalar joins it)."""
    with emulating():
        x = retrograd.arange(6.0, device="cuda").reshape(3, 2)
        y = retrograd.tensor([1.0, 2.0], device="cuda")
        seen = []

        def f(a):
            seen.append(a.device)
            return a * y + 1

        _on_device(retrograd.vmap(f)(x), [[1.0, 3.0], [3.0, 7.0], [5.0, 11.0]])
        assert seen == [retrograd.device("cuda", 0)]


def _draws(make, randomness, device):
    retrograd.manual_seed(3)
    x = retrograd.zeros(3, 4, device=device)
    return retrograd.vmap(lambda a: a + make(a, device), randomness=randomness)(x)


@pytest.mark.parametrize("make", [
    lambda a, d: retrograd.randn(4, device=d),
    lambda a, d: retrograd.rand_like(a),
    lambda a, d: retrograd.randint(0, 100, (4,), device=d).float(),
    lambda a, d: retrograd.nn.functional.dropout(a + 1, 0.5)],
    ids=["randn", "rand_like", "randint", "dropout"])
@pytest.mark.parametrize("randomness", ["different", "same"])
def test_random_ops_draw_on_the_device_as_on_the_cpu(make, randomness):
    """'different': each batch element's own draw (from the host generator), stacked as a
    batch on the device; 'same': one draw shared by the batch; both as the CPU draws them
    from the same seed."""
    host = _draws(make, randomness, "cpu")
    with emulating():
        got = _draws(make, randomness, "cuda")
    assert got.device == retrograd.device("cuda", 0)
    rows = got.cpu().numpy()
    numpy.testing.assert_array_equal(rows, host.numpy())
    assert (len({r.tobytes() for r in rows}) == 3) == (randomness == "different")


@pytest.mark.parametrize("f", [
    lambda t, q, k, v: retrograd.nn.functional.one_hot(t, 4),
    lambda t, q, k, v: retrograd.nn.functional.scaled_dot_product_attention(q, k, v,
                                                                          is_causal=True)],
    ids=["one_hot", "causal_attention"])
def test_what_ops_make_from_shapes_is_made_on_the_device(f):
    """one_hot's classes and attention's causal mask, under vmap too."""
    g = retrograd.Generator().manual_seed(0)
    q, k, v = (retrograd.randn(2, 3, n, 5, generator=g, dtype=retrograd.float64)
               for n in (4, 6, 6))
    t = retrograd.tensor([[0, 2], [1, 3]])
    host = retrograd.vmap(f)(t, q, k, v)
    with emulating():
        on = [a.to("cuda") for a in (t, q, k, v)]
        for got in (f(*on), retrograd.vmap(f)(*on)):
            assert got.device == retrograd.device("cuda", 0)
        numpy.testing.assert_allclose(got.cpu().numpy(), host.numpy(), rtol=1e-12)


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


# Rules whose gradient for a broadcast input is reduced on the device (sum_to) or made by
# the device's functions: under vmap with an unbatched cotangent the values the node saved
# are batched and the gradient is not, so the rule's namespace is the batch's (the
# device's functions refuse a batch, as CuPy's refuse arrays not their own).
_REDUCED = {
    "layer_norm": lambda lib, x, w: lib.nn.functional.layer_norm(x, (4,), w, w),
    "rms_norm": lambda lib, x, w: lib.nn.functional.rms_norm(x, (4,), w),
    "kron": lambda lib, x, w: lib.kron(x, w),
}


@pytest.mark.parametrize("name", sorted(_REDUCED))
def test_vjp_under_vmap_with_an_unbatched_cotangent_on_the_device(name):
    op = _REDUCED[name]
    rng = numpy.random.default_rng(0)
    x, w = rng.standard_normal((3, 2, 4)), rng.standard_normal(4)
    v = rng.standard_normal(tuple(op(retrograd, retrograd.tensor(x[0]),
                                     retrograd.tensor(w)).shape))

    def run(device):
        def g(x, w):
            return retrograd.func.vjp(lambda a, b: op(retrograd, a, b), x, w)[1](
                retrograd.tensor(v, device=device))
        got = retrograd.vmap(g, in_dims=(0, None))(retrograd.tensor(x, device=device),
                                                   retrograd.tensor(w, device=device))
        assert all(t.device.type == device for t in got)
        return [t.cpu().numpy() for t in got]

    expected = run("cpu")
    with emulating():
        for a, b in zip(run("cuda"), expected, strict=True):
            numpy.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


# An input used twice gets one gradient that is batched (through a saved batched value)
# and one that is not (the unbatched cotangent times an unbatched weight): the engine sums
# them whichever arrives first.
_TWO_USES = {
    "tanhshrink": lambda lib, x, w: lib.nn.functional.tanhshrink(x) * w,
    "scaled_then_tanh": lambda lib, x, w: x * w + x.tanh(),
    "tanh_then_scaled": lambda lib, x, w: x.tanh() + x * w,
}


@pytest.mark.parametrize("name", sorted(_TWO_USES))
def test_batched_and_unbatched_gradients_of_one_input_sum_on_the_device(name):
    op = _TWO_USES[name]
    rng = numpy.random.default_rng(1)
    x, w, v = rng.standard_normal((3, 4)), rng.standard_normal(4), rng.standard_normal(4)

    def run(device):
        def g(x):
            return retrograd.func.vjp(lambda a: op(retrograd, a, retrograd.tensor(
                w, device=device)), x)[1](retrograd.tensor(v, device=device))[0]
        got = retrograd.vmap(g)(retrograd.tensor(x, device=device))
        assert got.device.type == device
        return got.cpu().numpy()

    expected = run("cpu")
    with emulating():
        numpy.testing.assert_allclose(run("cuda"), expected, rtol=1e-12, atol=1e-12)
