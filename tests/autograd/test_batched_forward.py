"""Vectorized forward mode: tangents with a leading batch dim (``forward_ad.state.batch``,
as ``functional.jacobian(vectorize=True, strategy="forward-mode")`` sets it up).

Every op-database entry with a differentiable float64 sample: the batched tangents of
three directions equal three separate forward-mode passes, and while the batched pass
runs, the one-direction paths raise: each op runs its jvp once for all directions.
"""

import contextlib
import zlib

import numpy
import pytest

import retrograd
from _compare import tensors_in
from retrograd.autograd import forward_ad as fwAD
from retrograd.autograd import functional as F
from retrograd.autograd._batched_xp import BatchedNumpy
from retrograd.ops.joining import _ListNode
from opdb import op_db, reseed

_BATCH = 3


def _sub(obj, values):
    if isinstance(obj, retrograd.Tensor):
        return values.get(id(obj), obj)
    if isinstance(obj, list):
        return [_sub(e, values) for e in obj]
    if isinstance(obj, tuple):
        return tuple(_sub(e, values) for e in obj)
    if isinstance(obj, dict):
        return {k: _sub(v, values) for k, v in obj.items()}
    return obj


def _flat(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


@contextlib.contextmanager
def _one_direction_forbidden(monkeypatch):
    """The one-direction jvp paths raise: the batched pass must not reach them."""
    tangents, transpose = fwAD._tangents, fwAD._transpose

    def batched_tangents(*args, **kwargs):
        if len(args) < 9 and kwargs.get("bxp") is None:
            raise AssertionError(f"{args[0].name} ran its jvp for one direction")
        return tangents(*args, **kwargs)

    def batched_transpose(op, values, ts, attrs, outs, batch=None):
        if batch is None:
            raise AssertionError(f"{op.name} ran its transpose jvp for one direction")
        return transpose(op, values, ts, attrs, outs, batch)

    with monkeypatch.context() as m:
        m.setattr(fwAD, "_tangents", batched_tangents)
        m.setattr(fwAD, "_transpose", batched_transpose)
        for cls in _ListNode.__subclasses__():
            if cls._jvp is not None:
                m.setattr(cls, "_jvp", staticmethod(_batched_only(cls.__name__, cls._jvp)))
        yield


def _batched_only(name, jvp):
    def run(xp, *args):
        if not isinstance(xp, BatchedNumpy):
            raise AssertionError(f"{name} ran its jvp for one direction")
        return jvp(xp, *args)
    return run


def _batched_tangents(fn, diff, vs):
    """``fn``'s output tangents for a batch of directions ``vs`` (one (batch, *x.shape)
    array per input), the way ``functional._jacfwd`` pushes them."""
    with retrograd.no_grad(), fwAD.dual_level():
        fwAD.state.batch = _BATCH
        try:
            duals = []
            for x, v in zip(diff, vs, strict=True):
                d = x.detach().view_as(x)
                fwAD.set_tangent(d, retrograd.from_numpy(v))
                duals.append(d)
            outs = _flat(fn(*duals))
            return [fwAD.tangent_of(o) if isinstance(o, retrograd.Tensor) else None
                    for o in outs]
        finally:
            fwAD.state.batch = None


def _row_tangents(fn, diff, vs, b):
    with retrograd.no_grad(), fwAD.dual_level():
        duals = [fwAD.make_dual(x.detach(), retrograd.from_numpy(numpy.array(v[b])))
                 for x, v in zip(diff, vs, strict=True)]
        return [fwAD.unpack_dual(o).tangent if isinstance(o, retrograd.Tensor) else None
                for o in _flat(fn(*duals))]


def _op_params():
    return [pytest.param(op, id=op.id) for op in op_db if op.supports_grad]


@pytest.mark.parametrize("op", _op_params())
def test_op_db_batched_forward_matches_rows(op, monkeypatch):
    reseed(zlib.crc32(f"{op.id}/float64/True".encode()))
    checked = 0
    for i, s in enumerate(op.sample_inputs("float64", True)):
        every = tensors_in((s.input, s.args, s.kwargs)).values()
        diff = [t for t in every if t.requires_grad and t.dtype is retrograd.float64]
        if not diff:
            continue

        def fn(*args, s=s, diff=diff):
            values = {id(t): a for t, a in zip(diff, args, strict=True)}
            return op.op(_sub(s.input, values), *_sub(s.args, values), **_sub(s.kwargs, values))
        g = numpy.random.default_rng(i)
        vs = [g.standard_normal((_BATCH,) + tuple(x.shape)) for x in diff]
        rows = [_row_tangents(fn, diff, vs, b) for b in range(_BATCH)]
        with _one_direction_forbidden(monkeypatch):
            got = _batched_tangents(fn, diff, vs)
        for k, t in enumerate(got):
            if rows[0][k] is None:
                assert t is None or not t.numpy().any()
                continue
            expected = numpy.stack([r[k].numpy() for r in rows])
            assert t is not None and t.dtype is rows[0][k].dtype
            assert tuple(t.shape) == expected.shape
            numpy.testing.assert_allclose(t.numpy(), expected, rtol=1e-7, atol=1e-10)
            checked += 1
    if not checked:
        pytest.skip("no differentiable float64 sample: the op's samples are integer, boolean or "
                    "at non-differentiable points, so forward mode has no tangent to batch")


def test_jacobian_forward_mode_runs_each_op_once(monkeypatch):
    x = retrograd.from_numpy(numpy.random.default_rng(0).standard_normal((4, 3)))
    f = lambda x: retrograd.nn.functional.softmax(
        retrograd.cat([x.sin(), x.prod(1, keepdim=True)], 1), 0)  # noqa: E731
    with _one_direction_forbidden(monkeypatch):
        jac = F.jacobian(f, x, vectorize=True, strategy="forward-mode")
    expected = F.jacobian(f, x)
    numpy.testing.assert_allclose(jac.numpy(), expected.numpy(), rtol=1e-10, atol=1e-12)


def test_in_place_write_into_a_view_runs_batched():
    def f(x):
        y = x * 1
        y[1:].mul_(x[:-1])
        return y
    x = retrograd.from_numpy(numpy.arange(1.0, 5.0))
    jac = F.jacobian(f, x, vectorize=True, strategy="forward-mode")
    numpy.testing.assert_allclose(jac.numpy(), F.jacobian(f, x).numpy())


class _Twice(retrograd.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 2

    @staticmethod
    def jvp(ctx, t):
        return t * 2


def test_custom_function_under_batched_forward_mode_runs_its_jvp_per_direction():
    """User code is not batchable: its jvp runs once per direction, as PyTorch's vmap
    fallback does for such Functions (every op around it still runs batched)."""
    x = retrograd.ones(3, dtype=retrograd.float64)
    jac = F.jacobian(lambda v: _Twice.apply(v.sin()), x, vectorize=True,
                     strategy="forward-mode")
    numpy.testing.assert_allclose(jac.numpy(), numpy.diag(2 * numpy.cos(numpy.ones(3))))
    with fwAD.dual_level():  # one direction: the Function's jvp runs
        y = _Twice.apply(fwAD.make_dual(x, retrograd.ones(3, dtype=retrograd.float64)))
        assert fwAD.unpack_dual(y).tangent.tolist() == [2.0, 2.0, 2.0]


def _compare_jacobians(T_net, R_net, x):
    torch = pytest.importorskip("torch")
    expected = torch.autograd.functional.jacobian(T_net, torch.from_numpy(x), vectorize=True,
                                                  strategy="forward-mode")
    got = F.jacobian(R_net, retrograd.from_numpy(x), vectorize=True, strategy="forward-mode")
    assert tuple(got.shape) == tuple(expected.shape)
    numpy.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-9, atol=1e-12)


@pytest.mark.torch
def test_mlp_jacobian_matches_torch():
    torch = pytest.importorskip("torch")
    g = numpy.random.default_rng(1)
    ws = [g.standard_normal(s) / 3 for s in ((7, 5), (7,), (4, 7), (4,))]

    def net(T, params):
        def f(x):
            h = T.tanh(T.nn.functional.linear(x, params[0], params[1]))
            return T.nn.functional.log_softmax(T.nn.functional.linear(h, params[2], params[3]),
                                               -1)
        return f
    _compare_jacobians(net(torch, [torch.from_numpy(w) for w in ws]),
                       net(retrograd, [retrograd.from_numpy(w) for w in ws]),
                       g.standard_normal((2, 5)))


@pytest.mark.torch
def test_conv_net_jacobian_matches_torch():
    torch = pytest.importorskip("torch")
    g = numpy.random.default_rng(2)
    ws = [g.standard_normal(s) / 3 for s in ((3, 2, 3, 3), (3,), (5, 12), (5,))]

    def net(T, p):
        nnf = T.nn.functional

        def f(x):
            h = nnf.avg_pool2d(nnf.relu(nnf.conv2d(x, p[0], p[1], padding=1)), 2)
            return nnf.linear(h.reshape(h.shape[0], -1), p[2], p[3])
        return f
    _compare_jacobians(net(torch, [torch.from_numpy(w) for w in ws]),
                       net(retrograd, [retrograd.from_numpy(w) for w in ws]),
                       g.standard_normal((1, 2, 4, 4)))
