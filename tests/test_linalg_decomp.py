"""retrograd.linalg beyond the op database: LinAlgError and info outputs, the namespace,
named result tuples, the behaviours of backward PyTorch documents (qr mode='r', det at
singular matrices under create_graph), and the legacy forms' conventions."""

import numpy
import pytest

import retrograd
from retrograd import linalg

torch = pytest.importorskip("torch")


def _pair(arr, requires_grad=False):
    arr = numpy.asarray(arr, dtype=numpy.float64)
    return (retrograd.tensor(arr, requires_grad=requires_grad),
            torch.tensor(arr, requires_grad=requires_grad))


def test_namespace_is_torch_linalg():
    import retrograd as rt
    assert rt.linalg is linalg
    assert rt.linalg.LinAlgError is linalg.LinAlgError
    assert issubclass(linalg.LinAlgError, RuntimeError)
    for name in ("det", "inverse", "cholesky", "svd", "qr", "slogdet", "logdet", "pinverse",
                 "cholesky_solve", "cholesky_inverse", "triangular_solve", "matrix_power",
                 "matrix_exp", "cross"):
        assert callable(getattr(rt.Tensor, name)), name
        assert callable(getattr(rt, name)), name


@pytest.mark.torch
@pytest.mark.parametrize("fn, args", [
    ("inv", ([[1., 2.], [2., 4.]],)), ("cholesky", ([[1., 2.], [2., 1.]],)),
    ("solve", ([[1., 2.], [2., 4.]], [1., 1.]))])
def test_linalg_error_matches_torch(fn, args):
    ours, theirs = zip(*(_pair(a) for a in args), strict=True)
    with pytest.raises(torch.linalg.LinAlgError) as expected:
        getattr(torch.linalg, fn)(*theirs)
    with pytest.raises(linalg.LinAlgError) as actual:
        getattr(linalg, fn)(*ours)
    assert str(actual.value) == str(expected.value)


@pytest.mark.torch
def test_info_outputs():
    a = numpy.stack([numpy.eye(3), numpy.diag([1., 0., 1.])])
    r, t = _pair(a)
    assert linalg.inv_ex(r).info.tolist() == torch.linalg.inv_ex(t).info.tolist() == [0, 2]
    assert linalg.inv_ex(r).info.dtype is retrograd.int32
    s = numpy.stack([numpy.eye(2), -numpy.eye(2)])
    r, t = _pair(s)
    assert linalg.cholesky_ex(r).info.tolist() == torch.linalg.cholesky_ex(t).info.tolist()
    b = retrograd.ones(2, 3, 1, dtype=retrograd.float64)
    assert linalg.solve_ex(retrograd.tensor(a), b).info.tolist() == [0, 2]
    with pytest.raises(linalg.LinAlgError, match="Batch element 1"):
        linalg.inv_ex(retrograd.tensor(a), check_errors=True)


_INF, _NAN = numpy.inf, numpy.nan


@pytest.mark.torch
@pytest.mark.parametrize("a", [
    [[_NAN, 0.], [0., 1.]], [[1., _NAN], [_NAN, 1.]], [[1., 0.], [0., _NAN]],
    [[4., 0.], [_INF, _INF]], [[_INF, -_INF], [-_INF, 9.]], [[_INF, 0.], [0., 1.]],
    [[1., 2.], [2., 1.]], [[1., 2., 3.], [2., 1., 4.], [3., 4., 5.]],
    [[4., 2., 1.], [2., 5., 3.], [1., 3., -2.]],
    [[[2., 1.], [1., 2.]], [[1., 0.], [0., _NAN]], [[4., 2.], [2., 5.]]]])
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_failures_match_torch(a, upper):
    """A NaN pivot (a NaN, or inf - inf) fails as a non-positive one, as LAPACK's potrf
    reports it (OpenBLAS's carries it on); a failed matrix's factor is what LAPACK leaves
    (the pivot unrooted, then the input), the others' factored; the error names the first."""
    r, t = _pair(a)
    got, want = linalg.cholesky_ex(r, upper=upper), torch.linalg.cholesky_ex(t, upper=upper)
    assert got.info.tolist() == want.info.tolist()
    numpy.testing.assert_array_equal(got.L.numpy(), want.L.numpy())
    if not want.info.any():
        return
    with pytest.raises(torch.linalg.LinAlgError) as expected:
        torch.linalg.cholesky(t, upper=upper)
    with pytest.raises(linalg.LinAlgError) as actual:
        linalg.cholesky(r, upper=upper)
    assert str(actual.value) == str(expected.value)


@pytest.mark.torch
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_solve_and_inverse_read_the_factors_triangle(upper):
    """A factor's other triangle is not read (LAPACK's potrs and potri), while the
    gradients are PyTorch's formulas of the whole factor."""
    rng = numpy.random.default_rng(0)
    f = rng.standard_normal((2, 3, 3)) + 3 * numpy.eye(3)  # both triangles non-zero
    b = rng.standard_normal((2, 3, 2))
    (rf, tf), (rb, tb) = _pair(f, True), _pair(b, True)
    for lib, fa, ba in ((retrograd, rf, rb), (torch, tf, tb)):
        x = lib.cholesky_solve(ba, fa, upper)
        inv = lib.cholesky_inverse(fa, upper)
        (x.sum() + (inv * inv).sum()).backward()
    numpy.testing.assert_allclose(rf.grad.numpy(), tf.grad.numpy(), rtol=1e-10, atol=1e-12)
    numpy.testing.assert_allclose(rb.grad.numpy(), tb.grad.numpy(), rtol=1e-10, atol=1e-12)
    numpy.testing.assert_allclose(retrograd.cholesky_solve(rb, rf, upper).detach().numpy(),
                                  torch.cholesky_solve(tb, tf, upper).detach().numpy(),
                                  rtol=1e-12)
    numpy.testing.assert_allclose(retrograd.cholesky_inverse(rf, upper).detach().numpy(),
                                  torch.cholesky_inverse(tf, upper).detach().numpy(),
                                  rtol=1e-12)


def test_return_types():
    a = retrograd.eye(3, dtype=retrograd.float64)
    assert type(linalg.slogdet(a)).__name__ == "linalg_slogdet"
    assert type(retrograd.slogdet(a)).__name__ == "slogdet"
    assert linalg.svd(a)._fields == ("U", "S", "Vh")
    assert retrograd.svd(a)._fields == ("U", "S", "V")
    assert linalg.eigh(a)._fields == ("eigenvalues", "eigenvectors")
    assert retrograd.qr(a)._fields == ("Q", "R")
    assert linalg.lstsq(a, a)._fields == ("solution", "residuals", "rank", "singular_values")


def test_complex_input_is_refused():
    z = retrograd.zeros(2, 2, dtype=retrograd.complex64)
    with pytest.raises(NotImplementedError, match="complex"):
        linalg.det(z)


@pytest.mark.torch
def test_qr_mode_r_and_complete_backward_errors():
    r, t = _pair(numpy.random.default_rng(0).standard_normal((4, 3)), True)
    q, rr = linalg.qr(r, mode="r")
    tq, trr = torch.linalg.qr(t, mode="r")
    assert q.shape == tq.shape and numpy.allclose(rr.detach().numpy(), trr.detach().numpy())
    for mode in ("r", "complete"):
        with pytest.raises(RuntimeError) as expected:
            torch.linalg.qr(t, mode=mode)[1].sum().backward()
        with pytest.raises(RuntimeError) as actual:
            linalg.qr(r, mode=mode)[1].sum().backward()
        assert str(actual.value) == str(expected.value)


@pytest.mark.torch
@pytest.mark.parametrize("a", [[[1., 0., 3.], [2., 0., 6.], [1., 0., 1.]], [[1., 2.], [0., 0.]],
                               [[0., 0.], [0., 0.]]])
def test_det_gradient_at_singular_matrices(a):
    """A plain backward gives 0 at an exactly singular matrix, as PyTorch's; under
    create_graph the cofactors from the SVD (PyTorch's formula then).

    The matrices are singular in every LU (a zero column or row): one singular only in
    exact arithmetic ([[1, 2, 3], [2, 4, 6], [1, 0, 1]]) gets det -6.7e-16 from MKL's LU on
    some CPUs and 0 from OpenBLAS's, and so the adjugate in one library and 0 in the other."""
    r, t = _pair(a, True)
    for create in (False, True):
        g, = retrograd.autograd.grad(linalg.det(r), r, create_graph=create)
        tg, = torch.autograd.grad(torch.linalg.det(t), t, create_graph=create)
        numpy.testing.assert_allclose(g.detach().numpy(), tg.detach().numpy(), atol=1e-12)


@pytest.mark.torch
def test_legacy_svd_without_uv_and_matrix_power_zero():
    r, t = _pair(numpy.random.default_rng(1).standard_normal((2, 4, 3)))
    ours, theirs = retrograd.svd(r, compute_uv=False), torch.svd(t, compute_uv=False)
    for x, y in zip(ours, theirs, strict=True):
        assert tuple(x.shape) == tuple(y.shape)
        numpy.testing.assert_allclose(x.numpy(), y.numpy(), atol=1e-12)
    sq = retrograd.tensor(numpy.ones((2, 3, 3)))
    numpy.testing.assert_array_equal(linalg.matrix_power(sq, 0).numpy(),
                                     numpy.broadcast_to(numpy.eye(3), (2, 3, 3)))


@pytest.mark.torch
def test_eigh_gradient_of_invariant_loss_matches_torch():
    """A loss through eigenvectors that is sign-invariant (|v|^2 weighted) needs no gauge
    fixing: the raw gradients agree."""
    a = numpy.random.default_rng(2).standard_normal((3, 3))
    a = a + a.T
    r, t = _pair(a, True)
    w = numpy.arange(9.).reshape(3, 3)
    lr = (linalg.eigh(r).eigenvectors ** 2 * retrograd.tensor(w)).sum()
    lt = (torch.linalg.eigh(t).eigenvectors ** 2 * torch.tensor(w)).sum()
    g, = retrograd.autograd.grad(lr, r)
    tg, = torch.autograd.grad(lt, t)
    numpy.testing.assert_allclose(g.numpy(), tg.numpy(), atol=1e-10)


@pytest.mark.torch
def test_det_forward_mode_at_singular_matrices_matches_torch():
    import torch.autograd.forward_ad as tfw
    from retrograd.autograd import forward_ad as fw
    a = numpy.array([[1., 0., 3.], [2., 0., 6.], [1., 0., 1.]])  # singular in every LU
    r, t = _pair(a)
    with fw.dual_level():
        ours = fw.unpack_dual(linalg.det(fw.make_dual(r, retrograd.ones_like(r)))).tangent
    with tfw.dual_level():
        theirs = tfw.unpack_dual(torch.linalg.det(tfw.make_dual(t, torch.ones_like(t)))).tangent
    assert float(ours) == float(theirs) == 0.0


INF, NAN = float("inf"), float("nan")


@pytest.mark.torch
@pytest.mark.parametrize("a", [[[1., 0., 0.], [2., 0., 0.], [1., 1., 3.]],  # a zero pivot
                               [[2., 0., 0.], [INF, 1., 0.], [1., 1., 2.]],
                               [[NAN, 0., 0.], [1., 1., 0.], [0., 1., 2.]],
                               [[0., 0., 0.], [1., 1., 0.], [0., 1., 2.]]])
@pytest.mark.parametrize("upper,left", [(False, True), (True, True), (False, False)])
def test_solve_triangular_of_singular_and_non_finite_matrices_matches_torch(a, upper, left):
    """PyTorch substitutes (BLAS trsm): a zero or non-finite pivot gives inf or NaN, not
    LinAlgError; a batch of B broadcasts over A."""
    a = numpy.array(a).T if upper else numpy.array(a)
    b = numpy.array([[1., 0.], [1., 2.], [0., 1.]])
    b = numpy.stack([b, -b]) if left else numpy.stack([b.T, -b.T])
    (ra, ta), (rb, tb) = _pair(a), _pair(b)
    ours = linalg.solve_triangular(ra, rb, upper=upper, left=left)
    theirs = torch.linalg.solve_triangular(ta, tb, upper=upper, left=left)
    numpy.testing.assert_array_equal(ours.numpy(), theirs.numpy())



@pytest.mark.torch
def test_solve_triangular_with_a_subnormal_pivot_and_its_gradient():
    """LU's pivoting would spread a subnormal pivot's infinities to every row (0 * inf);
    substitution keeps them where PyTorch's trsm does, forward and in a backward recorded
    for a double backward (the rule then runs on Tensors)."""
    a = [[1., 0., 0.], [0.5, 2., 0.], [1., 1., 5e-324]]
    (ra, ta), (rb, tb) = _pair(a, True), _pair([[1.], [1.], [0.]], True)
    ours = linalg.solve_triangular(ra, rb, upper=False)
    theirs = torch.linalg.solve_triangular(ta, tb, upper=False)
    numpy.testing.assert_array_equal(ours.detach().numpy(), theirs.detach().numpy())
    (rg,) = retrograd.autograd.grad(ours[:2].sum(), rb, create_graph=True)
    (tg,) = torch.autograd.grad(theirs[:2].sum(), tb, create_graph=True)
    numpy.testing.assert_array_equal(rg.detach().numpy(), tg.detach().numpy())


def test_vecdot_conjugates_its_first_operand_and_checks_dtypes_as_torch():
    torch = pytest.importorskip("torch")
    for lib in (retrograd, torch):
        a = lib.tensor([1j, 2 + 1j], dtype=lib.complex64)
        b = lib.tensor([1 + 1j, 3.0], dtype=lib.complex64)
        assert lib.linalg.vecdot(a, b).item() == (1 - 1j) + (6 - 3j)
        with pytest.raises(RuntimeError, match="Expected x and y to have the same dtype, but "
                                               "found x of type Float and y of type Double"):
            lib.linalg.vecdot(lib.ones(3), lib.ones(3, dtype=lib.float64))
        with pytest.raises(RuntimeError, match="Expected a floating point or complex tensor "
                                               "as input. Got Long"):
            lib.linalg.vecdot(lib.ones(3, dtype=lib.int64), lib.ones(3, dtype=lib.int64))
