"""Lazy modules against PyTorch 2.13: reprs before and after the first call, the class
they become, materialized shapes, outputs and gradients (torch's materialized state
loaded into retrograd's lazy module), initialization equal to the eager layer's under
one seed, state_dict round trips, optimizers made before the first call, and the errors
of UninitializedParameter / UninitializedBuffer."""

import copy
import pickle
import re
import warnings

import numpy
import pytest

import retrograd
from retrograd.nn.modules.lazy import LazyModuleMixin
from retrograd.nn.parameter import is_lazy

pytestmark = pytest.mark.torch

# (lazy class, args, kwargs, input shape)
CASES = [
    ("LazyLinear", (5,), {}, (3, 4)),
    ("LazyLinear", (2,), {"bias": False}, (2, 3, 4)),
    ("LazyConv1d", (4, 3), {"padding": 1}, (2, 3, 7)),
    ("LazyConv2d", (4, 3), {"stride": 2, "groups": 2}, (2, 6, 7, 7)),
    ("LazyConv2d", (2, 3), {"padding": "same", "padding_mode": "reflect"}, (3, 6, 6)),
    ("LazyConv3d", (2, 2), {"bias": False}, (1, 3, 4, 4, 4)),
    ("LazyConvTranspose1d", (4, 3), {"stride": 2}, (2, 3, 5)),
    ("LazyConvTranspose2d", (4, 3), {"stride": 2, "groups": 2, "output_padding": 1},
     (2, 6, 4, 4)),
    ("LazyConvTranspose3d", (2, 2), {}, (1, 3, 3, 3, 3)),
    ("LazyBatchNorm1d", (), {}, (4, 3)),
    ("LazyBatchNorm2d", (), {"momentum": None}, (4, 3, 5, 5)),
    ("LazyBatchNorm3d", (), {"affine": False}, (2, 3, 2, 3, 3)),
    ("LazyInstanceNorm1d", (), {}, (2, 3, 6)),
    ("LazyInstanceNorm2d", (), {"affine": False, "track_running_stats": False},
     (2, 3, 4, 4)),
    ("LazyInstanceNorm3d", (), {"bias": False}, (2, 3, 3, 3, 3)),
]
IDS = [f"{c[0]}-{i}" for i, c in enumerate(CASES)]


def _input(shape):
    return numpy.random.default_rng(len(shape)).standard_normal(shape).astype(numpy.float32)


def _eager(mod, lazy, n, args, kwargs):
    """The layer the lazy one becomes, built eagerly with ``n`` inputs/features."""
    name = type(lazy).__name__.removeprefix("Lazy")
    if "Norm" in name:
        kwargs = {**kwargs, "affine": lazy.affine,
                  "track_running_stats": lazy.track_running_stats}
    if name == "Linear":
        return mod.nn.Linear(n, *args, **kwargs)
    return getattr(mod.nn, name)(n, *args, **kwargs)


def _n_in(lazy):
    return next(getattr(lazy, a) for a in ("in_features", "in_channels", "num_features")
                if hasattr(lazy, a))


def _state(module):
    return {k: v.detach().numpy().copy() for k, v in module.state_dict().items()}


def _assert_states_equal(r, t, **tol):
    assert r.keys() == t.keys()
    for k in r:
        assert r[k].shape == t[k].shape, k
        numpy.testing.assert_allclose(r[k], t[k], err_msg=k, **tol)


@pytest.mark.parametrize("name,args,kwargs,shape", CASES, ids=IDS)
def test_reprs_and_class_before_and_after_first_call(torch, name, args, kwargs, shape):
    t = getattr(torch.nn, name)(*args, **kwargs)
    r = getattr(retrograd.nn, name)(*args, **kwargs)
    assert repr(r) == repr(t)
    assert r.has_uninitialized_params() == t.has_uninitialized_params()
    assert isinstance(r, LazyModuleMixin)
    assert [repr(p) for p in r.parameters()] == [repr(p) for p in t.parameters()]
    assert [type(b).__name__ for b in r.buffers()] == [type(b).__name__ for b in t.buffers()]
    t(torch.from_numpy(_input(shape)))
    r(retrograd.tensor(_input(shape)))
    assert repr(r) == repr(t)
    assert type(r).__name__ == type(t).__name__ == name.removeprefix("Lazy")
    assert type(r) is getattr(retrograd.nn, name).cls_to_become
    assert not isinstance(r, LazyModuleMixin) and not hasattr(r, "_initialize_hook")
    assert not any(is_lazy(p) for p in (*r.parameters(), *r.buffers()))
    assert [type(p).__name__ for p in r.parameters()] == \
        [type(p).__name__ for p in t.parameters()]


@pytest.mark.parametrize("name,args,kwargs,shape", CASES, ids=IDS)
def test_outputs_and_gradients_match_torch(torch, name, args, kwargs, shape):
    """Both materialized by a first call, torch's state loaded into retrograd's layer,
    then one more training step in both."""
    torch.manual_seed(0)
    t = getattr(torch.nn, name)(*args, **kwargs)
    t(torch.from_numpy(_input(shape)))
    r = getattr(retrograd.nn, name)(*args, **kwargs)
    r(retrograd.tensor(_input(shape)))
    r.load_state_dict(_state(t))
    _assert_states_equal(_state(r), _state(t))
    x = _input(shape) * 2 + 1
    xt = torch.tensor(x, requires_grad=True)
    xr = retrograd.tensor(x, requires_grad=True)
    yt, yr = t(xt), r(xr)
    assert type(r).__name__ == name.removeprefix("Lazy")
    assert tuple(yr.shape) == tuple(yt.shape)
    numpy.testing.assert_allclose(yr.detach().numpy(), yt.detach().numpy(), rtol=1e-5,
                                  atol=1e-5)
    assert repr(r) == repr(t)
    g = numpy.random.default_rng(7).standard_normal(tuple(yt.shape)).astype(numpy.float32)
    yt.backward(torch.from_numpy(g))
    yr.backward(retrograd.tensor(g))
    numpy.testing.assert_allclose(xr.grad.numpy(), xt.grad.numpy(), rtol=1e-4, atol=1e-5)
    for (nr, pr), (nt, pt) in zip(r.named_parameters(), t.named_parameters(), strict=True):
        assert nr == nt
        numpy.testing.assert_allclose(pr.grad.numpy(), pt.grad.numpy(), rtol=1e-4,
                                      atol=1e-4, err_msg=nr)
    _assert_states_equal(_state(r), _state(t), rtol=1e-5, atol=1e-6)  # running stats


@pytest.mark.parametrize("name,args,kwargs,shape", CASES, ids=IDS)
def test_materialized_shapes_match_torch_and_init_matches_eager(torch, name, args, kwargs,
                                                                shape):
    """The shapes are torch's; the values are the eager layer's under the same seed (the
    same draws in the same order, as in torch, whose own lazy and eager layers agree)."""
    for mod in (torch, retrograd):
        mod.manual_seed(3)
        lazy = getattr(mod.nn, name)(*args, **kwargs)
        lazy(mod.tensor(_input(shape)))
        mod.manual_seed(3)
        eager = _eager(mod, lazy, _n_in(lazy), args, kwargs)
        eager(mod.tensor(_input(shape)))
        if mod is torch:
            shapes = {k: v.shape for k, v in _state(lazy).items()}
        else:
            assert {k: v.shape for k, v in _state(lazy).items()} == shapes
        _assert_states_equal(_state(lazy), _state(eager))


@pytest.mark.parametrize("name,args,kwargs,shape", CASES, ids=IDS)
def test_state_dict_round_trip_into_a_fresh_lazy_module(torch, name, args, kwargs, shape):
    """Loading materializes the fresh module from the loaded shapes; its first call then
    converts it (PyTorch's lazy instance norms with weights then refuse the call: their
    num_features stays 0, and so do retrograd's)."""
    seen = {}
    for m in (torch, retrograd):
        fresh = getattr(m.nn, name)(*args, **kwargs)
        before = [(k, repr(v)) for k, v in fresh.state_dict().items()]  # (the same objects)
        fresh.load_state_dict(getattr(m.nn, name)(*args, **kwargs).state_dict())
        still_lazy = fresh.has_uninitialized_params()  # an uninitialized state: a no-op
        src = getattr(m.nn, name)(*args, **kwargs)
        x = m.tensor(_input(shape))
        src(x)
        fresh.load_state_dict(src.state_dict())
        loaded = (type(fresh).__name__, fresh.has_uninitialized_params(), repr(fresh))
        src.eval(), fresh.eval()
        try:
            out = fresh(x).detach().numpy()
            numpy.testing.assert_array_equal(out, src(x).detach().numpy())
        except ValueError as e:
            out = str(e)
        _assert_states_equal(_state(fresh), _state(src))
        seen[m] = (before, still_lazy, loaded,
                   type(fresh).__name__, repr(fresh), out if isinstance(out, str) else None)
    assert seen[retrograd] == seen[torch]


@pytest.mark.parametrize("name,args,kwargs,shape",
                         [c for c in CASES if c[2].get("affine", True)],
                         ids=[i for i, c in zip(IDS, CASES, strict=True)
                              if c[2].get("affine", True)])
def test_optimizer_made_before_the_first_call(torch, name, args, kwargs, shape):
    """No warning (PyTorch 2.13 gives none), and the step updates the materialized
    parameters exactly as it does an eager layer's under the same seed."""
    x = _input(shape)
    with warnings.catch_warnings(record=True) as seen_t:
        warnings.simplefilter("always")
        torch.optim.SGD(getattr(torch.nn, name)(*args, **kwargs).parameters(), lr=0.1)
    results = []
    for lazy in (True, False):
        retrograd.manual_seed(5)
        if lazy:
            m = getattr(retrograd.nn, name)(*args, **kwargs)
            with warnings.catch_warnings(record=True) as seen:
                warnings.simplefilter("always")
                opt = retrograd.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
            assert [str(w.message) for w in seen] == [str(w.message) for w in seen_t] == []
            params = opt.param_groups[0]["params"]
            assert all(is_lazy(p) for p in params)
        else:
            m = _eager(retrograd, results[0][0], _n_in(results[0][0]), args, kwargs)
            opt = retrograd.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
        for _ in range(2):
            opt.zero_grad()
            (m(retrograd.tensor(x)) ** 2).sum().backward()
            opt.step()
        if lazy:
            assert all(a is b for a, b in zip(params, m.parameters(), strict=True))
            assert type(params[0]) is retrograd.nn.Parameter
        results.append((m, _state(m)))
    _assert_states_equal(results[0][1], results[1][1])


# ---- the uninitialized tensors --------------------------------------------------------------
def _masked(message):
    """PyTorch names the refused function by its CPython repr (an address for a Python
    function); compare the rest."""
    return re.sub(r"in <[^>]*>\.", "in <func>.", message)


REFUSED = [
    lambda m, p: p.sum(),
    lambda m, p: p.view(-1),
    lambda m, p: p.numel(),
    lambda m, p: p.dim(),
    lambda m, p: p.clone(),
    lambda m, p: p.detach(),
    lambda m, p: p.tolist(),
    lambda m, p: p.numpy(),
    lambda m, p: p.zero_(),
    lambda m, p: p.uniform_(),
    lambda m, p: p.requires_grad_(False),
    lambda m, p: p.reshape(2),
    lambda m, p: p + 1,
    lambda m, p: 2 * p,
    lambda m, p: -p,
    lambda m, p: p[0],
    lambda m, p: len(p),
    lambda m, p: p.shape,
    lambda m, p: p.share_memory_(),
    lambda m, p: copy.deepcopy(p) if type(p).__name__ == "UninitializedBuffer" else p.exp(),
    lambda m, p: copy.deepcopy(m.nn.LazyBatchNorm1d()),
    lambda m, p: m.nn.utils.parameters_to_vector([p]),
    lambda m, p: m.nn.LazyLinear(3).requires_grad_(False),
    lambda m, p: m.nn.Linear(2, 3).load_state_dict(m.nn.LazyLinear(3).state_dict()),
]
EXACT = {"sum", "view", "numel", "dim", "clone", "detach", "tolist", "numpy", "zero_",
         "requires_grad_", "reshape", "shape", "share_memory_"}


@pytest.mark.parametrize("i", range(len(REFUSED)))
@pytest.mark.parametrize("cls", ["UninitializedParameter", "UninitializedBuffer"])
def test_ops_on_uninitialized_tensors_raise_as_torch(torch, cls, i):
    op = REFUSED[i]
    with pytest.raises(Exception) as t:
        op(torch, getattr(torch.nn, cls)())
    with pytest.raises(type(t.value)) as r:
        op(retrograd, getattr(retrograd.nn, cls)())
    assert _masked(str(r.value)) == _masked(str(t.value))
    if re.search(r"'(\w+)' of 'torch._C.TensorBase'", str(t.value)) or \
            "shape" in str(t.value) or "share memory" in str(t.value):
        name = re.search(r"'(\w+)' of|(shape)|(share memory)", str(t.value))
        if (name.group(1) or "shape") in EXACT or name.group(3):
            assert str(r.value) == str(t.value)


@pytest.mark.parametrize("cls", ["UninitializedParameter", "UninitializedBuffer"])
def test_what_an_uninitialized_tensor_allows(torch, cls):
    for m in (torch, retrograd):
        p = getattr(m.nn, cls)(dtype=m.float64)
        assert repr(p) == f"<{cls}>" and isinstance(p, getattr(m.nn, cls))
        assert tuple(p.size()) == (0,) and p.dtype == m.float64 and str(p.device) == "cpu"
        assert p.requires_grad == (cls == "UninitializedParameter") and p.grad is None
        assert p.is_floating_point() and not p.is_complex() and p.get_device() == -1
        assert p.to(m.float32).dtype == m.float32 and p.float().dtype == m.float32
        assert isinstance(p, m.nn.Parameter) == (cls == "UninitializedParameter")
        assert isinstance(p, m.nn.Buffer) == (cls == "UninitializedBuffer")
        assert m.nn.parameter.is_lazy(p) and not m.nn.parameter.is_lazy(m.ones(1))
        assert p in {p}
        if cls == "UninitializedParameter":
            assert type(copy.deepcopy(p)) is type(p) and copy.deepcopy(p).dtype == m.float64
        assert type(pickle.loads(pickle.dumps(p))) is type(p)
        p.materialize((2, 3))
        assert type(p) is (m.nn.Parameter if cls == "UninitializedParameter" else m.Tensor)
        assert tuple(p.shape) == (2, 3) and p.dtype == m.float64
        q = getattr(m.nn, cls)()
        q.materialize([4], dtype=m.float16)
        assert q.dtype == m.float16 and tuple(q.shape) == (4,)
    b = retrograd.nn.UninitializedBuffer(persistent=False)
    assert b.persistent is False and torch.nn.UninitializedBuffer(persistent=False).persistent \
        is False


def test_names_where_torch_has_them(torch):
    for mod, names in [("nn", ["UninitializedParameter", "UninitializedBuffer", "LazyLinear"]),
                       ("nn.parameter", ["UninitializedParameter", "UninitializedBuffer",
                                         "UninitializedTensorMixin", "is_lazy"]),
                       ("nn.modules", [n for n in dir(torch.nn.modules) if "Lazy" in n]),
                       ("nn.modules.lazy", ["LazyModuleMixin"])]:
        r = retrograd
        for part in mod.split("."):
            r = getattr(r, part)
        for n in names:
            assert hasattr(r, n), (mod, n)
    assert sorted(retrograd.nn.parameter.__all__) == sorted(torch.nn.parameter.__all__)
    assert [n for n in retrograd.nn.modules.__all__ if "Lazy" in n] == \
        [n for n in torch.nn.modules.__all__ if "Lazy" in n]
    assert not hasattr(retrograd.nn, "LazyModuleMixin") and not hasattr(torch.nn,
                                                                       "LazyModuleMixin")


def test_dtype_and_device_factory_kwargs_and_module_conversion(torch):
    for m in (torch, retrograd):
        a = m.nn.LazyLinear(3, dtype=m.float64, device="cpu")
        assert a.weight.dtype == m.float64
        a(m.ones(2, 4, dtype=m.float64))
        assert a.weight.dtype == a.bias.dtype == m.float64
        b = m.nn.LazyBatchNorm1d(dtype=m.float64).double()
        b(m.ones(2, 4, dtype=m.float64))
        assert b.running_mean.dtype == m.float64 and b.num_batches_tracked.dtype == m.int64
        c = m.nn.LazyConv1d(2, 1).double()  # converted before the dry run, as documented
        assert c.weight.dtype == m.float64 and is_lazy(c.weight) == (m is retrograd) or \
            m is torch
        c(m.ones(1, 3, 4, dtype=m.float64))
        assert c.weight.dtype == m.float64 and tuple(c.weight.shape) == (2, 3, 1)


def test_errors_match_torch(torch):
    def raises(call):
        with pytest.raises(Exception) as t:
            call(torch)
        with pytest.raises(type(t.value)) as r:
            call(retrograd)
        assert str(r.value) == str(t.value)

    raises(lambda m: m.nn.LazyConv2d(4, 3)(m.ones(3, 4)))
    raises(lambda m: m.nn.LazyConv2d(4, 3, groups=2)(m.ones(1, 3, 5, 5)))
    raises(lambda m: m.nn.LazyConvTranspose1d(4, 3)(m.ones(2, 2, 3, 3)))

    def mixin(m, initialize):
        class Lazy(m.nn.modules.lazy.LazyModuleMixin, m.nn.Module):
            def __init__(self):
                super().__init__()
                self.w = m.nn.UninitializedParameter()

            def forward(self, x):
                return x
        if initialize:
            Lazy.initialize_parameters = lambda self, x: None
        return Lazy()(m.ones(1))
    raises(lambda m: mixin(m, False))
    raises(lambda m: mixin(m, True))


def test_a_network_of_lazy_layers_prints_and_trains_as_torch(torch):
    def net(m):
        return m.nn.Sequential(m.nn.LazyConv2d(4, 3), m.nn.LazyBatchNorm2d(), m.nn.ReLU(),
                               m.nn.Flatten(), m.nn.LazyLinear(2))
    t, r = net(torch), net(retrograd)
    assert repr(r) == repr(t)
    x = _input((2, 3, 6, 6))
    t(torch.from_numpy(x))
    r.load_state_dict(_state(t))
    t2 = net(torch)
    t2.load_state_dict(t.state_dict())
    assert repr(r) == repr(t2)  # loaded, not yet called: still lazy
    yt, yr = t(torch.from_numpy(x)), r(retrograd.tensor(x))
    t2(torch.from_numpy(x))
    assert repr(r) == repr(t2)  # Conv2d(0, 4, ...) and BatchNorm2d(0, ...), as PyTorch
    numpy.testing.assert_allclose(yr.detach().numpy(), yt.detach().numpy(), rtol=1e-4,
                                  atol=1e-5)
