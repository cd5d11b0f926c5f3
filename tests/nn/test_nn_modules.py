"""nn layers against PyTorch with copied weights: state_dict keys, repr, outputs, and the
gradients of inputs and parameters under the same cotangent."""

from collections import OrderedDict

import numpy
import pytest

import retrograd
import retrograd.nn as nn

from _nn_util import assert_close, copy_weights, pair

pytestmark = pytest.mark.torch
torch = pytest.importorskip("torch")
tnn = torch.nn


def _build(name, args, kwargs):
    t = getattr(tnn, name)(*args, **kwargs).double()
    r = getattr(nn, name)(*args, **kwargs).double()
    return r, t


# (layer, constructor args, kwargs, input shapes)
LAYERS = [
    ("Linear", (4, 3), {}, [(5, 4)]),
    ("Linear", (4, 3), {"bias": False}, [(2, 5, 4)]),
    ("Bilinear", (4, 2, 3), {}, [(5, 4), (5, 2)]),
    ("Conv1d", (3, 4, 3), {"stride": 2, "padding": 1}, [(2, 3, 9)]),
    ("Conv2d", (3, 4, 3), {"padding": 1}, [(2, 3, 6, 5)]),
    ("Conv2d", (4, 6, (3, 2)), {"stride": 2, "groups": 2, "bias": False}, [(2, 4, 7, 6)]),
    ("Conv2d", (2, 3, 3), {"dilation": 2, "padding": "same"}, [(1, 2, 7, 7)]),
    ("ConvTranspose2d", (4, 3, 3), {"stride": 2, "padding": 1, "output_padding": 1},
     [(2, 4, 4, 5)]),
    ("MaxPool2d", (2,), {}, [(2, 3, 6, 6)]),
    ("MaxPool2d", (3, 2, 1), {}, [(2, 3, 7, 6)]),
    ("AvgPool2d", (3, 2, 1), {}, [(2, 3, 7, 6)]),
    ("AdaptiveAvgPool2d", ((2, 3),), {}, [(2, 3, 7, 6)]),
    ("AdaptiveAvgPool2d", (1,), {}, [(2, 3, 7, 6)]),
    ("BatchNorm1d", (3,), {}, [(6, 3)]),
    ("BatchNorm1d", (3,), {"affine": False}, [(6, 3, 4)]),
    ("BatchNorm2d", (3,), {}, [(4, 3, 5, 5)]),
    ("BatchNorm2d", (3,), {"momentum": None}, [(4, 3, 5, 5)]),
    ("LayerNorm", (5,), {}, [(3, 4, 5)]),
    ("LayerNorm", ((4, 5),), {"elementwise_affine": False}, [(3, 4, 5)]),
    ("LayerNorm", (5,), {"bias": False}, [(3, 5)]),
    ("GroupNorm", (2, 4), {}, [(3, 4, 5, 2)]),
    ("ReLU", (), {}, [(3, 4)]),
    ("GELU", (), {"approximate": "tanh"}, [(3, 4)]),
    ("SiLU", (), {}, [(3, 4)]),
    ("Tanh", (), {}, [(3, 4)]),
    ("Sigmoid", (), {}, [(3, 4)]),
    ("Softmax", (1,), {}, [(3, 4)]),
    ("LogSoftmax", (-1,), {}, [(3, 4)]),
    ("Identity", (), {}, [(3, 4)]),
    ("Flatten", (), {}, [(3, 4, 2)]),
    ("Dropout", (0.5,), {}, [(3, 4)]),  # compared in eval mode
    ("MultiheadAttention", (8, 2), {}, [(5, 3, 8)] * 3),
    ("MultiheadAttention", (8, 4), {"batch_first": True}, [(3, 5, 8), (3, 6, 8), (3, 6, 8)]),
    ("TransformerEncoderLayer", (8, 2, 16, 0.0), {}, [(5, 3, 8)]),
    ("TransformerEncoderLayer", (8, 2, 16, 0.0),
     {"batch_first": True, "norm_first": True, "activation": "gelu"}, [(3, 5, 8)]),
]


def _ids():
    return [f"{name}-{i}" for i, (name, *_rest) in enumerate(LAYERS)]


@pytest.mark.parametrize("name,args,kwargs,shapes", LAYERS, ids=_ids())
def test_layer_matches_torch(name, args, kwargs, shapes):
    r, t = _build(name, args, kwargs)
    assert list(r.state_dict()) == list(t.state_dict())
    assert [n for n, _ in r.named_parameters()] == [n for n, _ in t.named_parameters()]
    assert repr(r) == repr(t)
    for (k, rv), tv in zip(r.state_dict().items(), t.state_dict().values(), strict=True):
        assert tuple(rv.shape) == tuple(tv.shape), k
    copy_weights(t, r)
    if name == "Dropout":
        r.eval()
        t.eval()
    ins = [pair(*s, seed=i) for i, s in enumerate(shapes)]
    if name == "MultiheadAttention" and shapes[0] == shapes[1]:
        ins = [ins[0]] * 3  # self-attention: one tensor as query, key and value
    rs, ts = [a for a, _ in ins], [b for _, b in ins]
    ro, to = r(*rs), t(*ts)
    if isinstance(to, tuple):
        ro, to = ro[0], to[0]
    assert_close(ro, to, 1e-8, 1e-7)
    g = numpy.random.default_rng(7).standard_normal(tuple(to.shape))
    ro.backward(retrograd.from_numpy(g))
    to.backward(torch.from_numpy(g))
    for a, b in zip(rs, ts, strict=True):
        assert_close(a.grad, b.grad, 1e-8, 1e-7)
    for (n, p), q in zip(r.named_parameters(), t.parameters(), strict=True):
        assert_close(p.grad, q.grad, 1e-8, 1e-7), n
    for (n, b), c in zip(r.named_buffers(), t.buffers(), strict=True):
        assert_close(b, c, 1e-8, 1e-7), n


def test_transformer_encoder_and_masks():
    layer_t = tnn.TransformerEncoderLayer(8, 2, 16, 0.0, batch_first=True, norm_first=True)
    t = tnn.TransformerEncoder(layer_t, 2, norm=tnn.LayerNorm(8),
                               enable_nested_tensor=False).double()
    layer_r = nn.TransformerEncoderLayer(8, 2, 16, 0.0, batch_first=True, norm_first=True)
    r = nn.TransformerEncoder(layer_r, 2, norm=nn.LayerNorm(8)).double()
    assert list(r.state_dict()) == list(t.state_dict())
    copy_weights(t, r)
    rx, tx = pair(3, 5, 8)
    mask = numpy.triu(numpy.ones((5, 5), dtype=bool), 1)
    kpm = numpy.zeros((3, 5), dtype=bool)
    kpm[0, 4] = True
    ro = r(rx, mask=retrograd.from_numpy(mask), src_key_padding_mask=retrograd.from_numpy(kpm))
    to = t(tx, mask=torch.from_numpy(mask), src_key_padding_mask=torch.from_numpy(kpm))
    assert_close(ro, to, 1e-8, 1e-7)
    ro.sum().backward()
    to.sum().backward()
    assert_close(rx.grad, tx.grad, 1e-8, 1e-7)
    for p, q in zip(r.parameters(), t.parameters(), strict=True):
        assert_close(p.grad, q.grad, 1e-8, 1e-7)


def test_embedding_module():
    t = tnn.Embedding(6, 3, padding_idx=1).double()
    r = nn.Embedding(6, 3, padding_idx=1).double()
    assert repr(r) == repr(t)
    assert (r.weight.detach().numpy()[1] == 0).all()
    copy_weights(t, r)
    idx = numpy.array([[0, 1, 5], [1, 2, 2]])
    ro, to = r(retrograd.from_numpy(idx)), t(torch.from_numpy(idx))
    assert_close(ro, to)
    ro.sum().backward()
    to.sum().backward()
    assert_close(r.weight.grad, t.weight.grad)


@pytest.mark.parametrize("name,kwargs", [
    ("CrossEntropyLoss", {}), ("CrossEntropyLoss", {"label_smoothing": 0.1}),
    ("NLLLoss", {"reduction": "sum"}), ("MSELoss", {}), ("L1Loss", {}),
    ("SmoothL1Loss", {"beta": 0.5}), ("BCELoss", {}), ("BCEWithLogitsLoss", {})])
def test_loss_modules(name, kwargs):
    r, t = getattr(nn, name)(**kwargs), getattr(tnn, name)(**kwargs)
    assert repr(r) == repr(t)
    rx, tx = pair(4, 3, low=0.05, high=0.95)
    if name in ("CrossEntropyLoss", "NLLLoss"):
        y = numpy.array([0, 2, 1, 2])
        ry, ty = retrograd.from_numpy(y), torch.from_numpy(y)
    else:
        ry, ty = pair(4, 3, low=0.0, high=1.0, requires_grad=False, seed=3)
    ro, to = r(rx, ry), t(tx, ty)
    assert_close(ro, to)
    ro.backward()
    to.backward()
    assert_close(rx.grad, tx.grad)


def test_default_init_statistics():
    """PyTorch's default inits: Linear/Conv uniform(+-1/sqrt(fan_in)), norms ones/zeros."""
    retrograd.manual_seed(0)
    lin = nn.Linear(400, 300)
    bound = 1 / 20
    w = lin.weight.detach().numpy()
    assert w.min() >= -bound and w.max() <= bound and w.std() > 0.9 * bound / 3 ** 0.5
    assert numpy.abs(lin.bias.detach().numpy()).max() <= bound
    conv = nn.Conv2d(16, 8, 3)
    b = 1 / (16 * 9) ** 0.5
    assert numpy.abs(conv.weight.detach().numpy()).max() <= b
    assert abs(conv.weight.detach().numpy().std() - b / 3 ** 0.5) < 0.1 * b
    bn = nn.BatchNorm2d(3)
    assert (bn.weight.detach().numpy() == 1).all() and (bn.bias.detach().numpy() == 0).all()
    assert bn.num_batches_tracked.dtype == retrograd.int64
    emb = nn.Embedding(1000, 10)
    assert abs(emb.weight.detach().numpy().std() - 1) < 0.05
    mha = nn.MultiheadAttention(8, 2)
    assert (mha.in_proj_bias.detach().numpy() == 0).all()


def test_parameter():
    p = nn.Parameter(retrograd.zeros(2))
    assert isinstance(p, retrograd.Tensor) and isinstance(p, nn.Parameter)
    assert p.requires_grad and p.is_leaf
    assert repr(p) == repr(tnn.Parameter(torch.zeros(2)))
    assert not nn.Parameter(retrograd.zeros(2), requires_grad=False).requires_grad
    assert type(p * 2) is retrograd.Tensor


def _net(lib):
    m = lib.nn.Sequential(lib.nn.Conv2d(3, 4, 3), lib.nn.BatchNorm2d(4), lib.nn.ReLU(),
                          lib.nn.Flatten(), lib.nn.Linear(4 * 4 * 4, 2))
    m.add_module("extra", lib.nn.ModuleDict({"a": lib.nn.Linear(2, 2)}))
    m.register_buffer("scale", lib.ones(1), persistent=False)
    return m


def test_module_traversal_and_state_dict():
    r, t = _net(retrograd), _net(torch)
    assert repr(r) == repr(t)
    assert list(r.state_dict()) == list(t.state_dict())
    assert [n for n, _ in r.named_modules()] == [n for n, _ in t.named_modules()]
    assert [n for n, _ in r.named_buffers()] == [n for n, _ in t.named_buffers()]
    assert [n for n, _ in r.named_children()] == [n for n, _ in t.named_children()]
    assert len(list(r.parameters())) == len(list(t.parameters()))
    assert len(list(r.modules())) == len(list(t.modules()))
    assert r.state_dict()["1.running_var"].requires_grad is False
    assert r[0] is list(r.children())[0] and len(r) == 6
    assert isinstance(r[1:3], nn.Sequential) and len(r[1:3]) == 2


def test_load_state_dict_strict():
    r = nn.Linear(3, 2)
    sd = {"weight": numpy.ones((2, 3)), "bias": numpy.zeros(2)}
    assert str(r.load_state_dict(sd)) == "<All keys matched successfully>"
    assert (r.weight.detach().numpy() == 1).all()
    with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "bias"'):
        r.load_state_dict({"weight": numpy.ones((2, 3))})
    with pytest.raises(RuntimeError, match="size mismatch for weight"):
        r.load_state_dict({"weight": numpy.ones((3, 3)), "bias": numpy.zeros(2)})
    res = r.load_state_dict({"weight": numpy.ones((2, 3)), "x": numpy.ones(1)}, strict=False)
    assert res.missing_keys == ["bias"] and res.unexpected_keys == ["x"]
    r2 = nn.Linear(3, 2)
    r2.load_state_dict(r.state_dict())
    assert (r2.weight.detach().numpy() == 1).all()


def test_train_eval_requires_grad_zero_grad_to_apply():
    m = _net(retrograd)
    assert m.training and m[1].training
    m.eval()
    assert not m.training and not m[1].training
    m.train()
    assert m[1].training
    m.requires_grad_(False)
    assert not any(p.requires_grad for p in m.parameters())
    m.requires_grad_()
    m[:5](retrograd.randn(2, 3, 6, 6)).sum().backward()
    assert all(p.grad is not None for p in m[:5].parameters())
    m.zero_grad(set_to_none=False)
    assert all((p.grad.numpy() == 0).all() for p in m[:5].parameters())
    m.zero_grad()
    assert all(p.grad is None for p in m.parameters())
    m.double()
    assert all(p.dtype == retrograd.float64 for p in m.parameters())
    assert m[1].num_batches_tracked.dtype == retrograd.int64
    names = []
    m.apply(lambda mod: names.append(type(mod).__name__))
    assert names[-1] == "Sequential" and names[0] == "Conv2d"


def test_setattr_registration_errors():
    m = nn.Module()
    m.p = nn.Parameter(retrograd.ones(1))
    m.sub = nn.Linear(1, 1)
    m.register_buffer("buf", retrograd.zeros(1))
    assert list(m.state_dict()) == ["p", "buf", "sub.weight", "sub.bias"]
    with pytest.raises(TypeError, match="cannot assign"):
        m.p = retrograd.ones(1)
    m.p = None
    assert "p" not in m.state_dict()
    del m.sub
    assert not hasattr(m, "sub")
    with pytest.raises(KeyError, match="attribute 'buf' already exists"):
        m.add_module("buf", nn.Linear(1, 1))
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        _ = m.nope


def _hook_log(lib):
    torch_like = lib
    m = torch_like.nn.Linear(3, 2)
    log = []
    m.register_forward_pre_hook(lambda mod, args: log.append(("pre", tuple(args[0].shape))))
    h = m.register_forward_hook(lambda mod, args, out: log.append(("fwd", tuple(out.shape))))
    m.register_full_backward_hook(lambda mod, gi, go: log.append(
        ("bwd", [tuple(g.shape) if g is not None else None for g in gi],
         [tuple(g.shape) for g in go])))
    x = torch_like.ones(4, 3, requires_grad=True)
    m(x).sum().backward()
    h.remove()
    m(torch_like.ones(4, 3)).sum().backward()
    return log


@pytest.mark.filterwarnings("ignore:Full backward hook is firing")
def test_hooks_match_torch():
    assert _hook_log(retrograd) == _hook_log(torch)


def test_backward_hook_replaces_grad_input():
    def run(lib):
        m = lib.nn.Tanh()
        m.register_full_backward_hook(lambda mod, gi, go: (gi[0] * 2,))
        x = lib.ones(3, requires_grad=True)
        m(x).sum().backward()
        return x.grad.numpy()
    numpy.testing.assert_allclose(run(retrograd), run(torch), rtol=1e-6)


def test_forward_hooks_can_replace():
    m = nn.Identity()
    m.register_forward_pre_hook(lambda mod, args: (args[0] + 1,))
    m.register_forward_hook(lambda mod, args, out: out * 10)
    assert m(retrograd.zeros(1)).item() == 10


def test_batchnorm_running_stats_and_eval():
    r, t = nn.BatchNorm2d(3).double(), tnn.BatchNorm2d(3).double()
    for s in range(3):
        rx, tx = pair(4, 3, 2, 2, seed=s, requires_grad=False)
        r(rx)
        t(tx)
    assert_close(r.running_mean, t.running_mean)
    assert_close(r.running_var, t.running_var)
    assert r.num_batches_tracked.item() == 3
    r.eval()
    t.eval()
    rx, tx = pair(2, 3, 2, 2, seed=9)
    assert_close(r(rx), t(tx))


def test_module_list_and_dict():
    ml = nn.ModuleList([nn.Linear(1, 1), nn.ReLU()])
    ml.append(nn.Tanh())
    assert len(ml) == 3 and isinstance(ml[-1], nn.Tanh)
    assert repr(nn.ModuleList()) == repr(tnn.ModuleList())
    md = nn.ModuleDict({"a": nn.ReLU()})
    md["b"] = nn.Tanh()
    assert list(md.keys()) == ["a", "b"] and "a" in md


def test_data_parallel():
    m = nn.Linear(2, 3)
    dp = nn.DataParallel(m)
    assert list(dp.state_dict()) == ["module.weight", "module.bias"]
    x = retrograd.ones(4, 2)
    assert_close(dp(x), m(x))


def test_init_functions():
    w = retrograd.empty(300, 200)
    nn.init.xavier_uniform_(w)
    a = (6 / 500) ** 0.5
    assert numpy.abs(w.numpy()).max() <= a
    nn.init.kaiming_normal_(w, nonlinearity="relu")
    assert abs(w.numpy().std() - (2 / 200) ** 0.5) < 0.005
    nn.init.trunc_normal_(w, std=1.0, a=-1.0, b=1.0)
    assert numpy.abs(w.numpy()).max() <= 1.0
    nn.init.orthogonal_(w)
    q = w.numpy().astype(numpy.float64)
    numpy.testing.assert_allclose(q.T @ q, numpy.eye(200), atol=1e-5)
    nn.init.constant_(w, 3.0)
    assert (w.numpy() == 3).all()
    assert nn.init.calculate_gain("leaky_relu", 0.2) == tnn.init.calculate_gain("leaky_relu",
                                                                                 0.2)
    v = w._version
    nn.init.zeros_(w)
    assert w._version > v


def _hook(module, args, *rest):
    """A module-level hook: handles pickle with the hook dicts they refer to."""


def _handles(lib):
    """Handles of every kind of hook, with what they refer to."""
    m = lib.nn.Linear(2, 2)
    x = lib.ones(2, requires_grad=True)
    opt = lib.optim.SGD(m.parameters(), lr=0.1)
    return m, [m.register_forward_pre_hook(_hook, with_kwargs=True),
               m.register_forward_hook(_hook, with_kwargs=True),
               m.register_full_backward_hook(_hook),
               x.register_hook(lambda g: g),
               (x * 2).grad_fn.register_hook(lambda *a: None),
               opt.register_step_pre_hook(lambda *a: None)]


def test_one_removable_handle_as_torch():
    import pickle

    import retrograd.utils.hooks
    import torch.utils.hooks
    from retrograd.nn.modules import module as rmodule
    from torch.nn.modules import module as tmodule

    assert rmodule.RemovableHandle is retrograd.utils.hooks.RemovableHandle
    assert tmodule.RemovableHandle is torch.utils.hooks.RemovableHandle
    for lib, cls in ((retrograd, retrograd.utils.hooks.RemovableHandle),
                     (torch, torch.utils.hooks.RemovableHandle)):
        m, handles = _handles(lib)
        assert all(type(h) is cls for h in handles)
        assert [h.id - handles[0].id for h in handles] == list(range(len(handles)))
        assert (dict(m._forward_pre_hooks_with_kwargs), dict(m._forward_hooks_with_kwargs)) \
            == ({handles[0].id: True}, {handles[1].id: True})
        handles[1].remove()  # from the hooks and from the with_kwargs flags
        assert handles[1].id not in m._forward_hooks
        assert dict(m._forward_hooks_with_kwargs) == {}
        m2, copy = pickle.loads(pickle.dumps((m, handles[0])))  # it refers to m2's dicts
        assert copy.hooks_dict_ref() is m2._forward_pre_hooks
        copy.remove()
        assert not m2._forward_pre_hooks and not m2._forward_pre_hooks_with_kwargs
        assert handles[0].id in m._forward_pre_hooks
        with cls(OrderedDict(), extra_dict=[OrderedDict(), OrderedDict()]) as h:
            assert len(h.extra_dict_ref) == 2 and cls.next_id == h.id + 1
        cls(OrderedDict()).remove()  # its dict already gone: nothing to do
