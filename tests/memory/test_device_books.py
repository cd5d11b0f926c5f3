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
