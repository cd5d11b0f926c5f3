"""Device "cuda" on a real GPU (CuPy): PyTorch's device semantics, training after a move,
streams and events, memory accounting, and the op database against the CPU.

Every test here is marked ``cuda``: skipped on a machine without a GPU (CI), run where
CuPy's runtime sees one.
"""

import contextlib
import io

import numpy
import pytest

import retrograd
from device.emulated_run import HOST_BY_DESIGN, _twice, low_precision, outcome
from device.test_emulated_creation import CASES as CREATION
from gpu.not_on_gpu import NOT_IN_BFLOAT16_ON_GPU, NOT_ON_GPU
from opdb import op_db

pytestmark = pytest.mark.cuda


def test_tensors_live_on_cupy_arrays_and_move_with_gradients():
    import cupy
    w = retrograd.randn(3, 4, requires_grad=True)
    wc = w.cuda()
    assert isinstance(wc._data, cupy.ndarray) and wc.is_cuda
    assert wc.device == retrograd.device("cuda", 0) and wc.grad_fn.name() == "ToCopyBackward0"
    out = (wc @ retrograd.ones(4, 2, device="cuda")).relu().sum()
    out.backward()
    assert out.device.type == "cuda" and w.grad.device.type == "cpu"
    w2 = w.detach().clone().requires_grad_(True)
    (w2 @ retrograd.ones(4, 2)).relu().sum().backward()
    numpy.testing.assert_allclose(w.grad.numpy(), w2.grad.numpy(), rtol=1e-6)


def test_device_errors_and_host_reads_are_pytorchs():
    x = retrograd.tensor([1.0, 2.0], device="cuda", requires_grad=True)
    with pytest.raises(RuntimeError, match=r"^Expected all tensors to be on the same device, "
                                           r"but found at least two devices, cuda:0 and cpu!$"):
        x + retrograd.ones(2)
    with pytest.raises(TypeError, match=r"^can't convert cuda:0 device type tensor to numpy"):
        x.detach().numpy()
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        retrograd.ones(1, device=f"cuda:{retrograd.cuda.device_count()}")
    assert repr(x) == "tensor([1., 2.], device='cuda:0', requires_grad=True)"
    assert x.tolist() == [1.0, 2.0] and x[1].item() == 2.0
    assert (x + retrograd.tensor(2.0)).device.type == "cuda"  # a CPU scalar joins


def test_cuda_module_answers_from_the_runtime():
    cuda = retrograd.cuda
    assert cuda.is_available() and cuda.device_count() >= 1 and cuda.is_initialized()
    assert cuda.current_device() == 0
    name = cuda.get_device_name()
    assert isinstance(name, str) and name
    assert cuda.get_device_capability() >= (3, 0)
    free, total = cuda.mem_get_info()
    assert 0 < free <= total == cuda.get_device_properties(0).total_memory
    with cuda.device(0):
        assert cuda.current_device() == 0
    cuda.synchronize()


def test_module_and_optimizer_train_after_a_move():
    retrograd.manual_seed(0)
    nn = retrograd.nn
    cpu_model = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.LayerNorm(16), nn.Linear(16, 3))
    gpu_model = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.LayerNorm(16), nn.Linear(16, 3))
    gpu_model.load_state_dict(cpu_model.state_dict())
    gpu_model.to(dtype=retrograd.float64).cuda()
    cpu_model.to(dtype=retrograd.float64)
    opts = [retrograd.optim.AdamW(m.parameters(), lr=1e-2) for m in (cpu_model, gpu_model)]
    sched = retrograd.optim.lr_scheduler.StepLR(opts[1], 2)
    x = retrograd.randn(5, 8, dtype=retrograd.float64)
    y = retrograd.randint(0, 3, (5,))
    for _ in range(3):
        for model, opt, dev in zip((cpu_model, gpu_model), opts, ("cpu", "cuda"), strict=True):
            opt.zero_grad()
            loss = nn.functional.cross_entropy(model(x.to(dev)), y.to(dev))
            loss.backward()
            opt.step()
        sched.step()
        opts[0].param_groups[0]["lr"] = opts[1].param_groups[0]["lr"]
    for p, q in zip(cpu_model.parameters(), gpu_model.parameters(), strict=True):
        assert q.device.type == "cuda" and opts[1].state[q]["exp_avg"].device.type == "cuda"
        numpy.testing.assert_allclose(q.detach().cpu().numpy(), p.detach().numpy(), rtol=1e-9,
                                      atol=1e-12)
    cpu_again = gpu_model.cpu()
    assert all(p.device.type == "cpu" for p in cpu_again.parameters())


def test_save_and_load_with_map_location():
    t = retrograd.arange(6.0, device="cuda").reshape(2, 3)
    buf = io.BytesIO()
    retrograd.save({"t": t}, buf)
    buf.seek(0)
    on_cpu = retrograd.load(buf, map_location="cpu")["t"]
    assert on_cpu.device.type == "cpu" and on_cpu.tolist() == t.tolist()
    buf.seek(0)
    back = retrograd.load(buf)["t"]
    assert back.device == t.device and back.tolist() == t.tolist()


def test_streams_and_events_order_and_time_work():
    cuda = retrograd.cuda
    s = cuda.Stream()
    start, end = cuda.Event(enable_timing=True), cuda.Event(enable_timing=True)
    a = retrograd.randn(512, 512, device="cuda")
    s.wait_stream(cuda.current_stream())
    with cuda.stream(s):
        assert cuda.current_stream() == s
        start.record()
        b = a @ a
        end.record()
    cuda.current_stream().wait_stream(s)
    end.synchronize()
    assert end.query() and start.elapsed_time(end) >= 0
    assert cuda.current_stream() == cuda.default_stream() or cuda.current_stream() != s
    numpy.testing.assert_allclose(b.cpu().numpy(), a.cpu().numpy() @ a.cpu().numpy(),
                                  rtol=1e-4, atol=1e-3)


def test_memory_allocated_books_device_storages_by_category():
    mem = retrograd.cuda.memory
    base = mem.memory_allocated("cuda")
    w = retrograd.nn.Parameter(retrograd.zeros(1024, 256, device="cuda"))  # 1 MiB
    view = w[:10]  # a view: no new storage
    assert mem.memory_allocated("cuda") - base == 1024 * 256 * 4
    stats = mem.memory_stats("cuda")
    assert stats["allocated_bytes.all.current"] >= 1024 * 256 * 4
    assert mem.memory_reserved("cuda") >= mem.memory_allocated("cuda") - base
    del w, view
    assert mem.memory_allocated("cuda") == base


@pytest.mark.parametrize("op", [pytest.param(op, id=op.id) for op in op_db
                                if op.id not in HOST_BY_DESIGN])
def test_op_database_on_the_gpu(op):
    """Values, devices and gradients as on the CPU, to PyTorch's CPU-against-CUDA
    tolerance; second order for twice-differentiable entries. Listed entries must still
    fail (so the list shrinks)."""
    got = outcome(op, gpu=True)
    if got is None and _twice(op):
        got = outcome(op, 2, gpu=True)
    _check(op.id, got, NOT_ON_GPU)


@pytest.mark.parametrize("op", [pytest.param(op, id=op.id) for op in op_db
                                if low_precision(op) and op.id not in HOST_BY_DESIGN])
def test_op_database_in_bfloat16_on_the_gpu(op):
    _check(op.id, outcome(op, dtype="bfloat16", gpu=True), NOT_IN_BFLOAT16_ON_GPU)


def _check(op_id, got, listed):
    if op_id in listed:
        assert got is not None, (f"{op_id} now runs on the GPU: delete its entry from "
                                 f"tests/gpu/not_on_gpu.py")
    else:
        assert got is None, got


def test_save_on_cpu_pinned_offload_gives_the_same_gradients_and_frees_the_device():
    """Saved activations go to pinned host memory on a side stream and come back for
    backward: the gradients are those of the plain step, and during the forward the
    device holds fewer bytes than without offload."""
    nn = retrograd.nn
    retrograd.manual_seed(0)
    model = nn.Sequential(*(nn.Sequential(nn.Linear(256, 1024), nn.GELU(),
                                          nn.Linear(1024, 256)) for _ in range(4))).cuda()
    x = retrograd.randn(512, 256, device="cuda")
    mem = retrograd.cuda.memory
    grads, held = [], []
    for offload in (False, True):
        model.zero_grad(set_to_none=True)
        base = mem.memory_allocated("cuda")
        with retrograd.autograd.graph.save_on_cpu(pin_memory=True) if offload else \
                contextlib.nullcontext():
            loss = model(x).square().mean()
            retrograd.cuda.synchronize()
            tiny = retrograd.ones(2, device="cuda", requires_grad=True)
            keep = tiny * tiny  # a pack: the copies done by now release their arrays
        held.append(mem.memory_allocated("cuda") - base)
        (loss + keep.sum()).backward()
        grads.append([p.grad.cpu().numpy() for p in model.parameters()])
    for a, b in zip(*grads, strict=True):
        numpy.testing.assert_array_equal(b, a)
    assert held[1] < held[0] / 2


def test_emit_nvtx_pushes_a_range_per_op_and_node(monkeypatch):
    from cupy.cuda import nvtx
    names = []
    monkeypatch.setattr(nvtx, "RangePush", lambda name, *a: names.append(name))
    monkeypatch.setattr(nvtx, "RangePop", lambda: names.append(None))
    x = retrograd.randn(4, 4, device="cuda", requires_grad=True)
    with retrograd.autograd.profiler.emit_nvtx():
        (x @ x).relu().sum().backward()
    pushed = [n for n in names if n is not None]
    assert len(pushed) == names.count(None) and "aten::relu" in pushed
    assert any("Backward" in n for n in pushed)


def test_the_accelerator_is_cuda():
    acc = retrograd.accelerator
    assert acc.is_available() and acc.current_accelerator() == retrograd.device("cuda")
    assert acc.device_count() == retrograd.cuda.device_count()
    assert acc.current_device_index() == 0
    with acc.device_index(0):
        x = retrograd.ones(256, device="cuda")
    acc.synchronize()
    assert acc.memory_allocated() >= x.nbytes and acc.get_memory_info()[1] > 0


@pytest.mark.parametrize("name", list(CREATION))
def test_creation_makes_cupy_arrays_on_the_gpu(name):
    """The filled and range functions allocate with CuPy on the device (backend.on_device),
    with the CPU's values, dtypes and shapes."""
    import cupy
    host = CREATION[name]("cpu")
    got = CREATION[name]("cuda")
    assert isinstance(got._data, cupy.ndarray) and got.device == retrograd.device("cuda", 0)
    assert (got.dtype, got.shape) == (host.dtype, host.shape)
    if name != "empty":
        numpy.testing.assert_array_equal(got.cpu().numpy(), host.numpy())
