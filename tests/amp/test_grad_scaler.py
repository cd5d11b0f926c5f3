"""GradScaler against PyTorch's: one training run in both libraries with infs and NaNs
injected into the loss at chosen steps, compared step by step (skipped steps, scale,
growth tracker, parameters); its errors, ``state_dict`` and pickling."""

import math
import pickle
import warnings

import numpy
import pytest

import retrograd
from retrograd.optim import fuse_into_backward

pytestmark = pytest.mark.torch

BAD = {2: math.inf, 5: math.nan, 6: math.inf, 11: -math.inf}  # step -> loss factor


def _run(lib, weights, steps=14, **kwargs):
    """The log of one run: per step (scale before, skipped, scale after, tracker)."""
    model = lib.nn.Linear(4, 3)
    with lib.no_grad():
        model.weight.copy_(lib.tensor(weights[0]))
        model.bias.copy_(lib.tensor(weights[1]))
    opt = lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    scaler = lib.amp.GradScaler("cpu", init_scale=2.0**10, growth_interval=3, **kwargs)
    x = lib.tensor(numpy.linspace(-1, 1, 8, dtype=numpy.float32).reshape(2, 4))
    log = []
    for step in range(steps):
        opt.zero_grad()
        loss = model(x).pow(2).mean() * BAD.get(step, 1.0)
        before = model.weight.detach().clone()
        scale = scaler.get_scale()
        scaler.scale(loss).backward()
        scaler.step(opt)
        skipped = bool((model.weight.detach() == before).all())
        scaler.update()
        log.append((step, scale, skipped, scaler.get_scale(), scaler._get_growth_tracker()))
    return log, model.weight.detach().numpy().copy(), scaler.state_dict()


def _weights():
    rng = numpy.random.default_rng(0)
    return (rng.standard_normal((3, 4)).astype(numpy.float32),
            rng.standard_normal(3).astype(numpy.float32))


def test_skips_and_scale_trajectory_match_torch(torch):
    w = _weights()
    ours, our_w, our_sd = _run(retrograd, w)
    theirs, their_w, their_sd = _run(torch, w)
    assert ours == theirs
    assert [s for s, _, skipped, _, _ in ours if skipped] == sorted(BAD)
    assert len({scale for _, scale, _, _, _ in ours}) > 3  # it both grew and backed off
    numpy.testing.assert_allclose(our_w, their_w, rtol=1e-6, atol=1e-6)
    assert our_sd == their_sd


def test_backoff_and_growth_factors_match_torch(torch):
    w = _weights()
    kw = {"growth_factor": 3.0, "backoff_factor": 0.25}
    assert _run(retrograd, w, **kw)[0] == _run(torch, w, **kw)[0]


def _setup(lib, **kwargs):
    model = lib.nn.Linear(2, 1)
    opt = lib.optim.SGD(model.parameters(), lr=0.1)
    scaler = lib.amp.GradScaler("cpu", **kwargs)
    loss = model(lib.ones(1, 2)).sum()
    return model, opt, scaler, loss


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 (the type is what is compared)
        return type(e), str(e)
    return None


@pytest.mark.parametrize("case", ["unscale_twice", "unscale_after_step", "step_twice",
                                  "step_before_scale", "update_before_scale", "closure",
                                  "bad_growth", "bad_backoff", "update_without_step",
                                  "bad_new_scale", "scale_bad_type"])
def test_errors_match_torch(torch, case):
    def scenario(lib):
        if case == "bad_growth":
            return _error(lambda: lib.amp.GradScaler("cpu", growth_factor=1.0))
        if case == "bad_backoff":
            return _error(lambda: lib.amp.GradScaler("cpu", backoff_factor=1.0))
        model, opt, scaler, loss = _setup(lib)
        if case == "step_before_scale":
            return _error(lambda: scaler.step(opt))
        if case == "update_before_scale":
            return _error(scaler.update)
        if case == "scale_bad_type":
            return _error(lambda: scaler.scale([loss, 3]))
        scaler.scale(loss).backward()
        if case == "unscale_twice":
            scaler.unscale_(opt)
            return _error(lambda: scaler.unscale_(opt))
        if case == "unscale_after_step":
            scaler.step(opt)
            return _error(lambda: scaler.unscale_(opt))
        if case == "step_twice":
            scaler.step(opt)
            return _error(lambda: scaler.step(opt))
        if case == "closure":
            return _error(lambda: scaler.step(opt, closure=lambda: loss))
        if case == "update_without_step":
            return _error(scaler.update)
        if case == "bad_new_scale":
            scaler.step(opt)
            return _error(lambda: scaler.update(lib.ones(2)))
        raise AssertionError(case)
    ours, theirs = scenario(retrograd), scenario(torch)
    assert ours is not None
    assert (ours[0].__name__, ours[1]) == (theirs[0].__name__, theirs[1])


def test_fp16_gradients_refused(torch):
    def scenario(lib):
        p = lib.zeros(2, dtype=lib.float16, requires_grad=True)
        opt = lib.optim.SGD([p], lr=0.1)
        scaler = lib.amp.GradScaler("cpu")
        scaler.scale((p.float() * 2).sum()).backward()
        return _error(lambda: scaler.step(opt))
    assert scenario(retrograd)[1] == scenario(torch)[1] == "Attempting to unscale FP16 gradients."


def test_unscale_then_clip(torch):
    def scenario(lib):
        model = lib.nn.Linear(3, 2)
        with lib.no_grad():
            model.weight.copy_(lib.tensor(numpy.arange(6, dtype=numpy.float32).reshape(2, 3)))
            model.bias.zero_()
        opt = lib.optim.SGD(model.parameters(), lr=0.1)
        scaler = lib.amp.GradScaler("cpu", init_scale=256.0)
        scaler.scale(model(lib.ones(4, 3)).pow(2).sum()).backward()
        scaler.unscale_(opt)
        norm = lib.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(opt)
        scaler.update()
        return float(norm), model.weight.detach().numpy().copy()
    (n1, w1), (n2, w2) = scenario(retrograd), scenario(torch)
    assert n1 == pytest.approx(n2, rel=1e-6)
    numpy.testing.assert_allclose(w1, w2, rtol=1e-6)


def test_new_scale_and_setters():
    _, opt, scaler, loss = _setup(retrograd)
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update(8.0)
    assert scaler.get_scale() == 8.0
    scaler.set_growth_factor(4.0)
    scaler.set_backoff_factor(0.125)
    scaler.set_growth_interval(7)
    assert (scaler.get_growth_factor(), scaler.get_backoff_factor(),
            scaler.get_growth_interval()) == (4.0, 0.125, 7)


def test_state_dict_round_trips_both_ways(torch):
    w = _weights()
    _, _, sd = _run(retrograd, w, steps=5)
    fresh = retrograd.amp.GradScaler("cpu")
    fresh.load_state_dict(sd)
    assert fresh.state_dict() == sd
    theirs = torch.amp.GradScaler("cpu")
    theirs.load_state_dict(sd)
    assert theirs.state_dict() == sd
    ours = retrograd.amp.GradScaler("cpu")
    ours.load_state_dict(torch.amp.GradScaler("cpu", init_scale=3.0).state_dict())
    assert ours.get_scale() == 3.0
    # a loaded scale is used by the next scale() (lazily created tensor)
    assert float(ours.scale(retrograd.ones(()))) == 3.0


def test_state_dict_into_live_scaler_and_pickle():
    _, opt, scaler, loss = _setup(retrograd, init_scale=16.0, growth_interval=1)
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    assert scaler.get_scale() == 32.0
    scaler.load_state_dict({**scaler.state_dict(), "scale": 4.0, "_growth_tracker": 0})
    assert scaler.get_scale() == 4.0
    copy = pickle.loads(pickle.dumps(scaler))
    assert copy.state_dict() == scaler.state_dict()
    scaler.scale(loss)
    scaler._per_optimizer_states[id(opt)]  # an iteration has started: pickling refused
    with pytest.raises(AssertionError, match="may only be pickled"):
        pickle.dumps(scaler)


def test_disabled_scaler_is_transparent():
    model, opt, scaler, loss = _setup(retrograd, enabled=False)
    assert scaler.scale(loss) is loss
    loss.backward()
    assert scaler.step(opt) is None
    scaler.update()
    assert (scaler.get_scale(), scaler.state_dict(), scaler.is_enabled()) == (1.0, {}, False)
    with pytest.raises(RuntimeError, match="source state dict is empty"):
        retrograd.amp.GradScaler("cpu").load_state_dict({})


@pytest.mark.cpu_build
def test_cuda_scaler_disables_itself_with_torchs_warnings(torch):
    def warned(lib):
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            a = lib.amp.GradScaler()
            b = lib.cuda.amp.GradScaler()
            c = lib.cpu.amp.GradScaler()
        return [(w.category, str(w.message)) for w in rec], (a.is_enabled(), b.is_enabled(),
                                                             c.is_enabled())
    assert warned(retrograd) == warned(torch)


def test_fused_optimizer_refused():
    model, opt, scaler, _ = _setup(retrograd)
    handle = fuse_into_backward(opt)
    scaler.scale(model(retrograd.ones(1, 2)).sum()).backward()
    with pytest.raises(RuntimeError, match="fused into backward"):
        scaler.step(opt)
    handle.remove()


def test_two_optimizers_skip_independently_and_update_once(torch):
    """Each optimizer skips only on its own gradients' infs; update() backs off if any did."""
    def scenario(lib):
        a, b = lib.nn.Linear(2, 1), lib.nn.Linear(2, 1)
        oa, ob = lib.optim.SGD(a.parameters(), lr=0.1), lib.optim.SGD(b.parameters(), lr=0.1)
        scaler = lib.amp.GradScaler("cpu", init_scale=4.0, growth_interval=1)
        log = []
        for step in range(4):
            oa.zero_grad()
            ob.zero_grad()
            x = lib.ones(1, 2)
            loss = a(x).sum() * (math.inf if step == 1 else 1.0) + b(x).sum()
            wa, wb = a.weight.detach().clone(), b.weight.detach().clone()
            scaler.scale(loss).backward()
            scaler.step(oa)
            scaler.step(ob)
            scaler.update()
            log.append((bool((a.weight == wa).all()), bool((b.weight == wb).all()),
                        scaler.get_scale()))
        return log
    assert scenario(retrograd) == scenario(torch)

