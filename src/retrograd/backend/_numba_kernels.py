"""The numba kernels of :mod:`.cpu_kernels`, defined at module level: numba's disk cache
keys a function defined inside another by the pickled contents of its closure, and the
kernels it calls pickle differently in every process, so such kernels compiled again in
each one (about a second) and added files to the cache each time (52 MB of them here).

``erf`` is the rational approximation of Eigen and XLA (exact in float32 outside
[-4, 4]); ``exp`` is Cephes' polynomial after Cody-Waite reduction, with the power of
two built from its bits. Both are written out because numba's ``math.erf`` and
``math.exp`` are calls that stop vectorization. No fast-math flag assumes away NaN or
infinity: a NaN propagates, and ``exp(-inf)`` is 0, as masked attention needs.
"""

import numpy
from llvmlite import ir
from numba import carray, cfunc, njit, types, vectorize
from numba.extending import intrinsic

# Reassociation (vectorized sums), contraction into FMAs, no signed zeros. Not 'nnan' or
# 'ninf' (LLVM would drop the NaN and infinity handling), nor 'afn'/'arcp' (square roots
# and divisions by Newton steps from estimates: 1/sqrt(inf) would be NaN, not 0).
_FLAGS = {"reassoc", "contract", "nsz"}

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
_NAN, _INF_BITS = _f(numpy.nan), numpy.int32(0x7F800000)
_SQRT1_2, _INV_SQRT_2PI = _f(0.7071067811865476), _f(0.3989422804014327)
_INT_MIN, _31, _MAGNITUDE = numpy.int32(-2**31), numpy.int32(31), numpy.int32(2**31 - 1)
_BLOCK = 16  # rows a row-wise kernel takes a step at a time
_CHUNK = 256  # elements a float32 partial sum adds
_VECTOR = 32  # bytes of LLVM's vectors here (AVX2's, and AVX-512's at its preferred width)

jit = njit(fastmath=_FLAGS, error_model="numpy", cache=True, nogil=True)
inline = njit(fastmath=_FLAGS, error_model="numpy", inline="always")
exact_inline = njit(error_model="numpy", inline="always")  # (no fast-math: exact as written)
# (fastmath=False set, not left out: numba compiles a function that leaves it out with its
# caller's, so a kernel called from a job entry, whose flags are _FLAGS, got them there)
exact = njit(fastmath=False, cache=True, nogil=True, error_model="numpy")
# fast-math but for 'reassoc': operations (sums) in the order written
in_order = njit(fastmath={"contract", "nsz"}, error_model="numpy", cache=True, nogil=True)
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


@intrinsic
def float32_at(typingctx, address):
    """A float32 pointer from an integer address (a job's array)."""
    def codegen(context, builder, signature, args):
        return builder.inttoptr(args[0], ir.PointerType(ir.FloatType()))
    return types.CPointer(types.float32)(types.int64), codegen


@intrinsic
def float64_at(typingctx, address):
    """A float64 pointer from an integer address (a job's array)."""
    def codegen(context, builder, signature, args):
        return builder.inttoptr(args[0], ir.PointerType(ir.DoubleType()))
    return types.CPointer(types.float64)(types.int64), codegen


@intrinsic
def int64_at(typingctx, address):
    """An int64 pointer from an integer address."""
    def codegen(context, builder, signature, args):
        return builder.inttoptr(args[0], ir.PointerType(ir.IntType(64)))
    return types.CPointer(types.int64)(types.int64), codegen

_I32X8 = ir.VectorType(ir.IntType(32), 8)
# shufflevector masks of an 8x8 transpose's three steps: pairs of rows interleaved, then
# their pairs, then their 128-bit halves
_PAIRS = (ir.Constant(_I32X8, [0, 8, 1, 9, 4, 12, 5, 13]),
          ir.Constant(_I32X8, [2, 10, 3, 11, 6, 14, 7, 15]))
_QUADS = (ir.Constant(_I32X8, [0, 1, 8, 9, 4, 5, 12, 13]),
          ir.Constant(_I32X8, [2, 3, 10, 11, 6, 7, 14, 15]))
_HALVES = (ir.Constant(_I32X8, [0, 1, 2, 3, 8, 9, 10, 11]),
           ir.Constant(_I32X8, [4, 5, 6, 7, 12, 13, 14, 15]))


@intrinsic
def transpose8(typingctx, dst, d, dstep, src, s, sstep):
    """``dst[d + m * dstep + k] = src[s + k * sstep + m]`` for m, k in 0..7 (float32
    arrays): eight rows of eight loaded as vectors, transposed by shuffles, stored as
    eight vectors. LLVM's vectorizer cannot find this in the element loop."""
    def codegen(context, builder, signature, args):
        f8 = ir.VectorType(ir.FloatType(), 8).as_pointer()

        def row(array, start, step, k):
            a = context.make_array(signature.args[array])(context, builder, args[array])
            at = builder.add(start, builder.mul(step, ir.Constant(ir.IntType(64), k)))
            return builder.bitcast(builder.gep(a.data, [at]), f8)
        shuffle = builder.shuffle_vector
        r = [builder.load(row(3, args[4], args[5], k), align=4) for k in range(8)]
        t = [shuffle(r[k], r[k + 1], m) for k in range(0, 8, 2) for m in _PAIRS]
        u = [shuffle(t[a + h], t[a + h + 2], m)
             for a in (0, 4) for h in (0, 1) for m in _QUADS]
        for k in range(4):
            lo, hi = (shuffle(u[k], u[k + 4], m) for m in _HALVES)
            builder.store(lo, row(0, args[1], args[2], k), align=4)
            builder.store(hi, row(0, args[1], args[2], k + 4), align=4)
        return context.get_dummy_value()
    return types.void(dst, d, dstep, src, s, sstep), codegen


# A job (blas_threads.run_jobs) is a row of int64: the addresses of its part of each
# array, that part's length along the first axis, then the kernel's other sizes.
job = cfunc(types.void(types.CPointer(types.int64)), fastmath=_FLAGS,
            error_model="numpy", cache=True, nogil=True)


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


@job
def gelu_job(p):
    j = carray(p, 3)
    gelu(carray(float32_at(j[0]), j[2]), carray(float32_at(j[1]), j[2]))


@job
def gelu_grad_job(p):
    j = carray(p, 4)
    n = j[3]
    gelu_grad(carray(float32_at(j[0]), n), carray(float32_at(j[1]), n),
              carray(float32_at(j[2]), n))


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
def layer_norm(x, out, mean, rstd, w, b, eps):
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
def weighted_row_sums(g, x, w, r):
    """Row ``r``'s sums of ``g w x`` and of ``g w`` (``w`` None: 1), float32 as PyTorch's
    backward kernel's (vectorized: many lanes). A function of its own, as :func:`row_sum`:
    written inside :func:`layer_norm_dx`, the job entry loaded from numba's cache rounded
    8% of values apart from the kernel called from Python (by the call's size)."""
    ds = _ZERO
    db = _ZERO
    for j in range(x.shape[1]):
        gj = g[r, j] if w is None else g[r, j] * w[j]
        ds += gj * x[r, j]
        db += gj
    return ds, db


@exact
def layer_norm_dx_coefficients(ds, db, m, rs, nf):
    """A row's ``k`` and ``c`` (its input gradient is ``rs g w + k x + c``), float32 as the
    rule's, each operation rounded as written: ``db * m - ds`` fused kept the product's
    rounding error, so a row of one element had a gradient, where PyTorch's is 0."""
    k = (db * m - ds) * rs * rs * rs / nf
    return k, -k * m - db * rs / nf


@in_order
def layer_norm_dx(g, x, mean, rstd, out, w):
    """No 'reassoc' (the row sums have their own): with it LLVM may add ``c`` to ``rs * gj``
    first and fuse the two, and a row of one element (``k`` 0) keeps that product's
    rounding error, where PyTorch's gradient is 0."""
    rows, n = x.shape
    nf = numpy.float32(n)  # (n would be float64)
    for r in range(rows):
        ds, db = weighted_row_sums(g, x, w, r)
        rs = rstd[r]
        k, c = layer_norm_dx_coefficients(ds, db, mean[r], rs, nf)
        for j in range(n):
            gj = g[r, j] if w is None else g[r, j] * w[j]
            out[r, j] = rs * gj + k * x[r, j] + c


@inline
def rows_and_stats(j, rows, n):
    """A layer norm job's first two (rows, n) arrays and its rows' means and rstds."""
    return (carray(float32_at(j[0]), (rows, n)), carray(float32_at(j[1]), (rows, n)),
            carray(float32_at(j[2]), rows), carray(float32_at(j[3]), rows))


@job
def layer_norm_job(p):
    """[x, out, mean, rstd, rows, n, weight (0: none), bias (0: none), eps's bits]"""
    j = carray(p, 9)
    n = j[5]
    x, out, mean, rstd = rows_and_stats(j, j[4], n)
    w, b = carray(float32_at(j[6]), n), carray(float32_at(j[7]), n)
    eps = as_float32(numpy.int32(j[8]))
    if j[6] and j[7]:
        layer_norm(x, out, mean, rstd, w, b, eps)
    elif j[6]:
        layer_norm(x, out, mean, rstd, w, None, eps)
    elif j[7]:
        layer_norm(x, out, mean, rstd, None, b, eps)
    else:
        layer_norm(x, out, mean, rstd, None, None, eps)


@job
def layer_norm_dx_job(p):
    """[g, x, mean, rstd, out, rows, n, weight (0: none)]"""
    j = carray(p, 8)
    rows, n = j[5], j[6]
    g, x, mean, rstd = rows_and_stats(j, rows, n)
    out = carray(float32_at(j[4]), (rows, n))
    if j[7]:
        layer_norm_dx(g, x, mean, rstd, out, carray(float32_at(j[7]), n))
    else:
        layer_norm_dx(g, x, mean, rstd, out, None)


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


@inline
def chunk_centered_dot(a, g, m):
    """The sum of ``(a - m) * g`` (each product in float32, as the NumPy path's)."""
    s = _ZERO
    for j in range(a.size):
        s += (a[j] - m) * g[j]
    return s


# BatchNorm1d's (N, C): a channel's values lie a row apart, so the per-channel kernels below
# would read each cache line again for every channel on it. Such a batch (S = 1) goes to
# these instead, which sum as those do (float32 sums of chunks of rows, added in float64
# in order; each deviation, product and square float32, as the NumPy rule's): each
# chunk's float32 column sums fill a row of ``parts``, added up once all are done, so the
# result is the same however the work is cut. A large batch is cut in bands of rows
# (whole chunks for the sums), each pass over all of them before the next: a thread that
# took a band of columns of every row read memory at a third of the speed, its prefetcher
# fetching the other threads' columns too. A batch of fewer chunks than threads is cut in
# bands of columns (whole cache lines), each job making all of its columns' passes at
# once, while they are in cache. (Views of the columns are indexed from 0: an index from
# c0 might be negative to numba, and its wraparound check per element stops
# vectorization.)

@jit
def column_parts(a, m, g, parts, gparts, r0, r1, c0, c1):
    """For each chunk of rows in ``r0:r1`` (``r0`` a multiple of the chunk) of columns
    ``c0:c1`` of ``a`` (N, C), into its row of ``parts``: the float32 column sums of ``a``
    (``m`` None), of ``(a - m)**2`` (``g`` None), or of ``(a - m) * g``, with those of
    ``g`` into ``gparts``."""
    k = c1 - c0
    for i0 in range(r0, r1, _CHUNK):
        rows = range(i0, min(i0 + _CHUNK, r1))
        part = parts[i0 // _CHUNK, c0:c1]
        part[:] = _ZERO
        if m is None:
            for i in rows:
                ai = a[i, c0:c1]
                for c in range(k):
                    part[c] += ai[c]
        elif g is None:
            mc = m[c0:c1]
            for i in rows:
                ai = a[i, c0:c1]
                for c in range(k):
                    d = ai[c] - mc[c]
                    part[c] += d * d
        else:
            mc = m[c0:c1]
            gpart = gparts[i0 // _CHUNK, c0:c1]
            gpart[:] = _ZERO
            for i in rows:
                ai, gi = a[i, c0:c1], g[i, c0:c1]
                for c in range(k):
                    part[c] += (ai[c] - mc[c]) * gi[c]
                    gpart[c] += gi[c]


@inline
def column_totals(parts, c0, c1):
    """The sums of columns ``c0:c1`` of ``parts`` (a row per chunk), in order, in float64."""
    t = numpy.zeros(c1 - c0)
    for r in range(parts.shape[0]):
        pr = parts[r, c0:c1]
        for c in range(c1 - c0):
            t[c] += pr[c]
    return t


@jit
def column_means(parts, n, mean, c0, c1):
    """Columns ``c0:c1``'s means from their chunks' sums."""
    t = column_totals(parts, c0, c1)
    for c in range(c1 - c0):
        mean[c0 + c] = numpy.float32(t[c] / n)


@jit
def column_invstd(parts, n, eps, invstd, c0, c1):
    """Columns ``c0:c1``'s ``1 / sqrt(variance + eps)`` from their chunks' squared
    deviations."""
    t = column_totals(parts, c0, c1)
    for c in range(c1 - c0):
        invstd[c0 + c] = _ONE / numpy.sqrt(numpy.float32(t[c] / n) + eps)


@jit
def batch_norm_dx_factors(parts, gparts, n, invstd, mg, f, c0, c1):
    """The input gradient's mean gradient and deviation factor of columns ``c0:c1``, from
    their chunks' sums of ``(x - mean) * g`` and of ``g``."""
    sxg, sg = column_totals(parts, c0, c1), column_totals(gparts, c0, c1)
    for c in range(c1 - c0):
        mg[c0 + c] = numpy.float32(sg[c] / n)
        f[c0 + c] = numpy.float32(sxg[c] / n) * invstd[c0 + c] * invstd[c0 + c]


@jit
def column_sums_scaled(parts, scale, out, c0, c1):
    """Columns ``c0:c1``'s sums from their chunks' sums, times ``scale``'s (None: 1)."""
    t = column_totals(parts, c0, c1)
    for c in range(c1 - c0):
        if scale is None:
            out[c0 + c] = numpy.float32(t[c])
        else:
            out[c0 + c] = numpy.float32(t[c]) * scale[c0 + c]


@jit
def batch_norm_band(x, w, b, out, mean, invstd, r0, r1, c0, c1):
    """Training batch norm's values on rows ``r0:r1``, columns ``c0:c1`` of ``x`` (N, C)."""
    m, rs, wc, bc = mean[c0:c1], invstd[c0:c1], w[c0:c1], b[c0:c1]
    for i in range(r0, r1):
        xi, oi = x[i, c0:c1], out[i, c0:c1]
        for c in range(c1 - c0):
            oi[c] = (xi[c] - m[c]) * rs[c] * wc[c] + bc[c]


@jit
def channel_affine_band(x, alpha, beta, out, r0, r1):
    """``x * alpha + beta`` on rows ``r0:r1`` of (N, C)."""
    for i in range(r0, r1):
        xi, oi = x[i], out[i]
        for c in range(x.shape[1]):
            oi[c] = xi[c] * alpha[c] + beta[c]


@jit
def batch_norm_dx_band(g, x, w, mean, invstd, mg, f, out, r0, r1, c0, c1):
    """:func:`batch_norm_backward`'s input gradient on rows ``r0:r1``, columns ``c0:c1`` of
    (N, C), from each column's mean gradient ``mg`` and factor ``f`` (None: evaluation,
    ``g * invstd * w``)."""
    m, rs, wc = mean[c0:c1], invstd[c0:c1], w[c0:c1]
    if f is None:
        for i in range(r0, r1):
            gi, oi = g[i, c0:c1], out[i, c0:c1]
            for c in range(c1 - c0):
                oi[c] = gi[c] * rs[c] * wc[c]
        return
    mgc, fc = mg[c0:c1], f[c0:c1]
    for i in range(r0, r1):
        gi, xi, oi = g[i, c0:c1], x[i, c0:c1], out[i, c0:c1]
        for c in range(c1 - c0):
            oi[c] = (gi[c] - mgc[c] - (xi[c] - m[c]) * fc[c]) * rs[c] * wc[c]


@jit
def batch_norm(x, w, b, out, mean, invstd, eps, c0, c1):
    """Training batch norm of channels ``c0:c1`` of ``x`` (N, C, S), one channel at a
    time: its statistics (float32 sums of chunks of each run, added in float64, as
    layer norm's), then its values, in the NumPy rule's order, read again while the
    channel is in cache."""
    n, _, s = x.shape
    count = n * s
    for c in range(c0, c1):
        t = 0.0
        for i in range(n):
            for j in range(0, s, _CHUNK):
                t += chunk_sum(x[i, c, j:j + _CHUNK])
        m = numpy.float32(t / count)
        v = 0.0
        for i in range(n):
            for j in range(0, s, _CHUNK):
                v += chunk_squares(x[i, c, j:j + _CHUNK], m)
        rs = _ONE / numpy.sqrt(numpy.float32(v / count) + eps)
        wc, bc = w[c], b[c]
        for i in range(n):
            for j in range(s):
                out[i, c, j] = (x[i, c, j] - m) * rs * wc + bc
        mean[c] = m
        invstd[c] = rs


@jit
def channel_affine(x, alpha, beta, out, c0, c1):
    """``x * alpha + beta`` with a factor and a term per channel (``c0:c1`` of (N, C, S)):
    evaluation's batch norm, folded."""
    n, _, s = x.shape
    for i in range(n):
        for c in range(c0, c1):
            a, b = alpha[c], beta[c]
            for j in range(s):
                out[i, c, j] = x[i, c, j] * a + b


@jit
def batch_norm_backward(g, x, w, mean, invstd, out, dw, db, training, c0, c1):
    """The gradients of channels ``c0:c1``: the channel's sums of ``g`` and ``(x - mean) *
    g`` (float32 chunks added in float64), taken when asked for (``dw`` and ``db`` given)
    or in training, the sum of products times invstd into ``dw`` (PyTorch's order), the
    other into ``db``; then into ``out`` (None: not asked for) the input's, the weight
    multiplying last (PyTorch's order, the NumPy rule's)."""
    n, _, s = x.shape
    count = n * s
    for c in range(c0, c1):
        m, rs = mean[c], invstd[c]
        sg = 0.0
        sxg = 0.0
        if dw is not None or training:
            for i in range(n):
                for j in range(0, s, _CHUNK):
                    sg += chunk_sum(g[i, c, j:j + _CHUNK])
                    sxg += chunk_centered_dot(x[i, c, j:j + _CHUNK], g[i, c, j:j + _CHUNK], m)
            if dw is not None:
                dw[c] = numpy.float32(sxg) * rs
                db[c] = numpy.float32(sg)
        if out is None:
            continue
        wc = w[c]
        if not training:
            for i in range(n):
                for j in range(s):
                    out[i, c, j] = g[i, c, j] * rs * wc
            continue
        mg = numpy.float32(sg / count)
        k = numpy.float32(sxg / count) * rs * rs
        for i in range(n):
            for j in range(s):
                out[i, c, j] = (g[i, c, j] - mg - (x[i, c, j] - m) * k) * rs * wc


@job
def batch_norm_job(p):
    """[x, w, b, out, mean, invstd, N, C, S, c0, c1, eps's bits]"""
    j = carray(p, 12)
    shape, c = (j[6], j[7], j[8]), j[7]
    batch_norm(carray(float32_at(j[0]), shape), carray(float32_at(j[1]), c),
               carray(float32_at(j[2]), c), carray(float32_at(j[3]), shape),
               carray(float32_at(j[4]), c), carray(float32_at(j[5]), c),
               as_float32(numpy.int32(j[11])), j[9], j[10])


@job
def channel_affine_job(p):
    """[x, alpha, beta, out, N, C, S, c0, c1]"""
    j = carray(p, 9)
    shape, c = (j[4], j[5], j[6]), j[5]
    channel_affine(carray(float32_at(j[0]), shape), carray(float32_at(j[1]), c),
                   carray(float32_at(j[2]), c), carray(float32_at(j[3]), shape), j[7], j[8])


@job
def batch_norm_backward_job(p):
    """[g, x, w, mean, invstd, out (0: none), dw, db (0: none), N, C, S, c0, c1, training]"""
    j = carray(p, 14)
    shape, c = (j[8], j[9], j[10]), j[9]
    g, x = carray(float32_at(j[0]), shape), carray(float32_at(j[1]), shape)
    w, mean, invstd = (carray(float32_at(j[2]), c), carray(float32_at(j[3]), c),
                       carray(float32_at(j[4]), c))
    training, c0, c1 = j[13] != 0, j[11], j[12]
    if j[5] == 0:
        batch_norm_backward(g, x, w, mean, invstd, None, carray(float32_at(j[6]), c),
                            carray(float32_at(j[7]), c), training, c0, c1)
    elif j[6] == 0:
        batch_norm_backward(g, x, w, mean, invstd, carray(float32_at(j[5]), shape), None,
                            None, training, c0, c1)
    else:
        batch_norm_backward(g, x, w, mean, invstd, carray(float32_at(j[5]), shape),
                            carray(float32_at(j[6]), c), carray(float32_at(j[7]), c),
                            training, c0, c1)


@job
def column_parts_job(p):
    """[a, m (0: none), g (0: none), parts, gparts (0: none), N, C, chunks, c0, c1, r0, r1]"""
    j = carray(p, 12)
    shape, parts_shape = (j[5], j[6]), (j[7], j[6])
    a, parts = carray(float32_at(j[0]), shape), carray(float32_at(j[3]), parts_shape)
    r0, r1, c0, c1 = j[10], j[11], j[8], j[9]
    if j[1] == 0:
        column_parts(a, None, None, parts, None, r0, r1, c0, c1)
    elif j[2] == 0:
        column_parts(a, carray(float32_at(j[1]), j[6]), None, parts, None, r0, r1, c0, c1)
    else:
        column_parts(a, carray(float32_at(j[1]), j[6]), carray(float32_at(j[2]), shape),
                     parts, carray(float32_at(j[4]), parts_shape), r0, r1, c0, c1)


@job
def batch_norm_band_job(p):
    """[x, w, b, out, mean, invstd, N, C, r0, r1]"""
    j = carray(p, 10)
    shape, c = (j[6], j[7]), j[7]
    batch_norm_band(carray(float32_at(j[0]), shape), carray(float32_at(j[1]), c),
                    carray(float32_at(j[2]), c), carray(float32_at(j[3]), shape),
                    carray(float32_at(j[4]), c), carray(float32_at(j[5]), c), j[8], j[9], 0, c)


@job
def channel_affine_band_job(p):
    """[x, alpha, beta, out, N, C, r0, r1]"""
    j = carray(p, 8)
    shape, c = (j[4], j[5]), j[5]
    channel_affine_band(carray(float32_at(j[0]), shape), carray(float32_at(j[1]), c),
                        carray(float32_at(j[2]), c), carray(float32_at(j[3]), shape),
                        j[6], j[7])


@job
def batch_norm_dx_band_job(p):
    """[g, x, w, mean, invstd, mg, f (0: evaluation), out, N, C, r0, r1]"""
    j = carray(p, 12)
    shape, c = (j[8], j[9]), j[9]
    g, x = carray(float32_at(j[0]), shape), carray(float32_at(j[1]), shape)
    w, mean, invstd = (carray(float32_at(j[2]), c), carray(float32_at(j[3]), c),
                       carray(float32_at(j[4]), c))
    out = carray(float32_at(j[7]), shape)
    if j[6] == 0:
        batch_norm_dx_band(g, x, w, mean, invstd, None, None, out, j[10], j[11], 0, c)
    else:
        batch_norm_dx_band(g, x, w, mean, invstd, carray(float32_at(j[5]), c),
                           carray(float32_at(j[6]), c), out, j[10], j[11], 0, c)


@job
def batch_norm_columns_job(p):
    """[x, w, b, out, mean, invstd, parts, N, C, chunks, eps's bits, c0, c1]: all of
    training batch norm's passes over columns c0:c1."""
    j = carray(p, 13)
    n, c, c0, c1 = j[7], j[8], j[11], j[12]
    x, out = carray(float32_at(j[0]), (n, c)), carray(float32_at(j[3]), (n, c))
    w, b, mean, invstd = (carray(float32_at(j[1]), c), carray(float32_at(j[2]), c),
                          carray(float32_at(j[4]), c), carray(float32_at(j[5]), c))
    parts = carray(float32_at(j[6]), (j[9], c))
    column_parts(x, None, None, parts, None, 0, n, c0, c1)
    column_means(parts, n, mean, c0, c1)
    column_parts(x, mean, None, parts, None, 0, n, c0, c1)
    column_invstd(parts, n, as_float32(numpy.int32(j[10])), invstd, c0, c1)
    batch_norm_band(x, w, b, out, mean, invstd, 0, n, c0, c1)


@job
def batch_norm_dx_columns_job(p):
    """[g, x, w, mean, invstd, mg, f, out, parts, gparts, dw, db (0: none), N, C, chunks,
    c0, c1]: training batch norm's input gradient over columns c0:c1, both passes, and
    from the first the weight's and bias's into dw and db."""
    j = carray(p, 17)
    n, c, c0, c1 = j[12], j[13], j[15], j[16]
    g, x, out = (carray(float32_at(j[0]), (n, c)), carray(float32_at(j[1]), (n, c)),
                 carray(float32_at(j[7]), (n, c)))
    w, mean, invstd = (carray(float32_at(j[2]), c), carray(float32_at(j[3]), c),
                       carray(float32_at(j[4]), c))
    mg, f = carray(float32_at(j[5]), c), carray(float32_at(j[6]), c)
    parts, gparts = carray(float32_at(j[8]), (j[14], c)), carray(float32_at(j[9]), (j[14], c))
    column_parts(x, mean, g, parts, gparts, 0, n, c0, c1)
    batch_norm_dx_factors(parts, gparts, n, invstd, mg, f, c0, c1)
    if j[10] != 0:
        column_sums_scaled(parts, invstd, carray(float32_at(j[10]), c), c0, c1)
        column_sums_scaled(gparts, None, carray(float32_at(j[11]), c), c0, c1)
    batch_norm_dx_band(g, x, w, mean, invstd, mg, f, out, 0, n, c0, c1)


@job
def column_sums_columns_job(p):
    """[a, m (0: none), g (0: none), parts, gparts (0: none), scale (0: none), out, N, C,
    chunks, c0, c1]: the sums of columns c0:c1 of ``a`` (or of ``(a - m) * g``) times
    ``scale``'s."""
    j = carray(p, 12)
    n, c, c0, c1 = j[7], j[8], j[10], j[11]
    a, parts, out = (carray(float32_at(j[0]), (n, c)), carray(float32_at(j[3]), (j[9], c)),
                     carray(float32_at(j[6]), c))
    if j[1] == 0:
        column_parts(a, None, None, parts, None, 0, n, c0, c1)
    else:
        column_parts(a, carray(float32_at(j[1]), c), carray(float32_at(j[2]), (n, c)), parts,
                     carray(float32_at(j[4]), (j[9], c)), 0, n, c0, c1)
    if j[5] == 0:
        column_sums_scaled(parts, None, out, c0, c1)
    else:
        column_sums_scaled(parts, carray(float32_at(j[5]), c), out, c0, c1)


@jit
def row_sum(a, r):
    """Row ``r``'s sum, vectorized (a function of its own: its flags stay its own)."""
    s = _ZERO
    for j in range(a.shape[1]):
        s += a[r, j]
    return s


@jit
def wide_row_sum(x, r):
    """Row ``r``'s sum, added in float64 (vectorized: many lanes) and rounded once: more
    accurate than NumPy's pairwise float32 sum, and no partial sum overflows (a row of
    -inf and two 3e38 is -inf, as PyTorch's, not NaN). A function of its own, as
    :func:`row_sum`."""
    row = x[r]
    s = 0.0
    for j in range(row.size):
        s += row[j]
    return numpy.float32(s)


@jit
def chunked_exp_sum(x, r, m):
    """Row ``r``'s sum of ``exp(x - m)`` (``m`` its maximum, so each term is at most 1):
    float32 sums of chunks (vectorized) added in float64, as :func:`layer_norm`'s."""
    row = x[r]
    s = 0.0
    for j0 in range(0, row.size, _CHUNK):
        c = _ZERO
        for j in range(j0, min(j0 + _CHUNK, row.size)):
            c += exp_neg(row[j] - m)
        s += c
    return numpy.float32(s)


@inline
def key(b):
    """A float32's bits (int32) flipped so that integers order as the floats do."""
    return b ^ ((b >> _31) & _MAGNITUDE)


@jit
def row_extremum(bits, r, largest):
    """Row ``r``'s maximum (``largest``) or minimum, NaN if it holds one, from the
    values' bits (``bits``, an int32 view) as :func:`row_max`'s, but with the negatives'
    keys one up so that -0 ties with 0: a zero extremum is the row's first zero, as
    PyTorch's. A NaN is found as the largest magnitude. (Integer extrema vectorize where
    NumPy's NaN-aware one is scalar.)"""
    m = _INT_MIN if largest else _MAGNITUDE
    worst = numpy.int32(0)
    for j in range(bits.shape[1]):
        b = bits[r, j]
        k = key(b) - (b >> _31)
        m = (k if k > m else m) if largest else (k if k < m else m)
        a = b & _MAGNITUDE
        worst = a if a > worst else worst
    if worst > _INF_BITS:
        return _NAN
    if m == 0:
        for j in range(bits.shape[1]):
            if bits[r, j] & _MAGNITUDE == 0:
                return as_float32(bits[r, j])
    return as_float32(key(m - 1) if m < 0 else m)


@jit
def row_reduce(x, out, kind):
    """Of each row of ``x`` into ``out``: its sum (``kind`` 0), maximum (1), minimum (2)
    or logsumexp (3: PyTorch's, shifted by the maximum; +inf where it is, -inf for a
    row of -inf alone, NaN where a NaN is)."""
    bits = x.view(numpy.int32)
    for r in range(x.shape[0]):
        if kind == 0:
            out[r] = wide_row_sum(x, r)
        elif kind < 3:
            out[r] = row_extremum(bits, r, kind == 1)
        else:
            m = row_extremum(bits, r, True)
            if m != m or m == _INF or m == -_INF:
                out[r] = m
            else:
                out[r] = numpy.log(chunked_exp_sum(x, r, m)) + m


@job
def row_reduce_job(p):
    """[x, out, rows, n, kind]"""
    j = carray(p, 5)
    row_reduce(carray(float32_at(j[0]), (j[2], j[3])), carray(float32_at(j[1]), j[2]), j[4])


@jit
def exp_row_sum(x, out, r, m):
    """Into row ``r`` of ``out``: ``exp(x - m)`` of row ``r`` of ``x``; returns their sum.
    A function of its own (as :func:`row_sum`): written inside :func:`softmax`, the job
    entry loaded from numba's cache summed 15-18% of rows apart from the kernel called
    from Python, so a row's last bit depended on how many rows its call had."""
    s = _ZERO
    for j in range(x.shape[1]):
        e = exp_neg(x[r, j] - m)
        out[r, j] = e
        s += e
    return s


@inline
def only_infinite(x, r):
    """Whether row ``r`` of ``x``, whose maximum is -inf, holds no NaN (which
    :func:`row_max` may pass over): so it is all -inf."""
    for j in range(x.shape[1]):
        if x[r, j] != x[r, j]:
            return False
    return True


@inline
def row_max(bits, r):
    """Row ``r``'s maximum, from the float32 values' bits (``bits``, an int32 view):
    with the magnitude bits of the negatives flipped they order as the floats do, and
    an integer maximum vectorizes where a float one (NaN-aware) stays scalar. A NaN is
    either the maximum or passed over: either way it makes the row NaN through exp."""
    m = _INT_MIN
    for j in range(bits.shape[1]):
        k = key(bits[r, j])
        m = k if k > m else m
    return as_float32(key(m))


@jit
def softmax(x, out, safe):
    """A block of rows at a time, each step for all its rows before the next: a row
    is short, and its maximum, sum and reciprocal are each a chain of dependent
    operations that the next row's work can overlap only when it does not wait on it.
    With ``safe``, a row of -inf alone (a query whose keys are all masked out) gives
    zeros where softmax gives NaN: PyTorch's ``_safe_softmax``."""
    rows, n = x.shape
    bits = x.view(numpy.int32)
    per_row = numpy.empty(_BLOCK, numpy.float32)
    for r0 in range(0, rows, _BLOCK):
        r1 = min(r0 + _BLOCK, rows)
        for r in range(r0, r1):
            per_row[r - r0] = row_max(bits, r)
        for r in range(r0, r1):
            m = per_row[r - r0]
            if safe and m == -_INF and only_infinite(x, r):
                out[r] = _ZERO
                per_row[r - r0] = _ZERO
            else:
                per_row[r - r0] = _ONE / exp_row_sum(x, out, r, m)
        for r in range(r0, r1):
            s = per_row[r - r0]
            for j in range(n):
                out[r, j] *= s


@jit
def causal_softmax(x, out):
    """Row i of each (L, S) matrix over its keys 0 to i (PyTorch's ``is_causal``), zeros
    after them: :func:`softmax`'s row functions on that prefix, so a row's bits are
    softmax's of the prefix; a prefix of -inf alone gives zeros, as the safe softmax. The
    later keys are NaN where the prefix's sum is (a NaN or +inf in it), as a row with
    -inf in their place is."""
    count, queries, keys = x.shape
    for b in range(count):
        for i in range(queries):
            c = min(i + 1, keys)
            xs, os = x[b, i, :c].reshape((1, c)), out[b, i, :c].reshape((1, c))
            m = row_max(xs.view(numpy.int32), 0)
            if m == -_INF and only_infinite(xs, 0):
                s = _ZERO
                os[0] = _ZERO
            else:
                s = _ONE / exp_row_sum(xs, os, 0, m)
                for j in range(c):
                    os[0, j] *= s
            out[b, i, c:] = _ZERO * s


@inline
def kept_row_max(bits, keep, r, i):
    """:func:`row_max` of row ``r`` over its keys ``keep`` marks (row ``i`` of the mask,
    nonzero: kept); -inf when it keeps none."""
    m = _INT_MIN
    for j in range(bits.shape[1]):
        b = bits[r, j]
        k = b ^ ((b >> _31) & _MAGNITUDE) if keep[i, j] != 0 else _INT_MIN
        m = k if k > m else m
    return as_float32(m ^ ((m >> _31) & _MAGNITUDE)) if m != _INT_MIN else -_INF


@jit
def kept_exp_row_sum(x, keep, out, r, i, m):
    """:func:`exp_row_sum` over the keys ``keep`` marks; 0 into the others."""
    s = _ZERO
    for j in range(x.shape[1]):
        e = exp_neg(x[r, j] - m)  # (for every key, then chosen: the loop vectorizes)
        e = e if keep[i, j] != 0 else _ZERO
        out[r, j] = e
        s += e
    return s


@inline
def only_kept_infinite(x, keep, r, i):
    """Whether row ``r``'s kept keys, whose maximum is -inf, hold no NaN."""
    for j in range(x.shape[1]):
        if keep[i, j] != 0 and x[r, j] != x[r, j]:
            return False
    return True


@jit
def masked_softmax(x, out, keep):
    """The safe softmax of each (L, S) matrix's rows over the keys that ``keep`` (L, S;
    nonzero: kept) marks, as of the scores with -inf at the others (PyTorch's masked_fill
    and _safe_softmax): 0 there, NaN where the row's sum is."""
    count, queries, keys = x.shape
    for b in range(count):
        xb, ob = x[b], out[b]
        bits = xb.view(numpy.int32)
        for i in range(queries):
            m = kept_row_max(bits, keep, i, i)
            if m == -_INF and only_kept_infinite(xb, keep, i, i):
                ob[i] = _ZERO
            else:
                s = _ONE / kept_exp_row_sum(xb, keep, ob, i, i, m)
                for j in range(keys):
                    ob[i, j] *= s


@jit
def masked_softmax_grad(g, y, out, keep):
    """:func:`masked_softmax`'s gradient: softmax's (the whole row's sum, as PyTorch's),
    none for the keys ``keep`` leaves out (its masked_fill's)."""
    count, queries, keys = y.shape
    for b in range(count):
        gb, yb = g[b], y[b]
        for i in range(queries):
            s = row_dot(gb, yb, i)
            for j in range(keys):
                out[b, i, j] = yb[i, j] * (gb[i, j] - s) if keep[i, j] != 0 else _ZERO


@jit
def row_dot(a, b, r):
    """Row ``r``'s sum of ``a * b``, vectorized (a function of its own, as
    :func:`row_sum`)."""
    s = _ZERO
    for j in range(a.shape[1]):
        s += a[r, j] * b[r, j]
    return s


@jit
def softmax_grad(g, y, out):
    rows, n = y.shape
    for r in range(rows):
        s = _ZERO
        for j in range(n):
            s += g[r, j] * y[r, j]
        for j in range(n):
            out[r, j] = y[r, j] * (g[r, j] - s)


@in_order
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


@in_order
def log_softmax_grad(g, y, out):
    """``g - exp(y) * sum(g)``, no 'reassoc' either: LLVM would multiply the sum into
    exp's power-of-two factors first, so an infinite sum times an exponential that rounds
    to 0 gave -inf, not PyTorch's NaN."""
    rows, n = y.shape
    for r in range(rows):
        s = row_sum(g, r)
        for j in range(n):
            out[r, j] = g[r, j] - exp_neg(y[r, j]) * s


@job
def softmax_job(p):
    """[x, out, rows, n, log]: softmax of the rows, log-softmax when log is 1, the safe
    softmax when it is 2"""
    j = carray(p, 5)
    shape = (j[2], j[3])
    x, out = carray(float32_at(j[0]), shape), carray(float32_at(j[1]), shape)
    if j[4] == 1:
        log_softmax(x, out)
    else:
        softmax(x, out, j[4] == 2)


@job
def causal_softmax_job(p):
    """[x, out, matrices, queries, keys]"""
    j = carray(p, 5)
    shape = (j[2], j[3], j[4])
    causal_softmax(carray(float32_at(j[0]), shape), carray(float32_at(j[1]), shape))


@job
def masked_softmax_job(p):
    """[x, out, matrices, queries, keys, keep (float32, queries by keys)]"""
    j = carray(p, 6)
    shape = (j[2], j[3], j[4])
    masked_softmax(carray(float32_at(j[0]), shape), carray(float32_at(j[1]), shape),
                   carray(float32_at(j[5]), (j[3], j[4])))


@job
def masked_softmax_grad_job(p):
    """[g, y, out, matrices, queries, keys, keep (float32, queries by keys)]"""
    j = carray(p, 7)
    shape = (j[3], j[4], j[5])
    masked_softmax_grad(carray(float32_at(j[0]), shape), carray(float32_at(j[1]), shape),
                        carray(float32_at(j[2]), shape), carray(float32_at(j[6]), (j[4], j[5])))


@job
def softmax_grad_job(p):
    """[g, y, out, rows, n, log]: softmax's gradient of the rows, log-softmax's when log
    is 1"""
    j = carray(p, 6)
    shape = (j[3], j[4])
    g, y = carray(float32_at(j[0]), shape), carray(float32_at(j[1]), shape)
    out = carray(float32_at(j[2]), shape)
    if j[5]:
        log_softmax_grad(g, y, out)
    else:
        softmax_grad(g, y, out)


@njit(cache=True, nogil=True, error_model="numpy")
def adam(p, g, m, v, decay, wd, w, w_minus_one, small_w, beta2, one_minus_beta2,
         bc2_sqrt, eps, neg_step_size):
    """No fast-math: each operation rounds as PyTorch's ops do, in their order, the fused
    multiply-adds where its kernels have them (add's alpha, lerp, addcmul)."""
    for i in range(p.size):
        pi = p[i] * decay if decay != 1 else p[i]
        gi = fused(pi, wd, g[i]) if wd != 0 else g[i]
        diff = gi - m[i]
        mi = fused(w, diff, m[i]) if small_w else fused(w_minus_one, diff, gi)
        vi = fused(one_minus_beta2 * gi, gi, v[i] * beta2)
        p[i] = pi + neg_step_size * mi / (numpy.sqrt(vi) / bc2_sqrt + eps)
        m[i] = mi
        v[i] = vi


@inline
def aligned_from(a):
    """The first element of the flat float32 ``a`` on a 32-byte boundary (at most its
    size). A loop that starts there stores whole vectors in single cache lines: NumPy's
    large arrays start 16 bytes past one (malloc's header), where each 32-byte store
    straddles two lines (an in-place ``x += a * y`` on 1M elements: 102 us, 88 aligned).
    The loops take the elements before it, then the rest, each from a view's 0 (an index
    from ``h`` might be negative to numba: its wraparound check stops vectorization);
    elementwise, the values are the same."""
    return min(a.size, (_VECTOR - a.ctypes.data % _VECTOR) % _VECTOR // 4)


@jit
def relu(x, out):
    h = aligned_from(out)
    for xs, outs in ((x[:h], out[:h]), (x[h:], out[h:])):
        for i in range(xs.size):
            v = xs[i]
            outs[i] = _ZERO if v <= _ZERO else v  # a NaN passes


@jit
def relu_grad(g, y, out):
    h = aligned_from(out)
    for gs, ys, outs in ((g[:h], y[:h], out[:h]), (g[h:], y[h:], out[h:])):
        for i in range(ys.size):
            outs[i] = _ZERO if ys[i] <= _ZERO else gs[i]


@job
def relu_job(p):
    j = carray(p, 3)
    relu(carray(float32_at(j[0]), j[2]), carray(float32_at(j[1]), j[2]))


@job
def relu_grad_job(p):
    j = carray(p, 4)
    n = j[3]
    relu_grad(carray(float32_at(j[0]), n), carray(float32_at(j[1]), n),
              carray(float32_at(j[2]), n))


@inline
def arith(a, b, op):
    """``a + b``, ``a - b``, ``a * b`` or ``a / b`` for ``op`` 0 to 3."""
    if op == 0:
        return a + b
    if op == 1:
        return a - b
    if op == 2:
        return a * b
    return a / b


@jit
def by_row(x, out, v, op, swapped):
    """``x[i, j] (op) v[j]`` (``v[j] (op) x[i, j]`` when swapped) into ``out``: a row
    vector against each row of ``x``. In place (a linear layer's bias onto its product)
    the loops get the one array twice, as :func:`by_number`'s (3.2x as fast)."""
    same = x.ctypes.data == out.ctypes.data
    for i in range(x.shape[0]):
        if same:
            row_against(out[i], out[i], v, op, swapped)
        else:
            row_against(x[i], out[i], v, op, swapped)


@inline
def row_against(xs, outs, v, op, swapped):
    """:func:`by_row`'s pass over one row."""
    if swapped:
        for j in range(xs.size):
            outs[j] = arith(v[j], xs[j], op)
    else:
        for j in range(xs.size):
            outs[j] = arith(xs[j], v[j], op)


@jit
def by_column(x, v, out, op, swapped):
    """``x[i, j] (op) v[i]`` (``v[i] (op) x[i, j]`` when swapped) into ``out``: one value
    against each row of ``x``."""
    for i in range(x.shape[0]):
        b = v[i]
        if swapped:
            for j in range(x.shape[1]):
                out[i, j] = arith(b, x[i, j], op)
        else:
            for j in range(x.shape[1]):
                out[i, j] = arith(x[i, j], b, op)


@job
def by_row_job(p):
    """[x, out, rows, n, v, op, swapped]"""
    j = carray(p, 7)
    rows, n = j[2], j[3]
    by_row(carray(float32_at(j[0]), (rows, n)), carray(float32_at(j[1]), (rows, n)),
           carray(float32_at(j[4]), n), j[5], j[6] != 0)


@job
def by_column_job(p):
    """[x, v, out, rows, n, op, swapped]"""
    j = carray(p, 7)
    rows, n = j[3], j[4]
    by_column(carray(float32_at(j[0]), (rows, n)), carray(float32_at(j[1]), rows),
              carray(float32_at(j[2]), (rows, n)), j[5], j[6] != 0)


@jit
def outer(a, b, out):
    for k in range(a.shape[0]):
        for i in range(a.shape[1]):
            ai = a[k, i]
            for j in range(b.shape[1]):
                out[k, i, j] = ai * b[k, j]


@jit
def add_scaled(x, y, alpha):
    h = aligned_from(x)
    for xs, ys in ((x[:h], y[:h]), (x[h:], y[h:])):
        for i in range(xs.size):
            xs[i] = fused(alpha, ys[i], xs[i])  # (PyTorch's add with an alpha: an fma)


@job
def add_scaled_job(p):
    j = carray(p, 4)
    add_scaled(carray(float32_at(j[0]), j[2]), carray(float32_at(j[1]), j[2]),
               as_float32(numpy.int32(j[3])))


@jit
def scale(x, factor):
    h = aligned_from(x)
    for xs in (x[:h], x[h:]):
        for i in range(xs.size):
            xs[i] *= factor


@job
def scale_job(p):
    j = carray(p, 3)
    scale(carray(float32_at(j[0]), j[1]), as_float32(numpy.int32(j[2])))


_EXPONENT = numpy.int32(0x7F800000)  # a float32's exponent field: all ones for inf, NaN


@exact
def largest_exponent(x):
    """The largest exponent field of float32 ``x``'s values (as bits): an integer
    maximum, which LLVM vectorizes where a float test with a branch would not."""
    bits = x.view(numpy.int32)
    m = numpy.int32(0)
    for i in range(bits.size):
        m = max(m, bits[i] & _EXPONENT)
    return m


@job
def largest_exponent_job(p):
    """[x, n, result]"""
    j = carray(p, 3)
    carray(int64_at(j[2]), 1)[0] = largest_exponent(carray(float32_at(j[0]), j[1]))


@exact
def addcmul(x, a, b, value):
    """``x += value * a * b`` rounded as PyTorch's CPU kernel: ``value * a``, then one fused
    multiply-add (no fast-math: the product is not reassociated)."""
    h = aligned_from(x)
    for xs, as_, bs in ((x[:h], a[:h], b[:h]), (x[h:], a[h:], b[h:])):
        for i in range(xs.size):
            xs[i] = fused(value * as_[i], bs[i], xs[i])


@exact
def addcdiv(x, a, b, value):
    """``x += value * a / b`` rounded as PyTorch's CPU kernel: ``(value * a) / b``, then
    the sum (a fast-math loop would reassociate it to ``value * (a / b)``)."""
    h = aligned_from(x)
    for xs, as_, bs in ((x[:h], a[:h], b[:h]), (x[h:], a[h:], b[h:])):
        for i in range(xs.size):
            xs[i] = xs[i] + value * as_[i] / bs[i]


@exact
def sqrt(x):
    """``x = sqrt(x)`` in place (correctly rounded, as NumPy's)."""
    h = aligned_from(x)
    for xs in (x[:h], x[h:]):
        for i in range(xs.size):
            xs[i] = numpy.sqrt(xs[i])


@exact
def elementwise(x, y, out, op):
    """``x[i] + y[i]`` (op 0), ``-`` (1), ``*`` (2) or ``/`` (3) into ``out``, arrays of one
    shape (flat); no fast-math: each value rounds as NumPy's."""
    h = aligned_from(out)
    for xs, ys, outs in ((x[:h], y[:h], out[:h]), (x[h:], y[h:], out[h:])):
        if op == 0:
            for i in range(outs.size):
                outs[i] = xs[i] + ys[i]
        elif op == 1:
            for i in range(outs.size):
                outs[i] = xs[i] - ys[i]
        elif op == 2:
            for i in range(outs.size):
                outs[i] = xs[i] * ys[i]
        else:
            for i in range(outs.size):
                outs[i] = xs[i] / ys[i]


@exact_inline
def number_loops(xs, outs, v, op, swapped):
    """:func:`by_number`'s pass: a loop for each op (one switching on ``op`` inside is not
    vectorized)."""
    if op == 0:
        for i in range(outs.size):
            outs[i] = xs[i] + v
    elif op == 2:
        for i in range(outs.size):
            outs[i] = xs[i] * v
    elif op == 1 and swapped:
        for i in range(outs.size):
            outs[i] = v - xs[i]
    elif op == 1:
        for i in range(outs.size):
            outs[i] = xs[i] - v
    elif swapped:
        for i in range(outs.size):
            outs[i] = v / xs[i]
    else:
        for i in range(outs.size):
            outs[i] = xs[i] / v


@exact
def by_number(x, out, v, op, swapped):
    """``x[i] (op) v`` (``v (op) x[i]`` when swapped) into ``out``, flat: a tensor and a
    number (as a float32); no fast-math, each value rounds as NumPy's. In place (``x`` is
    ``out``) the loops read and write one array: given two that overlap, LLVM's check for
    overlap sends them to its scalar loop (an ``add_`` of a number 2.4x as slow)."""
    h = aligned_from(out)
    same = x.ctypes.data == out.ctypes.data
    for xs, outs in ((x[:h], out[:h]), (x[h:], out[h:])):
        if same:
            number_loops(outs, outs, v, op, swapped)
        else:
            number_loops(xs, outs, v, op, swapped)


@job
def by_number_job(p):
    """[x, out, n, the number's bits, op, swapped]"""
    j = carray(p, 6)
    n = j[2]
    by_number(carray(float32_at(j[0]), n), carray(float32_at(j[1]), n),
              as_float32(numpy.int32(j[3])), j[4], j[5] != 0)


@job
def elementwise_job(p):
    """[x, y, out, n, op]"""
    j = carray(p, 5)
    n = j[3]
    elementwise(carray(float32_at(j[0]), n), carray(float32_at(j[1]), n),
                carray(float32_at(j[2]), n), j[4])


@job
def addc_job(p):
    """[x, a, b, n, value's bits, 1 for addcdiv (else addcmul)]"""
    j = carray(p, 6)
    n = j[3]
    x, a, b = carray(float32_at(j[0]), n), carray(float32_at(j[1]), n), carray(
        float32_at(j[2]), n)
    if j[5]:
        addcdiv(x, a, b, as_float32(numpy.int32(j[4])))
    else:
        addcmul(x, a, b, as_float32(numpy.int32(j[4])))


@job
def sqrt_job(p):
    """[x, n]"""
    j = carray(p, 2)
    sqrt(carray(float32_at(j[0]), j[1]))


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


@job
def max_pool_2x2_job(p):
    j = carray(p, 8)
    n, h, w, oh, ow = j[3], j[4], j[5], j[6], j[7]
    max_pool_2x2(carray(float32_at(j[0]), (n, h, w)), carray(float32_at(j[1]), (n, oh, ow)),
                 carray(int64_at(j[2]), (n, oh, ow)))


@exact
def max_pool_2d(x, out, idx, kernel, stride, pad, dilation):
    """Any 2-D max pool over (planes, H, W): each window's running maximum in
    row-major order, a later value taking it when greater or NaN (PyTorch's CPU rule),
    from the window's first element inside the plane; a window wholly in padding is
    -inf with index -1 (the NumPy rule's). Each window's offsets inside the plane are
    found once per row and column (no bound test per element), and the selects are
    branch-free. Without dilation, the windows whole across an output row are taken
    together (:func:`_pool_row`), the others one by one (ResNet-18's 3x3 pool at stride 2
    on 2 threads: 23 ms one by one, 8.9 so; PyTorch's 25)."""
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = kernel, stride, pad, dilation
    h, w, ow = x.shape[1], x.shape[2], out.shape[2]
    # output columns whose windows lie inside the plane across: ox sw - pw >= 0 and
    # ox sw - pw + kw - 1 < w
    whole = dw == 1 and w >= kw
    oxa = min(ow, (pw + sw - 1) // sw) if whole else ow
    oxb = max(oxa, min(ow, (w - kw + pw) // sw + 1)) if whole else ow
    row_best, col_best = numpy.empty(w, x.dtype), numpy.empty(w, x.dtype)
    row_at, col_at = numpy.empty(w, numpy.int64), numpy.empty(w, numpy.int64)
    for b in range(x.shape[0]):
        plane = x[b]
        for oy in range(out.shape[1]):
            y0 = oy * sh - ph
            i0 = (-y0 + dh - 1) // dh if y0 < 0 else 0  # the kernel rows inside
            i1 = min(kh, (h - y0 + dh - 1) // dh)
            if oxa < oxb and i0 < i1:
                c0 = oxa * sw - pw  # (the first window's first column: not negative)
                _pool_row(plane, col_best, col_at, row_best, row_at, y0, i0, i1, dh, c0,
                          (oxb - 1 - oxa) * sw + 1, kw)
                for t in range(oxb - oxa):
                    out[b, oy, oxa + t] = col_best[t * sw]
                    idx[b, oy, oxa + t] = col_at[t * sw]
            for ox in range(ow):
                if oxa <= ox < oxb and i0 < i1:
                    continue
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


@exact_inline
def _pool_row(plane, best, at, row_best, row_at, y0, i0, i1, dh, c0, n, kw):
    """The windows starting at columns ``c0:c0 + n`` of one output row, inside the plane
    across, into ``best`` and ``at`` (from 0): the maximum of each kernel row along it at
    every column (loops of unit stride, which LLVM vectorizes: at a stride they stay
    scalar), then the rows' in order (the same rule: the same value and index as the
    row-major running maximum). Indexed from 0 (an index numba cannot tell is not negative
    gets a wraparound test per element, which stops vectorization)."""
    w = plane.shape[1]
    for i in range(i0, i1):
        y = y0 + i * dh
        row = plane[y, c0:]
        first = y * w + c0
        for t in range(n):
            row_best[t] = row[t]
            row_at[t] = first + t
        for j in range(1, kw):
            for t in range(n):
                v = row[t + j]
                take = (v > row_best[t]) | (v != v)
                row_best[t] = v if take else row_best[t]
                row_at[t] = first + t + j if take else row_at[t]
        if i == i0:
            for t in range(n):
                best[t], at[t] = row_best[t], row_at[t]
        else:
            for t in range(n):
                v = row_best[t]
                take = (v > best[t]) | (v != v)
                best[t] = v if take else best[t]
                at[t] = row_at[t] if take else at[t]


@job
def max_pool_2d_job(p):
    j = carray(p, 16)
    n, h, w, oh, ow = j[3], j[4], j[5], j[6], j[7]
    max_pool_2d(carray(float32_at(j[0]), (n, h, w)), carray(float32_at(j[1]), (n, oh, ow)),
                carray(int64_at(j[2]), (n, oh, ow)), (j[8], j[9]), (j[10], j[11]),
                (j[12], j[13]), (j[14], j[15]))


@exact
def index_add_rows(g, idx, out):
    """``out[b] = 0``, then ``out[b, idx[b, q]] += g[b, q]``, over each row ``b``, skipping
    negative indices (a max pool's windows wholly in padding)."""
    for b in range(g.shape[0]):
        row = out[b]
        for t in range(row.size):
            row[t] = 0
        for q in range(g.shape[1]):
            i = idx[b, q]
            if i >= 0:
                out[b, i] += g[b, q]


@job
def index_add_rows_job(p):
    j = carray(p, 6)
    n, m, plane = j[3], j[4], j[5]
    index_add_rows(carray(float32_at(j[0]), (n, m)), carray(int64_at(j[1]), (n, m)),
                   carray(float32_at(j[2]), (n, plane)))


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

@exact
def pad_planes(x, out, top, left):
    """Each (H, W) plane of ``x`` into its larger plane of ``out`` at row ``top``, column
    ``left``, zeros around it: one pass over ``out``."""
    h, w = x.shape[1], x.shape[2]
    for b in range(x.shape[0]):
        for y in range(out.shape[1]):
            row = out[b, y]
            if top <= y < top + h:
                src, into = x[b, y - top], row[left:]  # (views indexed from 0)
                for t in range(left):
                    row[t] = 0
                for t in range(w):
                    into[t] = src[t]
                for t in range(w, into.size):
                    into[t] = 0
            else:
                for t in range(row.size):
                    row[t] = 0


@job
def pad_planes_job(p):
    j = carray(p, 9)
    n, h, w, hb, r = j[2], j[3], j[4], j[5], j[6]
    pad_planes(carray(float32_at(j[0]), (n, h, w)), carray(float32_at(j[1]), (n, hb, r)),
               j[7], j[8])


@exact
def strided_copy(dst, src, shape, dst_step, src_step):
    """``dst[...] = src`` on 6-D float32 views given as flat buffers, their shape and their
    steps in elements (non-negative); the last axis is one contiguous run when both step
    by one."""
    if dst_step[5] == 1 and src_step[5] != 1:  # a transpose: tiles, when src has a run
        for a in range(5):
            if src_step[a] == 1 and shape[a] >= 8:  # (a shorter run makes no whole tile)
                _transposed_copy(dst, src, _moved(shape, a), _moved(dst_step, a),
                                 _moved(src_step, a))
                return
    n0, n1, n2, n3, n4, n5 = shape
    d0, d1, d2, d3, d4, d5 = dst_step
    s0, s1, s2, s3, s4, s5 = src_step
    runs = d5 == 1 and s5 == 1
    for i0 in range(n0):
        for i1 in range(n1):
            for i2 in range(n2):
                for i3 in range(n3):
                    for i4 in range(n4):
                        # (indexing views from 0: an index that might be negative gets a
                        # wraparound check per element, which stops vectorization)
                        to = dst[i0 * d0 + i1 * d1 + i2 * d2 + i3 * d3 + i4 * d4:]
                        fro = src[i0 * s0 + i1 * s1 + i2 * s2 + i3 * s3 + i4 * s4:]
                        if runs:
                            for t in range(n5):
                                to[t] = fro[t]
                        elif d5 == 1 and s5 == 2:  # im2col at stride 2: even elements
                            for t in range(n5):
                                to[t] = fro[2 * t]
                        else:
                            for t in range(n5):
                                to[t * d5] = fro[t * s5]


@inline
def _moved(v, a):
    """The six numbers ``v`` with entry ``a`` moved to place 4 (the copy's loop order)."""
    out = numpy.empty(6, numpy.int64)
    k = 0
    for i in range(5):
        if i != a:
            out[k] = v[i]
            k += 1
    out[4], out[5] = v[a], v[5]
    return out


@inline
def _transposed_copy(dst, src, shape, dst_step, src_step):
    """strided_copy where ``dst`` steps by one along axis 5 and ``src`` along axis 4: 8x8
    blocks in vector registers (:func:`transpose8`), the loop inside along the longer of
    the two axes, then the edges element by element. Element by element, one side steps
    across rows, a power-of-two apart in a square matrix, whose cache lines fall in one
    set and evict each other (NumPy's transpose of a 1024x1024 float32: 3.4 ms; these
    blocks: 0.5; of a 1024x128: 83 us, 28)."""
    n0, n1, n2, n3, n4, n5 = shape
    d0, d1, d2, d3, d4 = dst_step[0], dst_step[1], dst_step[2], dst_step[3], dst_step[4]
    s0, s1, s2, s3, s5 = src_step[0], src_step[1], src_step[2], src_step[3], src_step[5]
    wi, wt = n4 - n4 % 8, n5 - n5 % 8
    for i0 in range(n0):
        for i1 in range(n1):
            for i2 in range(n2):
                for i3 in range(n3):
                    to = dst[i0 * d0 + i1 * d1 + i2 * d2 + i3 * d3:]
                    fro = src[i0 * s0 + i1 * s1 + i2 * s2 + i3 * s3:]
                    if n5 > n4:
                        for i in range(0, wi, 8):
                            for t in range(0, wt, 8):
                                transpose8(to, i * d4 + t, d4, fro, i + t * s5, s5)
                    else:
                        for t in range(0, wt, 8):
                            for i in range(0, wi, 8):
                                transpose8(to, i * d4 + t, d4, fro, i + t * s5, s5)
                    for i in range(n4):
                        for t in range(wt if i < wi else 0, n5):
                            to[i * d4 + t] = fro[i + t * s5]


@inline
def _extent(j, shape_at, step_at):
    """Elements a view spans: its last element's offset, plus one."""
    end = 1
    for a in range(6):
        end += (j[shape_at + a] - 1) * j[step_at + a]
    return end


@job
def strided_copy_job(p):
    """[dst, src, 6 sizes, 6 dst steps, 6 src steps]."""
    j = carray(p, 20)
    shape, dst_step, src_step = j[2:8], j[8:14], j[14:20]
    strided_copy(carray(float32_at(j[0]), _extent(j, 2, 8)),
                 carray(float32_at(j[1]), _extent(j, 2, 14)), shape, dst_step, src_step)


JOB_FUNCTIONS = {"largest_exponent": largest_exponent_job, "gelu": gelu_job,
                 "gelu_grad": gelu_grad_job, "relu": relu_job,
                 "relu_grad": relu_grad_job, "max_pool_2x2": max_pool_2x2_job,
                 "index_add_rows": index_add_rows_job, "strided_copy": strided_copy_job,
                 "max_pool_2d": max_pool_2d_job, "add_scaled": add_scaled_job,
                 "scale": scale_job, "elementwise": elementwise_job,
                 "by_number": by_number_job, "addcmul": addc_job,
                 "addcdiv": addc_job, "sqrt": sqrt_job, "by_row": by_row_job,
                 "by_column": by_column_job,
                 "pad_planes": pad_planes_job, "batch_norm": batch_norm_job,
                 "batch_norm_backward": batch_norm_backward_job,
                 "channel_affine": channel_affine_job,
                 "column_parts": column_parts_job, "batch_norm_band": batch_norm_band_job,
                 "channel_affine_band": channel_affine_band_job,
                 "batch_norm_dx_band": batch_norm_dx_band_job,
                 "batch_norm_columns": batch_norm_columns_job,
                 "batch_norm_dx_columns": batch_norm_dx_columns_job,
                 "column_sums_columns": column_sums_columns_job,
                 "layer_norm": layer_norm_job, "layer_norm_dx": layer_norm_dx_job,
                 "softmax": softmax_job, "log_softmax": softmax_job,
                 "causal_softmax": causal_softmax_job,
                 "masked_softmax": masked_softmax_job,
                 "masked_softmax_grad": masked_softmax_grad_job,
                 "softmax_grad": softmax_grad_job, "log_softmax_grad": softmax_grad_job,
                 "row_reduce": row_reduce_job}
@vectorize(["float32(float32, float32, float32)", "float64(float64, float64, float64)"],
           cache=True)
def mul_sub(a, b, c):
    """``a * b - c`` rounded once, a ufunc (broadcast, any strides): one pass where
    NumPy's emulation of it takes some forty-five in float64."""
    return fused(a, b, -c)


@vectorize(["float32(float32, float32, float32)", "float64(float64, float64, float64)"],
           cache=True)
def mul_add(a, b, c):
    """``a * b + c`` rounded once, a ufunc (``out=`` may be ``c``: an in-place update)."""
    return fused(a, b, c)


@jit
def address(x):
    """The address of ``x``'s first element (see ``cpu_kernels.address``)."""
    return x.ctypes.data


KERNELS = {"address": address, "adam": adam, "mul_sub": mul_sub, "mul_add": mul_add,
           "gelu": gelu, "relu": relu,
           "relu_grad": relu_grad, "outer": outer,
           "column_means": column_means, "column_invstd": column_invstd,
           "batch_norm_dx_factors": batch_norm_dx_factors,
           "column_sums_scaled": column_sums_scaled,
        "add_scaled": add_scaled, "gelu_grad": gelu_grad, "layer_norm": layer_norm,
        "layer_norm_dx": layer_norm_dx, "layer_norm_dw": layer_norm_dw,
        "column_sum": column_sum,
        "softmax": softmax, "softmax_grad": softmax_grad, "log_softmax": log_softmax,
        "causal_softmax": causal_softmax,
        "masked_softmax": masked_softmax, "masked_softmax_grad": masked_softmax_grad,
        "log_softmax_grad": log_softmax_grad, "max_pool_2x2": max_pool_2x2,
        "max_pool_2d": max_pool_2d,
        "index_add_rows": index_add_rows, "linspace": linspace,
           "pad_planes": pad_planes, "scale": scale, "elementwise": elementwise,
           "by_number": by_number,
           "addcmul": addcmul, "addcdiv": addcdiv,
           "sqrt": sqrt, "by_row": by_row,
           "by_column": by_column, "row_reduce": row_reduce}

JOBS = {name: f.address for name, f in JOB_FUNCTIONS.items()}
