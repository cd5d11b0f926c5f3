"""linspace and logspace against PyTorch's CPU kernels, bit for bit: random ranges and
step counts, one and two steps, negative and reversed ranges, huge, tiny and
subnormal ends, each floating and integer dtype."""

import numpy
import pytest

import retrograd
from retrograd.backend import cpu_kernels

pytestmark = pytest.mark.torch

DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "uint8"]


def _ranges(seed, count, scales):
    """(start, end, steps) drawn at random: ends of each magnitude in ``scales``, some a
    hair apart, and step counts from none to thousands."""
    rng = numpy.random.default_rng(seed)
    for _ in range(count):
        scale = float(rng.choice(scales))
        start, end = (float(v) for v in rng.normal(size=2) * scale)
        if rng.random() < 0.2:
            end = start + float(rng.normal()) * abs(start) * 1e-6
        steps = int(rng.choice([0, 1, 2, 3, 4, 5, 7, 10, 100, int(rng.integers(1, 3000))]))
        yield start, end, steps


def _bits(t):
    """The values of a CPU tensor (PyTorch's or retrograd's) as comparable NumPy bits."""
    if t.dtype in ("bfloat16", "float16") or str(t.dtype).endswith(("bfloat16", "float16")):
        t = t.float()
    return numpy.asarray(t.numpy())


def _same(torch, fn, dtype, *args, **kwargs):
    """Whether PyTorch's and retrograd's ``fn(*args, dtype=dtype, **kwargs)`` both raise a
    RuntimeError or make the same bits (NaNs alike)."""
    def call(module):
        return getattr(module, fn)(*args, dtype=getattr(module, dtype), **kwargs)

    try:
        expected = _bits(call(torch))
    except RuntimeError:
        with pytest.raises(RuntimeError):
            call(retrograd)
        return True
    return numpy.array_equal(expected, _bits(call(retrograd)), equal_nan=True)


SCALES = {
    "float32": [1e-40, 1e-30, 1e-3, 1.0, 1e3, 1e6, 1e30, 1e38],
    "float64": [1e-315, 1e-300, 1e-3, 1.0, 1e3, 1e6, 1e100, 1e307, 1e308],
    "float16": [1e-3, 1.0, 10.0, 100.0, 1e4],
    "bfloat16": [1e-3, 1.0, 10.0, 100.0, 1e4, 1e30],
    "int64": [1.0, 100.0, 1e6, 1e12],
    "int32": [1.0, 100.0, 1e6],
    "int16": [1.0, 100.0, 1e4],
    "uint8": [1.0, 50.0],
}


@pytest.fixture(params=["compiled", "emulated"])
def path(request, monkeypatch):
    """Each of linspace's paths on NumPy: the compiled fused multiply-adds (numba) and
    their exact emulation."""
    if request.param == "emulated":
        monkeypatch.setattr(cpu_kernels, "ready", lambda: False)
    elif not cpu_kernels.ready():
        pytest.skip("numba is not compiling: the compiled kernels are off")
    return request.param


@pytest.mark.parametrize("dtype", DTYPES)
def test_linspace_bit_for_bit(torch, dtype, path):
    differing = []
    for start, end, steps in _ranges(DTYPES.index(dtype), 400, SCALES[dtype]):
        if dtype == "uint8":
            start, end = abs(start), abs(end)
        if not _same(torch, "linspace", dtype, start, end, steps):
            differing.append((start, end, steps))
    assert differing == []


def test_linspace_edge_cases(torch, path):
    cases = [(0.0, 1.0, 1), (5.0, -5.0, 2), (-1e308, 1e308, 3), (-1e308, 1e308, 2),
             (1.0, 1.0, 5), (0.0, 1.0, 2 ** 25 + 3), (float("inf"), 1.0, 4), (3, 7, 5)]
    for dtype in ("float32", "float64"):
        for start, end, steps in cases:
            assert _same(torch, "linspace", dtype, start, end, steps), (dtype, start, end)


def test_linspace_bool_refused():
    with pytest.raises(NotImplementedError, match="\"linspace_cpu\" not implemented for 'Bool'"):
        retrograd.linspace(0, 1, 3, dtype=retrograd.bool)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int64"])
def test_logspace_bit_for_bit(torch, dtype):
    rng = numpy.random.default_rng(7)
    differing = []
    for _ in range(300):
        start, end = (float(v) for v in rng.uniform(-20, 20, 2))
        if dtype == "int64":
            start, end = start / 3, end
        steps = int(rng.choice([0, 1, 2, 3, 5, int(rng.integers(1, 500))]))
        base = float(rng.choice([10.0, 2.0, numpy.e, rng.uniform(0.1, 5.0)]))
        if not _same(torch, "logspace", dtype, start, end, steps, base=base):
            differing.append((start, end, steps, base))
    assert differing == []


def test_logspace_overflow_and_negative_base(torch):
    for start, end, steps, base in [(0, 400, 5, 10.0), (0, -400, 5, 10.0), (0, 0.5, 3, -2.0),
                                    (0, 3, 4, -2.0), (1, 3, 1, 10.0)]:
        assert _same(torch, "logspace", "float64", start, end, steps, base=base)


def test_ends_and_fills_past_the_dtype(torch):
    """Ends past the dtype's range raise (as c10's checked conversion); logspace's single
    value is a checked fill, but for half precision, which overflows to inf."""
    for dtype, fn, args in [("float32", "linspace", (-1e308, 1.0, 3)),
                            ("float32", "linspace", (-1e308, 1.0, 0)),
                            ("float16", "linspace", (1e5, 1.0, 3)),
                            ("int64", "linspace", (1e30, 1.0, 3)),
                            ("int64", "logspace", (1.0, 1.0, 1, 1e20)),
                            ("int64", "logspace", (1e30, 1.0, 0)),
                            ("int32", "logspace", (1.0, 1.0, 1, 3e9)),
                            ("float16", "logspace", (1.0, 1.0, 1, 1e6)),
                            ("float32", "logspace", (1.0, 1.0, 1, 1e40))]:
        assert _same(torch, fn, dtype, *args), (dtype, fn, args)
