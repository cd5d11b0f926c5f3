"""bfloat16 ops compute in float32 and round once, as PyTorch's CPU kernels do.

The same policy as float16's (``_dtype.OPMATH``, ``ops._registry``; see
test_half_compute.py): every op of the op database runs on bfloat16 samples against
PyTorch, result dtypes exactly, values to bfloat16's tolerances; then the cases where
NumPy's own bfloat16 loops would go wrong (reductions that accumulate in bfloat16).

Tolerances: bfloat16 has an 8-bit significand, so one unit in the last place is 2**-7
relative at most (about 8e-3). Forward results are computed in float32 here and in
PyTorch and rounded once: ``(8e-3, 8e-3)``, the op database's bfloat16 default
(``OpInfo.tols``). Gradients get ``(5e-2, 5e-2)``, about six ulps (float16's get ten):
PyTorch's backward formulas are chains of bfloat16 ops, each rounding, where ours
round once.
"""

import zlib

import numpy
import pytest

import retrograd
import _low_precision as low
from opdb import op_db

_GRAD_TOLS = (5e-2, 5e-2)
_BF16 = retrograd.bfloat16.np


# Where PyTorch's bfloat16 result is itself off: compared elsewhere, or not at all.
_TORCH_DIFFERS = {
    "matrix_exp": "PyTorch's bfloat16 matrix_exp overflows to inf for entries of size 2",
    "linalg.matrix_exp": "PyTorch's bfloat16 matrix_exp overflows to inf for entries of size 2",
    "linalg.matrix_exp.gradgrad": "PyTorch's bfloat16 matrix_exp overflows to inf",
}
# PyTorch's bfloat16 backward rounds each step of these composites; ours rounds once and
# is the closer to float64 (measured on these samples: logcumsumexp's gradient off by 1.6
# in PyTorch, 0.004 here; cdist's matrix-product path 0.13 in PyTorch, 0.02 here). The
# float64 comparison is test_grads_closer_to_float64_than_torch.
_TORCH_GRAD_DIFFERS = {("logcumsumexp", "wide_range"): "PyTorch's bfloat16 backward is imprecise",
                       ("cdist.mm", "batched"): "PyTorch's bfloat16 backward is imprecise"}

# Per-op forward tolerances beyond one ulp, with the reason.
_TOLS = {
    # cdist's matrix-product path: ||x||^2 + ||y||^2 - 2 x.y cancels; PyTorch rounds each
    # term to bfloat16 (0.0196 from float64 on rows_over_25, ours 0.0143)
    "cdist.mm": (3e-2, 3e-2),
}


_REFUSED = object()


def _torch_result(op, sample, to_torch, *leaves):
    """PyTorch's result; for an op PyTorch does not run in BFloat16 (listed), ``_REFUSED``
    where retrograd refuses it alike (the same exception and message), else a skip."""
    t_input, t_args, t_kwargs, t_leaves = to_torch(sample.input, sample.args, sample.kwargs,
                                                   list(leaves))
    try:
        return op.torch_op(t_input, *t_args, **t_kwargs), t_leaves
    except (NotImplementedError, RuntimeError) as e:
        assert op.id in low.TORCH_REFUSES, f"PyTorch refuses {op.id} in BFloat16: {e}"
        try:
            op.op(sample.input, *sample.args, **sample.kwargs)
        except type(e) as ours:
            assert str(ours) == str(e)
            return _REFUSED, None
        pytest.skip(f"PyTorch: {e}")


@pytest.mark.torch
@pytest.mark.parametrize("op, i", low.params("bfloat16", False))
def test_bfloat16_forward_matches_torch(op, i, to_torch, assert_matches_torch):
    if op.id in _TORCH_DIFFERS:
        pytest.skip(_TORCH_DIFFERS[op.id])
    sample = low.samples(op, "bfloat16", False)[i]
    expected, _ = _torch_result(op, sample, to_torch)
    if expected is _REFUSED:
        return
    actual = op.op(sample.input, *sample.args, **sample.kwargs)
    tols = _TOLS.get(op.id, op.tols("bfloat16"))
    try:
        assert_matches_torch(actual, expected, lambda name: tols)
    except AssertionError:
        if not _torch_farther_from_float64(op, sample, actual, expected, to_torch):
            raise


def _torch_farther_from_float64(op, sample, actual, expected, to_torch):
    """Whether PyTorch's bfloat16 result is the one off: of the same dtypes and shapes,
    ours is the closer to PyTorch's op in float64 on the same values. PyTorch's bfloat16 kernels
    differ by machine: with AVX2 its transposed convolutions round partial sums
    (conv_transpose2d's basic sample 0.053 from float64, ours 0.018); with AVX-512 they
    match ours."""
    def wide(x):
        if isinstance(x, (list, tuple)):
            return type(x)(wide(e) for e in x)
        if isinstance(x, retrograd.Tensor) and x.dtype is retrograd.bfloat16:
            return retrograd.from_numpy(x.float().numpy().astype(numpy.float64))
        return x
    t_input, t_args, t_kwargs = to_torch(wide(sample.input), wide(sample.args),
                                         {k: wide(v) for k, v in sample.kwargs.items()})
    exact = low.flat(op.torch_op(t_input, *t_args, **t_kwargs))
    for ours, theirs, want in zip(low.flat(actual), low.flat(expected), exact, strict=True):
        if str(ours.dtype) != str(theirs.dtype) or tuple(ours.shape) != tuple(theirs.shape):
            return False  # (only values may differ)
        want = want.detach().numpy()
        ours_off = numpy.abs(ours.float().numpy() - want).max()
        if ours_off > numpy.abs(theirs.float().numpy() - want).max():
            return False
    return True


@pytest.mark.torch
@pytest.mark.parametrize("op, i", low.params("bfloat16", True, lambda op: op.supports_grad
                                          and op.compare_grad_with_torch))
def test_bfloat16_grad_matches_torch(op, i, torch, to_torch, assert_matches_torch):
    """Backward rules run in float32; gradients come back as bfloat16, as PyTorch's."""
    if op.id in _TORCH_DIFFERS:
        pytest.skip(_TORCH_DIFFERS[op.id])
    sample = low.samples(op, "bfloat16", True)[i]
    if sample.nondifferentiable:
        pytest.skip("not differentiable at this point")
    if (op.id, sample.name) in _TORCH_GRAD_DIFFERS:
        pytest.skip(_TORCH_GRAD_DIFFERS[op.id, sample.name])
    leaves = low.leaves(sample)
    t_outs, t_leaves = _torch_result(op, sample, to_torch, *leaves)
    if t_outs is _REFUSED:
        return
    outs = low.flat(op.op(sample.input, *sample.args, **sample.kwargs))
    t_outs = low.flat(t_outs)
    diff = [k for k, o in enumerate(outs) if isinstance(o, retrograd.Tensor) and o.requires_grad]
    if not diff or not leaves:
        pytest.skip("no differentiable output")
    g = numpy.random.default_rng(zlib.crc32(op.id.encode()))
    cots = [g.standard_normal(outs[k].shape).astype(_BF16) for k in diff]
    grads = retrograd.autograd.grad([outs[k] for k in diff], leaves,
                                    [retrograd.from_numpy(c) for c in cots], allow_unused=True)
    try:
        t_grads = torch.autograd.grad([t_outs[k] for k in diff], t_leaves,
                                      to_torch([retrograd.from_numpy(c) for c in cots]),
                                      allow_unused=True)
    except NotImplementedError as e:
        assert op.id in low.TORCH_REFUSES, f"PyTorch refuses {op.id}'s backward in BFloat16: {e}"
        pytest.skip(f"PyTorch: {e}")
    for x, gr, tx, tg in zip(leaves, grads, t_leaves, t_grads, strict=True):
        gr = gr if gr is not None else retrograd.zeros_like(x)
        tg = tg if tg is not None else torch.zeros_like(tx)
        assert_matches_torch(gr, tg, lambda name: _GRAD_TOLS)


# ---- values where NumPy's bfloat16 loops go wrong ---------------------------------------

@pytest.mark.torch
def test_reductions_accumulate_in_float(torch):
    """NumPy's bfloat16 sum of 10k uniforms stalls at 256; PyTorch's accumulates in float."""
    x = numpy.random.default_rng(0).uniform(0, 1, 10_000).astype(_BF16)
    r = retrograd.from_numpy(x)
    t = torch.from_numpy(x.view(numpy.int16)).view(torch.bfloat16)
    for name in ("sum", "mean", "std", "var", "norm", "logsumexp"):
        args = (0,) if name == "logsumexp" else ()
        actual, expected = getattr(r, name)(*args), getattr(t, name)(*args)
        assert actual.dtype is retrograd.bfloat16
        assert actual.item() == pytest.approx(expected.item(), rel=8e-3), name
    assert r.sum().item() > 4000  # NumPy's own loop gives 256


@pytest.mark.torch
def test_matmul_linear_conv_in_bfloat16(torch, to_torch):
    g = numpy.random.default_rng(1)
    a = retrograd.from_numpy(g.standard_normal((16, 64)).astype(_BF16))
    b = retrograd.from_numpy(g.standard_normal((64, 8)).astype(_BF16))
    w = retrograd.from_numpy(g.standard_normal((4, 2, 3, 3)).astype(_BF16))
    img = retrograd.from_numpy(g.standard_normal((1, 2, 6, 6)).astype(_BF16))
    ta, tb, tw, timg = to_torch(a, b, w, img)
    F = retrograd.nn.functional
    for actual, expected in ((a @ b, ta @ tb), (F.linear(a, b.T), torch.nn.functional.linear(
            ta, tb.T)), (F.conv2d(img, w), torch.nn.functional.conv2d(timg, tw))):
        assert actual.dtype is retrograd.bfloat16
        numpy.testing.assert_allclose(actual.float().numpy(), expected.float().numpy(),
                                      rtol=8e-3, atol=8e-3)


@pytest.mark.torch
def test_module_bfloat16_trains(torch):
    """``Module.bfloat16()``: parameters, output and gradients in bfloat16, as PyTorch's."""
    torch.manual_seed(0)
    t_model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.GELU(),
                                  torch.nn.LayerNorm(8), torch.nn.Linear(8, 2)).bfloat16()
    model = retrograd.nn.Sequential(retrograd.nn.Linear(4, 8), retrograd.nn.GELU(),
                                    retrograd.nn.LayerNorm(8),
                                    retrograd.nn.Linear(8, 2)).bfloat16()
    model.load_state_dict({k: retrograd.from_numpy(v.view(torch.int16).numpy().view(_BF16))
                           for k, v in t_model.state_dict().items()})
    x = numpy.random.default_rng(2).standard_normal((5, 4)).astype(_BF16)
    out = model(retrograd.from_numpy(x))
    t_out = t_model(torch.from_numpy(x.view(numpy.int16)).view(torch.bfloat16))
    assert out.dtype is retrograd.bfloat16
    numpy.testing.assert_allclose(out.detach().float().numpy(), t_out.detach().float().numpy(),
                                  rtol=2e-2, atol=2e-2)
    out.sum().backward()
    t_out.sum().backward()
    for p, tp in zip(model.parameters(), t_model.parameters(), strict=True):
        assert p.grad.dtype is retrograd.bfloat16
        numpy.testing.assert_allclose(p.grad.float().numpy(), tp.grad.float().numpy(),
                                      rtol=5e-2, atol=5e-2)


@pytest.mark.parametrize("oid, i", [("logcumsumexp", 4), ("cdist.mm", 2)])
def test_grads_closer_to_float64_than_torch(oid, i):
    """The entries of _TORCH_GRAD_DIFFERS: rounded once, our gradients stay within a few
    bfloat16 ulps of float64's on the same values."""
    op = next(o for o in op_db if o.id == oid)
    sample = low.samples(op, "bfloat16", True)[i]
    assert (oid, sample.name) in _TORCH_GRAD_DIFFERS
    leaves = low.leaves(sample)
    wide = {id(x): retrograd.from_numpy(x.detach().float().numpy().astype(numpy.float64))
            .requires_grad_() for x in leaves}

    def widened(x):
        if isinstance(x, (list, tuple)):
            return type(x)(widened(e) for e in x)
        return wide.get(id(x), x)
    out = op.op(sample.input, *sample.args, **sample.kwargs)
    out64 = op.op(widened(sample.input), *widened(sample.args), **sample.kwargs)
    cot = numpy.random.default_rng(0).standard_normal(out.shape).astype(_BF16)
    grads = retrograd.autograd.grad(out, leaves, retrograd.from_numpy(cot))
    grads64 = retrograd.autograd.grad(out64, list(wide.values()),
                                      retrograd.from_numpy(cot.astype(numpy.float64)))
    for g, g64 in zip(grads, grads64, strict=True):
        assert g.dtype is retrograd.bfloat16
        numpy.testing.assert_allclose(g.float().numpy(), g64.numpy(), atol=3e-2, rtol=3e-2)


@pytest.mark.torch
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_broadcast_gradients_and_losses_accumulate_in_float(torch, to_torch, dtype):
    """The gradient of a broadcast operand is a sum over many elements (``sum_to``), and
    mse_loss's mean is one: NumPy's half and ml_dtypes' bfloat16 sums stall (at 2048 and
    256 for these uniforms); PyTorch's accumulate in float."""
    g = numpy.random.default_rng(3)
    low = getattr(retrograd, dtype).np
    x = retrograd.from_numpy(g.uniform(0, 1, (10_000, 2)).astype(low))
    b = retrograd.from_numpy(numpy.zeros(2, low)).requires_grad_()
    y = retrograd.from_numpy(g.uniform(0, 1, (10_000, 2)).astype(low)).requires_grad_()
    tx, tb, ty = to_torch(x, b, y)
    ((x + b) * x).sum().backward()
    ((tx + tb) * tx).sum().backward()
    loss = retrograd.nn.functional.mse_loss(y, x, reduction="sum")
    t_loss = torch.nn.functional.mse_loss(ty, tx, reduction="sum")
    for actual, expected in ((b.grad, tb.grad), (loss, t_loss)):
        assert str(actual.dtype) == str(expected.dtype)
        numpy.testing.assert_allclose(actual.detach().float().numpy(),
                                      expected.detach().float().numpy(), rtol=8e-3)


@pytest.mark.torch
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_exact_ops_sum_their_gradients_in_float(torch, to_torch, dtype):
    """Ops exact in any dtype (repeat, masked_fill, fill_) still sum in their backward: a
    fill value's gradient is the sum of the gradients it reached, in float as PyTorch's."""
    g = numpy.random.default_rng(4)
    low = getattr(retrograd, dtype).np
    x = retrograd.from_numpy(g.uniform(0, 1, (2, 3)).astype(low)).requires_grad_()
    v = retrograd.from_numpy(numpy.array(1.0, low)).requires_grad_()
    w = retrograd.from_numpy(g.uniform(0, 1, (5_000, 3)).astype(low))
    mask = retrograd.from_numpy(g.random((5_000, 3)) < 0.9)
    tx, tv, tw, tmask = to_torch(x, v, w, mask)
    ((x.repeat(2_500, 1) * w).sum() + (w.masked_fill(mask, v) * w).sum()
     + (w.clone().fill_(v) * w).sum()).backward()
    ((tx.repeat(2_500, 1) * tw).sum() + (tw.masked_fill(tmask, tv) * tw).sum()
     + (tw.clone().fill_(tv) * tw).sum()).backward()
    for actual, expected in ((x.grad, tx.grad), (v.grad, tv.grad)):
        assert str(actual.dtype) == str(expected.dtype)
        numpy.testing.assert_allclose(actual.float().numpy(), expected.float().numpy(),
                                      rtol=8e-3)


def _second_order(T, make, x, dtype):
    """``make``'s gradient with create_graph, and the gradient of its square's sum."""
    t = T.tensor(x).to(getattr(T, dtype)).requires_grad_()
    (g,) = T.autograd.grad(make(T, t).sum(), t, create_graph=True)
    (gg,) = T.autograd.grad((g * g).sum(), t)
    return g, gg


@pytest.mark.torch
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("name, make, shape", [
    # std's rule rounds its steps to the low dtype (casts the facade lacked as methods)
    ("std", lambda T, t: T.std(t, dim=1), (3, 4)),
    ("std_all", lambda T, t: T.std(t) * t, (3, 4)),
    # affine_grid's base grid is an attribute in theta's dtype, its rule computes in float32
    ("affine_grid", lambda T, t: T.nn.functional.affine_grid(t, (2, 1, 3, 4), False) ** 2,
     (2, 2, 3)),
])
def test_second_order_in_half_precision_as_torch(torch, name, make, shape, dtype):
    x = numpy.random.default_rng(3).standard_normal(shape).astype(numpy.float32)
    ours, theirs = _second_order(retrograd, make, x, dtype), _second_order(torch, make, x, dtype)
    for a, b in zip(ours, theirs, strict=True):
        assert str(a.dtype) == str(b.dtype) == f"torch.{dtype}"
        numpy.testing.assert_allclose(a.detach().float().numpy(), b.detach().float().numpy(),
                                      rtol=_GRAD_TOLS[0], atol=_GRAD_TOLS[1])


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_lu_solve_second_order_in_half_precision(dtype):
    """PyTorch refuses lu_solve in half precision; ours computes it in float32 (its rule's
    permutation matrix, made in LU's dtype, joins the float32 values): against float64."""
    rng = numpy.random.default_rng(0)
    a = rng.standard_normal((3, 3)) + 3 * numpy.eye(3)
    b = rng.standard_normal((3, 2))

    def run(d):
        LU, piv = retrograd.linalg.lu_factor(retrograd.tensor(a, dtype=d))
        B = retrograd.tensor(b, dtype=d, requires_grad=True)
        (g,) = retrograd.autograd.grad(retrograd.linalg.lu_solve(LU, piv, B).pow(2).sum(), B,
                                       create_graph=True)
        (gg,) = retrograd.autograd.grad(g.pow(2).sum(), B)
        return g, gg

    for half, wide in zip(run(getattr(retrograd, dtype)), run(retrograd.float64), strict=True):
        assert half.dtype == getattr(retrograd, dtype)
        numpy.testing.assert_allclose(half.detach().double().numpy(), wide.detach().numpy(),
                                      rtol=_GRAD_TOLS[0], atol=_GRAD_TOLS[1])


_SCALAR_OPS = {
    "add": lambda T, x, s: T.add(x, s), "sub": lambda T, x, s: T.sub(x, s),
    "radd": lambda T, x, s: s + x, "rsub": lambda T, x, s: s - x,
    "mul": lambda T, x, s: T.mul(x, s), "rmul": lambda T, x, s: s * x,
    "div": lambda T, x, s: T.div(x, s), "rdiv": lambda T, x, s: s / x,
    "div_trunc": lambda T, x, s: T.div(x, s, rounding_mode="trunc"),
    "div_floor": lambda T, x, s: T.div(x, s, rounding_mode="floor"),
    "remainder": lambda T, x, s: T.remainder(x, s), "fmod": lambda T, x, s: T.fmod(x, s),
    "mul_": lambda T, x, s: x.clone().mul_(s), "div_": lambda T, x, s: x.clone().div_(s),
    "add_": lambda T, x, s: x.clone().add_(s),
}


@pytest.mark.torch
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("scalar", ["number", "float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("name", list(_SCALAR_OPS))
def test_half_tensor_with_a_scalar_as_torch(torch, dtype, scalar, name):
    """A half tensor with a number or a 0-d tensor: PyTorch casts it to the half dtype
    before computing in float32, except the second operand of mul and div (and div's
    rounding modes), which their kernels read at its own value: bit for bit."""
    rng = numpy.random.default_rng(zlib.crc32(f"{dtype}/{scalar}/{name}".encode()))
    xs = rng.uniform(-4, 4, 64)
    if name.startswith("div") or name in ("remainder", "fmod", "rdiv"):
        xs = numpy.where(numpy.abs(xs) < 0.1, 0.5, xs)
    for v in rng.uniform(-4, 4, 12):
        v = float(v) if abs(v) > 0.1 else 0.75
        outs = []
        for T in (torch, retrograd):
            x = T.tensor(xs).to(getattr(T, dtype))
            s = v if scalar == "number" else T.tensor(v, dtype=getattr(T, scalar))
            outs.append(_SCALAR_OPS[name](T, x, s))
        ours, theirs = outs
        assert str(ours.dtype) == str(theirs.dtype)
        numpy.testing.assert_array_equal(ours.float().numpy(), theirs.float().numpy(),
                                         err_msg=f"{name} with {v!r}")
