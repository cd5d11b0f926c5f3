"""MultiheadAttention (kdim/vdim, bias_kv, zero attention), PyTorch's functional
multi_head_attention_forward, and the Transformer decoder and whole Transformer: outputs,
attention weights and every gradient against PyTorch with the same weights."""

import itertools

import numpy
import pytest

import retrograd
from retrograd import nn

from _nn_util import assert_close, copy_weights, pair

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch


def _twin(cls_name, *args, seed=0, **kwargs):
    """The same module in both libraries, float64, torch's weights copied over."""
    torch.manual_seed(seed)
    t = getattr(torch.nn, cls_name)(*args, **kwargs).double()
    r = getattr(nn, cls_name)(*args, **kwargs).double()
    copy_weights(t, r)
    return r, t


def _compare_grads(r_mod, t_mod, r_inputs, t_inputs, r_outs, t_outs, atol=1e-9):
    rs = sum((o * (i + 1)).sum() for i, o in enumerate(r_outs) if o is not None)
    ts = sum((o * (i + 1)).sum() for i, o in enumerate(t_outs) if o is not None)
    rs.backward()
    ts.backward()
    for ri, ti in zip(r_inputs, t_inputs, strict=True):
        assert_close(ri.grad, ti.grad, atol=atol)
    tp = dict(t_mod.named_parameters())
    for name, p in r_mod.named_parameters():
        assert_close(p.grad, tp[name].grad, atol=atol)


MHA_CONFIGS = list(itertools.product(
    [None, (6, 5)],          # kdim, vdim
    [False, True],           # add_bias_kv
    [False, True],           # add_zero_attn
    [False, True],           # batch_first
))


@pytest.mark.parametrize("kv,bias_kv,zero_attn,batch_first", MHA_CONFIGS)
def test_mha_matches_torch(kv, bias_kv, zero_attn, batch_first):
    kdim, vdim = kv or (None, None)
    r, t = _twin("MultiheadAttention", 8, 2, kdim=kdim, vdim=vdim, add_bias_kv=bias_kv,
                 add_zero_attn=zero_attn, batch_first=batch_first)
    n, tl, sl = 3, 4, 5
    lead = (n, tl) if batch_first else (tl, n)
    klead = (n, sl) if batch_first else (sl, n)
    rq, tq = pair(*lead, 8, seed=1)
    rk, tk = pair(*klead, kdim or 8, seed=2)
    rv, tv = pair(*klead, vdim or 8, seed=3)
    mask = numpy.random.default_rng(4).random((tl, sl)) < 0.3
    mask[:, 0] = False
    kpm = numpy.zeros((n, sl), bool)
    kpm[1, -2:] = True
    kwargs = dict(attn_mask=mask, key_padding_mask=kpm, average_attn_weights=False)
    ro, rw = r(rq, rk, rv, **{k: retrograd.from_numpy(v) if isinstance(v, numpy.ndarray)
                              else v for k, v in kwargs.items()})
    to, tw = t(tq, tk, tv, **{k: torch.from_numpy(v) if isinstance(v, numpy.ndarray)
                              else v for k, v in kwargs.items()})
    assert_close(ro, to, atol=1e-10)
    assert_close(rw, tw, atol=1e-10)
    _compare_grads(r, t, (rq, rk, rv), (tq, tk, tv), (ro, rw), (to, tw))


@pytest.mark.parametrize("need_weights,average", [(True, True), (False, True), (True, False)])
def test_mha_self_attention_float_mask_and_weights(need_weights, average):
    r, t = _twin("MultiheadAttention", 6, 3)
    rx, tx = pair(4, 2, 6, seed=5)
    fm = numpy.random.default_rng(6).standard_normal((2 * 3, 4, 4))
    ro, rw = r(rx, rx, rx, attn_mask=retrograd.from_numpy(fm), need_weights=need_weights,
               average_attn_weights=average)
    to, tw = t(tx, tx, tx, attn_mask=torch.from_numpy(fm), need_weights=need_weights,
               average_attn_weights=average)
    assert_close(ro, to, atol=1e-10)
    assert (rw is None) == (tw is None)
    if rw is not None:
        assert_close(rw, tw, atol=1e-10)
    _compare_grads(r, t, (rx,), (tx,), (ro, rw), (to, tw))


@pytest.mark.parametrize("module", ["MultiheadAttention", "TransformerEncoderLayer"])
def test_a_query_with_every_key_masked_gets_zeros_as_torchs_sdpa(module):
    """Without weights (a transformer layer asks for none) PyTorch's attention is sdpa,
    whose softmax gives a query with no key left zeros, and no NaN gradient anywhere; its
    weights are NaN there (in both). (PyTorch's inference fast path, in eval under
    no_grad, gives NaN: docs/deviations.md.)"""
    args = (8, 2) if module == "MultiheadAttention" else (8, 2, 16)
    kwargs = {"batch_first": True} | ({"dropout": 0.0} if module != "MultiheadAttention"
                                      else {})
    r, t = _twin(module, *args, **kwargs)
    rx, tx = pair(2, 5, 8, seed=9)
    kpm = numpy.array([[False] * 5, [True] * 5])
    if module == "MultiheadAttention":
        ro = r(rx, rx, rx, key_padding_mask=retrograd.from_numpy(kpm), need_weights=False)[0]
        to = t(tx, tx, tx, key_padding_mask=torch.from_numpy(kpm), need_weights=False)[0]
        rw = r(rx, rx, rx, key_padding_mask=retrograd.from_numpy(kpm))[1]
        assert rw[1].isnan().all() and not rw[0].isnan().any()
    else:
        ro = r(rx, src_key_padding_mask=retrograd.from_numpy(kpm))
        to = t(tx, src_key_padding_mask=torch.from_numpy(kpm))
    assert not ro.isnan().any()
    assert_close(ro, to, atol=1e-10)
    _compare_grads(r, t, (rx,), (tx,), (ro,), (to,))


def test_mha_unbatched_and_no_bias():
    r, t = _twin("MultiheadAttention", 4, 2, bias=False, kdim=3, vdim=3)
    rq, tq = pair(5, 4, seed=7)
    rk, tk = pair(6, 3, seed=8)
    kpm = numpy.array([False, False, True, False, False, True])
    ro, rw = r(rq, rk, rk, key_padding_mask=retrograd.from_numpy(kpm))
    to, tw = t(tq, tk, tk, key_padding_mask=torch.from_numpy(kpm))
    assert ro.shape == to.shape and rw.shape == tw.shape
    assert_close(ro, to, atol=1e-10)
    assert_close(rw, tw, atol=1e-10)
    _compare_grads(r, t, (rq, rk), (tq, tk), (ro, rw), (to, tw))


def test_mha_state_dict_and_repr_match_torch():
    r, t = _twin("MultiheadAttention", 8, 2, kdim=6, vdim=5, add_bias_kv=True)
    assert list(r.state_dict()) == list(t.state_dict())
    assert [tuple(v.shape) for v in r.state_dict().values()] == [
        tuple(v.shape) for v in t.state_dict().values()]
    assert repr(r) == repr(t)
    assert r.bias_k.shape == (1, 1, 8) and r._qkv_same_embed_dim is False


@pytest.mark.parametrize("separate,static,bias_kv,zero_attn", [
    (False, False, False, False), (True, False, True, False), (False, True, False, True),
    (True, True, False, False)])
def test_functional_mha_torch_signature(separate, static, bias_kv, zero_attn):
    e, h, n, tl, sl = 6, 2, 2, 3, 4
    rng = numpy.random.default_rng(9)

    def both(*shape):
        a = rng.standard_normal(shape)
        return (retrograd.from_numpy(a.copy()).requires_grad_(),
                torch.from_numpy(a.copy()).requires_grad_())

    q, k, v = both(tl, n, e), both(sl, n, e), both(sl, n, e)
    in_w, in_b = both(3 * e, e), both(3 * e)
    out_w, out_b = both(e, e), both(e)
    qw, kw, vw = both(e, e), both(e, e), both(e, e)
    bk, bv = both(1, 1, e), both(1, 1, e)
    sk, sv = both(n * h, sl + 1, e // h), both(n * h, sl + 1, e // h)
    outs = []
    for i, lib in ((0, retrograd), (1, torch)):
        f = lib.nn.functional.multi_head_attention_forward
        res = f(q[i], k[i], v[i], e, h, None if separate else in_w[i], in_b[i],
                bk[i] if bias_kv else None, bv[i] if bias_kv else None, zero_attn, 0.0,
                out_w[i], out_b[i], use_separate_proj_weight=separate,
                q_proj_weight=qw[i] if separate else None,
                k_proj_weight=kw[i] if separate else None,
                v_proj_weight=vw[i] if separate else None,
                static_k=sk[i] if static else None, static_v=sv[i] if static else None)
        outs.append(res)
        (res[0].sum() + (res[1] * 2).sum()).backward()
    assert_close(outs[0][0], outs[1][0], atol=1e-10)
    assert_close(outs[0][1], outs[1][1], atol=1e-10)
    for pr in (q, k, v, in_w, in_b, out_w, out_b, qw, kw, vw, bk, bv, sk, sv):
        if pr[1].grad is None:
            assert pr[0].grad is None
        else:
            assert_close(pr[0].grad, pr[1].grad, atol=1e-10)


def _error(fn_r, fn_t):
    with pytest.raises(Exception) as et:
        fn_t()
    with pytest.raises(type(et.value)) as er:
        fn_r()
    assert str(er.value) == str(et.value)


def test_mha_errors_match_torch():
    r, t = _twin("MultiheadAttention", 4, 2)
    rx, tx = pair(3, 2, 4, seed=1)
    _error(lambda: r(rx, rx, rx, is_causal=True), lambda: t(tx, tx, tx, is_causal=True))
    _error(lambda: r(rx, rx, rx, attn_mask=retrograd.zeros(2, 3, dtype=retrograd.bool)),
           lambda: t(tx, tx, tx, attn_mask=torch.zeros(2, 3, dtype=torch.bool)))
    _error(lambda: r(rx, rx, rx, key_padding_mask=retrograd.zeros(3, 3, dtype=retrograd.bool)),
           lambda: t(tx, tx, tx, key_padding_mask=torch.zeros(3, 3, dtype=torch.bool)))
    _error(lambda: r(rx, rx[0], rx), lambda: t(tx, tx[0], tx))
    _error(lambda: r(rx[None], rx, rx), lambda: t(tx[None], tx, tx))
    for a in ((0, 2), (4, 3)):
        _error(lambda a=a: nn.MultiheadAttention(*a), lambda a=a: torch.nn.MultiheadAttention(*a))


@pytest.mark.parametrize("norm_first,batch_first", [(False, False), (True, True)])
def test_transformer_decoder_layer_and_stack(norm_first, batch_first):
    kw = dict(dim_feedforward=16, dropout=0.0, norm_first=norm_first, batch_first=batch_first)
    r_layer, t_layer = _twin("TransformerDecoderLayer", 8, 2, **kw)
    torch.manual_seed(1)
    t = torch.nn.TransformerDecoder(t_layer, 2, norm=torch.nn.LayerNorm(8)).double()
    r = nn.TransformerDecoder(r_layer, 2, norm=nn.LayerNorm(8)).double()
    copy_weights(t, r)
    assert list(r.state_dict()) == list(t.state_dict())
    lead = (2, 5) if batch_first else (5, 2)
    mlead = (2, 4) if batch_first else (4, 2)
    rt, tt = pair(*lead, 8, seed=2)
    rm, tm = pair(*mlead, 8, seed=3)
    mask = nn.Transformer.generate_square_subsequent_mask(5).double()
    tmask = torch.nn.Transformer.generate_square_subsequent_mask(5).double()
    assert_close(mask, tmask)
    mkpm = numpy.array([[False, False, False, True], [False] * 4])
    ro = r(rt, rm, tgt_mask=mask, memory_key_padding_mask=retrograd.from_numpy(mkpm))
    to = t(tt, tm, tgt_mask=tmask, memory_key_padding_mask=torch.from_numpy(mkpm))
    assert_close(ro, to, atol=1e-10)
    _compare_grads(r, t, (rt, rm), (tt, tm), (ro,), (to,))


def test_transformer_matches_torch():
    r, t = _twin("Transformer", 8, 2, 2, 2, 16, 0.0)
    assert list(r.state_dict()) == list(t.state_dict())
    rs, ts = pair(6, 2, 8, seed=4)
    rt, tt = pair(5, 2, 8, seed=5)
    ro = r(rs, rt, tgt_mask=nn.Transformer.generate_square_subsequent_mask(5).double())
    to = t(ts, tt, tgt_mask=torch.nn.Transformer.generate_square_subsequent_mask(5).double())
    assert_close(ro, to, atol=1e-10)
    _compare_grads(r, t, (rs, rt), (ts, tt), (ro,), (to,))
    _error(lambda: r(rs, rt[:, :1]), lambda: t(ts, tt[:, :1]))
    _error(lambda: r(rs[..., :4], rt), lambda: t(ts[..., :4], tt))


def test_transformer_init_is_xavier():
    """Every matrix is re-initialised by xavier_uniform_ (bound sqrt(6 / (fan_in+fan_out)))."""
    retrograd.manual_seed(0)
    m = nn.Transformer(16, 2, 1, 1, 32, 0.0)
    w = m.decoder.layers[0].linear1.weight
    bound = (6 / (16 + 32)) ** 0.5
    assert float(w.abs().max()) <= bound and float(w.abs().max()) > 0.9 * bound


def test_mha_refuses_integer_masks_as_torch():
    r, t = _twin("MultiheadAttention", 4, 2)
    rx, tx = pair(3, 2, 4, seed=1)
    for dtype in ("int64", "uint8"):
        m = numpy.zeros((3, 3), dtype)
        _error(lambda m=m: r(rx, rx, rx, attn_mask=retrograd.from_numpy(m)),
               lambda m=m: t(tx, tx, tx, attn_mask=torch.from_numpy(m)))
    k = numpy.zeros((2, 3), "int32")
    _error(lambda: r(rx, rx, rx, key_padding_mask=retrograd.from_numpy(k)),
           lambda: t(tx, tx, tx, key_padding_mask=torch.from_numpy(k)))
