"""nn.functional against PyTorch: values, gradients (same cotangent) and grad_fn names."""

import numpy
import pytest

import retrograd
import retrograd.nn.functional as F

from _nn_util import assert_close, compare_backward, pair

pytestmark = pytest.mark.torch
torch = pytest.importorskip("torch")
TF = torch.nn.functional


def _check(fn_r, fn_t, shapes, kwargs=(), grad_fn=True, atol=1e-6, rtol=1e-5,
           extra=(), low=-2.0, high=2.0):
    kwargs = dict(kwargs)
    rs, ts = zip(*(pair(*s, seed=i, low=low, high=high) for i, s in enumerate(shapes)),
                 strict=True)
    r = fn_r(*rs, *extra[0], **kwargs) if extra else fn_r(*rs, **kwargs)
    t = fn_t(*ts, *extra[1], **kwargs) if extra else fn_t(*ts, **kwargs)
    assert_close(r, t, atol, rtol)
    if grad_fn:
        assert type(r.grad_fn).__name__ == type(t.grad_fn).__name__
    compare_backward(r, t, rs, ts, atol, rtol)


@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax(name, dim):
    _check(getattr(F, name), getattr(TF, name), [(3, 4, 5)], {"dim": dim})


def test_softmax_large_values_stable():
    x = retrograd.tensor([[1000.0, 0.0, -1000.0]])
    assert numpy.isfinite(F.log_softmax(x, 1).numpy()).all()
    assert_close(F.softmax(x, 1), TF.softmax(torch.tensor([[1000.0, 0.0, -1000.0]]), 1))


@pytest.mark.parametrize("case", [
    dict(), dict(stride=2), dict(padding=1), dict(dilation=2, padding=2),
    dict(stride=(2, 1), padding=(0, 1)), dict(groups=2), dict(groups=4, padding=1)])
def test_conv2d(case):
    g = case.get("groups", 1)
    _check(F.conv2d, TF.conv2d, [(2, 4, 7, 6), (4, 4 // g, 3, 3), (4,)], case)


def test_conv2d_no_bias_and_unbatched():
    _check(F.conv2d, TF.conv2d, [(2, 3, 5, 5), (2, 3, 2, 2)])
    _check(F.conv2d, TF.conv2d, [(3, 5, 5), (2, 3, 2, 2)], grad_fn=False)


@pytest.mark.parametrize("case", [dict(), dict(stride=2, padding=1), dict(dilation=2),
                                  dict(groups=3)])
def test_conv1d(case):
    g = case.get("groups", 1)
    _check(F.conv1d, TF.conv1d, [(2, 3, 9), (6, 3 // g, 3), (6,)], case)


@pytest.mark.parametrize("case", [dict(), dict(stride=2), dict(stride=2, padding=1,
                                                               output_padding=1),
                                  dict(dilation=2), dict(groups=2)])
def test_conv_transpose2d(case):
    g = case.get("groups", 1)
    _check(F.conv_transpose2d, TF.conv_transpose2d, [(2, 4, 5, 4), (4, 6 // g, 3, 3), (6,)],
           case)


def test_conv2d_double_backward():
    rx, tx = pair(1, 2, 5, 5)
    rw, tw = pair(3, 2, 3, 3, seed=1)
    rg = retrograd.autograd.grad(F.conv2d(rx, rw, padding=1).square().sum(), (rx, rw),
                                 create_graph=True)
    tg = torch.autograd.grad(TF.conv2d(tx, tw, padding=1).square().sum(), (tx, tw),
                             create_graph=True)
    for a, b in zip(rg, tg, strict=True):
        assert_close(a, b)
    rs = sum((g * g).sum() for g in rg)
    ts = sum((g * g).sum() for g in tg)
    rs.backward()
    ts.backward()
    assert_close(rx.grad, tx.grad, 1e-5)
    assert_close(rw.grad, tw.grad, 1e-5)


@pytest.mark.parametrize("case", [dict(kernel_size=2), dict(kernel_size=3, stride=2),
                                  dict(kernel_size=3, stride=1, padding=1),
                                  dict(kernel_size=2, dilation=2),
                                  dict(kernel_size=3, stride=2, ceil_mode=True)])
def test_max_pool2d(case):
    _check(F.max_pool2d, TF.max_pool2d, [(2, 3, 7, 8)], case)


def test_max_pool2d_ties_pick_first():
    x = numpy.zeros((1, 1, 4, 4))
    x[0, 0, 1, 1] = x[0, 0, 0, 1] = 1.0
    _, ri = F.max_pool2d(retrograd.from_numpy(x), 2, return_indices=True)
    _, ti = TF.max_pool2d(torch.from_numpy(x), 2, return_indices=True)
    numpy.testing.assert_array_equal(ri.numpy(), ti.numpy())


def test_max_pool2d_indices():
    rx, tx = pair(2, 3, 6, 6)
    _, ri = F.max_pool2d(rx, 3, 2, 1, return_indices=True)
    _, ti = TF.max_pool2d(tx, 3, 2, 1, return_indices=True)
    numpy.testing.assert_array_equal(ri.numpy(), ti.numpy())


@pytest.mark.parametrize("case", [dict(kernel_size=2), dict(kernel_size=3, stride=2),
                                  dict(kernel_size=3, stride=1, padding=1),
                                  dict(kernel_size=3, padding=1, count_include_pad=False),
                                  dict(kernel_size=3, stride=2, ceil_mode=True),
                                  dict(kernel_size=2, divisor_override=3)])
def test_avg_pool2d(case):
    _check(F.avg_pool2d, TF.avg_pool2d, [(2, 3, 7, 8)], case)


@pytest.mark.parametrize("size", [1, (3, 2), (7, 4), (None, 3)])
def test_adaptive_avg_pool2d(size):
    _check(F.adaptive_avg_pool2d, TF.adaptive_avg_pool2d, [(2, 3, 7, 8)], {"output_size": size})


def test_layer_norm():
    _check(lambda x, w, b: F.layer_norm(x, (5,), w, b),
           lambda x, w, b: TF.layer_norm(x, (5,), w, b), [(3, 4, 5), (5,), (5,)])
    _check(lambda x: F.layer_norm(x, (4, 5)), lambda x: TF.layer_norm(x, (4, 5)), [(3, 4, 5)])


def test_group_norm():
    _check(lambda x, w, b: F.group_norm(x, 2, w, b),
           lambda x, w, b: TF.group_norm(x, 2, w, b), [(3, 4, 5, 2), (4,), (4,)])


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("shape", [(4, 3), (4, 3, 5), (4, 3, 2, 5)])
def test_batch_norm(shape, training):
    c = shape[1]
    rng = numpy.random.default_rng(5)
    rm, rv = rng.standard_normal(c), rng.uniform(0.5, 2, c)
    r_rm, r_rv = retrograd.from_numpy(rm.copy()), retrograd.from_numpy(rv.copy())
    t_rm, t_rv = torch.from_numpy(rm.copy()), torch.from_numpy(rv.copy())
    _check(lambda x, w, b: F.batch_norm(x, r_rm, r_rv, w, b, training),
           lambda x, w, b: TF.batch_norm(x, t_rm, t_rv, w, b, training),
           [shape, (c,), (c,)])
    assert_close(r_rm, t_rm)
    assert_close(r_rv, t_rv)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu(approximate):
    _check(F.gelu, TF.gelu, [(4, 5)], {"approximate": approximate})


def test_silu():
    _check(F.silu, TF.silu, [(4, 5)], low=-30, high=30)


def test_linear_and_bilinear():
    _check(F.linear, TF.linear, [(3, 4), (5, 4), (5,)])
    _check(F.linear, TF.linear, [(2, 3, 4), (5, 4)], grad_fn=False)
    _check(F.bilinear, TF.bilinear, [(3, 4), (3, 2), (5, 4, 2), (5,)], grad_fn=False)


def test_embedding():
    idx = numpy.array([[0, 2, 2], [3, 1, 0]])
    for pad in (None, 2):
        rw, tw = pair(4, 3)
        r = F.embedding(retrograd.from_numpy(idx), rw, padding_idx=pad)
        t = TF.embedding(torch.from_numpy(idx), tw, padding_idx=pad)
        assert_close(r, t)
        assert type(r.grad_fn).__name__ == type(t.grad_fn).__name__
        compare_backward(r, t, [rw], [tw])


def _targets(shape, c, ignore=False, seed=3):
    t = numpy.random.default_rng(seed).integers(0, c, shape)
    if ignore:
        t.flat[::3] = -100
    return retrograd.from_numpy(t.copy()), torch.from_numpy(t.copy())


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("shape", [(5, 4), (3, 4, 2, 3), (4,), (3, 4, 5)])
@pytest.mark.parametrize("opts", [{}, {"ignore": True}, {"weight": True},
                                  {"label_smoothing": 0.1},
                                  {"label_smoothing": 0.2, "weight": True, "ignore": True}])
def test_cross_entropy(shape, reduction, opts):
    c = shape[0] if len(shape) == 1 else shape[1]
    tshape = () if len(shape) == 1 else shape[:1] + shape[2:]
    rt, tt = _targets(tshape, c, opts.get("ignore") and len(shape) > 1)
    kw = {"reduction": reduction, "label_smoothing": opts.get("label_smoothing", 0.0)}
    extra = ((rt,), (tt,))
    if opts.get("weight"):
        w = numpy.random.default_rng(9).uniform(0.5, 2, c)
        extra = ((rt, retrograd.from_numpy(w)), (tt, torch.from_numpy(w)))
    # PyTorch views a 3-d input's unreduced loss back (ViewBackward0): names differ there
    names = not kw["label_smoothing"] and not (len(shape) == 3 and reduction == "none")
    _check(F.cross_entropy, TF.cross_entropy, [shape], kw, extra=extra, grad_fn=names)
    if not kw["label_smoothing"]:
        _check(lambda x, *a, **k: F.nll_loss(F.log_softmax(x, 0 if len(shape) == 1 else 1),
                                             *a, reduction=reduction),
               lambda x, *a, **k: TF.nll_loss(TF.log_softmax(x, 0 if len(shape) == 1 else 1),
                                              *a, reduction=reduction),
               [shape], extra=extra, grad_fn=names)


@pytest.mark.parametrize("smoothing", [0.0, 0.25])
def test_cross_entropy_probabilities(smoothing):
    p = numpy.random.default_rng(4).dirichlet(numpy.ones(4), 5)
    _check(F.cross_entropy, TF.cross_entropy, [(5, 4)], {"label_smoothing": smoothing},
           extra=((retrograd.from_numpy(p),), (torch.from_numpy(p),)), grad_fn=False)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("name", ["mse_loss", "l1_loss", "smooth_l1_loss"])
def test_regression_losses(name, reduction):
    _check(getattr(F, name), getattr(TF, name), [(3, 4), (3, 4)], {"reduction": reduction})


def test_smooth_l1_beta():
    _check(F.smooth_l1_loss, TF.smooth_l1_loss, [(3, 4), (3, 4)], {"beta": 0.5})


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_binary_cross_entropy(reduction):
    _check(F.binary_cross_entropy, TF.binary_cross_entropy, [(3, 4), (3, 4)],
           {"reduction": reduction}, low=0.05, high=0.95)
    w = numpy.random.default_rng(2).uniform(0.5, 2, (3, 4))
    _check(lambda x, t, w: F.binary_cross_entropy(x, t, w),
           lambda x, t, w: TF.binary_cross_entropy(x, t, w), [(3, 4), (3, 4)],
           low=0.05, high=0.95, extra=((retrograd.from_numpy(w),), (torch.from_numpy(w),)))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_binary_cross_entropy_with_logits(reduction):
    _check(F.binary_cross_entropy_with_logits, TF.binary_cross_entropy_with_logits,
           [(3, 4), (3, 4)], {"reduction": reduction})
    rng = numpy.random.default_rng(2)
    w, pw = rng.uniform(0.5, 2, (3, 4)), rng.uniform(0.5, 2, 4)
    _check(lambda x, t, w, pw: F.binary_cross_entropy_with_logits(x, t, w, pos_weight=pw),
           lambda x, t, w, pw: TF.binary_cross_entropy_with_logits(x, t, w, pos_weight=pw),
           [(3, 4), (3, 4)], low=0.1, high=2, extra=(
               (retrograd.from_numpy(w), retrograd.from_numpy(pw)),
               (torch.from_numpy(w), torch.from_numpy(pw))))


def test_pad():
    _check(lambda x: F.pad(x, (1, 2)), lambda x: TF.pad(x, (1, 2)), [(2, 3)], grad_fn=False)
    _check(lambda x: F.pad(x, (1, 0, -1, 2), value=3.0),
           lambda x: TF.pad(x, (1, 0, -1, 2), value=3.0), [(2, 3, 4)], grad_fn=False)


@pytest.mark.parametrize("causal", [False, True])
def test_scaled_dot_product_attention(causal):
    _check(F.scaled_dot_product_attention, TF.scaled_dot_product_attention,
           [(2, 3, 5, 4), (2, 3, 6, 4), (2, 3, 6, 4)] if not causal else
           [(2, 3, 5, 4)] * 3, {"is_causal": causal}, grad_fn=False)


def test_sdpa_masks():
    mask = numpy.random.default_rng(0).random((5, 6)) > 0.3
    mask[:, 0] = True
    _check(F.scaled_dot_product_attention, TF.scaled_dot_product_attention,
           [(2, 5, 4), (2, 6, 4), (2, 6, 4)], grad_fn=False,
           extra=((retrograd.from_numpy(mask),), (torch.from_numpy(mask),)))


@pytest.mark.parametrize("causal", [False, True])
def test_sdpa_query_of_minus_infinity_attends_to_nothing_as_pytorch(causal):
    """A query whose scores are all -inf without a mask (a -inf in it, the keys' matching
    parts positive) gives zeros and no gradient, as PyTorch's safe softmax: softmax alone
    gave NaN."""
    rng = numpy.random.default_rng(0)
    q, k, v = (rng.standard_normal((2, 4, 3)).astype(numpy.float32) for _ in range(3))
    q[0, 1, 0] = q[1, 3, 0] = -numpy.inf
    k[..., 0] = numpy.abs(k[..., 0]) + 0.1
    grad = rng.standard_normal((2, 4, 3)).astype(numpy.float32)
    results = []
    for lib, f in ((retrograd, F), (torch, TF)):
        ins = [lib.tensor(a, requires_grad=True) for a in (q, k, v)]
        out = f.scaled_dot_product_attention(*ins, is_causal=causal)
        out.backward(lib.tensor(grad))
        results.append([out.detach().numpy()] + [t.grad.numpy() for t in ins])
    assert not results[0][0][0, 1].any() and not results[0][1][0, 1].any()
    for ours, theirs in zip(*results, strict=True):
        numpy.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("mask_shape,causal", [((6, 7), False), ((6, 7), True),
                                                ((2, 1, 6, 7), False), ((1, 7), True)])
def test_sdpa_boolean_masks_as_pytorch(mask_shape, causal):
    """A boolean mask of the scores' (L, S) (the compiled kernel's), broadcast over the
    batch and heads, or of another broadcastable shape (the rule's), with is_causal too;
    a query whose keys are all masked out gets zeros."""
    rng = numpy.random.default_rng(1)
    q = rng.standard_normal((2, 3, 6, 5)).astype(numpy.float32)
    k, v = (rng.standard_normal((2, 3, 7, 5)).astype(numpy.float32) for _ in range(2))
    mask = rng.random(mask_shape) > 0.4
    if mask_shape[-2] > 1:
        mask[..., 1, :] = False
    grad = rng.standard_normal((2, 3, 6, 5)).astype(numpy.float32)
    results = []
    for lib, f in ((retrograd, F), (torch, TF)):
        ins = [lib.tensor(a, requires_grad=True) for a in (q, k, v)]
        out = f.scaled_dot_product_attention(*ins, attn_mask=lib.tensor(mask),
                                             is_causal=causal)
        out.backward(lib.tensor(grad))
        results.append([out.detach().numpy()] + [t.grad.numpy() for t in ins])
    for ours, theirs in zip(*results, strict=True):
        numpy.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)


def test_one_hot():
    t = numpy.array([0, 3, 1])
    assert (F.one_hot(retrograd.from_numpy(t)).numpy() ==
            TF.one_hot(torch.from_numpy(t)).numpy()).all()
    assert F.one_hot(retrograd.from_numpy(t), 5).shape == (3, 5)


def test_dropout():
    x = retrograd.ones(1000, requires_grad=True)
    y = F.dropout(x, 0.3)
    kept = y.detach().numpy() != 0
    assert 0.6 < kept.mean() < 0.8
    numpy.testing.assert_allclose(y.detach().numpy()[kept], 1 / 0.7, rtol=1e-6)
    y.sum().backward()
    numpy.testing.assert_allclose(x.grad.numpy(), y.detach().numpy())
    assert F.dropout(x, 0.3, training=False) is x
    with pytest.raises(ValueError, match="dropout probability"):
        F.dropout(x, 1.5)


@pytest.mark.torch
@pytest.mark.parametrize("kernel,stride,padding,dilation", [(2, 2, 0, 1), (3, 2, 1, 1),
                                                             (3, 1, 1, 2), (2, 1, 0, 1)])
def test_max_pool2d_indices_with_nan_and_ties_match_torch(kernel, stride, padding, dilation):
    """A window's index is PyTorch CPU's: the first maximum, or the last NaN."""
    x = numpy.random.default_rng(0).integers(-2, 3, (2, 3, 9, 9)).astype(numpy.float32)
    x[0, 0, 1, 1] = x[0, 0, 1, 2] = x[1, 1, 0, 0] = numpy.nan
    args = (kernel, stride, padding, dilation)
    ours = F.max_pool2d(retrograd.from_numpy(x), *args, return_indices=True)
    ref = torch.nn.functional.max_pool2d(torch.from_numpy(x), *args, return_indices=True)
    numpy.testing.assert_array_equal(ours[0].numpy(), ref[0].numpy())
    numpy.testing.assert_array_equal(ours[1].numpy(), ref[1].numpy())


@pytest.mark.parametrize("contiguous", [True, False])
def test_max_pool2d_value_is_the_input_at_its_index(contiguous):
    """On a tie of 0 and -0 the value is the input at the chosen index, sign and all, as
    PyTorch's (NumPy's maximum kept either zero; a strided view takes the NumPy rule)."""
    x = numpy.random.default_rng(1).choice(numpy.float32([0.0, -0.0, 0.0, -1.0]), (2, 3, 8, 9))
    ours, ref = retrograd.from_numpy(x), torch.from_numpy(x)
    if not contiguous:
        ours, ref = ours[..., :7], ref[..., :7]
    got = F.max_pool2d(ours, (2, 2), 1, return_indices=True)
    want = TF.max_pool2d(ref, (2, 2), 1, return_indices=True)
    numpy.testing.assert_array_equal(got[1].numpy(), want[1].numpy())
    assert (numpy.signbit(got[0].numpy()) == numpy.signbit(want[0].numpy())).all()


@pytest.mark.parametrize("p", [-0.1, float("nan"), 0.0])
def test_sdpa_takes_a_dropout_probability_it_does_not_use(p):
    """PyTorch checks dropout_p where it drops out (above 0): below, or NaN, it computes."""
    q = numpy.random.default_rng(0).standard_normal((2, 3, 4))
    ours = F.scaled_dot_product_attention(*(retrograd.from_numpy(q),) * 3, dropout_p=p)
    theirs = TF.scaled_dot_product_attention(*(torch.from_numpy(q),) * 3, dropout_p=p)
    numpy.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)
