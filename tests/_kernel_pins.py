"""Pinning a fast kernel declared with ``kernel()`` to its rule: the op-database entries
of its op run with the kernel and with the rule alone, and forward values and input
gradients agree to the entry's tolerance; the kernel must have run, so the pin is not
vacuous. Shared by the NumPy kernels' test and the GPU kernels' test."""

import numpy

import retrograd
from retrograd.ops._registry import GPU_KERNELS, KERNELS
from device.emulated_run import _map
from opdb import op_db, reseed


def _run(entry, dtype, move):
    """Outputs and input gradients of every sample (its tensors through ``move``), as
    NumPy arrays."""
    reseed(0)
    got = []
    for s in entry.sample_inputs(dtype, True):
        inp, args, kwargs = _map((s.input, s.args, s.kwargs), move)
        out = entry.op(inp, *args, **kwargs)
        outs = list(out) if isinstance(out, (tuple, list)) else [out]
        got += [o.detach().cpu().numpy() for o in outs if isinstance(o, retrograd.Tensor)]
        leaves = [t for t in (inp, *args) if isinstance(t, retrograd.Tensor) and t.requires_grad]
        diff = [o for o in outs if isinstance(o, retrograd.Tensor) and o.requires_grad]
        if leaves and diff:
            grads = retrograd.autograd.grad(diff, leaves, [retrograd.ones_like(o) for o in diff],
                                            allow_unused=True)
            got += [g.cpu().numpy() for g in grads if g is not None]
    return got


# Ops whose entries go by the name of the function that reaches them
_ENTRIES = {"_to_copy": ("to",), "sum_dim": ("sum",), "mean_dim": ("mean",), "max_dim": ("max",),
            "min_dim": ("min",)}


def check_kernel(k, dtypes, monkeypatch, move=lambda t: t):
    """Kernel ``k`` against its rule on the entries of its op and of its in-place form (where
    an ``into`` kernel runs), in ``dtypes``. The op's other kernels are off, so one declared
    around ``k`` (a compiled kernel before the NumPy one) does not take the samples ``k`` is
    to be pinned on."""
    names = (k.op, k.op + "_", *_ENTRIES.get(k.op, ()))
    entries = [e for e in op_db if e.name.split(".")[-1] in names]
    assert entries, f"no op-database entry runs op {k.op}"
    for other in KERNELS + GPU_KERNELS:
        if other is not k and other.op == k.op:
            monkeypatch.setattr(other, "when", lambda *a: False)
    hits = []
    when = k.when

    def counted(*args):
        ok = when(*args)
        hits.append(bool(ok))
        return ok
    for e in entries:
        for dtype in [d for d in e.dtypes if d in dtypes]:
            monkeypatch.setattr(k, "when", counted)
            fast = _run(e, dtype, move)
            monkeypatch.setattr(k, "when", lambda *a: False)
            plain = _run(e, dtype, move)
            atol, rtol = e.tols(dtype)
            for a, b in zip(fast, plain, strict=True):
                numpy.testing.assert_allclose(a, b, atol=atol, rtol=rtol)
    assert any(hits), f"{k}: no sample of op {k.op} ran the kernel"
