"""The host-side tables of ``interpolate``'s separable kernels: per resized dim, the input
indices and weights of every output (taps), computed with PyTorch's CPU arithmetic (the
scale in the op's math type, ``floorf``, the clamps, its fused multiply-adds), so indices
agree with PyTorch's to the last rounding.

They are computed with NumPy whatever the tensors' backend (small integer and float
tables, as PyTorch computes them on the CPU for its CPU kernels); the kernels in
:mod:`retrograd.ops.resample` move them to the arrays' device.
"""

import math

import numpy

__all__ = ["plan", "channels_last_kernel"]


# ---- index and weight arithmetic ----------------------------------------------------------
# ``ft`` is PyTorch's opmath type: float32 for float16/float32 inputs, float64 for float64.
def _scale(ft, n_in, n_out, align_corners, scale):
    """area_pixel_compute_scale: input units per output unit."""
    if align_corners:
        return ft(n_in - 1) / ft(n_out - 1) if n_out > 1 else ft(0)
    if scale is not None and scale > 0:
        return ft(1.0 / scale)
    return ft(n_in) / ft(n_out)


def _source(ft, scale, n_out, align_corners, cubic=False):
    """area_pixel_compute_source_index for every output index. In float32 PyTorch's build
    fuses ``scale * (i + 0.5) - 0.5`` into one multiply-add (one rounding): computed
    exactly in float64 (a float32 times a half-integer), then rounded once."""
    if align_corners:
        return scale * numpy.arange(n_out, dtype=ft)
    if ft is numpy.float32:
        src = (numpy.float64(scale) * (numpy.arange(n_out) + 0.5) - 0.5).astype(ft)
    else:
        src = scale * (numpy.arange(n_out, dtype=ft) + ft(0.5)) - ft(0.5)
    return src if cubic else numpy.maximum(src, ft(0))


def _floorf(x):
    """C's ``floorf`` of an opmath value (a double argument is rounded to float first)."""
    return numpy.floor(x.astype(numpy.float32)).astype(numpy.int64)


def _nearest_idx(n_in, n_out, scale, exact):
    """PyTorch's nearest_idx / nearest_exact_idx, used by its channels-last nearest kernel
    and by every nearest backward: the scale in float32 whatever the dtype; plain nearest
    copies equal sizes and halves doubled ones (``i >> 1``) before any scale is looked at."""
    i = numpy.arange(n_out)
    if not exact and n_out in (n_in, 2 * n_in):
        return i >> (n_out != n_in)
    s = _scale(numpy.float32, n_in, n_out, False, scale)
    src = (i + 0.5) * numpy.float64(s) if exact else i.astype(numpy.float32) * s
    return numpy.minimum(_floorf(src), n_in - 1)


def _nearest_generic(ft, n_in, n_out, scale, exact):
    """PyTorch's generic (TensorIterator) nearest kernel: the scale in the opmath type and
    no shortcut for equal or doubled sizes."""
    s = _scale(ft, n_in, n_out, False, scale)
    if exact:
        src = _floorf(_source(ft, s, n_out, False).astype(numpy.float64) + 0.5)
    else:
        src = _floorf(s * numpy.arange(n_out, dtype=ft))
    return numpy.minimum(src, n_in - 1)


def channels_last_kernel(shape, strides, out_sizes):
    """Whether PyTorch's nearest forward takes its channels-last kernel (nearest_idx's
    indices) rather than the generic one: for a channels-last contiguous input of more
    than 3 channels, and in 2-D also for any output with height + width <= 128
    (_use_channels_last_kernel_2d)."""
    k = len(out_sizes)
    if k == 2 and out_sizes[0] + out_sizes[1] <= 128:
        return True
    if k == 1 or shape[1] <= 3:
        return False
    expected = 1  # channels-last contiguity: C, then the spatial dims innermost first, N
    for d in (1, *range(len(shape) - 1, 1, -1), 0):
        if shape[d] != 1:
            if strides[d] != expected:
                return False
            expected *= shape[d]
    return True


def _nearest_taps(ft, n_in, n_out, scale, exact, channels_last_kernel):
    """Forward indices and the backward's: PyTorch's backward always uses nearest_idx, its
    forward only in the channels-last kernel, so they can differ (a user scale of 2.01
    doubling a size: the forward floors by the scale, the backward halves)."""
    bwd = _nearest_idx(n_in, n_out, scale, exact)
    fwd = bwd if channels_last_kernel else _nearest_generic(ft, n_in, n_out, scale, exact)
    return fwd[None], bwd[None]


def _linear_taps(ft, n_in, n_out, align_corners, scale):
    if n_in == n_out:
        return None
    real = _source(ft, _scale(ft, n_in, n_out, align_corners, scale), n_out, align_corners)
    i0 = numpy.minimum(_floorf(real), n_in - 1)
    l1 = numpy.clip(real - i0.astype(ft), ft(0), ft(1))
    i1 = i0 + (i0 < n_in - 1)
    return numpy.stack((i0, i1)), numpy.stack((ft(1) - l1, l1))


def _cubic_coefficients(ft, t):
    a = ft(-0.75)

    def conv1(x):
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def conv2(x):
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    x2 = ft(1) - t
    return numpy.stack((conv2(t + ft(1)), conv1(t), conv1(x2), conv2(x2 + ft(1))))


def _cubic_taps(ft, n_in, n_out, align_corners, scale):
    real = _source(ft, _scale(ft, n_in, n_out, align_corners, scale), n_out, align_corners,
                   cubic=True)
    i0 = numpy.minimum(_floorf(real), n_in - 1)
    t = numpy.clip(real - i0.astype(ft), ft(0), ft(1))
    idx = numpy.clip(i0 + numpy.arange(-1, 3)[:, None], 0, n_in - 1)
    return idx, _cubic_coefficients(ft, t)


def _aa_filter(mode, ft, x):
    x = numpy.abs(x)
    if mode == "bilinear":
        return numpy.where(x < 1, ft(1) - x, ft(0))
    a = ft(-0.5)
    w1 = ((a + 2) * x - (a + 3)) * x * x + 1
    w2 = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return numpy.where(x < 1, w1, numpy.where(x < 2, w2, ft(0)))


def _aa_taps(mode, ft, n_in, n_out, align_corners, scale):
    """The antialiased kernels' taps: the filter widened by the scale when downsampling,
    normalized to sum 1 (PyTorch's _compute_indices_min_size_weights_aa)."""
    s = _scale(ft, n_in, n_out, align_corners, scale)
    half = ft(1 if mode == "bilinear" else 2)
    support = half * s if s >= 1 else half
    width = int(math.ceil(support)) * 2 + 1
    center = s * (numpy.arange(n_out, dtype=numpy.float64) + 0.5).astype(ft)
    lo = numpy.maximum((center - support + ft(0.5)).astype(numpy.int64), 0)
    size = numpy.clip(numpy.minimum((center + support + ft(0.5)).astype(numpy.int64), n_in)
                      - lo, 0, width)
    j = numpy.arange(width)[:, None]
    invscale = ft(1) / s if s >= 1 else ft(1)
    w = _aa_filter(mode, ft, ((j + lo).astype(ft) - center + ft(0.5)) * invscale)
    w = numpy.where(j < size, w, ft(0))
    total = numpy.sum(w, axis=0)
    w = numpy.where(total != 0, w / numpy.where(total != 0, total, ft(1)), w)
    # Taps past a window's end read a later element (kept in range) with weight 0: every
    # tap's indices stay nondecreasing.
    return numpy.minimum(j + lo, n_in - 1), w


def _selector(a):
    """An increasing index array as a slice when it is evenly spaced (a view, not a copy)."""
    if len(a) == 1 or len(a) > 1 and a[1] > a[0] and (numpy.diff(a) == a[1] - a[0]).all():
        step = int(a[1] - a[0]) if len(a) > 1 else 1
        return slice(int(a[0]), int(a[-1]) + 1, step)
    return a


def _adjoint_groups(idx, w):
    """The backward of each tap as scatter-free adds: a tap's indices never decrease, so
    the outputs that read one input are a run; the ``r``-th outputs of all runs read
    distinct inputs, so each ``r`` is one add of (weighted) gradients into the inputs they
    read. Returns ``(inputs, outputs, weights)`` per tap and ``r``, index sets as slices
    where evenly spaced (the common scales make every one a strided view)."""
    groups = []
    for k, row in enumerate(idx):
        starts = numpy.flatnonzero(numpy.diff(row, prepend=-1))
        lengths = numpy.diff(starts, append=len(row))
        for r in range(int(lengths.max())):
            runs = lengths > r
            outs = starts[runs] + r
            groups.append((_selector(row[outs]), _selector(outs),
                           None if w is None else w[k][outs]))
    return tuple(groups)


def plan(mode, dtype, in_sizes, out_sizes, align_corners, scales, antialias,
          channels_last_kernel=False):
    """One entry per resized dim, last dim first: ``(axis, index, weight, n_in, groups)``
    with ``index``/``weight`` (taps, n_out) (weight None for the nearest modes) and the
    backward's ``groups`` (see :func:`_adjoint_groups`; the nearest modes' backward reads
    its own indices, see :func:`_nearest_taps`)."""
    ft = numpy.float64 if dtype == numpy.float64 else numpy.float32
    plan = []
    k_dims = len(in_sizes)
    for d in reversed(range(k_dims)):
        n_in, n_out, s = in_sizes[d], out_sizes[d], scales[d]
        back = None  # the backward's indices where they are not the forward's
        if antialias:
            taps = None if n_in == n_out else _aa_taps(mode, ft, n_in, n_out, align_corners, s)
        elif mode in ("nearest", "nearest-exact"):
            idx, back = _nearest_taps(ft, n_in, n_out, s, mode == "nearest-exact",
                                      channels_last_kernel)
            taps = idx, None
        elif mode == "bicubic":
            taps = _cubic_taps(ft, n_in, n_out, align_corners, s)
        else:
            taps = _linear_taps(ft, n_in, n_out, align_corners, s)
        if taps is None:
            continue
        idx, w = taps
        back = idx if back is None else back
        if w is None and n_in == n_out and (idx[0] == numpy.arange(n_out)).all() and (
                back[0] == idx[0]).all():
            continue
        w = None if w is None else w.astype(dtype)
        plan.append((d - k_dims, idx, w, n_in, _adjoint_groups(back, w)))
    return tuple(plan)
