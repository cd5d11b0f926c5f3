"""torch.optim.swa_utils against PyTorch: AveragedModel (SWA, EMA, buffers), the averaging
functions, update_bn and SWALR."""

import numpy
import pytest
from test_optimizers import _error

import retrograd

def _model(T):
    nn = T.nn
    return nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.ReLU(), nn.Linear(4, 2))


def _set_weights(T, model, k):
    """Deterministic weights (and BatchNorm statistics) for 'training step' k."""
    with T.no_grad():
        for i, (_, t) in enumerate(sorted(model.state_dict().items())):
            if t.is_floating_point():
                n = t.numel()
                t.copy_(T.tensor(numpy.sin(numpy.arange(n) + 0.7 * k + i).reshape(
                    tuple(t.shape)), dtype=t.dtype))
            else:
                t.fill_(3 * k + i)


def _sd(sd):
    return {k: v.detach().numpy().copy() for k, v in sd.items()}


def _assert_sd_equal(r, t, rtol=1e-6):
    r, t = _sd(r), _sd(t)
    assert list(r) == list(t)
    for k in t:
        assert r[k].dtype == t[k].dtype, k
        numpy.testing.assert_allclose(r[k], t[k], rtol=rtol, atol=1e-7, err_msg=k)


def _averaged(T, **kw):
    sw = T.optim.swa_utils
    fns = {"ema": lambda: {"avg_fn": sw.get_ema_avg_fn(0.8)},
           "ema_multi": lambda: {"multi_avg_fn": sw.get_ema_multi_avg_fn(0.8)},
           "swa_multi": lambda: {"multi_avg_fn": sw.get_swa_multi_avg_fn()},
           "swa_fn": lambda: {"avg_fn": sw.get_swa_avg_fn()},
           None: dict}
    model = _model(T)
    avg = sw.AveragedModel(model, use_buffers=kw.get("use_buffers", False),
                           **fns[kw.get("fn")]())
    for k in range(4):
        _set_weights(T, model, k)
        avg.update_parameters(model)
    return avg


@pytest.mark.torch
@pytest.mark.parametrize("fn", [None, "ema", "ema_multi", "swa_multi", "swa_fn"])
@pytest.mark.parametrize("use_buffers", [False, True])
def test_averaged_model_matches_torch(torch, fn, use_buffers):
    if fn == "swa_multi" and use_buffers:  # addcdiv_ of BatchNorm's integer batch count
        for T in (retrograd, torch):
            with pytest.raises(RuntimeError):
                _averaged(T, fn=fn, use_buffers=use_buffers)
        return
    r = _averaged(retrograd, fn=fn, use_buffers=use_buffers)
    t = _averaged(torch, fn=fn, use_buffers=use_buffers)
    _assert_sd_equal(r.state_dict(), t.state_dict())
    assert int(r.n_averaged) == int(t.n_averaged) == 4
    assert repr(r) == repr(t)
    x = numpy.linspace(-1, 1, 15).reshape(5, 3).astype(numpy.float32)
    r.eval()
    t.eval()
    numpy.testing.assert_allclose(r(retrograd.tensor(x)).detach().numpy(),
                                  t(torch.tensor(x)).detach().numpy(), rtol=1e-5, atol=1e-6)


def test_averaged_model_is_a_copy_without_grad_history():
    model = _model(retrograd)
    avg = retrograd.optim.swa_utils.AveragedModel(model)
    assert avg.module is not model
    avg.update_parameters(model)
    avg.update_parameters(model)
    assert all(p.grad_fn is None and p.requires_grad for p in avg.parameters())
    assert list(avg.state_dict())[0] == "n_averaged"


@pytest.mark.torch
def test_errors_match_torch(torch):
    def cases(T):
        sw = T.optim.swa_utils
        opt = T.optim.SGD([T.zeros(1, requires_grad=True)], lr=0.1)
        return [
            lambda: sw.AveragedModel(_model(T), avg_fn=sw.get_swa_avg_fn(),
                                     multi_avg_fn=sw.get_swa_multi_avg_fn()),
            lambda: sw.get_ema_avg_fn(1.5),
            lambda: sw.get_ema_multi_avg_fn(-0.1),
            lambda: sw.SWALR(opt, swa_lr=0.05, anneal_strategy="exp"),
            lambda: sw.SWALR(opt, swa_lr=0.05, anneal_epochs=-1),
            lambda: sw.SWALR(opt, swa_lr=0.05, anneal_epochs=2.5),
            lambda: sw.SWALR(opt, swa_lr=[0.05, 0.01]),
        ]
    for i, (r, t) in enumerate(zip(cases(retrograd), cases(torch), strict=True)):
        assert _error(r) == _error(t), i


@pytest.mark.torch
@pytest.mark.parametrize("as_tuple", [False, True])
def test_update_bn_matches_torch(torch, as_tuple):
    rng = numpy.random.default_rng(0)
    data = [rng.standard_normal((6, 3)).astype(numpy.float32) for _ in range(3)]

    def run(T):
        model = _model(T)
        _set_weights(T, model, 1)
        model.eval()
        loader = [(T.tensor(x), T.zeros(6)) if as_tuple else T.tensor(x) for x in data]
        T.optim.swa_utils.update_bn(loader, model)
        bn = model[1]
        return model.training, bn.momentum, model.state_dict()
    r, t = run(retrograd), run(torch)
    assert r[:2] == t[:2] == (False, 0.1)
    _assert_sd_equal(r[2], t[2], rtol=1e-5)


def test_update_bn_without_batchnorm_does_nothing():
    model = retrograd.nn.Linear(2, 2).eval()
    calls = []
    model.register_forward_hook(lambda *a: calls.append(1))
    assert retrograd.optim.swa_utils.update_bn([retrograd.zeros(1, 2)], model) is None
    assert calls == [] and not model.training


@pytest.mark.torch
@pytest.mark.parametrize(("strategy", "epochs"), [("cos", 3), ("linear", 4), ("cos", 0),
                                                  ("linear", 1)])
def test_swalr_matches_torch(torch, strategy, epochs):
    def run(T):
        a = T.zeros(1, requires_grad=True)
        b = T.zeros(1, requires_grad=True)
        opt = T.optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.3}], lr=0.1)
        cosine = T.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=10)
        swa = T.optim.swa_utils.SWALR(opt, swa_lr=[0.05, 0.01], anneal_epochs=epochs,
                                      anneal_strategy=strategy)
        lrs = []
        for epoch in range(10):
            opt.step()
            (swa if epoch >= 3 else cosine).step()
            lrs.append([g["lr"] for g in opt.param_groups])
        sd = swa.state_dict()
        swa2 = T.optim.swa_utils.SWALR(opt, swa_lr=0.5)
        swa2.load_state_dict(sd)
        swa2.step()
        lrs.append([g["lr"] for g in opt.param_groups])
        return lrs, sorted(sd), swa.get_last_lr(), opt.param_groups[0]["swa_lr"]
    r, t = run(retrograd), run(torch)
    numpy.testing.assert_allclose(r[0], t[0], rtol=1e-13)
    assert r[1:] == t[1:]


@pytest.mark.torch
def test_swa_training_recipe_matches_torch(torch):
    """The documented recipe: train, average from an epoch on with SWALR, update_bn."""
    rng = numpy.random.default_rng(1)
    xs = [rng.standard_normal((8, 3)).astype(numpy.float32) for _ in range(4)]
    ys = [rng.standard_normal((8, 2)).astype(numpy.float32) for _ in range(4)]

    def run(T):
        model = _model(T)
        _set_weights(T, model, 0)
        swa_model = T.optim.swa_utils.AveragedModel(model)
        opt = T.optim.SGD(model.parameters(), lr=0.1)
        swa_sched = T.optim.swa_utils.SWALR(opt, swa_lr=0.05, anneal_epochs=2)
        for epoch in range(5):
            for x, y in zip(xs, ys, strict=True):
                opt.zero_grad()
                ((model(T.tensor(x)) - T.tensor(y)) ** 2).mean().backward()
                opt.step()
            if epoch >= 2:
                swa_model.update_parameters(model)
                swa_sched.step()
        T.optim.swa_utils.update_bn([T.tensor(x) for x in xs], swa_model)
        return swa_model.state_dict()
    _assert_sd_equal(run(retrograd), run(torch), rtol=1e-4)
