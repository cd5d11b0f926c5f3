"""Learning-rate schedulers against PyTorch: the rates (and cycled momenta) over many
steps, ``state_dict`` contents, state_dicts loaded across, and the step-order warnings."""

import math
import warnings

import pytest

import retrograd


def _opt(T, name="SGD"):
    a = T.zeros(2, requires_grad=True)
    b = T.zeros(3, requires_grad=True)
    groups = [{"params": [a]}, {"params": [b], "lr": 0.05}]
    if name == "SGD":
        return T.optim.SGD(groups, lr=0.1, momentum=0.9)
    return getattr(T.optim, name)(groups, lr=0.1)


def _sched(T, opt, kind):
    L = T.optim.lr_scheduler
    return {
        "lambda": lambda: L.LambdaLR(opt, lambda e: 0.95 ** e),
        "lambda_list": lambda: L.LambdaLR(opt, [lambda e: 1 / (e + 1), lambda e: 0.5]),
        "multiplicative": lambda: L.MultiplicativeLR(opt, lambda e: 0.9),
        "step": lambda: L.StepLR(opt, step_size=3, gamma=0.5),
        "multistep": lambda: L.MultiStepLR(opt, milestones=[2, 5, 5, 9], gamma=0.3),
        "constant": lambda: L.ConstantLR(opt, factor=0.5, total_iters=4),
        "exponential": lambda: L.ExponentialLR(opt, gamma=0.9),
        "cosine": lambda: L.CosineAnnealingLR(opt, T_max=5, eta_min=0.001),
        "linear": lambda: L.LinearLR(opt, start_factor=0.25, end_factor=0.9, total_iters=6),
        "polynomial": lambda: L.PolynomialLR(opt, total_iters=6, power=2.0),
        "onecycle": lambda: L.OneCycleLR(opt, max_lr=[1.0, 0.5], total_steps=20),
        "onecycle_3phase_linear": lambda: L.OneCycleLR(
            opt, max_lr=0.8, epochs=4, steps_per_epoch=5, anneal_strategy="linear",
            three_phase=True, pct_start=0.25),
        "sequential": lambda: L.SequentialLR(
            opt, [L.LinearLR(opt, start_factor=0.1, total_iters=4),
                  L.CosineAnnealingLR(opt, T_max=8)], milestones=[4]),
        "sequential3": lambda: L.SequentialLR(
            opt, [L.ConstantLR(opt, factor=0.5, total_iters=2), L.ExponentialLR(opt, 0.8),
                  L.StepLR(opt, 2)], milestones=[3, 7]),
        "chained": lambda: L.ChainedScheduler(
            [L.ExponentialLR(opt, 0.9), L.StepLR(opt, 3, gamma=0.5)]),
    }[kind]()


KINDS = ["lambda", "lambda_list", "multiplicative", "step", "multistep", "constant",
         "exponential", "cosine", "linear", "polynomial", "onecycle",
         "onecycle_3phase_linear", "sequential", "sequential3", "chained"]


def _trace(T, kind, steps=19, opt_name="SGD"):
    opt = _opt(T, opt_name)
    sched = _sched(T, opt, kind)
    out = [sched.get_last_lr()]
    for _ in range(steps):
        opt.step()
        sched.step()
        out.append((sched.get_last_lr(), [g["lr"] for g in opt.param_groups],
                    [g.get("momentum", g.get("betas")) for g in opt.param_groups]))
    return out, _plain(sched.state_dict())


def _plain(sd):
    """A state_dict without the things that cannot be compared across libraries."""
    return {k: v for k, v in sd.items() if k not in ("lr_lambdas",)}


def _same(a, b):
    if isinstance(a, float) or isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-13, abs_tol=1e-15) or a == b
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(
            _same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    return a == b


@pytest.mark.torch
@pytest.mark.parametrize("kind", KINDS)
def test_schedule_matches_torch(torch, kind):
    ours, ref = _trace(retrograd, kind), _trace(torch, kind)
    assert _same(ours, ref), f"\nretrograd: {ours}\npytorch:   {ref}"


@pytest.mark.torch
def test_onecycle_cycles_adam_betas(torch):
    ours, ref = _trace(retrograd, "onecycle", opt_name="Adam"), \
        _trace(torch, "onecycle", opt_name="Adam")
    assert _same(ours, ref)


@pytest.mark.torch
@pytest.mark.parametrize("kind", ["step", "multistep", "exponential", "cosine", "linear",
                                  "constant", "polynomial"])
def test_closed_form_with_epoch_matches_torch(torch, kind):
    def run(T):
        opt = _opt(T)
        sched = _sched(T, opt, kind)
        out = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for epoch in (1, 4, 2, 7, 10):
                opt.step()
                sched.step(epoch)
                out.append(sched.get_last_lr())
        return out
    assert _same(run(retrograd), run(torch))


@pytest.mark.torch
@pytest.mark.parametrize("mode", [("min", "rel"), ("min", "abs"), ("max", "rel"),
                                  ("max", "abs")])
def test_reduce_on_plateau_matches_torch(torch, mode):
    metrics = [5.0, 4.0, 4.0, 4.1, 3.999, 4.2, 4.0, 4.0, 4.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]
    if mode[0] == "max":
        metrics = [-m for m in metrics]

    def run(T):
        opt = _opt(T)
        sched = T.optim.lr_scheduler.ReduceLROnPlateau(
            opt, mode=mode[0], threshold_mode=mode[1], factor=0.5, patience=1, cooldown=1,
            min_lr=[0.01, 0.02], threshold=0.01)
        out = []
        for m in metrics:
            opt.step()
            sched.step(T.tensor(m))
            out.append(sched.get_last_lr())
        return out, sched.state_dict()
    assert _same(run(retrograd), run(torch))


@pytest.mark.torch
@pytest.mark.parametrize("kind", ["step", "cosine", "onecycle", "sequential", "chained",
                                  "multistep", "lambda"])
def test_state_dict_loads_across(torch, kind):
    """PyTorch's scheduler state_dict loads into retrograd's (and back) and continues the
    same schedule."""
    def run(src, dst):
        opt = _opt(src)
        sched = _sched(src, opt, kind)
        for _ in range(4):
            opt.step()
            sched.step()
        osd = opt.state_dict()
        sd = sched.state_dict()
        opt2 = _opt(dst)
        sched2 = _sched(dst, opt2, kind)
        opt2.load_state_dict({"state": {}, "param_groups": osd["param_groups"]})
        sched2.load_state_dict(sd)
        out = []
        for _ in range(6):
            opt2.step()
            sched2.step()
            out.append(sched2.get_last_lr())
        return out
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # dst optimizers have no state to load: no matter
        ref = run(torch, torch)
        assert _same(run(torch, retrograd), ref)
        assert _same(run(retrograd, torch), ref)


def _messages(fn):
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        fn()
    return [str(r.message) for r in rec]


@pytest.mark.torch
def test_step_order_warnings_match_torch(torch):
    def before(T):
        opt = _opt(T)
        sched = T.optim.lr_scheduler.StepLR(opt, 2)
        return _messages(sched.step)

    def overridden(T):
        opt = _opt(T)
        sched = T.optim.lr_scheduler.StepLR(opt, 2)
        opt.step = lambda: None
        return _messages(sched.step)

    def get_lr_outside(T):
        opt = _opt(T)
        sched = T.optim.lr_scheduler.StepLR(opt, 2)
        return _messages(sched.get_lr)

    def right_order(T):
        opt = _opt(T)
        sched = T.optim.lr_scheduler.StepLR(opt, 2)
        return _messages(lambda: (opt.step(), sched.step()))

    for case in (before, overridden, get_lr_outside, right_order):
        ours, ref = case(retrograd), case(torch)
        assert ours == ref and (ref or case is right_order), case.__name__


@pytest.mark.torch
def test_errors_match_torch(torch):
    def error(fn):
        try:
            fn()
        except Exception as e:  # noqa: BLE001 - the point is to compare what is raised
            return type(e).__name__, str(e)
        return None

    def cases(T):
        L = T.optim.lr_scheduler
        opt = _opt(T)
        return [
            lambda: L.StepLR(object(), 2),
            lambda: L.StepLR(_opt(T), 2, last_epoch=3),
            lambda: L.LambdaLR(opt, [lambda e: 1.0]),
            lambda: L.LinearLR(opt, start_factor=0),
            lambda: L.LinearLR(opt, end_factor=2),
            lambda: L.ConstantLR(opt, factor=2),
            lambda: L.OneCycleLR(opt, 1.0),
            lambda: L.OneCycleLR(opt, 1.0, total_steps=0),
            lambda: L.OneCycleLR(opt, 1.0, total_steps=5, pct_start=2.0),
            lambda: L.OneCycleLR(opt, 1.0, total_steps=5, anneal_strategy="x"),
            lambda: L.OneCycleLR(opt, [1.0], total_steps=5),
            lambda: L.OneCycleLR(_opt(T, "Adagrad"), 1.0, total_steps=5),
            lambda: L.ReduceLROnPlateau(opt, factor=1.0),
            lambda: L.ReduceLROnPlateau(opt, mode="x"),
            lambda: L.ReduceLROnPlateau(opt, min_lr=[0.1]),
            lambda: L.SequentialLR(opt, [], []),
            lambda: L.SequentialLR(opt, [L.StepLR(opt, 2)], [1]),
            lambda: L.SequentialLR(opt, [L.ReduceLROnPlateau(opt)], []),
        ]
    for i, (r, t) in enumerate(zip(cases(retrograd), cases(torch), strict=True)):
        assert error(r) == error(t), i


def test_onecycle_past_total_steps_raises():
    opt = _opt(retrograd)
    sched = retrograd.optim.lr_scheduler.OneCycleLR(opt, 1.0, total_steps=2)
    opt.step()
    sched.step()
    sched.step()
    with pytest.raises(ValueError, match="Tried to step 3 times"):
        sched.step()


def test_tensor_lr_is_filled_in_place():
    w = retrograd.zeros(2, requires_grad=True)
    lr = retrograd.tensor(0.1)
    opt = retrograd.optim.SGD([w], lr=lr)
    sched = retrograd.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
    opt.step()
    sched.step()
    assert opt.param_groups[0]["lr"] is lr
    assert lr.item() == pytest.approx(0.05)
    assert sched.get_last_lr()[0] is not lr


def test_import_paths():
    from retrograd.optim import lr_scheduler
    from retrograd.optim.lr_scheduler import LRScheduler, _LRScheduler
    assert retrograd.optim.lr_scheduler is lr_scheduler
    assert issubclass(_LRScheduler, LRScheduler)
