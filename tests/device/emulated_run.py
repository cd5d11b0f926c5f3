"""Run one op-database entry on device ``cuda`` and compare with the CPU.

Shared by the tests and by ``python tests/device/emulated_run.py`` (a pass/fail table;
``--gpu``: on the real GPU, every failure listed). Each sample (float64 where the
entry has it, or bfloat16 for the entries PyTorch runs in float32) runs forward on the
CPU and on ``cuda`` (the CuPy-shaped emulator, or with ``gpu=True`` CuPy on a GPU);
values must be equal, outputs must live on the device (a sample the CPU refuses must be
refused alike), and, for differentiable entries, the gradients of a random cotangent
must be equal and live where their leaves do. On a real GPU "equal" is PyTorch's own
CPU-against-CUDA tolerance (``assert_close``'s defaults): its kernels sum in another
order and its math library rounds differently.
"""

import collections
import contextlib
import pathlib
import zlib

import ml_dtypes
import numpy

import retrograd
from retrograd import backend
from opdb import op_db, reseed
from _failure_line import failure_line



@contextlib.contextmanager
def emulating(on=True):
    prev = backend.emulate_cuda(on)
    try:
        yield
    finally:
        backend.emulate_cuda(prev)


# assert_close's default (rtol, atol) per dtype, for CPU-against-GPU comparisons
_GPU_TOL = {numpy.dtype(d): tol for d, tol in (
    (numpy.float64, (1e-7, 1e-7)), (numpy.float32, (1.3e-6, 1e-5)), (numpy.float16, (1e-3, 1e-5)),
    (ml_dtypes.bfloat16, (1.6e-2, 1e-5)), (numpy.complex128, (1e-7, 1e-7)),
    (numpy.complex64, (1.3e-6, 1e-5)))}
_gpu = [False]  # whether the device compared is a real GPU (set by run)


def _dtype(op):
    """float64 (where gradients are checked), else the entry's first dtype."""
    if op.supports_grad or "float64" in op.dtypes or not op.dtypes:
        return "float64"
    return op.dtypes[0]


def low_precision(op):
    """Whether ``op`` runs in bfloat16: PyTorch's float32 entries (the half-precision
    policy's: they compute in float32 and round once, on any device)."""
    return "float32" in op.dtypes


def _samples(op, requires_grad, dtype):
    if dtype is None:
        reseed(zlib.crc32(f"{op.id}/emulated/{requires_grad}".encode()))
        return list(op.sample_inputs(_dtype(op), requires_grad))
    reseed(zlib.crc32(f"{op.id}/emulated/{dtype}/{requires_grad}".encode()))
    return list(op.sample_inputs(dtype, requires_grad))


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
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):  # (histogramdd's edges)
        if len(a) != len(b):
            raise AssertionError(f"{what}: {len(a)} vs {len(b)} elements")
        for j, (x, y) in enumerate(zip(a, b, strict=True)):
            _same(x, y, f"{what}[{j}]")
        return
    if isinstance(a, retrograd.Tensor) != isinstance(b, retrograd.Tensor):
        raise AssertionError(f"{what}: a Tensor on one device only")
    if not isinstance(a, retrograd.Tensor):
        if isinstance(b, str):  # a legacy type name names the device (torch.cuda.XTensor)
            b = b.replace("torch.cuda.", "torch.", 1)
        if a != b and not (a != a and b != b):
            raise AssertionError(f"{what}: {a!r} != {b!r}")
        return
    if b.device.type != "cuda":
        raise AssertionError(f"{what} is on {b.device}, not on the device")
    x, y = _host(a), _host(b)
    if x.shape != y.shape or x.dtype != y.dtype:
        raise AssertionError(f"{what}: {x.shape} {x.dtype} vs {y.shape} {y.dtype}")
    rtol = atol = 1e-12
    if _gpu[0]:
        rtol, atol = _GPU_TOL.get(x.dtype, (0, 0))
    elif x.dtype in (numpy.float16, retrograd.bfloat16.np):  # one unit in the last place: a
        # kernel of the other device sums in float32 in another order, then rounds
        rtol = atol = float(ml_dtypes.finfo(x.dtype).eps)
    if x.dtype in (numpy.float16, retrograd.bfloat16.np):
        x, y = x.astype(numpy.float32), y.astype(numpy.float32)
    numpy.testing.assert_allclose(y, x, rtol=rtol, atol=atol, equal_nan=True, err_msg=what)


def run(op, order=1, dtype=None, gpu=False):
    """Compare every sample of ``op`` on the two devices; raise on the first difference.
    ``order=2``: the gradients are taken with ``create_graph=True`` (the rules then run
    on the differentiable facade's device Tensors) and differentiated once more.
    ``dtype``: the samples' dtype (a name) instead of the entry's widest. ``gpu``: on
    CuPy's GPU instead of the emulator."""
    grad = op.supports_grad
    cpu_samples, dev_samples = _samples(op, grad, dtype), None
    _gpu[0] = gpu
    with emulating(not gpu):
        dev_samples = [_map(s, lambda t: t) for s in _samples(op, grad, dtype)]
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
            g, dg = _grads([outs[j] for j in diff], [d_outs[j] for j in diff], leaves,
                           d_leaves, rng, f"sample {k} grad", order == 2)
            if order == 2:
                pairs = [(a, b) for a, b in zip(g, dg, strict=True)
                         if a is not None and a.requires_grad]
                if pairs:
                    _grads([a for a, _ in pairs], [b for _, b in pairs], leaves, d_leaves,
                           rng, f"sample {k} grad of grad", False)


def _grads(outs, d_outs, leaves, d_leaves, rng, what, create_graph):
    """The gradients of a random cotangent of ``outs`` on the CPU and of ``d_outs`` on the
    device, compared (a low-precision output's cotangent in its dtype)."""
    cots = [(rng.standard_normal(o.shape), o.dtype if o.dtype in _LOW else None) for o in outs]
    g = retrograd.autograd.grad(outs, leaves, [retrograd.tensor(c, dtype=d) for c, d in cots],
                                allow_unused=True, create_graph=create_graph)
    dg = retrograd.autograd.grad(d_outs, d_leaves,
                                 [retrograd.tensor(c, dtype=d, device="cuda") for c, d in cots],
                                 allow_unused=True, create_graph=create_graph)
    for j, (a, b) in enumerate(zip(g, dg, strict=True)):
        if (a is None) != (b is None):
            raise AssertionError(f"{what} {j}: None on one device only")
        if a is not None:
            _same(a, b, f"{what} {j}")
    return g, dg


_LOW = (retrograd.float16, retrograd.bfloat16)


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


def outcome(op, order=1, dtype=None, gpu=False):
    """None when ``op`` runs alike on both devices, else the first failure in one line:
    where in retrograd it happened, and the exception."""
    try:
        run(op, order, dtype, gpu)
    except Exception as e:  # noqa: BLE001 - the table reports every kind of failure
        return failure_line(e, "/backend/emulated", _SHORT)
    return None


def _twice(op):
    """Whether ``op``'s second order is checked: differentiable twice, and its first order
    runs on the device."""
    return op.supports_grad and op.supports_gradgrad and op.id not in HOST_BY_DESIGN


def _write(path):
    """Write the registries of entries that do not yet run on the emulated device."""
    lines = ['"""Op-database entries that do not yet run on the emulated device, each with where',
             "it fails (regenerate with ``python tests/device/emulated_run.py --write``; a test",
             "fails when a listed entry starts to pass, so the lists only shrink). Entries that",
             'stay on the host by design are in ``HOST_BY_DESIGN`` (emulated_run.py)."""', ""]
    first = {}
    for name, order in (("NOT_ON_DEVICE", 1), ("NOT_TWICE_ON_DEVICE", 2)):
        lines.append(f"{name} = {{" if order == 1 else
                     f"\n# Second order (gradients with create_graph=True, differentiated again)\n"
                     f"{name} = {{")
        for op in op_db:
            if op.id in HOST_BY_DESIGN or order == 2 and (not _twice(op) or op.id in first):
                continue
            r = outcome(op, order)
            if r is not None:
                first[op.id] = r
                line = f"    {op.id!r}: {r!r},"
                lines.append(line if len(line) <= 100 else f"    {op.id!r}:\n        {r!r},")
        lines.append("}")
    pathlib.Path(path).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    import sys
    if "--write" in sys.argv:
        _write(pathlib.Path(__file__).with_name("not_on_device.py"))
    gpu = "--gpu" in sys.argv
    where = "the GPU" if gpu else "the emulated device"
    n = len(op_db) - len(HOST_BY_DESIGN)
    fails = {op.id: r for op in op_db
             if op.id not in HOST_BY_DESIGN and (r := outcome(op, gpu=gpu)) is not None}
    print(f"{n - len(fails)} / {n} entries pass on {where} "
          f"({len(HOST_BY_DESIGN)} stay on the host by design)")
    twice = [op for op in op_db if _twice(op) and op.id not in fails]
    fails2 = {op.id: r for op in twice if (r := outcome(op, 2, gpu=gpu)) is not None}
    print(f"{len(twice) - len(fails2)} / {len(twice)} twice-differentiable entries pass "
          f"second order on {where}")
    low = [op for op in op_db if low_precision(op) and op.id not in HOST_BY_DESIGN]
    fails3 = {op.id: r for op in low if (r := outcome(op, dtype="bfloat16", gpu=gpu))}
    print(f"{len(low) - len(fails3)} / {len(low)} float32 entries pass in bfloat16 on {where}")
    for reason, n in collections.Counter({**fails, **fails2, **fails3}.values()).most_common(60):
        print(f"{n:4d}  {reason}")
    if gpu:
        for name, table in (("first order", fails), ("second order", fails2),
                            ("bfloat16", fails3)):
            for op_id, r in table.items():
                print(f"{name}: {op_id}: {r}")
