"""In-place writes through views, against PyTorch.

Each scenario runs the same code on ``torch`` and ``retrograd`` (passed as
``T``), starting from leaves with equal values, and must give the same result
values, grad_fn names and leaf gradients: the base's history becomes
CopySlices, the written view's AsStridedBackward0, and other views of the base
rebuild their history when next used.
"""

import numpy
import pytest

import retrograd

pytestmark = pytest.mark.torch


def _leaves(T, seed=0):
    g = numpy.random.default_rng(seed)
    x = T.tensor(g.standard_normal((3, 4)), dtype=T.float64, requires_grad=True)
    w = T.tensor(g.standard_normal((3, 4)), dtype=T.float64, requires_grad=True)
    return x, w


def _base_then_view_mul(T, x, w):
    y = x * 1
    v = y[:2]
    v.mul_(2)
    return (y * w).sum(), (y, v)


def _select_add_tensor(T, x, w):
    y = x * 1
    v = y[1]
    v.add_(w[0] * w[1])
    return (y * y).sum(), (y, v)


def _transpose_mul(T, x, w):
    y = x * 1
    v = y.t()
    v.mul_(w.t())
    return (y.exp()).sum(), (y, v)


def _flat_view_copy(T, x, w):
    y = x * 1
    v = y.view(-1)
    v.copy_((w * 3).reshape(-1))
    return (y * x).sum(), (y, v)


def _narrow_setitem(T, x, w):
    y = x * 1
    v = y.narrow(1, 1, 2)
    v[0] = w[0, :2] * 2
    return (y * w).sum(), (y, v)


def _view_of_view(T, x, w):
    y = x * 1
    v = y[1:]
    u = v[:, 1:]
    u.mul_(w[1:, 1:])
    return (y * y).sum() + (v * 2).sum(), (y, v, u)


def _other_view_after_write(T, x, w):
    y = x * 1
    a = y[0]
    b = y[:, 1]
    a.mul_(3)
    return (b * w[:, 0]).sum() + y.sum(), (y, a, b)


def _base_written_view_used(T, x, w):
    y = x * 1
    v = y[1:]
    y.mul_(w)
    return (v * v).sum(), (y, v)


def _two_writes_same_view(T, x, w):
    y = x * 1
    v = y[0]
    v.mul_(2)
    v.add_(w[0])
    return (y ** 2).sum(), (y, v)


def _write_saving_self(T, x, w):
    y = x * 1
    v = y[:2]
    v.pow_(2)
    v.sin_()
    return (y * w).sum(), (y, v)


def _setitem_into_plain(T, x, w):
    y = T.zeros(3, 4, dtype=T.float64)
    y[1] = w[0] * 2
    y[:, 0] = x[:, 1]
    return (y * x).sum(), (y,)


def _setitem_index_on_view(T, x, w):
    y = x * 1
    y[0][T.tensor([0, 2])] = w[0, :2]
    return (y * w).sum(), (y,)


def _iadd_through_getitem(T, x, w):
    y = x * 1
    y[1:] += w[1:]
    y[:, 0] *= 2
    return (y * y).sum(), (y,)


def _iadd_through_mask(T, x, w):
    y = x * 1
    y[w > 0] += 1
    return (y * y).sum(), (y,)


def _self_overlapping_assign(T, x, w):
    y = x * 1
    y[:, 0] = y[:, 1]
    return (y * w).sum(), (y,)


def _diagonal_fill(T, x, w):
    y = x * 1
    y.diagonal().zero_()
    return (y * w).sum(), (y,)


def _diagonal_write(T, x, w):
    y = x * 1
    y.diagonal(1).mul_(w[0, :3])
    return (y * y).sum(), (y,)


def _transposed_view_then_matmul(T, x, w):
    y = x * 1
    y.t()[1:].mul_(2)
    return (y @ w.t()).sum(), (y,)


def _fill_view(T, x, w):
    y = x * 1
    y[:, 2].fill_(w[0, 0])
    return (y * x).sum(), (y,)


def _unsqueeze_view(T, x, w):
    y = x * 1
    y.unsqueeze(0)[0, 1].add_(w[1])
    return (y * w).sum(), (y,)


def _expand_source(T, x, w):
    y = x * 1
    y[1:].copy_(w[0].expand(2, 4))
    return (y * y).sum(), (y,)


def _split_view_write(T, x, w):
    y = x * 1
    a, b = y.split([1, 2])
    with T.no_grad():
        a.mul_(0)
    return (y * w).sum(), (y,)


def _select_int_tensor(T, x, w):
    y = x * 1
    v = y[T.tensor(2)]
    v.mul_(w[2])
    return (y * y).sum(), (y, v)


def _fortran_base(T, x, w):
    y = x.t() * 1  # laid out column-major
    y[1].mul_(w[:, 0])
    return (y * y).sum(), (y,)


def _permuted_base(T, x, w):
    y = x.reshape(3, 2, 2).permute(2, 0, 1) * w.reshape(3, 2, 2).permute(2, 0, 1)
    y[:, 1].add_(2)
    y[1, :, 0] = w[0, :3]
    return (y * y).sum(), (y,)


def _fancy_index_base(T, x, w):
    y = x.reshape(3, 2, 2)[:, T.tensor([1, 0, 1]), 1:]  # a dense, permuted copy
    y[1:].mul_(w[:2, :3, None])
    return (y * y).sum(), (y,)


def _expanded_view_after_base_write(T, x, w):
    y = x * 1
    e = y[0].expand(2, 4)
    y.mul_(w)
    return (e * w[1:]).sum(), (y, e)


_SCENARIOS = [_base_then_view_mul, _select_add_tensor, _transpose_mul, _flat_view_copy,
              _narrow_setitem, _view_of_view, _other_view_after_write,
              _base_written_view_used, _two_writes_same_view, _write_saving_self,
              _setitem_into_plain, _setitem_index_on_view, _iadd_through_getitem,
              _iadd_through_mask, _self_overlapping_assign, _diagonal_fill, _diagonal_write,
              _transposed_view_then_matmul, _fill_view, _unsqueeze_view, _expand_source,
              _split_view_write, _select_int_tensor, _fortran_base, _permuted_base,
              _fancy_index_base, _expanded_view_after_base_write]


def _names(ts):
    return [t.grad_fn.name() if t.grad_fn is not None else None for t in ts]


@pytest.mark.parametrize("scenario", _SCENARIOS, ids=lambda f: f.__name__.strip("_"))
def test_inplace_on_views_matches_torch(scenario, torch):
    rx, rw = _leaves(retrograd)
    tx, tw = _leaves(torch)
    r_loss, r_ts = scenario(retrograd, rx, rw)
    t_loss, t_ts = scenario(torch, tx, tw)
    assert _names(r_ts) == _names(t_ts)
    for r, t in zip(r_ts, t_ts, strict=True):
        numpy.testing.assert_allclose(r.detach().numpy(), t.detach().numpy(), rtol=1e-12)
        assert r._version == t._version
    r_loss.backward()
    t_loss.backward()
    for r, t in ((rx, tx), (rw, tw)):
        if t.grad is None:
            assert r.grad is None
        else:
            numpy.testing.assert_allclose(r.grad.numpy(), t.grad.numpy(), rtol=1e-12,
                                          atol=1e-12)


def test_view_of_leaf_written_in_place_raises(torch):
    for T in (torch, retrograd):
        x, _ = _leaves(T)
        with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad "
                                               "is being used in an in-place operation."):
            x[0].mul_(2)
        with pytest.raises(RuntimeError, match="a view of a leaf Variable"):
            x[:, 1] = 0.0


def test_view_of_leaf_written_under_no_grad(torch):
    results = []
    for T in (torch, retrograd):
        x, w = _leaves(T)
        with T.no_grad():
            x[0].mul_(2)
            x[1, 2] = 5.0
        (x * w).sum().backward()
        results.append((x.detach().numpy().copy(), x.grad.numpy().copy(), x._version))
    numpy.testing.assert_allclose(results[0][0], results[1][0])
    numpy.testing.assert_allclose(results[0][1], results[1][1])
    assert results[0][2] == results[1][2]


def test_saved_tensor_modified_through_view_raises(torch):
    for T in (torch, retrograd):
        x, _ = _leaves(T)
        y = x * 1
        s = y.sin()  # saves y
        y[0].mul_(2)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            s.sum().backward()


def test_views_share_memory_and_version():
    x = retrograd.arange(12.0).reshape(3, 4)
    views = [x[1], x[:, 2], x.t(), x.view(2, 6), x.narrow(0, 1, 1), x.diagonal(),
             x.unsqueeze(0), x.permute(1, 0), x.expand(2, 3, 4), x.split(1)[1],
             x.unbind(1)[3], x[..., None], x.as_strided((2, 2), (1, 4))]
    x[1, 2] = 100.0
    for v in views:
        assert numpy.shares_memory(v.numpy(), x.numpy())
        assert v._version == x._version == 1
    assert views[0][2].item() == 100.0 and views[1][1].item() == 100.0
    assert views[2][2, 1].item() == 100.0 and views[3][1, 0].item() == 100.0


def test_copies_do_not_share_memory():
    x = retrograd.arange(12.0).reshape(3, 4)
    copies = [x.flip(0), x.roll(1), x.repeat(1, 1), x.tril(), x.clone(), x.t().contiguous(),
              x[[0, 1]], x[x > 3], x.diag(), x.t().reshape(-1), x.gather(0, x.long() % 3)]
    before = [c.numpy().copy() for c in copies]
    x.zero_()
    for c, b in zip(copies, before, strict=True):
        numpy.testing.assert_array_equal(c.numpy(), b)


@pytest.mark.parametrize("scenario", _SCENARIOS, ids=lambda f: f.__name__.strip("_"))
def test_double_backward_through_views_matches_torch(scenario, torch):
    """create_graph=True through CopySlices and AsStridedBackward0."""
    grads = []
    for T in (torch, retrograd):
        x, w = _leaves(T)
        loss, _ = scenario(T, x, w)
        gx, gw = T.autograd.grad(loss, (x, w), create_graph=True, allow_unused=True)
        total = sum((g * g).sum() for g in (gx, gw) if g is not None and g.requires_grad)
        if not isinstance(total, T.Tensor):
            grads.append(None)
            continue
        grads.append([None if g is None else g.detach().numpy().copy()
                      for g in T.autograd.grad(total, (x, w), allow_unused=True)])
    if grads[0] is None:
        assert grads[1] is None
        return
    for t, r in zip(*grads, strict=True):
        assert (t is None) == (r is None)
        if t is not None:
            numpy.testing.assert_allclose(r, t, rtol=1e-12, atol=1e-12)


def test_write_into_view_of_non_dense_base_is_a_clear_error():
    base = retrograd.from_numpy(numpy.zeros((4, 6))[:, ::2])  # strided, not dense
    w = retrograd.ones(3, requires_grad=True)
    with pytest.raises(NotImplementedError, match="dense in memory"):
        base[0] = w
