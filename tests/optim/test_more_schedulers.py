"""CyclicLR, CosineAnnealingWarmRestarts, PolynomialLR and ConstantLR against PyTorch: the
rates (and cycled momenta) over many steps, fractional ``step(epoch)``, ``state_dict``
contents and state_dicts loaded across, errors and warnings. The helpers are those of
test_lr_scheduler.py."""

import warnings

import pytest
from test_lr_scheduler import _messages, _opt, _plain, _same

import retrograd


class _Halving:
    """A callable object as ``scale_fn``: its ``__dict__`` is what state_dict saves."""

    def __init__(self):
        self.base = 0.5

    def __call__(self, x):
        return self.base ** x


def _sched(T, opt, kind):
    L = T.optim.lr_scheduler
    return {
        "cyclic": lambda: L.CyclicLR(opt, base_lr=0.01, max_lr=0.1, step_size_up=4),
        "cyclic_down": lambda: L.CyclicLR(opt, base_lr=[0.01, 0.02], max_lr=[0.1, 0.3],
                                          step_size_up=3, step_size_down=7),
        "cyclic2": lambda: L.CyclicLR(opt, 0.01, 0.1, step_size_up=2, step_size_down=3,
                                      mode="triangular2"),
        "cyclic_exp": lambda: L.CyclicLR(opt, 0.01, 0.1, step_size_up=3, mode="exp_range",
                                         gamma=0.9, base_momentum=0.7, max_momentum=0.95),
        "cyclic_fn_cycle": lambda: L.CyclicLR(opt, 0.01, 0.1, step_size_up=2,
                                              scale_fn=lambda x: 1 / x),
        "cyclic_fn_iter": lambda: L.CyclicLR(opt, 0.01, 0.1, step_size_up=2, mode="bogus",
                                             scale_fn=_Halving(), scale_mode="iterations"),
        "cyclic_no_momentum": lambda: L.CyclicLR(opt, 0.01, 0.1, step_size_up=5,
                                                 cycle_momentum=False),
        "warm": lambda: L.CosineAnnealingWarmRestarts(opt, T_0=5),
        "warm_mult": lambda: L.CosineAnnealingWarmRestarts(opt, T_0=3, T_mult=2,
                                                           eta_min=0.001),
        "warm_mult3": lambda: L.CosineAnnealingWarmRestarts(opt, T_0=2, T_mult=3, eta_min=1),
        "polynomial": lambda: L.PolynomialLR(opt, total_iters=12, power=0.5),
        "polynomial_default": lambda: L.PolynomialLR(opt),
        "constant": lambda: L.ConstantLR(opt, factor=0.2, total_iters=7),
        "constant_default": lambda: L.ConstantLR(opt),
    }[kind]()


KINDS = ["cyclic", "cyclic_down", "cyclic2", "cyclic_exp", "cyclic_fn_cycle", "cyclic_fn_iter",
         "cyclic_no_momentum", "warm", "warm_mult", "warm_mult3", "polynomial",
         "polynomial_default", "constant", "constant_default"]
CYCLIC = [k for k in KINDS if k.startswith("cyclic")]


def _trace(T, kind, steps=30, opt_name="SGD"):
    opt = _opt(T, opt_name)
    sched = _sched(T, opt, kind)
    out = [sched.get_last_lr()]
    for _ in range(steps):
        opt.step()
        sched.step()
        out.append((sched.get_last_lr(), [g["lr"] for g in opt.param_groups],
                    [g.get("momentum", g.get("betas")) for g in opt.param_groups]))
    return out, _plain(sched.state_dict())


@pytest.mark.torch
@pytest.mark.parametrize("kind", KINDS)
def test_schedule_matches_torch(torch, kind):
    ours, ref = _trace(retrograd, kind), _trace(torch, kind)
    assert _same(ours, ref), f"\nretrograd: {ours}\npytorch:   {ref}"


@pytest.mark.torch
@pytest.mark.parametrize("opt_name", ["Adam", "NAdam", "RAdam", "Adamax"])
@pytest.mark.parametrize("kind", ["cyclic_down", "cyclic_exp"])
def test_cyclic_cycles_beta1(torch, kind, opt_name):
    ours, ref = _trace(retrograd, kind, opt_name=opt_name), _trace(torch, kind,
                                                                   opt_name=opt_name)
    assert _same(ours, ref)


@pytest.mark.torch
@pytest.mark.parametrize("kind", ["warm", "warm_mult", "warm_mult3"])
def test_warm_restarts_fractional_epochs_match_torch(torch, kind):
    """Per-batch stepping with ``step(epoch + i / iters)``, then epochs out of order."""
    def run(T):
        opt = _opt(T)
        sched = _sched(T, opt, kind)
        out = []
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            for epoch in range(12):
                for i in range(4):
                    opt.step()
                    sched.step(epoch + i / 4)
                    out.append((sched.get_last_lr(), sched.T_cur, sched.T_i,
                                sched.last_epoch))
            for epoch in (30, 2.5, 0, 17.25, 6, 1):
                sched.step(epoch)
                out.append((sched.get_last_lr(), sched.T_cur, sched.T_i, sched.last_epoch))
            sched.step()  # and on from there without an epoch
            out.append((sched.get_last_lr(), sched.T_cur, sched.T_i, sched.last_epoch))
        out.append([str(r.message) for r in rec])
        return out, sched.state_dict()
    assert _same(run(retrograd), run(torch))


@pytest.mark.torch
@pytest.mark.parametrize("kind", ["polynomial", "constant"])
def test_closed_form_with_epoch_matches_torch(torch, kind):
    def run(T):
        opt = _opt(T)
        sched = _sched(T, opt, kind)
        out = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for epoch in (1, 4, 2, 7, 10, 15, 3):
                opt.step()
                sched.step(epoch)
                out.append(sched.get_last_lr())
        return out
    assert _same(run(retrograd), run(torch))


@pytest.mark.torch
@pytest.mark.parametrize("kind", KINDS)
def test_state_dict_loads_across(torch, kind):
    """PyTorch's scheduler state_dict loads into retrograd's (and back) and continues the
    same schedule."""
    def run(src, dst):
        opt = _opt(src)
        sched = _sched(src, opt, kind)
        for _ in range(5):
            opt.step()
            sched.step()
        osd = opt.state_dict()
        sd = sched.state_dict()
        opt2 = _opt(dst)
        sched2 = _sched(dst, opt2, kind)
        opt2.load_state_dict({"state": {}, "param_groups": osd["param_groups"]})
        sched2.load_state_dict(sd)
        out = []
        for _ in range(8):
            opt2.step()
            sched2.step()
            out.append((sched2.get_last_lr(), [g.get("momentum") for g in opt2.param_groups]))
        return out
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # dst optimizers have no state to load: no matter
        ref = run(torch, torch)
        assert _same(run(torch, retrograd), ref)
        assert _same(run(retrograd, torch), ref)


@pytest.mark.torch
def test_cyclic_scale_fn_in_state_dict(torch):
    """A function ``scale_fn`` is saved as None, a callable object as its ``__dict__``
    (restored into the receiving scheduler's object)."""
    def run(T):
        sd_fn = _sched(T, _opt(T), "cyclic_fn_cycle").state_dict()
        s = _sched(T, _opt(T), "cyclic_fn_iter")
        s._scale_fn_custom.base = 0.25
        sd_obj = s.state_dict()
        s2 = _sched(T, _opt(T), "cyclic_fn_iter")
        s2.load_state_dict(dict(sd_obj))
        return sd_fn, sd_obj, s2._scale_fn_custom.base, "_scale_fn_ref" in s2.__dict__
    assert _same(run(retrograd), run(torch))


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
            lambda: L.CyclicLR(object(), 0.1, 1.0),
            lambda: L.CyclicLR(opt, 0.1, 1.0, mode="bogus"),
            lambda: L.CyclicLR(opt, [0.1], 1.0),
            lambda: L.CyclicLR(opt, 0.1, [1.0, 2.0, 3.0]),
            lambda: L.CyclicLR(opt, 0.1, 1.0, base_momentum=[0.1]),
            lambda: L.CyclicLR(_opt(T, "Adagrad"), 0.1, 1.0),
            lambda: L.CyclicLR(_opt(T), 0.1, 1.0, last_epoch=3),
            lambda: L.CosineAnnealingWarmRestarts(opt, T_0=0),
            lambda: L.CosineAnnealingWarmRestarts(opt, T_0=1.5),
            lambda: L.CosineAnnealingWarmRestarts(opt, T_0=2, T_mult=0),
            lambda: L.CosineAnnealingWarmRestarts(opt, T_0=2, T_mult=1.5),
            lambda: L.CosineAnnealingWarmRestarts(opt, T_0=2, eta_min="0"),
            lambda: L.CosineAnnealingWarmRestarts(opt, T_0=2).step(-1),
        ]
    for i, (r, t) in enumerate(zip(cases(retrograd), cases(torch), strict=True)):
        assert error(r) == error(t), i


@pytest.mark.torch
@pytest.mark.parametrize("kind", ["cyclic", "warm"])
def test_step_order_warnings_match_torch(torch, kind):
    def before(T):
        opt = _opt(T)
        sched = _sched(T, opt, kind)
        return _messages(sched.step)

    def get_lr_outside(T):
        opt = _opt(T)
        sched = _sched(T, opt, kind)
        return _messages(sched.get_lr)

    def with_epoch(T):
        opt = _opt(T)
        sched = _sched(T, opt, kind)
        return _messages(lambda: (opt.step(), sched.step(3)))

    for case in (before, get_lr_outside, with_epoch):
        assert case(retrograd) == case(torch), case.__name__


def test_cyclic_with_tensor_lr_fills_in_place():
    w = retrograd.zeros(2, requires_grad=True)
    lr = retrograd.tensor(0.1)
    opt = retrograd.optim.SGD([w], lr=lr, momentum=0.9)
    sched = retrograd.optim.lr_scheduler.CyclicLR(opt, 0.01, 0.1, step_size_up=2)
    opt.step()
    sched.step()
    assert opt.param_groups[0]["lr"] is lr
    assert lr.item() == pytest.approx(0.055)


def test_exported():
    from retrograd.optim import lr_scheduler
    for name in ("CyclicLR", "CosineAnnealingWarmRestarts", "PolynomialLR", "ConstantLR"):
        assert name in lr_scheduler.__all__ and hasattr(lr_scheduler, name)
