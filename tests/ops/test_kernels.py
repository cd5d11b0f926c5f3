"""Every fast kernel declared with ``kernel()`` beside a rule is pinned to that rule: the
op-database entries of its op run with the kernel and with the rule alone, and forward
values and gradients agree (the kernel must also have run, so the pin is not vacuous).
The compiled kernels need numba compiling: without it (not installed, or
``NUMBA_DISABLE_JIT=1``) they never run and their pins are skipped."""

import numpy
import pytest

import retrograd
from retrograd.backend import cpu_kernels
from retrograd.ops._registry import KERNELS
from _kernel_pins import check_kernel
from opdb import op_db, reseed


def _compiled(k):
    """Whether ``k`` computes with the compiled kernels (its fast path calls them)."""
    return "cpu_kernels" in k.fast.__code__.co_names


@pytest.mark.parametrize("k", KERNELS, ids=repr)
def test_kernel_agrees_with_its_rule(k, monkeypatch):
    if _compiled(k) and not cpu_kernels.ready():
        pytest.skip("numba is not compiling: the compiled kernels are off")
    # (a kernel taken only where it runs in parts, or where its work pays, is taken on the
    # samples, small, too)
    monkeypatch.setattr(cpu_kernels, "splits", lambda name, first: True)
    monkeypatch.setattr(cpu_kernels, "pays", lambda first: True)
    monkeypatch.setattr(cpu_kernels, "channel_runs_pay", lambda x: x.ndim >= 2)
    monkeypatch.setattr(cpu_kernels, "_COPY_MIN", 0)
    check_kernel(k, ("float16", "float32"), monkeypatch)


def _per_sample(entry, sample, batch):
    """Each batch member's forward values and gradient (of the sum of its float outputs'
    squares: a gradient laid out as they are, not a broadcast one) under ``vmap(grad)``,
    as NumPy arrays."""
    def loss(x):
        out = entry.op(x, *sample.args, **sample.kwargs)
        outs = out if isinstance(out, (tuple, list)) else (out,)
        return sum((o * o).sum() for o in outs if o.is_floating_point()), outs

    grads, outs = retrograd.vmap(retrograd.func.grad(loss, has_aux=True))(batch)
    return [t.detach().numpy() for t in (grads, *outs)]


@pytest.mark.parametrize("k", [k for k in KERNELS if k.leading], ids=repr)
def test_leading_kernel_runs_on_a_vmap_batch_as_its_rule(k, monkeypatch):
    """A kernel declared ``leading=True`` runs under vmap on the batch's data (the batch
    one more leading dim), and gives the rule's values and per-sample gradients."""
    if _compiled(k) and not cpu_kernels.ready():
        pytest.skip("numba is not compiling: the compiled kernels are off")
    for other in KERNELS:  # (one declared around k would take its samples)
        if other is not k and other.op == k.op:
            monkeypatch.setattr(other, "when", lambda *a: False)
    ran = []
    when = k.when  # (asked only by the batch path here: every call is under vmap)
    monkeypatch.setattr(k, "when", lambda *a: bool(when(*a)) and not ran.append(1))
    entries = [e for e in op_db if e.name.split(".")[-1] == k.op and "float32" in e.dtypes]
    assert entries
    for e in entries:
        reseed(0)
        for s in e.sample_inputs("float32", False):
            x = s.input.detach()
            batch = retrograd.stack([x, x * 0.5 + 0.25, -x])
            got = _per_sample(e, s, batch)
            with monkeypatch.context() as m:
                m.setattr(k, "when", lambda *a: False)
                want = _per_sample(e, s, batch)
            atol, rtol = e.tols("float32")
            for a, b in zip(got, want, strict=True):
                numpy.testing.assert_allclose(a, b, atol=atol, rtol=rtol)
    assert ran, f"{k}: no batch ran the kernel"
