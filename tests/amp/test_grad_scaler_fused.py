"""GradScaler with the optimizer fused into backward (``fuse_into_backward(opt,
grad_scaler=scaler)``): a run with infs and NaNs injected into the loss skips the same
steps, follows the same scale trajectory and ends with the same weights as PyTorch's
usual loop (``scaler.scale(loss).backward(); scaler.step(opt); scaler.update()``), with
clipping and gradient accumulation too; and the scaler's errors for fused optimizers."""

import math

import numpy
import pytest

import retrograd
from retrograd.optim import fuse_into_backward

pytestmark = pytest.mark.torch

BAD = {2: math.inf, 5: math.nan, 6: math.inf, 11: -math.inf}  # step -> loss factor


def _run(lib, weights, fused=False, clip=None, accumulate=1, steps=14, adam=False):
    """Per step: (scale before, skipped, scale after, growth tracker); the final weight."""
    model = lib.nn.Linear(4, 3)
    with lib.no_grad():
        model.weight.copy_(lib.tensor(weights[0]))
        model.bias.copy_(lib.tensor(weights[1]))
    opt = lib.optim.Adam(model.parameters(), lr=0.05) if adam else \
        lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    scaler = lib.amp.GradScaler("cpu", init_scale=2.0**10, growth_interval=3)
    handle = fuse_into_backward(opt, grad_scaler=scaler, clip_grad_norm=clip,
                                accumulate_steps=accumulate) if fused else None
    xs = [lib.tensor(numpy.linspace(-1, 1 + k, 8, dtype=numpy.float32).reshape(2, 4))
          for k in range(accumulate)]
    log = []
    for step in range(steps):
        opt.zero_grad()
        before = model.weight.detach().clone()
        scale = scaler.get_scale()
        for x in xs:
            loss = model(x).pow(2).mean() * BAD.get(step, 1.0) / accumulate
            if fused:
                handle.backward(scaler.scale(loss))
            else:
                scaler.scale(loss).backward()
        if clip is not None and not fused:
            scaler.unscale_(opt)
            lib.nn.utils.clip_grad_norm_(model.parameters(), clip)
        scaler.step(opt)
        skipped = bool((model.weight.detach() == before).all())
        scaler.update()
        log.append((step, scale, skipped, scaler.get_scale(), scaler._get_growth_tracker()))
    if handle is not None:
        assert all(p.grad is None for p in model.parameters())
        handle.remove()
    return log, model.weight.detach().numpy().copy()


def _weights():
    rng = numpy.random.default_rng(1)
    return (rng.standard_normal((3, 4)).astype(numpy.float32),
            rng.standard_normal(3).astype(numpy.float32))


@pytest.mark.parametrize("clip, accumulate, adam", [(None, 1, False), (0.5, 1, False),
                                                    (None, 2, False), (0.5, 3, True)])
def test_fused_skips_and_scale_trajectory_match_torchs_usual_loop(torch, clip, accumulate,
                                                                  adam):
    w = _weights()
    ours, our_w = _run(retrograd, w, fused=True, clip=clip, accumulate=accumulate, adam=adam)
    theirs, their_w = _run(torch, w, clip=clip, accumulate=accumulate, adam=adam)
    assert ours == theirs
    assert [s for s, _, skipped, _, _ in ours if skipped] == sorted(BAD)
    numpy.testing.assert_allclose(our_w, their_w, rtol=1e-5, atol=1e-6)


def test_fused_equals_retrograds_usual_loop_bit_for_bit():
    w = _weights()
    fused, fused_w = _run(retrograd, w, fused=True, clip=0.5)
    usual, usual_w = _run(retrograd, w, clip=0.5)
    assert fused == usual
    numpy.testing.assert_array_equal(fused_w, usual_w)


def test_scaler_errors_for_fused_optimizers():
    model = retrograd.nn.Linear(2, 1)
    opt = retrograd.optim.SGD(model.parameters(), lr=0.1)
    scaler = retrograd.amp.GradScaler("cpu")
    with pytest.raises(TypeError, match="grad_scaler must be an amp.GradScaler"):
        fuse_into_backward(opt, grad_scaler=object())
    handle = fuse_into_backward(opt, grad_scaler=scaler)
    loss = scaler.scale(model(retrograd.ones(1, 2)).sum())
    with pytest.raises(RuntimeError, match="came before the backward pass"):
        scaler.step(opt)
    handle.backward(loss)
    with pytest.raises(RuntimeError, match="unscale_\\(\\) has nothing to unscale"):
        scaler.unscale_(opt)
    assert scaler.step(opt) is None
    scaler.update()
    handle.remove()
    other = retrograd.amp.GradScaler("cpu")
    handle = fuse_into_backward(opt)
    other.scale(model(retrograd.ones(1, 2)).sum()).backward()
    with pytest.raises(RuntimeError, match="fused into backward without it"):
        other.step(opt)
    handle.remove()
