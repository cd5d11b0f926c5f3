"""Adam's compiled CPU update (backend/cpu_kernels.adam_step, the NumPy backend's
``fused_adam`` where numba is installed) gives NumPy's chain of in-place passes bit for
bit: parameters and both moments, over several steps, in each configuration the fused
path takes, for contiguous and transposed parameters."""

import numpy
import pytest

import retrograd
from retrograd.backend import cpu_kernels, functions

from _sqrt_misses import carried_limit

pytestmark = pytest.mark.skipif(not cpu_kernels.ready(), reason="numba is not installed")

CONFIGS = [("Adam", {}), ("Adam", {"weight_decay": 0.1}), ("AdamW", {"weight_decay": 0.1}),
           ("Adam", {"betas": (0.3, 0.99)}), ("Adam", {"lr": 1e-1, "eps": 1e-3})]


def _steps(dtype, config, transposed, lib=retrograd):
    rng = numpy.random.default_rng(0)
    data = rng.standard_normal((40, 30)).astype(dtype)
    p = lib.from_numpy(data.T.copy().T if transposed else data).requires_grad_()
    name, kwargs = config
    opt = getattr(lib.optim, name)([p], **kwargs)
    for _ in range(4):
        p.grad = lib.from_numpy(rng.standard_normal(tuple(p.shape)).astype(dtype))
        opt.step()
    state = opt.state[p]
    return [p.detach().numpy(), state["exp_avg"].numpy(), state["exp_avg_sq"].numpy()]


@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("config", CONFIGS, ids=repr)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_fused_adam_equals_the_numpy_chain(dtype, config, transposed, monkeypatch):
    calls = []
    step = cpu_kernels.adam_step
    monkeypatch.setattr(cpu_kernels, "adam_step", lambda *a, **k: calls.append(1) or step(*a, **k))
    fused = _steps(dtype, config, transposed)
    assert len(calls) == 4
    monkeypatch.setattr(functions._NumpyFunctions, "fused_adam", None)
    plain = _steps(dtype, config, transposed)
    for a, b in zip(fused, plain, strict=True):
        numpy.testing.assert_array_equal(a, b)


@pytest.mark.torch
@pytest.mark.parametrize("fused", [True, False])
@pytest.mark.parametrize("config", CONFIGS, ids=repr)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_moments_are_pytorchs_bit_for_bit(dtype, config, fused, monkeypatch):
    """The weight decay's add, lerp and addcmul are fused multiply-adds in PyTorch's
    kernels, and in both of retrograd's paths: the moments are PyTorch's bit for bit (they
    differed on 26-47% of elements after four steps). The parameters differ in their last
    bits, and rarely: PyTorch's square root is Sleef's, off by an ulp on some 0.7% of
    values with AVX-512, 16% of float32 ones with AVX2 (docs/deviations.md), and a step's
    difference stays in the parameter."""
    torch = pytest.importorskip("torch")
    if not fused:
        monkeypatch.setattr(functions._NumpyFunctions, "fused_adam", None)
    ours, theirs = _steps(dtype, config, False), _steps(dtype, config, False, torch)
    for a, b in zip(ours[1:], theirs[1:], strict=True):
        assert numpy.array_equal(a, b)
    assert (ours[0] != theirs[0]).mean() < carried_limit(dtype, 0.02)
    scale = numpy.finfo(dtype).eps * numpy.abs(theirs[0]).max()
    numpy.testing.assert_allclose(ours[0], theirs[0], rtol=0, atol=4 * scale)


def test_half_parameters_take_the_numpy_chain():
    """numba has no float16: such parameters ran into the compiled kernel and raised
    NotImplementedError; they take the chain, as bfloat16 ones do."""
    for dtype in (retrograd.float16, retrograd.bfloat16):
        p = retrograd.ones(8, dtype=dtype, requires_grad=True)
        p.grad = retrograd.full((8,), 0.5, dtype=dtype)
        retrograd.optim.Adam([p], lr=0.1).step()
        assert p.dtype == dtype and (p.detach().float() < 1).all()


@pytest.mark.torch
@pytest.mark.parametrize("fused", [True, False])
def test_a_lerp_weight_of_one_gives_zeros_signed_as_pytorchs(fused, monkeypatch):
    """beta1 = 0 makes exp_avg's lerp weight 1: its large-weight side is fma(w - 1, ...),
    with w - 1 = +0 (the compiled kernel had -(1 - w) = -0, unlike the chain)."""
    torch = pytest.importorskip("torch")
    if not fused:
        monkeypatch.setattr(functions._NumpyFunctions, "fused_adam", None)
    signs = []
    for lib in (retrograd, torch):
        p = lib.zeros(64, requires_grad=True)
        opt = lib.optim.Adam([p], betas=(0.0, 0.99))
        for g in ([-0.0, 0.0] * 32, [0.0, -0.0] * 32):
            p.grad = lib.tensor(g)
            opt.step()
        signs.append(numpy.signbit(opt.state[p]["exp_avg"].numpy()))
    assert numpy.array_equal(*signs)
