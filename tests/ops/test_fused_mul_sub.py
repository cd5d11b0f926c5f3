"""``fused_mul_sub(a, b, c)``: ``a * b - c`` rounded once, as PyTorch's CPU kernels' fused
multiply-add. float64 against exact rationals rounded to nearest even (every exponent,
cancellation, halfway points, overflow and underflow, IEEE's special values), on every
array module and under vmap, by the compiled fma and by the emulation; float64
``addcmul`` against PyTorch's, bit for bit."""

import math
import zlib
from fractions import Fraction

import numpy
import pytest

import retrograd
from retrograd.backend import cpu_kernels, emulated, meta
from retrograd.backend.functions import functions
from retrograd.func import vmap

@pytest.fixture(autouse=True, params=["compiled", "emulated"])
def path(request, monkeypatch):
    """Each test on NumPy's two forms: the compiled kernel's fma (numba), and the
    emulation the other array modules run (and NumPy without numba)."""
    if request.param == "compiled" and not cpu_kernels.ready():
        pytest.skip("numba is not installed")
    if request.param == "emulated":
        monkeypatch.setattr(cpu_kernels, "ready", lambda: False)
    return request.param


MAX = numpy.finfo(numpy.float64).max
TINY = 5e-324  # the least subnormal, 2**-1074
SPECIALS = [0.0, -0.0, 1.5, -1.5, math.inf, -math.inf, math.nan, TINY, -TINY, MAX, -MAX,
            2.0 ** -1022]


def _nearest(q):
    """Rational ``q`` rounded to the nearest float64, ties to even: 53 bits, or the
    subnormals' fixed step 2**-1074, and past the largest float infinity."""
    if q == 0:
        return 0.0
    sign = -1.0 if q < 0 else 1.0
    q = abs(q)
    e = q.numerator.bit_length() - q.denominator.bit_length()
    if q < Fraction(2) ** e:
        e -= 1  # now 2**e <= q < 2**(e + 1)
    step = max(e, -1022) - 52
    try:
        return sign * math.ldexp(round(q / Fraction(2) ** step), step)  # round: half even
    except OverflowError:
        return sign * math.inf


def _exact(a, b, c):
    """IEEE's ``fma(a, b, -c)`` of Python floats, rounded to nearest even."""
    if math.isnan(a) or math.isnan(b) or math.isnan(c):
        return math.nan
    if math.isinf(a) or math.isinf(b):
        return math.nan if a == 0 or b == 0 else math.copysign(math.inf, a * b) - c
    if math.isinf(c):
        return -c
    if a == 0 or b == 0:
        return a * b - c  # an exact (signed) zero product: one rounding, IEEE's zero signs
    return _nearest(Fraction(a) * Fraction(b) - Fraction(c))


def _reference(a, b, c):
    a, b, c = numpy.broadcast_arrays(*(numpy.asarray(x, numpy.float64) for x in (a, b, c)))
    flat = [_exact(*v) for v in zip(a.ravel().tolist(), b.ravel().tolist(),
                                     c.ravel().tolist(), strict=True)]
    return numpy.array(flat, numpy.float64).reshape(a.shape)


def _assert_same_bits(got, want):
    """Equal float64 bits (zeros' signs included); NaN where the other is NaN."""
    got, want = numpy.asarray(got), numpy.asarray(want)
    assert got.dtype == numpy.float64 and got.shape == want.shape
    nan = numpy.isnan(want)
    bad = (numpy.isnan(got) != nan) | ((got.view(numpy.int64) != want.view(numpy.int64)) & ~nan)
    assert not bad.any(), (f"{bad.sum()} of {bad.size} differ, first at "
                           f"{numpy.argwhere(bad)[0]}: {got[bad][:3]} vs {want[bad][:3]}")


def _check(a, b, c):
    _assert_same_bits(functions(numpy).fused_mul_sub(a, b, c), _reference(a, b, c))


def _wide(rng, n, lo, hi):
    """``n`` random signed float64 values of 53 random bits, exponents ``lo..hi`` (below
    -1022 they round to subnormals)."""
    m = rng.integers(1 << 52, 1 << 53, n).astype(numpy.float64)
    return numpy.ldexp(m, rng.integers(lo, hi + 1, n) - 52) * rng.choice([-1.0, 1.0], n)


def test_random_normals():
    rng = numpy.random.default_rng(0)
    a, b, c = (rng.standard_normal(3000) for _ in range(3))
    _check(a, b, c)
    _check(0.3 * a, b, -c)  # addcmul's value * tensor1


def test_products_that_nearly_cancel():
    """c within a few ulps of the product (and the product itself): the result is the
    product's rounding error, which two roundings lose."""
    rng = numpy.random.default_rng(1)
    a, b = _wide(rng, 2000, -200, 200), _wide(rng, 2000, -200, 200)
    p = a * b
    c = p + rng.integers(-3, 4, 2000) * numpy.spacing(p)
    c[:500] = p[:500] * (1 + rng.uniform(-2 ** -40, 2 ** -40, 500))
    _check(a, b, c)


@pytest.mark.parametrize("region", [
    ((-1074, 1023), (-1074, 1023), (-1074, 1023)),  # independent: mostly one term dominates
    ((-560, 540), (-560, 540), None),  # c near the product's exponent, from -1120 to 1080
    ((1000, 1023), (-10, 30), (1010, 1023)),  # results near and past overflow
    ((-560, -450), (-560, -450), (-1074, -1000)),  # products and results among subnormals
    ((990, 1023), (-1074, -960), (-80, 80)),  # a factor too large to split, others moderate
    ((-1074, -1023), (50, 1023), (-1074, 100)),  # a subnormal factor
])
def test_every_exponent(region):
    rng = numpy.random.default_rng(zlib.crc32(repr(region).encode()))
    n = 1500
    a, b = _wide(rng, n, *region[0]), _wide(rng, n, *region[1])
    if region[2] is None:
        e = numpy.frexp(a * b)[1]
        c = numpy.ldexp(_wide(rng, n, 0, 0), numpy.clip(e + rng.integers(-60, 61, n), -1074,
                                                         1023))
    else:
        c = _wide(rng, n, *region[2])
    _check(a, b, c)


def test_halfway_points():
    """Products of two odd 27-bit integers have 54 bits: exactly halfway between two
    float64 values (with c a multiple of their spacing: still halfway), at several
    exponents and among the subnormals (a tie at 2**-1075 steps). A zero c keeps the tie
    (to even), a c of 2**-1074 breaks it either way."""
    rng = numpy.random.default_rng(2)
    n = 1000
    low = math.isqrt(2 ** 53) // 2 + 1
    x, y = (rng.integers(low, 2 ** 26, (2, n)) * 2 + 1).astype(float)  # odd, x * y > 2**53
    even = 2.0 * rng.integers(-2 ** 20, 2 ** 20, n)
    for shift in (-1000, -600, 0, 700, 960):
        a, b = numpy.ldexp(x, shift // 2), numpy.ldexp(y, shift - shift // 2)
        assert numpy.array_equal(_reference(a, b, 0.0), a * b)  # the hardware's ties
        for c in (0.0, -0.0, numpy.ldexp(even, shift), TINY, -TINY):
            _check(a, b, c)
    odd = (rng.integers(0, 2 ** 19, n) * 2 + 1).astype(float)  # ties among subnormals
    a, b = numpy.ldexp(odd, -538), numpy.full(n, 2.0 ** -537)
    for c in (0.0, -0.0, numpy.ldexp(even, -1075), TINY, -TINY):
        _check(a, b, c)


@pytest.mark.parametrize("a, b, c, want", [
    (1.5 * 2.0 ** 1000, 2.0 ** 24, MAX, 2.0 ** 1023 * (1 + 2 ** -52)),  # a * b overflows
    (MAX, 2.0, MAX, MAX),
    (MAX, -1.0, MAX, -math.inf),
    (2.0 ** 1000, 2.0 ** 24, 2.0 ** 970, math.inf),  # halfway past MAX: to even, inf
    (2.0 ** 1000, 2.0 ** 24, 2.0 ** 970 + 2.0 ** 918, MAX),
    (2.0 ** 1000, 2.0 ** 24, 2.0 ** 970 - 2.0 ** 917, math.inf),
    (-(2.0 ** 1000), 2.0 ** 24, -(2.0 ** 970), -math.inf),
    (1.5 * 2.0 ** 1022, 1.0, -(1.5 * 2.0 ** 1023), math.inf),  # TwoSum's range
    (1.5 * 2.0 ** 1022, 1.0, -(2.0 ** 1022), 1.25 * 2.0 ** 1023),
    (3.0, 1 / 3, MAX, -MAX),
    (2.0 ** -600, 2.0 ** -475, 0.0, 0.0),  # 2**-1075: halfway to TINY, to even
    (-(2.0 ** -600), 2.0 ** -475, -0.0, -0.0),  # an underflow keeps the exact sign
    (3 * 2.0 ** -600, 2.0 ** -476, 0.0, TINY),  # 0.75 * 2**-1074
    (2.0 ** -600, 2.0 ** -475, -TINY, 2 * TINY),  # 1.5 * 2**-1074: to even
    (2.0 ** -484 * (1 + 2 ** -52), 2.0 ** -484 * (1 - 2 ** -52), 2.0 ** -968, -(2.0 ** -1072)),
    (1 + 2 ** -52, 1 - 2 ** -52, 1.0, -(2.0 ** -104)),
    (1e-160, 1e-160, 1e-300, None),  # the product's error below 2**-1074
    (2.0 ** 1000, 2.0 ** -990, 3.0, None),  # a split of 2**1000 overflows
])
def test_overflow_and_underflow_edges(a, b, c, want):
    if want is not None:  # (the reference itself, signed zeros too)
        assert (_exact(a, b, c), math.copysign(1, _exact(a, b, c))) == (want,
                                                                          math.copysign(1, want))
    _check(numpy.array([a, -a]), numpy.array([b, b]), numpy.array([c, -c]))


def test_special_values_follow_ieee_and_pytorch(torch):
    """Every combination of zeros, infinities, NaN, subnormals and the extremes, as
    PyTorch's ``addcmul`` (``fma(t1, t2, self)``) computes them."""
    a, b, c = (v.ravel() for v in numpy.meshgrid(SPECIALS, SPECIALS, SPECIALS, indexing="ij"))
    got = functions(numpy).fused_mul_sub(a, b, c)
    _assert_same_bits(got, _reference(a, b, c))
    theirs = torch.addcmul(*(torch.from_numpy(v) for v in (-c, a, b))).numpy()
    _assert_same_bits(got, theirs)


@pytest.mark.parametrize("shapes", [((3, 1), (4,), ()), ((), (), ()), ((2, 3, 4), (3, 1), (1,))])
def test_broadcasting_and_zero_dims(shapes):
    """Operands that broadcast, 0-d ones and Python floats, with elements that take the
    exact path among them."""
    rng = numpy.random.default_rng(3)
    a, b, c = (rng.standard_normal(s) for s in shapes)
    a[...] = numpy.where(rng.random(a.shape) < 0.3, 1e-300, a)
    _check(a, b, c)
    _check(a, 0.3, c)
    _check(a, b, 1e-300)
    out = functions(numpy).fused_mul_sub(numpy.asarray(1e-200), 1e-200, numpy.float64(-0.0))
    _assert_same_bits(out, _reference(1e-200, 1e-200, -0.0))


@pytest.mark.parametrize("dtype", [numpy.float32, numpy.float64])
def test_many_elements_in_blocks_give_the_same_bits(dtype):
    """NumPy's blocks (broadcast by nditer) against the whole arrays at once, exact
    elements among them; a sample against the rationals."""
    rng = numpy.random.default_rng(9)
    a, b, c = (rng.standard_normal(s).astype(dtype) for s in ((257, 1), (1, 256), (256,)))
    a[::7] = 1e-300 if dtype == numpy.float64 else 1e-30
    mine = functions(numpy)
    got = mine.fused_mul_sub(a, b, c)
    assert got.shape == (257, 256) and got.dtype == dtype
    whole = type(mine).__mro__[1].fused_mul_sub(mine, a, b, c)
    assert numpy.array_equal(got, whole)
    if dtype == numpy.float64:
        i, j = rng.integers(0, 257, 500), rng.integers(0, 256, 500)
        _assert_same_bits(got[i, j], _reference(a[i, 0], b[0, j], c[j]))


def test_the_float32_form_rounds_once_as_pytorch(torch):
    """float32 (its product exact in float64, rounded to odd, then to float32): random
    operands, in blocks and not, and near-cancelling ones."""
    rng = numpy.random.default_rng(4)
    for n in (1000, 1 << 17):
        a, b, s = (rng.standard_normal(n).astype(numpy.float32) for _ in range(3))
        s[: n // 2] = -(a[: n // 2].astype(numpy.float64) * b[: n // 2]).astype(numpy.float32)
        got = functions(numpy).fused_mul_sub(a, b, -s)
        want = torch.addcmul(*(torch.from_numpy(v) for v in (s, a, b))).numpy()
        assert got.dtype == numpy.float32 and numpy.array_equal(got.view(numpy.int32),
                                                                want.view(numpy.int32))


@pytest.mark.parametrize("value", [1, 0.3, -2.5])
def test_float64_addcmul_matches_pytorch_bit_for_bit(value, torch):
    """The function, the method, in place (contiguous, strided, broadcast) and ``out=``:
    PyTorch's ``fma(value * t1, t2, self)``, where the two roundings of ``self + value *
    t1 * t2`` differed from it on some 15% of elements."""
    rng = numpy.random.default_rng(5)
    x, t1, t2 = (rng.standard_normal((300, 300)) for _ in range(3))
    got = []
    for lib in (retrograd, torch):
        tx, ta, tb = (lib.from_numpy(v.copy()) for v in (x, t1, t2))
        out = lib.empty_like(tx)
        lib.addcmul(tx, ta, tb, value=value, out=out)
        got.append([lib.addcmul(tx, ta, tb, value=value), tx.addcmul(ta, tb, value=value),
                    tx.clone().addcmul_(ta, tb, value=value),
                    tx.clone()[:, ::2].addcmul_(ta[:, ::2], tb[:, ::2], value=value),
                    tx.clone().addcmul_(ta[:1], tb, value=value), out])
    for mine, theirs in zip(*got, strict=True):
        assert numpy.array_equal(mine.numpy().view(numpy.int64), theirs.numpy().view(numpy.int64))


@pytest.mark.filterwarnings("error::UserWarning")  # (not the loop over the batch)
@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_exact_elements_under_vmap(device, request):
    """The host's exact path on the values of every batch level at once (nested vmaps,
    the emulated device's arrays too), where the batched rule meets elements it cannot
    fuse by parts."""
    if device == "cuda":
        request.getfixturevalue("emulated_cuda")
    rng = numpy.random.default_rng(6)
    s, t1 = rng.standard_normal((2, 3, 5))
    t2 = rng.standard_normal(5)
    t1[0, 1], t2[1], t1[1, 2], t2[2], t2[3] = 1e-160, 1e-160, 1e300, 1e300, 1e-300
    want = _reference(t1, t2, -s)
    S, T1, T2 = (retrograd.tensor(v, device=device) for v in (s, t1, t2))
    got = vmap(lambda a, b: retrograd.addcmul(a, b, T2))(S, T1)
    _assert_same_bits(got.cpu().numpy(), want)
    inner = vmap(lambda a, b, c: retrograd.addcmul(a, b, c), in_dims=(None, None, 0))
    got = vmap(inner, in_dims=(0, 0, None))(S, T1, retrograd.stack([T2, T2]))
    _assert_same_bits(got.cpu().numpy(), numpy.stack([want, want], 1))
    got = vmap(vmap(retrograd.addcmul))(*(x.expand(4, 3, 5) for x in (S, T1, T2)))
    _assert_same_bits(got.cpu().numpy(), numpy.stack([want] * 4))


def test_device_arrays_agree_with_numpy():
    """The CuPy-shaped emulator's arrays: the same bits, the exact path through the
    host."""
    rng = numpy.random.default_rng(7)
    a, b, c = (rng.standard_normal(64) for _ in range(3))
    a[::5], c[::7] = 1e-200, math.inf
    dev = emulated.namespace
    got = functions(dev).fused_mul_sub(*(dev.asarray(v) for v in (a, b, c)))
    _assert_same_bits(got.get(), _reference(a, b, c))


def test_meta_arrays_read_no_values():
    x = retrograd.empty(3, 4, device="meta", dtype=retrograd.float64)
    assert retrograd.addcmul(x, x, x[0]).shape == (3, 4)
    y = functions(meta.namespace).fused_mul_sub(*(meta.namespace.empty((2, 3), "float64")
                                                  for _ in range(3)))
    assert y.shape == (2, 3) and y.dtype == numpy.float64


@pytest.mark.slow
def test_a_long_sweep_of_exponents():
    """200k random triples over every exponent region, against the rationals."""
    rng = numpy.random.default_rng(8)
    n = 20000
    for _ in range(10):
        a, b = _wide(rng, n, -1074, 1023), _wide(rng, n, -1074, 1023)
        near = numpy.ldexp(_wide(rng, n, 0, 0), numpy.clip(numpy.frexp(a * b)[1]
                                                           + rng.integers(-60, 61, n),
                                                           -1074, 1023))
        c = numpy.where(rng.random(n) < 0.5, near, _wide(rng, n, -1074, 1023))
        _check(a, b, c)
