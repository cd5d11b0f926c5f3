"""Adam's compiled CPU update (backend/cpu_kernels.adam_step, the NumPy backend's
``fused_adam`` where numba is installed) gives NumPy's chain of in-place passes bit for
bit: parameters and both moments, over several steps, in each configuration the fused
path takes, for contiguous and transposed parameters."""

import numpy
import pytest

import retrograd
from retrograd.backend import cpu_kernels, functions

pytestmark = pytest.mark.skipif(not cpu_kernels.ready(), reason="numba is not installed")

CONFIGS = [("Adam", {}), ("Adam", {"weight_decay": 0.1}), ("AdamW", {"weight_decay": 0.1}),
           ("Adam", {"betas": (0.3, 0.99)}), ("Adam", {"lr": 1e-1, "eps": 1e-3})]


def _steps(dtype, config, transposed):
    rng = numpy.random.default_rng(0)
    data = rng.standard_normal((40, 30)).astype(dtype)
    p = retrograd.from_numpy(data.T.copy().T if transposed else data).requires_grad_()
    name, kwargs = config
    opt = getattr(retrograd.optim, name)([p], **kwargs)
    for _ in range(4):
        p.grad = retrograd.from_numpy(rng.standard_normal(p.shape).astype(dtype))
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
