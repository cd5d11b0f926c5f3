"""add/sub/rsub with an alpha and lerp round as PyTorch's CPU kernels: one fused
multiply-add each (``fma(other, alpha, self)``; lerp's ``fma(w, end - self, self)``, or
``fma(-(1 - w), end - self, end)`` from a weight of 0.5 up), float32 and float64, bit for
bit, on every path (function, method, in place, strided, broadcast, a tensor weight, the
compiled in-place kernel and NumPy's)."""

import numpy
import pytest

import retrograd
from retrograd.backend import cpu_kernels

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

CALLS = {
    "add": lambda L, x, y, w: L.add(x, y, alpha=0.1),
    "sub": lambda L, x, y, w: L.sub(x, y, alpha=0.3),
    "rsub": lambda L, x, y, w: L.rsub(x, y, alpha=0.3),
    "add_": lambda L, x, y, w: x.clone().add_(y, alpha=-0.01),
    "sub_": lambda L, x, y, w: x.clone().sub_(y, alpha=0.7),
    "add_broadcast": lambda L, x, y, w: L.add(x, y[:1], alpha=0.1),
    "add_strided_": lambda L, x, y, w: x.clone()[::2].add_(y[::2], alpha=0.1),
    "add_number": lambda L, x, y, w: L.add(x, 0.3, alpha=0.37),
    "rsub_number": lambda L, x, y, w: L.rsub(x, 0.3, alpha=0.37),
    "lerp_small": lambda L, x, y, w: L.lerp(x, y, 0.1),
    "lerp_large": lambda L, x, y, w: L.lerp(x, y, 0.7),
    "lerp_negative": lambda L, x, y, w: L.lerp(x, y, -0.3),
    "lerp_one": lambda L, x, y, w: L.lerp(x, y, 1.0),
    "lerp_tensor_weight": lambda L, x, y, w: L.lerp(x, y, w),
    "lerp_": lambda L, x, y, w: x.clone().lerp_(y, 0.1),
    "lerp_tensor_weight_": lambda L, x, y, w: x.clone().lerp_(y, w),
    "lerp_strided_": lambda L, x, y, w: x.clone()[::2].lerp_(y[::2], 0.9),
    "lerp_broadcast": lambda L, x, y, w: L.lerp(x, y[:1], 0.2),
}


@pytest.fixture(params=["compiled", "numpy"])
def path(request, monkeypatch):
    if request.param == "compiled" and not cpu_kernels.ready():
        pytest.skip("numba is not installed")
    if request.param == "numpy":
        monkeypatch.setattr(cpu_kernels, "ready", lambda: False)


@pytest.mark.parametrize("n", [3, 4099])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("call", sorted(CALLS))
def test_same_bits_as_torch(call, dtype, n, path):
    rng = numpy.random.default_rng(n)
    values = [rng.standard_normal(n).astype(dtype), rng.standard_normal(n).astype(dtype),
              (rng.random(n) * 1.4 - 0.2).astype(dtype)]
    values[0][:2] = [numpy.inf, -0.0]
    ours = CALLS[call](retrograd, *(retrograd.from_numpy(v.copy()) for v in values))
    theirs = CALLS[call](torch, *(torch.from_numpy(v.copy()) for v in values))
    a, b = numpy.ascontiguousarray(ours.numpy()), numpy.ascontiguousarray(theirs.numpy())
    assert a.dtype == b.dtype and numpy.array_equal(a.view(numpy.uint8), b.view(numpy.uint8))


@pytest.mark.parametrize("weight", [1.0, 0.0, 0.5, -0.5])
def test_lerp_gives_the_zeros_signs_of_pytorch(weight):
    """The large-weight side is ``fma(w - 1, ...)``: ``w - 1`` is +0 at 1, not -0. (In
    PyTorch's vectorized loop: 64 elements; its scalar loop, for a tail, differs.)"""
    zeros = [0.0, -0.0]
    for a in zeros:
        for b in zeros:
            x, y = numpy.full(64, a), numpy.full(64, b)
            ours = retrograd.lerp(retrograd.from_numpy(x), retrograd.from_numpy(y), weight)
            theirs = torch.lerp(torch.from_numpy(x), torch.from_numpy(y), weight)
            assert (numpy.signbit(ours.numpy()) == numpy.signbit(theirs.numpy())).all(), (a, b)


def test_integers_keep_their_plain_arithmetic():
    a = retrograd.tensor([1, 2, 250], dtype=retrograd.uint8)
    b = retrograd.tensor([3, 4, 5], dtype=retrograd.uint8)
    ta, tb = torch.tensor([1, 2, 250], dtype=torch.uint8), torch.tensor([3, 4, 5],
                                                                       dtype=torch.uint8)
    assert retrograd.sub(a, b, alpha=2).tolist() == torch.sub(ta, tb, alpha=2).tolist()
    assert retrograd.add(a, b, alpha=3).tolist() == torch.add(ta, tb, alpha=3).tolist()
    # an alpha out of uint8's range wraps around, as PyTorch's (NumPy refused it)
    assert retrograd.add(a, b, alpha=-3).tolist() == torch.add(ta, tb, alpha=-3).tolist()
