"""float16 ops compute in float32 and round once, as PyTorch's CPU kernels do.

The policy is one place (``_dtype.OPMATH`` and ``ops._registry``): forward, vjp and jvp
rules see float32 arrays and results and gradients come back as float16. These tests run
every op of the op database on float16 samples against PyTorch (result dtypes exactly,
values to float16 tolerances), then the cases where computing in half would go wrong:
values near 65504, subnormals, reductions over many elements.

Tolerances: float16 has an 11-bit significand, so one unit in the last place is 2**-10
relative (about 1e-3). Forward results are computed in float32 here and in PyTorch and
rounded once, so they agree to that ulp: ``(atol, rtol) = (1e-3, 1e-3)``, the op
database's float16 default (``OpInfo.tols``). Gradients get ``(1e-2, 1e-2)``:
PyTorch's backward formulas are chains of half ops, each rounding, where ours round once.
"""

import zlib

import numpy
import pytest

import retrograd
from retrograd import memory
from retrograd.autograd import forward_ad as fwAD
import _low_precision as low

F = retrograd.nn.functional
_GRAD_TOLS = (1e-2, 1e-2)


# Where PyTorch's half result is itself off: compared elsewhere, or not at all.
_TORCH_DIFFERS = {
    "matrix_exp": "PyTorch's half matrix_exp overflows to inf for entries of size 2",
    "linalg.matrix_exp": "PyTorch's half matrix_exp overflows to inf for entries of size 2",
    "linalg.matrix_exp.gradgrad": "PyTorch's half matrix_exp overflows to inf",
}
# PyTorch's half backward of logcumsumexp rounds in log space (off by up to 0.2 for
# inputs of size 800); ours agrees with float64 (test_logcumsumexp_grad_wide_range).
_TORCH_GRAD_DIFFERS = {("logcumsumexp", "wide_range"): "PyTorch's half backward is imprecise"}

# Per-op forward tolerances beyond one ulp, with the reason.
_TOLS = {
    # cdist's matrix-product path: ||x||^2 + ||y||^2 - 2 x.y cancels (PyTorch does it too,
    # with other rounding points)
    "cdist.mm": (3e-3, 3e-3),
    # Without oneDNN's half kernels (CPUs lacking AVX512-FP16, such as AMD's), PyTorch's
    # native transposed convolution rounds the GEMM's columns to half and sums col2im's
    # overlapping taps in half, a rounding per tap (docs/deviations.md); ours rounds once.
    # With oneDNN it rounds once too. 1e-2 covers the taps of these samples' kernels.
    "conv_transpose2d": (1e-2, 1e-2),
    "conv_transpose3d": (1e-2, 1e-2),
}


def _torch_result(op, sample, to_torch, *leaves):
    """PyTorch's result, or a skip for an op PyTorch does not run in Half (listed)."""
    converted = to_torch(sample.input, sample.args, sample.kwargs, list(leaves))
    t_input, t_args, t_kwargs, t_leaves = converted
    try:
        return op.torch_op(t_input, *t_args, **t_kwargs), t_leaves
    except (NotImplementedError, RuntimeError) as e:
        assert op.id in low.TORCH_REFUSES, f"PyTorch refuses {op.id} in Half: {e}"
        pytest.skip(f"PyTorch: {e}")


@pytest.mark.torch
@pytest.mark.parametrize("op, i", low.params("float16", False))
def test_half_forward_matches_torch(op, i, to_torch, assert_matches_torch):
    if op.id in _TORCH_DIFFERS:
        pytest.skip(_TORCH_DIFFERS[op.id])
    sample = low.samples(op, "float16", False)[i]
    expected, _ = _torch_result(op, sample, to_torch)
    actual = op.op(sample.input, *sample.args, **sample.kwargs)
    tols = _TOLS.get(op.id, op.tols("float16"))
    assert_matches_torch(actual, expected, lambda name: tols)


@pytest.mark.torch
@pytest.mark.parametrize("op, i", low.params("float16", True, lambda op: op.supports_grad
                                          and op.compare_grad_with_torch))
def test_half_grad_matches_torch(op, i, torch, to_torch, assert_matches_torch):
    """Backward rules run in float32; gradients come back as float16, as PyTorch's."""
    if op.id in _TORCH_DIFFERS:
        pytest.skip(_TORCH_DIFFERS[op.id])
    sample = low.samples(op, "float16", True)[i]
    if sample.nondifferentiable:
        pytest.skip("not differentiable at this point")
    if (op.id, sample.name) in _TORCH_GRAD_DIFFERS:
        pytest.skip(_TORCH_GRAD_DIFFERS[op.id, sample.name])
    leaves = low.leaves(sample)
    t_outs, t_leaves = _torch_result(op, sample, to_torch, *leaves)
    outs = low.flat(op.op(sample.input, *sample.args, **sample.kwargs))
    t_outs = low.flat(t_outs)
    diff = [k for k, o in enumerate(outs) if isinstance(o, retrograd.Tensor) and o.requires_grad]
    if not diff or not leaves:
        pytest.skip("no differentiable output")
    g = numpy.random.default_rng(zlib.crc32(op.id.encode()))
    cots = [g.standard_normal(outs[k].shape).astype(numpy.float16) for k in diff]
    grads = retrograd.autograd.grad([outs[k] for k in diff], leaves,
                                    [retrograd.from_numpy(c) for c in cots], allow_unused=True)
    try:
        t_grads = torch.autograd.grad([t_outs[k] for k in diff], t_leaves,
                                      [torch.from_numpy(c) for c in cots], allow_unused=True)
    except NotImplementedError as e:  # pdist of one row: pdist_backward
        assert op.id in low.TORCH_REFUSES, f"PyTorch refuses {op.id}'s backward in Half: {e}"
        pytest.skip(f"PyTorch: {e}")
    for x, gr, tx, tg in zip(leaves, grads, t_leaves, t_grads, strict=True):
        gr = gr if gr is not None else retrograd.zeros_like(x)
        tg = tg if tg is not None else torch.zeros_like(tx)
        assert_matches_torch(gr, tg, lambda name: _GRAD_TOLS)


# ---- values where computing in half goes wrong ------------------------------------------

def _h(values):
    return retrograd.tensor(values, dtype=retrograd.float16)


def _same(actual, expected, torch, atol=0.0, rtol=0.0):
    assert str(actual.dtype) == str(expected.dtype)
    numpy.testing.assert_allclose(actual.detach().numpy().astype(float),
                                  expected.detach().numpy().astype(float),
                                  atol=atol, rtol=rtol, equal_nan=True)


_EDGES = [0.0, -0.0, 6e-8, -6e-8, 1e-5, 0.5, -1.0, 3.0, -10.0, 11.0, 15.5, -15.5, 300.0,
          -300.0, 60000.0, 65504.0, -65504.0]


@pytest.mark.torch
@pytest.mark.parametrize("name", ["exp", "expm1", "log", "log1p", "log2", "log10", "sqrt",
                                  "rsqrt", "sigmoid", "tanh", "erf", "erfc", "sin", "cos",
                                  "reciprocal", "square"])
def test_unary_edges_match_torch(name, torch):
    """Subnormals, 65504 and overflow (exp(11.1) is inf in half): rounded once."""
    x = _h(_EDGES)
    with numpy.errstate(all="ignore"):
        _same(getattr(retrograd, name)(x), getattr(torch, name)(torch.tensor(_EDGES,
                                                                              dtype=torch.half)),
              torch, atol=1e-3, rtol=1e-3)


@pytest.mark.torch
@pytest.mark.parametrize("name", ["gelu", "silu", "mish", "softplus", "elu", "selu", "celu",
                                  "logsigmoid", "hardswish", "tanhshrink"])
def test_activation_edges_match_torch(name, torch):
    x = _h(_EDGES)
    actual = getattr(F, name)(x)
    assert actual.dtype is retrograd.float16  # gelu and erf were float64
    _same(actual, getattr(torch.nn.functional, name)(torch.tensor(_EDGES, dtype=torch.half)),
          torch, atol=1e-3, rtol=1e-3)


@pytest.mark.torch
def test_norms_of_vectors_that_overflow_squared(torch):
    """300**2 overflows half: the norm is 316, as PyTorch's (sums of squares in float)."""
    x = _h([100.0, 300.0])
    t = torch.tensor([100.0, 300.0], dtype=torch.half)
    for ours, theirs in ((retrograd.linalg.vector_norm(x), torch.linalg.vector_norm(t)),
                         (x.norm(), t.norm()), (retrograd.linalg.norm(x), torch.linalg.norm(t)),
                         (x.norm(3), t.norm(3)), (retrograd.dist(x, -x), torch.dist(t, -t))):
        _same(ours, theirs, torch)
    assert float(x.norm()) == 316.25  # sqrt(100000) = 316.23, to half's 0.25 spacing


@pytest.mark.torch
def test_normalization_layers_of_large_values(torch):
    """Variances of +-300 overflow half: layer_norm gives [1, -1] as PyTorch does."""
    x = _h([[300.0, -300.0], [1000.0, -1000.0]])
    t = torch.tensor([[300.0, -300.0], [1000.0, -1000.0]], dtype=torch.half)
    _same(F.layer_norm(x, (2,)), torch.nn.functional.layer_norm(t, (2,)), torch, 1e-3, 1e-3)
    assert F.layer_norm(x, (2,)).tolist() == [[1.0, -1.0], [1.0, -1.0]]
    _same(F.rms_norm(x, (2,)), torch.nn.functional.rms_norm(t, (2,)), torch, 1e-3, 1e-3)
    x4, t4 = x.reshape(1, 2, 2, 1), t.reshape(1, 2, 2, 1)
    _same(F.group_norm(x4, 1), torch.nn.functional.group_norm(t4, 1), torch, 1e-3, 1e-3)
    _same(F.instance_norm(x4), torch.nn.functional.instance_norm(t4), torch, 1e-3, 1e-3)
    xb, tb = x.t().contiguous(), t.t().contiguous()
    _same(F.batch_norm(xb, None, None, training=True),
          torch.nn.functional.batch_norm(tb, None, None, training=True), torch, 1e-3, 1e-3)


@pytest.mark.torch
def test_softmax_of_large_logits(torch):
    vals = [[60000.0, 65504.0, -65504.0, 0.0], [1e-7, 2e-7, 0.0, -1e-7]]
    x, t = _h(vals), torch.tensor(vals, dtype=torch.half)
    for name in ("softmax", "log_softmax"):
        _same(getattr(F, name)(x, 1), getattr(torch.nn.functional, name)(t, 1), torch,
              1e-3, 1e-3)
    _same(retrograd.logsumexp(x, 1), torch.logsumexp(t, 1), torch, 1e-3, 1e-3)


@pytest.mark.torch
def test_reductions_accumulate_in_float(torch):
    """10000 ones sum to 10000 (a half accumulator stalls at 2048); var and mean of
    values near 300 need sums past 65504; std, prod and cumsum likewise."""
    rng = numpy.random.default_rng(0)
    assert float(retrograd.ones(10000, dtype=retrograd.float16).sum()) == 10000.0
    for centre in (3.0, 300.0):
        vals = (centre + rng.standard_normal(10000)).astype(numpy.float16)
        x, t = retrograd.from_numpy(vals), torch.from_numpy(vals)
        for name in ("sum", "mean", "var", "std", "nansum"):
            _same(getattr(x, name)(), getattr(t, name)(), torch, 0, 1e-3)
        _same(x.cumsum(0), t.cumsum(0), torch, 0, 1e-3)
        _same(x.reshape(100, 100).sum(1), t.reshape(100, 100).sum(1), torch, 0, 1e-3)
    # nanmean is PyTorch's composite nansum / count: the sum rounds to half (inf here)
    assert float(x.nanmean()) == float(t.nanmean()) == float("inf")
    # prod multiplies in float32 too: PyTorch's half prod rounds every partial product
    # (6.89 for 2000 factors of 1.001 in half, 7.044 exactly), ours rounds once
    small = _h([1.001] * 2000)
    assert float(small.prod()) == pytest.approx(float(small.double().prod()), rel=1e-3)
    # an explicit dtype is the compute dtype: a float32 sum stays float32
    _same(x.sum(dtype=retrograd.float32), t.sum(dtype=torch.float32), torch, 0, 1e-6)


@pytest.mark.torch
def test_gradients_summed_over_broadcast_dims_add_in_float(torch):
    """The gradient of an expanded (or broadcast) float16 input adds its rows in float32
    and rounds once, as PyTorch's sum: -14.36 - 0.2118 - 15.66 + 30.92 is 0.6943, not
    0.703 (added in half), and two rows of 40000 give 80000 -> inf only at the end."""
    g = numpy.array([[-14.36, 1.0], [-0.2118, 1.0], [-15.66, 1.0], [30.92, 1.0]],
                    dtype=numpy.float16)
    big = numpy.array([[40000.0, 1.0], [40000.0, 1.0], [-30000.0, 1.0]], dtype=numpy.float16)

    def run(lib, grad):
        x = lib.tensor([[1.0, 2.0]], dtype=lib.float16, requires_grad=True)
        return lib.autograd.grad(x.expand(len(grad), 2), x, lib.tensor(grad))[0]
    for grad in (g, big):
        _same(run(retrograd, grad), run(torch, grad), torch)


@pytest.mark.torch
def test_matmul_linear_conv_in_half(torch):
    rng = numpy.random.default_rng(1)
    a = rng.standard_normal((8, 512)).astype(numpy.float16)
    b = rng.standard_normal((512, 4)).astype(numpy.float16)
    w = rng.standard_normal((3, 2, 3, 3)).astype(numpy.float16)
    img = rng.standard_normal((1, 2, 6, 6)).astype(numpy.float16)
    r = retrograd.from_numpy
    t = torch.from_numpy
    _same(r(a) @ r(b), t(a) @ t(b), torch, 2e-2, 2e-3)
    _same(F.linear(r(a), r(b).t().contiguous()), torch.nn.functional.linear(t(a), t(b).t()),
          torch, 2e-2, 2e-3)
    _same(F.conv2d(r(img), r(w)), torch.nn.functional.conv2d(t(img), t(w)), torch, 1e-2, 2e-3)


@pytest.mark.torch
def test_comparisons_round_numbers_to_half(torch):
    """0.1 compared with a float16 tensor is 0.1 rounded to float16, as in PyTorch."""
    x, t = _h([0.1, 0.2]), torch.tensor([0.1, 0.2], dtype=torch.half)
    for name in ("eq", "lt", "le", "gt", "ge", "ne"):
        assert getattr(x, name)(0.1).tolist() == getattr(t, name)(0.1).tolist()
    assert retrograd.isin(x, 0.1).tolist() == torch.isin(t, 0.1).tolist()
    assert retrograd.nan_to_num(_h([float("inf")])).item() == 65504.0


@pytest.mark.torch
def test_inplace_rounds_once(torch):
    vals = [0.5, 11.0, 300.0, -2.0]
    x, t = _h(vals), torch.tensor(vals, dtype=torch.half)
    _same(x.exp_(), t.exp_(), torch)
    x, t = _h(vals), torch.tensor(vals, dtype=torch.half)
    _same(x.mul_(1.5).add_(_h([1.0] * 4), alpha=0.3),
          t.mul_(1.5).add_(torch.ones(4, dtype=torch.half), alpha=0.3), torch, 1e-3, 1e-3)


@pytest.mark.torch
def test_backward_create_graph_and_forward_mode(torch):
    vals = [0.5, 2.0, -3.0, 10.0]
    x = _h(vals).requires_grad_()
    t = torch.tensor(vals, dtype=torch.half, requires_grad=True)
    y, ty = F.gelu(x) * x.sigmoid(), torch.nn.functional.gelu(t) * t.sigmoid()
    (g,) = retrograd.autograd.grad(y.sum(), x, create_graph=True)
    (tg,) = torch.autograd.grad(ty.sum(), t, create_graph=True)
    _same(g, tg, torch, *_GRAD_TOLS)
    (gg,) = retrograd.autograd.grad(g.sum(), x)
    (tgg,) = torch.autograd.grad(tg.sum(), t)
    _same(gg, tgg, torch, *_GRAD_TOLS)
    with fwAD.dual_level():
        d = fwAD.make_dual(x.detach(), retrograd.ones_like(x))
        out = fwAD.unpack_dual(F.softmax(d * 3.0, 0).log())
    with torch.autograd.forward_ad.dual_level():
        td = torch.autograd.forward_ad.make_dual(t.detach(), torch.ones_like(t))
        t_out = torch.autograd.forward_ad.unpack_dual(torch.softmax(td * 3.0, 0).log())
    _same(out.primal, t_out.primal, torch, 1e-3, 1e-3)
    _same(out.tangent, t_out.tangent, torch, *_GRAD_TOLS)


def test_logcumsumexp_grad_wide_range():
    vals = numpy.array([[-500.0, 300.0, 700.0, -100.0]], numpy.float16)
    x = retrograd.from_numpy(vals).requires_grad_()
    x64 = retrograd.from_numpy(vals.astype(numpy.float64)).requires_grad_()
    g = numpy.array([[1.0, -1.0, 0.5, 2.0]])
    retrograd.logcumsumexp(x, 1).backward(retrograd.from_numpy(g.astype(numpy.float16)))
    retrograd.logcumsumexp(x64, 1).backward(retrograd.from_numpy(g))
    assert x.grad.dtype is retrograd.float16
    numpy.testing.assert_allclose(x.grad.numpy(), x64.grad.numpy(), atol=1e-3, rtol=1e-3)


def test_float32_and_float64_never_upcast(monkeypatch):
    """The policy is a no-op outside float16: it is never even consulted."""
    from retrograd.ops import _registry
    from retrograd.autograd import node

    def refuse(arrays):
        raise AssertionError("upcast a non-half op")
    monkeypatch.setattr(_registry, "opmath_arrays", refuse)
    monkeypatch.setattr(node, "opmath_arrays", refuse)
    for dtype in (retrograd.float32, retrograd.float64):
        x = retrograd.rand(4, 3, dtype=dtype, requires_grad=True)
        y = F.layer_norm(x.exp() * 2 + 1, (3,)).softmax(1).sum()
        y.backward()
        assert x.grad.dtype is dtype


def test_mixed_float_operands_keep_their_rules():
    """A half tensor with a float32 one promotes to float32 first (nothing to round)."""
    x = _h([1.0, 2.0])
    assert (x * retrograd.tensor([1.0, 3.0])).dtype is retrograd.float32
    assert (x * 3.3).dtype is retrograd.float16
    assert (x * retrograd.tensor([1.0, 3.0], dtype=retrograd.float64)).dtype is retrograd.float64


@pytest.mark.torch
def test_half_input_with_float_parameters(torch):
    """PyTorch's mixed-type norms: float16 input, float32 weights, float16 result; the
    weights' gradients stay float32."""
    rng = numpy.random.default_rng(2)
    vals = rng.standard_normal((4, 4)).astype(numpy.float16)
    w = rng.standard_normal(4).astype(numpy.float32)
    calls = (lambda F, x, w: F.layer_norm(x, (4,), w, w),
             lambda F, x, w: F.group_norm(x.reshape(2, 4, 2), 2, w, w),
             lambda F, x, w: F.batch_norm(x, None, None, w, w, training=True))
    for call in calls:
        x = retrograd.from_numpy(vals).requires_grad_()
        rw = retrograd.from_numpy(w.copy()).requires_grad_()
        t = torch.from_numpy(vals).requires_grad_()
        tw = torch.from_numpy(w.copy()).requires_grad_()
        out, t_out = call(F, x, rw), call(torch.nn.functional, t, tw)
        _same(out, t_out, torch, 1e-3, 1e-3)
        out.pow(2).sum().backward()
        t_out.pow(2).sum().backward()
        _same(rw.grad, tw.grad, torch, *_GRAD_TOLS)
        _same(x.grad, t.grad, torch, *_GRAD_TOLS)


@pytest.fixture
def books():
    memory.stop_accounting()
    yield
    memory._record_memory_history(None)
    memory.stop_accounting()


def test_upcast_copies_are_temporaries(books):
    """The float32 copies live only inside the op: the books keep the float16 result (and
    the float16 tensors the graph saves), and exact mode books the copies as temporaries."""
    n = 256 * 1024
    x = retrograd.rand(n, dtype=retrograd.float16).requires_grad_()
    before = memory.memory_allocated()
    memory._record_memory_history(exact=True)
    y = x.exp()
    s = memory._snapshot()
    memory._record_memory_history(None)
    assert memory.memory_allocated() - before == 2 * n  # y, float16; exp saves y itself
    temps = [e["size"] for e in s["device_traces"][0]
             if e["category"] == "temporary" and e["action"] == "alloc"]
    assert temps and max(temps) > 3 * n  # x in float32 (4n bytes; more than any half copy)
    assert memory.memory_stats()["allocated_bytes.temporary.current"] == 0
    y.sum().backward()
    assert x.grad.dtype is retrograd.float16
