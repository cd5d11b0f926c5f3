"""RNN, LSTM, GRU, their cells and nn.utils.rnn against PyTorch with copied weights."""

import warnings

import numpy
import pytest

import retrograd
from retrograd.autograd import gradcheck, gradgradcheck
from retrograd.nn.utils import rnn as rrnn

from _nn_util import assert_close, copy_weights, pair

pytestmark = pytest.mark.torch
torch = pytest.importorskip("torch")
trnn = torch.nn.utils.rnn


def _pair_modules(name, args, kwargs):
    t = getattr(torch.nn, name)(*args, **kwargs).double()
    r = getattr(retrograd.nn, name)(*args, **kwargs).double()
    copy_weights(t, r)
    return r, t


def _flat(out):
    if isinstance(out, (tuple, list)):
        return [y for x in out for y in _flat(x)]
    if isinstance(out, (rrnn.PackedSequence, trnn.PackedSequence)):
        return [out.data]
    return [out]


def _backward_all(outs, lib, seed=1):
    """Backpropagate fixed random cotangents through every output at once."""
    rng = numpy.random.default_rng(seed)
    loss = 0
    for o in outs:
        g = rng.standard_normal(tuple(o.shape))
        loss = loss + (o * lib.from_numpy(g)).sum()
    loss.backward()


def _compare(r, t, r_args, t_args, r_leaves, t_leaves):
    r_out, t_out = _flat(r(*r_args)), _flat(t(*t_args))
    assert len(r_out) == len(t_out)
    for a, b in zip(r_out, t_out, strict=True):
        assert tuple(a.shape) == tuple(b.shape)
        assert_close(a, b, atol=1e-10, rtol=1e-8)
    _backward_all(r_out, retrograd)
    _backward_all(t_out, torch)
    for name, p in t.named_parameters():
        assert_close(r.get_parameter(name).grad, p.grad, atol=1e-10, rtol=1e-8)
    for a, b in zip(r_leaves, t_leaves, strict=True):
        assert_close(a.grad, b.grad, atol=1e-10, rtol=1e-8)


_SEQ_CASES = [
    ("RNN", {}),
    ("RNN", {"nonlinearity": "relu", "num_layers": 2}),
    ("RNN", {"bias": False, "bidirectional": True, "batch_first": True}),
    ("GRU", {}),
    ("GRU", {"num_layers": 2, "bidirectional": True}),
    ("GRU", {"bias": False, "batch_first": True}),
    ("LSTM", {}),
    ("LSTM", {"num_layers": 2, "bidirectional": True, "batch_first": True}),
    ("LSTM", {"proj_size": 2, "num_layers": 2, "bidirectional": True}),
    ("LSTM", {"proj_size": 3, "bias": False}),
]


def _hidden(name, kwargs, batch, lib_pair, unbatched=False):
    dirs = (2 if kwargs.get("bidirectional") else 1) * kwargs.get("num_layers", 1)
    real = kwargs.get("proj_size") or 5
    lead = (dirs,) if unbatched else (dirs, batch)
    h = lib_pair(*lead, real, seed=3)
    if name != "LSTM":
        return h
    c = lib_pair(*lead, 5, seed=4)
    return h, c


@pytest.mark.parametrize("with_hx", [False, True])
@pytest.mark.parametrize("name,kwargs", _SEQ_CASES)
def test_sequence_modules_match_torch(name, kwargs, with_hx):
    r, t = _pair_modules(name, (3, 5), kwargs)
    shape = (2, 4, 3) if kwargs.get("batch_first") else (4, 2, 3)
    rx, tx = pair(*shape)
    r_args, t_args, r_leaves, t_leaves = [rx], [tx], [rx], [tx]
    if with_hx:
        hs = _hidden(name, kwargs, 2, pair)
        if name == "LSTM":
            (rh, th), (rc, tc) = hs
            r_args.append((rh, rc))
            t_args.append((th, tc))
            r_leaves += [rh, rc]
            t_leaves += [th, tc]
        else:
            r_args.append(hs[0])
            t_args.append(hs[1])
            r_leaves.append(hs[0])
            t_leaves.append(hs[1])
    _compare(r, t, r_args, t_args, r_leaves, t_leaves)


@pytest.mark.parametrize("name,kwargs", [("RNN", {"num_layers": 2}), ("GRU", {}),
                                         ("LSTM", {"bidirectional": True, "proj_size": 2})])
def test_unbatched_input(name, kwargs):
    r, t = _pair_modules(name, (3, 5), kwargs)
    rx, tx = pair(4, 3)
    hs = _hidden(name, kwargs, None, pair, unbatched=True)
    if name == "LSTM":
        (rh, th), (rc, tc) = hs
        _compare(r, t, [rx, (rh, rc)], [tx, (th, tc)], [rx, rh, rc], [tx, th, tc])
    else:
        _compare(r, t, [rx, hs[0]], [tx, hs[1]], [rx, hs[0]], [tx, hs[1]])


@pytest.mark.parametrize("name,kwargs", [("RNNCell", {}), ("RNNCell", {"nonlinearity": "relu"}),
                                         ("GRUCell", {}), ("GRUCell", {"bias": False}),
                                         ("LSTMCell", {}), ("LSTMCell", {"bias": False})])
@pytest.mark.parametrize("batched", [True, False])
@pytest.mark.parametrize("with_hx", [False, True])
def test_cells_match_torch(name, kwargs, batched, with_hx):
    r, t = _pair_modules(name, (3, 5), kwargs)
    lead = (2,) if batched else ()
    rx, tx = pair(*lead, 3)
    r_args, t_args, r_leaves, t_leaves = [rx], [tx], [rx], [tx]
    if with_hx:
        rh, th = pair(*lead, 5, seed=3)
        r_leaves.append(rh)
        t_leaves.append(th)
        if name == "LSTMCell":
            rc, tc = pair(*lead, 5, seed=4)
            r_args.append((rh, rc))
            t_args.append((th, tc))
            r_leaves.append(rc)
            t_leaves.append(tc)
        else:
            r_args.append(rh)
            t_args.append(th)
    _compare(r, t, r_args, t_args, r_leaves, t_leaves)


@pytest.mark.parametrize("name,kwargs", [
    ("RNN", {"num_layers": 2, "bidirectional": True}),
    ("GRU", {"batch_first": True, "bidirectional": True}),
    ("LSTM", {"num_layers": 2, "bidirectional": True, "proj_size": 2}),
    ("LSTM", {"batch_first": True})])
@pytest.mark.parametrize("with_hx", [False, True])
def test_packed_input_matches_torch(name, kwargs, with_hx):
    """Unsorted lengths with a tie: packing, the recurrence on shrinking batches, the
    hidden-state permutations and unpacking all match PyTorch, gradients included."""
    r, t = _pair_modules(name, (3, 5), kwargs)
    bf = kwargs.get("batch_first", False)
    lengths = [2, 4, 1, 4]
    rx, tx = pair(4, 4, 3)
    rp = rrnn.pack_padded_sequence(rx, lengths, batch_first=bf, enforce_sorted=False)
    tp = trnn.pack_padded_sequence(tx, lengths, batch_first=bf, enforce_sorted=False)
    for a, b in zip(rp[1:], tp[1:], strict=True):
        assert a.tolist() == b.tolist()
    r_args, t_args, r_leaves, t_leaves = [rp], [tp], [rx], [tx]
    if with_hx:
        hs = _hidden(name, kwargs, 4, pair)
        if name == "LSTM":
            (rh, th), (rc, tc) = hs
            r_args.append((rh, rc))
            t_args.append((th, tc))
            r_leaves += [rh, rc]
            t_leaves += [th, tc]
        else:
            r_args.append(hs[0])
            t_args.append(hs[1])
            r_leaves.append(hs[0])
            t_leaves.append(hs[1])
    r_out, r_h = r(*r_args)
    t_out, t_h = t(*t_args)
    assert isinstance(r_out, rrnn.PackedSequence)
    r_pad, r_len = rrnn.pad_packed_sequence(r_out, batch_first=bf, padding_value=0.5,
                                            total_length=5)
    t_pad, t_len = trnn.pad_packed_sequence(t_out, batch_first=bf, padding_value=0.5,
                                            total_length=5)
    assert r_len.tolist() == t_len.tolist()
    r_all, t_all = [r_pad] + _flat(r_h), [t_pad] + _flat(t_h)
    for a, b in zip(r_all, t_all, strict=True):
        assert_close(a, b, atol=1e-10, rtol=1e-8)
    _backward_all(r_all, retrograd)
    _backward_all(t_all, torch)
    for n, p in t.named_parameters():
        assert_close(r.get_parameter(n).grad, p.grad, atol=1e-10, rtol=1e-8)
    for a, b in zip(r_leaves, t_leaves, strict=True):
        assert_close(a.grad, b.grad, atol=1e-10, rtol=1e-8)


def test_float32_lstm_matches_torch():
    t = torch.nn.LSTM(4, 6, 2)
    r = retrograd.nn.LSTM(4, 6, 2)
    copy_weights(t, r)
    rx, tx = pair(7, 3, 4, dtype="float32")
    (ro, (rh, rc)), (to, (th, tc)) = r(rx), t(tx)
    assert ro.dtype == retrograd.float32
    for a, b in ((ro, to), (rh, th), (rc, tc)):
        assert_close(a, b, atol=1e-6, rtol=1e-5)
    ro.sum().backward()
    to.sum().backward()
    assert_close(rx.grad, tx.grad, atol=1e-6, rtol=1e-5)
    assert_close(r.weight_hh_l1.grad, t.weight_hh_l1.grad, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("name,kwargs", [("RNN", {"num_layers": 2, "bidirectional": True}),
                                         ("GRU", {}),
                                         ("LSTM", {"bidirectional": True, "proj_size": 1})])
def test_gradcheck_float64(name, kwargs):
    """Input, initial states and every parameter (perturbed in place by gradcheck)."""
    m = getattr(retrograd.nn, name)(2, 3, **kwargs).double()
    x = retrograd.randn(3, 2, 2, dtype=retrograd.float64, requires_grad=True)
    dirs = 2 if kwargs.get("bidirectional") else 1
    h = retrograd.randn(dirs * kwargs.get("num_layers", 1), 2, kwargs.get("proj_size") or 3,
                        dtype=retrograd.float64, requires_grad=True)
    params = tuple(m.parameters())
    if name == "LSTM":
        c = retrograd.randn(dirs, 2, 3, dtype=retrograd.float64, requires_grad=True)
        assert gradcheck(lambda x, h, c, *ps: _flat(m(x, (h, c))), (x, h, c, *params))
    else:
        assert gradcheck(lambda x, h, *ps: _flat(m(x, h)), (x, h, *params))


def test_gradcheck_packed_lstm_and_cells():
    m = retrograd.nn.LSTM(2, 3, bidirectional=True).double()
    x = retrograd.randn(3, 2, 2, dtype=retrograd.float64, requires_grad=True)

    def f(x, *ps):
        out, (h, c) = m(rrnn.pack_padded_sequence(x, [1, 3], enforce_sorted=False))
        return rrnn.pad_packed_sequence(out)[0], h, c

    assert gradcheck(f, (x, *m.parameters()))
    for cell in (retrograd.nn.GRUCell(2, 3), retrograd.nn.LSTMCell(2, 3),
                 retrograd.nn.RNNCell(2, 3, nonlinearity="relu")):
        cell.double()
        xc = retrograd.randn(2, 2, dtype=retrograd.float64, requires_grad=True)
        assert gradcheck(lambda x, *ps, cell=cell: _flat(cell(x)), (xc, *cell.parameters()))


# ---- construction, parameters and printed forms ------------------------------------------

_CTOR_CASES = [
    ("RNN", (3, 4), {}), ("RNN", (3, 4, 2, "relu"), {"bias": False}),
    ("RNN", (3, 4), {"dropout": 0.25, "num_layers": 3, "batch_first": True}),
    ("GRU", (3, 4), {"bidirectional": True}), ("GRU", (3, 4, 2), {"dropout": 0.5}),
    ("LSTM", (3, 4), {}), ("LSTM", (3, 4, 2), {"proj_size": 2, "bidirectional": True}),
    ("LSTM", (3, 4), {"proj_size": 1, "bias": False, "bidirectional": True}),
    ("RNNCell", (3, 4), {}), ("RNNCell", (3, 4), {"nonlinearity": "relu", "bias": False}),
    ("GRUCell", (3, 4), {}), ("LSTMCell", (3, 4), {"bias": False}),
]


@pytest.mark.parametrize("name,args,kwargs", _CTOR_CASES)
def test_parameters_state_dict_and_repr_match_torch(name, args, kwargs):
    r = getattr(retrograd.nn, name)(*args, **kwargs)
    t = getattr(torch.nn, name)(*args, **kwargs)
    assert repr(r) == repr(t)
    rs, ts = r.state_dict(), t.state_dict()
    assert list(rs) == list(ts)
    assert [tuple(v.shape) for v in rs.values()] == [tuple(v.shape) for v in ts.values()]
    bound = 1 / numpy.sqrt(args[1])
    for p in r.parameters():
        a = p.detach().numpy()
        assert a.dtype == numpy.float32 and abs(a).max() <= bound and a.std() > 0
    if not name.endswith("Cell"):
        assert r._flat_weights_names == t._flat_weights_names
        assert [[tuple(w.shape) for w in ws] for ws in r.all_weights] == \
            [[tuple(w.shape) for w in ws] for ws in t.all_weights]
        assert all(a is b for a, b in zip(r._flat_weights, r.parameters(), strict=True))
        r.flatten_parameters()


def test_module_conversions_keep_flat_weights():
    m = retrograd.nn.LSTM(2, 3, dtype=retrograd.float64)
    assert m.weight_ih_l0.dtype == retrograd.float64
    m.float()
    assert all(w.dtype == retrograd.float32 for w in m._flat_weights)
    out, _ = m(retrograd.randn(2, 1, 2))
    assert out.dtype == retrograd.float32


def test_constructor_errors_match_torch():
    cases = [("RNN", (3, 4), {"nonlinearity": "gelu"}), ("GRU", (3, 4), {"proj_size": 2}),
             ("RNN", (3, 4), {"proj_size": 2}), ("LSTM", (3, 4), {"proj_size": 4}),
             ("LSTM", (3, 4), {"proj_size": -1}), ("LSTM", (3, 4), {"dropout": 1.5}),
             ("LSTM", (3, 4), {"dropout": True}), ("GRU", (3, 0), {}), ("GRU", (0, 3), {}),
             ("GRU", (3, 4, 0), {}), ("GRU", (3.0, 4), {}), ("GRU", (3, 4), {"bias": 1}),
             ("GRU", (3, 4), {"batch_first": None})]
    for name, args, kwargs in cases:
        with pytest.raises(Exception) as te:
            getattr(torch.nn, name)(*args, **kwargs)
        with pytest.raises(te.type) as re:
            getattr(retrograd.nn, name)(*args, **kwargs)
        assert str(re.value) == str(te.value)


def test_dropout_warning_for_one_layer():
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
        retrograd.nn.GRU(2, 3, dropout=0.5)


def _call_errors():
    dbl = "float64"
    yield "LSTM", (3, 4), lambda L: ((L.randn(5, 2, 6),))
    yield "LSTM", (3, 4), lambda L: ((L.randn(5, 2, 3, 1),))
    yield "LSTM", (3, 4), lambda L: ((L.randn(5, 2, 3, dtype=getattr(L, dbl)),))
    yield "LSTM", (3, 4), lambda L: (L.randn(5, 2, 3), (L.randn(1, 3, 4), L.randn(1, 2, 4)))
    yield "LSTM", (3, 4), lambda L: (L.randn(5, 2, 3), (L.randn(1, 2, 4), L.randn(1, 2, 5)))
    yield "LSTM", (3, 4), lambda L: (L.randn(5, 2, 3), (L.randn(2, 4), L.randn(2, 4)))
    yield "LSTM", (3, 4), lambda L: (L.randn(5, 3), (L.randn(1, 1, 4), L.randn(1, 1, 4)))
    yield "GRU", (3, 4), lambda L: (L.randn(5, 2, 3), L.randn(1, 3, 4))
    yield "GRU", (3, 4), lambda L: (L.randn(5, 3), L.randn(1, 2, 4))
    yield "GRU", (3, 4), lambda L: (L.randn(5, 3), L.randn(2, 4))
    yield "GRU", (3, 4), lambda L: (L.randn(5, 2, 3), L.randn(2, 4))
    yield "RNN", (3, 4), lambda L: (L.randn(3),)
    yield "RNN", (3, 4, 2), lambda L: (L.randn(5, 2, 3), L.randn(1, 2, 4))
    yield "LSTMCell", (3, 4), lambda L: (L.randn(2, 5),)
    yield "LSTMCell", (3, 4), lambda L: (L.randn(2, 3), (L.randn(3, 4), L.randn(2, 4)))
    yield "LSTMCell", (3, 4), lambda L: (L.randn(2, 3), (L.randn(2, 5), L.randn(2, 4)))
    yield "LSTMCell", (3, 4), lambda L: (L.randn(2, 3), (L.randn(2, 4), L.randn(2, 5)))
    yield "LSTMCell", (3, 4), lambda L: (L.randn(2, 3, 3),)
    yield "LSTMCell", (3, 4), lambda L: (L.randn(2, 3), (L.randn(2, 4, 1), L.randn(2, 4)))
    yield "GRUCell", (3, 4), lambda L: (L.randn(2, 3), L.randn(3, 4))
    yield "GRUCell", (3, 4), lambda L: (L.randn(3), L.randn(2, 4))
    yield "GRUCell", (3, 4), lambda L: (L.randn(2, 3), L.randn(4))
    yield "RNNCell", (3, 4), lambda L: (L.randn(2, 3), L.randn(1, 2, 4))


@pytest.mark.parametrize("name,args,make", list(_call_errors()))
def test_forward_errors_match_torch(name, args, make):
    with pytest.raises(Exception) as te:
        getattr(torch.nn, name)(*args)(*make(torch))
    with pytest.raises(te.type) as re:
        getattr(retrograd.nn, name)(*args)(*make(retrograd))
    assert str(re.value) == str(te.value)


def test_unknown_cell_nonlinearity_raises_at_call():
    cell = retrograd.nn.RNNCell(2, 3, nonlinearity="gelu")
    with pytest.raises(RuntimeError, match="Unknown nonlinearity: gelu"):
        cell(retrograd.randn(1, 2))


def test_dropout_between_layers_only_in_training():
    m = retrograd.nn.GRU(3, 4, num_layers=2, dropout=0.5)
    x = retrograd.randn(6, 2, 3)
    m.eval()
    ref, _ = m(x)
    assert retrograd.equal(m(x)[0], ref)
    m.train()
    outs = [m(x)[0] for _ in range(3)]
    assert not all(retrograd.equal(o, ref) for o in outs)
    m.dropout = 1.0  # the second layer then sees zeros, whatever the input
    z, _ = m(x)
    assert retrograd.allclose(z, m(retrograd.randn(6, 2, 3))[0])
    one = retrograd.nn.LSTM(3, 4)  # a single layer never drops
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        one_drop = retrograd.nn.LSTM(3, 4, dropout=0.9)
    one_drop.load_state_dict(one.state_dict())
    assert retrograd.equal(one(x)[0], one_drop(x)[0])


def test_grad_fn_names():
    out, h = retrograd.nn.GRU(2, 3)(retrograd.randn(4, 1, 2))
    assert type(h.grad_fn).__name__ == "StackBackward0"
    h, c = retrograd.nn.LSTMCell(2, 3)(retrograd.randn(1, 2))
    assert type(h.grad_fn).__name__ == "MulBackward0"
    assert type(c.grad_fn).__name__ == "AddBackward0"
    assert type(retrograd.nn.RNNCell(2, 3)(retrograd.randn(1, 2)).grad_fn).__name__ == \
        "TanhBackward0"


# ---- nn.utils.rnn ------------------------------------------------------------------------

def _seqs(lib, lengths, trailing=(2,)):
    rng = numpy.random.default_rng(0)
    return [lib.from_numpy(rng.standard_normal((n, *trailing))) for n in lengths]


def test_utils_importable_as_in_torch():
    import retrograd.nn.utils
    assert retrograd.nn.utils.rnn.PackedSequence is rrnn.PackedSequence


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("side", ["right", "left"])
def test_pad_sequence_matches_torch(batch_first, side):
    r = rrnn.pad_sequence(_seqs(retrograd, [3, 1, 4]), batch_first, -1.0, side)
    t = trnn.pad_sequence(_seqs(torch, [3, 1, 4]), batch_first, -1.0, side)
    assert_close(r, t, atol=0, rtol=0)
    ints = rrnn.pad_sequence([retrograd.tensor([1, 2]), retrograd.tensor([3])])
    assert ints.dtype == retrograd.int64 and ints.tolist() == [[1, 3], [2, 0]]


def test_pad_sequence_gradient():
    rs, ts = _seqs(retrograd, [2, 3]), _seqs(torch, [2, 3])
    for s in rs + ts:
        s.requires_grad_(True)
    r = rrnn.pad_sequence(rs, batch_first=True, padding_side="left")
    t = trnn.pad_sequence(ts, batch_first=True, padding_side="left")
    g = numpy.arange(12.0).reshape(2, 3, 2)
    r.backward(retrograd.from_numpy(g))
    t.backward(torch.from_numpy(g))
    for a, b in zip(rs, ts, strict=True):
        assert_close(a.grad, b.grad, atol=0, rtol=0)


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("enforce_sorted", [False, True])
def test_pack_and_pad_roundtrip_matches_torch(batch_first, enforce_sorted):
    lengths = [4, 3, 3, 1] if enforce_sorted else [1, 3, 4, 3]
    rx, tx = pair(*((4, 4, 2) if batch_first else (4, 4, 2)))
    rp = rrnn.pack_padded_sequence(rx, retrograd.tensor(lengths), batch_first, enforce_sorted)
    tp = trnn.pack_padded_sequence(tx, torch.tensor(lengths), batch_first, enforce_sorted)
    assert_close(rp.data, tp.data, atol=0, rtol=0)
    assert type(rp.data.grad_fn).__name__ == type(tp.data.grad_fn).__name__
    for a, b in zip(rp[1:], tp[1:], strict=True):
        assert (a is None and b is None) or a.tolist() == b.tolist()
    assert rp.batch_sizes.dtype == retrograd.int64
    rpad, rl = rrnn.pad_packed_sequence(rp, batch_first)
    tpad, tl = trnn.pad_packed_sequence(tp, batch_first)
    assert_close(rpad, tpad, atol=0, rtol=0)
    assert rl.tolist() == tl.tolist() and rl.dtype == retrograd.int64
    g = numpy.random.default_rng(2).standard_normal(tuple(tpad.shape))
    rpad.backward(retrograd.from_numpy(g))
    tpad.backward(torch.from_numpy(g))
    assert_close(rx.grad, tx.grad, atol=0, rtol=0)


def test_pack_padded_gradcheck():
    x = retrograd.randn(2, 3, 2, dtype=retrograd.float64, requires_grad=True)

    def f(x):
        packed = rrnn.pack_padded_sequence(x, [1, 3], batch_first=True, enforce_sorted=False)
        return rrnn.pad_packed_sequence(packed, padding_value=2.0)[0] ** 2

    assert gradcheck(f, (x,), check_forward_ad=True)
    assert gradgradcheck(f, (x,))


def test_pack_sequence_and_unpack_match_torch():
    rp = rrnn.pack_sequence(_seqs(retrograd, [2, 4, 1]), enforce_sorted=False)
    tp = trnn.pack_sequence(_seqs(torch, [2, 4, 1]), enforce_sorted=False)
    assert_close(rp.data, tp.data, atol=0, rtol=0)
    assert rp.unsorted_indices.tolist() == tp.unsorted_indices.tolist()
    for a, b in zip(rrnn.unpack_sequence(rp), trnn.unpack_sequence(tp), strict=True):
        assert_close(a, b, atol=0, rtol=0)
    padded = rrnn.pad_sequence(_seqs(retrograd, [2, 3]))
    parts = rrnn.unpad_sequence(padded, retrograd.tensor([2, 3]))
    assert [tuple(p.shape) for p in parts] == [(2, 2), (3, 2)]
    assert tuple(padded.shape) == (3, 2, 2)  # not transposed in place


def test_packed_sequence_behaves_like_torch():
    p = rrnn.pack_sequence(_seqs(retrograd, [2, 1]))
    data, batch_sizes, sorted_indices, unsorted_indices = p
    assert sorted_indices is None and unsorted_indices is None
    assert isinstance(p, tuple) and p._fields == trnn.PackedSequence._fields
    assert p.float().data.dtype == retrograd.float32 and p.double() is p
    assert not p.is_cuda
    q = rrnn.PackedSequence(p.data, p.batch_sizes, retrograd.tensor([1, 0]))
    assert q.unsorted_indices.tolist() == [1, 0]
    assert rrnn.invert_permutation(retrograd.tensor([2, 0, 1])).tolist() == [1, 2, 0]
    assert rrnn.invert_permutation(None) is None
    assert rrnn.PackedSequence((p.data, p.batch_sizes)).batch_sizes is p.batch_sizes


def _util_errors():
    yield lambda R, L: R.pack_padded_sequence(L.randn(4, 3, 2), [4, 5, 1])
    yield lambda R, L: R.pack_padded_sequence(L.randn(4, 3, 2), [4, 2, 0])
    yield lambda R, L: R.pack_padded_sequence(L.randn(4, 3, 2), [4, 2])
    yield lambda R, L: R.pack_padded_sequence(L.randn(0, 3, 2), [4, 2, 1])
    yield lambda R, L: R.pad_sequence([L.ones(2, 3), L.ones(3, 2)])
    yield lambda R, L: R.pad_sequence([L.ones(2, 3)], padding_side="middle")
    yield lambda R, L: R.pad_sequence([])
    yield lambda R, L: R.pad_sequence(3)
    yield lambda R, L: R.pad_packed_sequence(R.pack_sequence([L.ones(3)]), total_length=2)


@pytest.mark.parametrize("make", list(_util_errors()))
def test_utils_errors_match_torch(make):
    with pytest.raises(Exception) as te:
        make(trnn, torch)
    with pytest.raises(te.type) as re:
        make(rrnn, retrograd)
    assert str(re.value) == str(te.value)


def test_padding_utils_dtype_copies_and_length_checks_as_torch():
    res = []
    for lib in (retrograd, torch):
        U = lib.nn.utils.rnn
        dtype = U.pad_sequence([lib.ones(2), lib.ones(3, dtype=lib.float64)]).dtype
        p = U.pad_sequence([lib.ones(2), lib.ones(3)], batch_first=True)
        s = U.unpad_sequence(p, lib.tensor([2, 3]), batch_first=True)
        s[0][0] = 7
        errors = []
        for lens in (lib.tensor([[3, 1]]), lib.tensor(3)):
            with pytest.raises(RuntimeError) as e:
                U.pack_padded_sequence(lib.ones(3, 2), lens)
            errors.append(str(e.value))
        res.append((str(dtype).split(".")[-1], float(p[0, 0]), errors))
    assert res[0] == res[1]
