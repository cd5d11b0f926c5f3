"""Indexing and the gather/scatter family: behaviour beyond the op database.

Random PyTorch indices (ints, slices, None, Ellipsis, masks, integer tensors
and lists, mixed) are compared with PyTorch on values, grad_fn names and
gradients; repeated indices must accumulate; assignment casts, broadcasts and
records CopySlices / IndexPutBackward0.
"""

import warnings

import numpy
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import retrograd

pytestmark = pytest.mark.torch


@st.composite
def _index(draw):
    """A shape and a PyTorch index into it, as a recipe ``(kind, value)`` per component."""
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=4)))
    parts, dim = [], 0
    ellipsis = False
    while dim < len(shape) and draw(st.booleans()):
        n = shape[dim]
        kind = draw(st.sampled_from(["int", "slice", "none", "ellipsis", "list", "tensor",
                                     "mask", "tensor0d"]))
        if kind == "ellipsis":
            if ellipsis:
                continue
            ellipsis = True
            parts.append(("ellipsis", None))
            dim = max(dim, len(shape) - draw(st.integers(0, len(shape) - dim)))
            continue
        if kind == "none":
            parts.append(("none", None))
            continue
        if kind in ("int", "tensor0d"):
            parts.append((kind, draw(st.integers(-n, n - 1))))
        elif kind == "slice":
            start = draw(st.one_of(st.none(), st.integers(-n - 1, n + 1)))
            stop = draw(st.one_of(st.none(), st.integers(-n - 1, n + 1)))
            step = draw(st.one_of(st.none(), st.integers(1, 3)))
            parts.append(("slice", (start, stop, step)))
        elif kind in ("list", "tensor"):
            vals = draw(st.lists(st.integers(-n, n - 1), min_size=0, max_size=5))
            if kind == "tensor" and draw(st.booleans()):
                vals = [vals[:2], vals[-2:]] if len(vals) >= 2 else vals
            parts.append((kind, vals))
        else:
            parts.append(("mask", draw(st.lists(st.booleans(), min_size=n, max_size=n))))
        dim += 1
    bare = len(parts) == 1 and draw(st.booleans())
    return shape, parts, bare


def _component(T, kind, v):
    if kind in ("int", "none"):
        return v
    if kind == "ellipsis":
        return Ellipsis
    if kind == "slice":
        return slice(*v)
    if kind == "list":
        return list(v)
    return T.tensor(v, dtype={"tensor": T.int64, "tensor0d": T.int64, "mask": T.bool}[kind])


def _build(T, parts, bare):
    items = [_component(T, kind, v) for kind, v in parts]
    return items[0] if bare else tuple(items)


def _outcome(T, x, index):
    try:
        return "ok", x[index]
    except (IndexError, RuntimeError, ValueError) as e:
        return type(e).__name__, str(e)


@settings(max_examples=150, deadline=None)
@given(_index(), st.integers(0, 2 ** 31))
def test_getitem_matches_torch(torch, case, seed):
    shape, parts, bare = case
    g = numpy.random.default_rng(seed)
    a = g.standard_normal(shape)
    rx = retrograd.tensor(a, requires_grad=True)
    tx = torch.tensor(a, requires_grad=True)
    r_kind, r = _outcome(retrograd, rx * 1, _build(retrograd, parts, bare))
    t_kind, t = _outcome(torch, tx * 1, _build(torch, parts, bare))
    assert r_kind == t_kind, (r, t)
    if r_kind != "ok":
        return
    assert tuple(r.shape) == tuple(t.shape)
    numpy.testing.assert_array_equal(r.detach().numpy(), t.detach().numpy())
    assert r.grad_fn.name() == t.grad_fn.name()
    cot = g.standard_normal(tuple(t.shape))
    r.backward(retrograd.tensor(cot))
    t.backward(torch.tensor(cot))
    numpy.testing.assert_allclose(rx.grad.numpy(), tx.grad.numpy(), rtol=1e-12, atol=1e-12)


@settings(max_examples=100, deadline=None)
@given(_index(), st.integers(0, 2 ** 31), st.booleans())
def test_setitem_matches_torch(torch, case, seed, scalar):
    shape, parts, bare = case
    g = numpy.random.default_rng(seed)
    a = g.standard_normal(shape)
    results = []
    for T in (torch, retrograd):
        x = T.tensor(a, requires_grad=True)
        index = _build(T, parts, bare)
        y = x * 1
        try:
            target_shape = tuple(y[index].shape)
        except (IndexError, RuntimeError, ValueError) as e:
            results.append(type(e).__name__)
            continue
        vg = numpy.random.default_rng(seed + 1)
        value = 2.5 if scalar else T.tensor(vg.standard_normal(target_shape[1:]),
                                            requires_grad=True)
        y[index] = value
        (y * y).sum().backward()
        results.append((y.detach().numpy().copy(), y.grad_fn.name(), x.grad.numpy().copy(),
                        None if scalar else value.grad.numpy().copy()))
    if isinstance(results[0], str):
        assert results[0] == results[1]
        return
    (ty, tname, tgx, tgv), (ry, rname, rgx, rgv) = results
    numpy.testing.assert_array_equal(ry, ty)
    assert rname == tname
    numpy.testing.assert_allclose(rgx, tgx, rtol=1e-12)
    if tgv is not None:
        numpy.testing.assert_allclose(rgv, tgv, rtol=1e-12, atol=1e-12)


def test_repeated_indices_accumulate_without_python_loop():
    n = 200_000
    idx = numpy.random.default_rng(0).integers(0, 7, n)
    x = retrograd.zeros(7, 3, requires_grad=True)
    x[retrograd.from_numpy(idx)].sum().backward()
    numpy.testing.assert_array_equal(x.grad.numpy()[:, 0], numpy.bincount(idx, minlength=7))
    w = retrograd.zeros(7, requires_grad=True)
    w.gather(0, retrograd.from_numpy(idx)).sum().backward()
    numpy.testing.assert_array_equal(w.grad.numpy(), numpy.bincount(idx, minlength=7))


def test_setitem_casts_and_broadcasts(torch):
    for T in (torch, retrograd):
        i = T.zeros(2, 3, dtype=T.int64)
        i[0] = 2.7
        i[1, T.tensor([True, False, True])] = T.tensor([-1.5])
        i[1, 1] = T.tensor(1.5)
        assert i.tolist() == [[2, 2, 2], [-1, 1, -1]]
        with pytest.raises(RuntimeError, match="Index put requires the source and destination"):
            i[1, T.tensor([0, 2])] = T.tensor([1.5, -1.5])
        b = T.zeros(3, dtype=T.bool)
        b[T.tensor([True, False, True])] = 1
        assert b.tolist() == [True, False, True]
        f = T.zeros(2, 3)
        f[:, 1:] = T.ones(1, 2, dtype=T.float64)
        f[0] = T.full((1, 1, 3), 5.0)  # leading size-1 dims of the value are dropped
        assert f.tolist() == [[5.0, 5.0, 5.0], [0.0, 1.0, 1.0]]


def test_setitem_errors_match_torch(torch):
    cases = [lambda T, x: x.__setitem__(0, T.ones(5)),
             lambda T, x: x.__setitem__(T.tensor([0, 1]), T.ones(3, 4)),
             lambda T, x: x.__setitem__(slice(None, None, -1), 0.0),
             lambda T, x: x.__setitem__((0, 0, 0), 1.0)]
    for case in cases:
        errors = []
        for T in (torch, retrograd):
            with pytest.raises((RuntimeError, IndexError, ValueError)) as e:
                case(T, T.zeros(3, 4))
            errors.append((type(e.value), str(e.value)))
        assert errors[0] == errors[1]


def test_setitem_on_leaf_requiring_grad_raises():
    x = retrograd.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="a view of a leaf Variable"):
        x[0] = 1.0
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        x[retrograd.tensor([0])] = 1.0
    with retrograd.no_grad():
        x[1] = 2.0
        x[retrograd.tensor([2])] = 3.0
    assert x.tolist() == [0.0, 2.0, 3.0] and x._version == 2


def test_index_put_accumulate(torch):
    out = []
    for T in (torch, retrograd):
        x = T.zeros(3, 2, dtype=T.float64, requires_grad=True)
        v = T.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], dtype=T.float64, requires_grad=True)
        y = x.index_put((T.tensor([0, 2, 0]),), v, accumulate=True)
        (y * T.arange(6.0, dtype=T.float64).reshape(3, 2)).sum().backward()
        out.append((y.detach().numpy(), x.grad.numpy(), v.grad.numpy(), y.grad_fn.name()))
    for t, r in zip(*out, strict=True):
        if isinstance(t, str):
            assert t == r
        else:
            numpy.testing.assert_array_equal(r, t)
    with pytest.raises(RuntimeError, match="Index put requires the source and destination"):
        retrograd.zeros(3).index_put_((retrograd.tensor([0]),), retrograd.ones(1).double())


def test_scatter_with_larger_src_pads_its_gradient():
    """PyTorch errors here in backward; retrograd gives the zero-padded gradient."""
    x = retrograd.zeros(3, 4, dtype=retrograd.float64, requires_grad=True)
    src = retrograd.arange(15.0, dtype=retrograd.float64).reshape(3, 5).requires_grad_()
    index = retrograd.tensor([[1, 0], [3, 2], [0, 3]])
    for fn in (retrograd.scatter, retrograd.scatter_add):
        assert retrograd.autograd.gradcheck(lambda s, fn=fn: fn(x, 1, index, s), (src,))
        assert retrograd.autograd.gradgradcheck(lambda s, fn=fn: fn(x, 1, index, s), (src,))


def test_scatter_reduce_has_no_derivative(torch):
    """retrograd warns of the deprecated reduce argument; PyTorch's warning is
    TORCH_WARN_ONCE (once per process), so an earlier test may already have drawn it."""
    for T in (torch, retrograd):
        x = T.ones(3, 4, requires_grad=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            y = x.scatter(1, T.tensor([[0], [1], [2]]), T.ones(3, 1), reduce="multiply")
        if T is retrograd:
            assert any("reduce argument of torch.scatter" in str(w.message) for w in caught)
        with pytest.raises(RuntimeError, match="derivative for aten::scatter is not "
                                               "implemented"):
            y.sum().backward()


def test_uint8_index_is_a_mask_with_warning(torch):
    for T in (torch, retrograd):
        x = T.arange(3)
        with pytest.warns(UserWarning, match="indexing with dtype torch.uint8"):
            assert x[T.tensor([1, 0, 1], dtype=T.uint8)].tolist() == [0, 2]


def test_numpy_array_index():
    x = retrograd.arange(10)
    assert x[numpy.array([3, 3, 1])].tolist() == [3, 3, 1]
    assert x[numpy.arange(10) > 6].tolist() == [7, 8, 9]
    assert x[numpy.int64(4)].item() == 4


def test_masked_fill_on_a_view(torch):
    grads = []
    for T in (torch, retrograd):
        x = T.tensor(numpy.arange(6.0).reshape(2, 3), requires_grad=True)
        y = x * 1
        y[1].masked_fill_(T.tensor([True, False, True]), 0.0)
        (y * y).sum().backward()
        grads.append((y.detach().numpy(), x.grad.numpy(), y.grad_fn.name()))
    numpy.testing.assert_array_equal(grads[0][0], grads[1][0])
    numpy.testing.assert_array_equal(grads[0][1], grads[1][1])
    assert grads[0][2] == grads[1][2]


def test_nonzero_forms(torch):
    for a in ([[0, 1, 2], [3, 0, 0]], 5.0, 0.0, []):
        r, t = retrograd.tensor(a), torch.tensor(a)
        assert r.nonzero().tolist() == t.nonzero().tolist()
        assert r.nonzero().shape == t.nonzero().shape
        assert [i.tolist() for i in r.nonzero(as_tuple=True)] == \
            [i.tolist() for i in t.nonzero(as_tuple=True)]
        assert r.argwhere().shape == t.argwhere().shape
    assert retrograd.where(retrograd.tensor([0, 3, 4]))[0].tolist() == [1, 2]
