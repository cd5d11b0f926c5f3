"""The numba kernel of col2im (:func:`..ops._conv_numpy.conv_dx` at a stride): the input
gradient's columns added into the padded planes they came from, one image's plane of one
channel at a time while it is in cache, where NumPy's adds make a pass over the whole
chunk per kernel offset through a strided view (rn_down2's 9 passes: 6 ms of its 12).
The adds run in NumPy's order (kernel offsets row-major), so the sums are its bits."""

from numba import carray

from ._numba_kernels import exact, float32_at, job


@exact
def col2im(cols, out, c0, c1, first, stride, dilation):
    """``out[c, first + n, oy * sh + i * dh, ox * sw + j * dw] += cols[c, i, j, n, oy, ox]``
    for channels ``c0:c1``; ``cols`` (C, kh, kw, images, OH, Wq), ``out`` (C, N, rows,
    columns)."""
    (sh, sw), (dh, dw) = stride, dilation
    kh, kw, images, oh, wq = cols.shape[1], cols.shape[2], cols.shape[3], cols.shape[4], \
        cols.shape[5]
    r = out.shape[3]
    for c in range(c0, c1):
        for n in range(images):
            # (flat: a row's last columns may reach into the next row, the grid's padding)
            plane = out[c, first + n].reshape(-1)
            for i in range(kh):
                for j in range(kw):
                    for oy in range(oh):
                        row, src = plane[(oy * sh + i * dh) * r + j * dw:], cols[c, i, j, n, oy]
                        for ox in range(wq):
                            row[ox * sw] += src[ox]


@job
def col2im_job(p):
    """[out, cols, 1, C, S, c0, c1, N, rows, columns, kh, kw, images, OH, Wq, first, sh, sw,
    dh, dw]"""
    j = carray(p, 20)
    c = j[3]
    col2im(carray(float32_at(j[1]), (c, j[10], j[11], j[12], j[13], j[14])),
           carray(float32_at(j[0]), (c, j[7], j[8], j[9])), j[5], j[6], j[15], (j[16], j[17]),
           (j[18], j[19]))


JOBS = {"col2im": col2im_job.address}
