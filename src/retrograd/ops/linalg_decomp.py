"""Decompositions, inverses and solvers: ``torch.linalg`` (det, slogdet, inv, solve,
cholesky, qr, eigh, svd, pinv, matrix_exp, solve_triangular, cross, ...) and PyTorch's
older top-level names (``torch.det``, ``torch.svd``, ``torch.cholesky_solve``, ...).

Each primitive is one batched LAPACK call through ``xp.linalg`` (NumPy's gufuncs loop
over the leading dims in C); its backward is PyTorch's FunctionsManual formula, written
with ``xp.linalg`` so that under ``create_graph`` the rule runs on the differentiable
facade and records these same ops. Real float32/float64 only: complex input raises.

LAPACK's failures (a singular matrix, a matrix that is not positive-definite) are found
in the one batched call; only then is each matrix refactored alone, to name the batch
element and pivot in PyTorch's :class:`LinAlgError` message.
"""

import math
import warnings

from .. import _autocast, _dtype, _observe
from .._dtype import is_float, kind_of, np_finfo, dtype_arg
from .. import return_types as rt
from .._creation import eye, ones, zeros
from .._tensor import Tensor, wrap
from ..autograd._batched import Batched
from ..backend import get_array_module
from ..backend.functions import functions
from . import _tensor_xp
from ._registry import FUNCTIONS, _pretty, apply, defop, register
from .joining import cat

__all__ = ["LinAlgError"]


class LinAlgError(RuntimeError):
    """A matrix a routine cannot factor (``torch.linalg.LinAlgError``): singular, or not
    positive-definite. A RuntimeError, as in PyTorch."""


# ---- shared checks and helpers --------------------------------------------------------------

def _mT(xp, x):
    return xp.swapaxes(x, -1, -2)


def _eye(xp, n, like):
    return xp.eye(n, dtype=like.dtype)


def _trace(xp, x):
    return xp.sum(xp.diagonal(x, 0, -2, -1), -1)


def _solve(xp, a, b):
    """``a^{-1} b``, batches broadcast (NumPy 2's solve, by the backend's functions)."""
    return functions(xp).solve(a, b)


def _rsolve(xp, a, b):
    """``b a^{-1}``."""
    return _mT(xp, _solve(xp, _mT(xp, a), _mT(xp, b)))


def _need_dims(t, fn, name="A", prefix=""):
    if t._data.ndim < 2:
        raise RuntimeError(f"{prefix}{fn}: The input tensor {name} must have at least 2 "
                           f"dimensions.")


def _check_float(t, fn, name="A"):
    kind = kind_of(t._data.dtype)
    if kind == "c":
        raise NotImplementedError(f"{fn}: complex input is not supported by retrograd")
    if kind != "f":
        raise RuntimeError(f"{fn}: Expected a floating point or complex tensor as input. "
                           f"Got {_pretty(t._data.dtype)}")


def _check_square(t, fn, name="A", dtype=True):
    """PyTorch's squareCheckInputs then checkFloatingOrComplex."""
    _need_dims(t, fn, name)
    s = t._data.shape
    if s[-1] != s[-2]:
        raise RuntimeError(f"{fn}: {name} must be batches of square matrices, but they are "
                           f"{s[-2]} by {s[-1]} matrices")
    if dtype:
        _check_float(t, fn, name)


def _batch_prefix(shape, flat_index):
    if len(shape) <= 2:
        return ""
    return f"(Batch element {flat_index}): "


def _first_failure(xp, a, kind):
    """(flat batch index, LAPACK info) of the first matrix ``kind`` ('lu' or 'cholesky')
    fails on: the error path only, one matrix at a time."""
    infos = functions(xp).factor_info(a, kind).reshape(-1).tolist()
    return next(((i, v) for i, v in enumerate(infos) if v), (None, 0))


def _singular_error(fn, shape, idx, info):
    if fn == "linalg.inv":
        return LinAlgError(f"{fn}: {_batch_prefix(shape, idx)}The diagonal element {info} is "
                           f"zero, the inversion could not be completed because the input "
                           f"matrix is singular.")
    return LinAlgError(f"torch.linalg.solve: {_batch_prefix(shape, idx)}The solver failed "
                       f"because the input matrix is singular.")


def _no_info(xp, a):
    return xp.zeros(a.shape[:-2], dtype=_dtype.int32.np)


# ---- det, slogdet -----------------------------------------------------------------------------

def _prod_others(xp, s):
    """``prod_{j != i} s_j`` for each i (PyTorch's prod_safe_zeros_backward): exact with zeros."""
    k = s.shape[-1]
    m = xp.where(xp.eye(k, dtype=bool), 1, xp.expand_dims(s, -2))
    return xp.cumprod(m, -1)[..., -1]


def _det_grad(xp, grad, A, result):
    """grad * det * A^{-T}, as PyTorch: a plain backward gives 0 at a singular matrix
    (det == 0); under create_graph the cofactors come from the SVD everywhere
    (``U diag(prod_{j != i} s_j) Vh`` times ``det(U) det(Vh)``), defined at singular
    matrices too and differentiable again."""
    if isinstance(A, Tensor):
        u, s, vh = xp.linalg.svd(A)
        alpha = grad * xp.linalg.det(u) * xp.linalg.det(vh)
        d = _prod_others(xp, s) * xp.expand_dims(alpha, -1)
        return xp.matmul(u * xp.expand_dims(d, -2), vh)
    g = xp.expand_dims(xp.expand_dims(grad * result, -1), -1)
    return g * _mT(xp, xp.linalg.inv(_regular(xp, A, result)))


def _regular(xp, A, det):
    """A with its singular matrices (det == 0) replaced by I: their terms are 0 anyway."""
    singular = det == 0
    if not functions(xp).any_true(singular):  # (the where below would give A itself)
        return A
    return xp.where(xp.expand_dims(xp.expand_dims(singular, -1), -1),
                    xp.eye(A.shape[-1], dtype=A.dtype), A)


def _det_jvp(xp, A_t, A, result):
    """``det * tr(A^{-1} dA)``; 0 at a singular matrix, as PyTorch's forward mode."""
    return result * _trace(xp, _solve(xp, _regular(xp, A, result), A_t))


_det = defop("linalg_det", lambda xp, A: xp.linalg.det(A), vjp={"A": _det_grad},
             jvp=_det_jvp)

_slogdet = defop(
    "linalg_slogdet", lambda xp, A: tuple(xp.linalg.slogdet(A)), outputs=("sign", "logabsdet"),
    vjp={"A": lambda xp, grads, A:
         xp.expand_dims(xp.expand_dims(grads[1], -1), -1) * _mT(xp, xp.linalg.inv(A))},
    jvp=lambda xp, A_t, A: (None, _trace(xp, _solve(xp, A, A_t))))


def det(A, *, out=None):
    """Determinant of a (batch of) square matrices; at singular matrices the gradient is
    the cofactor matrix, as in PyTorch.

    >>> retrograd.linalg.det(retrograd.tensor([[2., 1.], [1., 3.]]))
    tensor(5.)
    """
    _no_out(out, "linalg.det")
    _check_square(A, "linalg.det")
    return apply(_det, (A,))


def slogdet(A, *, out=None):
    """``(sign, logabsdet)`` of the determinant: no overflow for large matrices."""
    _no_out(out, "linalg.slogdet")
    _check_square(A, "linalg.slogdet")
    return rt.linalg_slogdet(apply(_slogdet, (A,)))


def logdet(input):
    """``log(det)``: NaN for a negative determinant, -inf for a singular matrix."""
    _check_square(input, "linalg.slogdet")
    sign, logabs = apply(_slogdet, (input,))
    return FUNCTIONS["where"](sign == -1, math.nan, logabs)


# ---- inv ------------------------------------------------------------------------------------

def _inv_fwd(xp, A, check_errors):
    try:
        return xp.linalg.inv(A), _no_info(xp, A)
    except xp.linalg.LinAlgError:
        idx, info = _first_failure(xp, A, "lu")
        if check_errors:
            raise _singular_error("linalg.inv", A.shape, idx, info) from None
        return xp.full(A.shape, math.nan, dtype=A.dtype), functions(xp).factor_info(A, "lu")


def _inv_grad(xp, grad, inverse):
    t = _mT(xp, inverse)
    return -xp.matmul(xp.matmul(t, grad), t)


_inv_ex = defop("linalg_inv_ex", _inv_fwd, outputs=("inverse", "info"), nondiff_outputs=("info",),
                vjp={"A": _inv_grad},
                jvp=lambda xp, A_t, inverse:
                (-xp.matmul(xp.matmul(inverse, A_t), inverse), None))


@_autocast.policy("linalg_inv_ex")
def inv_ex(A, *, check_errors=False, out=None):
    """``(inverse, info)``: info > 0 marks a singular matrix instead of raising."""
    _no_out(out, "linalg.inv_ex")
    _check_square(A, "linalg.inv")
    return rt.linalg_inv_ex(apply(_inv_ex, (A,), (check_errors,)))


@_autocast.policy("linalg_inv")
def inv(A, *, out=None):
    """Inverse of a (batch of) square matrices; :class:`LinAlgError` when singular."""
    _no_out(out, "linalg.inv")
    _check_square(A, "linalg.inv")
    return apply(_inv_ex, (A,), (True,))[0]


# ---- solve ----------------------------------------------------------------------------------

def _solve_fwd(xp, A, B, left, vector, check_errors):
    if vector:
        B = xp.expand_dims(B, -1)
    try:
        x = _solve(xp, A, B) if left else _rsolve(xp, A, B)
        info = xp.zeros(x.shape[:-2], dtype=_dtype.int32.np)
    except xp.linalg.LinAlgError:
        full = xp.broadcast_to(A, xp.broadcast_shapes(A.shape[:-2], B.shape[:-2])
                               + A.shape[-2:])
        idx, info = _first_failure(xp, full, "lu")
        if check_errors:
            raise _singular_error("linalg.solve", full.shape, idx, info) from None
        n = A.shape[-1]
        x = xp.full(full.shape[:-2] + ((n, B.shape[-1]) if left else (B.shape[-2], n)),
                    math.nan, dtype=A.dtype)
        info = functions(xp).factor_info(full, "lu")
    return (x[..., 0] if vector else x), info


def _solve_grad_B(xp, grad, A, left, vector):
    g = xp.expand_dims(grad, -1) if vector else grad
    gb = _solve(xp, _mT(xp, A), g) if left else _rsolve(xp, _mT(xp, A), g)
    return gb[..., 0] if vector else gb


def _solve_grad_A(xp, grad, A, result, left, vector):
    gb = _solve_grad_B(xp, grad, A, left, vector)
    if vector:
        return -xp.expand_dims(gb, -1) * xp.expand_dims(result, -2)
    return -xp.matmul(gb, _mT(xp, result)) if left else -xp.matmul(_mT(xp, result), gb)


def _solve_jvp(xp, A_t, B_t, A, result, left, vector):
    x = xp.expand_dims(result, -1) if vector else result
    rhs = None
    if B_t is not None:
        rhs = xp.expand_dims(B_t, -1) if vector else B_t
    if A_t is not None:
        d = xp.matmul(A_t, x) if left else xp.matmul(x, A_t)
        rhs = -d if rhs is None else rhs - d
    t = _solve(xp, A, rhs) if left else _rsolve(xp, A, rhs)
    return (t[..., 0] if vector else t), None


_solve_ex = defop("linalg_solve_ex", _solve_fwd, outputs=("result", "info"),
                  nondiff_outputs=("info",), vjp={"A": _solve_grad_A, "B": _solve_grad_B},
                  jvp=_solve_jvp)


def _solve_args(A, B, left, fn="linalg.solve"):
    _check_square(A, fn)
    _check_float(A, fn)
    if A._data.dtype != B._data.dtype:
        raise RuntimeError(f"{fn}: Expected A and B to have the same dtype, but found A of "
                           f"type {_pretty(A._data.dtype)} and B of type "
                           f"{_pretty(B._data.dtype)} instead")
    sa, sb = A._data.shape, B._data.shape
    vector = left and (len(sb) == 1 or (len(sb) == len(sa) - 1 and sb == sa[:-1]))
    if not sb:
        raise RuntimeError(f"{fn}: The input tensor B must have at least 2 dimensions.")
    n = sa[-1]
    rows, cols = (sb[-1], 1) if vector or len(sb) == 1 else sb[-2:]
    if (rows if left else cols) != n:
        raise RuntimeError(f"{fn}: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({n}x{n} and {rows}x{cols})")
    return vector


def solve_ex(A, B, *, left=True, check_errors=False, out=None):
    """``(result, info)`` of :func:`solve`; info > 0 marks a singular matrix."""
    _no_out(out, "linalg.solve_ex")
    vector = _solve_args(A, B, left)
    return rt.linalg_solve_ex(apply(_solve_ex, (A, B), (left, vector, check_errors)))


@_autocast.policy("linalg_solve")
def solve(A, B, *, left=True, out=None):
    """``X`` with ``A X = B`` (``X A = B`` when ``left=False``); B may be a vector (batch);
    batch dims broadcast.

    >>> retrograd.linalg.solve(retrograd.tensor([[2., 0.], [0., 4.]]), retrograd.ones(2))
    tensor([0.5000, 0.2500])
    """
    _no_out(out, "linalg.solve")
    vector = _solve_args(A, B, left)
    return apply(_solve_ex, (A, B), (left, vector, True))[0]


# ---- cholesky -------------------------------------------------------------------------------

def _chol_fwd(xp, A, upper, check_errors, fn):
    src = _mT(xp, A) if upper else A  # upper=True reads the upper triangle, as LAPACK's 'U'
    fx = functions(xp)
    L = None
    finite = fx.all_finite(src)
    if finite:
        try:
            L = xp.linalg.cholesky(src)
        except xp.linalg.LinAlgError:
            pass
    if L is not None:
        info = _no_info(xp, A)
    else:  # a matrix is not positive-definite, or infinities or NaN met
        L, info = _potf2(xp, src)
        if finite:
            # OpenBLAS's potrf refused a matrix: its info names it (potf2's pivot, rounded
            # otherwise, may pass one near 0)
            info = fx.factor_info(src, "cholesky")
        failed = check_errors and [(i, v) for i, v in enumerate(info.reshape(-1).tolist())
                                   if v]
        if failed:
            idx, order = failed[0]
            raise LinAlgError(f"{fn}: {_batch_prefix(A.shape, idx)}The factorization could "
                              f"not be completed because the input is not positive-definite "
                              f"(the leading minor of order {order} is not "
                              f"positive-definite).")
    return (_mT(xp, L) if upper else L), info


def _potf2(xp, a):
    """LAPACK's unblocked Cholesky (potf2, as PyTorch's LAPACK computes it), a column at a
    time over the batch: each pivot ``a_jj - L_j: . L_j:``, its square root, the rest of
    the column less its products, times the pivot's reciprocal. ``(L, info)``, info the
    order of each matrix's first pivot not positive, or NaN, else 0; where LAPACK stops
    there, L keeps what it leaves: that pivot unrooted, then the input's lower triangle.
    For the failures and non-finite inputs: OpenBLAS's potrf carries a NaN pivot on, and
    takes ``-inf * (1 / inf)`` as 0 where LAPACK's makes it NaN."""
    n = a.shape[-1]
    info = _no_info(xp, a)
    cols = []
    with functions(xp).errstate(invalid="ignore", divide="ignore"):
        for j in range(n):
            pivot, rest = a[..., j, j], a[..., j + 1:, j]
            zeros = xp.zeros(a.shape[:-2] + (j,), dtype=a.dtype)
            if j:
                done = xp.stack(cols, -1)  # (..., n, j)
                row = done[..., j, :]
                pivot = pivot - xp.sum(row * row, -1)
                rest = rest - xp.matmul(done[..., j + 1:, :], row[..., None])[..., 0]
            stopped = info != 0
            stops = xp.logical_and(xp.logical_not(stopped), xp.logical_not(pivot > 0))
            info = xp.where(stops, xp.asarray(j + 1, dtype=info.dtype), info)
            d = xp.sqrt(pivot)
            col = xp.concatenate((zeros, d[..., None], rest * (1 / d)[..., None]), -1)
            at_stop = xp.concatenate((zeros, pivot[..., None], a[..., j + 1:, j]), -1)
            col = xp.where(stops[..., None], at_stop, col)
            cols.append(xp.where(stopped[..., None], xp.concatenate((zeros, a[..., j:, j]), -1),
                                 col))
    return xp.stack(cols, -1), info


def _chol_grad(xp, grad, L, upper):
    """``L^{-T} sym(tril(L^T gL)) L^{-1}`` with the diagonal halved (FunctionsManual's
    cholesky_backward): the gradient of a symmetric input."""
    if upper:
        L, grad = _mT(xp, L), _mT(xp, grad)
    p = xp.tril(xp.matmul(_mT(xp, L), grad))
    p = 0.5 * (p + _mT(xp, xp.tril(p, -1)))
    return _rsolve(xp, L, _solve(xp, _mT(xp, L), p))


def _chol_jvp(xp, A_t, L, upper):
    """``dL = L phi(L^{-1} dA L^{-T})``, phi the lower triangle with half the diagonal."""
    if upper:
        L = _mT(xp, L)
    y = _rsolve(xp, _mT(xp, L), _solve(xp, L, A_t))
    phi = xp.tril(y) - 0.5 * y * _eye(xp, y.shape[-1], y)
    t = xp.matmul(L, phi)
    return (_mT(xp, t) if upper else t), None


def _chol_op(node):
    return defop("linalg_cholesky_ex", _chol_fwd, outputs=("L", "info"), nondiff_outputs=("info",),
                 vjp={"A": _chol_grad}, jvp=_chol_jvp, node=node)


_cholesky_ex = _chol_op(None)
_cholesky_legacy = _chol_op("CholeskyBackward0")


@_autocast.policy("linalg_cholesky_ex")
def cholesky_ex(A, *, upper=False, check_errors=False, out=None):
    """``(L, info)``: info > 0 (the failing minor's order) instead of raising."""
    _no_out(out, "linalg.cholesky_ex")
    _check_square(A, "linalg.cholesky")
    return rt.linalg_cholesky_ex(apply(_cholesky_ex, (A,),
                                       (upper, check_errors, "linalg.cholesky")))


@_autocast.policy("linalg_cholesky")
def cholesky(A, *, upper=False, out=None):
    """Cholesky factor of a symmetric positive-definite matrix (its lower triangle is read):
    ``A = L L^T`` (``U^T U`` with ``upper=True``)."""
    _no_out(out, "linalg.cholesky")
    _check_square(A, "linalg.cholesky")
    return apply(_cholesky_ex, (A,), (upper, True, "linalg.cholesky"))[0]


# ---- qr ---------------------------------------------------------------------------------------

def _qr_fwd(xp, A, mode):
    if mode == "r":
        return xp.zeros((0,), dtype=A.dtype), xp.linalg.qr(A, mode="r")
    q, r = xp.linalg.qr(A, mode=mode)
    return q, r


def _copyltu(xp, m):
    """The symmetric matrix with ``m``'s lower triangle."""
    low = xp.tril(m, -1)
    return low + _mT(xp, low) + m * _eye(xp, m.shape[-1], m)


def _qr_square_grad(xp, gq, gr, q, r):
    """m >= n: ``(gQ + Q copyltu(R gR^T - gQ^T Q)) R^{-T}``."""
    m = xp.matmul(r, _mT(xp, gr)) - xp.matmul(_mT(xp, gq), q)
    b = gq + xp.matmul(q, _copyltu(xp, m))
    return _rsolve(xp, _mT(xp, r), b)


def _qr_grad(xp, grads, A, Q, R, mode):
    if mode == "r":
        raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed "
                           "when mode='r'. Please use linalg.qr(A, mode='reduced') if you are "
                           "going to differentiate through linalg.qr.")
    m, n = A.shape[-2], A.shape[-1]
    if mode == "complete" and m > n:
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' "
                           "and nrows > ncols.")
    gq, gr = grads
    if m >= n:
        return _qr_square_grad(xp, gq, gr, Q, R)
    # wide: A = Q [X | Y] with X square; Y = Q V contributes through Q
    y, gv = A[..., m:], gr[..., m:]
    gx = _qr_square_grad(xp, gq + xp.matmul(y, _mT(xp, gv)), gr[..., :m], Q, R[..., :m])
    return xp.concatenate([gx, xp.matmul(Q, gv)], -1)


_qr = defop("linalg_qr", _qr_fwd, outputs=("Q", "R"), vjp={"A": _qr_grad}, jvp="transpose")

_QR_MODES = ("reduced", "complete", "r")


@_autocast.policy("linalg_qr")
def qr(A, mode="reduced", *, out=None):
    """``(Q, R)`` with ``A = Q R``; ``mode='r'`` leaves Q empty (and not differentiable)."""
    _no_out(out, "linalg.qr")
    _need_dims(A, "linalg.qr")
    _check_float(A, "linalg.qr")
    if mode not in _QR_MODES:
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           f"'reduced' (default), 'r', or 'complete'")
    return rt.linalg_qr(apply(_qr, (A,), (mode,)))


# ---- eigh -------------------------------------------------------------------------------------

def _eigh_grad(xp, grads, eigenvalues, eigenvectors):
    """``V (diag(gL) + skew(V^T gV) / E) V^T`` with ``E_ij = L_j - L_i`` (off the diagonal):
    V^T dV is skew, so only the skew part of V^T gV counts, and the gradient is
    symmetric, as PyTorch's."""
    gl, gv = grads
    v, lam = eigenvectors, eigenvalues
    k = lam.shape[-1]
    eye = xp.eye(k, dtype=bool)
    e = xp.expand_dims(lam, -2) - xp.expand_dims(lam, -1)
    j = xp.matmul(_mT(xp, v), gv)
    inner = xp.where(eye, 0, 0.5 * (j - _mT(xp, j)) / xp.where(eye, 1, e))
    inner = inner + xp.where(eye, xp.expand_dims(gl, -1), 0)
    return xp.matmul(xp.matmul(v, inner), _mT(xp, v))


_eigh = defop("linalg_eigh", lambda xp, A, UPLO: tuple(xp.linalg.eigh(A, UPLO=UPLO)),
              outputs=("eigenvalues", "eigenvectors"), vjp={"A": _eigh_grad}, jvp="transpose")


def _eigh_args(A, UPLO):
    _check_square(A, "linalg.eigh", dtype=False)
    if A._data.dtype.kind == "c":
        _check_float(A, "linalg.eigh")
    if not is_float(A._data.dtype):
        raise NotImplementedError(f"\"linalg_eigh_cpu\" not implemented for "
                                  f"'{_pretty(A._data.dtype)}'")
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")


@_autocast.policy("linalg_eigh")
def eigh(A, UPLO="L", *, out=None):
    """``(eigenvalues, eigenvectors)`` of a symmetric matrix, eigenvalues ascending; only
    the ``UPLO`` triangle is read."""
    _no_out(out, "linalg.eigh")
    _eigh_args(A, UPLO)
    return rt.linalg_eigh(apply(_eigh, (A,), (UPLO,)))


@_autocast.policy("linalg_eigvalsh")
def eigvalsh(A, UPLO="L", *, out=None):
    """Eigenvalues of a symmetric matrix, ascending."""
    _no_out(out, "linalg.eigvalsh")
    _eigh_args(A, UPLO)
    return apply(_eigh, (A,), (UPLO,))[0]


# ---- svd --------------------------------------------------------------------------------------

def _svd_grad(xp, grads, U, S, Vh, full_matrices):
    """FunctionsManual's svd_backward for real input (reduced U, Vh; a full U/Vh is
    narrowed first, as in PyTorch):
    ``U [skew(U^T gU)/E S + S skew(Vh gVh^T)/E + diag(gS)] Vh`` plus the parts of gU and
    gVh outside the column spaces, with ``E_ij = s_j^2 - s_i^2``."""
    gu, gs, gvh = grads
    k = S.shape[-1]
    if full_matrices:
        U, Vh, gu, gvh = U[..., :k], Vh[..., :k, :], gu[..., :k], gvh[..., :k, :]
    m, n = U.shape[-2], Vh.shape[-1]
    eye = xp.eye(k, dtype=bool)
    s2 = S * S
    e = xp.where(eye, 1, xp.expand_dims(s2, -2) - xp.expand_dims(s2, -1))
    j = xp.matmul(_mT(xp, U), gu)
    kk = xp.matmul(Vh, _mT(xp, gvh))
    inner = (j - _mT(xp, j)) / e * xp.expand_dims(S, -2) \
        + xp.expand_dims(S, -1) * ((kk - _mT(xp, kk)) / e) \
        + xp.where(eye, xp.expand_dims(gs, -1), 0)
    ga = xp.matmul(xp.matmul(U, inner), Vh)
    if m > k:
        ga = ga + xp.matmul((gu - xp.matmul(U, j)) / xp.expand_dims(S, -2), Vh)
    if n > k:
        ga = ga + xp.matmul(U, (gvh - xp.matmul(_mT(xp, kk), Vh)) / xp.expand_dims(S, -1))
    return ga


def _svdvals_grad(xp, grads, A, U, Vh):
    """Only S is returned: ``U diag(gS) Vh`` (defined at repeated singular values too).
    Under create_graph U and Vh come from the full SVD op, whose rule carries the
    second-order terms through them."""
    if isinstance(A, Tensor):
        U, _, Vh = xp.linalg.svd(A, False)
    return xp.matmul(U * xp.expand_dims(grads[1], -2), Vh)


_svd = defop("linalg_svd", lambda xp, A, full_matrices: tuple(xp.linalg.svd(A, full_matrices)),
             outputs=("U", "S", "Vh"), vjp={"A": _svd_grad}, jvp="transpose")
_svdvals = defop("linalg_svd", lambda xp, A: tuple(xp.linalg.svd(A, False)),
                 outputs=("U", "S", "Vh"), vjp={"A": _svdvals_grad}, jvp="transpose",
                 node="LinalgSvdBackward0")


@_autocast.policy("linalg_svd")
def svd(A, full_matrices=True, *, driver=None, out=None):
    """``(U, S, Vh)`` with ``A = U diag(S) Vh``, S descending. The gradient through U and
    Vh is defined for distinct singular values only, as in PyTorch."""
    _no_out(out, "linalg.svd")
    _need_dims(A, "linalg.svd")
    _check_float(A, "linalg.svd")
    return rt.linalg_svd(apply(_svd, (A,), (bool(full_matrices),)))


@_autocast.policy("linalg_svdvals")
def svdvals(A, *, driver=None, out=None):
    """Singular values, descending."""
    _no_out(out, "linalg.svdvals")
    _need_dims(A, "linalg.svd")
    _check_float(A, "linalg.svd")
    return apply(_svdvals, (A,))[1]


# ---- pinv -------------------------------------------------------------------------------------

def _pinv_fwd(xp, A, atol, rtol, hermitian):
    if hermitian:
        lam, v = xp.linalg.eigh(A)
        mag = xp.abs(lam)
        top = xp.max(mag, axis=-1, keepdims=True) if mag.shape[-1] else mag
        thr = xp.maximum(atol, rtol * top)
        inv = xp.where(mag > thr, 1 / xp.where(mag > thr, lam, 1), 0)
        return xp.matmul(v * xp.expand_dims(inv, -2), _mT(xp, v))
    u, s, vh = xp.linalg.svd(A, full_matrices=False)
    top = s[..., :1]
    thr = xp.maximum(atol, rtol * top)
    inv = xp.where(s > thr, 1 / xp.where(s > thr, s, 1), 0)
    return xp.matmul(_mT(xp, vh) * xp.expand_dims(inv, -2), _mT(xp, u))


def _pinv_grad(xp, grad, A, result):
    """FunctionsManual's pinv_backward."""
    m, n = A.shape[-2], A.shape[-1]
    p, ph, gh = result, _mT(xp, result), _mT(xp, grad)
    mm = xp.matmul
    if m <= n:
        k = mm(gh, p)
        kph = mm(k, ph)
        return -_mT(xp, mm(p, k)) + kph - mm(mm(A, p), kph) + mm(mm(ph, p), gh - mm(k, A))
    k = mm(p, gh)
    phk = mm(ph, k)
    return -_mT(xp, mm(k, p)) + phk - mm(mm(phk, p), A) + mm(mm(gh - mm(A, k), p), ph)


_pinv = defop("linalg_pinv", _pinv_fwd, vjp={"A": _pinv_grad}, jvp="transpose")


def pinv(A, *, atol=None, rtol=None, hermitian=False, out=None):
    """Moore-Penrose pseudo-inverse: singular values below ``max(atol, rtol * s_max)`` are
    dropped (``rtol`` defaults to ``eps * max(m, n)`` unless only ``atol > 0`` is given)."""
    _no_out(out, "linalg.pinv")
    if A._data.ndim < 2 or not is_float(A._data.dtype):
        kind = A._data.dtype.kind
        if kind == "c":
            _check_float(A, "linalg.pinv")
        raise RuntimeError(f"linalg.pinv({_pretty(A._data.dtype)}{{{list(A._data.shape)}}}): "
                           f"expected a tensor with 2 or more dimensions of float, double, "
                           f"cfloat or cdouble types")
    atol_v, rtol_v = _tolerances(A, atol, rtol)
    return apply(_pinv, (A,), (atol_v, rtol_v, bool(hermitian)))


def _tolerances(A, atol, rtol):
    """PyTorch's defaults: ``rtol = eps * max(m, n)`` unless only a positive atol is given.
    Tensor tolerances broadcast over the batch (``(..., 1)`` against the singular values)."""
    def arr(x):
        if isinstance(x, Tensor):
            return x._data[..., None]
        return x
    if rtol is None:
        given_atol = atol is not None and (isinstance(atol, Tensor) or atol > 0)
        rtol = 0.0 if given_atol else \
            np_finfo(A._data.dtype).eps * max(A._data.shape[-2:])
    return (0.0 if atol is None else arr(atol)), arr(rtol)


@_autocast.policy("pinverse")
def pinverse(input, rcond=1e-15):
    """``linalg.pinv(input, rtol=rcond)`` (PyTorch's older name)."""
    return pinv(input, rtol=rcond)


# ---- lstsq ----------------------------------------------------------------------------------

_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


def _lstsq_fwd(xp, A, B, rcond, driver, vector):
    """The minimum-norm solution from one batched SVD; residuals, rank and singular values
    where PyTorch's driver reports them (residuals: not for gelsy, and only when m > n and
    every matrix has full rank)."""
    if vector:
        B = xp.expand_dims(B, -1)
    m, n = A.shape[-2:]
    u, s, vh = xp.linalg.svd(A, full_matrices=False)
    keep = s > rcond * s[..., :1]
    inv = xp.where(keep, 1 / xp.where(keep, s, 1), 0)
    x = xp.matmul(_mT(xp, vh) * xp.expand_dims(inv, -2), xp.matmul(_mT(xp, u), B))
    rank = xp.sum(keep, -1).astype(_dtype.int64.np)
    empty = xp.zeros((0,), dtype=A.dtype)
    if driver != "gelsy" and m > n and functions(xp).all_true(rank == n):
        r = xp.matmul(A, x) - B
        residuals = xp.sum(r * r, -2)
    else:
        residuals = empty
    return ((x[..., 0] if vector else x), residuals,
            rank if driver != "gels" else xp.zeros((0,), dtype=_dtype.int64.np),
            s if driver in ("gelsd", "gelss") else empty)


def _lstsq_parts(xp, grads, A, B, solution, vector):
    """(gX, X, B) as matrices, and the residuals' gradient scaled onto ``A X - B``."""
    gx, gres = grads[0], grads[1]
    x = solution
    if vector:
        gx, x, B = xp.expand_dims(gx, -1), xp.expand_dims(x, -1), xp.expand_dims(B, -1)
    res = None
    if math.prod(gres.shape):  # d||A x - b||^2 = 2 (A x - b) . (dA x - db); dx drops out
        res = 2 * (xp.matmul(A, x) - B) * xp.expand_dims(gres, -2)
    return gx, x, B, res


def _lstsq_grad_A(xp, grads, A, B, solution, vector):
    gx, x, b, res = _lstsq_parts(xp, grads, A, B, solution, vector)
    ga = _pinv_grad(xp, xp.matmul(gx, _mT(xp, b)), A, xp.linalg.pinv(A))
    return ga if res is None else ga + xp.matmul(res, _mT(xp, x))


def _lstsq_grad_B(xp, grads, A, B, solution, vector):
    gx, _, _, res = _lstsq_parts(xp, grads, A, B, solution, vector)
    gb = xp.matmul(_mT(xp, xp.linalg.pinv(A)), gx)
    if res is not None:
        gb = gb - res
    return gb[..., 0] if vector else gb


_lstsq = defop("linalg_lstsq", _lstsq_fwd,
               outputs=("solution", "residuals", "rank", "singular_values"),
               nondiff_outputs=("rank", "singular_values"),
               vjp={"A": _lstsq_grad_A, "B": _lstsq_grad_B}, jvp="transpose")


@_autocast.policy("linalg_lstsq")
def lstsq(A, B, rcond=None, *, driver=None):
    """``(solution, residuals, rank, singular_values)`` of ``min ||A X - B||``: the
    minimum-norm solution for every driver (computed by SVD); ``driver`` picks which of
    the other fields are filled, as in PyTorch on the CPU (default 'gelsy')."""
    if A._data.ndim < 2:
        raise RuntimeError("torch.linalg.lstsq: input must have at least 2 dimensions.")
    if not is_float(A._data.dtype) or not is_float(B._data.dtype):
        if "c" in (A._data.dtype.kind, B._data.dtype.kind):
            _check_float(A if A._data.dtype.kind == "c" else B, "linalg.lstsq")
        raise RuntimeError("This function doesn't handle types other than float and double")
    if A._data.dtype != B._data.dtype:
        raise RuntimeError(f"torch.linalg.lstsq: Expected input and other to have the same "
                           f"dtype, but got input's dtype {_pretty(A._data.dtype)} and "
                           f"other's dtype {_pretty(B._data.dtype)}")
    vector = B._data.ndim == A._data.ndim - 1
    if B._data.shape[-1 if vector else -2] != A._data.shape[-2]:
        raise RuntimeError("torch.linalg.lstsq: input.size(-2) should match other.size(-2)")
    driver = "gelsy" if driver is None else driver
    if driver not in _DRIVERS:
        raise RuntimeError("torch.linalg.lstsq: parameter `driver` should be one of "
                           "(gels, gelsy, gelsd, gelss)")
    if rcond is None:
        rcond = np_finfo(A._data.dtype).eps * max(A._data.shape[-2:])
    return rt.linalg_lstsq(apply(_lstsq, (A, B), (float(rcond), driver, vector)))


# ---- LU: lu_factor, lu, lu_solve, lu_unpack -----------------------------------------------

def _perm_from_pivots(piv, m):
    """The row order ``perm`` with ``(P^T A)[i] = A[perm[i]]`` from LAPACK's 1-based
    sequential swaps (integers on the pivots' device: they are never differentiated)."""
    piv = piv._data if isinstance(piv, Tensor) else piv
    xp = get_array_module(piv)
    batch = piv.shape[:-1]
    cur = (xp.zeros(batch + (m,), dtype=_dtype.int64.np) + xp.arange(m)).reshape(-1, m)
    flat = piv.reshape(-1, piv.shape[-1]) - 1
    rows = xp.arange(len(cur))
    for i in range(flat.shape[1]):
        j = flat[:, i]
        cur[rows, i], cur[rows, j] = cur[rows, j], cur[rows, i].copy()
    return cur.reshape(batch + (m,))


def _pivots_from_perm(perm, k):
    """LAPACK's pivots (int32, 1-based) for the row order ``perm``."""
    xp = get_array_module(perm)
    m = perm.shape[-1]
    flat = perm.reshape(-1, m)
    cur = xp.zeros(flat.shape, dtype=_dtype.int64.np) + xp.arange(m)
    loc = cur.copy()  # loc[row] = where that row of A sits now
    rows = xp.arange(len(flat))
    piv = xp.empty((len(flat), k), dtype=_dtype.int32.np)
    for i in range(k):
        j = loc[rows, flat[:, i]]
        piv[:, i] = j + 1
        a, b = cur[rows, i].copy(), cur[rows, j].copy()
        cur[rows, i], cur[rows, j] = b, a
        loc[rows, b], loc[rows, a] = i, j
    return piv.reshape(perm.shape[:-1] + (k,))


def _perm_matrix(perm, dtype, like=None):
    """P with ``P[perm[i], i] = 1`` (so ``A = P L U``), on ``perm``'s device; a constant
    Tensor when ``like`` is one (the facade)."""
    xp = get_array_module(perm)
    m = perm.shape[-1]
    p = xp.zeros(perm.shape + (m,), dtype=dtype)
    xp.put_along_axis(p, xp.expand_dims(perm, -2), 1, axis=-2)
    return wrap(p) if isinstance(like, Tensor) else p


def _lu_square_grad(xp, L, U, gL, gU):
    """Unpivoted square LU: ``L^{-T} [tril(L^T gL, -1) + triu(gU U^T)] U^{-T}``."""
    inner = xp.tril(xp.matmul(_mT(xp, L), gL), -1) + xp.triu(xp.matmul(gU, _mT(xp, U)))
    return _rsolve(xp, _mT(xp, U), _solve(xp, _mT(xp, L), inner))


def _lu_grad_core(xp, P, L, U, gL, gU):
    """FunctionsManual's linalg_lu_backward: square, wide (A = P L [U1 U2]) and tall
    (P^T A = [L1; L2] U) LU factorizations."""
    m, n = L.shape[-2], U.shape[-1]
    if m == n:
        return xp.matmul(P, _lu_square_grad(xp, L, U, gL, gU))
    if m < n:
        u2 = U[..., m:]
        g2 = _solve(xp, _mT(xp, L), gU[..., m:])  # gA2 before P: L^{-T} gU2
        g1 = _lu_square_grad(xp, L, U[..., :m], gL - xp.matmul(g2, _mT(xp, u2)), gU[..., :m])
        return xp.matmul(P, xp.concatenate([g1, g2], -1))
    l2 = L[..., n:, :]
    g2 = _rsolve(xp, _mT(xp, U), gL[..., n:, :])  # gL2 U^{-T}
    g1 = _lu_square_grad(xp, L[..., :n, :], U, gL[..., :n, :],
                         gU - xp.matmul(_mT(xp, l2), g2))
    return xp.matmul(P, xp.concatenate([g1, g2], -2))


def _lu_fwd(xp, A):
    perm_inv, L, U = functions(xp).lu(A)
    return _perm_matrix(xp.argsort(perm_inv, -1), A.dtype), L, U


_lu = defop("linalg_lu", _lu_fwd, outputs=("P", "L", "U"), nondiff_outputs=("P",),
            vjp={"A": lambda xp, grads, P, L, U: _lu_grad_core(xp, P, L, U, grads[1],
                                                                grads[2])},
            jvp="transpose")


def _lu_checks(A, fn):
    if A._data.ndim < 2:
        raise RuntimeError(f"{fn}: Expected tensor with 2 or more dimensions. Got size: "
                           f"{list(A._data.shape)} instead")
    if A._data.dtype.kind == "c":
        _check_float(A, fn)
    if not is_float(A._data.dtype):
        raise NotImplementedError(f"\"lu_cpu\" not implemented for '{_pretty(A._data.dtype)}'")


def _no_pivot(pivot, fn):
    if not pivot:
        raise RuntimeError(f"{fn}: LU without pivoting is not implemented on the CPU")


def lu(A, *, pivot=True, out=None):
    """``(P, L, U)`` with ``A = P L U``: L unit lower-triangular (m x k), U upper (k x n)."""
    _no_out(out, "linalg.lu")
    _lu_checks(A, "linalg.lu")
    _no_pivot(pivot, "linalg.lu_factor")
    return rt.linalg_lu(apply(_lu, (A,)))


def _pack(xp, L, U):
    """LAPACK's packed LU (m x n): L's strict lower part and U's upper part."""
    m, n = L.shape[-2], U.shape[-1]
    k = L.shape[-1]
    low = xp.tril(L, -1)
    if n > k:
        low = xp.concatenate([low, xp.zeros(L.shape[:-1] + (n - k,), dtype=L.dtype)], -1)
    up = U
    if m > k:
        up = xp.concatenate([U, xp.zeros(U.shape[:-2] + (m - k, n), dtype=U.dtype)], -2)
    return low + xp.triu(up)


def _unpack(xp, LU):
    m, n = LU.shape[-2], LU.shape[-1]
    k = min(m, n)
    L = xp.tril(LU[..., :k], -1) + xp.eye(m, k, dtype=LU.dtype)
    return L, xp.triu(LU[..., :k, :])


def _lu_factor_fwd(xp, A):
    perm_inv, L, U = functions(xp).lu(A)
    k = min(A.shape[-2:])
    piv = _pivots_from_perm(xp.argsort(perm_inv, -1), k)
    diag = xp.diagonal(U, 0, -2, -1) == 0
    info = xp.where(diag.any(-1), diag.argmax(-1) + 1, 0).astype(_dtype.int32.np)
    return _pack(xp, L, U), piv, info


def _lu_factor_grad(xp, grads, LU, pivots):
    L, U = _unpack(xp, LU)
    P = _perm_matrix(_perm_from_pivots(pivots, LU.shape[-2]), _np_dtype(LU), LU)
    k = L.shape[-1]
    g = grads[0]
    return _lu_grad_core(xp, P, L, U, xp.tril(g[..., :k], -1), xp.triu(g[..., :k, :]))


def _np_dtype(x):
    d = x.dtype
    return d.np if hasattr(d, "np") else d


_lu_factor_ex = defop("linalg_lu_factor_ex", _lu_factor_fwd, outputs=("LU", "pivots", "info"),
                      nondiff_outputs=("pivots", "info"), vjp={"A": _lu_factor_grad},
                      jvp="transpose")


def lu_factor_ex(A, *, pivot=True, check_errors=False, out=None):
    """``(LU, pivots, info)``: LAPACK's packed factorization, 1-based row swaps, and the
    first zero pivot's index (1-based; 0 if none)."""
    _no_out(out, "linalg.lu_factor_ex")
    _lu_checks(A, "torch.lu_factor")
    _no_pivot(pivot, "linalg.lu_factor")
    res = apply(_lu_factor_ex, (A,))
    if check_errors:
        _lu_factor_error(A, res[2])
    return rt.linalg_lu_factor_ex(res)


def _lu_factor_error(A, info):
    if functions(get_array_module(info._data)).any_true(info._data != 0):
        infos = info._data.reshape(-1).tolist()
        bad, i = next((j, v) for j, v in enumerate(infos) if v)
        raise LinAlgError(f"torch.linalg.lu_factor: {_batch_prefix(A._data.shape, bad)}"
                          f"U[{i},{i}] is zero and using it on lu_solve would result in a "
                          f"division by zero. If you still want to perform the factorization, "
                          f"consider calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, "
                          f"pivot)")


def lu_factor(A, *, pivot=True, out=None):
    """``(LU, pivots)`` for :func:`lu_solve`; :class:`LinAlgError` at a zero pivot."""
    _no_out(out, "linalg.lu_factor")
    _lu_checks(A, "torch.lu_factor")
    _no_pivot(pivot, "linalg.lu_factor")
    LU, piv, info = apply(_lu_factor_ex, (A,))
    _lu_factor_error(A, info)
    return rt.linalg_lu_factor((LU, piv))


def _lu_solve_A(xp, LU, P):
    L, U = _unpack(xp, LU)
    return xp.matmul(P, xp.matmul(L, U))


def _lu_solve_fwd(xp, LU, B, P, left, adjoint):
    a = _lu_solve_A(xp, LU, P)
    if adjoint:
        a = _mT(xp, a)
    return _solve(xp, a, B) if left else _rsolve(xp, a, B)


def _lu_solve_grad_B(xp, grad, LU, P, left, adjoint):
    a = _lu_solve_A(xp, LU, _perm_const(xp, P, LU))
    if not adjoint:
        a = _mT(xp, a)
    return _solve(xp, a, grad) if left else _rsolve(xp, a, grad)


def _lu_solve_grad_LU(xp, grad, LU, result, P, left, adjoint):
    """gA as for solve, then through A = P L U onto the packed factors."""
    gb = _lu_solve_grad_B(xp, grad, LU, P, left, adjoint)
    x = result
    if left:
        ga = -xp.matmul(x, _mT(xp, gb)) if adjoint else -xp.matmul(gb, _mT(xp, x))
    else:
        ga = -xp.matmul(_mT(xp, gb), x) if adjoint else -xp.matmul(_mT(xp, x), gb)
    L, U = _unpack(xp, LU)
    pga = xp.matmul(_mT(xp, _perm_const(xp, P, LU)), ga)  # gradient of L U
    return xp.tril(xp.matmul(pga, _mT(xp, U)), -1) + xp.triu(xp.matmul(_mT(xp, L), pga))


def _perm_const(xp, P, like):
    """The permutation matrix (an attribute, made in LU's dtype) as the rule's values are:
    a Tensor on the facade, in ``like``'s dtype (a low-precision LU's rules compute in
    float32, where its 0s and 1s are exact)."""
    P = wrap(P) if isinstance(like, Tensor) else P
    return P if P.dtype == like.dtype else xp.astype(P, like.dtype)


_lu_solve = defop("linalg_lu_solve", lambda xp, LU, B, P, left, adjoint:
                  _lu_solve_fwd(xp, LU, B, P, left, adjoint),
                  vjp={"LU": _lu_solve_grad_LU, "B": _lu_solve_grad_B}, jvp="transpose")


def lu_solve(LU, pivots, B, *, left=True, adjoint=False, out=None):
    """``X`` with ``A X = B`` from ``lu_factor(A)`` (``A^T`` with adjoint; ``X A = B``
    with ``left=False``)."""
    _no_out(out, "linalg.lu_solve")
    if LU._data.dtype != B._data.dtype:
        raise RuntimeError(f"linalg.lu_solve: Expected LU and B to have the same dtype, but "
                           f"found LU of type {_pretty(LU._data.dtype)} and B of type "
                           f"{_pretty(B._data.dtype)} instead")
    _tri_args(LU, B, "linalg.lu_solve", left)
    n = LU._data.shape[-1]
    P = _perm_matrix(_perm_from_pivots(pivots, n), LU._data.dtype)
    return apply(_lu_solve, (LU, B), (P, bool(left), bool(adjoint)))


def _lu_unpack_fwd(xp, LU_data, P, unpack_data):
    if not unpack_data:
        empty = xp.zeros((0,), dtype=LU_data.dtype)
        return P, empty, empty
    L, U = _unpack(xp, LU_data)
    return P, L, U


def _lu_unpack_grad(xp, grads, LU_data_shape, unpack_data):
    if not unpack_data:
        return None
    m, n = LU_data_shape[-2], LU_data_shape[-1]
    gl, gu = xp.tril(grads[1], -1), xp.triu(grads[2])
    k = min(m, n)
    if n > k:
        gl = xp.concatenate([gl, xp.zeros(tuple(gl.shape[:-1]) + (n - k,), dtype=gl.dtype)], -1)
    if m > k:
        gu = xp.concatenate([gu, xp.zeros(tuple(gu.shape[:-2]) + (m - k, n), dtype=gu.dtype)],
                            -2)
    return gl + gu


_lu_unpack = defop("lu_unpack", _lu_unpack_fwd, outputs=("P", "L", "U"), nondiff_outputs=("P",),
                   vjp={"LU_data": _lu_unpack_grad}, jvp="transpose")


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True, *, out=None):
    """``(P, L, U)`` from ``lu_factor``'s packed form (empty tensors for what is not
    unpacked)."""
    _no_out(out, "lu_unpack")
    m = LU_data._data.shape[-2]
    if unpack_pivots:
        P = _perm_matrix(_perm_from_pivots(LU_pivots, m), LU_data._data.dtype)
    else:
        P = get_array_module(LU_data._data).zeros((0,), dtype=LU_data._data.dtype)
    return rt.lu_unpack(apply(_lu_unpack, (LU_data,), (P, bool(unpack_data))))


# ---- householder_product ----------------------------------------------------------------------

def _hh_vectors(xp, A, k):
    """The reflectors' vectors as columns: 1 on the diagonal, A's entries below it."""
    return xp.tril(A[..., :k], -1) + xp.eye(A.shape[-2], k, dtype=A.dtype)


def _hh_apply(xp, v, t, Q):
    """``(I - t v v^T) Q`` for a column v (..., m, 1) and scalars t (...)."""
    return xp.subtract(Q, xp.multiply(xp.expand_dims(xp.expand_dims(t, -1), -1),
                                      xp.matmul(v, xp.matmul(_mT(xp, v), Q))))


def _hh_fwd(xp, A, tau):
    m, n = A.shape[-2], A.shape[-1]
    k = tau.shape[-1]
    V = _hh_vectors(xp, A, k)
    Q = xp.eye(m, n, dtype=A.dtype)
    for i in reversed(range(k)):  # Q = H_1 (H_2 (... H_k I))
        Q = _hh_apply(xp, V[..., i:i + 1], tau[..., i], Q)
    return Q


def _hh_grads(xp, grad, A, tau):
    """Reverse mode through the k reflections: with ``S_i = H_{i+1}...H_k I`` and
    ``G_i = H_{i-1}...H_1 G``, each ``H_i = I - t v v^T`` sees ``M_i = G_i S_i^T``:
    ``g_t = -v^T M_i v``, ``g_v = -t (M_i + M_i^T) v`` (below the diagonal)."""
    m, n = A.shape[-2], A.shape[-1]
    k = tau.shape[-1]
    V = _hh_vectors(xp, A, k)
    s = [None] * k
    q = xp.eye(m, n, dtype=A.dtype)
    for i in reversed(range(k)):
        s[i] = q
        q = _hh_apply(xp, V[..., i:i + 1], tau[..., i], q)
    g = grad
    gv, gt = [], []
    for i in range(k):
        v, t = V[..., i:i + 1], tau[..., i]
        mi = xp.matmul(g, _mT(xp, s[i]))
        mv = xp.matmul(mi + _mT(xp, mi), v)
        gt.append(-xp.sum(xp.sum(v * xp.matmul(mi, v), -1), -1))
        gv.append(-xp.expand_dims(xp.expand_dims(t, -1), -1) * mv)
        g = _hh_apply(xp, v, t, g)
    return xp.concatenate(gv, -1), xp.stack(gt, -1)


def _hh_grad_A(xp, grad, A, tau):
    gv = xp.tril(_hh_grads(xp, grad, A, tau)[0], -1)
    n, k = A.shape[-1], tau.shape[-1]
    if n > k:
        gv = xp.concatenate([gv, xp.zeros(tuple(gv.shape[:-1]) + (n - k,), dtype=gv.dtype)], -1)
    return gv


_householder_product = defop(
    "linalg_householder_product", _hh_fwd,
    vjp={"A": _hh_grad_A, "tau": lambda xp, grad, A, tau: _hh_grads(xp, grad, A, tau)[1]},
    jvp="transpose")


@_autocast.policy("linalg_householder_product")
def householder_product(A, tau, *, out=None):
    """The first n columns of ``H_1 ... H_k`` with ``H_i = I - tau_i v_i v_i^T`` (``v_i``:
    1 then the entries of A's column i below the diagonal), as LAPACK's orgqr."""
    _no_out(out, "linalg.householder_product")
    fn = "torch.linalg.householder_product"
    sa, st = A._data.shape, tau._data.shape
    if len(sa) < 2:
        raise RuntimeError(f"{fn}: input must have at least 2 dimensions.")
    if sa[-2] < sa[-1]:
        raise RuntimeError(f"{fn}: input.shape[-2] must be greater than or equal to "
                           f"input.shape[-1]")
    if sa[-1] < st[-1]:
        raise RuntimeError(f"{fn}: input.shape[-1] must be greater than or equal to "
                           f"tau.shape[-1]")
    if len(st) != len(sa) - 1:
        raise RuntimeError(f"{fn}: Expected tau to have one dimension less than input, but got "
                           f"tau.ndim equal to {len(st)} and input.ndim is equal to {len(sa)}")
    if st[:-1] != sa[:-2]:
        raise RuntimeError(f"{fn}: Expected batch dimensions of tau to be equal to "
                           f"input.shape[:-2], but got {list(st[:-1])}")
    if A._data.dtype != tau._data.dtype:
        raise RuntimeError(f"{fn}: tau dtype {_pretty(tau._data.dtype)} does not match input "
                           f"dtype {_pretty(A._data.dtype)}")
    _check_float(A, "linalg.householder_product")
    return apply(_householder_product, (A, tau))


# ---- matrix_exp -------------------------------------------------------------------------------

def _expm(xp, a):
    """The matrix exponential of a batch: the backend's (the op itself on the facade's
    Tensors; on the data of a batch of gradients or tangents, whose batch is one more
    leading dim)."""
    if isinstance(a, Batched):
        return a.like(functions(get_array_module(a.data)).expm(a.data))
    return functions(xp).expm(a)


def _block_exp(xp, top_left, top_right):
    """The upper-right block of ``exp([[X, D], [0, X]])``: the derivative of exp at X along
    D (Mathias' theorem), in one exponential."""
    n = top_left.shape[-1]
    zero = xp.zeros_like(top_left)
    big = xp.concatenate([xp.concatenate([top_left, top_right], -1),
                          xp.concatenate([zero, top_left], -1)], -2)
    return _expm(xp, big)[..., :n, n:]


_matrix_exp = defop("linalg_matrix_exp", lambda xp, A: _expm(xp, A),
                    vjp={"A": lambda xp, grad, A: _block_exp(xp, _mT(xp, A), grad)},
                    jvp=lambda xp, A_t, A: _block_exp(xp, A, A_t))


def matrix_exp(A):
    """``exp(A) = sum_k A^k / k!`` of a (batch of) square matrices."""
    _check_square(A, "linalg.matrix_exp")
    return apply(_matrix_exp, (A,))


# ---- solve_triangular ---------------------------------------------------------------------

def _tri(xp, A, upper, unitriangular):
    t = xp.triu(A) if upper else xp.tril(A)
    if unitriangular:
        t = xp.where(xp.eye(A.shape[-1], dtype=bool), 1, t)
    return t


def _tri_lsolve(xp, t, b, upper):
    """``t^-1 b`` for a triangular ``t``: by LU (one batched LAPACK call) where ``t`` and
    the solution are finite; otherwise by substitution, as PyTorch's BLAS trsm, where a
    zero or non-finite pivot gives inf or NaN (LU refuses a zero pivot, and its pivoting
    multiplies the triangle's zeros by the infinities of a tiny one: NaN)."""
    fns = functions(xp)
    if fns.all_finite(t):
        try:
            x = _solve(xp, t, b)
            if fns.all_finite(x):
                return x
        except xp.linalg.LinAlgError:
            pass
    n = t.shape[-1]
    rows = [None] * n
    for i in range(n - 1, -1, -1) if upper else range(n):
        r = b[..., i, :]
        for j in range(i + 1, n) if upper else range(i):
            r = r - t[..., i, j, None] * rows[j]
        rows[i] = r / t[..., i, i, None]
    return xp.stack(rows, -2)


def _tri_solve(xp, t, b, upper, left):
    """``t^-1 b`` (``left``) or ``b t^-1``."""
    if left:
        return _tri_lsolve(xp, t, b, upper)
    return _mT(xp, _tri_lsolve(xp, _mT(xp, t), _mT(xp, b), not upper))


def _tri_solve_fwd(xp, A, B, upper, left, unitriangular):
    return _tri_solve(xp, _tri(xp, A, upper, unitriangular), B, upper, left)


def _tri_grad_B(xp, grad, A, upper, left, unitriangular):
    t = _tri(xp, A, upper, unitriangular)
    return _tri_solve(xp, _mT(xp, t), grad, not upper, left)


def _tri_grad_A(xp, grad, A, result, upper, left, unitriangular):
    gb = _tri_grad_B(xp, grad, A, upper, left, unitriangular)
    ga = -xp.matmul(gb, _mT(xp, result)) if left else -xp.matmul(_mT(xp, result), gb)
    return _tri(xp, ga, upper, False) * (1 - _eye(xp, ga.shape[-1], ga)) if unitriangular \
        else _tri(xp, ga, upper, False)


def _tri_jvp(xp, A_t, B_t, A, result, upper, left, unitriangular):
    t = _tri(xp, A, upper, unitriangular)
    rhs = B_t
    if A_t is not None:
        dt = _tri(xp, A_t, upper, False)
        if unitriangular:
            dt = dt * (1 - _eye(xp, dt.shape[-1], dt))
        d = xp.matmul(dt, result) if left else xp.matmul(result, dt)
        rhs = -d if rhs is None else rhs - d
    return _tri_solve(xp, t, rhs, upper, left)


_solve_triangular = defop("linalg_solve_triangular", _tri_solve_fwd,
                          vjp={"A": _tri_grad_A, "B": _tri_grad_B}, jvp=_tri_jvp,
                          promote=("A", "B"))


def _tri_args(A, B, fn, left=True):
    _check_square(A, fn, dtype=False)
    _need_dims(B, fn, "B")
    _check_float(A, fn)
    n, sb = A._data.shape[-1], B._data.shape
    if (sb[-2] if left else sb[-1]) != n:
        raise RuntimeError(f"{fn}: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({n}x{n} and {sb[-2]}x{sb[-1]})")


def solve_triangular(A, B, *, upper, left=True, unitriangular=False, out=None):
    """``X`` with ``A X = B`` for a triangular A (only its ``upper``/lower triangle is
    read; a unit diagonal assumed with ``unitriangular``)."""
    _no_out(out, "linalg.solve_triangular")
    _tri_args(A, B, "linalg.solve_triangular", left)
    return apply(_solve_triangular, (A, B), (bool(upper), bool(left), bool(unitriangular)))


# ---- cross, vecdot, multi_dot, matrix_power -----------------------------------------------

def _cross(xp, a, b, dim):
    """The cross product in a rule: this op on the facade's Tensors, else ``xp.cross``."""
    if isinstance(a, Tensor) or isinstance(b, Tensor):
        return apply(_linalg_cross, (a, b), (dim,))
    return xp.cross(a, b, axis=dim)


_linalg_cross = defop("linalg_cross", lambda xp, input, other, dim: xp.cross(input, other,
                                                                            axis=dim),
                      vjp={"input": lambda xp, grad, other, dim: _cross(xp, other, grad, dim),
                           "other": lambda xp, grad, input, dim: _cross(xp, grad, input, dim)},
                      jvp="multilinear")


def cross(input, other, *, dim=-1, out=None):
    """Cross product of 3-vectors along ``dim``; the other dims broadcast."""
    _no_out(out, "linalg.cross")
    sa, sb = input._data.shape, other._data.shape
    if input._data.ndim != other._data.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    na = sa[dim] if -len(sa) <= dim < len(sa) else None
    nb = sb[dim] if -len(sb) <= dim < len(sb) else None
    if na != 3 or nb != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                           f"{na} and {nb}")
    if input._data.dtype != other._data.dtype:
        raise RuntimeError(f"expected scalar type {_pretty(input._data.dtype)} but found "
                           f"{_pretty(other._data.dtype)}")
    return apply(_linalg_cross, (input, other), (dim,))


def _legacy_cross(input, other, dim=None, *, out=None):
    """``torch.cross``: without ``dim``, the first dim of size 3."""
    _no_out(out, "cross")
    if dim is None:
        dim = next((d for d, n in enumerate(input._data.shape) if n == 3), -1)
        warnings.warn("Using torch.cross without specifying the dim arg is deprecated.",
                      UserWarning, stacklevel=_observe.user_stacklevel())
    return cross(input, other, dim=dim)


@_autocast.policy("linalg_vecdot")
def vecdot(x, y, *, dim=-1, out=None):
    """``sum(conj(x) * y, dim)``, of floating or complex tensors of one dtype."""
    _no_out(out, "linalg.vecdot")
    if x.dtype != y.dtype:
        raise RuntimeError(f"linalg.vecdot: Expected x and y to have the same dtype, but found "
                           f"x of type {_pretty(x._data.dtype)} and y of type "
                           f"{_pretty(y._data.dtype)} instead")
    if not (x.is_floating_point() or x.is_complex()):
        raise RuntimeError(f"linalg.vecdot: Expected a floating point or complex tensor as "
                           f"input. Got {_pretty(x._data.dtype)}")
    return ((x.conj() if x.is_complex() else x) * y).sum(dim)


@register(method=False)
def chain_matmul(*matrices, out=None):
    """The product of 2-D ``matrices`` (deprecated: ``linalg.multi_dot`` of their list);
    one matrix is returned as a copy."""
    global _chain_matmul_warned
    if not _chain_matmul_warned:  # TORCH_WARN_ONCE: once a process
        _chain_matmul_warned = True
        warnings.warn("torch.chain_matmul is deprecated and will be removed in a future "
                      "PyTorch release. Use torch.linalg.multi_dot instead, which accepts a "
                      "list of two or more tensors rather than multiple parameters.",
                      UserWarning, stacklevel=_observe.user_stacklevel())
    for m in matrices:
        if m.ndim != 2:
            raise RuntimeError(f"Tensor dimension is {m.ndim}, expected 2 instead.")
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    return matrices[0].clone() if len(matrices) == 1 else multi_dot(matrices)


_chain_matmul_warned = False


def multi_dot(tensors, *, out=None):
    """The product of a chain of matrices (1-D ends as row/column vectors), multiplied in
    the order that costs fewest flops."""
    _no_out(out, "linalg.multi_dot")
    n = len(tensors)
    if n < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {n}")
    first, last = tensors[0], tensors[-1]
    shape = []
    mats = list(tensors)
    if first._data.ndim == 1:
        mats[0] = first.unsqueeze(0)
    else:
        shape.append(first._data.shape[0])
    if last._data.ndim == 1:
        mats[-1] = last.unsqueeze(-1)
    else:
        shape.append(last._data.shape[-1])
    for i, t in enumerate(mats):
        if t._data.ndim != 2:
            which = "the first tensor" if i == 0 else "the last tensor" if i == n - 1 else \
                f"tensor {i}"
            expect = "1D or 2D" if i in (0, n - 1) else "2D"
            raise RuntimeError(f"multi_dot(): {which} must be {expect} but got "
                               f"{tensors[i]._data.ndim}D")
    for i in range(1, n):
        if mats[i - 1]._data.shape[1] != mats[i]._data.shape[0]:
            a, b = mats[i - 1]._data.shape, mats[i]._data.shape
            raise RuntimeError(f"multi_dot(): tensors {i - 1} and {i} with shapes "
                               f"[{a[0]}, {a[1]}] and [{b[0]}, {b[1]}] cannot be multiplied")
    dims = [mats[0]._data.shape[0]] + [t._data.shape[1] for t in mats]
    return _chain(mats, _chain_order(dims), 0, n - 1).view(tuple(shape))


def _chain_order(p):
    """Matrix-chain dynamic programme: split[i][j] for the product of matrices i..j."""
    n = len(p) - 1
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = math.inf
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + p[i] * p[k + 1] * p[j + 1]
                if c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


def _chain(mats, split, i, j):
    if i == j:
        return mats[i]
    k = split[i][j]
    return _chain(mats, split, i, k).mm(_chain(mats, split, k + 1, j))


def matrix_power(A, n, *, out=None):
    """``A^n`` by repeated squaring (``inv(A)^-n`` for negative n, the identity for 0)."""
    _no_out(out, "linalg.matrix_power")
    if not isinstance(n, int) or isinstance(n, bool):
        raise TypeError(f"linalg_matrix_power(): argument 'n' (position 2) must be int, not "
                        f"{type(n).__name__}")
    _check_square(A, "linalg.matrix_power", dtype=False)
    if n == 0:
        e = eye(A._data.shape[-1], dtype=A.dtype).expand(*A._data.shape).clone()
        if not A.requires_grad:
            return e
        # still in A's graph, with a zero gradient (inf-safe)
        return A.masked_fill(ones(A.shape, dtype=_dtype.bool), 0) + e
    if n == 1:
        return A.clone()
    if n < 0:
        A = inv(A)
        n = -n
    result, base = None, A
    while True:
        if n & 1:
            result = base if result is None else result @ base
        n >>= 1
        if not n:
            return result
        base = base @ base


# ---- norms, cond, matrix_rank ---------------------------------------------------------------

def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):
    """The vector ``ord``-norm over ``dim`` (all elements by default)."""
    dtype = dtype_arg(dtype, "vector_norm")
    _no_out(out, "linalg.vector_norm")
    if isinstance(ord, str):
        raise TypeError("linalg_vector_norm(): argument 'ord' must be Number, not str")
    return FUNCTIONS["norm"](x, ord, dim, keepdim, dtype=dtype)  # torch.norm (ops.norms)


def _matrix_dims(A, dim):
    nd = A._data.ndim
    if not isinstance(dim, (tuple, list)) or len(dim) != 2:
        got = " ".join(str(d) for d in dim) if isinstance(dim, (tuple, list)) else dim
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {got}")
    d0, d1 = (d + nd if d < 0 else d for d in dim)
    if d0 == d1:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({d0}, {d1})")
    return d0, d1


def check_norm_dtype(input, dtype, fname):
    """PyTorch's checks of a norm's ``dtype``: floating or complex, and complex exactly
    where the input is."""
    name = _pretty(dtype.np)
    if not (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError(f"{fname}: dtype should be floating point or complex, but got "
                           f"{name}")
    complex_input = input._data.dtype.kind == "c"
    if dtype.is_complex != complex_input:
        kind = "complex" if complex_input else "real"
        raise RuntimeError(f"{fname}: dtype should be {kind} for {kind} inputs, but got "
                           f"{name}")


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None, out=None):
    """Matrix norms: 'fro', 'nuc', inf, -inf, 1, -1, 2, -2 over the two dims ``dim``."""
    dtype = dtype_arg(dtype, "matrix_norm")
    _no_out(out, "linalg.matrix_norm")
    _need_dims(A, "linalg.matrix_norm")
    _check_float(A, "linalg.matrix_norm")
    d0, d1 = _matrix_dims(A, dim)
    if dtype is not None:
        check_norm_dtype(A, dtype, "linalg.matrix_norm")
        A = A.to(dtype)
    if ord == "fro":
        return vector_norm(A, 2, (d0, d1), keepdim)
    if ord == "nuc" or ord in (2, -2):
        perm = [d for d in range(A._data.ndim) if d not in (d0, d1)] + [d0, d1]
        s = svdvals(A.permute(*perm))
        r = s.sum(-1) if ord == "nuc" else s.amax(-1) if ord == 2 else s.amin(-1)
        if keepdim:
            inverse = [perm.index(d) for d in range(len(perm))]
            r = r.unsqueeze(-1).unsqueeze(-1).permute(*inverse)
        return r
    if ord in (1, -1, math.inf, -math.inf):
        rows, cols = (d0, d1) if ord in (1, -1) else (d1, d0)
        if not keepdim and cols > rows:
            cols -= 1
        s = A.abs().sum(rows, keepdim=keepdim)
        return s.amax(cols, keepdim=keepdim) if ord > 0 else s.amin(cols, keepdim=keepdim)
    raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None, out=None):
    """``vector_norm`` or ``matrix_norm`` by ``ord`` and ``dim``, as PyTorch decides: a
    2-tuple dim (or a 2-D input with an ord and no dim) is a matrix norm."""
    dtype = dtype_arg(dtype, "norm")
    _no_out(out, "linalg.norm")
    if dim is not None:
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
        if len(dims) == 2:
            return matrix_norm(A, "fro" if ord is None else ord, dims, keepdim, dtype=dtype)
        return vector_norm(A, 2 if ord is None else ord, dims, keepdim, dtype=dtype)
    if ord is None:
        return vector_norm(A, 2, None, keepdim, dtype=dtype)
    nd = A._data.ndim
    if nd == 2:
        return matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype)
    if nd == 1:
        return vector_norm(A, ord, None, keepdim, dtype=dtype)
    raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be "
                       f"1D or 2D. Got {nd}D.")


@_autocast.policy("linalg_cond")
def cond(A, p=None, *, out=None):
    """Condition number: ``s_max / s_min`` for p in (None, 2), its inverse for -2, else
    ``norm(A, p) * norm(inv(A), p)``."""
    _no_out(out, "linalg.cond")
    if A._data.ndim < 2:
        raise RuntimeError("linalg.cond: The input tensor must have at least 2 dimensions.")
    if p is None or p in (2, -2):
        s = svdvals(A)
        r = s[..., :1] / s[..., -1:] if p != -2 else s[..., -1:] / s[..., :1]
        return r.squeeze(-1)
    _check_square(A, f"linalg.cond(ord={p})")
    return matrix_norm(A, p) * matrix_norm(inv(A), p)


@_autocast.policy("linalg_matrix_rank")
def matrix_rank(A, *, atol=None, rtol=None, hermitian=False, out=None):
    """Number of singular values (eigenvalue magnitudes when ``hermitian``) above
    ``max(atol, rtol * s_max)``, as int64."""
    _no_out(out, "linalg.matrix_rank")
    _need_dims(A, "torch.linalg.matrix_rank", "input")
    if not is_float(A._data.dtype):
        raise RuntimeError("This function doesn't handle types other than float and double")
    a = A._data
    xp = get_array_module(a)
    s = xp.abs(xp.linalg.eigvalsh(a)) if hermitian else xp.linalg.svd(a, compute_uv=False)
    atol_v, rtol_v = _tolerances(A, atol, rtol)
    top = s.max(axis=-1, keepdims=True) if s.shape[-1] else s
    thr = xp.maximum(atol_v, rtol_v * top)
    return wrap(xp.asarray((s > thr).sum(-1), dtype=_dtype.int64.np), xp)


# ---- legacy top-level forms --------------------------------------------------------------

@_autocast.policy("svd")
def _legacy_svd(input, some=True, compute_uv=True):
    """``torch.svd``: ``(U, S, V)`` with V (not Vh); ``some=False`` gives square U and V;
    without ``compute_uv`` U and V are square zeros."""
    _need_dims(input, "linalg.svd")
    _check_float(input, "linalg.svd")
    if not compute_uv:
        s = svdvals(input)
        m, n = input._data.shape[-2:]
        batch = input._data.shape[:-2]
        u = zeros(*batch, m, m, dtype=input.dtype)
        v = zeros(*batch, n, n, dtype=input.dtype)
        return rt.svd((u, s, v))
    u, s, vh = apply(_svd, (input,), (not some,))
    return rt.svd((u, s, vh.mT))


@_autocast.policy("qr")
def _legacy_qr(input, some=True):
    return rt.qr(qr(input, "reduced" if some else "complete"))


@_autocast.policy("cholesky")
def _legacy_cholesky(input, upper=False):
    _check_square(input, "cholesky", dtype=False)
    _check_float(input, "cholesky")
    return apply(_cholesky_legacy, (input,), (upper, True, "linalg.cholesky"))[0]


def _factor_triangle(xp, factor, upper):
    """The lower-triangular factor a Cholesky factor's triangle holds: LAPACK's potrs and
    potri, PyTorch's, read that triangle alone, whatever the other holds."""
    return _mT(xp, xp.triu(factor)) if upper else xp.tril(factor)


def _cholesky_solve_fwd(xp, self, input2, upper):
    L = _factor_triangle(xp, input2, upper)
    return _solve(xp, _mT(xp, L), _solve(xp, L, self))


def _cholesky_solve_grad_self(xp, grad, input2, upper):
    return _cholesky_solve_fwd(xp, grad, input2, upper)


def _cholesky_solve_grad_L(xp, grad, input2, result, upper):
    gb = _cholesky_solve_fwd(xp, grad, input2, upper)
    c = xp.matmul(gb, _mT(xp, result))
    c = c + _mT(xp, c)
    return -xp.matmul(input2, c) if upper else -xp.matmul(c, input2)


_cholesky_solve = defop("cholesky_solve", _cholesky_solve_fwd,
                        vjp={"self": _cholesky_solve_grad_self,
                             "input2": _cholesky_solve_grad_L}, jvp="transpose")


@_autocast.policy("cholesky_solve")
def _legacy_cholesky_solve(input, input2, upper=False, *, out=None):
    """``torch.cholesky_solve(B, L)``: ``X`` with ``L L^T X = B`` (``U^T U`` if upper)."""
    _no_out(out, "cholesky_solve")
    if input._data.ndim < 2 or input2._data.ndim < 2:
        raise RuntimeError(f"b should have at least 2 dimensions, but has "
                           f"{input._data.ndim} dimensions instead")
    return apply(_cholesky_solve, (input, input2), (bool(upper),))


def _cholesky_inverse_fwd(xp, self, upper):
    li = xp.linalg.inv(_factor_triangle(xp, self, upper))
    return xp.matmul(_mT(xp, li), li)


def _cholesky_inverse_grad(xp, grad, self, result, upper):
    c = grad + _mT(xp, grad)
    c = xp.matmul(xp.matmul(result, c), result)
    return -xp.matmul(self, c) if upper else -xp.matmul(c, self)


_cholesky_inverse = defop("cholesky_inverse", _cholesky_inverse_fwd,
                          vjp={"self": _cholesky_inverse_grad}, jvp="transpose")


@_autocast.policy("cholesky_inverse")
def _legacy_cholesky_inverse(input, upper=False, *, out=None):
    """``(L L^T)^{-1}`` from the Cholesky factor L (``(U^T U)^{-1}`` if upper)."""
    _no_out(out, "cholesky_inverse")
    _check_square(input, "cholesky_inverse")
    return apply(_cholesky_inverse, (input,), (bool(upper),))


def _triangular_solve_fwd(xp, self, A, upper, transpose, unitriangular):
    t = _tri(xp, A, upper, unitriangular)
    x = _solve(xp, _mT(xp, t) if transpose else t, self)
    return x, xp.copy(xp.broadcast_to(A, x.shape[:-2] + A.shape[-2:]))


def _triangular_solve_grad_self(xp, grads, A, upper, transpose, unitriangular):
    t = _tri(xp, A, upper, unitriangular)
    return _solve(xp, t if transpose else _mT(xp, t), grads[0])


def _triangular_solve_grad_A(xp, grads, A, solution, upper, transpose, unitriangular):
    gb = _triangular_solve_grad_self(xp, grads, A, upper, transpose, unitriangular)
    ga = -xp.matmul(solution, _mT(xp, gb)) if transpose else -xp.matmul(gb, _mT(xp, solution))
    ga = _tri(xp, ga, upper, False)
    if unitriangular:
        ga = ga * (1 - _eye(xp, ga.shape[-1], ga))
    return ga + grads[1]


_triangular_solve = defop("triangular_solve", _triangular_solve_fwd,
                          outputs=("solution", "cloned_coefficient"),
                          vjp={"self": _triangular_solve_grad_self,
                               "A": _triangular_solve_grad_A}, jvp="transpose")


@_autocast.policy("triangular_solve")
def _legacy_triangular_solve(input, A, upper=True, transpose=False, unitriangular=False, *,
                             out=None):
    """``torch.triangular_solve(b, A)``: ``(X, A)`` with ``A X = b`` (``A^T X = b``)."""
    _no_out(out, "triangular_solve")
    if input._data.ndim < 2:
        raise RuntimeError(f"torch.triangular_solve: Expected b to have at least 2 dimensions, "
                           f"but it has {input._data.ndim} dimensions instead")
    if A._data.ndim < 2:
        raise RuntimeError(f"torch.triangular_solve: Expected A to have at least 2 dimensions, "
                           f"but it has {A._data.ndim} dimensions instead")
    return rt.triangular_solve(apply(_triangular_solve, (input, A),
                                     (bool(upper), bool(transpose), bool(unitriangular))))


# ---- small composites -------------------------------------------------------------------------

def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """``torch.diagonal`` with the matrix dims last by default."""
    return A.diagonal(offset, dim1, dim2)


def vander(x, N=None):
    """Columns ``x^0, x^1, ..., x^(N-1)`` (increasing powers, unlike NumPy's default)."""
    if x._data.ndim < 1:
        raise RuntimeError("linalg.vander: x must have at least one dimension.")
    n = x._data.shape[-1] if N is None else N
    if n < 2:
        raise RuntimeError("N must be greater than 1.")
    col = x.unsqueeze(-1)
    first = x.new_ones(col.shape)
    return cat([first, col.expand(*col.shape[:-1], n - 1).cumprod(-1)], -1)


@_autocast.policy("linalg_tensorinv")
def tensorinv(A, ind=2, *, out=None):
    """The inverse of A as a map from its first ``ind`` dims to the rest."""
    _no_out(out, "linalg.tensorinv")
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    shape = A._data.shape
    rows, cols = math.prod(shape[:ind]), math.prod(shape[ind:])
    if rows != cols:
        raise RuntimeError(f"Expected self to satisfy the requirement "
                           f"prod(self.shape[ind:]) == prod(self.shape[:ind]), but got "
                           f"{cols} != {rows}")
    return inv(A.reshape(rows, cols)).reshape(*shape[ind:], *shape[:ind])


@_autocast.policy("linalg_tensorsolve")
def tensorsolve(A, B, dims=None, *, out=None):
    """``X`` with ``tensordot(A, X, X.ndim) = B``."""
    _no_out(out, "linalg.tensorsolve")
    if dims is not None:
        nd = A._data.ndim
        dims = [d + nd if d < 0 else d for d in dims]
        A = A.movedim(dims, list(range(nd - len(dims), nd)))
    sb = B._data.shape
    rest = A._data.shape[B._data.ndim:]
    n = math.prod(rest)
    return solve(A.reshape(math.prod(sb), n), B.reshape(-1)).reshape(*rest)


def _no_out(out, fn):
    if out is not None:
        raise NotImplementedError(f"{fn}(out=...): out= is not supported by retrograd")


# ---- the top-level names and Tensor methods -------------------------------------------------

register(det, name="det")
register(logdet, name="logdet")
register(lambda input: rt.slogdet(slogdet(input)), name="slogdet")
register(lambda input: inv(input), name="inverse")
register(lambda input, rcond=1e-15: pinverse(input, rcond), name="pinverse")
register(_legacy_svd, name="svd")
register(_legacy_qr, name="qr")
register(_legacy_cholesky, name="cholesky")
register(_legacy_cholesky_solve, name="cholesky_solve")
register(_legacy_cholesky_inverse, name="cholesky_inverse")
register(_legacy_triangular_solve, name="triangular_solve")
register(matrix_power, name="matrix_power")
register(matrix_exp, name="matrix_exp")
register(_legacy_cross, name="cross")
register(lu_unpack, name="lu_unpack", method=False)
register(householder_product, name="orgqr")


_tensor_xp.register_linalg(  # NumPy's linalg names on the facade, with NumPy's signatures
    LinAlgError=LinAlgError, solve=solve, inv=inv, det=det, pinv=pinv,
    svd=lambda a, full_matrices=True: tuple(svd(a, full_matrices)),
    eigh=lambda a, UPLO="L": tuple(eigh(a, UPLO)))  # noqa: N803 (NumPy's argument name)
