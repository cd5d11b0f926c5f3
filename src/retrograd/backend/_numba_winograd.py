"""The numba kernels of Winograd's F(2x2, 3x3) convolution (:mod:`..ops._conv_winograd`).

A 3x3 convolution at unit stride computes each 2x2 block of an output plane from the 4x4
tile of input under it. Transformed (tile ``d`` to ``B^T d B``, kernel ``g`` to ``G g
G^T``), the block is ``A^T (U * V) A``: sixteen products per tile and channel pair where
the direct sums take thirty-six, and the sums over channels become sixteen GEMMs. These
kernels make the transforms, each one pass over its arrays, a channel's planes at a time
(the jobs split the channels between OpenBLAS's threads); their adjoints carry gradients
back. The transforms only add, subtract and halve, so each one rounds as NumPy's
expression of it would, in any thread.
"""

import numpy
from numba import carray

from ._numba_kernels import _EXPONENT, exact, exact_inline, float32_at, job, largest_exponent

_H = numpy.float32(0.5)


# The one-dimensional transforms, applied down the columns, then along the rows.
@exact_inline
def _bt(d0, d1, d2, d3):
    """``B^T d``."""
    return d0 - d2, d1 + d2, d2 - d1, d1 - d3


@exact_inline
def _at(m0, m1, m2, m3):
    """``A^T m``."""
    return m0 + m1 + m2, m1 - m2 - m3


@exact_inline
def _a(g0, g1):
    """``A g``: the adjoint of ``A^T``."""
    return g0, g0 + g1, g0 - g1, -g1


@exact_inline
def _g(w0, w1, w2):
    """``G w``."""
    return w0, (w0 + w1 + w2) * _H, (w0 - w1 + w2) * _H, w2


@exact_inline
def _gt(d0, d1, d2, d3):
    """``G^T d``: the adjoint of ``G``."""
    return d0 + (d1 + d2) * _H, (d1 - d2) * _H, (d1 + d2) * _H + d3


@exact
def tiles(x, v, c0, c1, th, tw, top, left):
    """``v[4i + j, c, t] = (B^T d B)[i, j]`` for the 4x4 tile ``d`` at rows ``2a``, columns
    ``2b`` of image ``n``'s planes ``x`` (N, C, H, W) padded with ``top`` rows and ``left``
    columns of zeros (and as many as the tiles reach past the others), tile ``t = (n th +
    a) tw + b``; channels ``c0:c1``. Each tile row's four rows are combined down the
    columns first, whole rows at a time, then along them: loops LLVM vectorizes."""
    h, w = x.shape[2], x.shape[3]
    e = numpy.zeros((4, 2 * tw + 2), numpy.float32)  # (the padding columns stay zero)
    zero = numpy.zeros(w, numpy.float32)
    for c in range(c0, c1):
        for n in range(x.shape[0]):
            for a in range(th):
                y = 2 * a - top
                r0 = x[n, c, y] if 0 <= y < h else zero
                r1 = x[n, c, y + 1] if 0 <= y + 1 < h else zero
                r2 = x[n, c, y + 2] if 0 <= y + 2 < h else zero
                r3 = x[n, c, y + 3] if 0 <= y + 3 < h else zero
                e0, e1, e2, e3 = e[0, left:], e[1, left:], e[2, left:], e[3, left:]
                for z in range(w):
                    e0[z], e1[z], e2[z], e3[z] = _bt(r0[z], r1[z], r2[z], r3[z])
                t0 = (n * th + a) * tw
                for i in range(4):
                    ei = e[i]
                    v0, v1 = v[4 * i, c, t0:t0 + tw], v[4 * i + 1, c, t0:t0 + tw]
                    v2, v3 = v[4 * i + 2, c, t0:t0 + tw], v[4 * i + 3, c, t0:t0 + tw]
                    for b in range(tw):
                        v0[b], v1[b], v2[b], v3[b] = _bt(ei[2 * b], ei[2 * b + 1], ei[2 * b + 2],
                                                         ei[2 * b + 3])


@exact
def untile(m, bias, out, bad, k0, k1, th, tw):
    """``out[n, k]``'s 2x2 block under tile ``t`` is ``A^T m[:, k, t] A + bias[k]``
    (cropped at an odd edge); ``bad[k]`` is 1 where a value is not finite, else 0.
    Channels ``k0:k1``. As :func:`tiles`, down the columns first, then along the rows (into
    a row of whole blocks, copied out cropped)."""
    oh, ow = out.shape[2], out.shape[3]
    s = numpy.empty((2, 4, tw), numpy.float32)
    row = numpy.empty(2 * tw, numpy.float32)
    for k in range(k0, k1):
        exponents = 0  # the largest exponent field seen: all ones for infinity and NaN
        for n in range(out.shape[0]):
            for a in range(th):
                t0 = (n * th + a) * tw
                for q in range(4):
                    m0, m1 = m[q, k, t0:t0 + tw], m[4 + q, k, t0:t0 + tw]
                    m2, m3 = m[8 + q, k, t0:t0 + tw], m[12 + q, k, t0:t0 + tw]
                    s0, s1 = s[0, q], s[1, q]
                    for b in range(tw):
                        s0[b], s1[b] = _at(m0[b], m1[b], m2[b], m3[b])
                for i in range(min(2, oh - 2 * a)):
                    s0, s1, s2, s3 = s[i, 0], s[i, 1], s[i, 2], s[i, 3]
                    for b in range(tw):
                        y0, y1 = _at(s0[b], s1[b], s2[b], s3[b])
                        row[2 * b], row[2 * b + 1] = y0 + bias[k], y1 + bias[k]
                    dst = out[n, k, 2 * a + i]
                    for z in range(ow):
                        dst[z] = row[z]
                    exponents = max(exponents, largest_exponent(dst))
        bad[k] = 1 if exponents == _EXPONENT else 0


@exact
def grad_tiles(g, dm, k0, k1, th, tw):
    """The adjoint of :func:`untile`: ``dm[:, k, t] = A g A^T`` for the 2x2 block ``g`` of
    ``g[n, k]`` under tile ``t`` (zero past an odd edge). Channels ``k0:k1``."""
    oh, ow = g.shape[2], g.shape[3]
    e = numpy.zeros((4, 2 * tw), numpy.float32)  # (its columns past ow stay zero)
    zero = numpy.zeros(ow, numpy.float32)
    for k in range(k0, k1):
        for n in range(g.shape[0]):
            for a in range(th):
                g0 = g[n, k, 2 * a]
                g1 = g[n, k, 2 * a + 1] if 2 * a + 1 < oh else zero
                for z in range(ow):
                    e[0, z], e[1, z], e[2, z], e[3, z] = _a(g0[z], g1[z])
                t0 = (n * th + a) * tw
                for u in range(4):
                    eu = e[u]
                    d0, d1 = dm[4 * u, k, t0:t0 + tw], dm[4 * u + 1, k, t0:t0 + tw]
                    d2, d3 = dm[4 * u + 2, k, t0:t0 + tw], dm[4 * u + 3, k, t0:t0 + tw]
                    for b in range(tw):
                        d0[b], d1[b], d2[b], d3[b] = _a(eu[2 * b], eu[2 * b + 1])


@exact
def weights(w, u, k0, k1, flipped):
    """``u[k, 4i + j, c] = (G w[k, c] G^T)[i, j]`` for 3x3 kernels ``w`` (K, C, 9), output
    channels ``k0:k1``; ``flipped``: of ``w[c, k]`` flipped (``w`` (C, K, 9)), the kernels of
    the input gradient as a convolution. An output channel's sixteen rows are one block
    of ``u`` (K, 16, C), the GEMMs reading each position's rows a block apart: as (16, K,
    C), the sixteen streams of each channel's values, a power of two apart in ResNet's
    layers, evicted each other from the cache (512x512 kernels: 4.6 ms, 3.1 here; 256x256:
    0.75, 0.51)."""
    cs = u.shape[2]
    for k in range(k0, k1):
        t = u[k]
        for c in range(cs):
            q = w[c, k, ::-1] if flipped else w[k, c]
            h0, h1, h2 = _g(q[0], q[3], q[6]), _g(q[1], q[4], q[7]), _g(q[2], q[5], q[8])
            t[0, c], t[1, c], t[2, c], t[3, c] = _g(h0[0], h1[0], h2[0])
            t[4, c], t[5, c], t[6, c], t[7, c] = _g(h0[1], h1[1], h2[1])
            t[8, c], t[9, c], t[10, c], t[11, c] = _g(h0[2], h1[2], h2[2])
            t[12, c], t[13, c], t[14, c], t[15, c] = _g(h0[3], h1[3], h2[3])


@exact
def weights_grad(du, dw, k0, k1):
    """The adjoint of :func:`weights`: ``dw[k, c] = G^T du[k, :, c] G`` for output channels
    ``k0:k1``, ``du`` (K, 16, C) laid out as :func:`weights` writes ``u``."""
    cs = dw.shape[1]
    for k in range(k0, k1):
        t = du[k]
        for c in range(cs):
            f0 = _gt(t[0, c], t[4, c], t[8, c], t[12, c])
            f1 = _gt(t[1, c], t[5, c], t[9, c], t[13, c])
            f2 = _gt(t[2, c], t[6, c], t[10, c], t[14, c])
            f3 = _gt(t[3, c], t[7, c], t[11, c], t[15, c])
            q = dw[k, c]
            q[0, 0], q[0, 1], q[0, 2] = _gt(f0[0], f1[0], f2[0], f3[0])
            q[1, 0], q[1, 1], q[1, 2] = _gt(f0[1], f1[1], f2[1], f3[1])
            q[2, 0], q[2, 1], q[2, 2] = _gt(f0[2], f1[2], f2[2], f3[2])


# The jobs take _by_channel's rows: the arrays' addresses, N, C, S of the first (viewed as
# (N, C, S)), the part's channels c0, c1, then the tail.

@job
def tiles_job(p):
    """[x, v, N, C, S, c0, c1, th, tw, H, W, top, left]"""
    j = carray(p, 13)
    n, c, th, tw = j[2], j[3], j[7], j[8]
    tiles(carray(float32_at(j[0]), (n, c, j[9], j[10])),
          carray(float32_at(j[1]), (16, c, n * th * tw)), j[5], j[6], th, tw, j[11], j[12])


@job
def untile_job(p):
    """[out, m, bias, bad, N, K, S, k0, k1, OH, OW, th, tw]"""
    j = carray(p, 13)
    n, k, th, tw = j[4], j[5], j[11], j[12]
    untile(carray(float32_at(j[1]), (16, k, n * th * tw)), carray(float32_at(j[2]), k),
           carray(float32_at(j[0]), (n, k, j[9], j[10])), carray(float32_at(j[3]), k),
           j[7], j[8], th, tw)


@job
def grad_tiles_job(p):
    """[g, dm, N, K, S, k0, k1, OH, OW, th, tw]"""
    j = carray(p, 11)
    n, k, th, tw = j[2], j[3], j[9], j[10]
    grad_tiles(carray(float32_at(j[0]), (n, k, j[7], j[8])),
               carray(float32_at(j[1]), (16, k, n * th * tw)), j[5], j[6], th, tw)


@job
def weights_job(p):
    """[w, u, 1, K, S, k0, k1, C, flipped]"""
    j = carray(p, 9)
    k, c = j[3], j[7]
    weights(carray(float32_at(j[0]), (c, k, 9) if j[8] else (k, c, 9)),
            carray(float32_at(j[1]), (k, 16, c)), j[5], j[6], j[8] != 0)


@job
def weights_grad_job(p):
    """[dw, du, 1, K, S, k0, k1, C]"""
    j = carray(p, 8)
    k, c = j[3], j[7]
    weights_grad(carray(float32_at(j[1]), (k, 16, c)), carray(float32_at(j[0]), (k, c, 3, 3)),
                 j[5], j[6])


JOBS = {"winograd_tiles": tiles_job.address, "winograd_untile": untile_job.address,
        "winograd_grad_tiles": grad_tiles_job.address, "winograd_weights": weights_job.address,
        "winograd_weights_grad": weights_grad_job.address}
