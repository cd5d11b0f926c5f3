"""``retrograd.cuda``'s current device on the emulated device (two GPUs), as PyTorch's on a
machine with two: ``set_device``, ``current_device``, ``cuda.device(i)``, where "cuda"
without an index allocates, and the current device being each thread's own."""

import threading

import pytest

import retrograd
from retrograd import backend
from retrograd.backend import emulated
from device.emulated_run import emulating

cuda = retrograd.cuda


pytestmark = pytest.mark.usefixtures("emulated_cuda")


def test_the_emulated_gpus_are_available():
    assert cuda.is_available() and cuda.is_initialized()
    assert cuda.device_count() == emulated.DEVICES == 2
    assert cuda.current_device() == 0


@pytest.mark.parametrize("device", [1, "cuda:1", retrograd.device("cuda", 1)])
def test_set_device_makes_it_current_for_new_tensors(device):
    cuda.set_device(device)
    assert cuda.current_device() == 1
    assert retrograd.ones(2, device="cuda").device == retrograd.device("cuda", 1)
    assert retrograd.ones(2).cuda().device == retrograd.device("cuda", 1)
    assert retrograd.device("cuda") == retrograd.device("cuda")  # (an index is not filled in)
    cuda.set_device(0)
    assert retrograd.ones(2, device="cuda").device == retrograd.device("cuda", 0)


def test_set_device_refusals_and_no_ops():
    cuda.set_device(-1)  # no device: nothing changes
    assert cuda.current_device() == 0
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        cuda.set_device(2)
    with pytest.raises(ValueError, match="Expected a cuda device, but got: cpu"):
        cuda.set_device("cpu")
    assert cuda.current_device() == 0


def test_device_context_selects_and_restores():
    with cuda.device(1):
        assert cuda.current_device() == 1
        assert retrograd.zeros(1, device="cuda").device.index == 1
        with cuda.device(0):
            assert cuda.current_device() == 0
        assert cuda.current_device() == 1
    assert cuda.current_device() == 0
    cuda.set_device(1)
    with cuda.device(0):
        assert cuda.current_device() == 0
    assert cuda.current_device() == 1


def test_each_thread_has_its_own_current_device():
    """CUDA's current device is per host thread: a new thread starts on device 0."""
    cuda.set_device(1)
    seen = []
    t = threading.Thread(target=lambda: seen.append(cuda.current_device()))
    t.start()
    t.join()
    assert seen == [0] and cuda.current_device() == 1


def test_without_emulation_the_current_device_needs_a_gpu():
    if backend.gpu.cupy() is not None:
        pytest.skip("a GPU is present")
    with emulating(False):
        assert not cuda.is_available() and cuda.device_count() == 0
        with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
            cuda.current_device()
        with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
            cuda.set_device(1)
