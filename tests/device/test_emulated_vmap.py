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
