"""The 1-D/3-D pooling and convolution layers, unpooling and power-average pooling against
PyTorch with copied weights (state_dict keys, repr, outputs, gradients), and the
top-level ``torch.<name>`` functions."""

import numpy
import pytest

import retrograd
import retrograd.nn as nn
import retrograd.nn.functional as F

from _nn_util import assert_close, copy_weights, pair

pytestmark = pytest.mark.torch
torch = pytest.importorskip("torch")
tnn = torch.nn

LAYERS = [
    ("Conv3d", (2, 4, 3), {"padding": 1}, (2, 2, 4, 5, 4)),
    ("Conv3d", (4, 6, (1, 2, 3)), {"stride": 2, "groups": 2, "bias": False, "dilation": 2},
     (1, 4, 5, 6, 7)),
    ("Conv3d", (2, 3, 2), {"padding": "same"}, (1, 2, 4, 4, 3)),
    ("Conv3d", (2, 3, 3), {"padding": 1, "padding_mode": "circular"}, (1, 2, 4, 4, 3)),
    ("Conv3d", (2, 3, 3), {"padding": (1, 0, 1), "padding_mode": "replicate"}, (2, 4, 4, 3)),
    ("ConvTranspose1d", (4, 3, 3), {"stride": 2, "padding": 1, "output_padding": 1},
     (2, 4, 5)),
    ("ConvTranspose1d", (4, 2, 2), {"groups": 2, "dilation": 2, "bias": False}, (4, 6)),
    ("ConvTranspose3d", (4, 2, 3), {"stride": 2, "padding": 1, "output_padding": 1},
     (1, 4, 3, 2, 3)),
    ("ConvTranspose3d", (4, 6, (2, 1, 2)), {"groups": 2, "dilation": 2}, (1, 4, 2, 3, 2)),
    ("MaxPool1d", (3, 2, 1), {"dilation": 2, "ceil_mode": True}, (2, 3, 9)),
    ("MaxPool3d", ((2, 3, 2),), {}, (2, 2, 4, 6, 5)),
    ("MaxPool3d", (3, 2, 1), {"return_indices": True}, (1, 2, 5, 5, 5)),
    ("AvgPool1d", (3, 2, 1), {"ceil_mode": True, "count_include_pad": False}, (2, 3, 8)),
    ("AvgPool3d", (3, 2, 1), {"divisor_override": 5}, (1, 2, 5, 4, 5)),
    ("AdaptiveAvgPool1d", (3,), {}, (2, 3, 7)),
    ("AdaptiveAvgPool3d", ((2, None, 3),), {}, (2, 2, 5, 4, 7)),
    ("AdaptiveMaxPool1d", (3,), {"return_indices": True}, (2, 3, 7)),
    ("AdaptiveMaxPool2d", ((2, 3),), {}, (2, 3, 5, 7)),
    ("AdaptiveMaxPool3d", (2,), {}, (1, 2, 5, 3, 4)),
    ("LPPool1d", (2, 3), {}, (2, 3, 7)),
    ("LPPool2d", (1.5, 2, 1), {"ceil_mode": True}, (2, 3, 5, 5)),
    ("LPPool3d", (3, 2), {}, (1, 2, 4, 4, 4)),
]


@pytest.mark.parametrize("name,args,kwargs,shape", LAYERS,
                         ids=[f"{n}-{i}" for i, (n, *_r) in enumerate(LAYERS)])
def test_layer_matches_torch(name, args, kwargs, shape):
    t = getattr(tnn, name)(*args, **kwargs).double()
    r = getattr(nn, name)(*args, **kwargs).double()
    assert list(r.state_dict()) == list(t.state_dict())
    assert repr(r) == repr(t)
    copy_weights(t, r)
    low = 0.1 if name.startswith("LP") else -2.0
    rx, tx = pair(*shape, low=low)
    ro, to = r(rx), t(tx)
    if isinstance(to, tuple):
        assert numpy.array_equal(ro[1].numpy(), to[1].numpy())
        ro, to = ro[0], to[0]
    assert ro.grad_fn.name() == to.grad_fn.name()
    assert_close(ro, to, 1e-8, 1e-7)
    g = numpy.random.default_rng(7).standard_normal(tuple(to.shape))
    ro.backward(retrograd.from_numpy(g))
    to.backward(torch.from_numpy(g))
    assert_close(rx.grad, tx.grad, 1e-8, 1e-7)
    for p, q in zip(r.parameters(), t.parameters(), strict=True):
        assert_close(p.grad, q.grad, 1e-8, 1e-7)


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_max_unpool_module_roundtrip(nd):
    pool_r = getattr(nn, f"MaxPool{nd}d")(2, return_indices=True)
    pool_t = getattr(tnn, f"MaxPool{nd}d")(2, return_indices=True)
    unpool_r, unpool_t = getattr(nn, f"MaxUnpool{nd}d")(2), getattr(tnn, f"MaxUnpool{nd}d")(2)
    assert repr(unpool_r) == repr(unpool_t)
    rx, tx = pair(2, 3, *(5,) * nd)
    size = [2, 3] + [5] * nd
    ro = unpool_r(*pool_r(rx), output_size=size)
    to = unpool_t(*pool_t(tx), output_size=size)
    assert ro.grad_fn.name() == to.grad_fn.name()
    assert_close(ro, to)
    ro.sum().backward()
    to.sum().backward()
    assert_close(rx.grad, tx.grad)


@pytest.mark.parametrize("name,shape,size", [
    ("ConvTranspose1d", (2, 4, 5), [10]), ("ConvTranspose2d", (4, 3, 5), [6, 10]),
    ("ConvTranspose3d", (1, 4, 3, 2, 3), [1, 2, 6, 4, 5])])
def test_conv_transpose_output_size(name, shape, size):
    t = getattr(tnn, name)(4, 2, 3, stride=2, padding=1).double()
    r = getattr(nn, name)(4, 2, 3, stride=2, padding=1).double()
    copy_weights(t, r)
    rx, tx = pair(*shape)
    assert_close(r(rx, output_size=size), t(tx, output_size=size))
    bad = [s + 5 for s in size]
    with pytest.raises(ValueError) as expected:
        t(tx, output_size=bad)
    with pytest.raises(ValueError) as actual:
        r(rx, output_size=bad)
    assert str(actual.value) == str(expected.value)


def test_toplevel_functions():
    rx, tx = pair(2, 3, 9)
    for name, args in [("max_pool1d", (3, 2, 1)), ("avg_pool1d", (3, 2)),
                       ("adaptive_avg_pool1d", (4,))]:
        assert_close(getattr(retrograd, name)(rx, *args), getattr(torch, name)(tx, *args))
    for name in ("adaptive_max_pool1d", "max_pool1d_with_indices"):
        (ro, ri), (to, ti) = getattr(retrograd, name)(rx, 4), getattr(torch, name)(tx, 4)
        assert_close(ro, to)
        assert numpy.array_equal(ri.numpy(), ti.numpy())
    r4, t4 = pair(1, 3, 6, 6)
    assert_close(retrograd.max_pool2d(r4, 2), torch.max_pool2d(t4, 2))
    r5, t5 = pair(1, 3, 4, 4, 4)
    assert_close(retrograd.max_pool3d(r5, 2), torch.max_pool3d(t5, 2))
    for name, x, w in [("conv1d", rx, (4, 3, 2)), ("conv2d", r4, (4, 3, 2, 2)),
                       ("conv3d", r5, (4, 3, 2, 2, 2)), ("conv_transpose1d", rx, (3, 4, 2)),
                       ("conv_transpose2d", r4, (3, 4, 2, 2)),
                       ("conv_transpose3d", r5, (3, 4, 2, 2, 2))]:
        rw, tw = pair(*w, seed=3)
        tx_ = torch.from_numpy(x.detach().numpy())
        assert_close(getattr(retrograd, name)(x, rw, None, 2),
                     getattr(torch, name)(tx_, tw, None, 2))


def test_conv3d_double_backward():
    """create_graph through conv3d and avg_pool3d: second derivatives equal PyTorch's."""
    rx, tx = pair(1, 2, 4, 4, 3)
    rw, tw = pair(3, 2, 2, 2, 2, seed=1)
    outs = []
    for lib, fn, x, w in ((retrograd, F, rx, rw), (torch, tnn.functional, tx, tw)):
        y = fn.avg_pool3d(fn.conv3d(x, w, padding=1) ** 2, 2, 1)
        gx, gw = lib.autograd.grad(y.sum(), (x, w), create_graph=True)
        (gx.sum() + (gw ** 2).sum()).backward()
        outs.append((x.grad, w.grad))
    assert_close(outs[0][0], outs[1][0])
    assert_close(outs[0][1], outs[1][1])


@pytest.mark.parametrize("name,shape,args", [
    ("adaptive_max_pool2d", (1, 2, 5, 7), ((2, 3),)),
    ("adaptive_max_pool3d", (1, 1, 5, 3, 4), (3,)),
    ("max_pool3d", (1, 2, 4, 5, 4), (3, 2, 1)),
    ("max_pool1d", (2, 3, 9), (3, 2, 1))])
def test_max_pooling_nan_indices(name, shape, args):
    """NaNs win, and the index is the last NaN of the window, as PyTorch's kernels."""
    a = numpy.random.default_rng(0).standard_normal(shape)
    a.reshape(-1)[::3] = numpy.nan
    ro, ri = getattr(F, name)(retrograd.from_numpy(a), *args, return_indices=True)
    to, ti = getattr(tnn.functional, name)(torch.from_numpy(a), *args, return_indices=True)
    numpy.testing.assert_array_equal(ro.numpy(), to.numpy())
    numpy.testing.assert_array_equal(ri.numpy(), ti.numpy())


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_adaptive_max_with_indices(nd):
    rx, tx = pair(2, 3, *(7,) * nd)
    name = f"adaptive_max_pool{nd}d_with_indices"
    (ro, ri), (to, ti) = getattr(F, name)(rx, 3), getattr(tnn.functional, name)(tx, 3)
    assert_close(ro, to)
    numpy.testing.assert_array_equal(ri.numpy(), ti.numpy())
    assert ro.grad_fn.name() == to.grad_fn.name()


@pytest.mark.torch
@pytest.mark.parametrize("nd", [1, 2, 3])
def test_max_pool_window_wholly_in_padding(nd, torch):
    """A dilated ceil_mode window can hold no input element (positions -1, 1, 3 of a
    length-1 dim): its max is -inf, as PyTorch's; its index is -1 and it sends no gradient.
    (PyTorch's index there points outside the plane, and its backward corrupts the heap:
    only its forward is compared.)"""
    shape = (2, 3) + (1,) * nd
    x = numpy.random.default_rng(0).standard_normal(shape).astype("float32")
    fn = ("max_pool1d", "max_pool2d", "max_pool3d")[nd - 1]
    kw = dict(padding=1, ceil_mode=True, dilation=2, return_indices=True)
    expected, _ = getattr(torch.nn.functional, fn)(torch.tensor(x), 3, **kw)
    r = retrograd.tensor(x, requires_grad=True)
    out, idx = getattr(F, fn)(r, 3, **kw)
    assert out.shape == tuple(expected.shape)
    numpy.testing.assert_array_equal(out.detach().numpy(), expected.numpy())
    assert (idx.numpy() == -1).all()
    out.sum().backward()
    assert not r.grad.numpy().any()


@pytest.mark.torch
@pytest.mark.parametrize("nd", [1, 2, 3])
def test_max_pool_all_minus_inf_window_points_at_its_first_input(nd, torch):
    """A padded window whose inputs are all -inf is no greater than its -inf padding: PyTorch
    starts each window's index at its first input, so that input gets the gradient (the
    index pointed at the padding before, and the gradient went to another element)."""
    x = numpy.full((2, 3) + (4,) * nd, -numpy.inf, dtype="float32")
    x.reshape(-1)[::5] = numpy.arange(x.size)[::5]
    fn = ("max_pool1d", "max_pool2d", "max_pool3d")[nd - 1]
    kw = dict(padding=1, stride=2, dilation=2, return_indices=True)
    got = []
    for lib in (retrograd, torch):
        t = lib.tensor(x, requires_grad=True)
        out, idx = getattr(lib.nn.functional, fn)(t, 2, **kw)
        out.backward(lib.ones(out.shape))
        got.append((out.detach().numpy(), idx.numpy(), t.grad.numpy()))
    for r, t in zip(*got, strict=True):
        numpy.testing.assert_array_equal(r, t)
