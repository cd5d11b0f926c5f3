"""Op database entries for ``torch.linalg`` (``ops/linalg_decomp.py``) and the older
top-level names (det, inverse, svd, cholesky_solve, ...).

Samples are well-conditioned (``n I`` added to random matrices), so gradients and finite
differences agree. Functions of a symmetric input (cholesky, eigh) are sampled through
``sym(x)`` so that a perturbation of either triangle is a perturbation of the matrix the
op sees, and those of a Cholesky factor (cholesky_solve, cholesky_inverse) through its
triangle; eigenvectors and singular vectors, whose signs LAPACK builds differ in, are
compared after fixing each column's sign (the first row positive).
"""

import math

import numpy

import retrograd

from ._core import ErrorInput, OpInfo, SampleInput, make_tensor, rng

_TOLS = {"float32": (1e-4, 1e-4)}


def _t(arr, dtype, requires_grad):
    t = retrograd.from_numpy(numpy.asarray(arr, dtype=dtype))
    return t.requires_grad_(True) if requires_grad else t


def _mat(dtype, requires_grad, *shape, shift=None):
    """Uniform in [-1, 1) plus ``shift * I`` (default n): far from singular."""
    n = shape[-1]
    a = rng.uniform(-1, 1, shape)
    if len(shape) >= 2 and shape[-1] == shape[-2]:
        a = a + (n if shift is None else shift) * numpy.eye(n)
    return _t(a, dtype, requires_grad)


def _rand(dtype, requires_grad, *shape):
    return _t(rng.uniform(-1, 1, shape), dtype, requires_grad)


def _lib(x):
    """retrograd or torch, whichever ``x`` belongs to."""
    if isinstance(x, retrograd.Tensor):
        return retrograd
    import torch
    return torch


def _sym(x):
    """A symmetric positive-definite function of any square x."""
    lib = _lib(x)
    n = x.shape[-1]
    return x @ x.mT + n * lib.eye(n, dtype=x.dtype, device=x.device)


def _triangle(f, upper):
    """A Cholesky factor's triangle alone (what the op reads): a perturbation of the other
    one is then no perturbation of its input."""
    return f.triu() if upper else f.tril()


def _fix_signs(lib, u, vh=None):
    """Columns of u (and rows of vh) with the first row of u non-negative."""
    s = u[..., :1, :].sign()
    s = lib.where(s == 0, lib.ones_like(s), s)
    if vh is None:
        return u * s
    return u * s, vh * s[..., :vh.shape[-2]].mT  # (samples: vh has no more rows than u)


def _both(fn):
    """``op`` and ``torch_op`` calling ``fn(lib, *args)`` with the tensors' library."""
    def call(x, *args, **kwargs):
        return fn(_lib(x[0] if isinstance(x, list) else x), x, *args, **kwargs)
    return {"op": call, "torch_op": call}


def _linalg(name):
    """``retrograd.linalg.<name>`` and ``torch.linalg.<name>``."""
    return _both(lambda lib, *a, **k: getattr(lib.linalg, name)(*a, **k))


def _errors(shapes_msgs):
    def gen():
        for shape, dtype, name in shapes_msgs:
            yield ErrorInput(SampleInput(make_tensor(*shape, dtype=dtype)), name=name)
    return gen


_SQUARE_ERRORS = [((2, 3), "float32", "not_square"), ((3,), "float32", "1d"),
                  ((3, 3), "int64", "int")]


# ---- det, slogdet, inv ----------------------------------------------------------------------

def _square_samples(dtype, requires_grad):
    yield SampleInput(_mat(dtype, requires_grad, 3, 3), name="3x3")
    yield SampleInput(_mat(dtype, requires_grad, 2, 3, 3, shift=-3), name="batch_negative")
    yield SampleInput(_mat(dtype, requires_grad, 1, 1), name="1x1")


def _det_samples(dtype, requires_grad):
    yield from _square_samples(dtype, requires_grad)
    # Singular in every LU (a zero column): [[1, 2, 3], [2, 4, 6], [1, 0, 1]] gets det -6.7e-16
    # from MKL's LU on some CPUs and 0 from OpenBLAS's, so the gradient differs by LAPACK.
    yield SampleInput(_t([[1., 0., 3.], [2., 0., 6.], [1., 0., 1.]], dtype, requires_grad),
                      name="singular", nondifferentiable=True)
    yield SampleInput(_t(numpy.zeros((2, 2)), dtype, requires_grad), name="zero",
                      nondifferentiable=True)


def _logdet_samples(dtype, requires_grad):
    yield SampleInput(_mat(dtype, requires_grad, 3, 3), name="3x3")
    yield SampleInput(_mat(dtype, requires_grad, 2, 2, 2, shift=2), name="batch")


def _singular_errors():
    yield from _errors(_SQUARE_ERRORS)()
    z = retrograd.zeros(3, 3)
    yield ErrorInput(SampleInput(z), name="singular")
    yield ErrorInput(SampleInput(retrograd.stack([retrograd.eye(3), z])), name="singular_batch")


# ---- solve ----------------------------------------------------------------------------------

def _solve_samples(dtype, requires_grad):
    yield SampleInput(_mat(dtype, requires_grad, 3, 3), args=(_rand(dtype, requires_grad, 3, 2),),
                      name="matrix")
    yield SampleInput(_mat(dtype, requires_grad, 2, 3, 3),
                      args=(_rand(dtype, requires_grad, 3, 4),), name="broadcast")
    yield SampleInput(_mat(dtype, requires_grad, 3, 3), args=(_rand(dtype, requires_grad, 3),),
                      name="vector")
    yield SampleInput(_mat(dtype, requires_grad, 2, 3, 3),
                      args=(_rand(dtype, requires_grad, 2, 3),), name="batch_vector")
    yield SampleInput(_mat(dtype, requires_grad, 3, 3), args=(_rand(dtype, requires_grad, 2, 3),),
                      kwargs={"left": False}, name="right")


def _solve_errors():
    eye = retrograd.eye(3)
    for b, kw, name in [(make_tensor(4), {}, "vector_size"), (make_tensor(4, 2), {}, "rows"),
                        (make_tensor(3, 2), {"left": False}, "right_cols"),
                        (make_tensor(3, dtype="float64"), {}, "dtype"),
                        (retrograd.tensor(1.), {}, "0d")]:
        yield ErrorInput(SampleInput(eye, args=(b,), kwargs=kw), name=name)
    yield ErrorInput(SampleInput(make_tensor(2, 3), args=(make_tensor(2),)), name="not_square")
    yield ErrorInput(SampleInput(retrograd.zeros(3, 3), args=(make_tensor(3),)), name="singular")
    yield ErrorInput(SampleInput(retrograd.zeros(2, 3, 3), args=(make_tensor(2, 3, 1),)),
                     name="singular_batch")


# ---- cholesky -----------------------------------------------------------------------------

def _chol_samples(dtype, requires_grad):
    yield SampleInput(_rand(dtype, requires_grad, 3, 3), name="3x3")
    yield SampleInput(_rand(dtype, requires_grad, 2, 3, 3), kwargs={"upper": True},
                      name="batch_upper")


def _cholesky_errors():
    yield from _errors(_SQUARE_ERRORS)()
    yield ErrorInput(SampleInput(-retrograd.eye(3)), name="not_pd")
    yield ErrorInput(SampleInput(retrograd.stack([retrograd.eye(2), -retrograd.eye(2)])),
                     name="not_pd_batch")


# ---- qr, eigh, svd ----------------------------------------------------------------------------

def _qr_samples(dtype, requires_grad):
    yield SampleInput(_rand(dtype, requires_grad, 4, 3), name="tall")
    yield SampleInput(_rand(dtype, requires_grad, 2, 3, 3), name="square_batch")
    yield SampleInput(_rand(dtype, requires_grad, 2, 4), name="wide")
    yield SampleInput(_rand(dtype, requires_grad, 3, 3), args=("complete",), name="complete")
    yield SampleInput(_rand(dtype, requires_grad, 2, 4), args=("complete",),
                      name="complete_wide")


def _qr_errors():
    yield ErrorInput(SampleInput(make_tensor(3)), name="1d")
    yield ErrorInput(SampleInput(make_tensor(3, 3, dtype="int64")), name="int")
    yield ErrorInput(SampleInput(make_tensor(3, 3), args=("x",)), name="mode")


def _eigh_fixed(lib, x, UPLO="L"):  # noqa: N803
    lam, v = lib.linalg.eigh(x + x.mT, UPLO)
    return lam, _fix_signs(lib, v)


def _eigh_samples(dtype, requires_grad):
    yield SampleInput(_rand(dtype, requires_grad, 3, 3), name="3x3")
    yield SampleInput(_rand(dtype, requires_grad, 2, 3, 3), args=("U",), name="batch_upper")


def _eigh_errors():
    yield ErrorInput(SampleInput(make_tensor(2, 3)), name="not_square")
    yield ErrorInput(SampleInput(make_tensor(3)), name="1d")
    yield ErrorInput(SampleInput(make_tensor(3, 3, dtype="int64")), NotImplementedError,
                     name="int")
    yield ErrorInput(SampleInput(make_tensor(3, 3), args=("X",)), name="uplo")


def _svd_fixed(lib, x, full_matrices=True):
    u, s, vh = lib.linalg.svd(x, full_matrices=full_matrices)
    u, vh = _fix_signs(lib, u, vh)
    return u, s, vh


def _svd_samples(dtype, requires_grad):
    yield SampleInput(_rand(dtype, requires_grad, 4, 3), args=(False,), name="tall")
    yield SampleInput(_rand(dtype, requires_grad, 2, 3, 4), args=(False,), name="wide_batch")
    yield SampleInput(_rand(dtype, requires_grad, 3, 3), name="square")
    # U's last column spans the complement of A's columns: its sign is arbitrary and the
    # gradient ignores it (as PyTorch's), so finite differences do not apply.
    yield SampleInput(_rand(dtype, requires_grad, 4, 3), name="tall_full",
                      nondifferentiable=True)


def _legacy_svd(lib, x, some=True):
    u, s, v = lib.svd(x, some)
    u, vh = _fix_signs(lib, u, v.mT)
    return u, s, vh.mT


def _svdvals_samples(dtype, requires_grad):
    yield SampleInput(_rand(dtype, requires_grad, 4, 3), name="tall")
    yield SampleInput(_rand(dtype, requires_grad, 2, 2, 3), name="wide_batch")


def _svd_errors():
    yield ErrorInput(SampleInput(make_tensor(3)), name="1d")
    yield ErrorInput(SampleInput(make_tensor(3, 3, dtype="int64")), name="int")


# ---- pinv, matrix_exp, solve_triangular ---------------------------------------------------

def _pinv_samples(dtype, requires_grad):
    yield SampleInput(_rand(dtype, requires_grad, 4, 3), name="tall")
    yield SampleInput(_rand(dtype, requires_grad, 2, 2, 3), name="wide_batch")
    yield SampleInput(_mat(dtype, requires_grad, 3, 3), kwargs={"rtol": 0.01}, name="rtol")
    yield SampleInput(_t(numpy.diag([2., 1., 1e-9]), dtype, False), name="cutoff")


def _pinverse_samples(dtype, requires_grad):
    yield SampleInput(_rand(dtype, requires_grad, 4, 3), name="tall")
    yield SampleInput(_mat(dtype, requires_grad, 3, 3), args=(0.01,), name="rcond")


def _pinv_hermitian(lib, x, **kw):
    return lib.linalg.pinv(x + x.mT, hermitian=True, **kw)


def _pinv_errors():
    yield ErrorInput(SampleInput(make_tensor(3)), name="1d")
    yield ErrorInput(SampleInput(make_tensor(3, 3, dtype="int64")), name="int")


def _exp_samples(dtype, requires_grad):
    yield SampleInput(_t(rng.uniform(-1, 1, (3, 3)), dtype, requires_grad), name="3x3")
    yield SampleInput(_t(rng.uniform(-1, 1, (2, 2, 2)), dtype, requires_grad), name="batch")


def _small_exp_samples(dtype, requires_grad):
    yield SampleInput(_t(rng.uniform(-1, 1, (2, 2)), dtype, requires_grad), name="2x2")


def _tri_samples(dtype, requires_grad):
    yield SampleInput(_mat(dtype, requires_grad, 3, 3), args=(_rand(dtype, requires_grad, 3, 2),),
                      kwargs={"upper": True}, name="upper")
    yield SampleInput(_mat(dtype, requires_grad, 2, 3, 3),
                      args=(_rand(dtype, requires_grad, 2, 3),),
                      kwargs={"upper": False, "left": False}, name="lower_right")
    yield SampleInput(_mat(dtype, requires_grad, 3, 3), args=(_rand(dtype, requires_grad, 3, 3),),
                      kwargs={"upper": False, "unitriangular": True}, name="unit")


def _tri_errors():
    eye = retrograd.eye(3)
    yield ErrorInput(SampleInput(make_tensor(2, 3), args=(make_tensor(2, 2),),
                                 kwargs={"upper": True}), name="not_square")
    yield ErrorInput(SampleInput(eye, args=(make_tensor(3),), kwargs={"upper": True}),
                     name="b_1d")
    yield ErrorInput(SampleInput(eye, args=(make_tensor(4, 2),), kwargs={"upper": True}),
                     name="rows")
    yield ErrorInput(SampleInput(eye, args=(make_tensor(2, 4),),
                                 kwargs={"upper": True, "left": False}), name="cols")


# ---- cross, vecdot, multi_dot, matrix_power ---------------------------------------------------

def _cross_samples(dtype, requires_grad):
    yield SampleInput(_rand(dtype, requires_grad, 4, 3), args=(_rand(dtype, requires_grad, 4, 3),),
                      name="rows")
    yield SampleInput(_rand(dtype, requires_grad, 2, 3), args=(_rand(dtype, requires_grad, 1, 3),),
                      name="broadcast")
    yield SampleInput(_rand(dtype, requires_grad, 3, 4), args=(_rand(dtype, requires_grad, 3, 4),),
                      kwargs={"dim": 0}, name="dim0")


def _cross_errors():
    yield ErrorInput(SampleInput(make_tensor(2, 4), args=(make_tensor(2, 4),)), name="len4")
    yield ErrorInput(SampleInput(make_tensor(3, 3), args=(make_tensor(3),)), name="ndim")


def _vecdot_samples(dtype, requires_grad):
    yield SampleInput(_rand(dtype, requires_grad, 4, 3), args=(_rand(dtype, requires_grad, 4, 3),),
                      name="rows")
    yield SampleInput(_rand(dtype, requires_grad, 3, 4), args=(_rand(dtype, requires_grad, 3, 1),),
                      kwargs={"dim": 0}, name="dim0_broadcast")


def _multi_dot_samples(dtype, requires_grad):
    r = lambda *s: _rand(dtype, requires_grad, *s)  # noqa: E731
    yield SampleInput([r(2, 3), r(3, 4), r(4, 5)], name="three")
    yield SampleInput([r(3), r(3, 4), r(4, 2), r(2)], name="vector_ends")
    yield SampleInput([r(5, 1), r(1, 4)], name="two")


def _multi_dot_errors():
    yield ErrorInput(SampleInput([make_tensor(3, 3)]), name="one")
    yield ErrorInput(SampleInput([make_tensor(3, 2), make_tensor(3, 2)]), name="sizes")
    yield ErrorInput(SampleInput([make_tensor(3, 2, 2), make_tensor(2, 2)]), name="first_3d")
    yield ErrorInput(SampleInput([make_tensor(2, 2), make_tensor(2, 2, 2), make_tensor(2, 2)]),
                     name="middle_3d")


def _power_samples(dtype, requires_grad):
    yield SampleInput(_mat(dtype, requires_grad, 3, 3, shift=1), args=(3,), name="cube")
    yield SampleInput(_mat(dtype, requires_grad, 2, 3, 3), args=(-2,), name="negative_batch")
    yield SampleInput(_mat(dtype, requires_grad, 3, 3), args=(1,), name="one")


def _power_errors():
    yield ErrorInput(SampleInput(make_tensor(2, 3), args=(2,)), name="not_square")
    yield ErrorInput(SampleInput(make_tensor(3, 3), args=(1.5,)), TypeError, name="float_n")


# ---- norms, cond, rank ------------------------------------------------------------------------

def _matrix_norm_samples(dtype, requires_grad):
    for ord in ("fro", "nuc", 2, -2, 1, -1, math.inf, -math.inf):
        yield SampleInput(_rand(dtype, requires_grad, 2, 3, 4), args=(ord,), name=f"ord_{ord}")
    yield SampleInput(_rand(dtype, requires_grad, 3, 2, 4), args=(1, (0, 2), True),
                      name="dims_keepdim")
    yield SampleInput(_rand(dtype, requires_grad, 3, 2, 4), args=("nuc", (2, 0), True),
                      name="nuc_keepdim")


def _matrix_norm_errors():
    yield ErrorInput(SampleInput(make_tensor(3)), name="1d")
    yield ErrorInput(SampleInput(make_tensor(3, 3), args=(3,)), name="ord")
    yield ErrorInput(SampleInput(make_tensor(2, 3, 3), kwargs={"dim": (1, -2)}), name="same_dims")
    yield ErrorInput(SampleInput(make_tensor(2, 3, 3), kwargs={"dim": (0,)}), name="one_dim")


def _vector_norm_samples(dtype, requires_grad):
    yield SampleInput(_rand(dtype, requires_grad, 3, 4), name="all")
    yield SampleInput(_rand(dtype, requires_grad, 3, 4), args=(1, 1, True), name="l1_keepdim")
    yield SampleInput(_rand(dtype, requires_grad, 2, 3, 4), args=(3, (0, 2)), name="p3_dims")


def _norm_samples(dtype, requires_grad):
    yield SampleInput(_rand(dtype, requires_grad, 3, 4), name="default")
    yield SampleInput(_rand(dtype, requires_grad, 3, 4), args=("nuc",), name="nuc")
    yield SampleInput(_rand(dtype, requires_grad, 3, 4), args=(math.inf,), name="matrix_inf")
    yield SampleInput(_rand(dtype, requires_grad, 4), args=(1,), name="vector_l1")
    yield SampleInput(_rand(dtype, requires_grad, 2, 3, 4), args=(2, (1, 2)), name="dims2")
    yield SampleInput(_rand(dtype, requires_grad, 2, 3, 4), args=(None, 1, True), name="dim1")


def _norm_errors():
    yield ErrorInput(SampleInput(make_tensor(2, 2, 3), args=(2,)), name="3d_ord")


def _cond_samples(dtype, requires_grad):
    yield SampleInput(_mat(dtype, requires_grad, 3, 3), name="2")
    yield SampleInput(_rand(dtype, requires_grad, 2, 4, 3), args=(-2,), name="minus2_batch")
    yield SampleInput(_mat(dtype, requires_grad, 3, 3), args=("fro",), name="fro")


def _rank_samples(dtype, requires_grad):
    yield SampleInput(_rand(dtype, False, 2, 4, 3), name="full")
    low = rng.uniform(-1, 1, (4, 1)) @ rng.uniform(-1, 1, (1, 3))
    yield SampleInput(_t(low, dtype, False), name="rank1")
    yield SampleInput(_t(numpy.diag([1., 0.1, 0.001]), dtype, False), kwargs={"atol": 0.01},
                      name="atol")
    yield SampleInput(_t(numpy.diag([1., 0.1, 0.001]), dtype, False),
                      kwargs={"rtol": 0.05, "hermitian": True}, name="rtol_hermitian")


# ---- small composites ---------------------------------------------------------------------

def _vander_samples(dtype, requires_grad):
    yield SampleInput(_rand(dtype, requires_grad, 4), name="square")
    yield SampleInput(_rand(dtype, requires_grad, 2, 3), kwargs={"N": 5}, name="batch_N")


def _diagonal_samples(dtype, requires_grad):
    yield SampleInput(_rand(dtype, requires_grad, 2, 3, 4), name="default")
    yield SampleInput(_rand(dtype, requires_grad, 3, 4, 2), kwargs={"offset": 1, "dim1": 0,
                                                                    "dim2": 1}, name="offset")


def _tensorinv_samples(dtype, requires_grad):
    yield SampleInput(_t(rng.uniform(-1, 1, (4, 2, 2)) + 2 * numpy.eye(4).reshape(4, 2, 2),
                         dtype, requires_grad), kwargs={"ind": 1}, name="ind1")


def _tensorsolve_samples(dtype, requires_grad):
    a = rng.uniform(-1, 1, (2, 3, 6)) + 3 * numpy.eye(6).reshape(2, 3, 6)
    yield SampleInput(_t(a, dtype, requires_grad), args=(_rand(dtype, requires_grad, 2, 3),),
                      name="6x6")


# ---- the older top-level names ------------------------------------------------------------

def _cholesky_solve_samples(dtype, requires_grad):
    for upper in (False, True):
        u = _mat(dtype, False, 3, 3)._data
        u = numpy.triu(u) if upper else numpy.tril(u)
        yield SampleInput(_rand(dtype, requires_grad, 3, 2),
                          args=(_t(u, dtype, requires_grad), upper), name=f"upper_{upper}")


def _cholesky_inverse_samples(dtype, requires_grad):
    yield SampleInput(_t(numpy.tril(_mat(dtype, False, 3, 3)._data), dtype, requires_grad),
                      name="lower")
    yield SampleInput(_t(numpy.triu(_mat(dtype, False, 3, 3)._data), dtype, requires_grad),
                      args=(True,), name="upper")


def _triangular_solve_samples(dtype, requires_grad):
    yield SampleInput(_rand(dtype, requires_grad, 3, 2), args=(_mat(dtype, requires_grad, 3, 3),),
                      name="upper")
    yield SampleInput(_rand(dtype, requires_grad, 2, 3, 2),
                      args=(_mat(dtype, requires_grad, 3, 3), False, True), name="lower_t")
    yield SampleInput(_rand(dtype, requires_grad, 3, 1), args=(_mat(dtype, requires_grad, 3, 3),),
                      kwargs={"unitriangular": True}, name="unit")


def _legacy_qr_samples(dtype, requires_grad):
    yield SampleInput(_rand(dtype, requires_grad, 4, 3), name="some")
    yield SampleInput(_rand(dtype, requires_grad, 3, 3), args=(False,), name="complete")


def _legacy_svd_samples(dtype, requires_grad):
    yield SampleInput(_rand(dtype, requires_grad, 4, 3), name="some")
    yield SampleInput(_rand(dtype, requires_grad, 3, 3), args=(False,), name="full_square")


def _legacy_cross_samples(dtype, requires_grad):
    yield SampleInput(_rand(dtype, requires_grad, 3, 4), args=(_rand(dtype, requires_grad, 3, 4),),
                      kwargs={"dim": 0}, name="dim0")


_F = {"tolerances": _TOLS}

OPS = [
    OpInfo("linalg.det", _det_samples, **_linalg("det"), **_F,
           error_inputs=_errors(_SQUARE_ERRORS)),
    OpInfo("linalg.slogdet", _square_samples, **_linalg("slogdet"), **_F),
    OpInfo("linalg.inv", _square_samples, **_linalg("inv"), **_F,
           error_inputs=_singular_errors),
    OpInfo("linalg.inv_ex", _square_samples, **_linalg("inv_ex"), **_F),
    OpInfo("linalg.solve", _solve_samples, **_linalg("solve"), **_F,
           error_inputs=_solve_errors),
    OpInfo("linalg.solve_ex", _solve_samples, **_linalg("solve_ex"), **_F),
    OpInfo("linalg.cholesky", _chol_samples,
           **_both(lambda lib, x, **k: lib.linalg.cholesky(_sym(x), **k)), **_F),
    OpInfo("linalg.cholesky", lambda d, r: iter([]), variant="errors", **_linalg("cholesky"),
           error_inputs=_cholesky_errors),
    OpInfo("linalg.cholesky_ex", _chol_samples,
           **_both(lambda lib, x, **k: lib.linalg.cholesky_ex(_sym(x), **k)), **_F),
    OpInfo("linalg.qr", _qr_samples, **_linalg("qr"), **_F, error_inputs=_qr_errors),
    OpInfo("linalg.eigh", _eigh_samples, **_both(_eigh_fixed), **_F),
    OpInfo("linalg.eigh", lambda d, r: iter([]), variant="errors", **_linalg("eigh"),
           error_inputs=_eigh_errors),
    OpInfo("linalg.eigvalsh", _eigh_samples,
           **_both(lambda lib, x, *a: lib.linalg.eigvalsh(x + x.mT, *a)), **_F),
    OpInfo("linalg.svd", _svd_samples, **_both(_svd_fixed), **_F),
    OpInfo("linalg.svd", lambda d, r: iter([]), variant="errors", **_linalg("svd"),
           error_inputs=_svd_errors),
    OpInfo("linalg.svdvals", _svdvals_samples, **_linalg("svdvals"), **_F),
    OpInfo("linalg.pinv", _pinv_samples, **_linalg("pinv"), **_F, error_inputs=_pinv_errors),
    OpInfo("linalg.pinv", _exp_samples, variant="hermitian", **_both(_pinv_hermitian), **_F),
    # Second order runs SciPy's expm on 4n x 4n blocks: one small sample for gradgradcheck.
    OpInfo("linalg.matrix_exp", _exp_samples, **_linalg("matrix_exp"), **_F,
           supports_gradgrad=False),
    OpInfo("linalg.matrix_exp", _small_exp_samples, variant="gradgrad",
           **_linalg("matrix_exp"), **_F,
           error_inputs=_errors(_SQUARE_ERRORS)),
    OpInfo("linalg.solve_triangular", _tri_samples, **_linalg("solve_triangular"), **_F,
           error_inputs=_tri_errors),
    OpInfo("linalg.cross", _cross_samples, **_linalg("cross"), error_inputs=_cross_errors),
    OpInfo("linalg.vecdot", _vecdot_samples, **_linalg("vecdot")),
    OpInfo("linalg.multi_dot", _multi_dot_samples,
           **_both(lambda lib, xs: lib.linalg.multi_dot(xs)), **_F),
    OpInfo("linalg.multi_dot", lambda d, r: iter([]), variant="errors",
           op=lambda xs: retrograd.linalg.multi_dot(xs),
           torch_op=lambda xs: __import__("torch").linalg.multi_dot(xs),
           error_inputs=_multi_dot_errors),
    OpInfo("linalg.matrix_power", _power_samples, **_linalg("matrix_power"), **_F,
           error_inputs=_power_errors),
    OpInfo("linalg.matrix_norm", _matrix_norm_samples, **_linalg("matrix_norm"), **_F,
           error_inputs=_matrix_norm_errors),
    OpInfo("linalg.vector_norm", _vector_norm_samples, **_linalg("vector_norm"), **_F),
    OpInfo("linalg.norm", _norm_samples, **_linalg("norm"), **_F, error_inputs=_norm_errors),
    # PyTorch's cond computes s_max / s_min with other view ops (its grad_fn differs).
    OpInfo("linalg.cond", _cond_samples, **_linalg("cond"), **_F, compare_grad_with_torch=False),
    OpInfo("linalg.matrix_rank", _rank_samples, **_linalg("matrix_rank"), supports_grad=False),
    OpInfo("linalg.vander", _vander_samples, **_linalg("vander")),
    OpInfo("linalg.diagonal", _diagonal_samples, **_linalg("diagonal")),
    # PyTorch reshapes with _reshape_alias (ReshapeAliasBackward0), retrograd with view.
    OpInfo("linalg.tensorinv", _tensorinv_samples, **_linalg("tensorinv"), **_F,
           compare_grad_with_torch=False),
    OpInfo("linalg.tensorsolve", _tensorsolve_samples, **_linalg("tensorsolve"), **_F,
           compare_grad_with_torch=False),
    OpInfo("det", _det_samples, **_F),
    OpInfo("det", _square_samples, variant="method", method=True, **_F),
    OpInfo("logdet", _logdet_samples, **_F),
    OpInfo("slogdet", _square_samples, **_F),
    OpInfo("inverse", _square_samples, **_F),
    OpInfo("inverse", _square_samples, variant="method", method=True, **_F),
    OpInfo("pinverse", _pinverse_samples, **_F),
    OpInfo("svd", _legacy_svd_samples, **_both(lambda lib, x, *a: _legacy_svd(lib, x, *a)),
           **_F),
    OpInfo("qr", _legacy_qr_samples, **_F),
    OpInfo("cholesky", _chol_samples, **_both(lambda lib, x, **k: lib.cholesky(_sym(x), **k)),
           **_F),
    OpInfo("cholesky_solve", _cholesky_solve_samples,
           **_both(lambda lib, b, f, upper: lib.cholesky_solve(b, _triangle(f, upper), upper)),
           **_F),
    OpInfo("cholesky_inverse", _cholesky_inverse_samples,
           **_both(lambda lib, f, upper=False: lib.cholesky_inverse(_triangle(f, upper), upper)),
           **_F),
    OpInfo("triangular_solve", _triangular_solve_samples, **_F),
    OpInfo("matrix_power", _power_samples, method=True, **_F),
    OpInfo("matrix_exp", _exp_samples, supports_gradgrad=False, **_F),
    OpInfo("cross", _legacy_cross_samples, **_F),
]


def _lstsq_samples(dtype, requires_grad):
    r = lambda *s: _rand(dtype, requires_grad, *s)  # noqa: E731
    yield SampleInput(r(4, 3), args=(r(4, 2),), name="tall")
    yield SampleInput(r(4, 3), args=(r(4, 2),), kwargs={"driver": "gelsd"}, name="gelsd")
    yield SampleInput(r(2, 4, 3), args=(r(2, 4),), kwargs={"driver": "gels"}, name="vector")
    yield SampleInput(r(2, 3), args=(r(2, 2),), kwargs={"driver": "gelss"}, name="wide")
    yield SampleInput(_mat(dtype, requires_grad, 3, 3), args=(r(3, 1),), name="square")


def _lstsq_errors():
    yield ErrorInput(SampleInput(make_tensor(4, 3), args=(make_tensor(3, 2),)), name="rows")
    yield ErrorInput(SampleInput(make_tensor(4, 3), args=(make_tensor(4, 2),),
                                 kwargs={"driver": "foo"}), name="driver")
    yield ErrorInput(SampleInput(make_tensor(4, 3), args=(make_tensor(4, 2, dtype="float64"),)),
                     name="dtype")
    yield ErrorInput(SampleInput(make_tensor(3), args=(make_tensor(3),)), name="1d")


OPS.append(OpInfo("linalg.lstsq", _lstsq_samples, **_linalg("lstsq"), **_F,
                  error_inputs=_lstsq_errors))


def _lu_samples(dtype, requires_grad):
    yield SampleInput(_mat(dtype, requires_grad, 3, 3, shift=0.5), name="square")
    yield SampleInput(_rand(dtype, requires_grad, 2, 3, 3), name="batch")
    yield SampleInput(_rand(dtype, requires_grad, 3, 5), name="wide")
    yield SampleInput(_rand(dtype, requires_grad, 5, 3), name="tall")


def _lu_errors():
    yield ErrorInput(SampleInput(make_tensor(3)), name="1d")
    yield ErrorInput(SampleInput(make_tensor(3, 3, dtype="int64")), NotImplementedError,
                     name="int")
    yield ErrorInput(SampleInput(make_tensor(3, 3), kwargs={"pivot": False}), name="no_pivot")


def _lu_factor_errors():
    yield from _lu_errors()
    yield ErrorInput(SampleInput(retrograd.zeros(3, 3)), name="singular")


def _lu_solve_samples(dtype, requires_grad):
    for kw in ({}, {"adjoint": True}, {"left": False}, {"left": False, "adjoint": True}):
        lu, piv = retrograd.linalg.lu_factor(_rand(dtype, False, 2, 3, 3))
        b = _rand(dtype, requires_grad, 3, 2) if kw.get("left", True) else \
            _rand(dtype, requires_grad, 2, 3)
        yield SampleInput(lu.requires_grad_(requires_grad), args=(piv, b), kwargs=kw,
                          name="_".join(kw) or "plain")


def _lu_solve_errors():
    lu, piv = retrograd.linalg.lu_factor(make_tensor(3, 3, dtype="float64"))
    yield ErrorInput(SampleInput(lu, args=(piv, make_tensor(4, 2, dtype="float64"))),
                     name="rows")
    yield ErrorInput(SampleInput(lu, args=(piv, make_tensor(3, 2))), name="dtype")


def _lu_unpack_samples(dtype, requires_grad):
    for shape in ((3, 3), (2, 3, 5), (5, 3)):
        lu, piv = retrograd.linalg.lu_factor(_rand(dtype, False, *shape))
        yield SampleInput(lu.requires_grad_(requires_grad), args=(piv,), name=str(shape))


OPS += [
    OpInfo("linalg.lu", _lu_samples, **_linalg("lu"), **_F, error_inputs=_lu_errors),
    OpInfo("linalg.lu_factor", _lu_samples, **_linalg("lu_factor"), **_F,
           error_inputs=_lu_factor_errors),
    OpInfo("linalg.lu_factor_ex", _lu_samples, **_linalg("lu_factor_ex"), **_F),
    OpInfo("linalg.lu_solve", _lu_solve_samples, **_linalg("lu_solve"), **_F,
           error_inputs=_lu_solve_errors),
    OpInfo("lu_unpack", _lu_unpack_samples, **_F),
]


def _norm_nuc_samples(dtype, requires_grad):
    yield SampleInput(_rand(dtype, requires_grad, 3, 4), args=("nuc",), name="matrix")
    yield SampleInput(_rand(dtype, requires_grad, 2, 3, 4), args=("nuc", (0, 2), True),
                      name="dims_keepdim")


def _norm_nuc_errors():
    yield ErrorInput(SampleInput(make_tensor(2, 3, 4), args=("nuc",)), name="3d")


OPS.append(OpInfo("norm", _norm_nuc_samples, variant="nuc", **_F,
                  error_inputs=_norm_nuc_errors))


def _hh_samples(dtype, requires_grad):
    r = lambda *s: _rand(dtype, requires_grad, *s)  # noqa: E731
    yield SampleInput(r(4, 3), args=(r(2),), name="tall")
    yield SampleInput(r(2, 3, 3), args=(r(2, 3),), name="square_batch")


def _hh_errors():
    for sa, st, name in (((2, 3), (2,), "wide"), ((3, 2), (3,), "tau_long"),
                         ((3,), (1,), "1d"), ((2, 3, 2), (3, 1), "batch"),
                         ((2, 3, 2), (1,), "tau_ndim")):
        yield ErrorInput(SampleInput(make_tensor(*sa), args=(make_tensor(*st),)), name=name)


OPS += [
    OpInfo("linalg.householder_product", _hh_samples, **_linalg("householder_product"), **_F,
           error_inputs=_hh_errors),
    OpInfo("orgqr", _hh_samples, **_F),
]
