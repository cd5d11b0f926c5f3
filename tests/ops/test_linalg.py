"""Matrix products: behaviour beyond the op database.

grad_fn names of every matmul case with each operand requiring grad or not,
integer and bool products, the folded batch GEMM, einsum gradients and second
derivatives (the database compares einsum's only with finite differences, its
grad_fn names being PyTorch's decomposition), and operator dispatch, each
against PyTorch.
"""

import numpy
import pytest

import retrograd


def _name(t):
    return t.grad_fn.name() if t.grad_fn is not None else None


def _both(torch, *shapes, dtype="float64", requires_grad=True, seed=0):
    """The same random operands in both libraries."""
    g = numpy.random.default_rng(seed)
    arrays = [g.standard_normal(s).astype(dtype) for s in shapes]
    flags = requires_grad if isinstance(requires_grad, (list, tuple)) else \
        [requires_grad] * len(shapes)
    rs = [retrograd.tensor(a, requires_grad=f) for a, f in zip(arrays, flags, strict=True)]
    ts = [torch.tensor(a, requires_grad=f) for a, f in zip(arrays, flags, strict=True)]
    return rs, ts


def _grads(lib, out, inputs, create_graph=False):
    w = numpy.linspace(-1, 1, out.numel()).reshape(tuple(out.shape))
    return lib.autograd.grad((out * lib.tensor(w, dtype=out.dtype)).sum(),
                             [x for x in inputs if x.requires_grad], create_graph=create_graph)


def _close(r, t):
    numpy.testing.assert_allclose(r.detach().numpy(), t.detach().numpy(), rtol=1e-10,
                                  atol=1e-12)


_CASES = [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)), ((5, 2, 3), (3, 4)),
          ((5, 2, 3), (3,)), ((3,), (5, 3, 4)), ((2, 3), (5, 3, 4)), ((5, 2, 3), (5, 3, 4)),
          ((1, 2, 3), (5, 3, 4)), ((5, 2, 3), (1, 3, 4)), ((2, 1, 2, 3), (4, 3, 5)),
          ((1, 1, 2, 3), (2, 5, 3, 4)), ((2, 5, 2, 3), (3, 4)), ((4, 3), (2, 1, 3, 5))]


@pytest.mark.torch
@pytest.mark.parametrize("flags", [(True, True), (True, False), (False, True)])
@pytest.mark.parametrize("sa, sb", _CASES)
def test_matmul_grad_fn_names_and_gradients(torch, sa, sb, flags):
    (ra, rb), (ta, tb) = _both(torch, sa, sb, requires_grad=flags)
    r, t = ra @ rb, ta @ tb
    assert _name(r) == _name(t)
    _close(r, t)
    for gr, gt in zip(_grads(retrograd, r, [ra, rb]), _grads(torch, t, [ta, tb]), strict=True):
        _close(gr, gt)


@pytest.mark.torch
@pytest.mark.parametrize("sa, sb", [((5, 2, 3), (3, 4)), ((3,), (5, 3, 4)), ((2, 3), (2, 3, 4)),
                                    ((2, 2, 3), (1, 3, 4)), ((5, 3), (3,))])
def test_matmul_second_order(torch, sa, sb):
    (ra, rb), (ta, tb) = _both(torch, sa, sb)
    gr = _grads(retrograd, ra @ rb, [ra, rb], create_graph=True)
    gt = _grads(torch, ta @ tb, [ta, tb], create_graph=True)
    for x in (ra, rb):
        x.grad = None
    sum(((g * g).sum() for g in gr), retrograd.tensor(0.0, dtype=retrograd.float64)).backward()
    sum(((g * g).sum() for g in gt)).backward()
    _close(ra.grad, ta.grad)
    _close(rb.grad, tb.grad)


def test_batched_matrix_gradient_is_one_gemm(monkeypatch):
    """(B, T, n) @ (n, p): the weight's gradient is one 2-D matmul over B*T rows, and no
    (B, n, p) intermediate is made."""
    x = retrograd.randn(4, 5, 3)
    w = retrograd.randn(3, 2, requires_grad=True)
    shapes = []
    real = numpy.matmul

    def spy(a, b, *args, **kwargs):
        shapes.append((a.shape, b.shape))
        return real(a, b, *args, **kwargs)
    monkeypatch.setattr(numpy, "matmul", spy)
    out = x @ w
    (gw,) = retrograd.autograd.grad(out.sum(), w)
    monkeypatch.undo()
    assert shapes == [((20, 3), (3, 2)), ((3, 20), (20, 2))]
    numpy.testing.assert_allclose(gw.numpy(), numpy.ones((20, 2)).T.dot(
        x.detach().numpy().reshape(20, 3)).T, rtol=1e-5)


@pytest.mark.torch
@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "bool"])
@pytest.mark.parametrize("name, shapes", [
    ("matmul", [(2, 3), (3, 4)]), ("matmul", [(3,), (3,)]), ("matmul", [(2, 2, 3), (2, 3, 1)]),
    ("mm", [(2, 3), (3, 2)]), ("mv", [(2, 3), (3,)]), ("dot", [(3,), (3,)]),
    ("bmm", [(2, 2, 3), (2, 3, 1)]), ("tensordot", [(2, 3), (3, 2)]),
    ("einsum_ij", [(2, 3), (3, 2)]), ("outer", [(2,), (3,)]),
])
def test_integer_and_bool_products(torch, name, shapes, dtype):
    g = numpy.random.default_rng(1)
    arrays = [g.integers(0, 3, s).astype(dtype) for s in shapes]

    def call(lib):
        ops = [lib.from_numpy(a.copy()) for a in arrays]
        if name == "einsum_ij":
            return lib.einsum("ij,jk->ik", *ops)
        if name == "tensordot":
            return lib.tensordot(*ops, dims=1)
        return getattr(lib, name)(*ops)
    try:
        expected = call(torch)
    except (RuntimeError, NotImplementedError) as e:
        with pytest.raises(type(e)) as err:
            call(retrograd)
        assert str(err.value) == str(e)
        return
    actual = call(retrograd)
    assert repr(actual.dtype) == str(expected.dtype)
    numpy.testing.assert_array_equal(actual.numpy(), expected.numpy())


@pytest.mark.torch
@pytest.mark.parametrize("beta, alpha", [(0.5, 1), (1.7, 2.5), (0, 3)])
def test_integer_addmm_truncates_scalars(torch, beta, alpha):
    a = numpy.array([[1, 2], [3, 4]])
    r = retrograd.addmm(retrograd.tensor(a), retrograd.tensor(a), retrograd.tensor(a),
                        beta=beta, alpha=alpha)
    t = torch.addmm(torch.tensor(a), torch.tensor(a), torch.tensor(a), beta=beta, alpha=alpha)
    assert r.tolist() == t.tolist()


@pytest.mark.torch
def test_addmm_ignores_nan_input_when_beta_is_zero(torch):
    (ri, ra, rb), (ti, ta, tb) = _both(torch, (2, 4), (2, 3), (3, 4))
    with torch.no_grad():
        ti.fill_(float("nan"))
    ri.detach().numpy()[...] = numpy.nan
    r = retrograd.addmm(ri, ra, rb, beta=0)
    t = torch.addmm(ti, ta, tb, beta=0)
    _close(r, t)
    for gr, gt in zip(_grads(retrograd, r, [ri, ra, rb]), _grads(torch, t, [ti, ta, tb]),
                      strict=True):
        _close(gr, gt)


_EINSUM = [
    ("ij,jk->ik", [(2, 3), (3, 4)]), ("ii", [(3, 3)]), ("ii->i", [(3, 3)]),
    ("iji->j", [(3, 2, 3)]), ("iij->ij", [(2, 2, 3)]), ("ij->", [(2, 3)]),
    ("i,j->ij", [(3,), (4,)]), ("bij,bjk->bik", [(5, 2, 3), (5, 3, 4)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]), ("...ij,...jk->...ik", [(5, 2, 3), (3, 4)]),
    ("...ij,...jk", [(5, 1, 2, 3), (4, 3, 4)]), ("i...->...", [(2, 3, 4)]),
    ("ij,ij->ij", [(2, 3), (1, 3)]), ("ijk,ik->j", [(2, 3, 4), (2, 4)]),
    ("ab,ab,ab->", [(2, 3), (2, 3), (2, 3)]), ("ij,kl->", [(2, 3), (4, 5)]),
    ("ii,ij->j", [(3, 3), (3, 2)]), ("i,->i", [(3,), ()]),
]


@pytest.mark.torch
@pytest.mark.parametrize("eq, shapes", _EINSUM, ids=[e[0] for e in _EINSUM])
def test_einsum_gradients_and_second_order(torch, eq, shapes):
    rs, ts = _both(torch, *shapes)
    r, t = retrograd.einsum(eq, *rs), torch.einsum(eq, *ts)
    _close(r, t)
    gr = _grads(retrograd, r, rs, create_graph=True)
    gt = _grads(torch, t, ts, create_graph=True)
    for a, b in zip(gr, gt, strict=True):
        _close(a, b)
    if not any(g.requires_grad for g in gt):
        return
    sr = sum((g * g * g).sum() for g in gr)
    st = sum((g * g * g).sum() for g in gt)
    hr = retrograd.autograd.grad(sr, rs, allow_unused=True)
    ht = torch.autograd.grad(st, ts, allow_unused=True)
    for a, b, x in zip(hr, ht, rs, strict=True):
        _close(a if a is not None else retrograd.zeros_like(x),
               b if b is not None else torch.zeros(tuple(x.shape), dtype=torch.float64))


@pytest.mark.torch
@pytest.mark.parametrize("eq, a, b", [
    ("i,i->", [-numpy.inf], []),  # broadcast against an empty operand: -inf * 0
    ("i,i->", [numpy.inf], [1.0, -1.0]),  # inf * sum(b): NaN
    ("bij,jk->bik", [[[numpy.inf]], [[-0.77]]], [[numpy.inf, -1.0], [-1.0, 18.6],
                                                [0.046, -737.5]]),  # inf * sum: -inf
    ("i,j->", [1.0, numpy.inf], [2.0, -numpy.inf]),
    ("bij,jk->bik", [[[0.109, 7.6e-4, -7.8e-5]]], "expanded")])  # products, not x * sum(y)
def test_einsum_sums_a_label_first_as_pytorch(torch, eq, a, b):
    """PyTorch sums a contracted label out of the one operand that has it at a size other
    than 1 before multiplying, and multiplies an expanded operand pair by pair (NumPy's
    einsum would factor it out of the sum): the two differ at infinities."""
    def run(lib):
        x = lib.tensor(a, dtype=lib.float64, requires_grad=True)
        y = lib.tensor([[-numpy.inf, -0.0]], dtype=lib.float64).expand(3, 2) \
            if b == "expanded" else lib.tensor(b, dtype=lib.float64)
        out = lib.einsum(eq, x, y)
        return out.detach().numpy(), lib.autograd.grad(out.sum(), x)[0].numpy()
    for r, t in zip(run(retrograd), run(torch), strict=True):
        numpy.testing.assert_array_equal(r, t)


@pytest.mark.torch
def test_einsum_argument_forms(torch):
    (ra, rb), (ta, tb) = _both(torch, (5, 2, 3), (3, 4))
    _close(retrograd.einsum(ra, [..., 0, 1], rb, [1, 2], [..., 0, 2]),
           torch.einsum(ta, [..., 0, 1], tb, [1, 2], [..., 0, 2]))
    _close(retrograd.einsum("...ij,jk", [ra, rb]), torch.einsum("...ij,jk", [ta, tb]))
    _close(retrograd.einsum(ra, [25, 0, 51], [51, 25]), torch.einsum(ta, [25, 0, 51], [51, 25]))


@pytest.mark.torch
@pytest.mark.parametrize("dims", [2, 0, ([0, 2], [2, 0]), "tensor"])
def test_tensordot_dims_forms(torch, dims):
    (ra, rb), (ta, tb) = _both(torch, (3, 2, 4), (4, 2, 3))
    rd = retrograd.tensor(1) if dims == "tensor" else dims
    td = torch.tensor(1) if dims == "tensor" else dims
    if dims == 2:
        (ra, rb), (ta, tb) = _both(torch, (3, 2, 4), (2, 4, 3))
    r, t = retrograd.tensordot(ra, rb, dims=rd), torch.tensordot(ta, tb, dims=td)
    assert _name(r) == _name(t)
    _close(r, t)
    for gr, gt in zip(_grads(retrograd, r, [ra, rb]), _grads(torch, t, [ta, tb]), strict=True):
        _close(gr, gt)


@pytest.mark.torch
def test_matmul_operators_and_errors(torch):
    (ra, rb), (ta, tb) = _both(torch, (2, 3), (3, 4), requires_grad=False)
    _close(rb.__rmatmul__(ra), tb.__rmatmul__(ta))
    for a in (ra, ta):
        with pytest.raises(TypeError):
            a @ [1.0, 2.0, 3.0]
    with pytest.raises(TypeError) as expected:
        torch.matmul(ta, 3)
    with pytest.raises(TypeError) as actual:
        retrograd.matmul(ra, 3)
    assert str(actual.value) == str(expected.value)


@pytest.mark.torch
def test_inplace_products_on_leaf_raise_like_torch(torch):
    (ri, ra, rb), (ti, ta, tb) = _both(torch, (2, 4), (2, 3), (3, 4))
    with pytest.raises(RuntimeError) as expected:
        ti.addmm_(ta, tb)
    with pytest.raises(RuntimeError) as actual:
        ri.addmm_(ra, rb)
    assert str(actual.value) == str(expected.value)
