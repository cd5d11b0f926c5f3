"""The memory books per device: storages on the GPU (here the emulated one, which books
its arrays as a GPU's) count toward ``memory_allocated("cuda")`` and not the CPU's, each
device keeps its own peak, and the demo runs on the device."""

import pytest

import retrograd
from retrograd import backend, memory


@pytest.fixture
def cuda():
    prev = backend.emulate_cuda(True)
    try:
        yield
    finally:
        backend.emulate_cuda(prev)


def test_each_device_books_its_own_storages_and_peak(cuda):
    cpu0, gpu0 = memory.memory_allocated("cpu"), memory.memory_allocated("cuda")
    memory.reset_peak_memory_stats()
    w = retrograd.zeros(1024, 64, device="cuda")  # 256 KiB on the device
    view = w[:10]  # a view: no new storage
    h = retrograd.zeros(256)  # 1 KiB on the host
    assert memory.memory_allocated("cuda") - gpu0 == 1024 * 64 * 4
    assert memory.memory_allocated("cpu") - cpu0 == 256 * 4
    stats = memory.memory_stats("cuda")
    assert stats["allocated_bytes.all.current"] == memory.memory_allocated("cuda")
    del w, view
    assert memory.memory_allocated("cuda") == gpu0
    assert memory.max_memory_allocated("cuda") - gpu0 == 1024 * 64 * 4
    assert memory.max_memory_allocated("cpu") - cpu0 >= 256 * 4
    assert memory.memory_reserved("cuda") >= memory.memory_allocated("cuda")  # its pool
    memory.reset_peak_memory_stats()
    assert memory.max_memory_allocated("cuda") == gpu0
    assert memory.max_memory_allocated("cpu") == memory.memory_allocated("cpu")
    del h


def test_a_training_step_on_the_device_books_its_gradients_there(cuda):
    model = retrograd.nn.Linear(128, 64).cuda()
    opt = retrograd.optim.SGD(model.parameters(), lr=0.1)
    memory.reset_peak_memory_stats()
    base = memory.memory_allocated("cuda")
    model(retrograd.randn(8, 128, device="cuda")).sum().backward()
    grads = sum(p.grad.nbytes for p in model.parameters())
    assert memory.memory_allocated("cuda") - base >= grads
    assert memory.memory_stats("cuda")["allocated_bytes.gradient.current"] == grads
    opt.step()


def test_the_demo_runs_on_the_device(cuda, tmp_path, capsys):
    from retrograd import demo
    assert demo.main(["--model", "vit_tiny", "--steps", "1", "--device", "cuda",
                      "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "on cuda:0" in out and "fusing saved" in out
    assert (tmp_path / "snapshot-opt-in-bwd.pickle").exists()


@pytest.mark.cpu_build
def test_the_demo_refuses_cuda_without_a_gpu(capsys):
    from retrograd import demo
    with pytest.raises(SystemExit):
        demo.main(["--device", "cuda"])
    assert "--device cuda needs a GPU" in capsys.readouterr().err


def _category_sums(stats, kind):
    return sum(v for k, v in stats.items()
               if k.startswith("allocated_bytes.") and k.endswith(f".{kind}")
               and not k.startswith("allocated_bytes.all."))


def test_each_devices_categories_and_modules_are_its_own(cuda):
    memory.reset_peak_memory_stats()
    model = retrograd.nn.Linear(64, 32).to("cuda:1")
    weights = sum(p.nbytes for p in model.parameters())
    host = retrograd.ones(4096)  # 16 KiB on the host
    x = retrograd.randn(16, 64, device="cuda:1")
    model(x).square().sum().backward()  # device 0 current: every byte is device 1's
    grads = sum(p.grad.nbytes for p in model.parameters())
    on0, on1, cpu = (memory.memory_stats(d) for d in ("cuda:0", "cuda:1", "cpu"))
    for stats in (on0, on1, cpu):  # the categories split the device's own bytes
        assert _category_sums(stats, "current") == stats["allocated_bytes.all.current"]
        assert _category_sums(stats, "at_peak") == stats["allocated_bytes.all.peak"]
    assert on1["allocated_bytes.parameter.current"] == weights
    assert on1["allocated_bytes.gradient.current"] == grads
    assert on0["allocated_bytes.parameter.current"] == 0
    assert on0["allocated_bytes.gradient.current"] == 0
    assert cpu["allocated_bytes.parameter.current"] == 0
    assert cpu["allocated_bytes.other.current"] >= host.nbytes
    assert on1["by_module"]["Linear"]["current"]["parameter"] == weights
    assert "Linear" not in on0["by_module"] and "Linear" not in cpu["by_module"]
    assert on1["allocation.all.current"] >= 4  # weight, bias and their gradients
    assert on0["allocation.all.current"] + on1["allocation.all.current"] + \
        cpu["allocation.all.current"] == len(memory.TRACKER.live)


def test_a_devices_peak_tables_are_taken_at_its_own_peak(cuda):
    memory.reset_peak_memory_stats()
    base1 = memory.memory_allocated("cuda:1")
    w = retrograd.randn(256, 256, device="cuda:1", requires_grad=True)  # 256 KiB
    act = (w * 2).tanh()  # its output is saved: an activation at device 1's peak
    del act  # the graph and its activation go
    host = retrograd.zeros(2**20)  # 4 MiB on the host, after device 1's peak
    on1 = memory.memory_stats("cuda:1")
    assert on1["allocated_bytes.all.peak"] == base1 + 3 * w.nbytes  # w, w * 2, act
    assert on1["allocated_bytes.activation.at_peak"] >= w.nbytes
    assert on1["allocated_bytes.activation.current"] == 0
    assert _category_sums(on1, "at_peak") == on1["allocated_bytes.all.peak"]
    cpu = memory.memory_stats("cpu")
    assert cpu["allocated_bytes.activation.at_peak"] == 0  # the host's peak is the zeros'
    assert cpu["allocated_bytes.other.at_peak"] >= host.nbytes
    del host
