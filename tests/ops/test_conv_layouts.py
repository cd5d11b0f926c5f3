"""Convolution and max-pool NumPy paths beyond the op database's small samples.

The NumPy convolution lays image rows out on a padded grid whose junk columns must
never leak (or in a plain padded layout when there are at least C*kh*kw output
channels) and runs its GEMMs on chunks of images; each is checked against PyTorch with
unit and larger strides, dilation, groups, 1x1 and 1-D kernels, non-contiguous inputs,
the bias folded into the GEMM, and transposed convolutions whose output_padding is not
smaller than the stride. 2x2 max-pooling has a fast path with its own tie and NaN rules.
"""

import warnings

import numpy
import pytest

import retrograd

CONV = [
    ((2, 3, 9, 8), (4, 3, 3, 3), {"padding": 1}),
    ((2, 3, 9, 8), (4, 3, 3, 3), {"padding": (2, 1), "stride": (2, 1)}),
    ((2, 3, 9, 8), (4, 3, 3, 2), {"padding": (0, 1), "stride": (1, 2)}),
    ((2, 3, 9, 8), (4, 3, 2, 3), {"padding": (1, 2), "dilation": (2, 1)}),
    ((2, 3, 9, 8), (4, 3, 3, 3), {"dilation": (1, 2), "stride": (2, 1)}),
    ((2, 4, 7, 7), (6, 2, 3, 3), {"padding": 1, "groups": 2}),
    ((2, 4, 7, 7), (4, 1, 3, 3), {"padding": 2, "groups": 4, "dilation": 2}),
    ((3, 5, 6, 4), (2, 5, 1, 1), {}),
    ((3, 5, 6, 4), (2, 5, 1, 1), {"padding": 1}),
    ((2, 2, 4, 5), (3, 2, 3, 2), {"padding": (1, 2)}),  # padding past the kernel's reach
    ((2, 2, 4, 5), (3, 2, 3, 2), {"padding": (2, 3), "dilation": (1, 2)}),
    # as many output channels as C*kh*kw: the plain (ungridded) layout
    ((2, 1, 6, 7), (12, 1, 3, 3), {"padding": 1}),
    ((2, 2, 6, 7), (16, 2, 2, 3), {"padding": (1, 2), "dilation": (2, 1)}),
    ((2, 4, 6, 7), (8, 1, 2, 2), {"padding": 1, "groups": 4}),
    ((1, 2, 3, 4), (3, 2, 3, 4), {}),
]


def _run(T, fn, x, w, b, g, **kw):
    x = T.from_numpy(x).requires_grad_()
    w = T.from_numpy(w).requires_grad_()
    b = None if b is None else T.from_numpy(b).requires_grad_()
    y = fn(x, w, b, **kw)
    y.backward(T.from_numpy(g(tuple(y.shape))))
    return y.detach().numpy(), x.grad.numpy(), w.grad.numpy(), None if b is None else b.grad


def _compare(torch, name, xs, ws, bias, kw, transform=None):
    rng = numpy.random.default_rng(0)
    x = rng.standard_normal(xs)
    w = rng.standard_normal(ws)
    b = rng.standard_normal(ws[1] * kw.get("groups", 1) if "transpose" in name
                           else ws[0]) if bias else None
    grads = {}

    def g(shape):
        if shape not in grads:
            grads[shape] = rng.standard_normal(shape)
        return grads[shape]

    if transform is not None:
        x = transform(x)
    want = _run(torch, getattr(torch.nn.functional, name), x, w, b, g, **kw)
    got = _run(retrograd, getattr(retrograd.nn.functional, name), x, w, b, g, **kw)
    assert got[0].flags.c_contiguous
    for a, e in zip(got, want, strict=True):
        if e is not None:
            numpy.testing.assert_allclose(numpy.asarray(a), numpy.asarray(e), rtol=1e-10,
                                          atol=1e-10)


@pytest.mark.torch
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("case", range(len(CONV)))
def test_conv2d_matches_torch(torch, case, bias):
    xs, ws, kw = CONV[case]
    _compare(torch, "conv2d", xs, ws, bias, kw)


@pytest.mark.torch
@pytest.mark.parametrize("name", ["conv2d", "conv_transpose2d"])
@pytest.mark.parametrize("case", [0, 1, 5, 12, 14])
def test_conv2d_in_image_chunks(torch, monkeypatch, name, case):
    """GEMMs over chunks of images (of one or two here, the last one short) match."""
    from retrograd.ops import _conv_numpy as conv
    xs, ws, kw = CONV[case]
    if name == "conv_transpose2d":
        g = kw.get("groups", 1)
        ws = (xs[1], ws[0] // g) + ws[2:]
        kw = {k: v for k, v in kw.items() if k != "stride"}
    monkeypatch.setattr(conv, "_CHUNK_BYTES", 1)
    assert conv._chunks(5, 1, 1, 8) == [(i, i + 1) for i in range(5)]
    monkeypatch.setattr(conv, "_CHUNK_BYTES", 2 * xs[1] * ws[2] * ws[3] * 8 * xs[2] * xs[3])
    _compare(torch, name, (5,) + xs[1:], ws, True, kw)


def _noncontiguous(layout):
    """An input transform giving the same values in a transposed or strided layout."""
    if layout == "transposed":
        return lambda x: numpy.ascontiguousarray(x.transpose(0, 1, 3, 2)).transpose(0, 1, 3, 2)
    return lambda x: numpy.repeat(x, 2, axis=3)[..., ::2]


@pytest.mark.torch
@pytest.mark.parametrize("layout", ["transposed", "strided"])
def test_conv2d_noncontiguous_input(torch, layout):
    _compare(torch, "conv2d", (2, 3, 6, 5), (4, 3, 3, 3), True, {"padding": 1},
             _noncontiguous(layout))


@pytest.mark.torch
@pytest.mark.parametrize("kw", [{"padding": 2}, {"padding": 1, "stride": 2, "dilation": 2},
                                {"groups": 2}])
def test_conv1d_matches_torch(torch, kw):
    _compare(torch, "conv1d", (2, 4, 11), (6, 4 // kw.get("groups", 1), 3), True, kw)


@pytest.mark.torch
@pytest.mark.parametrize("kw", [
    {"padding": 1},
    {"stride": 2, "padding": 1, "output_padding": 1},
    {"dilation": 2, "output_padding": 1},  # output_padding >= stride: allowed by dilation
    {"stride": (2, 1), "dilation": (1, 3), "output_padding": (1, 2), "padding": (0, 1)},
    {"groups": 2, "padding": (1, 0)},
])
def test_conv_transpose2d_matches_torch(torch, kw):
    _compare(torch, "conv_transpose2d", (2, 4, 5, 4), (4, 3, 3, 3), True, kw)


def test_conv2d_gradcheck_grid_path():
    rng = numpy.random.default_rng(1)
    x = retrograd.tensor(rng.standard_normal((2, 2, 4, 5)), requires_grad=True)
    w = retrograd.tensor(rng.standard_normal((3, 2, 3, 2)), requires_grad=True)
    b = retrograd.tensor(rng.standard_normal(3), requires_grad=True)

    def f(x, w, b):
        return retrograd.nn.functional.conv2d(x, w, b, padding=(1, 2), stride=(2, 1))
    assert retrograd.autograd.gradcheck(f, (x, w, b))
    assert retrograd.autograd.gradgradcheck(f, (x, w, b))


@pytest.mark.parametrize("kw", [{"dilation": 2, "output_padding": 1},
                                {"stride": (2, 1), "dilation": (1, 3), "output_padding": (1, 2),
                                 "padding": (0, 1)}])
def test_conv_transpose2d_large_output_padding_gradgradcheck(kw):
    rng = numpy.random.default_rng(2)
    x = retrograd.tensor(rng.standard_normal((2, 2, 3, 4)), requires_grad=True)
    w = retrograd.tensor(rng.standard_normal((2, 3, 2, 3)), requires_grad=True)

    def f(x, w):
        return retrograd.nn.functional.conv_transpose2d(x, w, **kw)
    assert retrograd.autograd.gradcheck(f, (x, w))
    assert retrograd.autograd.gradgradcheck(f, (x, w))


def _pool_input(shape, mode, rng):
    x = rng.standard_normal(shape)
    if mode == "ties":
        x = numpy.round(x).clip(0)
    elif mode == "nan":
        x[..., 0, 1] = x[..., 1, 1] = numpy.nan
        x[..., 2, 2] = numpy.nan
    elif mode == "inf":
        x[..., 0, 0], x[..., 1, 0] = -numpy.inf, numpy.inf
    return x


@pytest.mark.torch
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("mode", ["random", "ties", "nan", "inf"])
@pytest.mark.parametrize("shape", [(2, 3, 8, 6), (2, 3, 7, 9), (3, 5, 5)])
def test_max_pool2d_2x2_matches_torch(torch, shape, mode, dtype):
    rng = numpy.random.default_rng(0)
    x = _pool_input(shape, mode, rng).astype(dtype)
    g = None
    res = []
    for T in (torch, retrograd):
        xt = T.from_numpy(x).requires_grad_()
        out, idx = T.nn.functional.max_pool2d(xt, 2, return_indices=True)
        if g is None:
            g = rng.standard_normal(tuple(out.shape)).astype(dtype)
        out.backward(T.from_numpy(g))
        res.append((out.detach().numpy(), idx.numpy(), xt.grad.numpy()))
    (ot, it, gt), (orr, ir, gr) = res
    numpy.testing.assert_array_equal(orr, ot)
    numpy.testing.assert_array_equal(ir, it)
    assert ir.dtype == numpy.int64
    numpy.testing.assert_array_equal(gr, gt)


@pytest.mark.torch
def test_empty_batch_matches_torch(torch):
    res = []
    for T in (torch, retrograd):
        x = T.zeros(0, 3, 6, 6, requires_grad=True)
        w = T.ones(4, 3, 3, 3, requires_grad=True)
        b = T.ones(4, requires_grad=True)
        y = T.nn.functional.max_pool2d(T.nn.functional.conv2d(x, w, b, padding=1), 2)
        y.sum().backward()
        res.append((tuple(y.shape), tuple(x.grad.shape), w.grad.numpy(), b.grad.numpy()))
    (st, xt, wt, bt), (sr, xr, wr, br) = res
    assert (sr, xr) == (st, xt)
    numpy.testing.assert_array_equal(wr, wt)
    numpy.testing.assert_array_equal(br, bt)


@pytest.mark.torch
@pytest.mark.parametrize("shape", [(1, 2, 1, 1), (2, 1, 1), (2, 0, 3), (1, 2, 0, 4), (4, 4)])
@pytest.mark.parametrize("pool", ["max_pool2d", "avg_pool2d"])
def test_pool_rejects_empty_and_too_small_inputs_as_torch(shape, pool):
    torch = pytest.importorskip("torch")
    try:
        getattr(torch.nn.functional, pool)(torch.zeros(shape), 2)
    except (RuntimeError, IndexError) as e:
        expected = e
    if pool == "avg_pool2d" and len(shape) == 2:  # torch fails on indexing there
        expected = RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
    with pytest.raises(RuntimeError) as got:
        getattr(retrograd.nn.functional, pool)(retrograd.zeros(shape), 2)
    assert str(got.value) == str(expected)


def test_pool_keeps_an_empty_batch():
    out = retrograd.nn.functional.max_pool2d(retrograd.zeros(0, 2, 4, 4), 2)
    assert tuple(out.shape) == (0, 2, 2, 2)


# Depthwise convolutions (one input channel per group): their own per-kernel-offset path
# (for a channel multiplier of 2 only the weight gradient; past it the GEMMs).
DEPTHWISE = [
    ("conv2d", (2, 4, 9, 8), (4, 1, 3, 3), {"padding": 1, "groups": 4}),
    ("conv2d", (2, 4, 9, 8), (8, 1, 3, 3), {"groups": 4}),  # channel multiplier 2
    ("conv2d", (2, 3, 10, 9), (3, 1, 7, 7), {"padding": 3, "groups": 3}),
    ("conv2d", (2, 3, 10, 9), (6, 1, 7, 7), {"padding": 3, "groups": 3, "stride": 2}),
    ("conv2d", (2, 4, 9, 8), (4, 1, 3, 3), {"padding": 1, "groups": 4, "stride": 2}),
    ("conv2d", (2, 4, 9, 8), (8, 1, 3, 3), {"padding": 1, "groups": 4, "dilation": 2}),
    ("conv2d", (2, 4, 9, 8), (8, 1, 3, 2),
     {"padding": (0, 1), "groups": 4, "stride": (2, 1), "dilation": (1, 2)}),
    ("conv2d", (2, 4, 9, 8), (8, 1, 2, 3), {"padding": (1, 2), "groups": 4, "stride": (1, 2)}),
    ("conv2d", (2, 4, 5, 6), (4, 1, 3, 3), {"padding": 3, "groups": 4}),  # past the reach
    ("conv2d", (2, 2, 5, 6), (16, 1, 3, 3), {"padding": 1, "groups": 2}),  # multiplier 8
    ("conv1d", (2, 4, 11), (4, 1, 3), {"padding": 1, "groups": 4}),
    ("conv1d", (2, 4, 11), (8, 1, 5), {"padding": 2, "groups": 4, "stride": 2, "dilation": 2}),
    ("conv_transpose2d", (2, 4, 5, 6), (4, 1, 3, 3),
     {"padding": 1, "groups": 4, "stride": 2, "output_padding": 1}),
    ("conv_transpose2d", (2, 8, 5, 6), (8, 1, 3, 3), {"groups": 4, "dilation": 2}),
    ("conv_transpose2d", (2, 4, 5, 6), (4, 1, 3, 2), {"groups": 4, "padding": (1, 0)}),
    ("conv_transpose2d", (2, 4, 5, 6), (4, 1, 3, 3),
     {"groups": 4, "padding": 1, "dilation": 2, "output_padding": 1}),
]


def _compare_depthwise(torch, name, xs, ws, kw, dtype, bias=True, transform=None):
    rng = numpy.random.default_rng(3)
    groups = kw["groups"]
    x = rng.standard_normal(xs).astype(dtype)
    w = rng.standard_normal(ws).astype(dtype)
    b = rng.standard_normal(ws[1] * groups if "transpose" in name else ws[0]).astype(dtype)
    if transform is not None:
        x = transform(x)
    res = []
    for T in (torch, retrograd):
        xt = T.from_numpy(x).requires_grad_()
        wt = T.from_numpy(w).requires_grad_()
        bt = T.from_numpy(b).requires_grad_() if bias else None
        y = getattr(T.nn.functional, name)(xt, wt, bt, **kw)
        g = numpy.random.default_rng(4).standard_normal(tuple(y.shape)).astype(dtype)
        y.backward(T.from_numpy(g))
        res.append((y.detach().numpy(), xt.grad.numpy(), wt.grad.numpy())
                   + ((bt.grad.numpy(),) if bias else ()))
    tol = 1e-10 if dtype == "float64" else 2e-4
    for e, a in zip(*res, strict=True):
        assert a.dtype == e.dtype and a.shape == e.shape
        numpy.testing.assert_allclose(a, e, rtol=tol, atol=tol)
    assert res[1][0].flags.c_contiguous


@pytest.mark.torch
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", range(len(DEPTHWISE)))
def test_depthwise_conv_matches_torch(torch, case, dtype):
    name, xs, ws, kw = DEPTHWISE[case]
    _compare_depthwise(torch, name, xs, ws, kw, dtype, bias=case % 2 == 0)


@pytest.mark.torch
@pytest.mark.parametrize("case", [0, 3, 6, 12])
def test_depthwise_conv_in_image_chunks(torch, monkeypatch, case):
    """Chunks of one image each (and a short last chunk of the default size) match."""
    from retrograd.ops import _conv_numpy as conv
    name, xs, ws, kw = DEPTHWISE[case]
    monkeypatch.setattr(conv, "_DW_CHUNK_BYTES", 1)
    _compare_depthwise(torch, name, (3,) + xs[1:], ws, kw, "float64")


@pytest.mark.torch
@pytest.mark.parametrize("layout", ["transposed", "strided"])
def test_depthwise_conv_noncontiguous_input(torch, layout):
    transform = _noncontiguous(layout)
    _compare_depthwise(torch, "conv2d", (2, 4, 6, 5), (8, 1, 3, 3), {"padding": 1, "groups": 4},
                       "float64", transform=transform)
    _compare_depthwise(torch, "conv2d", (2, 4, 8, 7), (4, 1, 3, 3), {"groups": 4}, "float32",
                       transform=transform)


@pytest.mark.torch
@pytest.mark.parametrize("padding", [0, 1])
def test_depthwise_conv_empty_batch(torch, padding):
    res = []
    for T in (torch, retrograd):
        x = T.zeros(0, 4, 6, 6, requires_grad=True)
        w = T.ones(8, 1, 3, 3, requires_grad=True)
        y = T.nn.functional.conv2d(x, w, padding=padding, groups=4)
        y.sum().backward()
        res.append((tuple(y.shape), tuple(x.grad.shape), w.grad.numpy()))
    assert res[0][:2] == res[1][:2]
    numpy.testing.assert_array_equal(res[1][2], res[0][2])


def test_depthwise_conv_gradcheck():
    rng = numpy.random.default_rng(5)
    x = retrograd.tensor(rng.standard_normal((2, 3, 5, 4)), requires_grad=True)
    w = retrograd.tensor(rng.standard_normal((6, 1, 3, 3)), requires_grad=True)
    b = retrograd.tensor(rng.standard_normal(6), requires_grad=True)

    def f(x, w, b):
        return retrograd.nn.functional.conv2d(x, w, b, padding=1, stride=(1, 2), groups=3)
    assert retrograd.autograd.gradcheck(f, (x, w, b))
    assert retrograd.autograd.gradgradcheck(f, (x, w, b))


@pytest.mark.parametrize("xs, ws, kw", [
    ((2, 3, 5, 4), (3, 1, 3, 3), {"padding": 1, "groups": 3}),
    ((2, 3, 5, 4), (6, 1, 3, 2), {"stride": 2, "dilation": (1, 2), "groups": 3}),
    ((1, 2, 1, 3), (2, 1, 1, 2), {"stride": 2, "groups": 2}),  # multiplier 2 once folded
])
def test_depthwise_conv_vectorized_jacobian(xs, ws, kw):
    """The batched rules fold the batch into the images and into the channel multiplier:
    the vectorized Jacobians (reverse and forward mode) match the row-by-row one."""
    from retrograd.autograd.functional import jacobian
    rng = numpy.random.default_rng(6)
    x = retrograd.tensor(rng.standard_normal(xs))
    w = retrograd.tensor(rng.standard_normal(ws))

    def f(x, w):
        return retrograd.nn.functional.conv2d(x, w, **kw)
    want = jacobian(f, (x, w))
    for strategy in ("reverse-mode", "forward-mode"):
        got = jacobian(f, (x, w), vectorize=True, strategy=strategy)
        for a, e in zip(got, want, strict=True):
            numpy.testing.assert_allclose(a.numpy(), e.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.torch
@pytest.mark.parametrize("xs,ws,kw", [((1, 2, 5, 6), (3, 2, 4, 3), {}),
                                      ((2, 2, 7), (3, 2, 4), {}),
                                      ((1, 2, 5, 6), (3, 2, 2, 2), {"dilation": (1, 3)}),
                                      ((1, 4, 5, 6), (4, 1, 4, 4), {"groups": 4})])
def test_same_padding_with_an_odd_total_matches_torch(torch, xs, ws, kw):
    """torch pads a copy with the extra row/column after (a ConstantPadNd node), then
    convolves with the symmetric part."""
    rng = numpy.random.default_rng(0)
    x, w = rng.standard_normal(xs), rng.standard_normal(ws)
    res = []
    for T in (torch, retrograd):
        xt, wt = T.tensor(x, requires_grad=True), T.tensor(w, requires_grad=True)
        conv = getattr(T.nn.functional, f"conv{len(xs) - 2}d")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            y = conv(xt, wt, padding="same", **kw)
        y.square().sum().backward()
        res.append((y.detach().numpy(), xt.grad.numpy(), wt.grad.numpy(),
                    y.grad_fn.next_functions[0][0].name()))
    for a, b in zip(res[0][:3], res[1][:3], strict=True):
        numpy.testing.assert_allclose(b, a, rtol=1e-10)
    assert res[0][3] == res[1][3] == "ConstantPadNdBackward0"
