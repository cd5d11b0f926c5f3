"""Checkpointing on a device (the CuPy-shaped emulator of ``tests/device``): every path
that moves or compares saved tensors (recomputation, CPU and disk offload, the values
check) works on device arrays and gives the CPU run's gradients."""

import functools

import pytest
from _ckpt_models import D, assert_same_grads, block, grads, inputs
from device.emulated_run import emulating

import retrograd
from retrograd.utils.checkpoint import (CheckpointPolicy, checkpoint, checkpoint_sequential,
                                        create_selective_checkpoint_contexts)

P = CheckpointPolicy


def _offload(ctx, op, *args, **kwargs):
    return {"linear": P.MUST_CPU_OFFLOAD, "matmul": P.MUST_DISK_OFFLOAD,
            "softmax": P.MUST_SAVE}.get(op.name, P.PREFER_RECOMPUTE)


CALLS = {
    "plain": lambda m, x: m(x),
    "non-reentrant": lambda m, x: checkpoint(m, x, use_reentrant=False),
    "reentrant": lambda m, x: checkpoint(m, x, use_reentrant=True),
    "values check": lambda m, x: checkpoint(m, x, use_reentrant=False,
                                            determinism_check="values"),
    "selective offload": lambda m, x: checkpoint(
        m, x, use_reentrant=False,
        context_fn=functools.partial(create_selective_checkpoint_contexts, _offload)),
    "sequential": lambda m, x: checkpoint_sequential([m, m.ln2, m.ff], 2, x,
                                                     use_reentrant=False),
    "save_on_cpu around": lambda m, x: _on_cpu(m, x),
}


def _on_cpu(m, x):
    with retrograd.autograd.graph.save_on_cpu():
        return checkpoint(m, x, use_reentrant=False)


def _run(call, device):
    model = block(retrograd, p_drop=0.0).to(device)
    x = retrograd.tensor(inputs(2, 6, D), device=device, requires_grad=True)
    call(model, x).sum().backward()
    return grads(model, x)


@pytest.mark.parametrize("how", list(CALLS))
def test_device_gradients_are_the_cpu_ones(how):
    ref = _run(CALLS["sequential" if how == "sequential" else "plain"], "cpu")
    with emulating():
        got = _run(CALLS[how], "cuda")
    assert_same_grads(got, ref)
