"""The compiled reductions over trailing dims (``cpu_kernels.reduce_trailing`` and
``reduce_all``: sum, mean, max, min, amax, amin, max/min along a dim, logsumexp) on the
values the op database's samples rarely hold (NaN of either sign, infinities, signed
zeros, subnormals, huge values), against the NumPy path and PyTorch; their bits do not
depend on the thread count, and a long sum is as accurate as NumPy's pairwise one."""

import numpy
import pytest
import torch

import retrograd
from retrograd.backend import cpu_kernels

pytestmark = pytest.mark.skipif(not cpu_kernels.ready(), reason="numba is not installed")

NEG_NAN = numpy.frombuffer(numpy.uint32(0xFFC00000).tobytes(), numpy.float32)[0]
SPECIAL = numpy.float32([numpy.nan, NEG_NAN, numpy.inf, -numpy.inf, 3e38, -3e38, 1e-40,
                         -1e-40, 1e-45, 0.0, -0.0, 88.7, -88.7, -120.0])

def _last_two(x):
    """The last two dims (a vector's one)."""
    return tuple(range(max(x.dim() - 2, 0), x.dim()))


CASES = {
    "sum_last": lambda x: x.sum(-1),
    "sum_last_two": lambda x: x.sum(_last_two(x), keepdim=True),
    "sum_all": lambda x: x.sum(),
    "mean_last": lambda x: x.mean(-1, keepdim=True),
    "mean_all": lambda x: x.mean(),
    "amax_last": lambda x: x.amax(-1),
    "amin_last_two": lambda x: x.amin(_last_two(x)[::-1]),
    "max_all": lambda x: x.max(),
    "min_all": lambda x: x.min(),
    "max_dim": lambda x: x.max(-1).values,
    "min_dim": lambda x: x.min(-1, keepdim=True).values,
    "logsumexp": lambda x: x.logsumexp(-1),
}


def _inputs(shape, seed, special):
    rng = numpy.random.default_rng(seed)
    x = (rng.standard_normal(shape) * 3).astype(numpy.float32)
    hit = rng.random(shape) < special
    x[hit] = rng.choice(SPECIAL, hit.sum())
    return x


def _run(f, x):
    """``f``'s value and the gradient of its sum of squares (a gradient that varies)."""
    leaf = retrograd.from_numpy(x.copy()).requires_grad_()
    out = f(leaf)
    (out * out).sum().backward()
    return out.detach().numpy(), leaf.grad.numpy()


@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize("shape, special", [((1,), 0), ((7, 33), 0.2), ((4, 3, 64), 0.05),
                                            ((3, 700), 0.01), ((2, 8197), 0.001),
                                            ((3, 2, 1), 0.3), ((9000,), 0)])
def test_compiled_reduction_matches_numpy_path(name, shape, special, monkeypatch):
    x = _inputs(shape, len(name) + len(shape), special)
    asked = []
    takes = cpu_kernels.takes
    monkeypatch.setattr(cpu_kernels, "takes", lambda *a: asked.append(1) or takes(*a))
    compiled = _run(CASES[name], x)
    assert asked, "the compiled kernels were not asked"
    monkeypatch.setattr(cpu_kernels, "takes", lambda *a: False)
    plain = _run(CASES[name], x)
    for a, b in zip(compiled, plain, strict=True):
        assert a.shape == b.shape and a.dtype == b.dtype
        numpy.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5, equal_nan=True)


def test_extrema_are_pytorchs_bit_for_bit():
    """Maxima and minima (and the indices beside them) of rows with NaN of either sign
    anywhere, infinities, subnormals and signed zeros: PyTorch's values, a zero's sign
    included (the first of tied zeros), NaN where the row holds one."""
    rows = numpy.float32([
        [1, 2, 3, 4], [numpy.nan, 1, 2, 3], [1, 2, 3, numpy.nan], [numpy.inf, numpy.nan, 1, 2],
        [-numpy.inf] * 4, [-numpy.inf, 1, 2, 3], [numpy.inf, -numpy.inf, 0, 1],
        [0.0, -0.0, 0.0, -0.0], [-0.0, 0.0, -0.0, 0.0], [-0.0, 0.0, -1, -2], [0.0, -0.0, 1, 2],
        [-1e-45, 1e-45, -2e-45, 2e-45], [-1e-40, -2e-40, -3e-40, -4e-40],
        [3e38, -3e38, 1, 3e38]])
    rows[[1, 2], [0, 3]] = NEG_NAN
    x = numpy.concatenate([rows, rows[::-1]])
    mine, ref = retrograd.from_numpy(x), torch.from_numpy(x)
    for get in (lambda t: t.amax(-1), lambda t: t.amin(-1), lambda t: t.max(-1).values,
                lambda t: t.min(-1).values):
        got, want = get(mine).numpy(), get(ref).numpy()
        numpy.testing.assert_array_equal(got, want)
        numpy.testing.assert_array_equal(numpy.signbit(got) | numpy.isnan(got),
                                         numpy.signbit(want) | numpy.isnan(want))
    for name in ("max", "min"):
        picked = getattr(mine, name)(-1)
        assert numpy.array_equal(
            numpy.take_along_axis(x, picked.indices.numpy()[:, None], -1)[:, 0].view(numpy.int32),
            picked.values.numpy().view(numpy.int32)) or numpy.isnan(x).any()
    for row in rows:
        if not numpy.isnan(row).any():
            assert mine.new_tensor(row).max().item() == float(row.max())


@pytest.mark.parametrize("name", ["sum_last", "sum_all", "mean_all", "logsumexp", "amax_last"])
def test_bits_do_not_depend_on_the_thread_count(name):
    """Large enough to run in parts on two threads: the same bits on one."""
    x = _inputs((640, 1031), 5, 0.0)
    prev = retrograd.get_num_threads()
    try:
        got = []
        for n in (1, 2):
            retrograd.set_num_threads(n)
            got.append(CASES[name](retrograd.from_numpy(x)).numpy())
    finally:
        retrograd.set_num_threads(prev)
    numpy.testing.assert_array_equal(got[0], got[1])


def test_a_long_sum_is_as_accurate_as_numpys():
    """Four million positive float32 values: the error of the compiled sum against the
    exact (float64) one is within float32's rounding of the result, as NumPy's pairwise
    sum's is (a running float32 sum would be off by some 1e-3)."""
    x = numpy.random.default_rng(0).random(1 << 22).astype(numpy.float32)
    exact = x.astype(numpy.float64).sum()
    got = float(retrograd.from_numpy(x).sum())
    assert abs(got - exact) <= 4 * numpy.finfo(numpy.float32).eps * exact
    assert abs(float(numpy.sum(x)) - exact) <= 4 * numpy.finfo(numpy.float32).eps * exact
