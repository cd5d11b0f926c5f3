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
