"""Work on a GPU that is not the current one, on the emulated devices (two GPUs): the
memory pool asked is the named device's, the pinned offload copies on the tensor's device,
an optimizer step (the fused Adam kernel included) runs with each parameter's device
current, and backward runs each node with its device current, as PyTorch's engine does."""

import numpy
import pytest

import retrograd
from retrograd.backend import emulated
from retrograd.backend.functions import functions

cuda = retrograd.cuda


pytestmark = pytest.mark.usefixtures("emulated_cuda")


def test_memory_reserved_reads_the_named_devices_pool():
    cuda.empty_cache()
    r0, r1 = cuda.memory_reserved(0), cuda.memory_reserved(1)
    x = retrograd.empty(2**18, device="cuda:1")  # 1 MiB on device 1, device 0 current
    assert cuda.memory_reserved(1) >= r1 + 2**20
    assert cuda.memory_reserved("cuda:1") == cuda.memory_reserved(1)
    assert cuda.memory_reserved(0) == r0 and cuda.memory_reserved() == r0
    assert cuda.max_memory_reserved(1) >= r1 + 2**20
    assert cuda.memory_stats(1)["reserved_bytes.all.current"] == cuda.memory_reserved(1)
    del x
    cuda.empty_cache()  # every device's cached blocks
    assert cuda.memory_reserved(1) == r1
    assert retrograd.accelerator.memory_reserved(1) == r1


def _offloaded_step(device):
    g = retrograd.Generator().manual_seed(0)
    x = retrograd.randn(4, 5, generator=g).to(device).requires_grad_()
    w = retrograd.randn(5, 3, generator=g).to(device).requires_grad_()
    hooks = retrograd.autograd.graph.save_on_cpu(pin_memory=True)
    with hooks:
        loss = ((x @ w).tanh() * x.sum(1, keepdim=True)).sum()
    loss.backward()
    return hooks, x.grad, w.grad


def test_pinned_offload_copies_on_the_tensors_device():
    _, *want = _offloaded_step("cpu")
    hooks, *got = _offloaded_step("cuda:1")  # device 0 stays current
    offload = hooks._offload
    assert offload is not None and offload.packed  # the pinned path ran
    assert list(offload.streams) == [1] and offload.streams[1].device_id == 1
    assert cuda.current_device() == 0
    for a, b in zip(got, want, strict=True):
        assert a.device == retrograd.device("cuda", 1)
        # (the CPU's compiled float32 sums add in float64, the emulated device's NumPy
        # ones in float32: a few ulps apart where they nearly cancel)
        numpy.testing.assert_allclose(a.cpu().numpy(), b.numpy(), rtol=1e-6, atol=1e-6)


def test_fused_adam_step_runs_on_the_parameters_device(monkeypatch):
    """A fused kernel (here one that notes the device it was launched on) runs with its
    parameter's device current; the unfused chain elsewhere, for every optimizer."""
    seen = []

    def kernel(p, g, m, v, **kwargs):
        seen.append((emulated.current(), p.device.id))

    monkeypatch.setattr(type(functions(emulated.namespace)), "fused_adam", staticmethod(kernel))
    p0 = retrograd.zeros(3, device="cuda:0", requires_grad=True)
    p1 = retrograd.zeros(3, device="cuda:1", requires_grad=True)
    opt = retrograd.optim.Adam([p0, p1], lr=0.1)
    (p0.sum() + p1.sum().to("cuda:0")).backward()
    opt.step()
    assert seen == [(0, 0), (1, 1)] and cuda.current_device() == 0


class _Spy(retrograd.autograd.Function):
    """The identity, noting the current device when its backward runs."""

    seen = []

    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, grad):
        _Spy.seen.append((cuda.current_device(), grad.device.index))
        return grad


def test_backward_runs_each_node_with_its_device_current():
    _Spy.seen = []
    a = retrograd.ones(3, device="cuda:1", requires_grad=True)
    b = retrograd.ones(3, device="cuda:0", requires_grad=True)
    loss = _Spy.apply(a).sum().to("cuda:0") + _Spy.apply(b).sum()  # the root on device 0
    loss.backward()
    assert sorted(_Spy.seen) == [(0, 0), (1, 1)]
    assert cuda.current_device() == 0
    assert a.grad.device.index == 1 and a.grad.cpu().tolist() == [1.0, 1.0, 1.0]
    _Spy.seen = []
    with cuda.device(1):  # the root on device 1, device 1 current
        (_Spy.apply(b).sum().to("cuda:1") * 2).backward()
    assert _Spy.seen == [(0, 0)] and cuda.current_device() == 0


def test_memory_allocated_books_each_device_apart():
    base0, base1 = cuda.memory_allocated(0), cuda.memory_allocated(1)
    cuda.reset_peak_memory_stats(1)
    x = retrograd.zeros(256, device="cuda:1")  # 1 KiB on device 1, device 0 current
    assert cuda.memory_allocated(1) - base1 == 1024 and cuda.memory_allocated(0) == base0
    assert cuda.memory_allocated() == base0 and cuda.memory_allocated("cuda:1") == base1 + 1024
    assert cuda.memory_stats(1)["allocated_bytes.all.current"] == base1 + 1024
    del x
    assert cuda.memory_allocated(1) == base1
    assert cuda.max_memory_allocated(1) == base1 + 1024
    assert cuda.max_memory_allocated(0) >= base0
    cuda.reset_peak_memory_stats(1)
    assert cuda.max_memory_allocated(1) == base1
