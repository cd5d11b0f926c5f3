"""The compiled CPU kernels (backend/cpu_kernels.py) against the NumPy path on the values
the op database's samples rarely hold: NaN, infinities, huge values whose squares
overflow, subnormals, exponentials that underflow, signed zeros. Each case runs with the
kernels and with them off; values and input gradients agree, NaN for NaN."""

import numpy
import pytest

import retrograd
from retrograd.backend import cpu_kernels

pytestmark = pytest.mark.skipif(not cpu_kernels.ready(), reason="numba is not installed")

SPECIAL = numpy.float32([numpy.nan, numpy.inf, -numpy.inf, 1e30, -1e30, 3e19, 1e-40, -1e-40,
                         0.0, -0.0, 88.7, -88.7, 104.0, -104.0, 5.6, -5.6, -120.0])


def _inputs(shape, seed):
    rng = numpy.random.default_rng(seed)
    x = (rng.standard_normal(shape) * 3).astype(numpy.float32)
    hit = rng.random(shape) < 0.2
    x[hit] = rng.choice(SPECIAL, hit.sum())
    return x, rng.standard_normal(shape).astype(numpy.float32)


def _run(f, arrays, grad):
    leaves = [retrograd.from_numpy(a.copy()).requires_grad_() for a in arrays]
    out = f(*leaves)
    out.backward(retrograd.from_numpy(grad))
    return [out.detach().numpy()] + [t.grad.numpy() for t in leaves]


CASES = {
    "gelu": (lambda x: retrograd.nn.functional.gelu(x), 1),
    "softmax": (lambda x: retrograd.softmax(x, -1), 1),
    "log_softmax": (lambda x: retrograd.log_softmax(x, -1), 1),
    "layer_norm": (lambda x, w, b: retrograd.nn.functional.layer_norm(x, (x.shape[-1],), w, b), 3),
    "layer_norm_no_affine": (lambda x: retrograd.nn.functional.layer_norm(x, (x.shape[-1],)), 1),
    "relu": (lambda x: retrograd.relu(x), 1),
}


@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize("shape", [(1,), (7, 33), (4, 3, 64), (2, 1, 200), (3, 700)])
def test_compiled_kernel_matches_numpy_path(name, shape, monkeypatch):
    f, n_inputs = CASES[name]
    x, grad = _inputs(shape, len(name) + len(shape))
    rng = numpy.random.default_rng(1)
    arrays = [x] + [rng.standard_normal(shape[-1:]).astype(numpy.float32)
                    for _ in range(n_inputs - 1)]
    compiled, plain = _with_and_without(f, arrays, grad, monkeypatch)
    for a, b in zip(compiled, plain, strict=True):
        numpy.testing.assert_allclose(a, b, rtol=2e-5, atol=2e-5, equal_nan=True)


def test_compiled_exp_underflows_gradually_and_masks():
    """softmax's exp: exactly 0 for a masked (-inf) entry, subnormal results rounded."""
    t = numpy.float32([-1e30, -120, -104, -100, -90, -87.5, -50, -1, 0])
    x = numpy.stack([t, numpy.zeros_like(t)], 1)
    x[0, 0] = -numpy.inf
    got = cpu_kernels.softmax(x)[:, 0]
    e = numpy.exp(x[:, 0].astype(numpy.float64))
    want = (e / (1 + e)).astype(numpy.float32)
    assert got[0] == 0
    numpy.testing.assert_allclose(got, want, rtol=1e-6, atol=2e-45)


def test_compiled_row_max_orders_as_floats():
    """softmax's row maximum, taken on the floats' bits: signed zeros, infinities, NaNs
    with either sign anywhere in the row, subnormals; rows against the NumPy kernel."""
    neg_nan = numpy.float32(-numpy.nan)
    assert numpy.signbit(neg_nan)
    rows = numpy.float32([
        [-0.0, 0.0, -1e-40, 1e-40], [-3.0, -2.0, -1e-30, -1e30], [numpy.inf, 1.0, 2.0, 3.0],
        [-numpy.inf] * 4, [-numpy.inf, -5.0, -numpy.inf, -6.0], [numpy.nan, 1.0, 2.0, 3.0],
        [1.0, 2.0, 3.0, numpy.nan], [neg_nan, 1.0, 2.0, 3.0], [1.0, neg_nan, -2.0, 3.0],
        [neg_nan] * 4, [-1e-40, -2e-40, -3e-40, -4e-40], [3e38, -3e38, 1.0, 3e38]])
    x = numpy.repeat(rows, 3, axis=0)  # more rows than a block, with a partial one
    x = numpy.concatenate([x, x[:5]])
    want = retrograd.softmax(retrograd.from_numpy(x).double(), -1).float().numpy()
    numpy.testing.assert_allclose(cpu_kernels.softmax(x), want, rtol=2e-6, atol=0,
                                  equal_nan=True)
    want = retrograd.log_softmax(retrograd.from_numpy(x).double(), -1).float().numpy()
    numpy.testing.assert_allclose(cpu_kernels.log_softmax(x), want, rtol=2e-6, atol=0,
                                  equal_nan=True)


def _with_and_without(f, arrays, grad, monkeypatch):
    """``_run`` with the compiled kernels (they must be asked) and with them off."""
    calls = []
    takes = cpu_kernels.takes
    monkeypatch.setattr(cpu_kernels, "takes", lambda *a: calls.append(1) or takes(*a))
    compiled = _run(f, arrays, grad)
    assert calls, "the compiled kernels were not asked"
    monkeypatch.setattr(cpu_kernels, "takes", lambda *a: False)
    return compiled, _run(f, arrays, grad)


_OUTER_CASES = {  # (product, shapes of its operands; the second's layout is checked)
    "row_at_wt": (lambda x, w: x @ w.t(), (1, 40), (30, 40)),
    "vec_at_wt": (lambda x, w: x @ w.t(), (40,), (30, 40)),
    "row_at_w": (lambda x, w: x @ w, (1, 40), (40, 30)),
    "col_at_row": (lambda x, w: x @ w, (40, 1), (1, 40)),
    "mat_at_col": (lambda x, w: x @ w, (30, 40), (40, 1)),
    "linear_row": (lambda x, w: retrograd.nn.functional.linear(x, w), (1, 40), (30, 40)),
    "batch_outer": (lambda x, w: x @ w, (3, 40, 1), (3, 1, 30)),
    "batch_row": (lambda x, w: x @ w, (3, 1, 40), (3, 40, 30)),
    "batch_col": (lambda x, w: x @ w, (3, 30, 40), (3, 40, 1)),
    "empty_row": (lambda x, w: x @ w, (1, 1), (1, 0)),  # empty products: nothing to lay out
    "empty_batch": (lambda x, w: x @ w, (1, 1, 1), (1, 1, 0)),
    "linear_empty": (lambda x, w: retrograd.nn.functional.linear(x, w), (0,), (1, 0)),
}


@pytest.mark.parametrize("case", _OUTER_CASES)
def test_compiled_outer_products_match_numpy(case, monkeypatch):
    """Products over one contracted element (a batch-1 layer's weight gradient, a column
    times a row, batches of them) with special values: the same values, NaN for NaN, and
    the weight's gradient in the weight's layout."""
    f, sx, sw = _OUTER_CASES[case]
    arrays = [_inputs(sx, 3)[0], _inputs(sw, 4)[0]]
    out_shape = f(*(retrograd.from_numpy(a) for a in arrays)).shape
    grad = numpy.random.default_rng(5).standard_normal(out_shape).astype(numpy.float32)
    compiled, plain = _with_and_without(f, arrays, grad, monkeypatch)
    for a, b in zip(compiled, plain, strict=True):
        numpy.testing.assert_allclose(a, b, rtol=2e-6, atol=0, equal_nan=True)
    assert compiled[2].strides == plain[2].strides


def test_compiled_add_scaled_matches_numpy(monkeypatch):
    """``p.add_(b, alpha=a)`` in place by the kernel, specials included: NumPy's value to
    a rounding (the kernel contracts ``p + a * b`` into one FMA, as PyTorch's does)."""
    p0, b = _inputs((3, 700), 6)
    got, calls = [], []
    add_scaled = cpu_kernels.add_scaled
    monkeypatch.setattr(cpu_kernels, "add_scaled", lambda *a: calls.append(1) or add_scaled(*a))
    for on in (True, False):
        if not on:
            assert calls, "the kernel did not run"
            monkeypatch.setattr(cpu_kernels, "takes", lambda *a: False)
        p = retrograd.from_numpy(p0.copy())
        with retrograd.no_grad():
            p.add_(retrograd.from_numpy(b), alpha=-0.01)
        got.append(p.numpy())
    numpy.testing.assert_allclose(got[0], got[1], rtol=2e-6, atol=1e-45, equal_nan=True)
