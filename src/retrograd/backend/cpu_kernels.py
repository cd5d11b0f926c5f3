"""Compiled CPU kernels (numba, an optional extra) for the passes of a training step that
NumPy can only write as chains of whole-array passes, or runs far below memory speed: GELU,
layer norm, softmax and log-softmax over the last axis, each way, ReLU each way, the
outer product, ``x + alpha * y``, in float32; Adam's update, in float32 and float64; 2-D
max pools and a max pool's gradient scatter, in float32 (NumPy's need a pass per comparison,
and a fancy-index assignment, several times slower); linspace's fused multiply-adds
(NumPy has none: its exact emulation takes some twenty passes).

A NumPy chain reads and writes every element once per operation (GELU's is fifteen
passes); these loops do each element's arithmetic in registers, one pass over memory,
vectorized by LLVM. NumPy stays the default and the fallback: without numba,
:func:`ready` is false and the ops run their NumPy kernels. The kernels compile on
first use and numba caches them on disk.

``erf`` is the rational approximation of Eigen and XLA (exact in float32 outside
[-4, 4]); ``exp`` is Cephes' polynomial after Cody-Waite reduction, with the power of
two built from its bits. Both are written out because numba's ``math.erf`` and
``math.exp`` are calls that stop vectorization. No fast-math flag assumes away NaN or
infinity: a NaN propagates, and ``exp(-inf)`` is 0, as masked attention needs.
"""

import functools
import importlib.util
import os

import numpy

__all__ = ["ready", "takes", "gelu", "gelu_grad", "layer_norm", "layer_norm_dx",
           "layer_norm_dw", "column_sum", "softmax", "softmax_grad", "log_softmax",
           "log_softmax_grad", "adam_step", "relu", "relu_grad", "outer", "add_scaled",
           "max_pool_2d", "max_pool_grad", "linspace"]

# Reassociation (vectorized sums), contraction into FMAs, no signed zeros. Not 'nnan' or
# 'ninf' (LLVM would drop the NaN and infinity handling), nor 'afn'/'arcp' (square roots
# and divisions by Newton steps from estimates: 1/sqrt(inf) would be NaN, not 0).
_FLAGS = {"reassoc", "contract", "nsz"}


@functools.cache
def ready():
    """Whether numba is installed and compiling (``NUMBA_DISABLE_JIT=1``, set to step
    through code in a debugger, turns these kernels off: they need the compiler). Its
    import is deferred to the first kernel call."""
    return (importlib.util.find_spec("numba") is not None
            and os.environ.get("NUMBA_DISABLE_JIT", "0") in ("", "0"))


def takes(first, *others):
    """Whether the kernels take these arrays (None: an absent optional one): non-empty,
    float32, C-contiguous. A loop, not a generator: it runs on every call of the ops."""
    if not (ready() and first.size):
        return False
    for x in (first, *others):
        if x is not None and (x.dtype.char != "f" or not x.flags.c_contiguous):
            return False
    return True


_f = numpy.float32
# erf(z) = z P(z^2) / Q(z^2) on [-4, 4], highest degree first
_ERF_P = tuple(_f(c) for c in (-2.72614225801306e-10, 2.77068142495902e-08,
                               -2.10102402082508e-06, -5.69250639462346e-05,
                               -7.34990630326855e-04, -2.95459980854025e-03,
                               -1.60960333262415e-02))
_ERF_Q = tuple(_f(c) for c in (-1.45660718464996e-05, -2.13374055278905e-04,
                               -1.68282697438203e-03, -7.37332916720468e-03,
                               -1.42647390514189e-02))
# exp(r) = 1 + r + r^2 E(r) on |r| <= ln(2)/2, highest degree first
_EXP_E = tuple(_f(c) for c in (1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3,
                               4.1665795894e-2, 1.6666665459e-1, 5.0000001201e-1))
_LOG2E, _LN2_HI, _LN2_LO = _f(1.4426950408889634), _f(0.693359375), _f(-2.12194440e-4)
_EXP_MIN = _f(-120.0)  # exp(t) rounds to 0 in float32 from t = -104 down
_HALF, _ONE, _FOUR, _ZERO, _INF = _f(0.5), _f(1.0), _f(4.0), _f(0.0), _f(numpy.inf)
_SQRT1_2, _INV_SQRT_2PI = _f(0.7071067811865476), _f(0.3989422804014327)
_INT_MIN, _31, _MAGNITUDE = numpy.int32(-2**31), numpy.int32(31), numpy.int32(2**31 - 1)
_BLOCK = 16  # rows a row-wise kernel takes a step at a time
_CHUNK = 256  # elements a float32 partial sum adds


@functools.cache
def _kernels():
    """Compile (or load from numba's cache) every kernel: {name: function}."""
    from llvmlite import ir
    from numba import njit, types
    from numba.extending import intrinsic

    jit = njit(fastmath=_FLAGS, error_model="numpy", cache=True, nogil=True)
    inline = njit(fastmath=_FLAGS, error_model="numpy", inline="always")
    p0, p1, p2, p3, p4, p5, p6 = _ERF_P
    q0, q1, q2, q3, q4 = _ERF_Q
    e0, e1, e2, e3, e4, e5 = _EXP_E

    @intrinsic
    def as_float32(typingctx, bits):
        def codegen(context, builder, signature, args):
            return builder.bitcast(args[0], ir.FloatType())
        return types.float32(types.int32), codegen

    @intrinsic
    def fused(typingctx, a, b, c):
        """``a * b + c`` rounded once: LLVM's fma (the instruction, or the C library's)."""
        def codegen(context, builder, signature, args):
            return builder.fma(*args)
        return a(a, b, c), codegen

    @inline
    def exp_neg(t):
        """``exp(t)`` for t <= 0 or NaN; below float32's normal range the power of two is
        applied in two halves, so the result rounds gradually to 0 as NumPy's does."""
        t = _EXP_MIN if t < _EXP_MIN else t
        n = numpy.floor(t * _LOG2E + _HALF)
        r = t - n * _LN2_HI - n * _LN2_LO
        e = ((((e0 * r + e1) * r + e2) * r + e3) * r + e4) * r + e5
        e = e * r * r + r + _ONE
        half = numpy.int32(n) >> numpy.int32(1)
        rest = numpy.int32(n) - half
        return (e * as_float32((half + numpy.int32(127)) << numpy.int32(23))
                * as_float32((rest + numpy.int32(127)) << numpy.int32(23)))

    @inline
    def erf(z):
        """erf; a NaN passes through the clamp."""
        z = _FOUR if z > _FOUR else z
        z = -_FOUR if z < -_FOUR else z
        z2 = z * z
        p = (((((p0 * z2 + p1) * z2 + p2) * z2 + p3) * z2 + p4) * z2 + p5) * z2 + p6
        q = (((q0 * z2 + q1) * z2 + q2) * z2 + q3) * z2 + q4
        return z * p / q

    @jit
    def gelu(x, out):
        for i in range(x.size):
            v = x[i]
            y = _HALF * v * (_ONE + erf(v * _SQRT1_2))
            out[i] = y if v < _INF else v - v  # NaN at +inf, as PyTorch's float32 GELU

    @jit
    def gelu_grad(g, x, out):
        for i in range(x.size):
            v = x[i]
            d = _HALF * (_ONE + erf(v * _SQRT1_2)) + v * _INV_SQRT_2PI * exp_neg(-_HALF * v * v)
            # inf * exp(-inf) is NaN, as in PyTorch; reassociation could keep the inf
            out[i] = g[i] * (d if abs(v) < _INF else v - v)

    @inline
    def chunk_sum(a):
        s = _ZERO
        for j in range(a.size):
            s += a[j]
        return s

    @inline
    def chunk_squares(a, m):
        """The sum of ``(a - m)**2`` (each square in float32: one that overflows is inf,
        as in the NumPy path)."""
        s = _ZERO
        for j in range(a.size):
            d = a[j] - m
            s += d * d
        return s

    @jit
    def layer_norm(x, w, b, eps, out, mean, rstd):
        """The statistics add float32 sums of chunks of a row (vectorized: many lanes, each
        a few elements) in float64: a long row loses no more than a short one."""
        rows, n = x.shape
        for r in range(rows):
            row = x[r]
            s = 0.0
            for j in range(0, n, _CHUNK):
                s += chunk_sum(row[j:j + _CHUNK])
            m = numpy.float32(s / n)
            v = 0.0
            for j in range(0, n, _CHUNK):
                v += chunk_squares(row[j:j + _CHUNK], m)
            rs = _ONE / numpy.sqrt(numpy.float32(v / n) + eps)
            for j in range(n):
                y = (x[r, j] - m) * rs
                if w is not None:
                    y *= w[j]
                if b is not None:
                    y += b[j]
                out[r, j] = y
            mean[r] = m
            rstd[r] = rs

    @jit
    def layer_norm_dx(g, x, w, mean, rstd, out):
        rows, n = x.shape
        nf = numpy.float32(n)
        for r in range(rows):
            ds = _ZERO  # float32 sums, as PyTorch's backward kernel (vectorized: many lanes)
            db = _ZERO
            for j in range(n):
                gj = g[r, j] if w is None else g[r, j] * w[j]
                ds += gj * x[r, j]
                db += gj
            m, rs = mean[r], rstd[r]
            k = (db * m - ds) * rs * rs * rs / nf  # float32, as the rule (n would be float64)
            c = -k * m - db * rs / nf
            for j in range(n):
                gj = g[r, j] if w is None else g[r, j] * w[j]
                out[r, j] = rs * gj + k * x[r, j] + c

    @jit
    def layer_norm_dw(g, x, mean, rstd, out):
        rows, n = x.shape
        out[:] = _ZERO
        for r in range(rows):
            m, rs = mean[r], rstd[r]
            for j in range(n):
                out[j] += g[r, j] * ((x[r, j] - m) * rs)

    @jit
    def column_sum(g, out):
        out[:] = _ZERO
        for r in range(g.shape[0]):
            for j in range(g.shape[1]):
                out[j] += g[r, j]

    @jit
    def row_sum(a, r):
        """Row ``r``'s sum, vectorized (a function of its own: its flags stay its own)."""
        s = _ZERO
        for j in range(a.shape[1]):
            s += a[r, j]
        return s

    @inline
    def row_max(bits, r):
        """Row ``r``'s maximum, from the float32 values' bits (``bits``, an int32 view):
        with the magnitude bits of the negatives flipped they order as the floats do, and
        an integer maximum vectorizes where a float one (NaN-aware) stays scalar. A NaN is
        either the maximum or passed over: either way it makes the row NaN through exp."""
        m = _INT_MIN
        for j in range(bits.shape[1]):
            b = bits[r, j]
            k = b ^ ((b >> _31) & _MAGNITUDE)
            m = k if k > m else m
        return as_float32(m ^ ((m >> _31) & _MAGNITUDE))

    @jit
    def softmax(x, out):
        """A block of rows at a time, each step for all its rows before the next: a row
        is short, and its maximum, sum and reciprocal are each a chain of dependent
        operations that the next row's work can overlap only when it does not wait on it."""
        rows, n = x.shape
        bits = x.view(numpy.int32)
        per_row = numpy.empty(_BLOCK, numpy.float32)
        for r0 in range(0, rows, _BLOCK):
            r1 = min(r0 + _BLOCK, rows)
            for r in range(r0, r1):
                per_row[r - r0] = row_max(bits, r)
            for r in range(r0, r1):
                m = per_row[r - r0]
                s = _ZERO
                for j in range(n):
                    e = exp_neg(x[r, j] - m)
                    out[r, j] = e
                    s += e
                per_row[r - r0] = _ONE / s
            for r in range(r0, r1):
                s = per_row[r - r0]
                for j in range(n):
                    out[r, j] *= s

    @jit
    def softmax_grad(g, y, out):
        rows, n = y.shape
        for r in range(rows):
            s = _ZERO
            for j in range(n):
                s += g[r, j] * y[r, j]
            for j in range(n):
                out[r, j] = y[r, j] * (g[r, j] - s)

    @njit(fastmath={"contract", "nsz"}, error_model="numpy", cache=True, nogil=True)
    def log_softmax(x, out):
        """``(x - max) - log(sum)`` as written: reassociated into ``x - (max + log(sum))``
        it loses the log where the maximum is huge. So no 'reassoc' here; the sum of the
        exponentials is a function of its own that may reassociate."""
        rows, n = x.shape
        bits = x.view(numpy.int32)
        for r in range(rows):
            m = row_max(bits, r)
            for j in range(n):
                out[r, j] = exp_neg(x[r, j] - m)
            lse = numpy.log(row_sum(out, r))
            for j in range(n):
                out[r, j] = (x[r, j] - m) - lse

    @jit
    def log_softmax_grad(g, y, out):
        rows, n = y.shape
        for r in range(rows):
            s = row_sum(g, r)
            for j in range(n):
                out[r, j] = g[r, j] - exp_neg(y[r, j]) * s

    @njit(cache=True, nogil=True, error_model="numpy")
    def adam(p, g, m, v, decay, wd, w, one_minus_w, small_w, beta2, one_minus_beta2,
             bc2_sqrt, eps, neg_step_size):
        """No fast-math: each operation rounds as the NumPy chain's does, in its order."""
        for i in range(p.size):
            pi = p[i] * decay if decay != 1 else p[i]
            gi = pi * wd + g[i] if wd != 0 else g[i]
            diff = gi - m[i]
            mi = m[i] + diff * w if small_w else gi - diff * one_minus_w
            vi = v[i] * beta2 + gi * one_minus_beta2 * gi
            p[i] = pi + mi / (numpy.sqrt(vi) / bc2_sqrt + eps) * neg_step_size
            m[i] = mi
            v[i] = vi

    @jit
    def relu(x, out):
        for i in range(x.size):
            v = x[i]
            out[i] = _ZERO if v <= _ZERO else v  # a NaN passes

    @jit
    def relu_grad(g, y, out):
        for i in range(y.size):
            out[i] = _ZERO if y[i] <= _ZERO else g[i]

    @jit
    def outer(a, b, out):
        for k in range(a.shape[0]):
            for i in range(a.shape[1]):
                ai = a[k, i]
                for j in range(b.shape[1]):
                    out[k, i, j] = ai * b[k, j]

    @jit
    def add_scaled(x, y, alpha):
        for i in range(x.size):
            x[i] += alpha * y[i]

    exact = njit(cache=True, nogil=True, error_model="numpy")

    @exact
    def max_pool_2x2(x, out, idx):
        """Each 2x2 window's maximum and its flat index in the (H, W) plane: PyTorch's CPU
        rule, a running maximum over the window in row-major order that a later value
        takes when greater or NaN, computed as each row's winner by that rule and the
        second row's winning when greater or NaN (the same choice: a tie stays with the
        first row, and the last NaN wins either way). Branch-free selects: the winners
        of random data are unpredictable."""
        w = x.shape[2]
        for b in range(x.shape[0]):
            for oy in range(out.shape[1]):
                r0, r1, at = x[b, 2 * oy], x[b, 2 * oy + 1], 2 * oy * w
                for ox in range(out.shape[2]):
                    a, c, d, e = r0[2 * ox], r0[2 * ox + 1], r1[2 * ox], r1[2 * ox + 1]
                    right0 = (c > a) | (c != c)
                    right1 = (e > d) | (e != e)
                    top = c if right0 else a
                    bottom = e if right1 else d
                    down = (bottom > top) | (bottom != bottom)
                    out[b, oy, ox] = bottom if down else top
                    idx[b, oy, ox] = at + 2 * ox + ((w + 1 if right1 else w) if down
                                                    else (1 if right0 else 0))

    @exact
    def max_pool_2d(x, out, idx, kernel, stride, pad, dilation):
        """Any 2-D max pool over (planes, H, W): each window's running maximum in
        row-major order, a later value taking it when greater or NaN (PyTorch's CPU rule),
        from the window's first element inside the plane; a window wholly in padding is
        -inf with index -1 (the NumPy rule's). Each window's offsets inside the plane are
        found once per row and column (no bound test per element), and the selects are
        branch-free."""
        (kh, kw), (sh, sw), (ph, pw), (dh, dw) = kernel, stride, pad, dilation
        h, w = x.shape[1], x.shape[2]
        for b in range(x.shape[0]):
            plane = x[b]
            for oy in range(out.shape[1]):
                y0 = oy * sh - ph
                i0 = (-y0 + dh - 1) // dh if y0 < 0 else 0  # the kernel rows inside
                i1 = min(kh, (h - y0 + dh - 1) // dh)
                for ox in range(out.shape[2]):
                    x0 = ox * sw - pw
                    j0 = (-x0 + dw - 1) // dw if x0 < 0 else 0
                    j1 = min(kw, (w - x0 + dw - 1) // dw)
                    if i0 >= i1 or j0 >= j1:
                        out[b, oy, ox], idx[b, oy, ox] = -_INF, -1
                        continue
                    best = plane[y0 + i0 * dh, x0 + j0 * dw]
                    at = (y0 + i0 * dh) * w + x0 + j0 * dw
                    for i in range(i0, i1):
                        y = y0 + i * dh
                        for j in range(j0, j1):
                            c = x0 + j * dw
                            v = plane[y, c]
                            take = (v > best) | (v != v)
                            best = v if take else best
                            at = y * w + c if take else at
                    out[b, oy, ox], idx[b, oy, ox] = best, at

    @exact
    def index_add_rows(g, idx, out):
        """``out[b, idx[b, q]] += g[b, q]`` over each row ``b``, skipping negative indices
        (a max pool's windows wholly in padding)."""
        for b in range(g.shape[0]):
            for q in range(g.shape[1]):
                i = idx[b, q]
                if i >= 0:
                    out[b, i] += g[b, q]

    @exact
    def linspace(lo, hi, step, out):
        one = numpy.empty(1, out.dtype)  # (an index converted to the values' type by a store)
        n, half = out.size, out.size // 2
        for i in range(half):
            one[0] = i
            out[i] = fused(step, one[0], lo)
        for i in range(half, n):
            one[0] = n - 1 - i
            out[i] = fused(-step, one[0], hi)

    return {"adam": adam, "gelu": gelu, "relu": relu, "relu_grad": relu_grad, "outer": outer,
            "add_scaled": add_scaled, "gelu_grad": gelu_grad, "layer_norm": layer_norm,
            "layer_norm_dx": layer_norm_dx, "layer_norm_dw": layer_norm_dw,
            "column_sum": column_sum,
            "softmax": softmax, "softmax_grad": softmax_grad, "log_softmax": log_softmax,
            "log_softmax_grad": log_softmax_grad, "max_pool_2x2": max_pool_2x2,
            "max_pool_2d": max_pool_2d,
            "index_add_rows": index_add_rows, "linspace": linspace}


def _flat(x):
    return x.reshape(-1)


def _rows(x, n):
    """A C-contiguous array as rows of its last ``n`` elements (a view)."""
    return x.reshape(-1, n)


def _elementwise(name, *arrays):
    """Kernel ``name`` on ``arrays`` and a new output shaped as the last of them, all
    flat."""
    out = numpy.empty_like(arrays[-1])
    _kernels()[name](*(_flat(a) for a in arrays), _flat(out))
    return out


def gelu(x):
    """The exact (erf) GELU, ``x (1 + erf(x / sqrt 2)) / 2``, in one pass."""
    return _elementwise("gelu", x)


def gelu_grad(grad, x):
    """``grad * (Phi(x) + x phi(x))``, in one pass."""
    return _elementwise("gelu_grad", grad, x)


def layer_norm(x, n, eps, weight, bias):
    """Layer norm of each run of the last ``n`` elements of ``x``, and the rows' means
    and reciprocal deviations (flat): one read for each statistic, one write."""
    out = numpy.empty_like(x)
    rows = x.size // n
    mean, rstd = numpy.empty(rows, x.dtype), numpy.empty(rows, x.dtype)
    _kernels()["layer_norm"](_rows(x, n), weight if weight is None else _flat(weight),
                             bias if bias is None else _flat(bias), _f(eps),
                             _rows(out, n), mean, rstd)
    return out, mean, rstd


def layer_norm_dx(grad, x, weight, mean, rstd, n):
    """The input gradient of :func:`layer_norm` (PyTorch's form, as the rule's): both row
    sums in one pass, the result in another."""
    out = numpy.empty_like(x)
    _kernels()["layer_norm_dx"](_rows(grad, n), _rows(x, n),
                                weight if weight is None else _flat(weight), _flat(mean),
                                _flat(rstd), _rows(out, n))
    return out


def layer_norm_dw(grad, x, mean, rstd, n):
    """``sum over rows of grad * (x - mean) * rstd``: the weight's gradient, reduced."""
    out = numpy.empty(n, x.dtype)
    _kernels()["layer_norm_dw"](_rows(grad, n), _rows(x, n), _flat(mean), _flat(rstd), out)
    return out


def column_sum(grad, n):
    """The sum of the runs of the last ``n`` elements of ``grad`` (a bias's gradient)."""
    out = numpy.empty(n, grad.dtype)
    _kernels()["column_sum"](_rows(grad, n), out)
    return out


def _rowwise(name, *arrays):
    """Kernel ``name`` on the rows (last axis) of ``arrays`` and of a new output shaped
    as the last of them."""
    out = numpy.empty_like(arrays[-1])
    n = out.shape[-1]
    _kernels()[name](*(_rows(a, n) for a in arrays), _rows(out, n))
    return out


def softmax(x):
    """Softmax over the last axis: the maximum, the exponentials and their sum, the
    scaling, each row in cache."""
    return _rowwise("softmax", x)


def softmax_grad(grad, y):
    """``y * (grad - sum(grad * y))`` over the last axis."""
    return _rowwise("softmax_grad", grad, y)


def log_softmax(x):
    """Log-softmax over the last axis: the maximum, the sum of exponentials, the shift."""
    return _rowwise("log_softmax", x)


def log_softmax_grad(grad, y):
    """``grad - exp(y) * sum(grad)`` over the last axis."""
    return _rowwise("log_softmax_grad", grad, y)


def adam_step(p, g, m, v, *, decay, wd, weight, beta2, bc2_sqrt, eps, step_size):
    """One Adam update of ``p``, ``m``, ``v`` (in place) from gradient ``g``, all of one
    real float dtype and shape, in ``optim.adam``'s order of operations, so the result is
    its chain's bit for bit (the GPU's ``gpu_kernels.adam_step`` has the same contract).
    Arrays not C-contiguous are updated through contiguous copies."""
    t = p.dtype.type
    arrays = (p, g, m, v)
    flat = [a if a.flags.c_contiguous else numpy.ascontiguousarray(a) for a in arrays]
    _kernels()["adam"](*(_flat(a) for a in flat), t(decay), t(wd), t(weight), t(1 - weight),
                       weight < 0.5, t(beta2), t(1 - beta2), t(bc2_sqrt), t(eps), t(-step_size))
    for a, c in zip(arrays, flat, strict=True):
        if a is not c:
            a[...] = c


def relu(x):
    """``max(x, 0)``, a NaN kept, in one pass (NumPy's ``maximum`` runs at a third of
    memory speed: it checks every element for NaN)."""
    return _elementwise("relu", x)


def relu_grad(grad, y):
    """PyTorch's threshold_backward: ``grad`` where the result ``y`` is above 0 (or NaN),
    else 0, in one pass."""
    return _elementwise("relu_grad", grad, y)


def outer(a, b):
    """``a[..., :, None] * b[..., None, :]`` (outer products of the last axes, a batch of
    them over equal leading dims), written row by row at memory speed (NumPy's broadcast
    product is 4x slower, its K=1 GEMM 15x)."""
    m, n = a.shape[-1], b.shape[-1]
    out = numpy.empty(a.shape + (n,), a.dtype)
    if out.size:  # (an empty one has no rows to lay out: reshape(-1, 0) is ambiguous)
        _kernels()["outer"](a.reshape(-1, m), b.reshape(-1, n), out.reshape(-1, m, n))
    return out


def add_scaled(x, y, alpha):
    """``x += alpha * y`` (an in-place ``add_(y, alpha=...)``) in one pass, with no
    temporary for ``alpha * y``; both C-contiguous, of one shape. Returns ``x``."""
    _kernels()["add_scaled"](_flat(x), _flat(y), x.dtype.type(alpha))
    return x


def linspace(lo, hi, step, steps, dtype):
    """PyTorch's CPU linspace in float32 or float64: the first half of ``steps`` values
    ``step * i + lo``, the rest ``-step * k + hi`` counted down from the end, each one
    fused multiply-add (the index converted to ``dtype`` first), as its kernel is
    compiled."""
    out = numpy.empty(steps, dtype)
    t = out.dtype.type
    _kernels()["linspace"](t(lo), t(hi), t(step), out)
    return out


def max_pool_2d(x, kernel, stride, pads, dilation):
    """A max pool over the last two dims of ``x``, ``pads`` ((top, bottom), (left,
    right)) as the op's (a ceil mode's extra row and column at the end): (values, int64
    flat indices into each plane). 2x2 windows at stride 2 take the branch-free kernel."""
    h, w = x.shape[-2:]
    (pt, pb), (pl, pr) = pads
    oh, ow = ((n + p0 + p1 - d * (k - 1) - 1) // s + 1 for n, (p0, p1), k, s, d in
              zip((h, w), pads, kernel, stride, dilation, strict=True))
    shape = x.shape[:-2] + (oh, ow)
    out, idx = numpy.empty(shape, x.dtype), numpy.empty(shape, numpy.int64)
    planes = (x.reshape(-1, h, w), out.reshape((-1, oh, ow)), idx.reshape((-1, oh, ow)))
    if kernel == stride == (2, 2) and dilation == (1, 1) and not (pt or pb or pl or pr):
        _kernels()["max_pool_2x2"](*planes)
    else:
        _kernels()["max_pool_2d"](*planes, kernel, stride, (pt, pl), dilation)
    return out, idx


def max_pool_grad(grad, indices, self_shape, plane):
    """A max pool's input gradient: each gradient added at its flat index in its plane of
    ``plane`` elements (a negative index gives nothing). ``grad`` is non-empty."""
    out = numpy.zeros(self_shape, grad.dtype)
    rows = out.size // plane
    _kernels()["index_add_rows"](grad.reshape(rows, -1), indices.reshape(rows, -1),
                                 _rows(out, plane))
    return out
