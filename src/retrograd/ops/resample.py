"""Resampling: ``interpolate``'s kernels (nearest, nearest-exact, (bi/tri)linear, bicubic,
their antialiased forms) and the adaptive average pooling of its "area" mode.

Every mode but "area" is separable: along each resized dim, output ``o`` is a weighted sum
of a few input elements (taps). A dim's plan (:mod:`retrograd.backend.resample_plan`,
host-side tables computed with PyTorch's CPU arithmetic) holds, per tap, the input indices
and weights for all outputs. The forward is one gather (``take``) and multiply-add per tap
and dim, last dim first as PyTorch nests its loops (so non-finite inputs spread as in
PyTorch); the backward adds the gradients back through the taps without a scatter (the
plan's groups). Forward and backward are each other's vjp, so both are differentiable.
The taps are the forward's but in the nearest modes, whose backward has its own indices as
PyTorch's does."""

from ._kernels import run_kernel
from .._dtype import is_inexact, uint8
from ..backend import resample_plan
from ._registry import _pretty, apply, defop

__all__ = ["upsample"]


# ---- kernels ------------------------------------------------------------------------------
def _along(w, axis):
    """A (n,) weight row shaped to broadcast along ``axis`` (negative)."""
    return w.reshape((-1,) + (1,) * (-axis - 1))


def _resample(xp, x, plan):
    if not plan:  # every dim kept: a copy, never the input itself
        return x.copy()
    for axis, idx, w, _, _ in plan:
        idx = xp.asarray(idx)  # the plan is host data: on the arrays' device
        if w is None:
            x = xp.take(x, idx[0], axis=axis)
            continue
        w = xp.asarray(w)
        out = xp.take(x, idx[0], axis=axis)
        out *= _along(w[0], axis)
        for row, wr in zip(idx[1:], w[1:], strict=True):
            t = xp.take(x, row, axis=axis)
            t *= _along(wr, axis)
            out += t
        x = out
    return x


def _resample_t(xp, g, plan):
    """The adjoint of :func:`_resample`, dim by dim (through the plan's groups)."""
    if not plan:
        return g.copy()
    for axis, _, _, n_in, groups in reversed(plan):
        shape = list(g.shape)
        shape[axis] = n_in
        out = xp.zeros(shape, dtype=g.dtype)
        tail = (slice(None),) * (-axis - 1)
        for inputs, outputs, w in groups:
            part = (g[(Ellipsis, outputs) + tail] if type(outputs) is slice
                    else xp.take(g, xp.asarray(outputs), axis=axis))
            if w is not None:
                part = part * _along(xp.asarray(w), axis)
            out[(Ellipsis, inputs) + tail] += part
        g = out
    return g


def _resample_ops(name, node):
    fwd = defop(name, lambda xp, self, plan: run_kernel(xp, _resample, fwd, self, plan),
                vjp={"self": lambda xp, grad, plan: run_kernel(xp, _resample_t, bwd, grad,
                                                               plan)},
                jvp="linear", node=node)
    bwd = defop(f"{name}_backward",
                lambda xp, grad_output, plan: run_kernel(xp, _resample_t, bwd, grad_output,
                                                         plan),
                vjp={"grad_output": lambda xp, grad, plan:
                     run_kernel(xp, _resample, fwd, grad, plan)},
                jvp="linear", node=node.replace("Backward0", "BackwardBackward0"))
    return fwd


_NODE = {("nearest", 1): "UpsampleNearest1D", ("nearest", 2): "UpsampleNearest2D",
         ("nearest", 3): "UpsampleNearest3D", ("nearest-exact", 1): "UpsampleNearestExact1D",
         ("nearest-exact", 2): "UpsampleNearestExact2D",
         ("nearest-exact", 3): "UpsampleNearestExact3D", ("linear", 1): "UpsampleLinear1D",
         ("bilinear", 2): "UpsampleBilinear2D", ("trilinear", 3): "UpsampleTrilinear3D",
         ("bicubic", 2): "UpsampleBicubic2D", ("bilinear-aa", 2): "UpsampleBilinear2DAa",
         ("bicubic-aa", 2): "UpsampleBicubic2DAa"}
_OPS = {key: _resample_ops("upsample_" + node[8:].lower(), node + "Backward0")
        for key, node in _NODE.items()}


def _check_sizes(input, out_sizes, k):
    in_sizes = tuple(input.shape[2:])
    if any(n <= 0 for n in in_sizes + tuple(out_sizes)):
        names = "DHW"[3 - k:]
        i = ", ".join(f"{c}: {n}" for c, n in zip(names, in_sizes, strict=True))
        o = ", ".join(f"{c}: {n}" for c, n in zip(names, out_sizes, strict=True))
        sep = " and" if k == 1 else ""
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input "
                           f"({i}){sep} output ({o})")
    if input.numel() == 0 and input.shape[1] == 0:
        raise RuntimeError(f"Non-empty {k + 2}D data tensor expected but got a tensor with "
                           f"sizes {list(input.shape)}")


def _unsupported(input, mode, k, antialias):
    """PyTorch's error for integer inputs, naming the kernel that rejects them (its uint8
    kernels for bilinear and bicubic round differently and are not reproduced)."""
    if input._data.dtype == uint8.np:
        raise NotImplementedError(f"interpolate: uint8 input in mode {mode!r} is not supported")
    if antialias:
        name = "compute_index_ranges_weights"
    elif k == 2 and mode in ("nearest", "bilinear"):
        name = f"upsample_{mode}2d_channels_last"
    elif mode == "bicubic":
        name = "compute_indices_weights_cubic"
    else:
        name = "compute_indices_weights_" + ("nearest" if "nearest" in mode else "linear")
    raise NotImplementedError(f"\"{name}\" not implemented for '{_pretty(input._data.dtype)}'")


def upsample(input, mode, out_sizes, scales, align_corners=False, antialias=False):
    """The resampling kernel of ``mode`` for the last ``len(out_sizes)`` dims of an
    (N, C, ...) input; ``scales`` per dim (None: taken from the sizes) as PyTorch's
    ``scale_factors`` reach its kernels."""
    k = len(out_sizes)
    _check_sizes(input, out_sizes, k)
    dt = input._data.dtype
    if not is_inexact(dt) and not (dt == uint8.np and mode in ("nearest", "nearest-exact")):
        _unsupported(input, mode, k, antialias)
    strides = tuple(n // input._data.itemsize for n in input._data.strides)
    cl = resample_plan.channels_last_kernel(tuple(input.shape), strides, tuple(out_sizes))
    plan = resample_plan.plan(mode, dt, tuple(input.shape[2:]), tuple(out_sizes),
                              align_corners, tuple(scales), antialias, cl)
    key = (mode + "-aa" if antialias else mode, k)
    return apply(_OPS[key], (input,), (plan,))
