"""Memory accounting by category, history and snapshots (retrograd.memory)."""

import pickle

import numpy
import pytest

import retrograd
from retrograd import _observe, memory, nn
from retrograd.memory.tracker import TRACKER

MiB = 1 << 20


pytestmark = pytest.mark.usefixtures("fresh_books")


def _stats():
    return memory.memory_stats()


def _foreign():
    """Bytes per category of storages other tests left alive in this worker (they stay
    constant through a test): the assertions count what a test adds to them."""
    s = memory.memory_stats()
    return {c: s[f"allocated_bytes.{c}.current"] for c in memory.CATEGORIES}


def _cat(name, key="current"):
    return memory.memory_stats()[f"allocated_bytes.{name}.{key}"]


def _nbytes(tensors):
    return sum(t._data.nbytes for t in tensors)


def _mlp():
    retrograd.manual_seed(0)
    return nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 8))


def test_nothing_is_attached_before_first_use():
    assert _observe.alloc is None and _observe.engine is None
    memory.memory_allocated()
    assert _observe.alloc is TRACKER and _observe.engine is TRACKER
    memory.stop_accounting()
    assert _observe.alloc is None and _observe.engine is None


def test_storages_alive_at_start_are_found():
    before = memory.memory_allocated()
    foreign = _foreign()
    memory.stop_accounting()
    model = _mlp()
    x = retrograd.rand(32, 64)
    params = list(model.parameters())
    # Accounting restarts here: these storages are found by the scan, not seen made.
    assert _cat("parameter") - foreign["parameter"] == _nbytes(params)
    assert memory.memory_allocated() - before == _nbytes(params) + x._data.nbytes


def test_allocation_and_free_are_counted_exactly():
    base = memory.memory_allocated()
    a = retrograd.empty(1000, 250)  # 1,000,000 bytes
    assert memory.memory_allocated() - base == 1_000_000
    v = a[10:20].t()  # a view: no new storage
    assert memory.memory_allocated() - base == 1_000_000
    del a
    assert memory.memory_allocated() - base == 1_000_000  # the view keeps it alive
    del v
    assert memory.memory_allocated() == base
    assert memory.max_memory_allocated() >= base + 1_000_000
    memory.reset_peak_memory_stats()
    assert memory.max_memory_allocated() == base


def test_categories_through_a_training_step():
    f = _foreign()
    model = _mlp()
    params = list(model.parameters())
    P = _nbytes(params)
    opt = retrograd.optim.Adam(model.parameters())
    memory.reset_peak_memory_stats()
    x = retrograd.rand(32, 64)
    out = model(x)
    # Held by the graph: x (for the first Linear's weight gradient) and ReLU's output
    # (ReLU saves its result, the second Linear its input: one storage, counted once).
    assert _cat("activation") - f["activation"] == x._data.nbytes + 32 * 256 * 4
    out.sum().backward()
    assert _cat("activation") == f["activation"]
    assert _cat("gradient") - f["gradient"] == P == _nbytes(p.grad for p in params)
    opt.step()
    state = [v for st in opt.state.values() for v in st.values()]
    assert _cat("optimizer_state") - f["optimizer_state"] == _nbytes(state) \
        == 2 * P + 4 * len(params)
    assert _cat("gradient") - f["gradient"] == P
    opt.zero_grad()
    assert _cat("gradient") == f["gradient"]
    s = _stats()
    # The peak is in the step: parameters, gradients and the new state all alive.
    assert s["allocated_bytes.parameter.at_peak"] - f["parameter"] == P
    assert s["allocated_bytes.gradient.at_peak"] - f["gradient"] == P
    assert s["allocated_bytes.optimizer_state.at_peak"] - f["optimizer_state"] \
        == 2 * P + 4 * len(params)
    assert s["allocated_bytes.all.peak"] == sum(
        s[f"allocated_bytes.{c}.at_peak"] for c in memory.CATEGORIES)


def test_a_saved_tensor_moves_to_activation_and_back():
    x = retrograd.rand(1000, requires_grad=True)
    before = _cat("activation")
    y = x.exp()  # saves its result
    assert _cat("activation") - before == 4000
    z = y * 1.0  # MulBackward with a number saves nothing of y
    z.sum().backward()
    assert _cat("activation") == before
    assert memory.memory_allocated() > 0
    del y, z


def test_save_on_cpu_copies_count_as_activation_and_originals_do_not():
    f = _foreign()
    x = retrograd.rand(1000, requires_grad=True)
    with retrograd.autograd.graph.save_on_cpu():
        y = x.sin()
    assert _cat("activation") - f["activation"] == 4000  # the packed copy (x: a leaf, other)
    y.sum().backward()
    assert _cat("activation") == f["activation"]


def test_fused_optimizer_frees_each_gradient_in_backward():
    f = _foreign()
    model = _mlp()
    P = _nbytes(model.parameters())
    opt = retrograd.optim.Adam(model.parameters())
    handle = retrograd.optim.fuse_into_backward(opt)
    model(retrograd.rand(32, 64)).sum().backward()  # state made on this first step
    memory.reset_peak_memory_stats()
    model(retrograd.rand(32, 64)).sum().backward()
    s = _stats()
    assert s["allocated_bytes.gradient.current"] == f["gradient"]
    largest = max(p._data.nbytes for p in model.parameters())
    assert s["allocated_bytes.gradient.at_peak"] - f["gradient"] <= largest < P
    handle.remove()


def test_history_has_pytorch_snapshot_layout(tmp_path):
    model = _mlp()
    opt = retrograd.optim.SGD(model.parameters(), lr=0.1)
    retrograd.cuda.memory._record_memory_history(enabled="all")
    x = retrograd.rand(32, 64)
    model(x).sum().backward()
    opt.step()
    opt.zero_grad()
    s = retrograd.cuda.memory._snapshot()
    path = tmp_path / "snap.pickle"
    retrograd.cuda.memory._dump_snapshot(str(path))
    retrograd.cuda.memory._record_memory_history(enabled=None)  # drops the history
    assert retrograd.cuda.memory._snapshot()["device_traces"] == [[]]
    assert set(s) >= {"segments", "device_traces", "categories", "category_changes"}
    trace = s["device_traces"][0]
    assert {e["action"] for e in trace} == {"alloc", "free_requested", "free_completed"}
    for e in trace:
        assert set(e) >= {"action", "addr", "size", "stream", "time_us", "frames", "category"}
        assert e["category"] in memory.CATEGORIES
        assert isinstance(e["module"], str)  # retrograd's extra key
        for f in e["frames"]:
            assert set(f) == {"filename", "line", "name", "internal"}
    times = [e["time_us"] for e in trace]
    assert times == sorted(times)
    # Every free_completed follows a free_requested of the same block, and no block is
    # freed twice while alive.
    alive = set()
    for i, e in enumerate(trace):
        if e["action"] == "alloc":
            assert e["addr"] not in alive
            alive.add(e["addr"])
        elif e["action"] == "free_completed":
            assert trace[i - 1]["action"] == "free_requested"
            alive.discard(e["addr"])
    # The input was allocated in this function, with a stack that says so.
    x_alloc = next(e for e in trace if e["action"] == "alloc" and e["size"] == 32 * 64 * 4)
    assert any(f["name"] == "test_history_has_pytorch_snapshot_layout"
               for f in x_alloc["frames"])
    # Gradient categories: the weight gradients became .grad (a change), then were freed.
    changes = s["category_changes"][0]
    assert any(c["category"] == "gradient" for c in changes)
    assert any(c["category"] == "activation" for c in changes)
    for c in changes:
        assert 0 <= c["trace_index"] <= len(trace)
    # Live storages are the segments, with PyTorch's block fields.
    params = {id(p._data) for p in model.parameters()}
    addrs = {seg["address"] for seg in s["segments"]}
    assert params <= addrs
    seg = next(seg for seg in s["segments"] if seg["address"] in params)
    assert seg["category"] == "parameter"
    assert seg["blocks"][0]["state"] == "active_allocated"
    with open(path, "rb") as f:
        again = pickle.load(f)
    assert len(again["device_traces"][0]) >= len(trace)


def test_backward_allocations_carry_the_forward_stack():
    memory._record_memory_history()
    w = retrograd.rand(128, 128, requires_grad=True)
    x = retrograd.rand(64, 128)

    def forward_here(a, b):
        return (a @ b).tanh()

    forward_here(x, w).sum().backward()
    trace = memory._snapshot()["device_traces"][0]
    grads = [e for e in trace if e["action"] == "alloc" and e["frames"]
             and e["frames"][0]["filename"] == "<backward>"]
    names = {e["frames"][0]["name"] for e in grads}
    assert {"TanhBackward0", "MmBackward0"} <= names
    mm = next(e for e in grads if e["frames"][0]["name"] == "MmBackward0")
    assert any(f["name"] == "forward_here" for f in mm["frames"][1:])


def test_state_mode_keeps_stacks_of_live_blocks_only():
    memory._record_memory_history(enabled="state")
    keep = retrograd.rand(100)  # noqa: F841 (alive at the snapshot)
    s = memory._snapshot()
    assert s["device_traces"] == [[]]
    seg = next(seg for seg in s["segments"] if seg["address"] == id(keep._data))
    assert any(f["name"] == "test_state_mode_keeps_stacks_of_live_blocks_only"
               for f in seg["frames"])


def test_max_entries_keeps_the_newest():
    memory._record_memory_history(max_entries=10)
    for _ in range(20):
        retrograd.rand(10)
    assert len(memory._snapshot()["device_traces"][0]) <= 15  # a free is two entries


def test_exact_mode_books_kernel_temporaries():
    x = retrograd.rand(512, 1024, requires_grad=True)
    memory._record_memory_history(exact=True)
    y = retrograd.nn.functional.log_softmax(x * 2.0, dim=1)  # exp(x - max): a temporary
    y.sum().backward()
    s = memory._snapshot()
    memory._record_memory_history(None)
    temps = [e for e in s["device_traces"][0]
             if e["category"] == "temporary" and e["action"] == "alloc"]
    assert temps and max(e["size"] for e in temps) >= 512 * 1024 * 4 // 2
    assert memory.memory_stats()["allocated_bytes.temporary.current"] == 0


def test_bad_arguments():
    with pytest.raises(ValueError, match="enabled"):
        memory._record_memory_history(enabled="everything")
    with pytest.raises(ValueError, match="context"):
        memory._record_memory_history(context="some")
    with pytest.raises(RuntimeError, match="tpu"):
        memory.memory_allocated("tpu:0")


def test_summary_and_stats_keys():
    retrograd.rand(10)
    s = memory.memory_stats()
    for k in ("allocated_bytes.all.current", "allocated_bytes.all.peak",
              "allocation.all.current", "reserved_bytes.all.current"):
        assert k in s
    table = memory.memory_summary()
    for name in memory.CATEGORIES:
        assert name in table
    assert retrograd.cuda.memory.memory_allocated() == memory.memory_allocated()


def test_numpy_views_and_foreign_buffers():
    arr = numpy.zeros(1000, dtype=numpy.float32)
    base = memory.memory_allocated()
    t = retrograd.from_numpy(arr[::2])  # a view of an array made outside retrograd
    assert memory.memory_allocated() - base == 4000
    del t



@pytest.mark.torch
def test_pytorch_memory_viz_tools_read_the_snapshot():
    """PyTorch's own snapshot tooling (torch.cuda._memory_viz) takes the snapshot as is."""
    pytest.importorskip("torch")
    from torch.cuda import _memory_viz as mv
    model = _mlp()
    memory._record_memory_history()
    model(retrograd.rand(32, 64)).sum().backward()
    s = memory._snapshot()
    n = len(s["device_traces"][0])
    assert f"{n} entries" in mv.trace(s)
    assert f"segments: {len(s['segments'])}" in mv.segsum(s)
    assert "<html" in mv.trace_plot(s).lower()


def test_optimizer_state_is_booked_as_such_from_its_first_byte():
    """Adam's first step makes its state: no byte of it is ever booked as other."""
    model = _mlp()
    opt = retrograd.optim.Adam(model.parameters())
    model(retrograd.rand(32, 64)).sum().backward()
    memory._record_memory_history()
    f = _foreign()
    opt.step()
    s = memory._snapshot()
    state_sizes = sorted(v._data.nbytes for st in opt.state.values() for v in st.values())
    allocs = sorted(e["size"] for e in s["device_traces"][0] if e["action"] == "alloc")
    assert allocs == state_sizes  # the step allocates its state and nothing else
    assert {e["category"] for e in s["device_traces"][0]} == {"optimizer_state"}
    assert not s["category_changes"][0]
    assert _cat("optimizer_state") - f["optimizer_state"] == sum(state_sizes)


def test_sgd_momentum_buffer_is_optimizer_state_from_its_allocation():
    model = _mlp()
    opt = retrograd.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    model(retrograd.rand(32, 64)).sum().backward()
    memory._record_memory_history()
    opt.step()
    s = memory._snapshot()
    bufs = {id(st["momentum_buffer"]._data) for st in opt.state.values()}
    allocs = [e for e in s["device_traces"][0] if e["action"] == "alloc"]
    assert {e["addr"] for e in allocs} == bufs
    assert {e["category"] for e in allocs} == {"optimizer_state"}


def test_history_with_a_custom_function_at_module_level(tmp_path):
    """A node made near the top of the stack (a Function applied by a script's top level)
    still gets a stack: no frame lookup may run past the bottom of the stack."""
    import subprocess
    import sys
    script = tmp_path / "top.py"
    script.write_text(
        "import retrograd as torch\n"
        "class F(torch.autograd.Function):\n"
        "    @staticmethod\n"
        "    def forward(ctx, x):\n"
        "        return x * 2\n"
        "    @staticmethod\n"
        "    def backward(ctx, g):\n"
        "        return g * 2\n"
        "torch.memory._record_memory_history()\n"
        "x = torch.rand(3, requires_grad=True)\n"
        "F.apply(x).sum().backward()\n"
        "print(x.grad.tolist())\n")
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[2.0, 2.0, 2.0]"


@pytest.mark.parametrize("fused", [False, True])
def test_replayed_history_agrees_with_the_live_books(fused):
    """Two computations of the same thing: the viewer's replay of the recorded trace
    (allocs, frees, category changes, segments alive before) and the tracker's running
    books must give the same peak and the same breakdown at it."""
    from retrograd.memory import viz
    model = _mlp()
    opt = retrograd.optim.Adam(model.parameters())
    handle = retrograd.optim.fuse_into_backward(opt) if fused else None
    memory._record_memory_history(clear_history=True)
    memory.reset_peak_memory_stats()
    for _ in range(3):
        x = retrograd.rand(32, 64)
        model(x).sum().backward()
        opt.step()
        opt.zero_grad()
    s = memory._snapshot()
    stats = memory.memory_stats()
    if handle is not None:
        handle.remove()
    peak = viz.timeline(s)["peak"]
    assert peak["bytes"] == stats["allocated_bytes.all.peak"] == memory.max_memory_allocated()
    for name in memory.CATEGORIES:
        assert peak["breakdown"].get(name, 0) == stats[f"allocated_bytes.{name}.at_peak"], name


@pytest.mark.parametrize("history", [False, True])
def test_backward_through_a_0d_product_with_a_python_number(history):
    """``0-d grad * 0.5`` is a NumPy scalar, not an array: the books skip it (it was an
    AttributeError in backward whenever accounting was on) and count the ``.grad`` it fills."""
    if history:
        memory._record_memory_history()
    x = retrograd.randn(3, 4, requires_grad=True)
    ((x.sum() * 0.5) * 0.25).backward()
    assert x.grad.tolist() == [[0.125] * 4] * 3
    assert _cat("gradient") == x.grad._data.nbytes
