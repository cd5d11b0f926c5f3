"""Optimizers against PyTorch: parameters and state after several steps, state_dict layout,
state_dicts loaded across the two libraries, and the Optimizer base's behaviour."""

import copy
import warnings

import numpy
import pytest

import retrograd
from retrograd.optim import optimizer as _optimizer

SHAPES = [(3, 4), (5,), (), (2, 3, 2)]

CONFIGS = [
    ("SGD", {"lr": 0.1}),
    ("SGD", {"lr": 0.1, "momentum": 0.9}),
    ("SGD", {"lr": 0.05, "momentum": 0.9, "dampening": 0.3}),
    ("SGD", {"lr": 0.05, "momentum": 0.8, "nesterov": True}),
    ("SGD", {"lr": 0.1, "weight_decay": 0.1}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "weight_decay": 0.05, "maximize": True}),
    ("SGD", {"lr": 0.1, "momentum": 0.5, "nesterov": True, "weight_decay": 0.1,
             "maximize": True}),
    ("Adam", {}),
    ("Adam", {"lr": 0.01, "amsgrad": True}),
    ("Adam", {"lr": 0.01, "weight_decay": 0.1}),
    ("Adam", {"lr": 0.01, "weight_decay": 0.1, "amsgrad": True, "maximize": True}),
    ("Adam", {"lr": 0.02, "betas": (0.3, 0.6), "eps": 1e-3}),
    ("Adam", {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("AdamW", {}),
    ("AdamW", {"lr": 0.01, "weight_decay": 0.1, "amsgrad": True}),
    ("AdamW", {"lr": 0.01, "maximize": True}),
    ("RMSprop", {}),
    ("RMSprop", {"lr": 0.01, "centered": True}),
    ("RMSprop", {"lr": 0.01, "momentum": 0.9}),
    ("RMSprop", {"lr": 0.01, "alpha": 0.3, "centered": True, "momentum": 0.5,
                 "weight_decay": 0.1, "maximize": True}),
    ("Adagrad", {}),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.1}),
    ("Adagrad", {"lr": 0.1, "weight_decay": 0.1, "initial_accumulator_value": 0.5,
                 "maximize": True}),
    ("Adagrad", {"lr": 0.1, "eps": 1e-3}),
    # NAdam, RAdam, Adamax, Adadelta
    ("NAdam", {}),
    ("NAdam", {"lr": 0.01, "momentum_decay": 0.1}),
    ("NAdam", {"lr": 0.01, "weight_decay": 0.1}),
    ("NAdam", {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("NAdam", {"lr": 0.02, "betas": (0.5, 0.7), "eps": 1e-3, "maximize": True}),
    ("NAdam", {"lr": 0.01, "weight_decay": 0.2, "momentum_decay": 0.0, "maximize": True,
               "decoupled_weight_decay": True}),
    ("RAdam", {}),
    # beta2 small: rho_t passes 5 from the second step, so both branches of the update run
    ("RAdam", {"lr": 0.01, "betas": (0.8, 0.7)}),
    ("RAdam", {"lr": 0.01, "betas": (0.9, 0.6), "weight_decay": 0.1}),
    ("RAdam", {"lr": 0.01, "betas": (0.9, 0.6), "weight_decay": 0.1,
               "decoupled_weight_decay": True, "maximize": True}),
    ("RAdam", {"lr": 0.02, "betas": (0.5, 0.5), "eps": 1e-2, "maximize": True}),
    ("Adamax", {}),
    ("Adamax", {"lr": 0.01, "weight_decay": 0.1}),
    ("Adamax", {"lr": 0.05, "betas": (0.5, 0.6), "eps": 1e-2, "maximize": True}),
    ("Adamax", {"lr": 0.01, "weight_decay": 0.1, "maximize": True}),
    ("Adadelta", {}),
    ("Adadelta", {"lr": 0.5, "rho": 0.5, "eps": 1e-3}),
    ("Adadelta", {"lr": 0.1, "weight_decay": 0.1}),
    ("Adadelta", {"lr": 1.0, "rho": 0.95, "weight_decay": 0.1, "maximize": True}),
    # Rprop, ASGD, Adafactor, LBFGS
    ("Rprop", {}),
    ("Rprop", {"lr": 0.05, "etas": (0.3, 1.5), "step_sizes": (1e-3, 0.2)}),
    ("Rprop", {"lr": 0.1, "maximize": True}),
    ("ASGD", {}),
    ("ASGD", {"lr": 0.05, "lambd": 0.1, "alpha": 0.5, "t0": 3, "weight_decay": 0.1}),
    ("ASGD", {"lr": 0.05, "t0": 0, "maximize": True}),
    ("Adafactor", {}),
    ("Adafactor", {"lr": 0.05, "beta2_decay": -0.5, "eps": (1e-6, 1e-2), "d": 2.0,
                   "weight_decay": 0.1}),
    ("Adafactor", {"lr": 0.5, "maximize": True}),
    # (few iterations: near the minimum, LBFGS magnifies rounding differences; PyTorch's
    # own results move 1e-10 for a 1e-15 change of the start with max_iter=5)
    ("LBFGS", {"lr": 0.2, "max_iter": 2}),
    ("LBFGS", {"max_iter": 3, "history_size": 3, "line_search_fn": "strong_wolfe"}),
    ("LBFGS", {"lr": 0.1, "max_iter": 3, "max_eval": 2, "tolerance_change": 1e-3}),
]
IDS = [f"{name}-{'-'.join(f'{k}={v}' for k, v in kw.items()) or 'default'}"
       for name, kw in CONFIGS]


def _init_values(dtype=numpy.float64):
    rng = numpy.random.default_rng(1)
    return [rng.standard_normal(s).astype(dtype) for s in SHAPES]


def _grad(values, k):
    """A deterministic gradient of step ``k`` (varied in sign and scale)."""
    return [numpy.sin(3 * v + k) + 0.1 * v ** 3 - 0.05 * k for v in values]


def _closure(T, params, k, skip):
    """A closure for optimizers that re-evaluate the loss: the loss whose gradient is
    ``_grad(values, k)`` (parameters in ``skip`` get no gradient), computed with NumPy."""
    def closure():
        values = [p.detach().numpy() for p in params]
        loss = 0.0
        for i, (p, v, g) in enumerate(zip(params, values, _grad(values, k), strict=True)):
            p.grad = None if i in skip else T.tensor(g)
            loss += float(numpy.sum(-numpy.cos(3 * v + k) / 3 + 0.025 * v ** 4 - 0.05 * k * v))
        return T.tensor(loss, dtype=T.float64)
    return closure


class Pair:
    """The same parameters and optimizer in retrograd and PyTorch."""

    def __init__(self, torch, name, kw, values=None, groups=None, foreach=None):
        values = _init_values() if values is None else values
        self.torch = torch
        self.rp = [retrograd.tensor(v.copy(), requires_grad=True) for v in values]
        self.tp = [torch.tensor(v.copy(), requires_grad=True) for v in values]
        if name not in ("LBFGS", "Muon"):  # (they have no foreach)
            kw = dict(kw, foreach=foreach)
        if groups is None:
            self.ro = getattr(retrograd.optim, name)(self.rp, **kw)
            self.to = getattr(torch.optim, name)(self.tp, **kw)
        else:  # groups: list of (indices, options)
            self.ro = getattr(retrograd.optim, name)(
                [{"params": [self.rp[i] for i in idx], **o} for idx, o in groups], **kw)
            self.to = getattr(torch.optim, name)(
                [{"params": [self.tp[i] for i in idx], **o} for idx, o in groups], **kw)

    def step(self, k, skip=()):
        if isinstance(self.ro, retrograd.optim.LBFGS):  # (its step needs the closure)
            self.ro.step(_closure(retrograd, self.rp, k, skip))
            self.to.step(_closure(self.torch, self.tp, k, skip))
            return
        for i, (rp, tp, g) in enumerate(zip(self.rp, self.tp, _grad(self.values(), k),
                                            strict=True)):
            if i in skip:
                rp.grad = tp.grad = None
            else:
                rp.grad = retrograd.tensor(g)
                tp.grad = self.torch.tensor(g)
        self.ro.step()
        self.to.step()

    def values(self):
        return [p.detach().numpy().copy() for p in self.tp]

    def check(self, rtol=1e-11, atol=1e-13):
        if isinstance(self.ro, retrograd.optim.LBFGS):
            # Iterations with dot products that NumPy's BLAS and PyTorch sum in different
            # orders, magnified by the steps; the history holds differences of gradients.
            rtol, atol = rtol * 10, atol * 100
        for rp, tp in zip(self.rp, self.tp, strict=True):
            numpy.testing.assert_allclose(rp.detach().numpy(), tp.detach().numpy(),
                                          rtol=rtol, atol=atol)
        check_state_dicts(self.torch, self.ro.state_dict(), self.to.state_dict(), rtol, atol)


def check_state_dicts(torch, rsd, tsd, rtol=1e-11, atol=1e-13):
    """Same layout (keys, order, group options, tensor dtypes and shapes) and values."""
    assert list(rsd) == list(tsd) == ["state", "param_groups"]
    assert list(rsd["state"]) == list(tsd["state"])
    for k in tsd["state"]:
        rs, ts = rsd["state"][k], tsd["state"][k]
        assert list(rs) == list(ts)
        for key in ts:
            _check_value(torch, rs[key], ts[key], key, rtol, atol)
    assert len(rsd["param_groups"]) == len(tsd["param_groups"])
    for rg, tg in zip(rsd["param_groups"], tsd["param_groups"], strict=True):
        assert list(rg) == list(tg)
        assert rg == tg


def _check_value(torch, r, t, key, rtol, atol):
    """One state value: a tensor of the same dtype, shape and values, a list of such,
    or the same kind of Python number (LBFGS keeps counters, floats and lists)."""
    if isinstance(t, list):
        assert isinstance(r, list) and len(r) == len(t), key
        for a, b in zip(r, t, strict=True):
            _check_value(torch, a, b, key, rtol, atol)
    elif isinstance(t, torch.Tensor):
        assert isinstance(r, retrograd.Tensor), key
        assert repr(r.dtype) == str(t.dtype), key
        assert tuple(r.shape) == tuple(t.shape), key
        numpy.testing.assert_allclose(r.numpy(), t.numpy(), rtol=rtol, atol=atol,
                                      err_msg=key)
    else:
        assert type(r) is type(t), key
        if t is not None:
            numpy.testing.assert_allclose(r, t, rtol=rtol, atol=atol, err_msg=key)


def _convert(v, to):
    """A state value with its tensors converted by ``to`` (lists through)."""
    if isinstance(v, list):
        return [_convert(x, to) for x in v]
    return to(v) if hasattr(v, "numpy") else v


def _to_numpy_sd(torch, sd):
    """PyTorch's state_dict with every tensor converted to a NumPy array (a copy)."""
    return {"state": {k: {n: _convert(v, lambda t: t.numpy().copy()) for n, v in s.items()}
                      for k, s in sd["state"].items()},
            "param_groups": sd["param_groups"]}


@pytest.mark.torch
@pytest.mark.parametrize("foreach", [False, True])
@pytest.mark.parametrize(("name", "kw"), CONFIGS, ids=IDS)
def test_matches_torch(torch, monkeypatch, name, kw, foreach):
    # A zero threshold sends even these small groups through the threaded foreach path.
    monkeypatch.setattr(_optimizer, "_MIN_PARALLEL", 0)
    pair = Pair(torch, name, kw, foreach=foreach)
    for k in range(8):
        pair.step(k, skip=(1,) if k == 2 else ())  # a parameter without grad is skipped
        pair.check()


@pytest.mark.torch
@pytest.mark.parametrize(("name", "kw"), CONFIGS, ids=IDS)
def test_float32_matches_torch(torch, name, kw):
    pair = Pair(torch, name, kw, values=_init_values(numpy.float32))
    for k in range(4):
        pair.step(k)
    pair.check(rtol=2e-5, atol=2e-6)


@pytest.mark.torch
@pytest.mark.parametrize(("name", "kw"), CONFIGS, ids=IDS)
def test_load_torch_state_dict(torch, name, kw):
    """PyTorch's state_dict, as NumPy arrays, continues identically in retrograd; and
    retrograd's, converted to torch tensors, continues identically in PyTorch."""
    pair = Pair(torch, name, kw)
    for k in range(3):
        pair.step(k)
    pair.check()
    fresh = Pair(torch, name, kw, values=pair.values())
    fresh.ro.load_state_dict(_to_numpy_sd(torch, pair.to.state_dict()))
    rsd = pair.ro.state_dict()
    fresh.to.load_state_dict({
        "state": {k: {n: _convert(v, lambda t: torch.from_numpy(t.numpy().copy()))
                      for n, v in s.items()}
                  for k, s in rsd["state"].items()},
        "param_groups": rsd["param_groups"]})
    # (both cast NAdam's mu_product to the parameter's dtype on loading, as PyTorch does)
    check_state_dicts(torch, fresh.ro.state_dict(), fresh.to.state_dict())
    for k in range(3, 6):
        fresh.step(k)
        fresh.check()


@pytest.mark.torch
def test_param_groups_match_torch(torch):
    groups = [([0, 2], {"lr": 0.05, "momentum": 0.5}),
              ([1], {"weight_decay": 0.1, "nesterov": True, "momentum": 0.9}),
              ([3], {})]
    pair = Pair(torch, "SGD", {"lr": 0.1, "momentum": 0.8}, groups=groups)
    for k in range(4):
        pair.step(k)
        pair.check()
    groups = [([3, 1], {"lr": 0.05, "amsgrad": True}), ([0, 2], {"betas": (0.8, 0.9)})]
    pair = Pair(torch, "Adam", {"lr": 0.01}, groups=groups)
    for k in range(4):
        pair.step(k)
        pair.check()


@pytest.mark.torch
def test_state_before_any_step(torch):
    for name in ("SGD", "Adam", "AdamW", "RMSprop", "Adagrad"):
        pair = Pair(torch, name, {"lr": 0.1})
        check_state_dicts(torch, pair.ro.state_dict(), pair.to.state_dict())


@pytest.mark.torch
@pytest.mark.parametrize("name", ["Adam", "RMSprop", "Adagrad"])
def test_step_dtype_follows_default_dtype(torch, name):
    torch.set_default_dtype(torch.float64)
    retrograd.set_default_dtype(retrograd.float64)
    try:
        pair = Pair(torch, name, {"lr": 0.1})
        pair.step(0)
        pair.check()
    finally:
        torch.set_default_dtype(torch.float32)


@pytest.mark.torch
def test_tensor_lr_and_betas(torch):
    r = retrograd.tensor([1.0, -2.0], dtype=retrograd.float64, requires_grad=True)
    t = torch.tensor([1.0, -2.0], dtype=torch.float64, requires_grad=True)
    ro = retrograd.optim.Adam([r], lr=retrograd.tensor(0.1),
                              betas=(retrograd.tensor(0.8), retrograd.tensor(0.9)))
    to = torch.optim.Adam([t], lr=torch.tensor(0.1), betas=(torch.tensor(0.8),
                                                             torch.tensor(0.9)))
    for _ in range(3):
        r.grad = retrograd.tensor([0.5, 0.25], dtype=retrograd.float64)
        t.grad = torch.tensor([0.5, 0.25], dtype=torch.float64)
        ro.step()
        to.step()
    numpy.testing.assert_allclose(r.detach().numpy(), t.detach().numpy(), rtol=1e-6)


def test_foreach_and_loop_identical(monkeypatch):
    """The threaded foreach path and the per-parameter loop give identical bits."""
    monkeypatch.setattr(_optimizer, "_MIN_PARALLEL", 0)
    results = []
    for foreach in (False, True):
        ps = [retrograd.tensor(v, requires_grad=True) for v in _init_values(numpy.float32)]
        opt = retrograd.optim.Adam(ps, lr=0.01, amsgrad=True, weight_decay=0.1,
                                   foreach=foreach)
        for k in range(3):
            for p, g in zip(ps, _grad([p.detach().numpy() for p in ps], k), strict=True):
                p.grad = retrograd.tensor(g.astype(numpy.float32))
            opt.step()
        results.append([p.detach().numpy().copy() for p in ps])
    for a, b in zip(*results, strict=True):
        numpy.testing.assert_array_equal(a, b)


def test_step_param_is_the_unit_of_step():
    """``_step_param`` per parameter (fused into backward later) equals ``step``."""
    vals = _init_values()
    a = [retrograd.tensor(v, requires_grad=True) for v in vals]
    b = [retrograd.tensor(v, requires_grad=True) for v in vals]
    oa = retrograd.optim.AdamW(a, lr=0.01)
    ob = retrograd.optim.AdamW(b, lr=0.01)
    for k in range(3):
        for x, y, g in zip(a, b, _grad(vals, k), strict=True):
            x.grad, y.grad = retrograd.tensor(g), retrograd.tensor(g)
        oa.step()
        for p in b:
            ob._step_param(p, ob.param_groups[0])
    for x, y in zip(a, b, strict=True):
        numpy.testing.assert_array_equal(x.detach().numpy(), y.detach().numpy())


def test_step_is_not_recorded_and_bumps_versions():
    w = retrograd.tensor([1.0, 2.0], requires_grad=True)
    opt = retrograd.optim.SGD([w], lr=0.1, momentum=0.9)
    (w * w).sum().backward()
    v = w._version
    opt.step()
    assert w.grad_fn is None and w.requires_grad and w._version > v
    assert not opt.state[w]["momentum_buffer"].requires_grad


def test_saved_tensor_sees_the_update():
    w = retrograd.tensor([1.0, 2.0], requires_grad=True)
    opt = retrograd.optim.SGD([w], lr=0.1)
    y = (w * w).sum()
    w.grad = retrograd.ones(2)
    opt.step()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


def test_training_loop_with_backward_and_closure():
    w = retrograd.tensor([3.0, -2.0], requires_grad=True)
    opt = retrograd.optim.SGD([w], lr=0.1)

    def closure():
        opt.zero_grad()
        assert retrograd.is_grad_enabled()
        loss = (w * w).sum()
        loss.backward()
        return loss

    losses = [opt.step(closure).item() for _ in range(20)]
    assert losses[-1] < 1e-2 * losses[0]
    assert retrograd.is_grad_enabled()


@pytest.mark.torch
def test_zero_grad(torch):
    for set_to_none in (True, False):
        r = retrograd.tensor([1.0, 2.0], requires_grad=True)
        opt = retrograd.optim.SGD([r])
        (r * r).sum().backward()
        g = r.grad
        opt.zero_grad(set_to_none=set_to_none)
        if set_to_none:
            assert r.grad is None
        else:
            assert r.grad is g and r.grad.tolist() == [0.0, 0.0]
    opt.zero_grad()  # a parameter without grad is fine


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the point is to compare what is raised
        return type(e).__name__, str(e)
    return None


@pytest.mark.torch
def test_errors_match_torch(torch):
    def cases(T):
        a = T.zeros(2, requires_grad=True)
        b = T.zeros(3, requires_grad=True)
        nonleaf = a * 2
        return [
            lambda: T.optim.SGD([], lr=0.1),
            lambda: T.optim.SGD(a, lr=0.1),
            lambda: T.optim.SGD([nonleaf], lr=0.1),
            lambda: T.optim.SGD([1.0], lr=0.1),
            lambda: T.optim.SGD([{"params": {a}}], lr=0.1),
            lambda: T.optim.SGD([{"params": [a]}, {"params": [a, b]}], lr=0.1),
            lambda: T.optim.SGD([("a", a), b], lr=0.1),
            lambda: T.optim.SGD([a], lr=-1),
            lambda: T.optim.SGD([a], momentum=-1),
            lambda: T.optim.SGD([a], weight_decay=-1),
            lambda: T.optim.SGD([a], nesterov=True),
            lambda: T.optim.SGD([a], fused=True, foreach=True),
            lambda: T.optim.Adam([a], betas=(1.0, 0.9)),
            lambda: T.optim.Adam([a], betas=(0.9, 1.5)),
            lambda: T.optim.Adam([a], betas=(0, 0.9)),
            lambda: T.optim.Adam([a], eps=-1),
            lambda: T.optim.Adam([a], weight_decay=-1),
            lambda: T.optim.AdamW([a], lr=-0.5),
            lambda: T.optim.RMSprop([a], alpha=-1),
            lambda: T.optim.RMSprop([a], momentum=-1),
            lambda: T.optim.Adagrad([a], lr_decay=-1),
            lambda: T.optim.Adagrad([a], initial_accumulator_value=-1),
            lambda: T.optim.SGD([a]).add_param_group([b]),
            lambda: T.optim.SGD([a]).add_param_group({"params": [a]}),
            lambda: T.optim.SGD([a]).load_state_dict(
                {"state": {}, "param_groups": [{"params": [0]}, {"params": [1]}]}),
            lambda: T.optim.SGD([a]).load_state_dict(
                {"state": {}, "param_groups": [{"params": [0, 1]}]}),
        ]
    for i, (r, t) in enumerate(zip(cases(retrograd), cases(torch), strict=True)):
        assert _error(r) == _error(t), i


@pytest.mark.torch
def test_names_and_repr_match_torch(torch):
    def make(T):
        a, b = T.zeros(2, requires_grad=True), T.zeros(3, requires_grad=True)
        opt = T.optim.Adam([("w", a), ("b", b)], lr=0.1)
        opt.add_param_group({"params": [("c", T.zeros(1, requires_grad=True))], "lr": 0.5})
        return repr(opt), opt.state_dict()["param_groups"]
    assert make(retrograd) == make(torch)


@pytest.mark.torch
def test_hooks_match_torch(torch):
    def run(T):
        from importlib import import_module
        mod = import_module(T.__name__ + ".optim.optimizer")
        log = []
        w = T.tensor([1.0, 2.0], requires_grad=True)
        opt = T.optim.SGD([w], lr=0.1)
        handles = [
            mod.register_optimizer_step_pre_hook(lambda o, a, k: log.append("global pre")),
            mod.register_optimizer_step_post_hook(lambda o, a, k: log.append("global post")),
            opt.register_step_pre_hook(lambda o, a, k: log.append(("pre", len(a), k))),
            opt.register_step_post_hook(lambda o, a, k: log.append("post")),
            opt.register_state_dict_pre_hook(lambda o: log.append("sd pre")),
            opt.register_state_dict_pre_hook(lambda o: log.append("sd pre first"),
                                             prepend=True),
            opt.register_state_dict_post_hook(lambda o, sd: log.append(sorted(sd))),
            opt.register_load_state_dict_pre_hook(lambda o, sd: log.append("load pre")),
            opt.register_load_state_dict_post_hook(lambda o: log.append("load post")),
        ]
        w.grad = T.ones(2)
        opt.step()
        opt.load_state_dict(opt.state_dict())
        for h in handles:
            h.remove()
        opt.step()
        log.append(w.tolist())
        return log
    assert run(retrograd) == run(torch)


@pytest.mark.torch
def test_pre_hook_may_replace_arguments(torch):
    def run(T):
        w = T.tensor([1.0], requires_grad=True)
        opt = T.optim.SGD([w], lr=0.1)
        w.grad = T.ones(1)
        calls = []
        opt.register_step_pre_hook(lambda o, a, k: ((a[0],), {"closure": lambda: 7.0}))
        opt.register_step_post_hook(lambda o, a, k: calls.append(sorted(k)))
        return opt.step(), calls
    assert run(retrograd) == run(torch)


def test_deepcopy_and_load_keep_training():
    w = retrograd.tensor([1.0, -1.0], requires_grad=True)
    opt = retrograd.optim.Adam([w], lr=0.1)
    w.grad = retrograd.ones(2)
    opt.step()
    clone = copy.deepcopy(opt)
    assert clone.state_dict()["param_groups"] == opt.state_dict()["param_groups"]
    sd = opt.state_dict()
    opt2 = retrograd.optim.Adam([w], lr=0.1)
    opt2.load_state_dict(sd)
    assert opt2.state[w]["step"].item() == 1.0
    # retrograd tensors of the parameter's dtype are shared, as PyTorch shares them
    assert opt2.state[w]["exp_avg"] is opt.state[w]["exp_avg"]


def test_load_casts_state_to_param_dtype_but_not_step():
    w = retrograd.tensor([1.0, -1.0], dtype=retrograd.float64, requires_grad=True)
    opt = retrograd.optim.Adam([w])
    sd = {"state": {0: {"step": numpy.array(4.0, dtype=numpy.float32),
                        "exp_avg": numpy.ones(2, dtype=numpy.float32),
                        "exp_avg_sq": numpy.ones(2, dtype=numpy.float32)}},
          "param_groups": opt.state_dict()["param_groups"]}
    opt.load_state_dict(sd)
    s = opt.state[w]
    assert s["step"].dtype == retrograd.float32 and s["exp_avg"].dtype == retrograd.float64
    s["exp_avg"].mul_(2)
    assert sd["state"][0]["exp_avg"].tolist() == [1.0, 1.0]  # foreign arrays are copied


def test_legacy_float_step_becomes_tensor():
    w = retrograd.tensor([1.0], requires_grad=True)
    opt = retrograd.optim.Adam([w])
    sd = {"state": {0: {"step": 3, "exp_avg": numpy.zeros(1, numpy.float32),
                        "exp_avg_sq": numpy.zeros(1, numpy.float32)}},
          "param_groups": opt.state_dict()["param_groups"]}
    opt.load_state_dict(sd)
    assert isinstance(opt.state[w]["step"], retrograd.Tensor)
    assert opt.state[w]["step"].item() == 3.0


def test_unsupported_options_raise():
    w = retrograd.tensor([1.0], requires_grad=True)
    w.grad = retrograd.ones(1)
    with pytest.raises(NotImplementedError, match="differentiable"):
        retrograd.optim.Adam([w], differentiable=True).step()
    with pytest.raises(AssertionError, match="capturable"):
        retrograd.optim.Adam([w], capturable=True).step()


def test_fused_runs_the_per_parameter_update():
    vals = _init_values()
    out = []
    for fused in (None, True):
        ps = [retrograd.tensor(v, requires_grad=True) for v in vals]
        opt = retrograd.optim.Adam(ps, lr=0.01, fused=fused)
        for p, g in zip(ps, _grad(vals, 0), strict=True):
            p.grad = retrograd.tensor(g)
        opt.step()
        out.append([p.detach().numpy() for p in ps])
        assert opt.state[ps[0]]["step"].dtype == retrograd.float32
    for a, b in zip(*out, strict=True):
        numpy.testing.assert_array_equal(a, b)


def test_duplicate_params_warn():
    w = retrograd.tensor([1.0], requires_grad=True)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        retrograd.optim.SGD([w, w], lr=0.1)
    assert any("duplicate parameters" in str(r.message) for r in rec)


def test_complex_params_update_as_real_pairs():
    z = retrograd.tensor([1 + 2j, -1 - 1j])
    z.grad = retrograd.tensor([0.5 - 0.5j, 1 + 0j])
    x = retrograd.tensor([1.0, 2.0, -1.0, -1.0])
    x.grad = retrograd.tensor([0.5, -0.5, 1.0, 0.0])
    for cls in (retrograd.optim.Adam, retrograd.optim.RMSprop, retrograd.optim.Adagrad):
        oz, ox = cls([z], lr=0.1), cls([x], lr=0.1)
        oz.step()
        ox.step()
        numpy.testing.assert_allclose(z.detach().numpy().view(numpy.float32),
                                      x.detach().numpy(), rtol=1e-6)


def test_forked_child_gets_a_new_pool(monkeypatch):
    pool = _optimizer._get_pool()
    assert _optimizer._get_pool() is pool
    monkeypatch.setattr(_optimizer, "_pool_pid", -1)
    assert _optimizer._get_pool() is not pool


@pytest.mark.torch
def test_duplicate_param_updates_twice_like_torch(torch, monkeypatch):
    """A parameter given twice is updated twice, one update after the other (as PyTorch's
    for-loop does; its foreach kernels interleave the two), with or without foreach."""
    monkeypatch.setattr(_optimizer, "_MIN_PARALLEL", 0)

    def run(T, foreach=False):
        w = T.tensor([1.0, -2.0], dtype=T.float64, requires_grad=True)
        v = T.tensor([0.5], dtype=T.float64, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            opt = T.optim.Adam([w, v, w], lr=0.1, foreach=foreach)
        for _ in range(2):
            w.grad = T.tensor([0.3, 0.1], dtype=T.float64)
            v.grad = T.tensor([0.2], dtype=T.float64)
            opt.step()
        return w.tolist() + v.tolist() + [opt.state[w]["step"].item()]
    ref = run(torch)
    assert numpy.allclose(run(retrograd), ref, rtol=1e-12)
    assert numpy.allclose(run(retrograd, True), ref, rtol=1e-12)


@pytest.mark.torch
@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad"])
def test_training_loop_matches_torch(torch, name):
    """Gradients from backward, zero_grad, a scheduler: a small regression, end to end."""
    rng = numpy.random.default_rng(3)
    x, y = rng.standard_normal((16, 3)), rng.standard_normal((16, 1))
    w0, b0 = rng.standard_normal((3, 1)), rng.standard_normal(1)

    def run(T):
        w = T.tensor(w0, requires_grad=True)
        b = T.tensor(b0, requires_grad=True)
        xt, yt = T.tensor(x), T.tensor(y)
        opt = getattr(T.optim, name)([w, b], lr=0.05)
        sched = T.optim.lr_scheduler.StepLR(opt, step_size=3, gamma=0.5)
        losses = []
        for _ in range(8):
            opt.zero_grad()
            loss = ((xt @ w + b - yt) ** 2).mean()
            loss.backward()
            opt.step()
            sched.step()
            losses.append(loss.item())
        return losses + w.detach().flatten().tolist() + b.tolist()
    numpy.testing.assert_allclose(run(retrograd), run(torch), rtol=1e-11)


@pytest.mark.parametrize("kw", [{"maximize": True}, {"weight_decay": 0.1}])
def test_zero_dim_parameter_state_under_memory_accounting(kw):
    """A 0-d parameter's directed gradient stays an array (a NumPy scalar cannot be booked:
    the memory tracker holds weak references)."""
    retrograd.memory._record_memory_history()
    try:
        p = retrograd.tensor(1.0, requires_grad=True)
        opt = retrograd.optim.SGD([p], lr=0.1, momentum=0.9, **kw)
        (p * p).backward()
        opt.step()
    finally:
        retrograd.memory._record_memory_history(None)
    expected = 1.0 + 0.2 if kw.get("maximize") else 1.0 - 0.1 * 2.1
    assert abs(p.item() - expected) < 1e-6
