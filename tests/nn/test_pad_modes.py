"""F.pad's reflect, replicate and circular modes against PyTorch: a sweep of ranks and
pads (values, dtypes, grad_fn names, gradients, or the same error), second order, and
Conv1d/Conv2d with those padding modes (copied weights)."""

import itertools

import re

import numpy
import pytest

import retrograd
import retrograd.nn as nn
import retrograd.nn.functional as F

from _nn_util import assert_close, copy_weights, pair

pytestmark = pytest.mark.torch
torch = pytest.importorskip("torch")
TF = torch.nn.functional

_MODES = ("reflect", "replicate", "circular")


def _sweep(mode):
    """(shape, pad) cases: each rank around the supported ones, pads in {-3..3}."""
    cases = []
    for k in (1, 2, 3):
        for nd in (k, k + 1, k + 2, k + 3):
            for combo in itertools.product([(1, 2), (-1, 2), (2, -1), (-2, -1), (3, 0),
                                            (0, 0), (-3, 1)], repeat=k):
                shape = (2, 1, 3, 2, 4)[5 - nd:] if nd <= 5 else (1,) * (nd - 3) + (3, 2, 4)
                cases.append((shape, sum(combo, ())))
    return cases


def _ill_defined(shape, pad):
    """Circular pads wrapping a border longer than what the cut leaves: PyTorch copies
    from memory it is writing (an error, or uninitialized values); retrograd raises."""
    for i in range(len(pad) // 2):
        lo, hi = pad[2 * i], pad[2 * i + 1]
        size = shape[len(shape) - 1 - i]
        if size + min(lo, 0) + min(hi, 0) < max(lo, hi):
            return True
    return False


def _run(lib, fn, a, pad, mode, requires_grad):
    x = lib.from_numpy(a.copy())
    if requires_grad:
        x.requires_grad_(True)
    try:
        return x, fn(x, pad, mode=mode), None
    except Exception as e:  # noqa: BLE001 (compared with PyTorch's)
        return x, None, e


@pytest.mark.parametrize("mode", _MODES)
def test_sweep_matches_torch(mode):
    g = numpy.random.default_rng(0)
    checked = 0
    for shape, pad in _sweep(mode):
        a = g.standard_normal(shape)
        rx, r, re = _run(retrograd, F.pad, a, pad, mode, True)
        tx, t, te = _run(torch, TF.pad, a, pad, mode, True)
        if mode == "circular" and (te is None) != (re is None):
            assert _ill_defined(shape, pad), (shape, pad, te, re)
            continue
        if te is not None:
            assert type(re) is type(te) and str(re) == str(te), (shape, pad)
            continue
        assert re is None, (shape, pad, re)
        assert tuple(r.shape) == tuple(t.shape), (shape, pad)
        numpy.testing.assert_array_equal(r.detach().numpy(), t.detach().numpy())
        assert r.grad_fn.name() == t.grad_fn.name()
        cot = g.standard_normal(tuple(t.shape))
        (rg,) = retrograd.autograd.grad(r, rx, retrograd.from_numpy(cot))
        if t.numel() == 0:  # PyTorch's 3-d kernels leave such a gradient uninitialized
            assert not rg.numpy().any()
        else:
            (tg,) = torch.autograd.grad(t, tx, torch.from_numpy(cot))
            numpy.testing.assert_allclose(rg.numpy(), tg.numpy(), rtol=1e-12, atol=1e-12)
        checked += 1
    assert checked > 100


@pytest.mark.parametrize("mode", _MODES)
@pytest.mark.parametrize("dtype", ["int64", "int32", "float32", "bool"])
def test_dtypes(mode, dtype):
    a = (numpy.arange(24).reshape(1, 2, 3, 4) % 3).astype(dtype)
    for pad in ((1, 2), (1, 2, 2, 1), (1, 0, 2, 1, 0, 1)):
        _, r, re = _run(retrograd, F.pad, a, pad, mode, False)
        _, t, te = _run(torch, TF.pad, a, pad, mode, False)
        if te is not None:
            assert type(re) is type(te) and str(re) == str(te)
            continue
        assert r.dtype.name == str(t.dtype).split(".")[1]
        numpy.testing.assert_array_equal(r.numpy(), t.numpy())


@pytest.mark.parametrize("mode", _MODES)
def test_second_order_matches_torch(mode):
    for shape, pad in (((2, 5), (2, -1)), ((1, 2, 3, 4), (1, 2, -1, 2)),
                       ((1, 2, 3, 3, 4), (1, 0, 2, 1, -1, 2))):
        rx, tx = pair(*shape)
        r, t = F.pad(rx, pad, mode=mode), TF.pad(tx, pad, mode=mode)
        # a loss that is not linear in x, so the second derivative is not zero
        (rg,) = retrograd.autograd.grad((r ** 3).sum(), rx, create_graph=True)
        (tg,) = torch.autograd.grad((t ** 3).sum(), tx, create_graph=True)
        assert_close(rg, tg, 1e-10, 1e-10)
        (rgg,) = retrograd.autograd.grad((rg * rg).sum(), rx)
        (tgg,) = torch.autograd.grad((tg * tg).sum(), tx)
        assert_close(rgg, tgg, 1e-10, 1e-10)


@pytest.mark.parametrize("mode", ("reflect", "replicate"))
def test_double_backward_node_names(mode):
    for shape, pad in (((1, 2, 3), (1, 2)), ((1, 2, 3, 3), (1, 2, 1, 0)),
                       ((1, 1, 2, 3, 3), (1, 1, 1, 1, 1, 0))):
        rx, tx = pair(*shape)
        r, t = F.pad(rx, pad, mode=mode), TF.pad(tx, pad, mode=mode)
        rv, tv = pair(*t.shape, seed=1)
        (rg,) = retrograd.autograd.grad(r, rx, rv, create_graph=True)
        (tg,) = torch.autograd.grad(t, tx, tv, create_graph=True)
        assert rg.grad_fn.name() == tg.grad_fn.name()


def test_value_zero_and_list_pad():
    rx, tx = pair(1, 2, 3)
    for kw in ({"value": 0}, {"value": 0.0}, {"value": None}):
        assert_close(F.pad(rx, [1, 2], mode="reflect", **kw),
                     TF.pad(tx, [1, 2], mode="reflect", **kw))


# ---- Conv1d / Conv2d padding_mode ------------------------------------------------------------

CONVS = [
    ("Conv1d", (2, 3, 3), {"padding": 2}, (2, 2, 7)),
    ("Conv1d", (2, 3, 4), {"padding": "same"}, (2, 2, 6)),
    ("Conv1d", (2, 4, 3), {"padding": 1, "stride": 2, "groups": 2, "bias": False}, (2, 7)),
    ("Conv2d", (2, 3, 3), {"padding": 1}, (2, 2, 5, 6)),
    ("Conv2d", (2, 3, (3, 2)), {"padding": (2, 1), "stride": (2, 1)}, (1, 2, 5, 4)),
    ("Conv2d", (2, 4, (4, 3)), {"padding": "same", "dilation": (1, 2)}, (2, 2, 6, 7)),
    ("Conv2d", (2, 3, 3), {"padding": "valid"}, (2, 5, 5)),
    ("Conv2d", (2, 2, 3), {}, (1, 2, 4, 4)),
]


@pytest.mark.parametrize("mode", _MODES)
@pytest.mark.parametrize("name,args,kwargs,shape", CONVS,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CONVS)])
def test_conv_padding_mode_matches_torch(mode, name, args, kwargs, shape):
    t = getattr(torch.nn, name)(*args, padding_mode=mode, **kwargs).double()
    r = getattr(nn, name)(*args, padding_mode=mode, **kwargs).double()
    assert list(r.state_dict()) == list(t.state_dict())
    assert repr(r) == repr(t)
    assert (list(r._reversed_padding_repeated_twice)
            == list(t._reversed_padding_repeated_twice))
    copy_weights(t, r)
    rx, tx = pair(*shape)
    ro, to = r(rx), t(tx)
    assert_close(ro, to, 1e-10, 1e-9)
    assert ro.grad_fn.name() == to.grad_fn.name()
    cot = numpy.random.default_rng(3).standard_normal(tuple(to.shape))
    ro.backward(retrograd.from_numpy(cot))
    to.backward(torch.from_numpy(cot))
    assert_close(rx.grad, tx.grad, 1e-10, 1e-9)
    for p, q in zip(r.parameters(), t.parameters(), strict=True):
        assert_close(p.grad, q.grad, 1e-10, 1e-9)


def _raises_like(make_r, make_t):
    with pytest.raises(Exception) as te:
        make_t()
    with pytest.raises(type(te.value)) as got:
        make_r()
    assert _unordered_sets(str(got.value)) == _unordered_sets(str(te.value))


def _unordered_sets(message):
    """A message with each printed set's items sorted (set order varies per process)."""
    return re.sub(r"\{([^{}]*)\}",
                  lambda m: "{" + ", ".join(sorted(m.group(1).split(", "))) + "}", message)


@pytest.mark.parametrize("kwargs", [{"padding_mode": "bad"}, {"padding": "full"},
                                    {"padding": "same", "stride": 2}])
def test_conv_argument_errors_match_torch(kwargs):
    _raises_like(lambda: nn.Conv2d(2, 3, 3, **kwargs), lambda: torch.nn.Conv2d(2, 3, 3, **kwargs))


def test_conv_transpose_rejects_padding_mode():
    _raises_like(lambda: nn.ConvTranspose2d(2, 3, 3, padding_mode="reflect"),
                 lambda: torch.nn.ConvTranspose2d(2, 3, 3, padding_mode="reflect"))


def test_conv_reflect_padding_too_large_matches_torch():
    t = torch.nn.Conv1d(1, 1, 3, padding=3, padding_mode="reflect").double()
    r = nn.Conv1d(1, 1, 3, padding=3, padding_mode="reflect").double()
    rx, tx = pair(1, 1, 3)
    _raises_like(lambda: r(rx), lambda: t(tx))
