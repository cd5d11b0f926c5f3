"""The meta device: shape-only arrays, PyTorch's meta semantics (factories, moves,
printing, no-data errors, module moves), and the op database run on meta against
PyTorch's meta tensors.
"""

import gc

import numpy
import pytest
import torch

import retrograd
from retrograd import backend, memory, nn
from retrograd.models import resnet18, vit_tiny
from retrograd.backend import meta
from device.meta_run import outcome
from device.not_on_meta import NOT_ON_META
from opdb import op_db

xp = meta.namespace


def test_arrays_have_shape_dtype_and_strides_without_data():
    a = xp.empty((2, 3, 4), "float32")
    assert a.shape == (2, 3, 4) and a.strides == (48, 16, 4) and a.nbytes == 96
    assert (a + 1).dtype == "float32" and (a * 2.0).shape == (2, 3, 4)
    assert (a @ xp.ones((4, 5), "float64")).shape == (2, 3, 5)
    assert (a @ xp.ones((4, 5), "float64")).dtype == "float64"
    assert a.sum(axis=1).shape == (2, 4) and a.mean(keepdims=True).shape == (1, 1, 1)
    assert xp.concatenate([a, a], axis=1).shape == (2, 6, 4)
    assert xp.argmax(a, axis=-1).dtype == "int64"


def test_views_keep_their_base_strides_and_offset():
    a = xp.empty((2, 3, 4), "float32")
    v = a[:, 1]
    assert v.base is a and v.shape == (2, 4) and v.strides == (48, 4) and v._offset == 16
    assert a.T.strides == (4, 16, 48) and a.T.base is a
    assert a.reshape(6, 4).base is a
    assert a.T.reshape(-1).base is None  # needs a copy, as in NumPy
    assert a[:, :, 1:3].reshape(6, 2).strides == (16, 4)


@pytest.mark.parametrize("dst, src, kwargs", [
    (((2, 3), "float32"), ((3,), "float64"), {}),
    (((2, 3), "float32"), ((2, 1), "float32"), {}),
    (((2, 3), "float32"), ((2,), "float32"), {}),
    (((3,), "float32"), ((3,), "float64"), {"casting": "safe"}),
    (((3,), "float32"), ((), "float64"), {"casting": "safe"}),
    (((0,), "float32"), ((1,), "float64"), {"casting": "safe"}),
    (((), "float32"), ((2,), "float32"), {}),
    (((3,), "int32"), 1.5, {}),
    (((3,), "float32"), ((3,), "float32"), {"where": ((2,), "bool")}),
    (((3,), "float32"), ((3,), "float32"), {"where": ((3,), "float64")}),
    (((3,), "float32"), ((1,), "int64"), {"where": ((3,), "bool")}),
    (((3, 2), "float32"), [1, 2], {}),
    (((3, 2), "int32"), [1.5, 2.5], {}),
    (((3, 2), "float32"), [1, 2, 3], {}),
    (((3, 2), "float32"), 2, {"where": [True, False]}),
])
def test_copyto_checks_as_numpys_and_writes_nothing(dst, src, kwargs, monkeypatch):
    """Shapes and the casting rule as NumPy's, same errors; no stand-in of the arrays'
    shapes for NumPy to write (the fallback's wrote every element: minutes for a large
    parameter's update)."""
    def made(module, spec):
        return module.ones(*spec) if isinstance(spec, tuple) else spec
    outcomes = []
    for module in (numpy, xp):
        try:
            module.copyto(made(module, dst), made(module, src),
                          **{k: made(module, v) for k, v in kwargs.items()})
            outcomes.append(None)
        except (ValueError, TypeError) as e:
            outcomes.append((type(e), str(e)))
    assert outcomes[0] == outcomes[1]
    def no_full_shape_standin(x, shape=None, *args, **kwargs):
        raise AssertionError(f"a stand-in of shape {shape} for NumPy to write into")
    monkeypatch.setattr(numpy.lib.stride_tricks, "as_strided", no_full_shape_standin)
    xp.copyto(xp.empty((1 << 20, 1 << 20), "float32"), xp.ones((1 << 20,), "float64"))


@pytest.mark.parametrize("call, error, message", [
    (lambda x: x.item(), RuntimeError, "a Tensor with 6 elements cannot be converted"),
    (lambda x: x[0, 0].item(), RuntimeError, "Tensor.item() cannot be called on meta tensors"),
    (lambda x: float(x[0, 0]), RuntimeError, "Tensor.item() cannot be called on meta tensors"),
    (lambda x: bool(x[0, 0]), RuntimeError, "Tensor.item() cannot be called on meta tensors"),
    (lambda x: x.tolist(), NotImplementedError, "Cannot copy out of meta tensor; no data!"),
    (lambda x: x.cpu(), NotImplementedError, "Cannot copy out of meta tensor; no data!"),
    (lambda x: x.numpy(), TypeError, "can't convert meta device type tensor to numpy. Use "
                                     "Tensor.cpu() to copy the tensor to host memory first."),
    (lambda x: x.nonzero(), NotImplementedError, "The register_meta function for "
                                                 "torch.nonzero() raises unimplemented"),
    (lambda x: x[x > 0], NotImplementedError, "The register_meta function for torch.nonzero()"),
])
def test_what_needs_values_raises_pytorchs_errors(call, error, message):
    for lib in (torch, retrograd):
        x = lib.empty(2, 3, device="meta")
        with pytest.raises(error) as e:
            call(x)
        assert str(e.value).startswith(message), (lib.__name__, str(e.value))


def test_printing_is_pytorchs():
    for make in (lambda lib: lib.empty(2, 3, device="meta"),
                 lambda lib: lib.empty(2, 3, device="meta", requires_grad=True) * 2,
                 lambda lib: lib.empty(2, device="meta", dtype=lib.int64),
                 lambda lib: lib.empty((), device="meta", dtype=lib.bool),
                 lambda lib: lib.empty(0, device="meta"),
                 lambda lib: lib.nn.Parameter(lib.empty(2, device="meta"))):
        assert repr(make(retrograd)) == repr(make(torch))


def test_factories_moves_and_attributes():
    x = retrograd.zeros(10**6, 10**6, device="meta")  # 4 TB: nothing is allocated
    assert x.is_meta and x.device == retrograd.device("meta") and x.nbytes == 4 * 10**12
    assert x.data_ptr() == 0 and x[1:].storage_offset() == 10**6
    y = retrograd.randn(3, 4).to("meta")
    assert y.is_meta and y.shape == (3, 4) and y.dtype is retrograd.float32
    for f in (retrograd.empty_like, retrograd.zeros_like, retrograd.ones_like,
              retrograd.randn_like):
        z = f(y)
        assert z.is_meta and z.shape == (3, 4)
    assert retrograd.full((2,), 1.5, device="meta").dtype is retrograd.float32
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device, "
                                           "but found at least two devices"):
        y + retrograd.ones(3, 4)


def test_set_default_device_and_module_moves():
    prev = backend.get_default_device()
    backend.set_default_device("meta")
    try:
        model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
        assert all(p.is_meta for p in model.parameters())
        assert retrograd.ones(2).is_meta
    finally:
        backend.set_default_device(prev)
    out = model(retrograd.empty(5, 4, device="meta")).sum()
    out.backward()
    assert all(p.grad.is_meta and p.grad.shape == p.shape for p in model.parameters())
    model.to_empty(device="cpu")
    assert all(p.device.type == "cpu" for p in model.parameters())
    model.to("meta")
    assert all(p.is_meta for p in model.parameters())
    assert nn.Linear(3, 4, device="meta").weight.is_meta


@pytest.mark.parametrize("op", [pytest.param(op, id=op.id) for op in op_db])
def test_op_database_on_meta(op):
    """Every entry's outputs and gradients on meta have PyTorch's meta shapes and dtypes,
    except the listed ones, which must still fail (so the list shrinks)."""
    got = outcome(op)
    if op.id in NOT_ON_META:
        assert got is not None, (f"{op.id} now runs on meta: delete its entry from "
                                 f"tests/device/not_on_meta.py")
        return
    assert got is None, got


def _mlp():
    return nn.Sequential(nn.Linear(64, 256), nn.GELU(), nn.LayerNorm(256), nn.Linear(256, 10))


def _step_peak(device, build, batch):
    """Bytes per category at the peak of a training step's second iteration (Adam's state
    exists then), beyond what was alive before the model was built."""
    memory.stop_accounting()
    gc.collect()
    start = memory.memory_stats()
    before = {c: start[f"allocated_bytes.{c}.current"] for c in memory.CATEGORIES}
    prev = backend.get_default_device()
    backend.set_default_device(device)
    try:
        retrograd.manual_seed(0)
        model = build()
        x, y = (retrograd.randn(*batch), retrograd.randint(0, 10, (batch[0],)))
    finally:
        backend.set_default_device(prev)
    opt = retrograd.optim.Adam(model.parameters())
    for _ in range(2):
        memory.reset_peak_memory_stats()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        del loss
    s = memory.memory_stats()
    at_peak = {c: s[f"allocated_bytes.{c}.at_peak"] - before[c] for c in memory.CATEGORIES}
    return s["allocated_bytes.all.peak"] - sum(before.values()), at_peak


@pytest.mark.parametrize("build, batch", [(_mlp, (32, 64)), (vit_tiny, (4, 3, 32, 32)),
                                          (lambda: resnet18(num_classes=10), (2, 3, 32, 32))],
                         ids=["mlp", "vit_tiny", "resnet18"])
def test_a_meta_training_step_books_the_cpu_steps_peak(build, batch):
    """The tracker books meta storages by shape and dtype: a step of the same model and
    batch on meta has the CPU step's peak, category by category, to the byte (the
    tolerance is zero: the same rules allocate the same storages in the same order)."""
    try:
        cpu = _step_peak("cpu", build, batch)
        on_meta = _step_peak("meta", build, batch)
    finally:
        memory.stop_accounting()
    assert on_meta == cpu and cpu[0] > 0


def test_a_model_too_big_for_the_host_is_measured_on_meta():
    """A 4-layer MLP of width 32768 (16 GiB of float32 weights, 48 GiB with Adam's
    state) steps on meta; the books show every byte, nothing is allocated."""
    width = 1 << 15
    prev = backend.get_default_device()
    backend.set_default_device("meta")
    try:
        model = nn.Sequential(*(nn.Linear(width, width, bias=False) for _ in range(4)))
        x, y = retrograd.empty(8, width), retrograd.empty(8, dtype=retrograd.int64)
    finally:
        backend.set_default_device(prev)
    opt = retrograd.optim.Adam(model.parameters())
    try:
        memory.stop_accounting()
        memory.reset_peak_memory_stats()
        nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
        s = memory.memory_stats()
    finally:
        memory.stop_accounting()
    weights = 4 * width * width * 4
    assert s["allocated_bytes.parameter.current"] >= weights
    assert s["allocated_bytes.optimizer_state.current"] >= 2 * weights
    assert s["allocated_bytes.all.peak"] >= 4 * weights  # parameters, grads, two moments


def test_dropout_on_meta_draws_nothing():
    """Dropout on meta gives a meta tensor and its gradient, and leaves the CPU
    generator where it was (PyTorch's meta tensors draw no values)."""
    x = retrograd.randn(8, 4, 5, 5, device="meta", requires_grad=True)
    state = retrograd.get_rng_state()
    for fn in (nn.functional.dropout, nn.functional.dropout2d, nn.functional.alpha_dropout):
        y = fn(x, 0.25, True)
        assert y.is_meta and y.shape == x.shape
        y.sum().backward()
    assert x.grad.is_meta and retrograd.equal(retrograd.get_rng_state(), state)


def test_a_device_as_context_manager_is_the_default_inside():
    """``with device:`` as PyTorch's: the default inside, nested, restored after (also
    after an exception, and an explicit default set before stays)."""
    for lib in (retrograd, torch):
        with lib.device("meta") as d:
            assert d == lib.device("meta") and lib.empty(2).device.type == "meta"
            with lib.device("cpu"):
                assert lib.empty(1).device.type == "cpu"
            assert lib.get_default_device().type == "meta"
        assert lib.empty(1).device.type == "cpu"
        lib.set_default_device("meta")
        try:
            with pytest.raises(ValueError), lib.device("cpu"):
                raise ValueError
            assert lib.get_default_device().type == "meta"
        finally:
            lib.set_default_device(None)
