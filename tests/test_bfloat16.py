"""bfloat16 as a dtype (ml_dtypes'): the API around it against PyTorch's, one scenario at a
time in both libraries (results, dtypes, or the exception), plus what only retrograd has:
NumPy arrays of it in and out."""

import ml_dtypes
import numpy
import pytest

import retrograd

_BF16 = retrograd.bfloat16.np


def _sq_grad(lib, x):
    p = x.clone().requires_grad_()
    (p * p).sum().backward()
    return p.grad


def _setitem(x, value):
    y = x.clone()
    y[0] = value
    return y


def _with_default(lib, make):
    lib.set_default_dtype(lib.bfloat16)
    try:
        return make(), lib.get_default_dtype()
    finally:
        lib.set_default_dtype(lib.float32)


def _deterministic_empty(lib):
    lib.use_deterministic_algorithms(True)
    try:
        return lib.empty(2, dtype=lib.bfloat16).isnan()
    finally:
        lib.use_deterministic_algorithms(False)


# name -> f(lib, x) with x = lib.tensor([1.5, -2.25, 3.0], dtype=lib.bfloat16)
SCENARIOS = {
    "type": lambda lib, x: x.type(),
    "type_set": lambda lib, x: x.float().type("torch.BFloat16Tensor").dtype,
    "legacy_constructor": lambda lib, x: lib.BFloat16Tensor([1, 2]),
    "to_half": lambda lib, x: x.to(lib.float16),
    "to_dtype_kw": lambda lib, x: x.double().to(dtype=lib.bfloat16),
    "method": lambda lib, x: lib.tensor([1.1, 2]).bfloat16(),
    "element_size": lambda lib, x: x.element_size(),
    "is_floating_point": lambda lib, x: x.is_floating_point(),
    "empty": lambda lib, x: lib.empty(2, dtype=lib.bfloat16).dtype,
    "full": lambda lib, x: lib.full((2,), 1.1, dtype=lib.bfloat16),
    "arange": lambda lib, x: lib.arange(0, 1, 0.25, dtype=lib.bfloat16),
    "linspace": lambda lib, x: lib.linspace(0, 1, 5, dtype=lib.bfloat16),
    "rand": lambda lib, x: lib.rand(3, dtype=lib.bfloat16).dtype,
    "randn": lambda lib, x: lib.randn(3, dtype=lib.bfloat16).dtype,
    "randint": lambda lib, x: lib.randint(0, 5, (3,), dtype=lib.bfloat16).dtype,
    "normal_": lambda lib, x: lib.empty(3, dtype=lib.bfloat16).normal_().dtype,
    "item": lambda lib, x: (x[0].item(), type(x[0].item()).__name__),
    "tolist": lambda lib, x: x.tolist(),
    "sum": lambda lib, x: x.sum(),
    "sum_dtype": lambda lib, x: x.sum(dtype=lib.float32),
    "cat_half": lambda lib, x: lib.cat([x, x.half()]),
    "0d_with_half": lambda lib, x: lib.tensor(1.5, dtype=lib.bfloat16) + lib.tensor(
        [1.], dtype=lib.float16),
    "int_times_0d": lambda lib, x: lib.tensor([1, 2]) * lib.tensor(2.5, dtype=lib.bfloat16),
    "long": lambda lib, x: x.long(),
    "sort": lambda lib, x: x.sort().values,
    "cumsum": lambda lib, x: x.cumsum(0),
    "softmax": lambda lib, x: x.softmax(0),
    "matmul": lambda lib, x: x @ x,
    "dot_half": lambda lib, x: x.dot(x.half()),
    "add_float": lambda lib, x: x + x.float(),
    "finfo": lambda lib, x: repr(lib.finfo(lib.bfloat16)),
    "iinfo": lambda lib, x: lib.iinfo(lib.bfloat16),
    "result_type": lambda lib, x: lib.result_type(x, 2.5),
    "dtype_facts": lambda lib, x: (lib.bfloat16.itemsize, lib.bfloat16.is_signed,
                                   lib.bfloat16.is_floating_point, str(lib.bfloat16)),
    "default_dtype": lambda lib, x: _with_default(lib, lambda: lib.tensor([1.1])),
    "grad": lambda lib, x: _sq_grad(lib, x),
    "module_to": lambda lib, x: lib.nn.Linear(3, 2).to(lib.bfloat16)(x.reshape(1, 3)).dtype,
    "module_bfloat16": lambda lib, x: lib.nn.Linear(3, 2).bfloat16().weight.dtype,
    "linear_mixed": lambda lib, x: lib.nn.functional.linear(x.reshape(1, 3), lib.ones(2, 3)),
    "compare_number": lambda lib, x: lib.tensor([0.1], dtype=lib.bfloat16) == 0.1,
    "pow_number": lambda lib, x: x.abs().pow(1 / 3),
    "where_number": lambda lib, x: lib.where(x > 0, x, 0.1),
    "setitem": lambda lib, x: _setitem(x, 0.1),
    "fill_": lambda lib, x: x.clone().fill_(1 / 3),
    "view_int16": lambda lib, x: x.view(lib.int16),
    "deterministic_empty": lambda lib, x: _deterministic_empty(lib),
    "is_signed": lambda lib, x: x.is_signed(),
    "nan_to_num": lambda lib, x: (x / 0).nan_to_num(),
    "nan_to_num_posinf": lambda lib, x: (x / 0).nan_to_num(posinf=7.0),
    "bitwise_and_refused": lambda lib, x: x.bitwise_and(x),
    "isclose_equal_nan": lambda lib, x: lib.isclose(x / 0, x / 0, equal_nan=True),
    "isclose_mixed_refused": lambda lib, x: lib.isclose(x, x.float()),
}


def _outcome(lib, name):
    x = lib.tensor([1.5, -2.25, 3.0], dtype=lib.bfloat16)
    try:
        v = SCENARIOS[name](lib, x)
    except Exception as e:  # the exception is the outcome compared
        return f"{type(e).__name__}: {e}"
    if isinstance(v, tuple):
        return tuple(_plain(e) for e in v)
    return _plain(v)


def _plain(v):
    if hasattr(v, "tolist") and hasattr(v, "dtype"):
        return str(v.dtype), v.tolist()
    return str(v)


@pytest.mark.torch
@pytest.mark.parametrize("name", list(SCENARIOS))
def test_scenario_matches_torch(torch, name):
    assert _outcome(retrograd, name) == _outcome(torch, name)


def test_numpy_arrays_in_and_out():
    """PyTorch has no NumPy bfloat16 (its ``numpy()`` raises); retrograd's tensors are NumPy
    arrays, so ml_dtypes' arrays come in and go out (docs/deviations.md)."""
    arr = numpy.array([1.5, -2.25], dtype=ml_dtypes.bfloat16)
    t = retrograd.from_numpy(arr)
    assert t.dtype is retrograd.bfloat16 and t.numpy() is not None
    assert t.numpy().dtype == _BF16 and retrograd.tensor(arr).dtype is retrograd.bfloat16
    arr[0] = 4.0
    assert t[0].item() == 4.0  # from_numpy shares memory


def test_sums_do_not_use_numpys_bfloat16_loop():
    """ml_dtypes sums in bfloat16 (10,000 uniforms give 256); retrograd accumulates in
    float32, as PyTorch's kernels."""
    arr = numpy.random.default_rng(0).uniform(0, 1, 10_000).astype(_BF16)
    assert float(arr.sum()) == 256.0
    total = retrograd.from_numpy(arr).sum()
    assert total.dtype is retrograd.bfloat16
    assert total.item() == pytest.approx(float(arr.astype(numpy.float64).sum()), rel=4e-3)
