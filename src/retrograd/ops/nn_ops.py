"""Fused neural-network kernels: softmax, log_softmax, nll_loss, normalizations,
activations, embedding and the pointwise losses.

Each is one op with its own rule, as PyTorch has one kernel for each: eager NumPy
cannot fuse ``x - logsumexp(x)`` or a layer norm back, and a composite would keep
every temporary alive for backward. Rules are written in ``xp`` (NumPy names), so
they also run on Tensors under ``create_graph=True``. The public entry points with
PyTorch's signatures live in :mod:`retrograd.nn.functional`.
"""

import math
import struct

from .._dtype import LOW, OPMATH, float32, is_float, kind_of
from .._tensor import wrap
from ..backend import cpu_kernels, get_array_module, gpu_kernels, mkl_gemm
from ..backend.functions import functions
from ._loss_args import (check_bce, check_bce_logits, check_embedding, check_float_kernel,
                         check_nll)
from ._registry import _pretty, apply, defop, kernel
from .linalg import _addmm_args, _wide_nt
from .reduction import _dim1, _vector_norm
from .shape import call

__all__ = ["linear", "constant_pad", "mode_pad", "pad", "softmax", "log_softmax", "nll_loss",
           "layer_norm", "batch_norm", "aten_batch_norm", "group_norm", "aten_group_norm",
           "gelu", "silu", "embedding", "mse_loss", "smooth_l1_loss", "binary_cross_entropy",
           "binary_cross_entropy_with_logits"]


def _max_scalar(xp, x, c):
    """``maximum(x, c)`` for a Python number ``c`` (the facade's maximum takes tensors)."""
    return functions(xp).clamp_min(x, c)


# ---- linear -------------------------------------------------------------------------------
def _mm_tn(xp, a, b):
    """``a.T @ b`` (the backend's: NumPy's picks OpenBLAS's faster orientation)."""
    return functions(xp).matmul_tn(a, b)


def _linear_fwd(xp, self, mat1, mat2):
    out = functions(xp).matmul(mat1, xp.swapaxes(mat2, 0, 1))
    out += self
    return out


def _linear_swapped(xp, self, mat1, mat2):
    """The product as ``mat2 @ mat1.T`` (see ``_wide_nt``), laid back out by the bias's
    addition."""
    p = functions(xp).matmul(mat2, mat1.T)
    return xp.add(p.T, self, out=xp.empty(p.shape[::-1], p.dtype))


def _linear_jvp(xp, self_t, mat1_t, mat2_t, mat1, mat2):
    out = self_t
    if mat1_t is not None:
        t = functions(xp).matmul(mat1_t, xp.swapaxes(mat2, 0, 1))
        out = t if out is None else out + t
    if mat2_t is not None:
        t = functions(xp).matmul(mat1, xp.swapaxes(mat2_t, 0, 1))
        out = t if out is None else out + t
    return out


# ``bias + input @ weight.T`` for a 2-D input, with the weight's gradient computed in the
# weight's own layout; the node PyTorch shows for it is addmm's.
def _linear_rows(xp, self, mat1, mat2):
    """MKL's product onto the bias's rows, as PyTorch's addmm (:mod:`..backend.mkl_gemm`);
    else the product, then the bias added to its rows by the compiled kernel in place
    (w4's (2048, 768): 306 us, a third as much again as the product's time)."""
    weight = xp.swapaxes(mat2, 0, 1)
    if mkl_gemm.takes(mat1, weight):
        return mkl_gemm.matmul(mat1, weight, bias=self)
    out = functions(xp).matmul(mat1, weight)
    return cpu_kernels.broadcast("add", out, self, out)


_linear = defop("linear", kernel(kernel(_linear_fwd, _linear_rows,
                                        lambda self, mat1, mat2: self.ndim == 1
                                        and self.shape[0] == mat2.shape[0] and len(mat1)
                                        and mat1.dtype.char == mat2.dtype.char == "f"
                                        and cpu_kernels.takes(self)),
                                 _linear_swapped,
                                 lambda self, mat1, mat2: _wide_nt(mat1, mat2.T)
                                 and self.dtype == mat1.dtype),
                vjp={"self": lambda grad: grad,
                     "mat1": lambda xp, grad, mat2: functions(xp).matmul(grad, mat2),
                     "mat2": lambda xp, grad, mat1: _mm_tn(xp, grad, mat1)},
                jvp=_linear_jvp, promote=("self", "mat1", "mat2"), node="AddmmBackward0")


def linear(input, weight, bias):
    """``input @ weight.T + bias`` as addmm on the rows of the input (any number of dims,
    viewed back): ATen's fused path, with addmm's checks (same dtypes: NumPy would
    promote; the mat1/mat2 message for a wrong number of input features)."""
    if weight.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is "
                           f"{weight.ndim}D")
    k = input.shape[-1]
    rows = input if input.ndim == 2 else input.reshape(math.prod(input.shape[:-1]), k)
    _addmm_args(bias, rows, wrap(weight._data.T))
    out = apply(_linear, (bias, rows, weight))
    return out if input.ndim == 2 else out.view(*input.shape[:-1], weight.shape[0])


# ---- constant padding ---------------------------------------------------------------------
def _pad_np(xp, x, pad, value):
    """Pad (positive) or crop (negative) the last ``len(pad) // 2`` dims of ``x``."""
    shape, dst, src = list(x.shape), [slice(None)] * x.ndim, [slice(None)] * x.ndim
    for i in range(len(pad) // 2):
        d = x.ndim - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        shape[d] += lo + hi
        dst[d] = slice(max(lo, 0), shape[d] - max(hi, 0))
        src[d] = slice(max(-lo, 0), x.shape[d] - max(-hi, 0))
    out = xp.full_like(x, value, order="C", shape=shape)
    out[tuple(dst)] = x[tuple(src)]
    return out


def _pad(xp, x, pad, value):
    return call(xp, _constant_pad, x, attrs=(pad, value))


_constant_pad = defop(
    "constant_pad_nd", lambda xp, self, pad, value: _pad_np(xp, self, pad, value),
    vjp={"self": lambda xp, grad, pad: _pad(xp, grad, tuple(-p for p in pad), 0)},
    jvp=lambda xp, self_t, pad: _pad(xp, self_t, pad, 0), upcast=False)  # a copy: exact


def constant_pad(input, pad, value=0):
    return apply(_constant_pad, (input,), (tuple(pad), value))


# ---- reflection, replication and circular padding -----------------------------------------
# Each is ``xp.pad`` (reflect / edge / wrap) of the positive pads and a cut of the negative
# ones: PyTorch's reflection and replication kernels index the fully padded input (pad,
# then cut), its circular pad cuts first and wraps what is left. The vjp folds the padded
# borders back onto the input (the adjoint); it is itself an op whose vjp is the pad.
_NP_MODE = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}


def _pad_widths(ndim, pad, f):
    """``xp.pad`` widths for the last ``len(pad) // 2`` dims, each pad mapped by ``f``."""
    w = [(0, 0)] * ndim
    for i in range(len(pad) // 2):
        w[ndim - 1 - i] = (f(pad[2 * i]), f(pad[2 * i + 1]))
    return w


def _padded_shape(shape, pad):
    shape = list(shape)
    for i in range(len(pad) // 2):
        shape[-1 - i] += pad[2 * i] + pad[2 * i + 1]
    return tuple(shape)


def _cut(x, pad):
    """``x`` without its first/last ``-p`` elements where a pad ``p`` is negative."""
    idx = [slice(None)] * x.ndim
    for i in range(len(pad) // 2):
        d = x.ndim - 1 - i
        idx[d] = slice(max(-pad[2 * i], 0), x.shape[d] - max(-pad[2 * i + 1], 0))
    return x[tuple(idx)]


def _mode_pad_np(xp, x, pad, mode):
    """The forward on arrays (NumPy's, or batched ones): one ``xp.pad`` call."""
    grow = _pad_widths(x.ndim, pad, lambda p: max(p, 0))
    if mode == "circular":
        cut = _cut(x, pad)
        if cut.size == 0:  # nothing to wrap: the result is empty
            return xp.zeros_like(x, shape=_padded_shape(x.shape, pad))
        return xp.pad(cut, grow, "wrap")
    out = xp.pad(x, grow, _NP_MODE[mode])
    return xp.copy(_cut(out, pad)) if min(pad) < 0 else out


def _fold(xp, g, d, lo, hi, mode):
    """The adjoint of padding axis ``d`` of an array by ``lo``/``hi`` (both >= 0): the
    borders of ``g`` added back onto the elements they copy."""
    n = g.shape[d] - lo - hi

    def at(a, b):
        idx = [slice(None)] * g.ndim
        idx[d] = slice(a, b)
        return tuple(idx)

    out = xp.array(g[at(lo, lo + n)])
    left, right = g[at(0, lo)], g[at(lo + n, None)]
    if mode == "reflect":
        out[at(1, lo + 1)] += xp.flip(left, d)
        out[at(n - 1 - hi, n - 1)] += xp.flip(right, d)
    elif mode == "replicate":
        if lo:
            out[at(0, 1)] += xp.sum(left, d, keepdims=True)
        if hi:
            out[at(n - 1, n)] += xp.sum(right, d, keepdims=True)
    else:
        out[at(n - lo, n)] += left
        out[at(0, hi)] += right
    return out


def _mode_unpad_np(xp, g, pad, mode):
    """The adjoint of :func:`_mode_pad_np` on arrays: the gradient of its input."""
    if g.size == 0:
        return xp.zeros_like(g, shape=_padded_shape(g.shape, [-p for p in pad]))
    uncut = _pad_widths(g.ndim, pad, lambda p: max(-p, 0))
    if mode != "circular" and min(pad) < 0:
        g = xp.pad(g, uncut)
    for i in range(len(pad) // 2):
        lo, hi = max(pad[2 * i], 0), max(pad[2 * i + 1], 0)
        if lo or hi:
            g = _fold(xp, g, g.ndim - 1 - i, lo, hi, mode)
    if mode == "circular" and min(pad) < 0:
        g = xp.pad(g, uncut)
    return g


def _mode_pad(xp, x, pad, mode):
    return call(xp, _MODE_PAD[mode, len(pad) // 2], x, attrs=(pad,))


def _mode_unpad(xp, g, pad, mode):
    return call(xp, _MODE_UNPAD[mode, len(pad) // 2], g, attrs=(pad,))


def _mode_pad_ops(mode, op_name, node, backward_node, k):
    fwd = defop(f"{op_name}{k}d", lambda xp, self, pad: _mode_pad_np(xp, self, pad, mode),
                vjp={"self": lambda xp, grad, pad: _mode_unpad(xp, grad, pad, mode)},
                jvp="linear", node=node, upcast=False)  # copies; the backward adds in
    bwd = defop(f"{op_name}{k}d_backward",  # the tensor's dtype, as PyTorch's kernel
                lambda xp, grad_output, pad: _mode_unpad_np(xp, grad_output, pad, mode),
                vjp={"grad_output": lambda xp, grad, pad: _mode_pad(xp, grad, pad, mode)},
                jvp="linear", node=backward_node, upcast=False)
    return fwd, bwd


_MODE_PAD, _MODE_UNPAD = {}, {}
for _k in (1, 2, 3):
    for _mode, _op_name, _node, _bnode in (
            ("reflect", "reflection_pad", f"ReflectionPad{_k}DBackward0",
             f"ReflectionPad{_k}DBackwardBackward0"),
            ("replicate", "replication_pad", f"ReplicationPad{_k}DBackward0",
             f"ReplicationPad{_k}DBackwardBackward0"),
            # PyTorch composes it of copies into slices of an empty result, so its node is
            # the last copy's; its backward op, which PyTorch has not, keeps the default name
            ("circular", "_pad_circular", "CopySlices", None)):
        _MODE_PAD[_mode, _k], _MODE_UNPAD[_mode, _k] = _mode_pad_ops(_mode, _op_name, _node,
                                                                     _bnode, _k)


def _check_mode_pad(input, pad, mode, k):
    """PyTorch's checks of the reflection/replication kernels and of _pad_circular, in
    its order and words."""
    shape = tuple(input.shape)
    nd = len(shape)
    dims = [nd - 1 - i for i in range(k)]  # W, H, D
    out = list(shape)
    for i, d in enumerate(dims):
        out[d] += pad[2 * i] + pad[2 * i + 1]
    if mode == "circular":
        for i in reversed(range(k)):
            lo, hi, size = pad[2 * i], pad[2 * i + 1], shape[dims[i]]
            if lo > size or hi > size:
                raise RuntimeError("Padding value causes wrapping around more than once.")
            if out[dims[i]] < 0:
                raise RuntimeError("Negative padding value is resulting in an empty dimension")
        # A wrapped border longer than what is left of the input is copied from memory it
        # overlaps: PyTorch rejects that copy (or, when nothing is left, returns
        # uninitialized memory, which is rejected here too).
        if math.prod(out) and any(
                shape[d] + min(lo, 0) + min(hi, 0) < max(lo, hi)
                for d, lo, hi in zip(dims, pad[::2], pad[1::2], strict=True)):
            raise RuntimeError("unsupported operation: some elements of the input tensor and "
                               "the written-to tensor refer to a single memory location. "
                               "Please clone() the tensor before performing the operation.")
        return
    if any(s == 0 for s in shape[int(nd == k + 2):]):
        raise RuntimeError(f"Expected {k + 1}D or {k + 2}D (batch mode) tensor with possibly 0 "
                           "batch size and other non-zero dimensions for input, but got: "
                           f"{list(shape)}")
    if mode == "reflect":
        for i, d in enumerate(dims):
            lo, hi = pad[2 * i], pad[2 * i + 1]
            if not (lo < shape[d] and hi < shape[d]):
                raise RuntimeError(
                    f"Argument #{4 + 2 * i}: Padding size should be less than the "
                    f"corresponding input dimension, but got: padding ({lo}, {hi}) at "
                    f"dimension {d} of input {list(shape)}")
    sizes = [shape[d] for d in reversed(dims)]  # D, H, W
    outs = [out[d] for d in reversed(dims)]
    if all(o < 1 for o in outs):
        if k == 1:
            msg = f"input (W: {sizes[0]}) is too small. Calculated output W: {outs[0]}"
        elif k == 2:
            gap = " " if mode == "replicate" else ""
            msg = (f"input (H: {sizes[0]}, W: {sizes[1]}{gap}) is too small. Calculated "
                   f"output H: {outs[0]} W: {outs[1]}")
        else:
            msg = (f"input (D: {sizes[0]} H: {sizes[1]}, W: {sizes[2]}) is too small. "
                   f"Calculated output D: {outs[0]} H: {outs[1]} W: {outs[2]}")
        raise RuntimeError(msg)
    neg = [o for o in out if o < 0]
    if neg:
        if mode == "reflect" and k == 2:
            raise RuntimeError("numel: integer multiplication overflow")
        raise RuntimeError(f"Trying to create tensor with negative dimension {neg[0]}: {out}")
    if input.dtype.name == "bool":
        name = "reflection_pad" if mode == "reflect" else "replication_pad"
        raise NotImplementedError(f"\"{name}{k}d\" not implemented for 'Bool'")


def mode_pad(input, pad, mode):
    """``F.pad`` in ``mode`` "reflect", "replicate" or "circular", for ``len(pad) // 2``
    (1 to 3) padded dims of an input with one or two more dims (checked by the caller)."""
    pad = tuple(pad)
    k = len(pad) // 2
    _check_mode_pad(input, pad, mode, k)
    return apply(_MODE_PAD[mode, k], (input,), (pad,))


_PAD_MODES = ("constant", "reflect", "replicate", "circular")


def pad(input, pad, mode="constant", value=None):
    """Pad (or, with negative amounts, crop) the last ``len(pad) // 2`` dims: with
    ``value`` (constant), or by reflecting, replicating or wrapping the input, which
    PyTorch does for the last 1, 2 or 3 dims of an input with 1 or 2 dims more."""
    if mode not in _PAD_MODES:
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    n = len(pad) // 2
    if n > input.ndim:
        raise RuntimeError("Padding length should be less than or equal to two times the "
                           "input dimension but got padding length " + str(len(pad)) +
                           " and input of dimension " + str(input.ndim))
    if mode == "constant":
        return constant_pad(input, pad, 0 if value is None else value)
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    if not (1 <= n <= 3 and n + 1 <= input.ndim <= n + 2):
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {input.ndim}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")
    return mode_pad(input, pad, mode)


# ---- softmax and log_softmax --------------------------------------------------------------
def _softmax_fwd(xp, self, dim):
    if self.size == 0:  # no maximum to subtract: an empty result
        return self.copy()
    e = xp.exp(self - xp.max(self, axis=dim, keepdims=True))
    e /= xp.sum(e, axis=dim, keepdims=True)
    return e


def _log_softmax_fwd(xp, self, dim):
    if self.size == 0:
        return self.copy()
    s = self - xp.max(self, axis=dim, keepdims=True)
    s -= xp.log(xp.sum(xp.exp(s), axis=dim, keepdims=True))
    return s


def _softmax_grad(xp, grad, result, dim):
    return result * (grad - xp.sum(grad * result, axis=dim, keepdims=True))


def _compiled_last(dim, *arrays):
    """The compiled CPU kernels take float32 rows over the last axis."""
    return arrays[0].ndim and dim in (-1, arrays[0].ndim - 1) and cpu_kernels.takes(*arrays)


_softmax = defop(
    "softmax", kernel(kernel(_softmax_fwd, lambda xp, self, dim: cpu_kernels.softmax(self),
                             lambda self, dim: _compiled_last(dim, self), leading=True),
                      lambda xp, self, dim: gpu_kernels.softmax(self, dim),
                      lambda self, dim: gpu_kernels.floats(self), "cupy"),
    vjp={"self": kernel(kernel(_softmax_grad, lambda xp, grad, result, dim:
                               cpu_kernels.softmax_grad(grad, result),
                               lambda grad, result, dim: _compiled_last(dim, result, grad),
                               leading=True),
                        lambda xp, grad, result, dim: gpu_kernels.softmax_grad(grad, result, dim),
                        lambda grad, result, dim: gpu_kernels.floats(grad, result), "cupy")},
    jvp=lambda xp, self_t, result, dim:
    result * (self_t - xp.sum(self_t * result, axis=dim, keepdims=True)),
    to_float=True, node="SoftmaxBackward0")


def _safe_softmax_fwd(xp, self, dim):
    """Softmax where a slice of -inf alone gives zeros, not NaN (a slice with a NaN is
    still NaN): exponentials of ``self`` less a maximum of 0 there, each divided by a sum
    of 1 there."""
    if self.size == 0:
        return self.copy()
    m = xp.max(self, axis=dim, keepdims=True)
    masked = m == -math.inf
    e = xp.exp(self - xp.where(masked, 0, m))
    e /= xp.where(masked, 1, xp.sum(e, axis=dim, keepdims=True))
    return e


# PyTorch's _safe_softmax (sdpa's: a query whose keys are all masked out attends to
# nothing); its gradient is softmax's, which is 0 where the result is.
_safe_softmax = defop(
    "_safe_softmax", kernel(_safe_softmax_fwd,
                            lambda xp, self, dim: cpu_kernels.softmax(self, safe=True),
                            lambda self, dim: _compiled_last(dim, self), leading=True),
    vjp=_softmax.vjp, jvp=_softmax.jvp, to_float=True, node="SafeSoftmaxBackward0")


def _masked_softmax_fwd(xp, self, mask, dim):
    """The safe softmax over the last axis of the scores with -inf where boolean ``mask``
    (broadcast to them) is False: PyTorch's sdpa's masked_fill and _safe_softmax."""
    return _safe_softmax_fwd(xp, xp.where(mask, self, -math.inf), dim)


def _masked_softmax_grad(xp, grad, result, mask, dim):
    """softmax's gradient, none where the mask is False (PyTorch's masked_fill's)."""
    return xp.where(mask, _softmax_grad(xp, grad, result, dim), 0)


def _masked_softmax_jvp(xp, self_t, result, mask, dim):
    return _softmax.jvp(xp, xp.where(mask, self_t, 0), result, dim)


# sdpa's with a boolean mask: the compiled kernels read one (L, S) mask for every matrix,
# where masked_fill made a pass over the scores forward and one backward. (Not under vmap:
# the mask is not a batch.)
_masked_softmax = defop(
    "_masked_softmax", kernel(_masked_softmax_fwd,
                              lambda xp, self, mask, dim: cpu_kernels.masked_softmax(self, mask),
                              lambda self, mask, dim: cpu_kernels.mask_takes(self, mask)),
    inputs=("self", "mask"),
    vjp={"self": kernel(_masked_softmax_grad, lambda xp, grad, result, mask, dim:
                        cpu_kernels.masked_softmax_grad(grad, result, mask),
                        lambda grad, result, mask, dim: cpu_kernels.mask_takes(result, mask)
                        and cpu_kernels.takes(result, grad))},
    jvp=_masked_softmax_jvp,
    node="SafeSoftmaxBackward0")  # (sdpa's scores are floats: no to_float, which would
# make the mask one)


def _seen(xp, a):
    """The keys each query of ``a``'s (L, S) matrices sees under ``is_causal``: query i
    sees keys 0 to i."""
    return xp.tril(xp.full(a.shape[-2:], True))


# sdpa's with ``is_causal``: the masked softmax's rules with the causal mask; its forward
# kernel takes each row's seen keys alone (none of the later ones is read), and its
# gradient is the masked softmax's kernel's.
_causal_softmax = defop(
    "_causal_softmax", kernel(lambda xp, self, dim:
                              _masked_softmax_fwd(xp, self, _seen(xp, self), dim),
                              lambda xp, self, dim: cpu_kernels.causal_softmax(self),
                              lambda self, dim: self.ndim > 1 and cpu_kernels.takes(self),
                              leading=True),
    vjp={"self": kernel(lambda xp, grad, result, dim:
                        _masked_softmax_grad(xp, grad, result, _seen(xp, result), dim),
                        lambda xp, grad, result, dim:
                        cpu_kernels.causal_softmax_grad(grad, result),
                        lambda grad, result, dim: result.ndim > 1
                        and cpu_kernels.takes(result, grad), leading=True)},
    jvp=lambda xp, self_t, result, dim:
    _masked_softmax_jvp(xp, self_t, result, _seen(xp, result), dim),
    to_float=True, node="SafeSoftmaxBackward0")


def _log_softmax_grad(xp, grad, result, dim):
    return grad - xp.exp(result) * xp.sum(grad, axis=dim, keepdims=True)


_log_softmax = defop(
    "log_softmax", kernel(_log_softmax_fwd, lambda xp, self, dim: cpu_kernels.log_softmax(self),
                          lambda self, dim: _compiled_last(dim, self), leading=True),
    vjp={"self": kernel(_log_softmax_grad, lambda xp, grad, result, dim:
                        cpu_kernels.log_softmax_grad(grad, result),
                        lambda grad, result, dim: _compiled_last(dim, result, grad),
                        leading=True)},
    jvp=lambda xp, self_t, result, dim:
    self_t - xp.sum(xp.exp(result) * self_t, axis=dim, keepdims=True),
    to_float=True, node="LogSoftmaxBackward0")


def _is_float(name, input, dim):
    """``dim`` in range, and whether the input is real floating: PyTorch's softmax kernels
    exist for those only (its message names the kernel: the last-dim one when ``dim`` is
    the last). An empty input never reaches a kernel: any dtype gives an empty copy."""
    _dim1(dim, input.ndim)
    if is_float(input._data.dtype):
        return True
    if input._data.size:
        last = dim in (-1, input.ndim - 1) or input.ndim == 0
        raise NotImplementedError(f'"{name}_{"lastdim_" if last else ""}kernel_impl" not '
                                  f"implemented for '{_pretty(input._data.dtype)}'")
    return False


def softmax(input, dim):
    if not _is_float("softmax", input, dim):
        return wrap(input._data.copy())
    return apply(_softmax, (input,), (dim,))


def safe_softmax(input, dim):
    if not _is_float("softmax", input, dim):  # (PyTorch's message names softmax's kernel)
        return wrap(input._data.copy())
    return apply(_safe_softmax, (input,), (dim,))


def causal_softmax(input):
    """The safe softmax over the last dim of ``input``'s (L, S) matrices, query i seeing
    keys 0 to i (sdpa's ``is_causal``); a float ``input`` of two dims or more."""
    return apply(_causal_softmax, (input,), (-1,))


def masked_softmax(input, mask):
    """The safe softmax over the last dim of ``input`` with -inf where the boolean ``mask``
    (broadcast to it) is False (sdpa's with a boolean ``attn_mask``)."""
    return apply(_masked_softmax, (input, mask), (-1,))


def log_softmax(input, dim):
    if not _is_float("log_softmax", input, dim):
        return wrap(input._data.copy())
    return apply(_log_softmax, (input,), (dim,))


# ---- nll_loss -----------------------------------------------------------------------------
_REDUCTIONS = ("none", "mean", "sum")


def _class_weight(xp, weight, target):
    """``weight[target]``, as a take: a function, so that a target batched under vmap
    indexes an unbatched weight."""
    return xp.take(weight, target, 0)


def _nll_fwd(xp, self, target, weight, reduction, ignore_index, input_dtype):
    """Each weighted loss is rounded to the input's dtype (``input_dtype``: float16 arrives
    in float32), as PyTorch's kernel computes it in half (a subnormal product rounds:
    1.19e-7 for 5.96e-8 * 2.03), then summed in float32 (see docs/deviations.md)."""
    if self.ndim == 1:  # one sample
        out, total = _nll_fwd(xp, self[None], target[None], weight, reduction, ignore_index,
                              input_dtype)
        return (out[0] if reduction == "none" else out), total
    valid = target != ignore_index
    safe = xp.where(valid, target, 0)
    picked = xp.squeeze(xp.take_along_axis(self, xp.expand_dims(safe, 1), 1), 1)
    coef = (valid if weight is None else xp.where(valid, _class_weight(xp, weight, safe), 0)) \
        .astype(self.dtype)
    losses = xp.where(valid, -picked * coef, 0)  # an ignored NaN counts as 0, as PyTorch
    if reduction == "none":
        return losses, xp.zeros((), self.dtype)
    if input_dtype != self.dtype:
        losses = xp.astype(xp.astype(losses, input_dtype), self.dtype)
    total = xp.sum(coef, dtype=self.dtype)
    loss = xp.sum(losses, dtype=self.dtype)
    if reduction == "mean":
        loss = loss / total
    return xp.asarray(loss, self.dtype), xp.asarray(total, self.dtype)


def _nll_grad(xp, grad, self, target, weight, reduction, ignore_index, total_weight):
    if self.ndim == 1:
        return xp.squeeze(_nll_grad(xp, xp.reshape(grad, (1,) * grad.ndim + ()) if
                                    reduction != "none" else xp.reshape(grad, (1,)),
                                    xp.expand_dims(self, 0), xp.reshape(target, (1,)),
                                    weight, reduction, ignore_index, total_weight), 0)
    # PyTorch scales by the weight only where a target counts and writes 0 elsewhere, so
    # an all-ignored batch (total weight 0) or a non-finite grad gives 0 there, not NaN
    valid = xp.not_equal(target, ignore_index)
    g = -grad / total_weight if reduction == "mean" else -grad
    if weight is not None:
        g = g * _class_weight(xp, weight, xp.where(valid, target, 0))
    g = xp.where(valid, g, 0)
    classes = xp.reshape(xp.arange(self.shape[1]), (1, -1) + (1,) * (self.ndim - 2))
    onehot = xp.equal(classes, xp.expand_dims(target, 1))
    return xp.where(onehot, xp.expand_dims(g, 1), 0)


# The backward kernels compute in the input's dtype: for float16, ``grad / total_weight``
# rounds to half before the weight scales it (a tiny total weight overflows it to inf).
def _nll_op(node):
    return defop("nll_loss", _nll_fwd, inputs=("self", "target", "weight"),
                 vjp={"self": _nll_grad}, jvp="transpose", outputs=("result", "total_weight"),
                 nondiff_outputs=("total_weight",), node=node, upcast="forward",
                 backward_reads="self")


_nll = _nll_op("NllLossBackward0")
_nll2d = _nll_op("NllLoss2DBackward0")


def nll_loss(input, target, weight=None, ignore_index=-100, reduction="mean"):
    """The fused negative log-likelihood; input (N, C, ...) or (C,), class-index target."""
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    check_nll(input, target, weight, ignore_index)
    if input.ndim == 1 and target.ndim == 1:  # one sample's target of size 1
        target = target.reshape(())
    op = _nll if input.ndim <= 2 else _nll2d
    return apply(op, (input, target, weight), (reduction, ignore_index, input._data.dtype))[0]


# ---- layer norm, group norm, batch norm ---------------------------------------------------
def _mean(xp, x, axes):
    """Mean over ``axes`` (kept); over no elements it is NaN, quietly, as in PyTorch (NumPy's
    mean warns about the empty slice)."""
    if all(x.shape[a] for a in ((axes,) if isinstance(axes, int) else axes)):
        return xp.mean(x, axis=axes, keepdims=True)
    return xp.sum(x, axis=axes, keepdims=True) / 0.0


def _ln_fwd(xp, input, weight, bias, axes, eps):
    mean = _mean(xp, input, axes)
    xc = input - mean
    rstd = 1 / xp.sqrt(_mean(xp, xc * xc, axes) + eps)
    out = xc * rstd
    if weight is not None:
        out *= weight
    if bias is not None:
        out += bias
    return out, mean, rstd


def _norm_dx(xp, g, xhat, rstd, axes):
    """d(normalize)/dx applied to g: rstd * (g - mean(g) - xhat * mean(g * xhat))."""
    return rstd * (g - _mean(xp, g, axes) - xhat * _mean(xp, g * xhat, axes))


def _stats(xp, x, mean, rstd, axes, eps):
    """The saved statistics; under create_graph, recomputed from ``x`` so that the second
    derivative sees their dependence on it (the saved ones are constants)."""
    return functions(xp).recomputed((mean, rstd), lambda: _moments(xp, x, axes, eps))


def _moments(xp, x, axes, eps):
    mean = _mean(xp, x, axes)
    xc = x - mean
    return mean, 1 / xp.sqrt(_mean(xp, xc * xc, axes) + eps)


def _fused_mul_sub(xp, a, b, c):
    """``a * b - c`` rounded once, as PyTorch's CPU kernels (plain on the facade)."""
    return functions(xp).fused_mul_sub(a, b, c)


def _ln_dx(xp, grad, input, weight, mean, rstd, axes, eps):
    """PyTorch's form, rstd * g + b * x + c with b and c from the row sums of g * x and g:
    the same derivative as ``_norm_dx``, and the same NaN rows when a sum is infinite."""
    mean, rstd = _stats(xp, input, mean, rstd, axes, eps)
    g = grad if weight is None else grad * weight
    n = math.prod(input.shape[a] for a in axes)
    ds = xp.sum(g * input, axis=axes, keepdims=True)
    db = xp.sum(g, axis=axes, keepdims=True)
    b = _fused_mul_sub(xp, db, mean, ds) * rstd * rstd * rstd / n
    return rstd * g + b * input + _fused_mul_sub(xp, -b, mean, db * rstd / n)


def _ln_dw(xp, grad, input, mean, rstd, axes, eps):
    mean, rstd = _stats(xp, input, mean, rstd, axes, eps)
    return grad * ((input - mean) * rstd)


def _ln_db(xp, grad, axes):
    """The bias's gradient: the engine sums it over the leading axes."""
    return grad


def _ln_gpu(input, axes, *others):
    """Layer norm of float32 or float64 arrays over non-empty axes: fused CuPy kernels."""
    return gpu_kernels.floats(input, *others) and all(input.shape[a] for a in axes)


def _ln_fwd_gpu(xp, input, weight, bias, axes, eps):
    return gpu_kernels.layer_norm(input, axes, eps, weight, bias)


def _ln_dx_gpu(xp, grad, input, weight, mean, rstd, axes, eps):
    """``_ln_dx`` with the two row sums and the result each one pass."""
    n = math.prod(input.shape[a] for a in axes)
    ds, db = gpu_kernels.layer_norm_sums(grad, weight, input, axes)
    b = _fused_mul_sub(xp, db, mean, ds) * rstd * rstd * rstd / n
    return gpu_kernels.layer_norm_dx(grad, weight, input, rstd, b,
                                     _fused_mul_sub(xp, -b, mean, db * rstd / n))


def _ln_fwd_compiled(xp, input, weight, bias, axes, eps):
    """The compiled forward (float32 C-contiguous arrays; the normalized axes are always
    the trailing ones, the kernels' rows)."""
    out, mean, rstd = cpu_kernels.layer_norm(input, _ln_count(input, axes), eps, weight, bias)
    kept = input.shape[:axes[0]] + (1,) * len(axes)
    return out, mean.reshape(kept), rstd.reshape(kept)


def _ln_count(input, axes):
    return math.prod(input.shape[a] for a in axes)


_layer_norm = defop(
    "layer_norm", kernel(kernel(_ln_fwd, _ln_fwd_compiled,
                                lambda input, weight, bias, axes, eps:
                                cpu_kernels.takes(input, weight, bias)),
                         _ln_fwd_gpu,
                         lambda input, weight, bias, axes, eps: _ln_gpu(input, axes, weight,
                                                                        bias), "cupy"),
    inputs=("input", "weight", "bias"),
    vjp={"input": kernel(kernel(_ln_dx, lambda xp, grad, input, weight, mean, rstd, axes, eps:
                                cpu_kernels.layer_norm_dx(grad, input, weight, mean, rstd,
                                                          _ln_count(input, axes)),
                                lambda grad, input, weight, mean, rstd, axes, eps:
                                cpu_kernels.takes(input, grad, weight, mean, rstd)),
                         _ln_dx_gpu,
                         lambda grad, input, weight, mean, rstd, axes, eps:
                         _ln_gpu(input, axes, grad, weight, mean, rstd), "cupy"),
         "weight": kernel(kernel(_ln_dw, lambda xp, grad, input, mean, rstd, axes, eps:
                                 cpu_kernels.layer_norm_dw(
                                     grad, input, mean, rstd, _ln_count(input, axes)).reshape(
                                         input.shape[axes[0]:]),
                                 lambda grad, input, mean, rstd, axes, eps:
                                 cpu_kernels.takes(input, grad, mean, rstd)),
                          lambda xp, grad, input, mean, rstd, axes, eps:
                          gpu_kernels.layer_norm_dw(grad, input, mean, rstd),
                          lambda grad, input, mean, rstd, axes, eps:
                          _ln_gpu(input, axes, grad, mean, rstd), "cupy"),
         "bias": kernel(_ln_db, lambda xp, grad, axes: cpu_kernels.column_sum(
             grad, _ln_count(grad, axes)).reshape(grad.shape[axes[0]:]),
                        lambda grad, axes: cpu_kernels.takes(grad))},
    jvp="transpose", outputs=("result", "mean", "rstd"), nondiff_outputs=("mean", "rstd"),
    node="NativeLayerNormBackward0")


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    n = len(normalized_shape)
    if tuple(input.shape[input.ndim - n:]) != tuple(normalized_shape):
        raise RuntimeError(f"Given normalized_shape={list(normalized_shape)}, expected input "
                           f"with shape [*, {', '.join(map(str, normalized_shape))}], but got "
                           f"input of size{list(input.shape)}")
    axes = tuple(range(input.ndim - n, input.ndim))
    return apply(_layer_norm, (input, weight, bias), (axes, eps))[0]


def _grouped(xp, t, groups):
    """(N, C, *) as (N, groups, C // groups * prod(*)), spelled out so that empty sizes work."""
    return xp.reshape(t, (t.shape[0], groups, math.prod(t.shape[1:]) // groups))


def _gn_fwd(xp, input, weight, bias, groups, eps):
    c = input.shape[1]
    x = _grouped(xp, input, groups)
    mean = _mean(xp, x, 2)
    xc = x - mean
    rstd = 1 / xp.sqrt(_mean(xp, xc * xc, 2) + eps)
    out = xp.reshape(xc * rstd, input.shape)
    cshape = (c,) + (1,) * (input.ndim - 2)
    if weight is not None:
        out = out * xp.reshape(weight, cshape)
    if bias is not None:
        out = out + xp.reshape(bias, cshape)
    return out, mean, rstd


def _gn_dw(xp, grad, input, mean, rstd, groups, eps):
    """sum(grad * xhat) per channel, in PyTorch's order: per sample and channel, the sums of
    grad * x and grad, then the group's statistics; so a group with no elements gives NaN
    (its mean is NaN) as in PyTorch, where the sum of products would quietly give 0."""
    x, g = _grouped(xp, input, groups), _grouped(xp, grad, groups)
    mean, rstd = _stats(xp, x, mean, rstd, 2, eps)
    n, c = input.shape[:2]
    per_channel = (n, groups, c // groups, math.prod(input.shape[2:]))
    ds = xp.sum(xp.reshape(g * x, per_channel), axis=3)
    db = xp.sum(xp.reshape(g, per_channel), axis=3)
    return xp.reshape(xp.sum((ds - db * mean) * rstd, axis=0), (c,))


def _gn_dx(xp, grad, input, weight, mean, rstd, groups, eps):
    """PyTorch's form, as layer norm's: ``rstd * weight * g + b * x + c`` with b and c from
    the per-channel sums of g * x and g, weighted and summed over the group (so a huge
    weight overflows, or not, and a sum's infinity makes NaN, where PyTorch's does)."""
    n, c = input.shape[:2]
    per_channel = (n, groups, c // groups, math.prod(input.shape[2:]))
    x, g = xp.reshape(input, per_channel), xp.reshape(grad, per_channel)
    mean, rstd = _stats(xp, _grouped(xp, input, groups), mean, rstd, 2, eps)
    mean, rstd = xp.reshape(mean, (n, groups, 1, 1)), xp.reshape(rstd, (n, groups, 1, 1))
    ds = xp.sum(g * x, axis=3, keepdims=True)
    db = xp.sum(g, axis=3, keepdims=True)
    scale = rstd
    if weight is not None:
        w = xp.reshape(weight, (1, groups, c // groups, 1))
        ds, db, scale = ds * w, db * w, rstd * w
    ds, db = xp.sum(ds, axis=2, keepdims=True), xp.sum(db, axis=2, keepdims=True)
    size = per_channel[2] * per_channel[3]
    b = _fused_mul_sub(xp, db, mean, ds) * rstd * rstd * rstd / size
    dx = scale * g + b * x + _fused_mul_sub(xp, -b, mean, db * rstd / size)
    return xp.reshape(dx, input.shape)


def _channel_sum(xp, t):
    return xp.sum(t, axis=(0,) + tuple(range(2, t.ndim)))


_group_norm = defop(
    "group_norm", _gn_fwd, inputs=("input", "weight", "bias"),
    vjp={"input": _gn_dx,
         "weight": _gn_dw,
         "bias": lambda xp, grad: _channel_sum(xp, grad)},
    jvp="transpose", outputs=("result", "mean", "rstd"), nondiff_outputs=("mean", "rstd"),
    node="NativeGroupNormBackward0", node_outputs=("result", "mean", "rstd"))


def _verify_batch_size(size):
    """PyTorch refuses to normalise a single value per channel (or group) in training; an empty
    batch passes."""
    if math.prod(size[:1] + size[2:]) == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input "
                         f"size {size}")


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """``F.group_norm``: PyTorch's Python checks, then ATen's (:func:`aten_group_norm`)."""
    if input.ndim < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received "
                           f"{input.ndim}")
    n, c, *spatial = input.shape
    _verify_batch_size([n * c // num_groups, num_groups, *spatial])
    return aten_group_norm(input, num_groups, weight, bias, eps)


def aten_group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """``torch.group_norm``'s op: a single value per group is allowed (it normalizes to 0)."""
    if num_groups <= 0:
        raise RuntimeError(f"Expected num groups to be greater than 0, got {num_groups}")
    if input.shape[1] % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by "
                           f"num_groups, but got input of shape {list(input.shape)} and "
                           f"num_groups={num_groups}")
    return apply(_group_norm, (input, weight, bias), (num_groups, eps))[0]


def _bn_axes(ndim):
    return (0,) + tuple(range(2, ndim))


def _bn_c(t, ndim):
    """A per-channel (C,) array shaped to broadcast against (N, C, ...)."""
    return t if t is None else t.reshape((-1,) + (1,) * (ndim - 2))


def _contiguous(*arrays):
    return all(a is None or a.flags.c_contiguous for a in arrays)


def _bn_folded(input, weight, bias, mean, invstd):
    """PyTorch's kernel for contiguous tensors: ``x * alpha + beta`` with per-channel
    ``alpha = invstd * weight`` and ``beta = bias - mean * alpha``, in at least float32.
    With a zero variance and eps (invstd inf) that is inf - inf, NaN, where its strided
    kernel's ``(x - mean) * invstd * weight + bias`` gives +-inf."""
    up = OPMATH.get(input.dtype, input.dtype)
    alpha, beta = _bn_factors(weight, bias, mean, invstd, up)
    return (input.astype(up) * alpha + beta).astype(input.dtype)


def _bn_factors(weight, bias, mean, invstd, up):
    """The folded form's per-channel ``alpha`` and ``beta``, in dtype ``up``."""
    alpha = invstd.astype(up) if weight is None else invstd.astype(up) * weight.astype(up)
    beta = -mean.astype(up) * alpha
    if bias is not None:
        beta += bias.astype(up)
    return alpha, beta


def _bn_fwd(xp, input, weight, bias, running_mean, running_var, training, eps):
    axes = _bn_axes(input.ndim)
    if training:
        mean = _mean(xp, input, axes)
        xc = input - mean
        invstd = 1 / xp.sqrt(_mean(xp, xc * xc, axes) + eps)
    else:
        mean = _bn_c(running_mean, input.ndim)
        invstd = 1 / xp.sqrt(_bn_c(running_var, input.ndim) + eps)
        if _contiguous(input, weight, bias, running_mean, running_var):
            return (_bn_folded(input, _bn_c(weight, input.ndim), _bn_c(bias, input.ndim),
                               mean, invstd),
                    xp.reshape(mean, (-1,)), xp.reshape(invstd, (-1,)))
        xc = input - mean
    out = xc * invstd
    if weight is not None:
        out *= _bn_c(weight, input.ndim)
    if bias is not None:
        out += _bn_c(bias, input.ndim)
    return out, xp.reshape(mean, (-1,)), xp.reshape(invstd, (-1,))


def _bn_saved(xp, input, save_mean, save_invstd, training, eps):
    shape = (-1,) + (1,) * (input.ndim - 2)
    mean, invstd = xp.reshape(save_mean, shape), xp.reshape(save_invstd, shape)
    if training:
        mean, invstd = _stats(xp, input, mean, invstd, _bn_axes(input.ndim), eps)
    return mean, invstd


def _bn_backward(xp, grad, input, weight, save_mean, save_invstd, training, eps,
                 grad_input_mask):
    """native_batch_norm_backward: the three gradients from each channel's sums of ``grad``
    and of ``(x - mean) * grad``, each taken once. In PyTorch's order: the products are
    summed before invstd scales them, and the weight multiplies last, so a huge one
    overflows (or not) where PyTorch's does."""
    want_x, want_w, want_b = grad_input_mask
    mean, invstd = _bn_saved(xp, input, save_mean, save_invstd, training, eps)
    ndim, n = input.ndim, math.prod(input.shape[:1] + input.shape[2:])
    sums = want_w or want_b or want_x and training  # (evaluation's input gradient: none)
    xc = input - mean if sums else None
    sg = _channel_sum(xp, grad) if sums else None
    sxg = _channel_sum(xp, grad * xc) if sums else None
    dx = dw = None
    if want_x:
        if training:
            k = _per_count(_bn_c(sxg, ndim), n) * invstd * invstd
            grad = grad - _per_count(_bn_c(sg, ndim), n) - xc * k
        dx = grad * invstd
        if weight is not None:
            dx = dx * _bn_c(weight, ndim)
    if want_w:
        dw = sxg * xp.reshape(invstd, (-1,)) if n else sxg  # invstd NaN when empty
    return dx, dw, sg if want_b else None


def _per_count(total, n):
    """A mean from its sum over ``n`` values: NaN, quietly, over none (as ``_mean``)."""
    return total / n if n else total / 0.0


def _bn_takes(input, *others):
    """Whether the compiled kernels take a batch norm: float32, C-contiguous, non-empty,
    each channel's values in runs long enough."""
    return cpu_kernels.channel_runs_pay(input) and cpu_kernels.takes(input, *others)


def _bn_backward_takes(grad, input, weight, save_mean, save_invstd, training, eps, mask):
    """Whether the compiled backward takes a batch norm's: as :func:`_bn_takes`, but the
    input in any layout (copied C-contiguous: one pass, where NumPy's rule makes several
    and sums a row-major channel's values one row at a time in float32)."""
    return (cpu_kernels.native_float32(input) and cpu_kernels.channel_runs_pay(input)
            and cpu_kernels.takes(grad, weight, save_mean, save_invstd))


def _bn_fwd_compiled(xp, input, weight, bias, running_mean, running_var, training, eps):
    """In evaluation, ``_bn_folded``'s factors, the pass over the batch compiled."""
    if training:
        return cpu_kernels.batch_norm(input, weight, bias, eps)
    invstd = 1 / xp.sqrt(running_var + eps)
    alpha, beta = _bn_factors(weight, bias, running_mean, invstd, input.dtype)
    return cpu_kernels.channel_affine(input, alpha, beta), running_mean.reshape(-1), invstd


_batch_norm = defop(
    "batch_norm", kernel(_bn_fwd, _bn_fwd_compiled,
                         lambda input, weight, bias, running_mean, running_var, training, eps:
                         _bn_takes(input, weight, bias) if training else
                         _bn_takes(input, weight, bias, running_mean, running_var)),
    inputs=("input", "weight", "bias", "running_mean", "running_var"),
    vjp={("input", "weight", "bias"): kernel(
        _bn_backward,
        lambda xp, grad, input, weight, save_mean, save_invstd, training, eps, mask:
        cpu_kernels.batch_norm_backward(grad, input, weight, save_mean, save_invstd, training,
                                        mask),
        _bn_backward_takes)},
    jvp="transpose", outputs=("result", "save_mean", "save_invstd"),
    nondiff_outputs=("save_mean", "save_invstd"), node="NativeBatchNormBackward0")


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-5):
    """Batch norm; in training, batch statistics, and running stats updated in place.
    PyTorch's Python checks, then ATen's op (:func:`aten_batch_norm`)."""
    if training:
        _verify_batch_size(input.shape)
    if training and eps <= 0.0:
        raise ValueError(f"batch_norm eps must be positive during training, but got {eps}")
    if eps < 0.0:
        raise ValueError(f"batch_norm eps must be non-negative, but got {eps}")
    return aten_batch_norm(input, weight, bias, running_mean, running_var, training, momentum,
                           eps)


def aten_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    """``torch.batch_norm``'s op (ATen's argument order): a batch of one value per channel
    is allowed in training (it normalizes to 0)."""
    if not training:
        for name, stat in (("running_mean", running_mean), ("running_var", running_var)):
            if stat is None:
                raise RuntimeError(f"{name} must be defined in evaluation mode")
    _check_mixed_dtype(input, weight, bias, running_mean, running_var)
    out, mean, invstd = apply(_batch_norm, (input, weight, bias, running_mean, running_var),
                              (training, eps))
    n = math.prod(input.shape[:1] + input.shape[2:])
    if training and running_mean is not None and n:  # PyTorch leaves them be on an empty batch
        m = momentum
        var = (1 / invstd._data) ** 2 - eps
        running_mean._data *= 1 - m
        running_mean._data += m * mean._data
        running_mean._vc[0] += 1
        running_var._data *= 1 - m
        # (one value per channel: PyTorch's unbiased variance 0 * 1/0, NaN)
        running_var._data += (m * n / (n - 1) if n > 1 else math.nan) * var
        running_var._vc[0] += 1
    return out


def _check_mixed_dtype(input, *params):
    """PyTorch's CPU batch norm: parameters of a dtype other than the input's (as the
    first one given says) must all be float32, and the input then float16 or bfloat16."""
    given = [p for p in params if p is not None]
    if not given or given[0].dtype == input.dtype or input.device.type != "cpu":
        return
    if any(p.dtype != float32 for p in given):
        raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of Float")
    if input._data.dtype not in LOW:
        raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")


# ---- activations --------------------------------------------------------------------------
_SQRT_2_PI = math.sqrt(2 / math.pi)


def _erf(xp, x):
    return functions(xp).erf(x)


# erfc(|x|/sqrt 2) = t P(t) exp(-x*x/2), t = 1/(1 + k|x|) (Abramowitz-Stegun 7.1.26, |error|
# < 1.5e-7): float32 GELU in a few in-place NumPy passes, as SciPy's erf is 30x slower than
# exp on float32. The coefficients carry the -1/2 of ``-erfc/2``, highest degree first.
_AS_K = 0.3275911 * 0.7071067811865476
_AS_C = tuple(-0.5 * c for c in (1.061405429, -1.453152027, 1.421413741, -0.284496736,
                                 0.254829592))


def _gelu_tail32(xp, x):
    """``(|x|, -erfc(|x|/sqrt 2)/2, exp(-x*x/2))`` for a float32 array."""
    a = xp.abs(x)
    e = a * a
    e *= -0.5
    xp.exp(e, out=e)
    t = a * _AS_K
    t += 1
    xp.reciprocal(t, out=t)
    p = t * _AS_C[0]
    for c in _AS_C[1:]:
        p += c
        p *= t
    p *= e
    return a, p, e


def _gelu32(xp, self, approximate):
    """``x Phi(x)`` as ``relu(x) - |x| erfc(|x|/sqrt 2)/2``: no sign select, no copysign."""
    a, p, _ = _gelu_tail32(xp, self)
    p *= a
    p += xp.maximum(self, 0, out=a)
    return p


def _gelu32_d(xp, x):
    """``Phi(x) + x phi(x)``; ``Phi(x)`` is ``|H(x) - erfc(|x|/sqrt 2)/2|`` (H the step)."""
    cdf, p, e = _gelu_tail32(xp, x)
    xp.greater_equal(x, 0, out=cdf)
    cdf += p
    xp.abs(cdf, out=cdf)
    e *= x
    e *= 0.3989422804014327
    cdf += e
    return cdf


def _gelu_fwd(xp, self, approximate):
    if approximate == "tanh":
        return 0.5 * self * (1 + xp.tanh(_SQRT_2_PI * (self + 0.044715 * self * self * self)))
    return 0.5 * self * (1 + _erf(xp, self * 0.7071067811865476))


def _gelu_grad(xp, grad, self, approximate):
    if approximate == "tanh":
        inner = _SQRT_2_PI * (self + 0.044715 * self * self * self)
        t = xp.tanh(inner)
        dinner = _SQRT_2_PI * (1 + 3 * 0.044715 * self * self)
        return grad * (0.5 * (1 + t) + 0.5 * self * (1 - t * t) * dinner)
    cdf = 0.5 * (1 + _erf(xp, self * 0.7071067811865476))
    return grad * (cdf + self * 0.3989422804014327 * xp.exp(-0.5 * self * self))


def _gelu32_grad(xp, grad, self, approximate):
    d = _gelu32_d(xp, self)
    d *= grad
    return d


def _erf_gelu32(*args):
    """The exact (erf) GELU of a float32 array with dims: the in-place NumPy kernels."""
    self, approximate = args[-2:]
    return approximate != "tanh" and self.dtype == float32.np and self.ndim


def _erf_gelu_gpu(*args):
    """The exact GELU in float32 or float64: one fused CuPy kernel each way."""
    return args[-1] != "tanh" and gpu_kernels.floats(*args[:-1])


def _erf_gelu_compiled(*args):
    """The exact GELU of float32 arrays: the compiled CPU kernels."""
    return args[-1] != "tanh" and cpu_kernels.takes(*args[:-1])


_gelu = defop("gelu", kernel(kernel(kernel(_gelu_fwd, _gelu32, _erf_gelu32, leading=True),
                                    lambda xp, self, approximate: cpu_kernels.gelu(self),
                                    _erf_gelu_compiled, leading=True),
                             lambda xp, self, approximate: gpu_kernels.gelu(self),
                             _erf_gelu_gpu, "cupy"),
              vjp={"self": kernel(kernel(kernel(_gelu_grad, _gelu32_grad, _erf_gelu32,
                                                leading=True),
                                         lambda xp, grad, self, approximate:
                                         cpu_kernels.gelu_grad(grad, self), _erf_gelu_compiled,
                                         leading=True),
                                  lambda xp, grad, self, approximate:
                                  gpu_kernels.gelu_grad(grad, self), _erf_gelu_gpu, "cupy")},
              jvp="elementwise", to_float=True)


def _sigmoid(xp, x):
    """sigmoid inside rules: the op's overflow-free forward on arrays, the op on Tensors."""
    return functions(xp).sigmoid(x)


def _silu_grad(xp, grad, self):
    s = _sigmoid(xp, self)
    return grad * s * (1 + self * (1 - s))


_silu = defop("silu", lambda xp, self: self * _sigmoid(xp, self), vjp={"self": _silu_grad},
              jvp="elementwise", to_float=True)


def _kernel_dtypes(input, kernel, kinds):
    """PyTorch's CPU kernel ``kernel`` has loops for the dtype kinds ``kinds`` only."""
    if kind_of(input._data.dtype) not in kinds:
        raise NotImplementedError(f'"{kernel}" not implemented for '
                                  f"'{_pretty(input._data.dtype)}'")


def gelu(input, approximate="none"):
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    _kernel_dtypes(input, "GeluKernelImpl", "f")
    return apply(_gelu, (input,), (approximate,))


def check_silu(input):
    """silu has floating and complex loops, in and out of place."""
    _kernel_dtypes(input, "silu_cpu", "fc")


def silu(input):
    check_silu(input)
    return apply(_silu, (input,))


# ---- embedding ----------------------------------------------------------------------------
def _embedding_grad(xp, grad, indices, weight_shape, padding_idx, scale_grad_by_freq):
    n, d = weight_shape
    idx = xp.reshape(indices, (-1,))
    g = xp.reshape(grad, (idx.shape[0], d))
    if scale_grad_by_freq:  # each row's gradient over the number of times it was looked up
        counts = xp.bincount(idx, minlength=n)
        g = g / xp.expand_dims(counts[idx], 1)
    if padding_idx is not None:  # its row gets nothing (a mask, not a filter: no values
        g = xp.where(xp.expand_dims(xp.not_equal(idx, padding_idx), 1), g, 0)  # needed)
    return functions(xp).index_add(xp.zeros((n, d), dtype=grad.dtype), idx, g)


_embedding = defop("embedding",
                   lambda xp, weight, indices, padding_idx, scale_grad_by_freq:
                   xp.take(weight, indices, 0),  # (a function: batched indices index a weight)
                   inputs=("weight", "indices"), vjp={"weight": _embedding_grad},
                   jvp="linear")


def _embedding_renorm(weight, indices, max_norm, norm_type):
    """``embedding_renorm_``: each looked-up row whose ``norm_type``-norm exceeds
    ``max_norm`` scaled in place to ``max_norm`` (outside the graph, as under no_grad)."""
    xp = get_array_module(weight._data)
    rows = xp.unique(indices._data)
    if not rows.size:
        return
    norms = _vector_norm(xp, weight._data[rows], float(norm_type), 1, True)
    over = norms > max_norm
    if over.any():
        weight._data[rows] *= xp.where(over, max_norm / (norms + 1e-7), 1).astype(
            weight._data.dtype)
        weight._vc[0] += 1


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False):
    """Rows of ``weight`` looked up by ``input``; with ``max_norm``, the looked-up rows
    are first renormed in place, as PyTorch's ``embedding_renorm_``."""
    if sparse:
        raise NotImplementedError("embedding: sparse gradients are not supported")
    n = weight.shape[0] if weight.ndim else 0
    if padding_idx is not None:
        if not -n <= padding_idx < max(n, 1):
            raise AssertionError("Padding_idx must be within num_embeddings")
        if padding_idx < 0:
            padding_idx += n
    check_embedding(input, weight, max_norm)
    if max_norm is not None:
        _embedding_renorm(weight, input, max_norm, norm_type)
    return apply(_embedding, (weight, input), (padding_idx, bool(scale_grad_by_freq)))


# ---- pointwise losses ---------------------------------------------------------------------
def _reduce(xp, x, reduction):
    up = OPMATH.get(x.dtype)  # float16/bfloat16 accumulate in float32, as PyTorch's sums
    if up is not None and reduction != "none":
        return xp.astype(_reduce(xp, xp.astype(x, up), reduction), x.dtype)
    if reduction == "mean":  # NumPy warns about an empty mean; PyTorch quietly gives NaN
        return xp.mean(x) if math.prod(x.shape) else xp.sum(x) / 0
    if reduction == "sum":
        return xp.sum(x)
    return x


def _reduced_grad(xp, grad, reduction, n):
    return grad / n if reduction == "mean" else grad


def _mse_d(xp, grad, self, target, reduction):
    """ATen's mse_loss_backward kernel, ``norm * (self - target) * grad`` in that order
    (an empty input has nothing to scale)."""
    n = _size(self, target)
    norm = 2 / n if reduction == "mean" and n else 2.0
    return norm * (self - target) * grad


# float16 in half (upcast=False): PyTorch's CPU kernels for the squared difference and its
# gradient are Vectorized<Half> arithmetic, rounding at each step (2 * (x - t) overflows
# to inf past 32752 where float32 would not).
_mse = defop(
    "mse_loss",
    lambda xp, self, target, reduction: _reduce(xp, (self - target) ** 2, reduction),
    vjp={"self": _mse_d,
         "target": lambda xp, grad, self, target, reduction:
         _mse_d(xp, grad, target, self, reduction)},
    jvp="transpose", promote=("self", "target"), upcast=False)


def _size(a, b):
    """The number of elements of ``a`` and ``b`` broadcast together (shapes the forward
    accepted; arrays or the facade's Tensors)."""
    n = max(len(a.shape), len(b.shape))
    sa = (1,) * (n - len(a.shape)) + tuple(a.shape)
    sb = (1,) * (n - len(b.shape)) + tuple(b.shape)
    return math.prod(y if x == 1 else x for x, y in zip(sa, sb, strict=True))


def _sl1_fwd(xp, self, target, reduction, beta):
    d = xp.abs(self - target)
    loss = xp.where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta) if beta > 0 else d
    return _reduce(xp, loss, reduction)


def _sl1_d(xp, self, target, beta):
    """PyTorch's smooth_l1_backward: the difference over beta, clipped to +-1, NaN kept.
    A NaN takes the ``d / beta`` side: NumPy's sign keeps NaN, but PyTorch's, and so the
    facade's (under create_graph), gives 0."""
    d = self - target
    if beta == 0:
        return xp.where(d < 0, -1.0, xp.where(d > 0, 1.0, d * 0))
    return xp.where(xp.abs(d) >= beta, xp.sign(d), d / beta)


_smooth_l1 = defop(
    "smooth_l1_loss", _sl1_fwd,
    vjp={"self": lambda xp, grad, self, target, reduction, beta:
         _sl1_d(xp, self, target, beta) * _reduced_grad(xp, grad, reduction,
                                                       _size(self, target)),
         "target": lambda xp, grad, self, target, reduction, beta:
         -_sl1_d(xp, self, target, beta) * _reduced_grad(xp, grad, reduction,
                                                        _size(self, target))},
    jvp="transpose", promote=("self", "target"), node="SmoothL1LossBackward0")

_EPS_LOG = -100.0  # PyTorch clamps log terms of binary_cross_entropy at -100


def _bce_fwd(xp, self, target, weight, reduction):
    loss = -(xp.multiply(target, xp.maximum(xp.log(self), _EPS_LOG))
             + xp.multiply(1 - target, xp.maximum(xp.log(1 - self), _EPS_LOG)))
    if weight is not None:
        loss = xp.multiply(loss, weight)
    return _reduce(xp, loss, reduction)


# ATen's EPSILON is a float constant: its double kernel clamps at 1e-12 rounded to float32.
_BCE_EPS = struct.unpack("f", struct.pack("f", 1e-12))[0]


def _bce_grad(xp, grad, self, target, weight, reduction):
    g = _reduced_grad(xp, grad, reduction, math.prod(self.shape)) * (self - target)
    g = g / _max_scalar(xp, (1 - self) * self, _BCE_EPS)
    return g if weight is None else g * weight


def _bce_grad_target(xp, grad, self, target, weight, reduction):
    """ATen's ``-logit(self)``: one log, and -0 at 0.5 as PyTorch gives."""
    g = -xp.log(self / (1 - self)) * _reduced_grad(xp, grad, reduction, math.prod(self.shape))
    return g if weight is None else g * weight


_bce = defop("binary_cross_entropy", _bce_fwd, inputs=("self", "target", "weight"),
             vjp={"self": _bce_grad, "target": _bce_grad_target},
             jvp="transpose", promote=("self", "target"))


# ---- binary_cross_entropy_with_logits -----------------------------------------------------
# ATen's composite, step by step. Its in-place steps write into the tensor they start from:
# the forward into ``1 - target`` (the target's dtype), the input's gradient into
# ``sigmoid(input)`` (the input's dtype); each step computes in the operands' common dtype
# and rounds into that one. float16 operands stay float16 here (upcast=False): a binary
# step on them rounds to half, as PyTorch's; its unary kernels compute in float32 and round
# once (``_once``). Steps between arrays of one dtype (the common case) cast nothing.
def _into(xp, x, like):
    """``x`` written into a tensor of ``like``'s dtype (an in-place step of ATen's)."""
    return x if x.dtype == like.dtype else xp.astype(x, like.dtype)


def _mul(xp, a, b):
    """``a * b`` in PyTorch's dtype: a 0-d operand (the gradient of a reduced loss, a
    scalar weight) does not promote a dimensioned one, and enters a float16 product as
    float32 (ATen's CPU scalar). Tensors, under ``create_graph``, promote so themselves."""
    return functions(xp).scalar_mul(a, b, OPMATH)


def _once(xp, f, x):
    """``f(xp, x)`` as PyTorch's kernels compute it for float16: in float32, rounded once
    (an op on Tensors, under ``create_graph``, does so itself)."""
    return functions(xp).in_float32(f, x)


def _log_sigmoid(xp, x):
    """PyTorch's log_sigmoid, ``min(x, 0) - log1p(exp(-|x|))``: no overflow."""
    low = functions(xp).clamp_max(x, 0)
    return low - xp.log1p(xp.exp(-xp.abs(x)))


def _div_numel(xp, x, reduction, n):
    """'mean''s ``div_(numel)``, last (after the products, as ATen: they may overflow)."""
    return _once(xp, lambda xp, a: a / n, x) if reduction == "mean" else x


def _bcel_fwd(xp, self, target, weight, pos_weight, reduction):
    """``(1 - target).mul_(input).sub_(log_sigmoid(input) [.mul_(log_weight)])
    [.mul_(weight)]``, reduced."""
    lsi = _once(xp, _log_sigmoid, self)
    if pos_weight is not None:
        lsi = _into(xp, _mul(xp, lsi, _mul(xp, target, pos_weight - 1) + 1), self)
    # one expression: NumPy reuses its temporaries in place
    loss = _into(xp, _into(xp, xp.multiply(1 - target, self), target) - lsi, target)
    if weight is not None:
        loss = _into(xp, _mul(xp, loss, weight), target)
    return _reduce(xp, loss, reduction)


def _bcel_grad(xp, grad, self, target, weight, pos_weight, reduction):
    """ATen's binary_cross_entropy_with_logits_backward: ``sigmoid(input).sub_(target)``
    (with pos_weight, ``t = pos_weight * target``, ``(t + 1).sub_(target).mul_(sigmoid)
    .sub_(t)``), then ``.mul_(grad)``, ``.mul_(weight)``, ``.div_(numel)``."""
    if pos_weight is None:
        g = _into(xp, _once(xp, _sigmoid, self) - target, self)
    else:
        t = _mul(xp, target, pos_weight)
        g = t + 1
        g = _into(xp, xp.multiply(_into(xp, g - target, g), _once(xp, _sigmoid, self)), g)
        g = _into(xp, g - t, g)
    g = _into(xp, _mul(xp, g, grad), g)
    if weight is not None:
        g = _into(xp, _mul(xp, g, weight), g)
    return _div_numel(xp, g, reduction, _size(self, target))


def _bcel_grad_target(xp, grad, self, target, weight, pos_weight, reduction):
    """ATen's binary_cross_entropy_with_logits_target_backward: ``-input * grad`` (with
    pos_weight, ``log_sigmoid(-input).sub_(log_sigmoid(input).mul_(pos_weight))
    .mul_(grad)``), then ``.mul_(weight)``, ``.div_(numel)``."""
    if pos_weight is None:
        g = _mul(xp, -self, grad)
    else:
        lsi = _once(xp, _log_sigmoid, self)
        g = _once(xp, _log_sigmoid, -self)
        g = _into(xp, g - _into(xp, _mul(xp, lsi, pos_weight), lsi), g)
        g = _into(xp, _mul(xp, g, grad), g)
    if weight is not None:
        g = _into(xp, _mul(xp, g, weight), g)
    return _div_numel(xp, g, reduction, _size(self, target))


_bce_logits = defop("binary_cross_entropy_with_logits", _bcel_fwd,
                    inputs=("self", "target", "weight", "pos_weight"),
                    vjp={"self": _bcel_grad, "target": _bcel_grad_target}, jvp="transpose",
                    upcast=False)


def _loss_reduction(reduction):
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def mse_loss(input, target, reduction="mean"):
    check_float_kernel("mse_cpu", input, target)
    return apply(_mse, (input, target), (_loss_reduction(reduction),))


def smooth_l1_loss(input, target, reduction="mean", beta=1.0):
    check_float_kernel("smooth_l1_cpu", input, target)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    return apply(_smooth_l1, (input, target), (_loss_reduction(reduction), beta))


def binary_cross_entropy(input, target, weight=None, reduction="mean"):
    """The kernel on probabilities of one dtype (the weight is cast to it; it is
    broadcast by the caller); values outside [0, 1] are refused, as PyTorch's kernel does."""
    check_bce(input, target, weight)
    if weight is not None and weight.dtype != input.dtype:
        weight = weight.to(input.dtype)
    return apply(_bce, (input, target, weight), (_loss_reduction(reduction),))


def binary_cross_entropy_with_logits(input, target, weight=None, reduction="mean",
                                     pos_weight=None):
    """ATen's composite ``(1 - target).mul_(input).sub_(log_sigmoid(input))``: the loss
    has the target's dtype, each input is used in its own (see ``_bcel_fwd``)."""
    check_bce_logits(input, target, weight, pos_weight)
    return apply(_bce_logits, (input, target, weight, pos_weight),
                 (_loss_reduction(reduction),))
