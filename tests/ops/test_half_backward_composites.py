"""float16 backward of the unary ops whose PyTorch derivative is a composite of half ops.

derivatives.yaml writes these gradients as chains of tensor ops (``grad * (1 +
result.pow(2))`` for tan), and for float16 each op rounds to half, so squares overflow to
inf and every step loses a bit; retrograd's rules follow the same steps. They are checked
against PyTorch over a quarter of all float16 values (every overflow edge included), in
tensors of 16 elements: PyTorch's scalar loop, which the small tensors of real programs and
of the fuzz suite take (its vectorised loop rounds rsqrt once; see docs/deviations.md).
Infinities and NaNs must agree exactly, and all but a handful of values bit for bit: at
those few, PyTorch's float32 sin, cos or exp (SLEEF's, within an ulp) lands on the other
side of a float16 rounding midpoint than NumPy's (the composites rounded once disagreed
at thousands).
"""

import numpy
import pytest

import retrograd

F = "nn.functional."
# every fourth float16 bit pattern, no NaN payloads (one NaN is enough)
_ALL = numpy.arange(0, 65536, 4, dtype=numpy.uint16).view(numpy.float16)
_VALUES = numpy.concatenate([_ALL[~numpy.isnan(_ALL)], [numpy.float16("nan")]])
_CHUNK = 16
_MIDPOINTS = 4  # values allowed an ulp apart (see above)


def _call(lib, path, x, kwargs):
    fn = lib
    for name in path.split("."):
        fn = getattr(fn, name)
    return fn(x, **kwargs)


def _run(lib, path, x, g, kwargs):
    xt = lib.tensor(x, requires_grad=True)
    y = _call(lib, path, xt, kwargs)
    gx, = lib.autograd.grad(y, xt, lib.tensor(g))
    return y.detach().numpy(), gx.numpy()


def _check(what, ours, theirs):
    special = ~numpy.isfinite(ours) | ~numpy.isfinite(theirs)
    bad = numpy.flatnonzero(special & ~((ours == theirs) | numpy.isnan(ours) & numpy.isnan(theirs)))
    assert bad.size == 0, (f"{what}: infinity or NaN differs at x = {_VALUES[bad[:5]]}: "
                           f"{ours[bad[:5]]} vs {theirs[bad[:5]]}")
    off = numpy.flatnonzero(~special & (ours != theirs))
    assert off.size <= _MIDPOINTS, (f"{what} differs at {off.size} values, x = "
                                    f"{_VALUES[off[:5]]}: {ours[off[:5]]} vs {theirs[off[:5]]}")
    numpy.testing.assert_allclose(ours[off].astype(float), theirs[off].astype(float), rtol=1e-3)


@pytest.mark.torch
@pytest.mark.parametrize("path, kwargs, forward", [
    ("reciprocal", {}, False), ("expm1", {}, False), ("log1p", {}, False),
    ("rsqrt", {}, True), ("sin", {}, False), ("cos", {}, False), ("tan", {}, False),
    ("asin", {}, False), ("acos", {}, False), ("atan", {}, False), ("asinh", {}, False),
    ("acosh", {}, False), ("atanh", {}, False), ("sinh", {}, False), ("cosh", {}, False),
    ("exp2", {}, False), ("log2", {}, False), ("log10", {}, False), ("square", {}, False),
    ("sigmoid", {}, False), ("erf", {}, False), ("erfc", {}, False), ("erfinv", {}, False),
    ("logit", {}, True), ("logit", {"eps": 1e-6}, True), ("logit", {"eps": 0.1}, True),
    (F + "logsigmoid", {}, False)])
def test_half_gradient_bit_for_bit(torch, path, kwargs, forward):
    g = numpy.random.default_rng(0).standard_normal(_VALUES.size).astype(numpy.float16)
    with numpy.errstate(all="ignore"):
        ours = _run(retrograd, path, _VALUES, g, kwargs)
    theirs = [numpy.concatenate(parts) for parts in zip(*(
        _run(torch, path, _VALUES[i:i + _CHUNK], g[i:i + _CHUNK], kwargs)
        for i in range(0, _VALUES.size, _CHUNK)), strict=True)]
    for k in (0, 1) if forward else (1,):
        _check("result" if k == 0 else "grad", ours[k], theirs[k])
