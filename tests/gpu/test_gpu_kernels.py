"""Every fused CuPy kernel declared with ``kernel(..., "cupy")`` beside a rule is pinned
to that rule on the GPU: the op-database entries of its op run with the kernel and with
the rule alone, and forward values and gradients agree to the entry's tolerance (the
kernel must have run, so the pin is not vacuous)."""

import numpy
import pytest

import retrograd
from retrograd.ops._registry import GPU_KERNELS
from opdb import op_db, reseed

pytestmark = pytest.mark.cuda


def _on_gpu(x):
    if isinstance(x, retrograd.Tensor):
        return x.detach().to("cuda").requires_grad_(x.requires_grad)
    if isinstance(x, (list, tuple)):
        return type(x)(_on_gpu(e) for e in x)
    if isinstance(x, dict):
        return {k: _on_gpu(v) for k, v in x.items()}
    return x


def _run(entry, dtype):
    """Outputs and input gradients of every sample on the GPU, as NumPy arrays."""
    reseed(0)
    got = []
    for s in entry.sample_inputs(dtype, True):
        inp, args, kwargs = _on_gpu((s.input, s.args, s.kwargs))
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


@pytest.mark.parametrize("k", GPU_KERNELS, ids=repr)
def test_gpu_kernel_agrees_with_its_rule(k, monkeypatch):
    entries = [e for e in op_db if e.name.split(".")[-1] == k.op]
    assert entries, f"no op-database entry runs op {k.op}"
    hits = []
    when = k.when

    def counted(*args):
        ok = when(*args)
        hits.append(bool(ok))
        return ok
    for e in entries:
        for dtype in [d for d in e.dtypes if d in ("float32", "float64")]:
            monkeypatch.setattr(k, "when", counted)
            fast = _run(e, dtype)
            monkeypatch.setattr(k, "when", lambda *a: False)
            plain = _run(e, dtype)
            atol, rtol = e.tols(dtype)
            for a, b in zip(fast, plain, strict=True):
                numpy.testing.assert_allclose(a, b, atol=atol, rtol=rtol)
    assert any(hits), f"{k}: no sample of op {k.op} ran the kernel"
