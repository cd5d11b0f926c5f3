"""Ops on a device that is not the current one run there (PyTorch's device guard): the
emulator, as CuPy, allocates and launches on its current device and refuses arrays of
another, so each op makes its input's device current, and backward each node's."""

import numpy
import pytest

import retrograd
from device.emulated_run import emulating


def _pool_step(device):
    g = retrograd.Generator().manual_seed(0)
    x = retrograd.randn(1, 2, 4, 4, generator=g).to(device).requires_grad_()
    y = retrograd.nn.functional.avg_pool2d(x * 2, 2)
    (y * y).sum().backward()
    return y, x.grad


def _train_step(device):
    retrograd.manual_seed(0)
    model = retrograd.nn.Sequential(retrograd.nn.Linear(4, 3), retrograd.nn.ReLU(),
                                    retrograd.nn.Linear(3, 1)).to(device)
    opt = retrograd.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x = retrograd.arange(8.0).reshape(2, 4).to(device)
    for _ in range(2):
        opt.zero_grad()
        model(x).pow(2).mean().backward()
        opt.step()
    return list(model.parameters())


@pytest.mark.parametrize("step", [_pool_step, _train_step], ids=["pool", "train"])
def test_ops_on_a_device_that_is_not_current_run_there(step):
    want = step("cpu")
    with emulating():
        assert retrograd.backend.emulated.current() == 0
        got = step("cuda:1")
        assert retrograd.backend.emulated.current() == 0  # the guard restored it
    for a, b in zip(got, want, strict=True):
        assert a.device == retrograd.device("cuda", 1)
        numpy.testing.assert_allclose(a.detach().cpu().numpy(), b.detach().numpy(),
                                      rtol=1e-6, atol=1e-7)


def test_in_place_ops_run_on_their_tensors_device():
    with emulating():
        z = retrograd.zeros(3, device="cuda:1")
        z.fill_(2.0).mul_(retrograd.full((3,), 1.5, device="cuda:1"))
        assert z.device == retrograd.device("cuda", 1)
        assert z.cpu().tolist() == [3.0, 3.0, 3.0]
