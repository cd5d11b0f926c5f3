"""Matrix products: matmul (``@``), mm, bmm, mv, dot, vdot, outer, addmm, baddbmm, trace,
tensordot and einsum.

Every product is one ``xp.matmul`` (or tensordot/einsum) call forward and one per
input backward (on NumPy, an outer product is a compiled loop and a few-row ``x @ w.t()``
OpenBLAS's faster transposed GEMM: the fast paths below). When a batched operand meets a
plain matrix, its batch dims are folded into the rows, so ``(B, T, n) @ (n, p)`` and the
weight's gradient are each a single GEMM instead of B of them (and no (B, n, p)
intermediate to sum). Gradients of operands that were broadcast over batch dims are
reduced by the engine, as for any op.

grad_fn names follow the node PyTorch shows on the result: ``DotBackward0``,
``MvBackward0``, ``MmBackward0`` for the 1-D/2-D cases of matmul, ``SqueezeBackward4``
for vector @ matrix, ``UnsafeViewBackward0`` for the batched cases (``CloneBackward0``
where PyTorch transposes a matrix that requires grad), ``ViewBackward0`` for tensordot
and ``MulBackward0`` for outer. einsum, which PyTorch decomposes into permutes and bmm
with no one node of its own, records ``EinsumBackward0``.
"""

import inspect
import math
import string

from .. import _autocast
from .._tensor import Tensor
from ..backend import cpu_kernels, mkl_gemm
from ..backend.functions import functions
from ._registry import _pretty, apply, apply_inplace, defop, kernel, register, register_pair
from .._dtype import CPP_NAMES, FLOAT, int64, legacy_type_name, result_type
from .reduction import _dim1, _no_out

__all__ = ["matmul", "mm", "bmm", "mv", "dot", "vdot", "inner", "outer", "ger", "addmm", "addmv",
           "addr", "baddbmm", "addbmm", "trace", "tensordot", "einsum"]


# ---- matmul and its special cases ---------------------------------------------------------

def _fold_matmul(xp, a, b):
    """``a @ b``; a batched ``a`` times a matrix or vector is one GEMM over stacked rows;
    over one contracted element, outer products (NumPy's matmul takes 15x as long for
    that one: a batch-1 weight gradient); batches of matrices by the module's
    ``batched_matmul``."""
    if a.ndim >= 2 and b.ndim >= 2 and a.shape[-1] == 1:
        return functions(xp).outer(a[..., 0], b[..., 0, :])
    if a.ndim > 2 and b.ndim <= 2:
        rows = math.prod(a.shape[:-1])
        out = functions(xp).matmul(xp.reshape(a, (rows, a.shape[-1])), b)
        return xp.reshape(out, tuple(a.shape[:-1]) + tuple(b.shape[1:]))
    if b.ndim > 2:
        return functions(xp).batched_matmul(a, b)
    return functions(xp).matmul(a, b)


# (The transposes of the gradient rules below are the arrays' swapaxes methods, which every
# array namespace has: numpy.swapaxes calls through Python wrappers, which in a training
# step run cold, after a large pass.)
def _matmul_grad_self(xp, grad, other, self_shape):
    if other.ndim == 1:  # (..., m, n) @ (n,) or a dot product: an outer product back
        return grad * other if len(self_shape) == 1 else functions(xp).outer(grad, other)
    if len(self_shape) == 1:  # (n,) @ (..., n, p)
        if other.ndim == 2:
            return functions(xp).matmul(other, grad)
        return xp.squeeze(functions(xp).matmul(other, xp.expand_dims(grad, -1)), -1)
    return _fold_matmul(xp, grad, other.swapaxes(-1, -2))


def _matmul_grad_other(xp, grad, self, other_shape, other_strides):
    if self.ndim == 1:
        if len(other_shape) == 1:
            return grad * self
        if len(other_shape) == 2 and other_strides[0] < other_strides[1]:
            # an outer product for a transposed matrix (x @ w.t()): in w's own layout
            return xp.swapaxes(functions(xp).outer(grad, self), -1, -2)
        return functions(xp).outer(self, grad)
    if len(other_shape) <= 2 and self.ndim > 2:  # batch folded into rows: one GEMM
        rows = math.prod(self.shape[:-1])
        a = xp.reshape(self, (rows, self.shape[-1]))
        if len(other_shape) == 1:
            return functions(xp).matmul(xp.reshape(grad, (rows,)), a)
        return functions(xp).matmul(xp.swapaxes(a, 0, 1),
                                    xp.reshape(grad, (rows, other_shape[-1])))
    if len(other_shape) == 1:
        return functions(xp).matmul(grad, self)
    if len(other_shape) == 2 and other_strides[0] < other_strides[1]:
        # A transposed matrix (x @ w.t()): compute its gradient in its layout, as
        # PyTorch's mm_mat2_backward, so it reaches w's .grad without a copy.
        return _fold_matmul(xp, grad.swapaxes(-1, -2), self).swapaxes(-1, -2)
    return _fold_matmul(xp, self.swapaxes(-1, -2), grad)


def _matmul_fwd(xp, self, other):
    return _fold_matmul(xp, self, other)


# ---- NumPy fast path: few-row products ----------------------------------------------------

def _wide_nt(self, other):
    """``x @ w.t()`` (``other`` a transposed matrix) with 8 or more times as many output
    columns as rows: OpenBLAS computes the transposed product ``w @ x.t()`` faster
    (measured for a 1024x1024 ``w``: 2x at 4 to 16 rows, 1.25x at 64, 1.05x at 128; the
    GEMM it picks for an NT product with few rows is slow). Small products gain nothing."""
    return (self.ndim == 2 and other.ndim == 2 and 1 < self.shape[0]
            and 8 * self.shape[0] <= other.shape[1] and other.size >= 16384
            and other.flags.f_contiguous and self.dtype == other.dtype
            and self.dtype.char in "fd" and not mkl_gemm.takes(self, other))


def _nt_swapped(xp, self, other):
    """``self @ other`` as ``(other^T @ self^T)^T``, laid out C-contiguous (in tiles:
    ``cpu_kernels.contiguous``)."""
    return cpu_kernels.contiguous(xp.matmul(other.T, self.T).T)


_MATMUL_FWD = kernel(_matmul_fwd, _nt_swapped, _wide_nt)
_MATMUL_VJP = {"self": _matmul_grad_self, "other": _matmul_grad_other}


def _matmul_op(name, node=None):
    return defop(name, _MATMUL_FWD, vjp=_MATMUL_VJP, node=node, jvp="multilinear")


_dot = _matmul_op("dot")
_vdot = _matmul_op("vdot")
_mv = _matmul_op("mv")
_mm = _matmul_op("mm")
_bmm = _matmul_op("bmm")
_matmul_squeeze = _matmul_op("matmul", "SqueezeBackward4")
_matmul_view = _matmul_op("matmul", "UnsafeViewBackward0")
_matmul_clone = _matmul_op("matmul", "CloneBackward0")


def _no_bool(a, kernel, out_numel=1, k=1):
    """PyTorch has no bool products; its message names the kernel that refused. Its
    gemm-based kernels return early (an empty or zero-filled result) before dispatching on
    the dtype when the result is empty or the inner size ``k`` is 0."""
    if a._data.dtype.kind == "b" and out_numel and k:
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")


def _check_mm(a, b, shape_a=None):
    """mm-style checks: same dtype, then inner sizes (``shape_a`` as PyTorch folds it)."""
    da, db = a._data.dtype, b._data.dtype
    if da != db:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                           f"{CPP_NAMES[da.name]} != {CPP_NAMES[db.name]}")
    sa = shape_a or a._data.shape
    sb = b._data.shape
    if sa[-1] != sb[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({sa[0]}x{sa[1]} and "
                           f"{sb[0]}x{sb[1]})")
    _no_bool(a, "addmm_impl_cpu_", sa[0] * sb[1], sa[1])


def _check_mv(a, v, rows):
    if a._data.dtype != v._data.dtype:
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got "
                           f"{_pretty(v._data.dtype)}, {_pretty(a._data.dtype)}, and "
                           f"{_pretty(v._data.dtype)}")
    n = a._data.shape[-1]
    if n != v._data.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({rows}), mat ({rows}x{n}), vec "
                           f"({v._data.shape[0]})")
    _no_bool(a, "addmv_impl_cpu", rows, n)


def _check_dot(a, b):
    if a._data.ndim != 1 or b._data.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {a._data.ndim}D and {b._data.ndim}D "
                           f"tensors")
    if a._data.dtype != b._data.dtype:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found "
                           f"{_pretty(a._data.dtype)} and {_pretty(b._data.dtype)}")
    n, m = a._data.shape[0], b._data.shape[0]
    if n != m:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{n}] and src [{m}] to "
                           f"have the same number of elements, but got {n} and {m} elements "
                           f"respectively")
    _no_bool(a, "dot")


def _batch_shape(sa, sb):
    """Broadcast batch dims, with PyTorch's message when they do not broadcast."""
    n = max(len(sa), len(sb))
    sa, sb = (1,) * (n - len(sa)) + tuple(sa), (1,) * (n - len(sb)) + tuple(sb)
    out = []
    for i, (x, y) in enumerate(zip(sa, sb, strict=True)):
        if x != y and x != 1 and y != 1:
            raise RuntimeError(f"The size of tensor a ({x}) must match the size of tensor b "
                               f"({y}) at non-singleton dimension {i}")
        out.append(x if y == 1 else y)
    return out


def _check_batched(a, b):
    """matmul with a batched operand: PyTorch's bmm checks on the broadcast batch."""
    sa, sb = a._data.shape, b._data.shape
    batch = _batch_shape(sa[:-2] if len(sa) > 2 else (), sb[:-2] if len(sb) > 2 else ())
    n, k = sa[-1], (sb[-2] if len(sb) > 1 else sb[0])
    if n != k:
        b_count = math.prod(batch)
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{b_count}, {n}] but got: [{b_count}, {k}].")
    rows, cols = (sa[-2] if len(sa) > 1 else 1), (sb[-1] if len(sb) > 1 else 1)
    _check_bmm_dtypes(a, b, math.prod(batch) * rows * cols, n)


def _check_bmm_dtypes(b1, b2, out_numel, k):
    """bmm dispatches on batch1's dtype (refusing bool) before it finds batch2's differs."""
    _no_bool(b1, "bmm", out_numel, k)
    if b1._data.dtype != b2._data.dtype:
        raise RuntimeError(f"expected scalar type {_pretty(b1._data.dtype)} but found "
                           f"{_pretty(b2._data.dtype)}")


def _tensor_arg(x, name, pos, fn):
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): argument '{name}' (position {pos}) must be Tensor, not "
                        f"{type(x).__name__}")


@register
@_autocast.policy("matmul")
def matmul(input, other, *, out=None):
    """Matrix product with NumPy/PyTorch broadcasting: 1-D operands are vectors, leading
    dims are batch dims.

    >>> (retrograd.ones(2, 3) @ retrograd.ones(3)).shape
    torch.Size([2])
    """
    _no_out(out, "matmul")
    _tensor_arg(other, "other", 2, "matmul")
    na, nb = input._data.ndim, other._data.ndim
    if na == 0 or nb == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{na}D and {nb}D")
    if nb == 1:
        if na == 1:
            _check_dot(input, other)
            return apply(_dot, (input, other))
        rows = math.prod(input._data.shape[:-1])
        _check_mv(input, other, rows)
        return apply(_mv if na == 2 else _matmul_view, (input, other))
    if na <= 2 and nb == 2:
        _check_mm(input, other, (1, input._data.shape[0]) if na == 1 else None)
        return apply(_mm if na == 2 else _matmul_squeeze, (input, other))
    if nb == 2:
        _check_mm(input, other, (math.prod(input._data.shape[:-1]), input._data.shape[-1]))
        return apply(_matmul_view, (input, other))
    _check_batched(input, other)
    return apply(_matmul_clone if _transposed_fold(input, other) else _matmul_view,
                 (input, other))


def _transposed_fold(a, b):
    """Where PyTorch computes ``(b^T @ a^T)^T`` and copies the result (CloneBackward0): a
    matrix (or a 3-D tensor with a batch of one, against a batch) that requires grad."""
    sa = a._data.shape
    return a.requires_grad and (len(sa) == 2 or (len(sa) == 3 and sa[0] == 1 and
                                                  b._data.ndim == 3 and b._data.shape[0] > 1))


@register
@_autocast.policy("mm")
def mm(input, mat2, *, out=None):
    """Product of two matrices."""
    _no_out(out, "mm")
    _tensor_arg(mat2, "mat2", 2, "mm")
    if input._data.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if mat2._data.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    _check_mm(input, mat2)
    return apply(_mm, (input, mat2))


def _check_bmm(b1, b2):
    if b1._data.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if b2._data.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    s1, s2 = b1._data.shape, b2._data.shape
    if s2[0] != s1[0] or s2[1] != s1[2]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{s1[0]}, {s1[2]}] but got: [{s2[0]}, {s2[1]}].")
    _check_bmm_dtypes(b1, b2, s1[0] * s1[1] * s2[2], s1[2])


@register
@_autocast.policy("bmm")
def bmm(input, mat2, *, out=None):
    """Batched matrix product of two 3-D tensors with equal batch sizes."""
    _no_out(out, "bmm")
    _tensor_arg(mat2, "mat2", 2, "bmm")
    _check_bmm(input, mat2)
    return apply(_bmm, (input, mat2))


@register
def mv(input, vec, *, out=None):
    """Matrix-vector product."""
    _no_out(out, "mv")
    if input._data.ndim != 2 or vec._data.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {input._data.ndim}, "
                           f"{vec._data.ndim}")
    _check_mv(input, vec, input._data.shape[0])
    return apply(_mv, (input, vec))


@register
def dot(input, tensor, *, out=None):
    """Inner product of two 1-D tensors of the same dtype."""
    _no_out(out, "dot")
    _check_dot(input, tensor)
    return apply(_dot, (input, tensor))


@register
def vdot(input, other, *, out=None):
    """``dot`` of the conjugate of ``input`` (the same as dot for real tensors)."""
    _no_out(out, "vdot")
    _check_dot(input, other)
    return apply(_vdot, (input, other))


# ---- outer, addmm, baddbmm, trace ---------------------------------------------------------

_outer = defop("outer", lambda xp, self, vec2: functions(xp).outer(self, vec2),
               vjp={"self": lambda xp, grad, vec2:
                    functions(xp).matmul(grad, xp.astype(vec2, grad.dtype, copy=False)),
                    "vec2": lambda xp, grad, self:
                    functions(xp).matmul(xp.astype(self, grad.dtype, copy=False), grad)},
               promote=("self", "vec2"), node="MulBackward0", jvp="multilinear")


@register(aliases=("ger",))
def outer(input, vec2, *, out=None):
    """Outer product of two vectors (types promote, as for ``*``).

    >>> retrograd.outer(retrograd.tensor([1., 2.]), retrograd.tensor([1., 0., 3.]))
    tensor([[1., 0., 3.],
            [2., 0., 6.]])
    """
    _no_out(out, "outer")
    for t, name in ((input, "self"), (vec2, "vec2")):
        if t._data.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got "
                               f"{t._data.ndim}-D")
    return apply(_outer, (input, vec2))


ger = outer


def _addmm_fwd(xp, self, mat1, mat2, beta, alpha):
    r = functions(xp).matmul(mat1, mat2)  # a fresh array: scaled in place
    if alpha != 1:
        r *= alpha
    if beta != 0:  # PyTorch ignores ``input`` (even NaN) when beta is 0
        r = xp.add(r, self if beta == 1 else self * beta)  # (self may vary where r does not)
    return r


def _scaled(g, s):
    return g * s if s != 1 else g


_ADD_MATMUL_VJP = {
    "self": lambda grad, beta: _scaled(grad, beta),
    "mat1": lambda xp, grad, mat2, alpha:
    _scaled(functions(xp).matmul(grad, xp.swapaxes(mat2, -1, -2)), alpha),
    "mat2": lambda xp, grad, mat1, alpha:
    _scaled(functions(xp).matmul(xp.swapaxes(mat1, -1, -2), grad), alpha)}
def _addmm_jvp(xp, self_t, mat1_t, mat2_t, mat1, mat2, beta, alpha):
    """d(beta * self + alpha * mat1 @ mat2): the product rule on the matmul."""
    t = None
    if mat1_t is not None:
        t = functions(xp).matmul(mat1_t, mat2)
    if mat2_t is not None:
        t2 = functions(xp).matmul(mat1, mat2_t)
        t = t2 if t is None else t + t2
    if t is not None:
        t = _scaled(t, alpha)
    if self_t is not None and beta != 0:
        t = _scaled(self_t, beta) if t is None else t + _scaled(self_t, beta)
    return t


_addmm = defop("addmm", _addmm_fwd, vjp=_ADD_MATMUL_VJP, jvp=_addmm_jvp)
_baddbmm = defop("baddbmm", _addmm_fwd, vjp=_ADD_MATMUL_VJP, jvp=_addmm_jvp)


def _check_add_input(input, out_shape, mat2):
    if input._data.dtype != mat2._data.dtype:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got "
                           f"{_pretty(input._data.dtype)} and {_pretty(mat2._data.dtype)}")
    _check_expand(input, out_shape)


def _check_expand(input, out_shape):
    """PyTorch's errors when ``input`` does not expand to ``out_shape``."""
    s = input._data.shape
    lead = len(out_shape) - len(s)
    if lead < 0:
        raise RuntimeError(f"expand({legacy_type_name(input.dtype)}{{{list(s)}}}, size="
                           f"{list(out_shape)}): the number of sizes provided "
                           f"({len(out_shape)}) must be greater or equal to the number of "
                           f"dimensions in the tensor ({len(s)})")
    for i, n in enumerate(s):
        if n != 1 and n != out_shape[lead + i]:
            raise RuntimeError(f"The expanded size of the tensor ({out_shape[lead + i]}) must "
                               f"match the existing size ({n}) at non-singleton dimension "
                               f"{lead + i}.  Target sizes: {list(out_shape)}.  Tensor sizes: "
                               f"{list(s)}")


def _addmm_args(input, mat1, mat2):
    """addmm's checks in ATen's order: self's and mat1's dtypes against mat2's, then the
    shapes."""
    d2 = mat2._data.dtype
    for t, name in ((input, "self"), (mat1, "mat1")):
        if t._data.dtype != d2:
            raise RuntimeError(f"{name} and mat2 must have the same dtype, but got "
                               f"{_pretty(t._data.dtype)} and {_pretty(d2)}")
    for t, name in ((mat1, "mat1"), (mat2, "mat2")):
        if t._data.ndim != 2:
            raise RuntimeError(f"{name} must be a matrix, got {t._data.ndim}-D tensor")
    _check_mm(mat1, mat2)
    _check_add_input(input, (mat1._data.shape[0], mat2._data.shape[1]), mat2)


def _scalars(mat, beta, alpha):
    """Integer products take integer factors (PyTorch truncates them)."""
    if mat._data.dtype.kind in "iu":
        return int(beta), int(alpha)
    return beta, alpha


@register
@_autocast.policy("addmm")
def addmm(input, mat1, mat2, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * (mat1 @ mat2)``, ``input`` broadcast to the product."""
    _no_out(out, "addmm")
    _addmm_args(input, mat1, mat2)
    return apply(_addmm, (input, mat1, mat2), _scalars(mat1, beta, alpha))


@register(function=False)
def addmm_(self, mat1, mat2, *, beta=1, alpha=1):
    _addmm_args(self, mat1, mat2)
    return apply_inplace(_addmm, self, (mat1, mat2), _scalars(mat1, beta, alpha))


def _baddbmm_args(input, batch1, batch2):
    _check_bmm(batch1, batch2)
    s1, s2 = batch1._data.shape, batch2._data.shape
    _check_add_input(input, (s1[0], s1[1], s2[2]), batch2)


@register
@_autocast.policy("baddbmm")
def baddbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * bmm(batch1, batch2)``."""
    _no_out(out, "baddbmm")
    _baddbmm_args(input, batch1, batch2)
    return apply(_baddbmm, (input, batch1, batch2), _scalars(batch1, beta, alpha))


@register(function=False)
def baddbmm_(self, batch1, batch2, *, beta=1, alpha=1):
    _baddbmm_args(self, batch1, batch2)
    return apply_inplace(_baddbmm, self, (batch1, batch2), _scalars(batch1, beta, alpha))


def _summed_bmm(xp, batch1, batch2):
    """The sum over the batch of ``batch1[b] @ batch2[b]`` as one product: the batches side
    by side in the rows' contraction, (n, B*m) @ (B*m, p)."""
    b, n, m = batch1.shape
    return (xp.reshape(xp.swapaxes(batch1, 0, 1), (n, b * m)),
            xp.reshape(batch2, (b * m, batch2.shape[-1])))


def _addbmm_jvp(xp, self_t, batch1_t, batch2_t, batch1, batch2, beta, alpha):
    mat1, mat2 = _summed_bmm(xp, batch1, batch2)
    mat1_t = None if batch1_t is None else _summed_bmm(xp, batch1_t, batch2)[0]
    mat2_t = None if batch2_t is None else _summed_bmm(xp, batch1, batch2_t)[1]
    return _addmm_jvp(xp, self_t, mat1_t, mat2_t, mat1, mat2, beta, alpha)


# The gradients of the batches are the addmm rules' with the output's gradient broadcast
# over the batch: grad @ batch2[b]^T and batch1[b]^T @ grad.
_addbmm = defop(
    "addbmm", lambda xp, self, batch1, batch2, beta, alpha:
    _addmm_fwd(xp, self, *_summed_bmm(xp, batch1, batch2), beta, alpha),
    vjp={"self": _ADD_MATMUL_VJP["self"],
         "batch1": lambda xp, grad, batch2, alpha:
         _scaled(functions(xp).matmul(grad, xp.swapaxes(batch2, -1, -2)), alpha),
         "batch2": lambda xp, grad, batch1, alpha:
         _scaled(functions(xp).matmul(xp.swapaxes(batch1, -1, -2), grad), alpha)},
    jvp=_addbmm_jvp)


def _addbmm_args(input, batch1, batch2, inplace):
    """addbmm's checks in ATen's order: ``input`` expanded to the result's shape (the
    second dims of the batches), the batches' ranks, counts and sizes, then the dtypes.
    In place, ``input`` must have the result's shape (see docs/deviations.md)."""
    _tensor_arg(batch1, "batch1", 2, "addbmm")
    _tensor_arg(batch2, "batch2", 3, "addbmm")
    s1, s2 = batch1._data.shape, batch2._data.shape
    if len(s1) >= 2 and len(s2) >= 3:
        _check_expand(input, (s1[1], s2[2]))
        if inplace and tuple(input._data.shape) != (s1[1], s2[2]):
            raise NotImplementedError(
                f"addbmm_: self of shape {list(input._data.shape)} would be resized to the "
                f"result's {[s1[1], s2[2]]}; retrograd does not resize tensors in place")
    for t, name in ((batch1, "batch1"), (batch2, "batch2")):
        if t._data.ndim != 3:
            raise RuntimeError(f"{name} must be a 3D tensor")
    if s1[0] != s2[0]:
        raise RuntimeError(f"batch1 and batch2 must have same number of batches, got {s1[0]} "
                           f"and {s2[0]}")
    if s1[2] != s2[1]:
        raise RuntimeError(f"Incompatible matrix sizes for bmm ({s1[1]}x{s1[2]} and "
                           f"{s2[1]}x{s2[2]})")
    d2 = batch2._data.dtype
    for t, name in ((input, "self"), (batch1, "mat1")):
        if t._data.dtype != d2:
            raise RuntimeError(f"{name} and mat2 must have the same dtype, but got "
                               f"{_pretty(t._data.dtype)} and {_pretty(d2)}")


@register
@_autocast.policy("addbmm")
def addbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):
    """``beta * input + alpha * sum_b batch1[b] @ batch2[b]``, ``input`` broadcast to the
    (n, p) result: one GEMM over the batches laid side by side."""
    _no_out(out, "addbmm")
    _addbmm_args(input, batch1, batch2, False)
    return apply(_addbmm, (input, batch1, batch2), _scalars(batch1, beta, alpha))


@register(function=False)
def addbmm_(self, batch1, batch2, *, beta=1, alpha=1):
    _addbmm_args(self, batch1, batch2, True)
    return apply_inplace(_addbmm, self, (batch1, batch2), _scalars(batch1, beta, alpha))


def _addmv_jvp(xp, self_t, mat_t, vec_t, mat, vec, beta, alpha):
    return _addmm_jvp(xp, self_t, mat_t, vec_t, mat, vec, beta, alpha)


_addmv = defop("addmv", lambda xp, self, mat, vec, beta, alpha:
               _addmm_fwd(xp, self, mat, vec, beta, alpha),
               vjp={"self": lambda grad, beta: _scaled(grad, beta),
                    "mat": lambda xp, grad, vec, alpha: _scaled(xp.outer(grad, vec), alpha),
                    "vec": lambda xp, grad, mat, alpha: _scaled(xp.matmul(mat.T, grad), alpha)},
               jvp=_addmv_jvp)


def _addmv_args(input, mat, vec, inplace):
    """addmv's checks in ATen's order: the dims, the sizes (an input of one element
    broadcasts, except into itself), then the dtypes."""
    a, m, v = input._data, mat._data, vec._data
    if m.ndim != 2 or v.ndim != 1 or a.ndim > 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {a.ndim}, {m.ndim}, "
                           f"{v.ndim}")
    n = a.shape[0] if a.ndim else 1
    if m.shape[1] != v.shape[0] or (n != m.shape[0] and a.size != 1):
        raise RuntimeError(f"size mismatch, got input ({n}), mat ({m.shape[0]}x{m.shape[1]}), "
                           f"vec ({v.shape[0]})")
    if inplace and a.shape != (m.shape[0],):
        raise RuntimeError(f"Bad in-place call: input tensor size {list(a.shape)} and output "
                           f"tensor size [{m.shape[0]}] should match")
    if not a.dtype == m.dtype == v.dtype:
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got "
                           f"{_pretty(a.dtype)}, {_pretty(m.dtype)}, and {_pretty(v.dtype)}")


def _addmv_fn(input, mat, vec, *, beta=1, alpha=1, out=None):
    _no_out(out, "addmv")
    _addmv_args(input, mat, vec, False)
    return apply(_addmv, (input, mat, vec), _scalars(mat, beta, alpha))


def _addmv_fn_(self, mat, vec, *, beta=1, alpha=1):
    _addmv_args(self, mat, vec, True)
    return apply_inplace(_addmv, self, (mat, vec), _scalars(mat, beta, alpha))


addmv, addmv_ = register_pair(
    "addmv", _addmv_fn, _addmv_fn_,
    """``beta * input + alpha * (mat @ vec)``; with beta 0, ``input`` is ignored (even NaN).""")
register(addmv_, method=False)  # torch.addmv_ as well as the method


def _addr_fwd(xp, self, vec1, vec2, beta, alpha):
    r = xp.multiply.outer(vec1, vec2)
    if alpha != 1:
        r = r * alpha
    if beta != 0:  # (input ignored, even NaN, when beta is 0)
        r = r + (self if beta == 1 else self * beta)
    return r.astype(vec1.dtype)  # (bool: and/or; an int factor on bools stays bool)


_addr = defop("addr", _addr_fwd,
              vjp={"self": lambda grad, beta: _scaled(grad, beta),
                   "vec1": lambda xp, grad, vec2, alpha: _scaled(xp.matmul(grad, vec2), alpha),
                   "vec2": lambda xp, grad, vec1, alpha: _scaled(xp.matmul(vec1, grad), alpha)},
              promote=("self", "vec1", "vec2"), jvp="transpose")


def _addr_args(input, vec1, vec2, beta, alpha, inplace):
    """addr's checks in ATen's order: the vectors' dims, the input's shape (in place: a
    matrix of the outer product's size), then integral factors."""
    for t, name in ((vec1, "vec1"), (vec2, "vec2")):
        if t._data.ndim != 1:
            raise RuntimeError(f"addr: Expected 1-D argument {name}, but got "
                               f"{t._data.ndim}-D")
    out_shape = (vec1._data.shape[0], vec2._data.shape[0])
    if inplace:
        if input._data.ndim != 2:
            raise RuntimeError(f"2D tensor expected, got {input._data.ndim}D tensor for input")
        if input._data.shape != out_shape:
            raise RuntimeError(f"size mismatch, input: {list(input._data.shape)}, v1: "
                               f"[{out_shape[0]}], v2: [{out_shape[1]}]")
    else:
        _check_expand(input, out_shape)
    if result_type(input, vec1, vec2).category < FLOAT:
        for v, name in ((beta, "beta"), (alpha, "alpha")):
            if isinstance(v, float):
                raise RuntimeError(f"For integral input tensors, argument {name} must not be "
                                   f"a floating point number.")
    return beta, alpha


def _addr_fn(input, vec1, vec2, *, beta=1, alpha=1, out=None):
    _no_out(out, "addr")
    return apply(_addr, (input, vec1, vec2), _addr_args(input, vec1, vec2, beta, alpha, False))


def _addr_fn_(self, vec1, vec2, *, beta=1, alpha=1):
    return apply_inplace(_addr, self, (vec1, vec2),
                         _addr_args(self, vec1, vec2, beta, alpha, True))


addr, addr_ = register_pair(
    "addr", _addr_fn, _addr_fn_,
    """``beta * input + alpha * outer(vec1, vec2)``, in the inputs' promoted dtype.""")


_trace = defop("trace", lambda xp, self: xp.trace(self, dtype=int64.np)
               if self.dtype.kind in "iu" else xp.trace(self),
               vjp={"self": lambda xp, grad, self_shape:
                    xp.where(xp.eye(self_shape[0], self_shape[1], dtype=bool), grad, 0)},
               jvp="linear")


@register
@_autocast.policy("trace")
def trace(input):
    """Sum of the main diagonal of a matrix (int64 for integer input)."""
    if input._data.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim "
                           f"{input._data.ndim}")
    if input._data.dtype.kind == "b":
        raise NotImplementedError("\"trace\" not implemented for 'Bool'")
    return apply(_trace, (input,))


# ---- tensordot ----------------------------------------------------------------------------

def _tdot(xp, a, b, axes):
    """``tensordot`` over the axis lists ``axes``; none is the outer product, asked for as
    ``axes=0`` (CuPy refuses empty lists with a 0-d input)."""
    return xp.tensordot(a, b, axes=axes if len(axes[0]) else 0)


def _tensordot_grad_self(xp, grad, other, plan):
    free_a, free_b, inv_a, _ = plan
    g = _tdot(xp, grad, other, (list(range(len(free_a), grad.ndim)), free_b))
    return xp.transpose(g, inv_a)


def _tensordot_grad_other(xp, grad, self, plan):
    free_a, _, _, inv_b = plan
    g = _tdot(xp, self, grad, (free_a, list(range(len(free_a)))))
    return xp.transpose(g, inv_b)


_tensordot = defop("tensordot", lambda xp, self, other, dims, plan: _tdot(xp, self, other, dims),
                   vjp={"self": _tensordot_grad_self, "other": _tensordot_grad_other},
                   node="ViewBackward0", jvp="multilinear")


def _inverse(perm):
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return inv


def _tensordot_dims(a, b, dims):
    """(dims of a, dims of b) as given: a count of trailing/leading dims, or two lists."""
    na, nb = a._data.ndim, b._data.ndim
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > na or dims > nb:
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got "
                               f"dims={dims}")
        return [d - na for d in range(na - dims, na)], list(range(dims))
    da, db = dims
    da = [da] if isinstance(da, int) else list(da)
    db = [db] if isinstance(db, int) else list(db)
    if len(da) != len(db):
        raise RuntimeError("both dimension lists should have same length")
    return da, db


@register(method=False)
def tensordot(a, b, dims=2, out=None):
    """Contract ``dims`` (a count of trailing/leading dims, or two lists) of ``a`` and ``b``.

    >>> retrograd.tensordot(retrograd.ones(2, 3, 4), retrograd.ones(3, 4, 5)).shape
    torch.Size([2, 5])
    """
    _no_out(out, "tensordot")
    given_a, given_b = _tensordot_dims(a, b, dims)
    if a._data.dtype != b._data.dtype:
        raise RuntimeError("both inputs should have same dtype")
    _no_bool(a, "addmm_impl_cpu_")
    sa, sb = a._data.shape, b._data.shape
    da = [_dim1(d, len(sa)) for d in given_a]
    db = [_dim1(d, len(sb)) for d in given_b]
    for x, y, gx, gy in zip(da, db, given_a, given_b, strict=True):
        if sa[x] != sb[y]:
            raise RuntimeError(f"contracted dimensions need to match, but first has size "
                               f"{sa[x]} in dim {gx} and second has size {sb[y]} in dim {gy}")
    free_a = [d for d in range(len(sa)) if d not in da]
    free_b = [d for d in range(len(sb)) if d not in db]
    # tensordot(grad, b) leaves a's free axes, then b's contracted ones in ascending order
    # (standing for their partners in a); tensordot(a, grad) the converse.
    order_a = free_a + [da[db.index(j)] for j in sorted(db)]
    order_b = [db[da.index(i)] for i in sorted(da)] + free_b
    plan = (free_a, free_b, _inverse(order_a), _inverse(order_b))
    full = len(da) == len(sa) and len(db) == len(sb)  # a full contraction: PyTorch's dot
    return (_tensordot_apply if full else _tensordot_mm)(a, b, (da, db), plan)


def _tensordot_apply(a, b, dims, plan):
    return apply(_tensordot, (a, b), (dims, plan))


# (PyTorch's tensordot is otherwise an mm of the operands as matrices, which autocast lowers)
_tensordot_mm = _autocast.policy("mm")(_tensordot_apply)


@register
def inner(input, other, *, out=None):
    """Sum of products over the last dims (a plain product when one is 0-d)."""
    _no_out(out, "inner")
    if input._data.ndim == 0 or other._data.ndim == 0:
        return input * other
    return tensordot(input, other, ([-1], [-1]))


# ---- einsum -------------------------------------------------------------------------------

_LETTERS = string.ascii_uppercase + string.ascii_lowercase  # ASCII order: implicit output

# Two operands with at least this many elements in all go through NumPy's optimizer, which
# hands BLAS-shaped contractions to tensordot/matmul; below it the plain loop is faster.
_OPTIMIZE_SIZE = 4096


def _optimize(operands):
    """NumPy's contraction-order optimizer for 3+ operands, and for 2 large ones."""
    return len(operands) > 2 or (len(operands) == 2 and
                                 sum(math.prod(t.shape) for t in operands) >= _OPTIMIZE_SIZE)


class _Spec:
    """A parsed einsum: one label string per operand and the output's, ellipsis expanded."""

    __slots__ = ("inputs", "output", "equation", "optimize", "dtype")

    def __init__(self, inputs, output, optimize, dtype=None):
        self.inputs, self.output, self.optimize, self.dtype = inputs, output, optimize, dtype
        self.equation = ",".join(inputs) + "->" + output

    def __repr__(self):
        return self.equation


def _einsum_error(msg):
    return RuntimeError(f"einsum(): {msg}")


def _parse(equation, operands):
    """Labels per operand and for the output, with PyTorch's checks and messages."""
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) > len(operands):
        raise _einsum_error("fewer operands were provided than specified in the equation")
    if len(terms) < len(operands):
        raise _einsum_error("more operands were provided than specified in the equation")
    for i, ch in enumerate(equation):
        if not (ch.isascii() and ch.isalpha()) and ch not in " .,->":
            raise _einsum_error(f"invalid subscript given at index {i} in the equation "
                                f"string, subscripts must be in [a-zA-Z]")
    used = set(c for c in eq if c.isalpha())
    free = [c for c in _LETTERS if c not in used]
    ell_n = 0
    parsed = []
    for k, (t, op) in enumerate(zip(terms, operands, strict=True)):
        nd = op._data.ndim
        explicit = len(t) - 3 if "..." in t else len(t)
        if t.count(".") != (3 if "..." in t else 0):
            raise _einsum_error(f"found '.' for operand {k} that is not part of any ellipsis")
        if "..." in t:
            if explicit > nd:
                raise _einsum_error(f"the number of subscripts in the equation ({explicit}) "
                                    f"is more than the number of dimensions ({nd}) for "
                                    f"operand {k}")
            ell_n = max(ell_n, nd - explicit)
        elif explicit != nd:
            raise _einsum_error(f"the number of subscripts in the equation ({explicit}) does "
                                f"not match the number of dimensions ({nd}) for operand {k} "
                                f"and no ellipsis was given")
        parsed.append((t, nd - explicit))
    ell = "".join(free[:ell_n])
    inputs = tuple(t.replace("...", ell[ell_n - n:]) for t, n in parsed)
    if arrow:
        if rhs.count(".") != (3 if "..." in rhs else 0):
            raise _einsum_error("found '.' for output that is not part of any ellipsis")
        output = rhs.replace("...", ell)
        all_in = set("".join(inputs))
        for i, c in enumerate(output):
            if c in output[:i]:
                raise _einsum_error(f"output subscript {c} appears more than once in the "
                                    f"output")
            if c not in all_in:
                raise _einsum_error(f"output subscript {c} does not appear in the equation "
                                    f"for any input operand")
    else:
        labels = "".join(inputs)
        output = ell + "".join(sorted(c for c in set(labels)
                                      if labels.count(c) == 1 and c not in ell))
    _check_sizes(inputs, operands)
    return inputs, output


def _check_sizes(inputs, operands):
    sizes = {}
    for k, (t, op) in enumerate(zip(inputs, operands, strict=True)):
        own = {}
        for c, n in zip(t, op._data.shape, strict=True):
            if own.setdefault(c, n) != n:
                raise _einsum_error(f"subscript {c} is repeated for operand {k} but the sizes "
                                    f"don't match, {n} != {own[c]}")
            seen = sizes.get(c)
            if seen is None or seen == 1:
                sizes[c] = n
            elif n != 1 and n != seen:
                raise _einsum_error(f"subscript {c} has size {n} for operand {k} which does "
                                    f"not broadcast with previously seen size {seen}")


def _einsum_grad(k):
    """The rule of operand ``k``: einsum of the output's gradient with the other operands,
    then the labels only operand ``k`` has are broadcast back and repeated labels ('ii')
    put on the diagonal."""
    def rule(xp, grad, *args):
        others, spec, shape = args[:-2], args[-2], args[-1]
        mine = spec.inputs[k]
        rest = spec.inputs[:k] + spec.inputs[k + 1:]
        avail = set(spec.output).union(*rest)
        uniq = "".join(dict.fromkeys(mine))
        keep = "".join(c for c in uniq if c in avail)
        g = xp.einsum(",".join((spec.output,) + rest) + "->" + keep, grad, *others,
                      optimize=_optimize((grad, *others)))
        # a label of size 1 here that broadcast against size n elsewhere: sum it back
        summed = tuple(i for i, c in enumerate(keep)
                       if shape[mine.index(c)] == 1 and g.shape[i] != 1)
        if summed:
            g = xp.sum(g, axis=summed, keepdims=True)
        missing = tuple(i for i, c in enumerate(uniq) if c not in avail)
        if missing:
            g = xp.expand_dims(g, missing)
        repeats = tuple(i for i, c in enumerate(mine) if mine.index(c) != i)
        if not missing and not repeats and tuple(g.shape) == tuple(shape):
            return g
        if repeats:
            g = xp.expand_dims(g, repeats)
        g = xp.broadcast_to(g, tuple(shape))  # each of g's dims is shape's or 1
        for i in repeats:
            j = mine.index(mine[i])
            diag = [1] * len(shape)
            diag[i] = diag[j] = shape[i]
            g = xp.where(xp.reshape(xp.eye(shape[i], dtype=bool), diag), g, 0)
        return g
    return rule


def _signed(fn, params):
    """``fn`` under a signature naming ``params`` (how defop learns what a rule needs)."""
    def f(*args):
        return fn(*args)
    f.__signature__ = inspect.Signature(
        [inspect.Parameter(p, inspect.Parameter.POSITIONAL_OR_KEYWORD) for p in params])
    return f


_EINSUM_OPS = {}


def _einsum_op(n):
    """The einsum op of ``n`` operands (inputs ``operand0``...), made on first use."""
    op = _EINSUM_OPS.get(n)
    if op is None:
        names = [f"operand{i}" for i in range(n)]
        fwd = _signed(lambda xp, *a: xp.einsum(a[-1].equation, *map(_unstretched, a[:-1]),
                                               optimize=a[-1].optimize, dtype=a[-1].dtype),
                      ["xp", *names, "spec"])
        vjp = {names[k]: _signed(_einsum_grad(k), ["xp", "grad", *names[:k], *names[k + 1:],
                                                    "spec", names[k] + "_shape"])
               for k in range(n)}
        op = _EINSUM_OPS[n] = defop("einsum", fwd, vjp=vjp, jvp="multilinear")
    return op


def _unstretched(a):
    """An operand with a stride-0 (expanded) dim as a copy: NumPy's einsum factors such an
    operand out of the sum (``x * sum(y)`` for ``sum(x * y)``), which differs at
    infinities (-inf where the products' sum is NaN); PyTorch multiplies each pair."""
    strides = getattr(a, "strides", ())
    if 0 in strides and a.size > 1:
        return a.copy()
    return a


def _sum_early(inputs, output, operands):
    """PyTorch's einsum sums a contracted label out of the one floating operand that has it
    at a size other than 1 before multiplying (it reaches the others at size 1, or at
    none): ``einsum('i,i->', [inf], [1., -1.])`` is ``inf * sum([1., -1.])``, 0 * inf =
    NaN, where the sum of products is NaN as well but ``'bij,jk'`` with a size-1 ``j``
    gives ``x * sum(y)`` (inf, not NaN); a broadcast against an empty operand gives its
    empty sum, 0, times the other (NaN at inf). The labels go from the equation."""
    if len(operands) < 2 or operands[0]._data.dtype.kind != "f":
        return inputs, operands
    inputs, operands = list(inputs), list(operands)
    done = False
    while not done:
        done = True
        for k, labels in enumerate(inputs):
            shape = operands[k].shape
            drop = tuple(i for i, c in enumerate(labels)
                         if c not in output and labels.count(c) == 1
                         and all(operands[j].shape[inputs[j].index(c)] == 1
                                 for j in range(len(inputs)) if j != k and c in inputs[j])
                         and (shape[i] != 1 or sum(c in t for t in inputs) == 1))
            if drop:
                operands[k] = operands[k].sum(dim=drop)
                inputs[k] = "".join(c for i, c in enumerate(labels) if i not in drop)
                done = False
    return tuple(inputs), tuple(operands)


def _sublist_equation(args):
    """``einsum(op0, [0, 1], op1, [1, 2], [0, 2])`` -> ('AB,BC->AC', operands)."""
    def labels(sub):
        for s in sub:
            if s is not Ellipsis and not 0 <= s < len(_LETTERS):
                raise ValueError("einsum(): subscript in subscript list is not within the "
                                 "valid range [0, 52)")
        return "".join("..." if s is Ellipsis else _LETTERS[s] for s in sub)
    operands = list(args[0::2])
    subs = list(args[1::2])
    out = None
    if len(operands) > len(subs):
        out = operands.pop()
    eq = ",".join(labels(s) for s in subs)
    return (eq if out is None else eq + "->" + labels(out)), operands


@register(method=False)
def einsum(*args):
    """Einstein summation: ``einsum('ij,jk->ik', a, b)``; also the operand-list and
    sublist forms. Ellipsis broadcasts; labels missing from the output are summed.

    >>> retrograd.einsum('ii', retrograd.eye(3))
    tensor(3.)
    """
    if not args:
        raise TypeError("einsum(): must specify the equation string and at least one operand, "
                        "or at least one operand and its subscripts list")
    if isinstance(args[0], str):
        equation, operands = args[0], args[1:]
        if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
            operands = tuple(operands[0])
    else:
        equation, operands = _sublist_equation(args)
    for k, t in enumerate(operands):
        if not isinstance(t, Tensor):
            raise TypeError(f"einsum(): operand {k} must be a Tensor, not "
                            f"{type(t).__name__}")
        if t._data.dtype != operands[0]._data.dtype:
            raise RuntimeError(f"expected scalar type {_pretty(operands[0]._data.dtype)} but "
                               f"found {_pretty(t._data.dtype)}")
    inputs, output = _parse(equation, operands)
    contracts = any(c not in output and sum(c in t for t in inputs) > 1
                    for c in set("".join(inputs)))
    inputs, operands = _sum_early(inputs, output, operands)
    optimize = _optimize([t._data for t in operands])
    dtype = _integer_einsum_dtype(inputs, output, operands) if operands and \
        operands[0]._data.dtype.kind in "biu" else None
    spec = _Spec(inputs, output, optimize, dtype)
    return (_contraction if contracts else _einsum_apply)(*operands, spec=spec)


def _einsum_apply(*operands, spec):
    return apply(_einsum_op(len(operands)), operands, (spec,))


# PyTorch's einsum sums a label shared by two operands with bmm, which autocast lowers;
# its other steps (permutes, products, one operand's sums) it leaves in their dtype.
_contraction = _autocast.policy("bmm")(_einsum_apply)


def _integer_einsum_dtype(inputs, output, operands):
    """PyTorch sums a label one operand alone has with ``sum`` (int64 for integers and
    bools) and contracts shared labels with bmm (dtype kept; no bool kernel)."""
    summed = contracted = False
    for c in set("".join(inputs)) - set(output):
        if sum(c in t for t in inputs) > 1:
            contracted = True
        else:
            summed = True
    if contracted and operands[0]._data.dtype.kind == "b":
        raise NotImplementedError("\"bmm\" not implemented for 'Bool'")
    return int64.np if summed and not contracted else None


Tensor.__matmul__ = lambda self, other: matmul(self, other) if isinstance(other, Tensor) \
    else NotImplemented
Tensor.__rmatmul__ = lambda self, other: matmul(other, self) if isinstance(other, Tensor) \
    else NotImplemented
