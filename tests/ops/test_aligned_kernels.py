"""The flat elementwise kernels that start their vector loop on a 32-byte boundary
(``_numba_kernels.aligned_from``): the same values as NumPy's at every start offset, for
arrays shorter than the scalar head too."""

import numpy
import pytest

from retrograd.backend import cpu_kernels

pytestmark = pytest.mark.skipif(not cpu_kernels.ready(), reason="numba is not installed")


def _at(offset, values):
    """``values`` (float32) copied to an array starting ``offset`` bytes past 64."""
    buf = numpy.empty(values.size + 32, numpy.float32)
    start = (-buf.ctypes.data % 64 + offset) // 4
    a = buf[start:start + values.size]
    a[:] = values
    assert a.ctypes.data % 64 == offset
    return a


@pytest.mark.parametrize("offset", range(0, 32, 4))
@pytest.mark.parametrize("size", [1, 3, 7, 8, 9, 100, 1027])
def test_elementwise_kernels_at_each_offset(offset, size):
    rng = numpy.random.default_rng(size + offset)
    x = rng.standard_normal(size).astype(numpy.float32)
    x[::5] = numpy.nan
    x[1::7] = -0.0
    y = rng.standard_normal(size).astype(numpy.float32)
    want_relu = numpy.where((x > 0) | numpy.isnan(x), x, numpy.float32(0))
    got = cpu_kernels.relu(_at(offset, x))
    assert numpy.array_equal(got, want_relu, equal_nan=True)
    got = cpu_kernels.relu_grad(_at(offset, y), _at(offset, x))
    assert numpy.array_equal(got, numpy.where(x <= 0, numpy.float32(0), y))
    a = _at(offset, y)
    cpu_kernels.add_scaled(a, _at(offset, x), -0.5)
    assert numpy.array_equal(a, y + numpy.float32(-0.5) * x, equal_nan=True)
    a = _at(offset, y)
    cpu_kernels.scale(a, 3.0)
    assert numpy.array_equal(a, y * numpy.float32(3.0))


@pytest.mark.parametrize("size", [5, 40, 1027])
def test_fused_update_the_same_at_every_offset(size):
    """``x += alpha * y`` rounds each element the same way in the scalar head and the
    vector loop (one rounding or two: the same wherever the element falls)."""
    rng = numpy.random.default_rng(size)
    x, y = (rng.standard_normal(size).astype(numpy.float32) for _ in range(2))
    results = []
    for offset in range(0, 32, 4):
        a = _at(offset, x)
        cpu_kernels.add_scaled(a, _at(offset, y), 0.1)
        results.append(a.copy())
    for r in results[1:]:
        assert numpy.array_equal(r, results[0])
