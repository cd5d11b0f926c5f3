"""Shared fixtures: PyTorch for differential tests, conversions, and clean global state.

Tests marked ``torch`` are skipped when PyTorch is not importable; they get the
module from the ``torch`` fixture (never a module-level import, so that the
rest of their file still runs without it).
"""

import os
import subprocess
import sys
from pathlib import Path

import numpy
import pytest
from hypothesis import settings

import retrograd

# No per-example deadline: CI's 2 shared cores make timings too noisy for one.
settings.register_profile("retrograd", deadline=None)
settings.load_profile("retrograd")

try:
    import torch as _torch
except ImportError:
    _torch = None


def pytest_collection_modifyitems(config, items):
    """Skip ``@pytest.mark.torch`` tests cleanly when PyTorch is missing,
    ``@pytest.mark.cuda`` tests when there is no GPU (CuPy's runtime sees none), and
    ``@pytest.mark.cpu_build`` tests (PyTorch's CPU-only behaviour) when there is one."""
    skips = {}
    if _torch is None:
        skips["torch"] = pytest.mark.skip(reason="PyTorch is not installed")
    if not retrograd.cuda.is_available():
        skips["cuda"] = pytest.mark.skip(
            reason=f"no GPU: {retrograd.backend.gpu.absent()}")
    else:
        skips["cpu_build"] = pytest.mark.skip(reason="a GPU is present")
    for item in items:
        for marker, skip in skips.items():
            if item.get_closest_marker(marker) is not None:
                item.add_marker(skip)


@pytest.fixture(autouse=True)
def _clean_state():
    """Each test starts seeded, in grad mode, with float32 as the default dtype, on the
    CPU by default, and leaves no memory accounting running that it started (a query such
    as ``memory_allocated`` starts it: it would watch every later test in the worker)."""
    retrograd.manual_seed(0)
    accounting = retrograd._observe.alloc is not None
    yield
    retrograd.set_default_dtype(retrograd.float32)
    retrograd.set_default_device(None)
    retrograd.autograd.grad_mode.state.enabled = True
    if not accounting and retrograd._observe.alloc is not None:
        retrograd.memory.stop_accounting()


@pytest.fixture(scope="session")
def torch():
    """The PyTorch module (the test is skipped without it)."""
    if _torch is None:
        pytest.skip("PyTorch is not installed")
    return _torch


def _to_torch(x, memo):
    if isinstance(x, retrograd.Tensor):
        t = memo.get(id(x))
        if t is None:
            a = numpy.array(x.detach().numpy(), order="K", copy=True)
            if a.dtype == retrograd.bfloat16.np:  # PyTorch takes no ml_dtypes array: the bits
                t = _torch.from_numpy(a.view(numpy.int16)).view(_torch.bfloat16)
            else:
                t = _torch.from_numpy(a)
            if x.requires_grad:
                t.requires_grad_(True)
            memo[id(x)] = t
        return t
    if isinstance(x, retrograd.dtype):
        return getattr(_torch, x.name)
    if isinstance(x, retrograd.memory_format):  # (its repr: torch.channels_last)
        return getattr(_torch, repr(x).removeprefix("torch."))
    if isinstance(x, list):
        return [_to_torch(e, memo) for e in x]
    if isinstance(x, tuple):
        return tuple(_to_torch(e, memo) for e in x)
    if isinstance(x, dict):
        return {k: _to_torch(v, memo) for k, v in x.items()}
    return x


@pytest.fixture(scope="session")
def to_torch(torch):
    """Copy retrograd tensors (through lists, tuples, dicts) into PyTorch tensors with the
    same values, dtype and requires_grad; a tensor given twice maps to one torch tensor.
    ``to_torch(*objs)`` converts several objects with one shared memo."""
    def convert(*objs):
        memo = {}
        res = tuple(_to_torch(o, memo) for o in objs)
        return res[0] if len(objs) == 1 else res
    return convert


def _compare(r, t, tols, path):
    if isinstance(t, _torch.Tensor):
        assert isinstance(r, retrograd.Tensor), f"{path}: expected a Tensor, got {type(r)}"
        assert repr(r.dtype) == str(t.dtype), f"{path}: dtype {r.dtype} != {t.dtype}"
        assert tuple(r.shape) == tuple(t.shape), f"{path}: shape {r.shape} != {t.shape}"
        a, b = r.detach().numpy(), t.detach()
        name = a.dtype.name
        if name == "bfloat16":  # compared as float32 (exact): NumPy's bfloat16 is ml_dtypes'
            a, b = a.astype(numpy.float32), b.float()
        b = b.numpy(force=True)  # force: ZeroTensor grads
        if a.dtype.kind in "fc":
            atol, rtol = tols(name)
            numpy.testing.assert_allclose(a, b, rtol=rtol, atol=atol, equal_nan=True,
                                          err_msg=path)
        else:
            numpy.testing.assert_array_equal(a, b, err_msg=path)
    elif isinstance(t, (tuple, list)):
        assert isinstance(r, (tuple, list)), f"{path}: expected a sequence, got {type(r)}"
        assert len(r) == len(t), f"{path}: {len(r)} elements != {len(t)}"
        for name in getattr(type(t), "__match_args__", getattr(type(t), "_fields", ())):
            assert hasattr(r, name), f"{path}: result has no field {name!r}"
        for k, (x, y) in enumerate(zip(r, t, strict=True)):
            _compare(x, y, tols, f"{path}[{k}]")
    elif isinstance(t, float):
        assert isinstance(r, float), f"{path}: expected a float, got {type(r)}"
        atol, rtol = tols("float64")
        assert r == pytest.approx(t, rel=rtol, abs=atol, nan_ok=True), path
    elif isinstance(t, _torch.dtype):
        assert repr(r) == str(t), f"{path}: {r} != {t}"
    else:
        assert type(r) is type(t) and r == t, f"{path}: {r!r} != {t!r}"


@pytest.fixture(scope="session")
def assert_matches_torch(torch):
    """``assert_matches_torch(result, torch_result, tols)``: same structure, dtypes, shapes
    and values; ``tols(dtype_name) -> (atol, rtol)`` gives the float tolerances."""
    def check(r, t, tols=lambda name: (1e-5, 1.3e-6) if name == "float32" else (1e-7, 1e-7)):
        _compare(r, t, tols, "result")
    return check


@pytest.fixture
def emulated_cuda():
    """Device "cuda" on the emulator for one test, device 0 current again after it."""
    from device.emulated_run import emulating
    with emulating():
        yield
        retrograd.cuda.set_device(0)


@pytest.fixture(scope="session")
def python_run():
    """``python_run(*argv, cwd=None, env=None, timeout=300)``: this Python on ``argv`` in a
    subprocess that imports the retrograd under test (``"-m", "retrograd", "run", script``
    runs a script through the runner), with one BLAS thread; the CompletedProcess, text
    output captured."""
    src = str(Path(retrograd.__file__).resolve().parents[1])
    base = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
            "MKL_NUM_THREADS": "1",
            "PYTHONPATH": os.pathsep.join(filter(None, [src, os.environ.get("PYTHONPATH")]))}

    def run(*argv, cwd=None, env=None, timeout=300):
        return subprocess.run([sys.executable, *map(str, argv)], cwd=cwd,
                              env={**base, **(env or {})}, capture_output=True, text=True,
                              timeout=timeout)
    return run
