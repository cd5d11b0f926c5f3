"""Run one op-database entry under ``retrograd.vmap`` and compare with ``torch.vmap``.

Shared by the test and by ``PYTHONPATH=src:tests python tests/vmap/vmap_run.py`` (a table
of outcomes, ``--write`` to regenerate ``not_batched.py``, or entry ids to see only
theirs). A batch is made of one entry's samples drawn with different seeds (the same
shapes, other values); every positional tensor is mapped. Three placements are compared
with PyTorch's values: all inputs batched on dim 0; the first batched on its last dim,
the others unbatched (``None``); and all batched twice, under a nested vmap. For
differentiable entries the gradients of the first placement's outputs (a fixed
cotangent) reach the batched inputs as PyTorch's do. An entry passes when all of that
matches and no op fell back to a loop over the batch.

Where torch.vmap's result is not what torch's own calls give sample by sample (the
definition of vmap: a 0-d tensor batched into 1-d promoting, ``argmax(keepdim=True)``
and ``all(dim=())`` reducing otherwise, ties sharing a gradient otherwise), retrograd's
is compared with that loop of torch calls instead, and the entry is reported as one
where torch.vmap differs (``TORCH_VMAP_DIFFERS`` in ``not_batched.py``).
"""

import collections
import pathlib
import sys
import warnings
import zlib

import numpy
import torch

import retrograd
from opdb import op_db, reseed
from _failure_line import failure_line

BATCH = 3
_FALLBACK = "There is a performance drop because we have not yet implemented the batching " \
            "rule for "


class Skip(Exception):
    """PyTorch's vmap cannot run this placement: nothing to compare."""


def _dtype(op):
    if op.supports_grad or "float64" in op.dtypes or not op.dtypes:
        return "float64"
    return op.dtypes[0]


def _samples(op, seed):
    reseed(zlib.crc32(f"{op.id}/vmap/{seed}".encode()))
    return list(op.sample_inputs(_dtype(op), False))


def _tensors(x, out):
    if isinstance(x, retrograd.Tensor):
        out.append(x)
    elif isinstance(x, (list, tuple)):
        for e in x:
            _tensors(e, out)
    return out


def _replace(x, it):
    if isinstance(x, retrograd.Tensor):
        return next(it)
    if isinstance(x, (list, tuple)):
        return type(x)(_replace(e, it) for e in x)
    return x


def _dims(x, it):
    """The in_dims of one positional argument: the tensors' dims, None elsewhere."""
    if isinstance(x, retrograd.Tensor):
        return next(it)
    if isinstance(x, (list, tuple)) and _tensors(x, []):
        return type(x)(_dims(e, it) for e in x)
    return None


def _to_torch(x):
    if isinstance(x, retrograd.Tensor):
        return torch.from_numpy(x.detach().numpy().copy())
    if isinstance(x, retrograd.dtype):
        return getattr(torch, x.name)
    if isinstance(x, (list, tuple)):
        return type(x)(_to_torch(e) for e in x)
    if isinstance(x, dict):
        return {k: _to_torch(v) for k, v in x.items()}
    return x


def _batches(op):
    """Per sample: its positional arguments and, per tensor among them, the stack of its
    values in ``BATCH`` samples (each of one sample's shape)."""
    runs = [_samples(op, s) for s in range(BATCH)]
    for k, s in enumerate(runs[0]):
        pos = (s.input, *s.args)
        first = _tensors(pos, [])
        columns = []
        for r in runs:
            ts = _tensors((r[k].input, *r[k].args), []) if k < len(r) else []
            same = len(ts) == len(first) and all(
                a.shape == b.shape and a.dtype == b.dtype for a, b in zip(ts, first, strict=False))
            columns.append(ts if same else first)
        stacks = [numpy.stack([c[j].detach().numpy() for c in columns])
                  for j in range(len(first))]
        yield k, s, pos, stacks


def _call(op, lib, kwargs):
    fn = op.op if lib is retrograd else op.torch_op
    return lambda *pos: fn(*pos, **kwargs)


def _placements(pos, stacks):
    """``(name, per tensor: (array, in_dim), nested)`` for the three placements."""
    yield "dim 0", [(a, 0) for a in stacks], False
    if stacks:
        moved = [(numpy.moveaxis(stacks[0], 0, -1).copy(), -1)]
        yield "last dim / None", moved + [(a[0], None) for a in stacks[1:]], False
        yield "nested", [(numpy.stack([a, a[::-1]]), 0) for a in stacks], True


def _run(lib, op, pos, kwargs, batched, nested, grad_leaves=None):
    make = retrograd.from_numpy if lib is retrograd else torch.from_numpy
    ts = []
    for a, _ in batched:
        t = make(numpy.ascontiguousarray(a))
        if grad_leaves is not None and t.is_floating_point():
            t.requires_grad_(True)
            grad_leaves.append(t)
        ts.append(t)
    args = _replace(pos, iter(ts))
    it = iter([d for _, d in batched])
    dims = tuple(_dims(p, it) for p in pos)
    f = _call(op, lib, kwargs if lib is retrograd else _to_torch(kwargs))
    g = lib.vmap(f, in_dims=dims)
    if nested:
        g = lib.vmap(g, in_dims=dims)
    return g(*args)


def _flat(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _loop_run(op, pos, kwargs, batched, nested, grad_leaves=None):
    """torch's own per-sample results, stacked as vmap stacks them (out_dims 0): what
    vmap means, for the placements where torch.vmap gives something else."""
    ts = []
    for a, _ in batched:
        t = torch.from_numpy(numpy.ascontiguousarray(a))
        if grad_leaves is not None and t.is_floating_point():
            t.requires_grad_(True)
            grad_leaves.append(t)
        ts.append(t)
    f = _call(op, torch, _to_torch(kwargs))

    def at(idx):
        vals = []
        for t, (_, d) in zip(ts, batched, strict=True):
            for i in idx if d is not None else ():
                t = t.select(d, i)
            vals.append(t)
        return _flat(f(*_replace(pos, iter(vals))))
    idxs = [(i, j) for i in range(2) for j in range(BATCH)] if nested else \
        [(i,) for i in range(BATCH)]
    rows = [at(i) for i in idxs]
    outs = []
    for k in range(len(rows[0])):
        col = [r[k] for r in rows]
        if not all(isinstance(c, torch.Tensor) for c in col):
            outs.append(col[0])
            continue
        st = torch.stack(col)
        outs.append(st.reshape(2, BATCH, *st.shape[1:]) if nested else st)
    return outs


def _compare(outs, ref, op, what):
    if len(outs) != len(ref):
        raise AssertionError(f"{what}: {len(outs)} vs {len(ref)} outputs")
    for j, (a, b) in enumerate(zip(outs, ref, strict=True)):
        _close(a, b, op, f"{what} output {j}")


def _close(a, b, op, what):
    if isinstance(a, retrograd.Tensor) != isinstance(b, torch.Tensor):
        raise AssertionError(f"{what}: {type(a).__name__} vs {type(b).__name__}")
    if not isinstance(a, retrograd.Tensor):
        return
    if tuple(a.shape) != tuple(b.shape) or str(a.dtype) != str(b.dtype):
        raise AssertionError(f"{what}: {tuple(a.shape)} {a.dtype} vs {tuple(b.shape)} "
                             f"{b.dtype}")
    atol, rtol = op.tols(str(a.dtype).split(".")[-1])
    x, y = a.detach().numpy(), b.detach().numpy()
    if not numpy.allclose(x, y, atol=max(atol, 1e-6), rtol=max(rtol, 1e-5), equal_nan=True):
        d = numpy.abs(x.astype(float) - y.astype(float))
        raise AssertionError(f"{what}: values differ by {numpy.nanmax(d)}")


def run(op):
    """Compare ``op`` under vmap with torch.vmap; raise on a difference. Returns the ops
    that fell back to a loop over the batch."""
    fallbacks, differs = set(), set()
    compared = 0
    for k, s, pos, stacks in _batches(op):
        for name, batched, nested in _placements(pos, stacks):
            try:
                ref = _flat(_run(torch, op, pos, s.kwargs, batched, nested))
            except Exception:  # noqa: BLE001 - a placement torch.vmap refuses: not compared
                continue
            with warnings.catch_warnings(record=True) as seen:
                warnings.simplefilter("always")
                outs = _flat(_run(retrograd, op, pos, s.kwargs, batched, nested))
                try:
                    _compare(outs, ref, op, f"sample {k} {name}")
                except AssertionError as e:  # against torch's own loop: raises e if not it
                    _against_loop(e, _compare_loop, outs, op, pos, s.kwargs, batched, nested,
                                  f"sample {k} {name}")
                    differs.add("values")
                if op.supports_grad and name == "dim 0" and \
                        _grads(op, pos, s.kwargs, batched, f"sample {k} grad"):
                    differs.add("gradients")
            compared += 1
            fallbacks |= {str(w.message)[len(_FALLBACK):].split(".")[0] for w in seen
                          if str(w.message).startswith(_FALLBACK) and _ours(w)}
    if not compared:
        raise Skip("torch.vmap runs no sample")
    return fallbacks, differs


def _against_loop(error, compare, *args):
    """``compare(*args)`` retrograd's result with torch's loop of calls; ``error`` (the
    difference from torch.vmap) stands if that differs too."""
    try:
        compare(*args)
    except AssertionError:
        raise error from None


def _compare_loop(outs, op, pos, kwargs, batched, nested, what):
    _compare(outs, _loop_run(op, pos, kwargs, batched, nested), op, what)


def _ours(warning):
    """A warning of retrograd's (torch.vmap's fallback warns with the same words)."""
    return "/retrograd/" in warning.filename.replace("\\", "/")


def _grads(op, pos, kwargs, batched, what):
    """Compare the gradients of a fixed cotangent with torch.vmap's, or where torch.vmap's
    outputs or gradients are not those of torch's own loop of calls, with the loop's.
    Returns True in that case."""
    ref_leaves = []
    try:
        ref = _flat(_run(torch, op, pos, kwargs, batched, False, ref_leaves))
    except RuntimeError:  # torch.vmap refuses inputs that require grad: nothing to compare
        return False
    diff = [j for j, o in enumerate(ref) if isinstance(o, torch.Tensor) and o.requires_grad]
    if not diff or not ref_leaves:
        return False
    leaves = []
    outs = _flat(_run(retrograd, op, pos, kwargs, batched, False, leaves))
    differs = any(tuple(outs[j].shape) != tuple(ref[j].shape) for j in diff)
    if differs:  # torch.vmap's shapes are not the loop's (the values' check saw it)
        ref_leaves = []
        ref = _loop_run(op, pos, kwargs, batched, False, ref_leaves)
    cts = [numpy.cos(numpy.arange(ref[j].numel()).reshape(tuple(ref[j].shape)) + 1.0)
           .astype(ref[j].detach().numpy().dtype) for j in diff]
    try:
        rg = _torch_grads([ref[j] for j in diff], ref_leaves, cts)
    except RuntimeError:  # torch.vmap's backward refuses it: nothing to compare
        return False
    g = retrograd.autograd.grad([outs[j] for j in diff], leaves,
                                [retrograd.from_numpy(c) for c in cts], allow_unused=True)

    def compare(rg):
        for j, (a, b, x) in enumerate(zip(g, rg, leaves, strict=True)):
            _close(retrograd.zeros_like(x) if a is None else a,
                   torch.zeros(tuple(x.shape), dtype=getattr(torch, x.dtype.name))
                   if b is None else torch.from_numpy(b), op, f"{what} {j}")
    try:
        compare(rg)
    except AssertionError as e:
        if differs:
            raise
        loop_leaves = []
        lo = _loop_run(op, pos, kwargs, batched, False, loop_leaves)
        _against_loop(e, compare, _torch_grads([lo[j] for j in diff], loop_leaves, cts))
        return True
    return differs


def _torch_grads(outs, leaves, cts):
    g = torch.autograd.grad(outs, leaves, [torch.from_numpy(c) for c in cts],
                            allow_unused=True)
    return [None if b is None else b.detach().numpy() for b in g]


def outcome(op):
    """None when ``op`` batches as torch.vmap does without a loop; "skip" when torch.vmap
    runs none of its samples; "torch.vmap differs: ..." when it batches without a loop
    and matches torch's loop of calls where torch.vmap gives something else; else one
    line: the ops that fell back, or the first failure (where in retrograd, and the
    exception)."""
    try:
        loops, differs = run(op)
    except Skip:
        return "skip"
    except Exception as e:  # noqa: BLE001 - the table reports every kind of failure
        return failure_line(e, "/_vmap/")
    if loops:
        return f"loops: {', '.join(sorted(loops))}"[:86]
    if differs:
        return f"{DIFFERS}{' and '.join(sorted(differs, reverse=True))}"
    return None


DIFFERS = "torch.vmap differs (retrograd's matches torch's loop of calls): "


def _write(path, results):
    lines = ['"""Op-database entries that do not batch under vmap as under torch.vmap without a',
             "loop, each with why: the ops that fall back to a loop over the batch, or the",
             "first failure (regenerate with ``PYTHONPATH=src:tests python",
             "tests/vmap/vmap_run.py --write``; a test fails when a listed entry starts to",
             "pass, so the list only shrinks). Entries",
             "where torch.vmap's result differs from torch's own calls sample by sample,",
             'and retrograd\'s matches those calls, are in ``TORCH_VMAP_DIFFERS``."""', "",
             "NOT_BATCHED = {"]
    for op_id, r in results.items():
        if r is not None and r != "skip" and not r.startswith(DIFFERS):
            line = f"    {op_id!r}: {r!r},"
            lines.append(line if len(line) <= 100 else f"    {op_id!r}:\n        {r!r},")
    lines += ["}", "", "# torch.vmap differs from torch's own calls sample by sample; retrograd "
              "matches them", "TORCH_VMAP_DIFFERS = {"]
    for op_id, r in results.items():
        if r is not None and r.startswith(DIFFERS):
            lines.append(f"    {op_id!r}: {r[len(DIFFERS):]!r},")
    lines.append("}")
    pathlib.Path(path).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":  # [--write] | ID ... (those entries' outcomes only)
    ids = [a for a in sys.argv[1:] if not a.startswith("--")]
    if ids:
        known = {op.id: op for op in op_db}
        for i in ids:
            print(f"{i}: {outcome(known[i]) or 'batches as torch.vmap'}")
        sys.exit()
    results = {op.id: outcome(op) for op in op_db}
    if "--write" in sys.argv:
        _write(pathlib.Path(__file__).with_name("not_batched.py"), results)
    bad = {k: r for k, r in results.items() if r is not None}
    skipped = sum(r == "skip" for r in bad.values())
    print(f"{len(results) - len(bad)} / {len(results)} entries batch as torch.vmap, "
          f"{skipped} not run by torch.vmap")
    for reason, n in collections.Counter(r for r in bad.values()
                                         if r != "skip").most_common(120):
        print(f"{n:4d}  {reason}")
