"""Ops outside the op database on the emulated device: the random samplers draw on the
host (NumPy's generator, so the device gets the CPU's values) and compute where the
tensor lives; LAPACK's failures are named on the device as on the CPU."""

import numpy
import pytest

import retrograd
from device.emulated_run import emulating


def _sampled(device):
    g = retrograd.Generator()
    p = retrograd.tensor([[0.1, 0.5, 0.9], [0.3, 0.0, 1.0]], device=device)
    w = retrograd.tensor([[1.0, 2.0, 3.0, 0.0], [1.0, 1.0, 1.0, 1.0]], device=device)
    mean = retrograd.tensor([[0.0, 1.0, 2.0]], device=device)
    std = retrograd.tensor([[0.5], [2.0]], dtype=retrograd.float64, device=device)
    draws = [lambda: retrograd.normal(mean, std[:1].float(), generator=g),
             lambda: retrograd.normal(mean, 2.0, generator=g),
             lambda: retrograd.normal(1.0, std, generator=g),
             lambda: retrograd.bernoulli(p, generator=g),
             lambda: retrograd.bernoulli(p, 0.3, generator=g),
             lambda: p.clone().bernoulli_(p, generator=g),
             lambda: retrograd.poisson(p * 10, generator=g),
             lambda: retrograd.multinomial(w, 3, generator=g),
             lambda: retrograd.multinomial(w[0], 7, True, generator=g),
             lambda: retrograd.empty(2, 3, device=device).exponential_(2.0, generator=g),
             lambda: retrograd.empty(2, 3, device=device).geometric_(0.4, generator=g),
             lambda: retrograd.empty(2, 3, device=device).log_normal_(generator=g),
             lambda: retrograd.empty(2, 3, device=device).cauchy_(generator=g),
             lambda: retrograd.empty(2, 3, device=device).random_(-3, 9, generator=g)]
    out = []
    for k, draw in enumerate(draws):
        g.manual_seed(k)
        out.append(draw())
    return out


def test_samplers_give_the_cpus_values_on_the_device():
    want = _sampled("cpu")
    with emulating():
        got = _sampled("cuda")
        for a, b in zip(want, got, strict=True):
            assert b.device.type == "cuda" and b.dtype == a.dtype
            numpy.testing.assert_array_equal(b.cpu().numpy(), a.numpy())


def test_normal_of_tensors_on_meta_draws_nothing():
    meta = retrograd.normal(retrograd.zeros(2, 3, device="meta"), retrograd.ones(3, device="meta"))
    assert meta.device.type == "meta" and meta.shape == (2, 3)


_SINGULAR = [[[1.0, 0.0], [0.0, 1.0]], [[1.0, 2.0], [2.0, 4.0]]]


@pytest.mark.parametrize("fn", [
    lambda A: retrograd.linalg.inv(A),
    lambda A: retrograd.linalg.solve(A, retrograd.ones(2, 2, 1, device=A.device)),
    lambda A: retrograd.linalg.cholesky(A),
    lambda A: retrograd.linalg.lu_factor(A)])
def test_lapack_failures_name_the_matrix_on_the_device(fn):
    with pytest.raises(retrograd.linalg.LinAlgError) as cpu:
        fn(retrograd.tensor(_SINGULAR))
    assert "(Batch element 1)" in str(cpu.value)
    with emulating():
        with pytest.raises(retrograd.linalg.LinAlgError) as dev:
            fn(retrograd.tensor(_SINGULAR, device="cuda"))
    assert str(dev.value) == str(cpu.value)


def test_ex_forms_report_infos_on_the_device():
    want = [f(retrograd.tensor(_SINGULAR)).info.tolist()
            for f in (retrograd.linalg.inv_ex, retrograd.linalg.cholesky_ex)]
    assert want == [[0, 2], [0, 2]]
    with emulating():
        A = retrograd.tensor(_SINGULAR, device="cuda")
        for f, w in zip((retrograd.linalg.inv_ex, retrograd.linalg.cholesky_ex), want,
                        strict=True):
            info = f(A).info
            assert info.device.type == "cuda" and info.tolist() == w
