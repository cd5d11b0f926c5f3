"""Selective activation checkpointing: a policy per op decides what the recomputation
takes from the forward (kept in memory, in CPU memory or on disk) and what it runs
again; gradients never change, the ops that are kept do not run twice."""

import functools

import numpy
import pytest
from _ckpt_models import D, assert_same_grads, block, grads, inputs, mlp

import retrograd
from retrograd.utils.checkpoint import (CheckpointPolicy, checkpoint,
                                        create_selective_checkpoint_contexts)

P = CheckpointPolicy


def _by_name(names, policy):
    def policy_fn(ctx, op, *args, **kwargs):
        assert ctx.is_recompute is False and isinstance(ctx.op_output, retrograd.Tensor | tuple)
        return policy if op.name in names else P.PREFER_RECOMPUTE
    return policy_fn


def _sac_run(build, x_array, policy_fn_or_list, seed=3, **kwargs):
    model = build(retrograd)
    x = retrograd.tensor(x_array.copy(), requires_grad=True)
    retrograd.manual_seed(seed)
    ctx = functools.partial(create_selective_checkpoint_contexts, policy_fn_or_list, **kwargs)
    checkpoint(model, x, use_reentrant=False, context_fn=ctx).sum().backward()
    return grads(model, x)


def _plain_run(build, x_array, seed=3):
    model = build(retrograd)
    x = retrograd.tensor(x_array.copy(), requires_grad=True)
    retrograd.manual_seed(seed)
    model(x).sum().backward()
    return grads(model, x)


def _by_size(ctx, op, *args, **kwargs):
    """A policy running ops of its own: they are not the region's (neither counted nor
    kept)."""
    out = ctx.op_output[0] if isinstance(ctx.op_output, tuple) else ctx.op_output
    return P.MUST_SAVE if out.abs().sum().item() > 50 else P.PREFER_RECOMPUTE


POLICIES = {
    "list": ["linear"],
    "save linear": _by_name({"linear"}, P.MUST_SAVE),
    "prefer save": _by_name({"linear", "softmax"}, P.PREFER_SAVE),
    "bool": lambda ctx, op, *a, **k: op.name == "gelu",
    "all recompute": lambda ctx, op, *a, **k: P.MUST_RECOMPUTE,
    "all save": lambda ctx, op, *a, **k: P.MUST_SAVE,
    "cpu offload": _by_name({"linear", "layer_norm"}, P.MUST_CPU_OFFLOAD),
    "disk offload": _by_name({"linear", "matmul"}, P.PREFER_DISK_OFFLOAD),
    "by output": _by_size,
}


@pytest.mark.parametrize("policy", POLICIES)
def test_gradients_are_the_plain_runs(policy):
    build = block  # with dropout: the recomputation replays the RNG state
    x = inputs(2, 6, D)
    assert_same_grads(_sac_run(build, x, POLICIES[policy]), _plain_run(build, x))


@pytest.mark.torch
def test_gradients_match_torch_sac(torch):
    build = functools.partial(block, p_drop=0.0)
    x = inputs(2, 6, D)
    model = build(torch)
    tx = torch.tensor(x, requires_grad=True)
    ops = [torch.ops.aten.mm.default, torch.ops.aten.addmm.default]
    ctx = functools.partial(torch.utils.checkpoint.create_selective_checkpoint_contexts, ops)
    torch.utils.checkpoint.checkpoint(model, tx, use_reentrant=False,
                                      context_fn=ctx).sum().backward()
    assert_same_grads(_sac_run(build, x, ["linear", "matmul"]), grads(model, tx))


def _count_forwards(monkeypatch, names):
    """Count the forward kernel calls of the ops named ``names`` (found by a first run)."""
    ops = {}

    def find(ctx, op, *a, **k):
        ops[op.name] = op
        return P.PREFER_RECOMPUTE
    _sac_run(functools.partial(mlp, n_layers=3), inputs(4, D), find)
    calls = {n: 0 for n in names}
    for n in names:
        fwd = ops[n].forward

        def counting(*args, _fwd=fwd, _n=n):
            calls[_n] += 1
            return _fwd(*args)
        monkeypatch.setattr(ops[n], "forward", counting)
    return calls


@pytest.mark.parametrize("kept", [P.MUST_SAVE, P.MUST_CPU_OFFLOAD, P.MUST_DISK_OFFLOAD])
def test_kept_ops_do_not_run_again(monkeypatch, kept):
    calls = _count_forwards(monkeypatch, ["linear", "relu"])
    build = functools.partial(mlp, n_layers=3)
    x = inputs(4, D)
    got = _sac_run(build, x, _by_name({"linear"}, kept))
    assert calls == {"linear": 3, "relu": 3 + 3}  # relu recomputed, linear kept
    calls.update(linear=0, relu=0)
    assert_same_grads(got, _plain_run(build, x))
    assert calls == {"linear": 3, "relu": 3}


def test_disk_offload_writes_files_until_used(tmp_path):
    model = mlp(retrograd, 3)
    x = retrograd.tensor(inputs(4, D), requires_grad=True)
    ctx = functools.partial(create_selective_checkpoint_contexts,
                            _by_name({"linear"}, P.MUST_DISK_OFFLOAD), disk_directory=tmp_path)
    out = checkpoint(model, x, use_reentrant=False, context_fn=ctx)
    files = list(tmp_path.rglob("*.bin"))
    assert len(files) == 3 and all(f.stat().st_size == 4 * D * 4 for f in files)
    out.sum().backward()
    assert not list(tmp_path.rglob("*.bin"))
    model2 = mlp(retrograd, 3)
    x2 = retrograd.tensor(inputs(4, D), requires_grad=True)
    model2(x2).sum().backward()
    assert_same_grads(grads(model, x), grads(model2, x2))


def test_cached_output_mutated(torch):
    def region(lib, lin, x):
        y = lin(x)
        z = y.sin()
        y.mul_(2)  # y is kept by the policy, then changed
        return z * y

    msgs = []
    for lib, ops in ((retrograd, ["linear"]),
                     (torch, [torch.ops.aten.addmm.default])):
        lin = lib.nn.Linear(D, D)
        x = lib.ones(3, D, requires_grad=True)
        cp = retrograd.utils.checkpoint if lib is retrograd else lib.utils.checkpoint
        ctx = functools.partial(cp.create_selective_checkpoint_contexts, ops)
        out = cp.checkpoint(functools.partial(region, lib), lin, x, use_reentrant=False,
                            context_fn=ctx)
        with pytest.raises(RuntimeError) as e:
            out.sum().backward()
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1] == ("Tensor cached during selective activation checkpoint has "
                                  "been mutated")


def test_backward_twice_through_a_selective_region(torch):
    msgs = []
    for lib, ops in ((retrograd, ["linear"]), (torch, [torch.ops.aten.addmm.default])):
        cp = retrograd.utils.checkpoint if lib is retrograd else lib.utils.checkpoint
        lin = lib.nn.Linear(D, D)
        ctx = functools.partial(cp.create_selective_checkpoint_contexts, ops)
        out = cp.checkpoint(lambda t, lin=lin: lin(t).relu(), lib.ones(3, D, requires_grad=True),
                            use_reentrant=False, context_fn=ctx).sum()
        out.backward(retain_graph=True)
        with pytest.raises(RuntimeError) as e:
            out.backward()
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]
    assert msgs[0].startswith("Trying to backward an extra time.")


def test_recomputation_running_other_ops():
    state = {"extra": False}

    def region(t):
        y = t.exp()
        return y.cos() if state["extra"] else y

    x = retrograd.ones(3, requires_grad=True)
    ctx = functools.partial(create_selective_checkpoint_contexts, ["exp"])
    with retrograd.utils.checkpoint.set_checkpoint_early_stop(False):
        out = checkpoint(region, x, use_reentrant=False, context_fn=ctx)
    state["extra"] = True
    with pytest.raises(RuntimeError, match="^cos encountered during backward but not found in "
                       "storage. This can happen if the operations"):
        out.sum().backward()


@pytest.mark.torch
def test_bad_policies(torch):
    for lib in (retrograd, torch):
        with pytest.raises(TypeError, match="^policy_fn_or_list must be either a function or a "
                           "list of ops.$"):
            lib.utils.checkpoint.create_selective_checkpoint_contexts(3)
    with pytest.raises(ValueError, match="^Expected op in `op_list` to be an op name but got: 3 "
                       "of type <class 'int'>"):
        create_selective_checkpoint_contexts(["linear", 3])


@pytest.mark.torch
def test_policy_names_are_torchs(torch):
    theirs = {m.name: m.value for m in torch.utils.checkpoint.CheckpointPolicy}
    ours = {m.name: m.value for m in CheckpointPolicy}
    assert {k: ours[k] for k in theirs} == theirs
    assert set(ours) - set(theirs) == {"MUST_DISK_OFFLOAD", "PREFER_DISK_OFFLOAD"}


def test_policy_sees_the_ops_arguments():
    seen = []

    def policy_fn(ctx, op, *args, **kwargs):
        seen.append((op.name, [type(a).__name__ for a in args], sorted(kwargs)))
        return P.PREFER_RECOMPUTE

    x = retrograd.ones(2, 3, requires_grad=True)
    ctx = functools.partial(create_selective_checkpoint_contexts, policy_fn)
    out = checkpoint(lambda t: t.sum(dim=1).exp(), x, use_reentrant=False, context_fn=ctx)
    out.sum().backward()
    assert seen[-1] == ("exp", ["Tensor"], [])
    assert seen[0][0] == "sum_dim" and seen[0][1] == ["Tensor"] and "dim" in seen[0][2]
    numpy.testing.assert_allclose(x.grad.numpy(), numpy.full((2, 3), numpy.exp(3.0)),
                                  rtol=1e-6)
