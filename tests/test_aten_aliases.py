"""Top-level ``torch.*`` names PyTorch 2.13 has beside ``nn.functional``'s: constants,
``range``, ``empty_strided``, the ATen spellings of the nn ops (``torch.dropout(input, p,
train)``, ``torch.batch_norm(...)``, int reductions), ``polar``, ``complex``,
``chain_matmul`` and the predicates, each run against PyTorch on the same inputs."""

import warnings

import numpy
import pytest

import retrograd
from retrograd.ops import linalg_decomp

pytestmark = pytest.mark.torch


def _raises_like(torch, call):
    """``call(module)`` raises the same exception type and message in both."""
    with pytest.raises(Exception) as t:
        call(torch)
    with pytest.raises(type(t.value)) as r:
        call(retrograd)
    assert str(r.value) == str(t.value)


def _refused_like(torch, call):
    """``call(module)`` raises the same exception type in both (argument-parser errors:
    PyTorch's C++ parser words a missing argument its own way)."""
    with pytest.raises(Exception) as t:
        call(torch)
    with pytest.raises(type(t.value)):
        call(retrograd)


def _grads(*tensors):
    return [t.grad for t in tensors]


# ---- constants ------------------------------------------------------------------------------
def test_constants_match_torch(torch):
    assert (retrograd.pi, retrograd.e) == (torch.pi, torch.e)
    assert retrograd.newaxis is torch.newaxis is None
    assert retrograd.inf == torch.inf and retrograd.nan != retrograd.nan
    assert retrograd.ones(3)[:, retrograd.newaxis].shape == (3, 1)


# ---- range ------------------------------------------------------------------------------------
@pytest.mark.parametrize("args, kw", [
    ((1, 4), {}), ((1, 4, 0.5), {}), ((0, 1, 0.3), {}), ((4, 1, -1), {}), ((1, 1), {}),
    ((0, 2.5), {"dtype": "int64"}), ((1, 4), {"dtype": "uint8"}), ((-1, 1, 0.25), {"dtype":
                                                                                  "float64"}),
    ((1, 3), {"dtype": "float16"}), ((0, 10, 3), {})])
def test_range_matches_torch(torch, assert_matches_torch, args, kw):
    dt = kw.get("dtype")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = torch.range(*args, **({"dtype": getattr(torch, dt)} if dt else {}))
        r = retrograd.range(*args, **({"dtype": getattr(retrograd, dt)} if dt else {}))
    assert_matches_torch(r, t)


def test_range_warns_as_torch_and_takes_tensors(torch, assert_matches_torch):
    with pytest.warns(UserWarning) as rec:
        r = retrograd.range(retrograd.tensor(1), retrograd.tensor(3), requires_grad=True)
    with pytest.warns(UserWarning) as trec:
        t = torch.range(torch.tensor(1), torch.tensor(3), requires_grad=True)
    assert str(rec[0].message) == str(trec[0].message)
    assert rec[0].filename == __file__  # the user's line
    assert r.requires_grad and r.is_leaf
    assert_matches_torch(r, t)
    retrograd.set_default_dtype(retrograd.float64)
    with pytest.warns(UserWarning):
        assert retrograd.range(0, 1).dtype == retrograd.float64


@pytest.mark.parametrize("args, kw", [((1, 4, 0), {}), ((4, 1), {}), ((1, 4, -1), {}),
                                      ((1, float("inf")), {}), ((1, 4), {"dtype": "bool"}),
                                      ((1, 4), {"dtype": "complex64"})])
def test_range_errors_match_torch(torch, args, kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _raises_like(torch, lambda m: m.range(
            *args, **({"dtype": getattr(m, kw["dtype"])} if kw else {})))


# ---- empty_strided --------------------------------------------------------------------------
@pytest.mark.parametrize("size, stride", [
    ((2, 3), (1, 2)), ((2, 3), (3, 1)), ((2, 3), (0, 0)), ((2, 0), (5, 1)), ((), ()),
    ([2, 3], [10, 2]), ((1, 3), (-1, 1)), ((0, 3), (-1, 1)), ((4,), (3,))])
def test_empty_strided_geometry_matches_torch(torch, size, stride):
    t = torch.empty_strided(size, stride)
    r = retrograd.empty_strided(size, stride)
    assert (tuple(r.shape), r.stride(), repr(r.dtype)) == (tuple(t.shape), t.stride(),
                                                          str(t.dtype))
    assert r._base is None and r.storage_offset() == 0
    if 0 not in stride:  # every element is writable memory of its own
        r.fill_(3.0)
        assert (r.numpy() == 3).all()


def test_empty_strided_options_match_torch(torch):
    r = retrograd.empty_strided((2, 3), (1, 2), dtype=retrograd.float64, requires_grad=True)
    t = torch.empty_strided((2, 3), (1, 2), dtype=torch.float64, requires_grad=True)
    assert (r.dtype.name, r.requires_grad, r.is_leaf) == ("float64", True, True)
    assert r.stride() == t.stride()
    retrograd.set_default_dtype(retrograd.float64)
    assert retrograd.empty_strided(size=(2,), stride=(1,)).dtype == retrograd.float64


def test_new_empty_strided_matches_torch(torch):
    for m in (torch, retrograd):
        x = m.zeros(2, dtype=m.int32)
        a = x.new_empty_strided((2, 3), (1, 2))
        b = x.new_empty_strided((2, 3), (3, 1), dtype=m.float16, requires_grad=True)
        assert (a.stride(), str(a.dtype).split(".")[-1]) == ((1, 2), "int32")
        assert (b.stride(), str(b.dtype).split(".")[-1], b.requires_grad) == \
            ((3, 1), "float16", True)


@pytest.mark.parametrize("size, stride", [
    ((2, 3), (1,)), ((2, -1), (1, 1)), ((2, -1), (1,)), ((2, 3), (-1, 1)),
    ((2, 2), (1, -1)), ((2.0, 3), (1, 2)), ((2, 3), (1.5, 2)), ((True, 3), (1, 2)),
    (2, (1,)), ((2, 3), None)])
def test_empty_strided_errors_match_torch(torch, size, stride):
    _raises_like(torch, lambda m: m.empty_strided(size, stride))
    _raises_like(torch, lambda m: m.zeros(1).new_empty_strided(size, stride))


def test_empty_strided_int_refuses_grad_as_torch(torch):
    _raises_like(torch, lambda m: m.empty_strided((2,), (1,), dtype=m.int64,
                                                  requires_grad=True))


# ---- dropout ----------------------------------------------------------------------------------
_DROPOUTS = ("dropout", "dropout_", "alpha_dropout", "alpha_dropout_", "feature_dropout",
             "feature_dropout_", "feature_alpha_dropout", "feature_alpha_dropout_")


@pytest.mark.parametrize("name", _DROPOUTS)
def test_dropout_aliases_off_or_p0_return_the_input(torch, name):
    x = retrograd.randn(3, 4)
    assert getattr(retrograd, name)(x, 0.5, False) is x
    assert getattr(retrograd, name)(x, 0.0, True) is x
    assert getattr(retrograd, name)(x, p=0.5, train=False) is x


@pytest.mark.parametrize("name", _DROPOUTS)
@pytest.mark.parametrize("call", [
    lambda m, f: f(m.ones(3, 4), 1.5, True), lambda m, f: f(m.ones(3, 4), -0.1, False),
    lambda m, f: f(m.arange(3), 0.5, True)])
def test_dropout_alias_errors_match_torch(torch, name, call):
    _raises_like(torch, lambda m: call(m, getattr(m, name)))


@pytest.mark.parametrize("name", _DROPOUTS)
def test_dropout_aliases_take_atens_arguments_only(torch, name):
    _refused_like(torch, lambda m: getattr(m, name)(m.ones(3, 4), 0.5))
    _refused_like(torch, lambda m: getattr(m, name)(m.ones(3, 4), p=0.5, training=True))


@pytest.mark.parametrize("name", ["feature_dropout", "feature_alpha_dropout"])
def test_feature_dropout_needs_two_dims_as_torch(torch, name):
    _raises_like(torch, lambda m: getattr(m, name)(m.ones(3), 0.5, True))


@pytest.mark.parametrize("name", _DROPOUTS)
def test_dropout_aliases_with_p1_match_torch(torch, assert_matches_torch, name):
    r, t = retrograd.randn(2, 3, 4), None
    t = torch.from_numpy(r.numpy().copy())
    assert_matches_torch(getattr(retrograd, name)(r, 1.0, True), getattr(torch, name)(t, 1.0,
                                                                                      True))


def test_dropout_and_feature_dropout_scale_what_they_keep():
    x = retrograd.ones(50, 40, 3)
    y = retrograd.dropout(x, 0.5, True)
    assert set(numpy.unique(y.numpy())) == {0.0, 2.0}
    f = retrograd.feature_dropout(x, 0.25, True).numpy()
    assert set(numpy.unique(f)) == {0.0, numpy.float32(4 / 3)}
    assert (f == f[:, :, :1]).all()  # one draw per (sample, channel)
    z = x.clone()
    assert retrograd.dropout_(z, 0.5, True) is z and set(numpy.unique(z.numpy())) == {0.0, 2.0}


def test_dropout_alias_gradient_is_the_mask():
    x = retrograd.ones(100, requires_grad=True)
    y = retrograd.dropout(x, 0.5, True)
    y.sum().backward()
    numpy.testing.assert_array_equal(x.grad.numpy(), y.detach().numpy())


# ---- normalization ----------------------------------------------------------------------------
@pytest.mark.parametrize("call", [
    lambda m, x, w, b: m.layer_norm(x, [4], w, b, 1e-3, False),
    lambda m, x, w, b: m.layer_norm(x, (4,), weight=w, bias=b, cudnn_enable=True),
    lambda m, x, w, b: m.rms_norm(x, [4], w, 1e-3),
    lambda m, x, w, b: m.rms_norm(x, [4]) * w,
    lambda m, x, w, b: m.group_norm(x.reshape(3, 4, 1), 2, w, b, 1e-5, False),
    lambda m, x, w, b: m.group_norm(x[:1].reshape(1, 4, 1), 4, w, b),  # one value per group
    lambda m, x, w, b: m.batch_norm(x, w, b, None, None, True, 0.1, 1e-5, False),
    lambda m, x, w, b: m.batch_norm(x[:1], w, b, None, None, True, 0.1, 1e-5, False),
    lambda m, x, w, b: m.instance_norm(x.reshape(1, 4, 3), w, b, None, None, True, 0.1, 1e-5,
                                       False),
    lambda m, x, w, b: m.instance_norm(x.reshape(3, 4, 1), w, b, None, None, True, 0.1, 1e-5,
                                       False),
])
def test_norm_aliases_match_torch(torch, to_torch, assert_matches_torch, call):
    x = retrograd.randn(3, 4, requires_grad=True)
    w = retrograd.randn(4, requires_grad=True)
    b = retrograd.randn(4, requires_grad=True)
    tx, tw, tb = to_torch(x, w, b)
    r, t = call(retrograd, x, w, b), call(torch, tx, tw, tb)
    assert_matches_torch(r, t, lambda name: (2e-5, 1e-5))
    g = retrograd.randn(*r.shape)
    r.backward(g)
    t.backward(to_torch(g))
    for a, ta in ((x, tx), (w, tw), (b, tb)):
        if ta.grad is None:
            assert a.grad is None
        else:
            assert_matches_torch(a.grad, ta.grad, lambda name: (1e-4, 1e-4))


def test_batch_and_instance_norm_running_stats_match_torch(torch, to_torch,
                                                           assert_matches_torch):
    x = retrograd.randn(5, 3, 2)
    stats = [retrograd.zeros(3), retrograd.ones(3)]
    t_stats = [s.clone() for s in to_torch(*stats)]
    for m, s, inp in ((retrograd, stats, x), (torch, t_stats, to_torch(x))):
        m.batch_norm(inp, None, None, s[0], s[1], True, 0.3, 1e-5, False)
        m.instance_norm(inp, None, None, s[0], s[1], True, 0.2, 1e-5, False)
    assert_matches_torch(stats, t_stats)
    assert_matches_torch(retrograd.batch_norm(x, None, None, *stats, False, 0.1, 1e-5, False),
                         torch.batch_norm(to_torch(x), None, None, *t_stats, False, 0.1, 1e-5,
                                          False))
    assert_matches_torch(
        retrograd.instance_norm(x, None, None, *stats, False, 0.1, 1e-5, False),
        torch.instance_norm(to_torch(x), None, None, *t_stats, False, 0.1, 1e-5, False))


@pytest.mark.parametrize("call", [
    lambda m: m.batch_norm(m.ones(4, 3), None, None, None, None, False, 0.1, 1e-5, False),
    lambda m: m.batch_norm(m.ones(4, 3), None, None, m.zeros(3), None, False, 0.1, 1e-5,
                           False),
    lambda m: m.instance_norm(m.ones(2, 3, 5), None, None, None, None, False, 0.1, 1e-5,
                              False),
    lambda m: m.layer_norm(m.ones(3, 4), [3]),
    lambda m: m.group_norm(m.ones(2, 4, 3), 3),
])
def test_norm_alias_errors_match_torch(torch, call):
    _raises_like(torch, call)
    _refused_like(torch, lambda m: m.batch_norm(m.ones(4, 3), None, None, None, None, True,
                                                0.1, 1e-5))


def test_batch_norm_alias_takes_nonpositive_eps_as_torch(torch):
    for m in (torch, retrograd):
        assert m.batch_norm(m.ones(4, 3), None, None, m.zeros(3), m.ones(3), True, 0.1, 0.0,
                            False).shape == (4, 3)
    with pytest.raises(ValueError, match="eps must be positive"):
        retrograd.nn.functional.batch_norm(retrograd.ones(4, 3), None, None, training=True,
                                           eps=0.0)


# ---- embedding, bilinear, padding ---------------------------------------------------------------
@pytest.mark.parametrize("kw", [{}, {"padding_idx": 1}, {"padding_idx": -1},
                                {"padding_idx": 9}, {"scale_grad_by_freq": True}])
def test_embedding_alias_takes_weight_first(torch, to_torch, assert_matches_torch, kw):
    w = retrograd.randn(5, 3, requires_grad=True)
    idx = retrograd.tensor([[0, 1, 1], [4, 1, 0]])
    tw, tidx = to_torch(w, idx)
    r, t = retrograd.embedding(w, idx, **kw), torch.embedding(tw, tidx, **kw)
    assert_matches_torch(r, t)
    r.sum().backward()
    t.sum().backward()
    assert_matches_torch(w.grad, tw.grad)


@pytest.mark.parametrize("call", [
    lambda m: m.embedding(m.ones(5, 3), m.tensor([0, 7])),
    lambda m: m.embedding(m.ones(5, 3), m.tensor([0.0, 1.0])),
    lambda m: m.bilinear(m.ones(2, 3), m.ones(2, 4), m.ones(5, 3, 4), m.ones(5), 1)])
def test_embedding_and_bilinear_errors_match_torch(torch, call):
    _raises_like(torch, call)


def test_bilinear_alias_matches_torch(torch, to_torch, assert_matches_torch):
    args = [retrograd.randn(*s, requires_grad=True) for s in ((2, 3), (2, 4), (5, 3, 4), (5,))]
    targs = to_torch(*args)
    r, t = retrograd.bilinear(*args), torch.bilinear(*targs)
    assert_matches_torch(r, t)
    r.sum().backward()
    t.sum().backward()
    assert_matches_torch(_grads(*args), _grads(*targs), lambda name: (1e-5, 1e-5))
    assert_matches_torch(retrograd.bilinear(*args[:3]), torch.bilinear(*targs[:3]))


@pytest.mark.parametrize("pad, kw", [([1, 2], {}), ((1, 2, 0, 1), {"value": 3.0}),
                                     ([-1, 2], {}), ([1, 1, 1, 1], {"value": 2})])
def test_constant_pad_nd_matches_torch(torch, to_torch, assert_matches_torch, pad, kw):
    x = retrograd.randn(3, 4, requires_grad=True)
    tx = to_torch(x)
    r, t = retrograd.constant_pad_nd(x, pad, **kw), torch.constant_pad_nd(tx, pad, **kw)
    assert_matches_torch(r, t)
    (r * r).sum().backward()
    (t * t).sum().backward()
    assert_matches_torch(x.grad, tx.grad)


@pytest.mark.parametrize("pad", [[1, 2, 3], [1, 2, 1, 1, 1, 1]])
def test_constant_pad_nd_errors_match_torch(torch, pad):
    _raises_like(torch, lambda m: m.constant_pad_nd(m.ones(3, 4), pad))


# ---- losses -----------------------------------------------------------------------------------
_LOSSES = {
    "binary_cross_entropy_with_logits": (
        lambda m, a, b, c, red: m.binary_cross_entropy_with_logits(a, b.sigmoid(),
                                                                    reduction=red),
        "reduction"),
    "binary_cross_entropy_with_logits_w": (
        lambda m, a, b, c, red: m.binary_cross_entropy_with_logits(
            a, b.sigmoid(), c.detach().abs(), c[0].detach().abs() + 1, red), None),
    "kl_div": (lambda m, a, b, c, red: m.kl_div(a, b.softmax(-1), red), None),
    "kl_div_log": (lambda m, a, b, c, red: m.kl_div(a, b, reduction=red, log_target=True),
                   None),
    "cosine_embedding_loss": (
        lambda m, a, b, c, red: m.cosine_embedding_loss(a, b, c[:, 0].sign(), 0.1, red), None),
    "margin_ranking_loss": (
        lambda m, a, b, c, red: m.margin_ranking_loss(a, b, c.sign(), 0.2, red), None),
    "hinge_embedding_loss": (
        lambda m, a, b, c, red: m.hinge_embedding_loss(a, c.sign(), 0.5, red), None),
    "poisson_nll_loss": (
        lambda m, a, b, c, red: m.poisson_nll_loss(a, b.abs(), True, False, 1e-8, red), None),
    "poisson_nll_loss_full": (
        lambda m, a, b, c, red: m.poisson_nll_loss(a.abs(), b.abs() + 2, False, True, 1e-6,
                                                   red), None),
}


@pytest.mark.parametrize("name", sorted(_LOSSES))
@pytest.mark.parametrize("reduction", [0, 1, 2, 3])
def test_loss_aliases_with_int_reductions_match_torch(torch, to_torch, assert_matches_torch,
                                                      name, reduction):
    call = _LOSSES[name][0]
    args = [retrograd.randn(3, 4, requires_grad=True) for _ in range(3)]
    targs = to_torch(*args)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # kl_div's 'mean' warning is F's only
        r, t = call(retrograd, *args, reduction), call(torch, *targs, reduction)
    assert_matches_torch(r, t)
    r.sum().backward()
    t.sum().backward()
    assert_matches_torch(_grads(*args), _grads(*targs), lambda name: (1e-5, 1e-5))


@pytest.mark.parametrize("call", [
    lambda m: m.kl_div(m.ones(3), m.ones(3), reduction="mean"),
    lambda m: m.hinge_embedding_loss(m.ones(3), m.ones(3), 1.0, reduction="sum"),
    lambda m: m.kl_div(m.ones(3, dtype=m.int64), m.ones(3), 0)])
def test_loss_alias_errors_match_torch(torch, call):
    _raises_like(torch, call)


@pytest.mark.parametrize("call", [
    lambda m: m.kl_div(m.ones(3), m.ones(3), "mean"),
    lambda m: m.binary_cross_entropy_with_logits(m.ones(3), m.ones(2)),
    lambda m: m.poisson_nll_loss(m.ones(3), m.ones(3))])
def test_loss_aliases_refuse_as_torch(torch, call):
    _refused_like(torch, call)


# ---- complex, polar ---------------------------------------------------------------------------
@pytest.mark.parametrize("fn", ["complex", "polar"])
@pytest.mark.parametrize("dtype, shapes", [("float32", ((2, 3), (2, 3))),
                                           ("float64", ((3,), (2, 1)))])
def test_complex_and_polar_match_torch(torch, to_torch, assert_matches_torch, fn, dtype,
                                       shapes):
    a, b = (retrograd.randn(*s, dtype=getattr(retrograd, dtype)).abs().requires_grad_()
            for s in shapes)  # (polar's abs: PyTorch's gradient assumes it non-negative)
    ta, tb = to_torch(a, b)
    r, t = getattr(retrograd, fn)(a, b), getattr(torch, fn)(ta, tb)
    assert_matches_torch(r, t)
    w = retrograd.randn(*r.shape, 2, dtype=a.dtype)
    (retrograd.view_as_real(r) * w).sum().backward()
    (torch.view_as_real(t) * to_torch(w)).sum().backward()
    assert_matches_torch(_grads(a, b), _grads(ta, tb))


def test_complex_writes_out_as_torch(torch):
    out = retrograd.empty(2, dtype=retrograd.complex64)
    res = retrograd.complex(retrograd.tensor([1.0, 2.0]), retrograd.tensor([3.0, 4.0]), out=out)
    assert res is out and out.numpy().tolist() == [1 + 3j, 2 + 4j]


@pytest.mark.parametrize("fn", ["complex", "polar"])
@pytest.mark.parametrize("call", [
    lambda m, f: f(m.tensor([1.0]), m.tensor([1.0], dtype=m.float64)),
    lambda m, f: f(m.tensor([1]), m.tensor([2])),
    lambda m, f: f(m.tensor([1.0]), 1.0),
    lambda m, f: f(1.0, m.tensor([1.0]))])
def test_complex_and_polar_errors_match_torch(torch, fn, call):
    _raises_like(torch, lambda m: call(m, getattr(m, fn)))


# ---- chain_matmul, predicates -----------------------------------------------------------------
def test_chain_matmul_matches_torch(torch, to_torch, assert_matches_torch, monkeypatch):
    mats = [retrograd.randn(*s, requires_grad=True) for s in ((2, 3), (3, 4), (4, 5))]
    tmats = to_torch(*mats)
    monkeypatch.setattr(linalg_decomp, "_chain_matmul_warned", False)
    with pytest.warns(UserWarning, match="torch.chain_matmul is deprecated") as rec:
        r = retrograd.chain_matmul(*mats)
    assert rec[0].filename == __file__
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # once a process, as TORCH_WARN_ONCE
        retrograd.chain_matmul(*mats[:2])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = torch.chain_matmul(*tmats)
        one_r, one_t = retrograd.chain_matmul(mats[0]), torch.chain_matmul(tmats[0])
    assert_matches_torch(r, t)
    assert one_r is not mats[0]
    assert_matches_torch(one_r, one_t)
    r.sum().backward()
    t.sum().backward()
    assert_matches_torch(_grads(*mats), _grads(*tmats))


@pytest.mark.parametrize("call", [
    lambda m: m.chain_matmul(), lambda m: m.chain_matmul(m.ones(2, 3), m.ones(4, 4)),
    lambda m: m.chain_matmul(m.ones(2, 3, 3), m.ones(3, 4))])
def test_chain_matmul_errors_match_torch(torch, call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _raises_like(torch, call)


def test_is_inference_and_get_device_match_torch(torch):
    for m in (torch, retrograd):
        x = m.ones(2)
        with m.inference_mode():
            y = m.ones(2)
        assert (m.is_inference(x), m.is_inference(y)) == (False, True)
        assert m.get_device(x) == x.get_device() == -1
