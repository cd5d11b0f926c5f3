"""Tests generated from the op database (the `opdb` package beside this file).

For every entry and sample:

- forward values and result dtypes against PyTorch, for each of the entry's dtypes;
- gradients and grad_fn names against PyTorch (float64, random cotangents);
- float64 finite-difference ``gradcheck``, and ``gradgradcheck`` for second order;
- forward mode: each op's jvp against finite differences, and against its vjp
  (``<J v, u> == <v, J^T u>``);
- the entry's error inputs raise PyTorch's exception type and message.

Samples are rebuilt inside each test from a seed derived from the test's id, so
collection and execution see the same values.
"""

import zlib

import numpy
import pytest

import retrograd
from retrograd.autograd import forward_ad as fwAD
from retrograd.autograd import gradcheck, gradgradcheck
from opdb import op_db, reseed

_GRAD_DTYPE = "float64"


def _samples(op, dtype, requires_grad):
    reseed(zlib.crc32(f"{op.id}/{dtype}/{requires_grad}".encode()))
    return list(op.sample_inputs(dtype, requires_grad))


def _describe(sample):
    return sample.name or repr(sample).replace(" ", "")


def _params(dtypes, requires_grad, keep=lambda op: True):
    params = []
    for op in op_db:
        if not keep(op):
            continue
        for dtype in dtypes(op):
            for i, s in enumerate(_samples(op, dtype, requires_grad)):
                params.append(pytest.param(op, dtype, i,
                                           id=f"{op.id}-{dtype}-{i}-{_describe(s)}"))
    return params


def _sample(op, dtype, i, requires_grad):
    return _samples(op, dtype, requires_grad)[i]


def _map(obj, fn):
    """Apply ``fn`` to every Tensor in ``obj`` (through lists, tuples and dicts)."""
    if isinstance(obj, retrograd.Tensor):
        return fn(obj)
    if isinstance(obj, list):
        return [_map(e, fn) for e in obj]
    if isinstance(obj, tuple):
        return tuple(_map(e, fn) for e in obj)
    if isinstance(obj, dict):
        return {k: _map(v, fn) for k, v in obj.items()}
    return obj


def _call(fn, sample):
    return fn(sample.input, *sample.args, **sample.kwargs)


def _tensors(sample):
    """The sample's distinct tensors, in call order."""
    seen = {}
    _map((sample.input, sample.args, sample.kwargs), lambda t: seen.setdefault(id(t), t))
    return list(seen.values())


def _flat(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _differentiable(outs):
    return [k for k, o in enumerate(outs)
            if isinstance(o, retrograd.Tensor) and o.requires_grad]


_forward_params = _params(lambda op: op.dtypes, False, lambda op: not op.skip_torch)
_grad_params = _params(lambda op: (_GRAD_DTYPE,), True, lambda op: op.supports_grad)


@pytest.mark.torch
@pytest.mark.parametrize("op, dtype, i", _forward_params)
def test_forward_matches_torch(op, dtype, i, to_torch, assert_matches_torch):
    sample = _sample(op, dtype, i, False)
    t_sample = to_torch(sample.input, sample.args, sample.kwargs)
    expected = op.torch_op(t_sample[0], *t_sample[1], **t_sample[2])
    actual = _call(op.op, sample)
    assert_matches_torch(actual, expected, op.tols)


_NO_DIFFERENTIABLE_OUTPUT = ("no differentiable output: the op returns an integer or boolean "
                             "tensor here (.long(), .bool(), to(int64), ...), which has no "
                             "gradient")


@pytest.mark.torch
@pytest.mark.parametrize("op, dtype, i", [p for p in _grad_params
                                          if p.values[0].compare_grad_with_torch
                                          and not p.values[0].skip_torch])
def test_grad_matches_torch(op, dtype, i, torch, to_torch, assert_matches_torch):
    sample = _sample(op, dtype, i, True)
    leaves = [t for t in _tensors(sample) if t.requires_grad]
    if not leaves:
        pytest.skip("no input requires grad: an integer tensor (clamp of ints), or float "
                    "arguments that are not differentiable (pinv's cutoff)")
    t_input, t_args, t_kwargs, t_leaves = to_torch(sample.input, sample.args, sample.kwargs,
                                                   leaves)
    outs = _flat(_call(op.op, sample))
    t_outs = _flat(op.torch_op(t_input, *t_args, **t_kwargs))
    assert len(outs) == len(t_outs)
    diff = _differentiable(outs)
    assert diff == [k for k, o in enumerate(t_outs)
                    if isinstance(o, torch.Tensor) and o.requires_grad]
    for o, t in zip(outs, t_outs, strict=True):
        if isinstance(t, torch.Tensor):
            name = o.grad_fn.name() if o.grad_fn is not None else None
            assert name == (t.grad_fn.name() if t.grad_fn is not None else None)
    if not diff:
        pytest.skip(_NO_DIFFERENTIABLE_OUTPUT)
    g = numpy.random.default_rng(zlib.crc32(op.id.encode()))
    cots = [g.standard_normal(outs[k].shape).astype(outs[k].dtype.name) for k in diff]
    grads = retrograd.autograd.grad([outs[k] for k in diff], leaves,
                                    [retrograd.from_numpy(c) for c in cots], allow_unused=True)
    t_grads = torch.autograd.grad([t_outs[k] for k in diff], t_leaves,
                                  [torch.from_numpy(c) for c in cots], allow_unused=True)
    for x, gr, tx, tg in zip(leaves, grads, t_leaves, t_grads, strict=True):
        gr = gr if gr is not None else retrograd.zeros_like(x)
        tg = tg if tg is not None else torch.zeros_like(tx)
        assert_matches_torch(gr, tg, op.tols)


def _grad_fn_of(op, sample):
    """``sample`` as a function of its float64 tensors that require grad (the others are
    held fixed: finite differences in lower precision are meaningless)."""
    diff = [t for t in _tensors(sample) if t.requires_grad and t.dtype is retrograd.float64]
    fixed = {id(t): t.detach() for t in _tensors(sample)
             if t.requires_grad and t.dtype is not retrograd.float64}

    def fn(*args):
        values = dict(fixed)
        values.update((id(t), a) for t, a in zip(diff, args, strict=True))
        sub = lambda t: values.get(id(t), t)  # noqa: E731
        return _call(op.op, type(sample)(_map(sample.input, sub), _map(sample.args, sub),
                                         _map(sample.kwargs, sub)))
    return fn, diff


def _grad_sample(op, dtype, i):
    sample = _sample(op, dtype, i, True)
    if sample.nondifferentiable:
        pytest.skip("not differentiable at this sample (ties, NaN, a kink or jump): finite "
                    "differences cannot check it; test_grad_matches_torch compares its "
                    "gradient with PyTorch's")
    fn, diff = _grad_fn_of(op, sample)
    if not diff:
        pytest.skip("no float64 input requires grad (an integer tensor, or only "
                    "non-differentiable arguments): finite-difference checks need one")
    return fn, diff


@pytest.mark.parametrize("op, dtype, i", _grad_params)
def test_gradcheck(op, dtype, i):
    fn, diff = _grad_sample(op, dtype, i)
    assert gradcheck(fn, diff, atol=op.grad_atol, rtol=op.grad_rtol)


@pytest.mark.parametrize("op, dtype, i", [p for p in _grad_params
                                          if p.values[0].supports_gradgrad])
def test_gradgradcheck(op, dtype, i):
    fn, diff = _grad_sample(op, dtype, i)
    assert gradgradcheck(fn, diff, atol=op.grad_atol, rtol=op.grad_rtol)


def _error_params():
    params = []
    for op in op_db:
        if op.error_inputs is None:
            continue
        reseed(zlib.crc32(f"{op.id}/errors".encode()))
        for k, e in enumerate(op.error_inputs()):
            params.append(pytest.param(op, k, id=f"{op.id}-{k}-{e.name or _describe(e.sample)}"))
    return params


@pytest.mark.torch
@pytest.mark.parametrize("op, k", _error_params())
def test_error_matches_torch(op, k, to_torch):
    reseed(zlib.crc32(f"{op.id}/errors".encode()))
    err = list(op.error_inputs())[k]
    s = err.sample
    t_input, t_args, t_kwargs = to_torch(s.input, s.args, s.kwargs)
    with pytest.raises(err.error_type) as expected:
        op.torch_op(t_input, *t_args, **t_kwargs)
    with pytest.raises(err.error_type) as actual:
        _call(op.op, s)
    assert str(actual.value) == str(expected.value)


# ---- forward mode: each op's jvp against finite differences and against its vjp ----------

def _dual_outputs(fn, diff, tangents):
    with fwAD.dual_level():
        duals = [fwAD.make_dual(x.detach(), t) for x, t in zip(diff, tangents, strict=True)]
        outs = _flat(fn(*duals))
        return [(o, fwAD.unpack_dual(o).tangent) if isinstance(o, retrograd.Tensor) else
                (o, None) for o in outs]


def _fd_tangent(fn, diff, tangents, eps=1e-6):
    """(f(x + eps v) - f(x - eps v)) / 2 eps for every float output."""
    with retrograd.no_grad():
        plus = _flat(fn(*[x.detach() + eps * t for x, t in zip(diff, tangents, strict=True)]))
        minus = _flat(fn(*[x.detach() - eps * t for x, t in zip(diff, tangents, strict=True)]))
    return [(p._data - m._data) / (2 * eps)
            if isinstance(p, retrograd.Tensor) and p._data.dtype.kind == "f" else None
            for p, m in zip(plus, minus, strict=True)]


# Ops whose entries declare no jvp: each with the reason (none today; an op module that
# cannot declare one yet lists its op here rather than failing the forward-mode tests).
_NO_JVP = {}


def _fw_sample(op, dtype, i):
    if op.name in _NO_JVP:
        pytest.skip(_NO_JVP[op.name])
    fn, diff = _grad_sample(op, dtype, i)
    g = numpy.random.default_rng(zlib.crc32(f"{op.id}/{i}/fw".encode()))
    tangents = [retrograd.from_numpy(g.standard_normal(x.shape)) for x in diff]
    return fn, diff, tangents, g


@pytest.mark.parametrize("op, dtype, i", _grad_params)
def test_jvp_matches_finite_differences(op, dtype, i):
    fn, diff, tangents, _ = _fw_sample(op, dtype, i)
    res = _dual_outputs(fn, diff, tangents)
    expected = _fd_tangent(fn, diff, tangents)
    for (o, t), e in zip(res, expected, strict=True):
        if e is None or not o.requires_grad and t is None:
            continue
        actual = numpy.zeros_like(e) if t is None else t._data
        assert actual.shape == e.shape
        finite = numpy.isfinite(e)  # -inf results (logsumexp of nothing): no difference
        numpy.testing.assert_allclose(actual[finite], e[finite], atol=op.grad_atol * 10,
                                      rtol=op.grad_rtol)


@pytest.mark.parametrize("op, dtype, i", _grad_params)
def test_jvp_matches_vjp(op, dtype, i):
    """<J v, u> == <v, J^T u>: forward and reverse rules describe the same Jacobian."""
    fn, diff, tangents, g = _fw_sample(op, dtype, i)
    res = _dual_outputs(fn, diff, tangents)
    outs = _flat(fn(*diff))
    keep = [k for k in _differentiable(outs)]
    if not keep:
        pytest.skip(_NO_DIFFERENTIABLE_OUTPUT)
    us = [g.standard_normal(outs[k].shape) for k in keep]
    vjps = retrograd.autograd.grad([outs[k] for k in keep], diff,
                                   [retrograd.from_numpy(u) for u in us], allow_unused=True)
    lhs = sum(float(numpy.vdot(res[k][1]._data, u)) for k, u in zip(keep, us, strict=True)
              if res[k][1] is not None)
    rhs = sum(float(numpy.vdot(t._data, w._data)) for t, w in zip(tangents, vjps, strict=True)
              if w is not None)
    assert lhs == pytest.approx(rhs, rel=1e-7, abs=1e-9)


def _tangent_pairing(fn, xs, v0s, ws):
    """<w, J(x) v(x)> with the tangent itself depending on x (v = v0 + x / 2): what
    reverse-over-forward (``grad`` of a ``jvp``) differentiates."""
    with fwAD.dual_level():
        duals = [fwAD.make_dual(x, v + x / 2) for x, v in zip(xs, v0s, strict=True)]
        outs = _flat(fn(*duals))
        total = 0
        for o, w in zip(outs, ws, strict=True):
            t = fwAD.unpack_dual(o).tangent if w is not None else None
            if t is not None:
                total = total + (t * w).sum()
    return total


@pytest.mark.parametrize("op, dtype, i", [p for p in _grad_params
                                          if p.values[0].supports_gradgrad])
def test_reverse_over_forward(op, dtype, i):
    """The gradient of a tangent (primal and tangent both depending on x) against the
    directional finite difference of that tangent."""
    fn, diff, v0s, g = _fw_sample(op, dtype, i)
    outs = _flat(fn(*diff))
    ws = [retrograd.from_numpy(g.standard_normal(o.shape))
          if isinstance(o, retrograd.Tensor) and o.is_floating_point() else None for o in outs]
    xs = [x.detach().requires_grad_() for x in diff]
    h = _tangent_pairing(fn, xs, v0s, ws)
    if not isinstance(h, retrograd.Tensor) or not h.requires_grad:
        pytest.skip("the tangents do not depend on the inputs (floor, round, sign, integer "
                    "division and casts to integers have zero tangents): no second-order "
                    "term to check")
    grads = retrograd.autograd.grad(h, xs, allow_unused=True)
    ds = [g.standard_normal(x.shape) for x in diff]
    eps = 1e-6
    with retrograd.no_grad():
        plus, minus = (_tangent_pairing(fn, [x.detach() + s * eps * retrograd.from_numpy(d)
                                             for x, d in zip(diff, ds, strict=True)], v0s, ws)
                       for s in (1, -1))
    fd = (float(plus) - float(minus)) / (2 * eps)
    actual = sum(float(numpy.vdot(gr._data, d)) for gr, d in zip(grads, ds, strict=True)
                 if gr is not None)
    assert actual == pytest.approx(fd, rel=op.grad_rtol * 10, abs=op.grad_atol * 100)


@pytest.mark.parametrize("op, dtype, i", [p for p in _grad_params
                                          if p.values[0].supports_gradgrad])
def test_create_graph_gradient_matches_plain(op, dtype, i):
    """Rules run on arrays in a plain backward and on Tensors under create_graph=True
    (different code paths): both must give the same first-order gradients."""
    fn, diff = _grad_sample(op, dtype, i)
    outs = _flat(fn(*diff))
    keep = _differentiable(outs)
    if not keep:
        pytest.skip(_NO_DIFFERENTIABLE_OUTPUT)
    g = numpy.random.default_rng(zlib.crc32(f"{op.id}/{i}/cg".encode()))
    cots = [retrograd.from_numpy(g.standard_normal(outs[k].shape)) for k in keep]
    plain = retrograd.autograd.grad([outs[k] for k in keep], diff, cots, allow_unused=True,
                                    retain_graph=True)
    graphed = retrograd.autograd.grad([outs[k] for k in keep], diff, cots, allow_unused=True,
                                      create_graph=True)
    for a, b in zip(plain, graphed, strict=True):
        assert (a is None) == (b is None)
        if a is not None:
            numpy.testing.assert_allclose(b._data, a._data, rtol=1e-10, atol=1e-12)
