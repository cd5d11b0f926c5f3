"""The filled and range functions on device "cuda" (the emulator) and on meta: made by the
device's array module with the device current (``backend.on_device``), no host array
copied there; values, dtypes and shapes as on the CPU."""

import tracemalloc

import numpy
import pytest

import retrograd
from device.emulated_run import emulating

CASES = {
    "zeros": lambda d: retrograd.zeros(2, 3, device=d),
    "ones": lambda d: retrograd.ones(4, dtype=retrograd.int32, device=d),
    "empty": lambda d: retrograd.empty(2, 3, device=d),
    "full": lambda d: retrograd.full((2, 2), retrograd.tensor(3), device=d),
    "full_like": lambda d: retrograd.full_like(retrograd.ones(2, device=d), 7.5),
    "scalar_tensor": lambda d: retrograd.scalar_tensor(retrograd.tensor(2.5), device=d),
    "arange": lambda d: retrograd.arange(1, 10, 3, device=d),
    "arange_float": lambda d: retrograd.arange(0.0, 1.0, 0.1, dtype=retrograd.float32,
                                               device=d),
    "arange_tensor_end": lambda d: retrograd.arange(retrograd.tensor(5), device=d),
    "linspace": lambda d: retrograd.linspace(retrograd.tensor(0.0), 1, 7, device=d),
    "logspace": lambda d: retrograd.logspace(0, 2, 3, base=2, device=d),
    "eye": lambda d: retrograd.eye(3, 4, dtype=retrograd.bool, device=d),
    "tril_indices": lambda d: retrograd.tril_indices(4, 3, -1, device=d),
    "triu_indices": lambda d: retrograd.triu_indices(3, 5, 1, dtype=retrograd.int32, device=d),
}



def _traced(make):
    """``make()``'s result and the peak of Python-traced memory while it ran."""
    tracemalloc.start()
    try:
        t = make()
        return t, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()

@pytest.mark.parametrize("device", ["cuda", "cuda:1", "meta"])
@pytest.mark.parametrize("name", list(CASES))
def test_made_on_the_device_as_on_the_cpu(name, device):
    host = CASES[name]("cpu")
    with emulating():
        got = CASES[name](device)
        assert got.device == retrograd.device("cuda:0" if device == "cuda" else device)
        assert (got.dtype, got.shape) == (host.dtype, host.shape)
        if device != "meta" and name != "empty":
            numpy.testing.assert_array_equal(got.cpu().numpy(), host.numpy())


@pytest.mark.parametrize("device", ["cuda:1", "meta"])
def test_empty_in_deterministic_mode_is_filled_on_the_device(device):
    retrograd.use_deterministic_algorithms(True)
    try:
        with emulating():
            t = retrograd.empty(3, device=device)
            assert t.device == retrograd.device(device)
            if device != "meta":
                assert numpy.isnan(t.cpu().numpy()).all()
    finally:
        retrograd.use_deterministic_algorithms(False)


@pytest.mark.parametrize("make", [lambda: retrograd.zeros(1 << 18, device="cuda"),
                                  lambda: retrograd.ones(1 << 18, device="cuda"),
                                  lambda: retrograd.arange(1 << 18, device="cuda"),
                                  lambda: retrograd.full((1 << 18,), 2.0, device="cuda")])
def test_no_host_array_is_staged(make):
    """The emulator's memory is the host's: one array's worth at the peak means none was
    made on the host and copied."""
    with emulating():
        t, peak = _traced(make)
        assert t.device.type == "cuda"
        nbytes = t.numel() * t.element_size()
        assert peak < 1.5 * nbytes, (peak, nbytes)


@pytest.mark.parametrize("name, args, kwargs", [
    ("arange", (10,), {}), ("arange", (1, 10, 3), {}), ("arange", (10, 0, -3), {}),
    ("arange", (5, 1), {}), ("arange", (0.0, 1.0, 0.1), {}), ("arange", (2.5,), {}),
    ("arange", (-3.5, 7.25, 0.3), {}), ("arange", (0, 1, 1e-6), {}),
    ("arange", (0, 10, 3), {"dtype": "float32"}), ("arange", (numpy.int32(3),), {}),
    ("arange", (0, 1j, 0.5), {}), ("linspace", (0, 1, 5), {}), ("linspace", (0, 1, 0), {}),
    ("linspace", (0, 1), {}), ("linspace", (0, 1j, 3), {}),
    ("linspace", (0, 1, 4), {"dtype": "float32", "endpoint": False}),
    ("logspace", (0, 2, 3), {"base": 2.0}), ("eye", (3,), {}),
    ("eye", (3, 4, 1), {"dtype": bool}), ("eye", (0,), {})])
def test_meta_ranges_have_numpys_shapes_and_dtypes(name, args, kwargs):
    from retrograd.backend import meta
    got, want = (getattr(m, name)(*args, **kwargs) for m in (meta.namespace, numpy))
    assert type(got) is meta.ndarray and (got.shape, got.dtype) == (want.shape, want.dtype)


@pytest.mark.parametrize("make", [lambda: retrograd.arange(1 << 20, device="meta"),
                                  lambda: retrograd.arange(0, 1, 1e-6, device="meta"),
                                  lambda: retrograd.linspace(0, 1, 1 << 20, device="meta"),
                                  lambda: retrograd.logspace(0, 1, 1 << 20, device="meta"),
                                  lambda: retrograd.eye(1 << 10, device="meta")])
def test_meta_ranges_take_no_memory(make):
    t, peak = _traced(make)
    assert t.device.type == "meta" and t.numel() >= 10**6 and peak < 1 << 16, peak
