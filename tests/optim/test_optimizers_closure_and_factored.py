"""Rprop, ASGD, Adafactor, LBFGS, SparseAdam and Muon against PyTorch: errors, reprs, groups,
end-to-end training with a scheduler (LBFGS through an autograd closure), and what only
some of them have. Their trajectories and state_dicts against PyTorch are checked with the
other optimizers' (CONFIGS in test_optimizers.py)."""

import copy
import pickle

import numpy
import pytest
from test_in_backward import _batches, _loss, _model
from test_optimizers import Pair, _error, _to_numpy_sd, check_state_dicts

import retrograd
from retrograd.optim import fuse_into_backward

NAMES = ["Rprop", "ASGD", "Adafactor"]


@pytest.mark.torch
@pytest.mark.parametrize("name", NAMES)
def test_param_groups_and_defaults_match_torch(torch, name):
    check_state_dicts(torch, Pair(torch, name, {}).ro.state_dict(),
                      Pair(torch, name, {}).to.state_dict())
    extra = {"Rprop": {"etas": (0.4, 1.1)}, "ASGD": {"t0": 1, "weight_decay": 0.1},
             "Adafactor": {"d": 1.5, "weight_decay": 0.1}}[name]
    groups = [([0, 2], {"lr": 0.05, **extra}), ([1], {"lr": 0.02}), ([3], {})]
    pair = Pair(torch, name, {"lr": 0.01}, groups=groups)
    for k in range(4):
        pair.step(k)
        pair.check()


@pytest.mark.torch
@pytest.mark.parametrize("name", NAMES + ["LBFGS", "SparseAdam", "Muon"])
def test_repr_matches_torch(torch, name):
    def make(T):
        return repr(getattr(T.optim, name)([T.zeros(2, 2, requires_grad=True)]))
    assert make(retrograd) == make(torch)


@pytest.mark.torch
@pytest.mark.parametrize("name", NAMES)
def test_step_dtype_follows_default_dtype(torch, name):
    torch.set_default_dtype(torch.float64)
    retrograd.set_default_dtype(retrograd.float64)
    try:
        pair = Pair(torch, name, {"lr": 0.1})
        for k in range(3):
            pair.step(k)
        pair.check()
    finally:
        torch.set_default_dtype(torch.float32)
        retrograd.set_default_dtype(retrograd.float32)


@pytest.mark.torch
@pytest.mark.parametrize("name", NAMES + ["LBFGS"])
def test_training_loop_matches_torch(torch, name):
    """Gradients from backward, a scheduler: a small regression, end to end (LBFGS: the
    usual closure, which zeroes the gradients and calls backward)."""
    rng = numpy.random.default_rng(3)
    x, y = rng.standard_normal((16, 3)), rng.standard_normal((16, 1))
    w0, b0 = rng.standard_normal((3, 1)), rng.standard_normal(1)

    def run(T):
        w = T.tensor(w0, requires_grad=True)
        b = T.tensor(b0, requires_grad=True)
        xt, yt = T.tensor(x), T.tensor(y)
        kw = {"max_iter": 3, "line_search_fn": "strong_wolfe"} if name == "LBFGS" else {}
        opt = getattr(T.optim, name)([w, b], lr=0.05, **kw)
        sched = T.optim.lr_scheduler.StepLR(opt, step_size=3, gamma=0.5)
        losses = []

        def closure():
            opt.zero_grad()
            loss = ((xt @ w + b - yt) ** 2).mean()
            loss.backward()
            return loss
        for _ in range(8):
            losses.append(opt.step(closure).item())
            sched.step()
        return losses + w.detach().flatten().tolist() + b.tolist()
    numpy.testing.assert_allclose(run(retrograd), run(torch), rtol=1e-11)


@pytest.mark.torch
def test_errors_match_torch(torch):
    def cases(T):
        a = T.zeros(2, requires_grad=True)
        a.grad = T.ones(2)
        z = T.zeros(2, dtype=T.complex64)
        z.grad = T.ones(2, dtype=T.complex64)
        m = T.zeros(2, 3, requires_grad=True)
        m.grad = T.ones(2, 3)
        zm = T.zeros(2, 2, dtype=T.complex64)
        zm.grad = T.ones(2, 2, dtype=T.complex64)
        optim = T.optim
        return [
            lambda: optim.Rprop([a], lr=-1),
            lambda: optim.Rprop([a], lr=T.tensor([0.1, 0.2])),
            lambda: optim.Rprop([a], etas=(1.5, 1.2)),
            lambda: optim.Rprop([a], etas=(0.5, 0.9)),
            lambda: optim.Rprop([a], capturable=True).step(),
            lambda: optim.ASGD([a], lr=-1),
            lambda: optim.ASGD([a], weight_decay=-1),
            lambda: optim.ASGD([a], capturable=True).step(),
            lambda: optim.Adafactor([a], lr=-1),
            lambda: optim.Adafactor([a], beta2_decay=0.5),
            lambda: optim.Adafactor([a], eps=(-1, 1e-3)),
            lambda: optim.Adafactor([a], eps=(None, -1)),
            lambda: optim.Adafactor([a], d=0.5),
            lambda: optim.Adafactor([a], weight_decay=-1),
            lambda: optim.Adafactor([z]).step(),
            lambda: optim.LBFGS([a], lr=-1),
            lambda: optim.LBFGS([{"params": [a]}, {"params": [T.zeros(1)]}]),
            lambda: optim.LBFGS([a]).step(),
            lambda: optim.LBFGS([a], line_search_fn="armijo").step(lambda: (a * a).sum()),
            lambda: optim.SparseAdam([a], lr=0),
            lambda: optim.SparseAdam([a], eps=0),
            lambda: optim.SparseAdam([a], betas=(1.0, 0.9)),
            lambda: optim.SparseAdam([a], betas=(0.9, -0.1)),
            lambda: optim.SparseAdam([a, z]),
            lambda: optim.SparseAdam([a]).step(),
            lambda: optim.Muon([a]),
            lambda: optim.Muon([m], lr=-1),
            lambda: optim.Muon([m], momentum=-1),
            lambda: optim.Muon([m], weight_decay=-1),
            lambda: optim.Muon([m], adjust_lr_fn="rms"),
            lambda: optim.Muon([m], ns_steps=100).step(),
            lambda: optim.Muon([m], ns_coefficients=(1.0, 2.0)).step(),
            lambda: optim.Muon([zm]).step(),
        ]
    for i, (r, t) in enumerate(zip(cases(retrograd), cases(torch), strict=True)):
        assert _error(r) == _error(t), i


@pytest.mark.torch
def test_sparse_adam_without_gradients_is_a_no_op(torch):
    def run(T):
        a = T.ones(2, requires_grad=True)
        opt = T.optim.SparseAdam([a])
        return opt.step(lambda: 3.0), opt.state_dict(), a.tolist()
    assert run(retrograd) == run(torch)


@pytest.mark.torch
def test_lbfgs_state_and_evaluations_match_torch(torch):
    """The closure is called as often as in PyTorch (line search included), and the state
    (counters, history, floats) has PyTorch's keys, types and values."""
    def run(T):
        w = T.tensor([1.5, -0.5, 2.0], dtype=T.float64, requires_grad=True)
        opt = T.optim.LBFGS([w], history_size=2, line_search_fn="strong_wolfe")
        calls = []

        def closure():
            calls.append(1)
            opt.zero_grad()
            loss = (w ** 4).sum() + (w[0] - w[1]) ** 2
            loss.backward()
            return loss
        losses = [opt.step(closure).item() for _ in range(3)]
        return len(calls), losses, w, opt
    n_r, losses_r, w_r, opt_r = run(retrograd)
    n_t, losses_t, w_t, opt_t = run(torch)
    assert n_r == n_t
    numpy.testing.assert_allclose(losses_r, losses_t, rtol=1e-10)
    numpy.testing.assert_allclose(w_r.detach().numpy(), w_t.detach().numpy(), rtol=1e-9)
    check_state_dicts(torch, opt_r.state_dict(), opt_t.state_dict(), rtol=1e-9, atol=1e-12)


def test_lbfgs_pickles_and_goes_on_identically():
    def closure_for(w, opt):
        def closure():
            opt.zero_grad()
            loss = (w ** 4).sum() + w.prod()
            loss.backward()
            return loss
        return closure
    w = retrograd.tensor([1.5, -0.5], dtype=retrograd.float64, requires_grad=True)
    opt = retrograd.optim.LBFGS([w], max_iter=3)
    opt.step(closure_for(w, opt))
    copies = [pickle.loads(pickle.dumps((w, opt))), copy.deepcopy((w, opt))]
    opt.step(closure_for(w, opt))
    for w2, opt2 in copies:
        assert opt2._params[0] is w2
        opt2.step(closure_for(w2, opt2))
        numpy.testing.assert_array_equal(w.detach().numpy(), w2.detach().numpy())


def test_lbfgs_cannot_be_fused_into_backward():
    opt = retrograd.optim.LBFGS(_model().parameters())
    with pytest.raises(NotImplementedError, match="LBFGS cannot be fused into backward: "
                                                  "its step re-evaluates the loss"):
        fuse_into_backward(opt)


def test_sparse_adam_cannot_be_fused_into_backward():
    with pytest.raises(NotImplementedError, match="per-parameter update"):
        fuse_into_backward(retrograd.optim.SparseAdam(_model().parameters()))


@pytest.mark.parametrize("name", NAMES)
def test_fused_with_scheduler_equals_usual_loop(name):
    """Fused into backward with an LR scheduler: the same parameters as the usual loop."""
    models = [_model(), _model()]
    opts = [getattr(retrograd.optim, name)(m.parameters(), lr=0.05) for m in models]
    scheds = [retrograd.optim.lr_scheduler.ExponentialLR(o, gamma=0.7) for o in opts]
    handle = fuse_into_backward(opts[1])
    for x, y in _batches(4):
        for m, o, s in zip(models, opts, scheds, strict=True):
            _loss(m, x, y).backward()
            o.step()
            o.zero_grad()
            s.step()
    handle.remove()
    for p, q in zip(*(m.parameters() for m in models), strict=True):
        numpy.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())
    assert opts[0].param_groups[0]["lr"] == opts[1].param_groups[0]["lr"]


def test_adafactor_factors_matrices_only():
    w = retrograd.zeros(2, 3, 4, requires_grad=True)
    v = retrograd.zeros(5, requires_grad=True)
    opt = retrograd.optim.Adafactor([w, v])
    w.grad, v.grad = retrograd.ones(2, 3, 4), retrograd.ones(5)
    opt.step()
    assert list(opt.state[w]) == ["step", "row_var", "col_var"]
    assert opt.state[w]["row_var"].shape == (2, 3, 1)
    assert opt.state[w]["col_var"].shape == (2, 1, 4)
    assert list(opt.state[v]) == ["step", "variance"]


# ---- Muon (2-D parameters only, so not in CONFIGS' shapes) -------------------------------

MUON_CONFIGS = [{}, {"lr": 0.02, "nesterov": False, "weight_decay": 0.0},
                {"lr": 0.05, "momentum": 0.5, "adjust_lr_fn": "match_rms_adamw", "ns_steps": 3},
                {"lr": 0.01, "adjust_lr_fn": "original", "eps": 1e-3}]


def _muon_values():
    rng = numpy.random.default_rng(1)
    return [rng.standard_normal(s) for s in ((3, 4), (6, 3), (5, 5))]


def _muon_check(pair, lr):
    # The orthogonalisation runs in bfloat16 (both libraries): a float32 sum rounding the
    # other way would move one element of an update by a bfloat16 ulp (2**-8 relative).
    pair.check(rtol=1e-11, atol=2 * lr * 2 ** -8)


@pytest.mark.torch
@pytest.mark.parametrize("kw", MUON_CONFIGS, ids=str)
def test_muon_matches_torch(torch, kw):
    lr = kw.get("lr", 1e-3)
    pair = Pair(torch, "Muon", kw, values=_muon_values())
    for k in range(8):
        pair.step(k, skip=(1,) if k == 2 else ())
        _muon_check(pair, lr)
    fresh = Pair(torch, "Muon", kw, values=pair.values())
    fresh.ro.load_state_dict(_to_numpy_sd(torch, pair.to.state_dict()))
    rsd = pair.ro.state_dict()
    fresh.to.load_state_dict({
        "state": {k: {n: torch.from_numpy(v.numpy().copy()) for n, v in s.items()}
                  for k, s in rsd["state"].items()},
        "param_groups": rsd["param_groups"]})
    for k in range(8, 10):
        fresh.step(k)
        _muon_check(fresh, lr)


@pytest.mark.torch
def test_muon_float32_and_training_loop_match_torch(torch):
    rng = numpy.random.default_rng(3)
    x, y = rng.standard_normal((16, 3)), rng.standard_normal((16, 2))
    w0 = rng.standard_normal((3, 2))

    def run(T):
        w = T.tensor(w0, dtype=T.float32, requires_grad=True)
        xt, yt = T.tensor(x, dtype=T.float32), T.tensor(y, dtype=T.float32)
        opt = T.optim.Muon([w], lr=0.05)
        sched = T.optim.lr_scheduler.StepLR(opt, step_size=3, gamma=0.5)
        for _ in range(6):
            opt.zero_grad()
            ((xt @ w - yt) ** 2).mean().backward()
            opt.step()
            sched.step()
        return w.detach().numpy().copy()
    numpy.testing.assert_allclose(run(retrograd), run(torch), rtol=1e-5, atol=1e-3 * 2 ** -8)


def test_muon_fused_equals_usual_loop_and_pickles():
    models = [_model(), _model()]
    opts = [retrograd.optim.Muon([m[0].weight, m[2].weight], lr=0.02) for m in models]
    handle = fuse_into_backward(opts[1])
    for x, y in _batches(3):
        for m, o in zip(models, opts, strict=True):
            _loss(m, x, y).backward()
            o.step()
            o.zero_grad()
    handle.remove()
    for p, q in zip(*(m.parameters() for m in models), strict=True):
        numpy.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())
    params, opt = pickle.loads(pickle.dumps(([models[0][0].weight], opts[0])))
    assert opt.param_groups[0]["params"][0] is params[0]
    numpy.testing.assert_array_equal(opt.state[params[0]]["momentum_buffer"].numpy(),
                                     opts[0].state[models[0][0].weight]["momentum_buffer"]
                                     .numpy())


@pytest.mark.parametrize("name", ["Rprop", "ASGD"])
def test_unsupported_options_raise(name):
    w = retrograd.tensor([1.0], requires_grad=True)
    w.grad = retrograd.ones(1)
    with pytest.raises(NotImplementedError, match="differentiable"):
        getattr(retrograd.optim, name)([w], differentiable=True).step()
    assert w.tolist() == [1.0]


@pytest.mark.torch
@pytest.mark.parametrize("name", ["Rprop", "ASGD"])
def test_complex_params_match_torch(torch, name):
    def run(T):
        z = T.tensor([1 + 2j, -1 - 1j], dtype=T.complex128, requires_grad=T is torch)
        opt = getattr(T.optim, name)([z], lr=0.1, **({"t0": 1} if name == "ASGD" else {}))
        for k in range(4):
            z.grad = T.tensor([0.5 - 0.5j * k, (-1) ** k + 0.25j], dtype=T.complex128)
            opt.step()
        return z.detach().numpy().copy(), {k: v.numpy().copy() for k, v in
                                           opt.state_dict()["state"][0].items()}
    (rz, rs), (tz, ts) = run(retrograd), run(torch)
    numpy.testing.assert_allclose(rz, tz, rtol=1e-12)
    assert list(rs) == list(ts)
    for k in ts:
        assert rs[k].dtype == ts[k].dtype, k
        numpy.testing.assert_allclose(rs[k], ts[k], rtol=1e-12, err_msg=k)
