"""Run one op-database entry on the emulated CUDA device and compare with the CPU.

Shared by the test and by ``python tests/device/emulated_run.py`` (a pass/fail table).
Each sample (float64 where the entry has it) runs forward on the CPU and on ``cuda``
(the CuPy-shaped emulator); values must be equal, outputs must live on the device (a
sample the CPU refuses must be refused alike), and, for differentiable entries, the
gradients of a random cotangent must be equal and live where their leaves do.
"""

import collections
import contextlib
import pathlib
import traceback
import zlib

import numpy

import retrograd
from retrograd import backend
from opdb import op_db, reseed



@contextlib.contextmanager
def emulating():
    prev = backend.emulate_cuda(True)
    try:
        yield
    finally:
        backend.emulate_cuda(prev)


def _dtype(op):
    """float64 (where gradients are checked), else the entry's first dtype."""
    if op.supports_grad or "float64" in op.dtypes or not op.dtypes:
        return "float64"
    return op.dtypes[0]


def _samples(op, requires_grad):
    reseed(zlib.crc32(f"{op.id}/emulated/{requires_grad}".encode()))
    return list(op.sample_inputs(_dtype(op), requires_grad))


def _map(obj, fn):
    if isinstance(obj, retrograd.Tensor):
        return fn(obj)
    if isinstance(obj, (list, tuple)):
        return type(obj)(_map(e, fn) for e in obj)
    if isinstance(obj, dict):
        return {k: _map(v, fn) for k, v in obj.items()}
    return obj


def _copier(device):
    """A fresh leaf copy of each tensor on ``device``, one per tensor (a tensor passed
    twice stays one leaf), so that in-place entries start from the sample's values on
    both devices even when samples share a tensor."""
    seen = {}

    def copy(t):
        if id(t) not in seen:
            seen[id(t)] = t.detach().to(device, copy=True).requires_grad_(t.requires_grad)
        return seen[id(t)]
    return copy


_Sample = collections.namedtuple("_Sample", "input args kwargs")


def _flat(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _host(x):
    return x.detach().cpu().numpy() if isinstance(x, retrograd.Tensor) else x


def _same(a, b, what):
    if isinstance(a, retrograd.Tensor) != isinstance(b, retrograd.Tensor):
        raise AssertionError(f"{what}: a Tensor on one device only")
    if not isinstance(a, retrograd.Tensor):
        if a != b and not (a != a and b != b):
            raise AssertionError(f"{what}: {a!r} != {b!r}")
        return
    if b.device.type != "cuda":
        raise AssertionError(f"{what} is on {b.device}, not on the device")
    x, y = _host(a), _host(b)
    if x.shape != y.shape or x.dtype != y.dtype:
        raise AssertionError(f"{what}: {x.shape} {x.dtype} vs {y.shape} {y.dtype}")
    numpy.testing.assert_allclose(y, x, rtol=1e-12, atol=1e-12, equal_nan=True, err_msg=what)


def run(op):
    """Compare every sample of ``op`` on the two devices; raise on the first difference."""
    grad = op.supports_grad
    cpu_samples, dev_samples = _samples(op, grad), None
    with emulating():
        dev_samples = [_map(s, lambda t: t) for s in _samples(op, grad)]
        for k, (s, d) in enumerate(zip(cpu_samples, dev_samples, strict=True)):
            s = _Sample(*_map((s.input, s.args, s.kwargs), _copier("cpu")))
            d_in, d_args, d_kwargs = _map((d.input, d.args, d.kwargs), _copier("cuda"))
            try:
                outs = _flat(op.op(s.input, *s.args, **s.kwargs))
            except Exception as e:  # noqa: BLE001 - the device must raise the same
                _same_error(e, op.op, (d_in, *d_args), d_kwargs, f"sample {k}")
                continue
            d_outs = _flat(op.op(d_in, *d_args, **d_kwargs))
            if len(outs) != len(d_outs):
                raise AssertionError(f"sample {k}: {len(outs)} vs {len(d_outs)} outputs")
            for j, (a, b) in enumerate(zip(outs, d_outs, strict=True)):
                _same(a, b, f"sample {k} output {j}")
            if not grad:
                continue
            diff = [j for j, o in enumerate(outs)
                    if isinstance(o, retrograd.Tensor) and o.requires_grad]
            leaves = [t for t in _leaves((s.input, s.args, s.kwargs))]
            d_leaves = [t for t in _leaves((d_in, d_args, d_kwargs))]
            if not diff or not leaves:
                continue
            rng = numpy.random.default_rng(k)
            cots = [rng.standard_normal(outs[j].shape) for j in diff]
            g = retrograd.autograd.grad([outs[j] for j in diff], leaves,
                                        [retrograd.tensor(c) for c in cots],
                                        allow_unused=True)
            dg = retrograd.autograd.grad([d_outs[j] for j in diff], d_leaves,
                                         [retrograd.tensor(c, device="cuda") for c in cots],
                                         allow_unused=True)
            for j, (a, b) in enumerate(zip(g, dg, strict=True)):
                if (a is None) != (b is None):
                    raise AssertionError(f"sample {k} grad {j}: None on one device only")
                if a is not None:
                    _same(a, b, f"sample {k} grad {j}")


def _same_error(e, fn, args, kwargs, what):
    """A sample the CPU refuses: the device refuses it alike (type and message)."""
    try:
        fn(*args, **kwargs)
    except type(e) as d:
        if str(d) != str(e):
            raise AssertionError(f"{what}: {d!r} on the device, {e!r} on the CPU") from None
        return
    raise AssertionError(f"{what}: the CPU raised {e!r}, the device did not")


def _leaves(obj):
    seen = {}
    _map(obj, lambda t: seen.setdefault(id(t), t) if t.requires_grad else None)
    return list(seen.values())


# Entries whose samples cannot, or by PyTorch's rules must not, live on the device.
HOST_BY_DESIGN = {
    "tril_indices": "no tensor input: the output is on the CPU unless device= is given",
    "triu_indices": "no tensor input: the output is on the CPU unless device= is given",
    "to": "a sample moves to the CPU (to('cpu', float64))",
    "pack_padded_sequence": "PyTorch refuses lengths on a device (a 1D CPU int64 tensor)",
    "pad_packed_sequence": "PyTorch returns the lengths on the CPU",
}

_SHORT = {"Implicit conversion to a NumPy array": "implicit copy to the host",
          "Unsupported type <class 'numpy.ndarray'>": "a host array given to the device",
          "Expected all tensors to be on the same device": "a CPU tensor made for a device op",
          "can't convert cuda": "a device tensor read as NumPy"}


def outcome(op):
    """None when ``op`` runs alike on both devices, else the first failure in one line:
    where in retrograd it happened, and the exception."""
    try:
        run(op)
    except Exception as e:  # noqa: BLE001 - the table reports every kind of failure
        frames = [f for f in traceback.extract_tb(e.__traceback__)
                  if "/retrograd/" in f.filename and "/backend/emulated" not in f.filename]
        where = ""
        if frames:
            f = frames[-1]
            where = f"{f.filename.split('/retrograd/')[-1]} {f.name}: "
        msg = str(e).splitlines()[0] if str(e) else ""
        for long, short in _SHORT.items():
            if long in msg:
                msg = short
        return f"{where}{type(e).__name__}: {msg}"[:86]
    return None


def _write(path):
    """Write the registry of entries that do not yet run on the device."""
    lines = ['"""Op-database entries that do not yet run on the emulated device, each with where',
             "it fails (regenerate with ``python tests/device/emulated_run.py --write``; a test",
             "fails when a listed entry starts to pass, so the list only shrinks). Entries that",
             'stay on the host by design are in ``HOST_BY_DESIGN`` (emulated_run.py)."""', "",
             "NOT_ON_DEVICE = {"]
    for op in op_db:
        r = outcome(op)
        if r is not None and op.id not in HOST_BY_DESIGN:
            line = f"    {op.id!r}: {r!r},"
            lines.append(line if len(line) <= 100 else f"    {op.id!r}:\n        {r!r},")
    lines.append("}")
    pathlib.Path(path).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    import sys
    if "--write" in sys.argv:
        _write(pathlib.Path(__file__).with_name("not_on_device.py"))
    fails = {op.id: r for op in op_db
             if op.id not in HOST_BY_DESIGN and (r := outcome(op)) is not None}
    n = len(op_db) - len(HOST_BY_DESIGN)
    print(f"{n - len(fails)} / {n} entries pass on the emulated device "
          f"({len(HOST_BY_DESIGN)} stay on the host by design)")
    for reason, n in collections.Counter(fails.values()).most_common(60):
        print(f"{n:4d}  {reason}")
