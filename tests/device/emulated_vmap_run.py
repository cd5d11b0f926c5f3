"""Run one op-database entry under ``retrograd.vmap`` on device ``cuda`` (the emulator) and
compare with ``retrograd.vmap`` on the CPU (which ``tests/vmap`` pins to ``torch.vmap``).

Shared by the test and by ``PYTHONPATH=src:tests python tests/device/emulated_vmap_run.py``
(a pass/fail table; ``--write`` regenerates ``not_batched_on_device.py``; entry ids: only
theirs). The batches and placements are ``vmap_run``'s (all inputs batched on dim 0; the
first on its last dim, the others unbatched; all batched twice under a nested vmap). Per
placement the device's outputs must equal the CPU's and live on the device (a placement
the CPU refuses must be refused alike), and no op may fall back to a loop over the batch
where the CPU's does not (the error that made it fall back is the failure); on dim 0,
the gradients of ``vmap_run``'s cotangent must equal the CPU's and live on the device. A
batched array computes with the module of its data, so this is the proof that the
batching rules name no array module of their own.
"""

import collections
import pathlib
import sys
import warnings

import numpy

import retrograd
from _failure_line import failure_line
from device.emulated_run import _map, _same, _same_error, emulating
from opdb import op_db
from vmap.vmap_run import _FALLBACK, _batches, _dims, _flat, _placements, _replace


def _run(device, op, pos, kwargs, batched, nested, grad_leaves=None):
    """``vmap_run``'s call of ``op`` under vmap, its tensors made on ``device``."""
    ts = []
    for a, _ in batched:
        t = retrograd.from_numpy(numpy.array(a)).to(device)  # (a copy: in-place entries)
        if grad_leaves is not None and t.is_floating_point():
            t.requires_grad_(True)
            grad_leaves.append(t)
        ts.append(t)
    args = _replace(pos, iter(ts))
    it = iter([d for _, d in batched])
    dims = tuple(_dims(p, it) for p in pos)
    kwargs = _map(kwargs, lambda t: t.detach().to(device))
    g = retrograd.vmap(lambda *p: op.op(*p, **kwargs), in_dims=dims)
    if nested:
        g = retrograd.vmap(g, in_dims=dims)
    return g(*args)


def _recorded(fn, *args):
    """``fn(*args)`` and the ops that fell back to a loop over the batch on the way, each
    with the error that made it fall back (the fallback warns while handling it)."""
    loops = {}

    def show(message, category, filename, lineno, file=None, line=None):
        text = str(message)
        if text.startswith(_FALLBACK) and "/retrograd/" in filename.replace("\\", "/"):
            loops.setdefault(text[len(_FALLBACK):].split(".")[0], sys.exc_info()[1])

    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.showwarning = show
        out = fn(*args)
    return out, loops


def run(op):
    """Compare ``op`` under vmap on the device with the CPU; raise on a difference."""
    for k, s, pos, stacks in _batches(op):
        for name, batched, nested in _placements(pos, stacks):
            call = (op, pos, s.kwargs, batched, nested)
            _compare(_run, call, f"sample {k} {name}")
            if op.supports_grad and name == "dim 0":
                _compare(_grads, call[:-1], f"sample {k} grad")


def _compare(fn, args, what):
    """``fn("cpu", *args)`` and ``fn("cuda", *args)``: the same outputs (the device's on
    it), or the same error, and no loop over the batch on the device only."""
    try:
        outs, loops = _recorded(fn, "cpu", *args)
    except Exception as e:  # noqa: BLE001 - the device must raise the same
        with emulating():
            _same_error(e, fn, ("cuda", *args), {}, what)
        return
    with emulating():
        d_outs, d_loops = _recorded(fn, "cuda", *args)
    only = sorted(set(d_loops) - set(loops))
    if only:  # the error that made the first fall back, where it was raised
        raise d_loops[only[0]] or AssertionError(f"{what}: loops on the device only: "
                                                 f"{', '.join(only)}")
    outs, d_outs = _flat(outs), _flat(d_outs)
    if len(outs) != len(d_outs):
        raise AssertionError(f"{what}: {len(outs)} vs {len(d_outs)} outputs")
    for j, (a, b) in enumerate(zip(outs, d_outs, strict=True)):
        _same(a, b, f"{what} output {j}")


def _grads(device, op, pos, kwargs, batched):
    """The gradients of ``vmap_run``'s cotangent on ``device`` (zeros for an unused leaf)."""
    leaves = []
    outs = _flat(_run(device, op, pos, kwargs, batched, False, leaves))
    diff = [o for o in outs if isinstance(o, retrograd.Tensor) and o.requires_grad]
    if not diff or not leaves:
        return []
    cts = [retrograd.from_numpy(numpy.cos(numpy.arange(o.numel()).reshape(tuple(o.shape))
                                          + 1.0).astype(o.dtype.np)).to(device) for o in diff]
    g = retrograd.autograd.grad(diff, leaves, cts, allow_unused=True)
    return [retrograd.zeros_like(x) if a is None else a for a, x in zip(g, leaves, strict=True)]


def outcome(op):
    """None when ``op`` batches on the device as on the CPU, else the first failure in one
    line (where in retrograd, and the exception)."""
    try:
        run(op)
    except Exception as e:  # noqa: BLE001 - the table reports every kind of failure
        return failure_line(e, "/backend/emulated", _SHORT)
    return None


_SHORT = {"Unsupported type <class 'retrograd.autograd._batched.Batched'>":
          "a batch given to a device operator or function"}  # (no dispatch there, as on CuPy)


def _write(path, results):
    lines = ['"""Op-database entries that do not batch under vmap on the emulated device as on',
             "the CPU, each with why (regenerate with ``PYTHONPATH=src:tests python",
             "tests/device/emulated_vmap_run.py --write``; a test fails when a listed entry",
             'starts to pass, so the list only shrinks)."""', "", "NOT_BATCHED_ON_DEVICE = {"]
    for op_id, r in results.items():
        if r is not None:
            line = f"    {op_id!r}: {r!r},"
            lines.append(line if len(line) <= 100 else f"    {op_id!r}:\n        {r!r},")
    lines.append("}")
    pathlib.Path(path).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":  # [--write] | ID ... (those entries' outcomes only)
    ids = [a for a in sys.argv[1:] if not a.startswith("--")]
    known = {op.id: op for op in op_db}
    results = {i: outcome(known[i]) for i in (ids or known)}
    if "--write" in sys.argv and not ids:
        _write(pathlib.Path(__file__).with_name("not_batched_on_device.py"), results)
    bad = {k: r for k, r in results.items() if r is not None}
    print(f"{len(results) - len(bad)} / {len(results)} entries batch on the emulated device "
          f"as on the CPU")
    for op_id, r in (bad.items() if ids else ()):
        print(f"{op_id}: {r}")
    for reason, n in collections.Counter(bad.values()).most_common(120):
        print(f"{n:4d}  {reason}")
