"""Batched reverse mode: ``autograd.grad(..., is_grads_batched=True)`` and
``functional.jacobian/hessian(vectorize=True)``.

Every op-database entry with a differentiable sample: the batched gradients equal
the per-cotangent ones stacked, and no node runs its ordinary (one cotangent)
``apply`` during the batched walk: each node runs once on the whole batch.
"""

import contextlib
import zlib

import numpy
import pytest

import retrograd
from _compare import tensors_in
from retrograd.autograd import functional as F
from retrograd.autograd.node import OpNode
from retrograd.ops._views import AsStridedBackward0, CopySlices
from retrograd.ops.joining import _ListNode
from opdb import op_db, reseed

_BATCH = 3


@contextlib.contextmanager
def _no_per_row_apply(monkeypatch):
    """Any node's one-cotangent ``apply`` raises: the batched walk must not call it."""
    def forbidden(self, grads, create_graph):
        raise AssertionError(f"{self.name()} ran its per-cotangent apply")
    with monkeypatch.context() as m:
        for cls in (OpNode, _ListNode, CopySlices, AsStridedBackward0):
            m.setattr(cls, "apply", forbidden)
        yield


def _check_batched(outs, leaves, monkeypatch, seed=0):
    """Batched gradients of ``outs`` (the differentiable ones) against stacked rows."""
    outs = list(outs) if isinstance(outs, (tuple, list)) else [outs]
    diff = [o for o in outs if isinstance(o, retrograd.Tensor) and o.requires_grad]
    if not diff:
        return False
    g = numpy.random.default_rng(seed)
    cots = [g.standard_normal((_BATCH,) + tuple(o.shape)).astype(o.dtype.name) for o in diff]
    rows = [retrograd.autograd.grad(diff, leaves,
                                    [retrograd.from_numpy(numpy.array(c[b])) for c in cots],
                                    retain_graph=True, allow_unused=True)
            for b in range(_BATCH)]
    with _no_per_row_apply(monkeypatch):
        got = retrograd.autograd.grad(diff, leaves, [retrograd.from_numpy(c) for c in cots],
                                      is_grads_batched=True, retain_graph=True,
                                      allow_unused=True)
    for k, x in enumerate(leaves):
        if rows[0][k] is None:
            assert got[k] is None or not got[k].numpy().any()
            continue
        expected = numpy.stack([r[k].numpy() for r in rows])
        assert got[k] is not None and got[k].dtype is x.dtype
        assert tuple(got[k].shape) == expected.shape
        numpy.testing.assert_allclose(got[k].numpy(), expected, rtol=1e-7, atol=1e-10)
    return True


def _op_params():
    return [pytest.param(op, id=op.id) for op in op_db if op.supports_grad]


@pytest.mark.parametrize("op", _op_params())
def test_op_db_batched_matches_rows(op, monkeypatch):
    reseed(zlib.crc32(f"{op.id}/float64/True".encode()))
    checked = 0
    for i, s in enumerate(op.sample_inputs("float64", True)):
        leaves = [t for t in tensors_in((s.input, s.args, s.kwargs)).values()
                  if t.requires_grad]
        if leaves:
            checked += _check_batched(op.op(s.input, *s.args, **s.kwargs), leaves,
                                      monkeypatch, seed=i)
    if not checked:
        pytest.skip("no differentiable sample: no sample has an input that requires grad (an "
                    "integer or boolean op, or a cast), so there is no gradient to batch")


def _gradgrad_params():
    return [p for p in _op_params() if p.values[0].supports_gradgrad]


@pytest.mark.parametrize("op", _gradgrad_params())
def test_op_db_batched_double_backward_matches_rows(op, monkeypatch):
    """The graph of a first-order gradient (create_graph, as hessian builds it) runs
    batched too: the backward ops its rules recorded (index_backward, ...) included."""
    reseed(zlib.crc32(f"{op.id}/float64/True".encode()))
    checked = 0
    for i, s in enumerate(op.sample_inputs("float64", True)):
        leaves = [t for t in tensors_in((s.input, s.args, s.kwargs)).values()
                  if t.requires_grad]
        outs = op.op(s.input, *s.args, **s.kwargs) if leaves else ()
        outs = list(outs) if isinstance(outs, (tuple, list)) else [outs]
        diff = [o for o in outs if isinstance(o, retrograd.Tensor) and o.requires_grad]
        if not diff:
            continue
        g = numpy.random.default_rng(i)
        vs = [retrograd.from_numpy(g.standard_normal(tuple(o.shape))).requires_grad_()
              for o in diff]
        first = retrograd.autograd.grad(diff, leaves, vs, create_graph=True, allow_unused=True)
        first = [f for f in first if f is not None and f.requires_grad]
        if first:
            checked += _check_batched(first, leaves + vs, monkeypatch, seed=i)
    if not checked:
        pytest.skip("no twice-differentiable sample: the first-order gradient is constant "
                    "(zero for floor, sign, round; none for integer outputs), so there is no "
                    "second backward to batch")


def test_scatter_src_corner_double_backward(monkeypatch):
    src = _leaf(3, 4)
    idx = retrograd.tensor([[0, 1], [2, 0]])
    out = retrograd.zeros(3, 3, dtype=retrograd.float64).scatter(0, idx, src)
    v = _leaf(3, 3, seed=1)
    (gs,) = retrograd.autograd.grad(out, src, v, create_graph=True)
    assert _check_batched(gs, [v], monkeypatch)


def _leaf(*shape, seed=0):
    g = numpy.random.default_rng(seed)
    return retrograd.from_numpy(g.standard_normal(shape)).requires_grad_()


def test_copy_slices_and_rewritten_view_run_batched(monkeypatch):
    x = _leaf(4, 5)
    base = x * 1
    view = base[1:3]
    view.mul_(x[0])  # base's grad_fn is CopySlices
    old = base.t()[2]  # a view taken before the next write: AsStridedBackward0 after it
    base[:, 1:2].exp_()
    assert type(base.grad_fn).__name__ == "CopySlices"
    assert type(old.grad_fn).__name__ == "AsStridedBackward0"
    assert _check_batched((base.sin(), old * 2), [x], monkeypatch)


def test_multi_output_and_list_ops_run_batched(monkeypatch):
    x = _leaf(3, 6)
    a, b, c = x.split(2, dim=1)
    vals, idx = x.max(dim=1)
    out = retrograd.cat([a * b, vals.unsqueeze(1)], dim=1)
    assert _check_batched((out, c.unbind(0)[1]), [x], monkeypatch)


def test_custom_function_raises_naming_it():
    class Double(retrograd.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    x = _leaf(3)
    y = Double.apply(x)
    with pytest.raises(NotImplementedError, match="DoubleBackward.*custom autograd.Function"):
        retrograd.autograd.grad(y, x, retrograd.eye(3, dtype=retrograd.float64),
                                is_grads_batched=True)


def _mlp(T, params):
    w1, b1, w2, b2, gamma = params

    def f(x):
        h = T.nn.functional.layer_norm(T.tanh(x @ w1.t() + b1), (5,), weight=gamma)
        return T.nn.functional.softmax(h @ w2.t() + b2, dim=-1).log() * T.cat([x[:1], x[:2]])
    return f


def _params(T, seed=0):
    g = numpy.random.default_rng(seed)
    shapes = [(5, 4), (5,), (3, 5), (3,), (5,)]
    return [T.from_numpy(g.standard_normal(s)) for s in shapes]


@pytest.mark.torch
def test_jacobian_and_hessian_vectorized_match_torch():
    torch = pytest.importorskip("torch")
    x = numpy.random.default_rng(1).standard_normal(4)
    f, tf = _mlp(retrograd, _params(retrograd)), _mlp(torch, _params(torch))
    j = F.jacobian(f, retrograd.from_numpy(x), vectorize=True)
    tj = torch.autograd.functional.jacobian(tf, torch.from_numpy(x), vectorize=True)
    numpy.testing.assert_allclose(j.numpy(), tj.numpy(), rtol=1e-10, atol=1e-12)

    def scalar(T, fn):
        return lambda v: (fn(v) ** 2).sum()
    h = F.hessian(scalar(retrograd, f), retrograd.from_numpy(x), vectorize=True)
    th = torch.autograd.functional.hessian(scalar(torch, tf), torch.from_numpy(x),
                                           vectorize=True)
    numpy.testing.assert_allclose(h.numpy(), th.numpy(), rtol=1e-9, atol=1e-11)


def _convnet(T, params):
    w, b, lw = params

    def f(x):
        h = T.nn.functional.max_pool2d(T.relu(T.nn.functional.conv2d(x, w, b, padding=1)), 2)
        return h.reshape(-1) @ lw
    return f


@pytest.mark.torch
def test_conv_net_jacobian_vectorized_matches_torch():
    torch = pytest.importorskip("torch")
    g = numpy.random.default_rng(2)
    p = [g.standard_normal(s) for s in ((2, 1, 3, 3), (2,), (8, 3))]
    x = g.standard_normal((1, 1, 4, 4))
    j = F.jacobian(_convnet(retrograd, [retrograd.from_numpy(a) for a in p]),
                   retrograd.from_numpy(x), vectorize=True)
    tj = torch.autograd.functional.jacobian(_convnet(torch, [torch.from_numpy(a) for a in p]),
                                            torch.from_numpy(x), vectorize=True)
    numpy.testing.assert_allclose(j.numpy(), tj.numpy(), rtol=1e-10, atol=1e-12)


# ---- the batched array itself: each NumPy call against a loop over the batch --------------

def _rand(*shape, seed=0):
    return numpy.random.default_rng(seed + len(shape)).standard_normal(shape)


class _B:
    """An argument given batched (a stack of ``_BATCH`` arrays)."""

    def __init__(self, *shape):
        self.stack = _rand(_BATCH, *shape, seed=sum(shape))


def _per_row(fn, args):
    from retrograd.autograd._batched import Batched
    got = fn(*(Batched(a.stack) if isinstance(a, _B) else a for a in args))
    expected = numpy.stack([fn(*(a.stack[b] if isinstance(a, _B) else a for a in args))
                            for b in range(_BATCH)])
    assert isinstance(got, Batched)
    numpy.testing.assert_allclose(got.data, expected, rtol=1e-12, atol=1e-12)


_MASK = numpy.array([[True, False, True], [False, False, True]])
_CASES = {
    "getitem_adjacent": (lambda x: x[:, [0, 2]], _B(2, 3)),
    "getitem_split_advanced": (lambda x: x[[0, 1], :, [1, 0]], _B(2, 3, 2)),
    "getitem_int_and_array": (lambda x: x[0, :, [1, 0, 1]], _B(2, 3, 2)),
    "getitem_none_ellipsis": (lambda x: x[..., None, 1], _B(2, 3)),
    "getitem_mask": (lambda x: x[_MASK], _B(2, 3)),
    "matmul_vv": (numpy.matmul, _B(3), _B(3)),
    "matmul_vm": (numpy.matmul, _B(3), _rand(3, 4)),
    "matmul_mv_plain": (numpy.matmul, _rand(4, 3), _B(3)),
    "matmul_v_stack": (numpy.matmul, _B(3), _rand(2, 3, 4)),
    "matmul_stack_v": (numpy.matmul, _rand(2, 4, 3), _B(3)),
    "matmul_mm": (numpy.matmul, _B(2, 3), _B(3, 4)),
    "matmul_plain_m_stack": (numpy.matmul, _rand(2, 2, 3), _B(3, 4)),
    "matmul_m_plain_v": (numpy.matmul, _B(2, 3), _rand(3)),
    "matmul_stack_m": (numpy.matmul, _B(2, 2, 3), _rand(3, 4)),
    "einsum_implicit": (lambda a, b: numpy.einsum("ij,jk", a, b), _B(2, 3), _rand(3, 4)),
    "einsum_ellipsis": (lambda a: numpy.einsum("...ij->...ji", a), _B(2, 2, 3)),
    "tensordot_int": (lambda a, b: numpy.tensordot(a, b, 1), _rand(2, 3), _B(3, 4)),
    "tensordot_axes": (lambda a, b: numpy.tensordot(a, b, ((0,), (1,))), _B(3, 2), _B(4, 3)),
    "outer": (numpy.outer, _rand(2), _B(3)),
    "take_flat": (lambda x: numpy.take(x, [5, 0, 1]), _B(2, 3)),
    "take_along_axis": (lambda x: numpy.take_along_axis(x, numpy.array([[2, 0], [1, 1]]), 1),
                        _B(2, 3)),
    "concatenate_mixed": (lambda a, b: numpy.concatenate([a, b], axis=-1), _B(2, 3),
                          _rand(2, 2)),
    "stack_mixed": (lambda a, b: numpy.stack([a, b], axis=-1), _rand(2, 3), _B(2, 3)),
    "squeeze_all": (numpy.squeeze, _B(1, 3, 1)),
    "expand_dims": (lambda x: numpy.expand_dims(x, (0, -1)), _B(2, 3)),
    "transpose": (numpy.transpose, _B(2, 3, 4)),
    "sum_all": (lambda x: numpy.sum(x, keepdims=True), _B(2, 3)),
    "broadcast_to": (lambda x: numpy.broadcast_to(x, (4, 2, 3)), _B(3)),
    "tile": (lambda x: numpy.tile(x, (2, 1, 2)), _B(2, 3)),
    "roll_flat": (lambda x: numpy.roll(x, 2), _B(2, 3)),
    "cumsum_flat": (numpy.cumsum, _B(2, 3)),
    "diagonal": (lambda x: numpy.diagonal(x, 1, -1, 0), _B(3, 4)),
    "pad": (lambda x: numpy.pad(x, ((1, 0), (2, 1))), _B(2, 3)),
    "bincount": (lambda w: numpy.bincount(numpy.array([1, 3, 1]), weights=w, minlength=5),
                 _B(3)),
    "where": (lambda x, y: numpy.where(x > 0, x, y), _B(2, 3), _rand(3)),
    "reduce_ufunc": (lambda x: numpy.maximum.reduce(x, axis=-1), _B(2, 3)),
    "moveaxis": (lambda x: numpy.moveaxis(x, (0, -1), (-1, 1)), _B(2, 3, 4)),
    "astype_copy": (lambda x: numpy.copy(numpy.astype(x, numpy.float32)), _B(2, 3)),
    "put_along_axis": (lambda x, v: _put_along(x, numpy.array([[2], [0]]), v), _B(2, 3),
                       _B(2, 1)),
    "like": (lambda x: numpy.full_like(x, 2.0, shape=(4,)) + numpy.zeros_like(x)[0, 0], _B(2, 3)),
}


def _put_along(x, idx, v):
    out = numpy.zeros_like(x)
    numpy.put_along_axis(out, idx, v, 1)
    return out


@pytest.mark.parametrize("name", list(_CASES))
def test_batched_numpy_call_matches_loop(name):
    fn, *args = _CASES[name]
    _per_row(fn, args)


def _written(index):
    def write(x, v):
        out = numpy.zeros_like(x)
        out[index] = v
        numpy.add.at(out, index, v)
        return out
    return write


@pytest.mark.parametrize("index, value_shape", [
    ((slice(None), [0, 2]), (2, 2)),
    (([0, 1], slice(None), [1, 0]), (2, 3)),
    ((0, slice(None), [1, 0, 1]), (3, 3)),
    ((_MASK,), (3,)),
], ids=["adjacent", "split_advanced", "int_and_array", "mask"])
@pytest.mark.parametrize("value_batched", [True, False], ids=["batched", "plain"])
def test_batched_setitem_and_add_at_match_loop(index, value_shape, value_batched):
    shape = (2, 3, 2) if len(index) == 3 else (2, 3)
    value = _B(*value_shape) if value_batched else _rand(*value_shape)
    _per_row(_written(index), [_B(*shape), value])


# ---- an op's own batched rule (defop(batched=...)) ---------------------------------------

def test_defop_batched_rule_runs_once_on_the_batch(monkeypatch):
    from retrograd.ops._registry import apply, defop
    calls = []

    def rule(grad, other, batch):  # grad: a plain array, the batch on axis 0
        calls.append(grad.shape)
        return grad * other

    op = defop("scaled_by", lambda xp, self, other: self * other,
               vjp={"self": lambda grad, other: grad * other,
                    "other": lambda grad, self: grad * self},
               batched={"self": rule})
    x, w = _leaf(2, 3), _leaf(3, seed=1)
    assert _check_batched(apply(op, (x, w)), [x, w], monkeypatch)
    assert calls == [(_BATCH, 2, 3)]


def test_defop_batched_rule_is_checked():
    from retrograd.ops._registry import defop
    with pytest.raises(TypeError, match="asks for \\['self'\\]"):
        defop("bad", lambda xp, self, other: self * other,
              vjp={"self": lambda grad, other: grad * other}, inputs=("self", "other"),
              batched={"self": lambda grad, self: grad})
    with pytest.raises(TypeError, match="no vjp rule"):
        defop("bad", lambda xp, self: self, vjp={"self": lambda grad: grad},
              batched={"other": lambda grad: grad})


# ---- create_graph: differentiable batched gradients (one backward per row) ----------------

@pytest.mark.torch
def test_create_graph_batched_grads_are_differentiable_as_torch():
    torch = pytest.importorskip("torch")
    x0 = numpy.random.default_rng(5).standard_normal(4)
    v = numpy.random.default_rng(6).standard_normal((3, 4))
    results = []
    for T in (retrograd, torch):
        x = T.tensor(x0, requires_grad=True)
        y = (x.sin() * x).cumsum(0)
        (g,) = T.autograd.grad(y, x, T.tensor(v), create_graph=True, is_grads_batched=True)
        (g * g).sum().backward()
        h = T.autograd.functional.hessian(lambda a: (a.exp() * a).sum(), x, create_graph=True,
                                          vectorize=True)
        j = T.autograd.functional.jacobian(lambda a: a.tanh() * a, x, create_graph=True,
                                           vectorize=True)
        results.append([g.detach().numpy(), x.grad.numpy().copy(), h.detach().numpy(),
                        j.detach().numpy()])
        assert h.requires_grad and j.requires_grad
        x.grad = None
        (h.sum() + j.sum()).backward()
        results[-1].append(x.grad.numpy())
    for a, b in zip(*results, strict=True):
        numpy.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
