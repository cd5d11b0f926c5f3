"""Run one op-database entry on the meta device and compare with PyTorch's meta tensors.

Shared by the test and by ``python tests/device/meta_run.py`` (a pass/fail table, and
``--write`` to regenerate ``not_on_meta.py``). Each sample (float64 where the entry is
differentiable) is copied to ``meta`` in retrograd and in PyTorch; the outputs must have
PyTorch's shapes and dtypes and live on ``meta``, and for differentiable entries the
gradients of a meta cotangent must too, and lie on PyTorch's device (``meta``, or the
host for what PyTorch keeps there). Where PyTorch's meta kernel refuses a sample or its
backward (an op whose result depends on the values), retrograd must refuse it with the
same exception type, or run it with the shapes and dtypes of retrograd's own CPU result
(as entries PyTorch cannot run at all, ``skip_torch``, are compared).
"""

import collections
import pathlib
import zlib

import torch

import retrograd
from opdb import op_db, reseed
from _failure_line import failure_line


def _dtype(op):
    """float64 (where gradients are checked), else the entry's first dtype."""
    if op.supports_grad or "float64" in op.dtypes or not op.dtypes:
        return "float64"
    return op.dtypes[0]


def _samples(op):
    reseed(zlib.crc32(f"{op.id}/meta".encode()))
    return list(op.sample_inputs(_dtype(op), op.supports_grad))


def _map(obj, fn):
    if isinstance(obj, retrograd.Tensor):
        return fn(obj)
    if isinstance(obj, (retrograd.dtype, retrograd.memory_format)):
        return fn(obj)
    if isinstance(obj, (list, tuple)):
        return type(obj)(_map(e, fn) for e in obj)
    if isinstance(obj, dict):
        return {k: _map(v, fn) for k, v in obj.items()}
    return obj


def _converter(to_torch):
    """Each tensor of a sample as a fresh meta leaf (one per tensor: a tensor passed twice
    stays one leaf), in retrograd or, with ``to_torch``, in PyTorch."""
    seen = {}

    def conv(t):
        if isinstance(t, retrograd.dtype):
            return getattr(torch, t.name) if to_torch else t
        if isinstance(t, retrograd.memory_format):  # (its repr: torch.channels_last)
            return getattr(torch, repr(t).removeprefix("torch.")) if to_torch else t
        if id(t) not in seen:
            if to_torch:
                m = torch.from_numpy(t.detach().numpy().copy()).to("meta")
            else:
                m = t.detach().to("meta")
            seen[id(t)] = m.requires_grad_(t.requires_grad)
        return seen[id(t)]
    return conv


def _flat(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _same(a, b, what, device="meta"):
    """``a`` (retrograd) has the shape, dtype and device of ``b`` (PyTorch's), or the
    shape and dtype of retrograd's CPU result ``b`` and lies on ``device``."""
    ta = isinstance(a, retrograd.Tensor)
    tb = isinstance(b, (torch.Tensor, retrograd.Tensor))
    if ta != tb:
        raise AssertionError(f"{what}: {type(a).__name__} vs {type(b).__name__}")
    if not ta:
        if isinstance(a, (tuple, list)) or a == b or a != a and b != b:
            return
        raise AssertionError(f"{what}: {a!r} != {b!r}")
    if isinstance(b, torch.Tensor):  # PyTorch keeps some outputs on the host (lengths)
        device = b.device.type
    if a.device.type != device:
        raise AssertionError(f"{what} is on {a.device}, not on {device}")
    if tuple(a.shape) != tuple(b.shape) or str(a.dtype) != str(b.dtype):
        raise AssertionError(f"{what}: {tuple(a.shape)} {a.dtype} vs {tuple(b.shape)} "
                             f"{b.dtype}")


def _leaves(obj, seen=None):
    """The tensors (retrograd's or PyTorch's) of a sample that require grad, once each."""
    seen = {} if seen is None else seen
    if isinstance(obj, (retrograd.Tensor, torch.Tensor)):
        if obj.requires_grad:
            seen.setdefault(id(obj), obj)
    elif isinstance(obj, (list, tuple)):
        for e in obj:
            _leaves(e, seen)
    elif isinstance(obj, dict):
        for e in obj.values():
            _leaves(e, seen)
    return list(seen.values())


def run(op):
    """Compare every sample of ``op`` on meta with PyTorch's meta; raise on a difference."""
    for k, s in enumerate(_samples(op)):
        m = _map((s.input, s.args, s.kwargs), _converter(False))
        try:
            ref = _flat(op.op(s.input, *s.args, **s.kwargs))  # retrograd on the CPU
        except Exception:  # noqa: BLE001 - a sample the CPU refuses is not a meta question
            continue
        ref_sample = (s.input, s.args, s.kwargs)
        cpu = (ref, _leaves(ref_sample))
        if not op.skip_torch:
            t = _map((s.input, s.args, s.kwargs), _converter(True))
            try:
                ref, ref_sample = _flat(op.torch_op(t[0], *t[1], **t[2])), t
            except (NotImplementedError, RuntimeError) as e:
                if _refused_alike(e, op.op, m, f"sample {k}"):
                    continue
        outs = _flat(op.op(m[0], *m[1], **m[2]))
        if len(outs) != len(ref):
            raise AssertionError(f"sample {k}: {len(outs)} vs {len(ref)} outputs")
        for j, (a, b) in enumerate(zip(outs, ref, strict=True)):
            _same(a, b, f"sample {k} output {j}")
        if op.supports_grad:
            _grads(outs, ref, _leaves(m), _leaves(ref_sample), f"sample {k} grad", cpu)


def _grads(outs, ref, leaves, ref_leaves, what, cpu):
    """Gradients of a meta cotangent of the differentiable outputs, against the
    reference's (PyTorch's meta gradients, or retrograd's CPU ones). Where PyTorch's meta
    refuses the backward, retrograd's must refuse it alike or give the shapes and dtypes
    of its CPU gradients (``cpu``: the CPU outputs and leaves)."""
    diff = [j for j, o in enumerate(outs)
            if isinstance(o, retrograd.Tensor) and o.requires_grad]
    if not diff or not leaves:
        return
    try:
        g = retrograd.autograd.grad([outs[j] for j in diff], leaves,
                                    [retrograd.ones_like(outs[j]) for j in diff],
                                    allow_unused=True)
    except (NotImplementedError, RuntimeError) as e:  # alike when PyTorch's refuses too
        g = e
    lib = torch if isinstance(ref[diff[0]], torch.Tensor) else retrograd
    try:
        rg = lib.autograd.grad([ref[j] for j in diff], ref_leaves,
                               [lib.ones_like(ref[j]) for j in diff], allow_unused=True)
    except (NotImplementedError, RuntimeError) as e:  # PyTorch's meta refuses the backward
        if lib is not torch or isinstance(g, Exception) and type(g) is not type(e):
            raise
        if isinstance(g, Exception):  # refused alike
            return
        ref, ref_leaves = cpu  # retrograd runs it: as its CPU gradients
        lib = retrograd
        rg = lib.autograd.grad([ref[j] for j in diff], ref_leaves,
                               [lib.ones_like(ref[j]) for j in diff], allow_unused=True)
    if isinstance(g, Exception):
        raise g
    for j, (a, b, x) in enumerate(zip(g, rg, ref_leaves, strict=True)):
        _same(retrograd.zeros_like(leaves[j]) if a is None else a,
              lib.zeros_like(x) if b is None else b, f"{what} {j}")


def _refused_alike(e, fn, m, what):
    """PyTorch's meta kernel refused the sample (its result depends on the values, or it
    has no meta kernel): True when retrograd's meta refuses it with the same exception
    type; False when retrograd runs it (its shapes are then checked against retrograd's
    own CPU result)."""
    try:
        fn(m[0], *m[1], **m[2])
    except type(e):
        return True
    except Exception as d:  # noqa: BLE001 - reported with both
        raise AssertionError(f"{what}: {d!r} on meta, PyTorch's meta raised {e!r}") from None
    return False


def outcome(op):
    """None when ``op`` runs on meta as on PyTorch's, else the first failure in one line:
    where in retrograd it happened, and the exception."""
    try:
        run(op)
    except Exception as e:  # noqa: BLE001 - the table reports every kind of failure
        return failure_line(e, "/backend/meta")
    return None


# Entries that fail because of PyTorch's meta: the reason written for them.
PYTORCH_SIDE = {
    "linalg.lstsq": "PyTorch's meta refuses it too (no kernel): the residuals' shape needs ranks",
    "multi_margin_loss": "PyTorch's meta: unbatched with a 0-d target gives (1,), its CPU ()",
}


def _write(path):
    """Write the registry of entries that do not run on meta, with where they fail."""
    lines = ['"""Op-database entries that do not run on the meta device, each with where it',
             "fails (regenerate with ``PYTHONPATH=src:tests python tests/device/meta_run.py",
             "--write``; a test fails when a listed entry starts to pass, so the list only",
             'shrinks)."""', "",
             "NOT_ON_META = {"]
    for op in op_db:
        r = outcome(op)
        if r is not None:
            r = PYTORCH_SIDE.get(op.id, r)
            line = f"    {op.id!r}: {r!r},"
            lines.append(line if len(line) <= 100 else f"    {op.id!r}:\n        {r!r},")
    lines.append("}")
    pathlib.Path(path).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    import sys
    if "--write" in sys.argv:
        _write(pathlib.Path(__file__).with_name("not_on_meta.py"))
    fails = {op.id: r for op in op_db if (r := outcome(op)) is not None}
    print(f"{len(op_db) - len(fails)} / {len(op_db)} entries pass on meta")
    for reason, n in collections.Counter(fails.values()).most_common(80):
        print(f"{n:4d}  {reason}")
