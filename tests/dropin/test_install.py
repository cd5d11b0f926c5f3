"""``retrograd.install_as_torch()``: ``torch`` names resolve to retrograd's modules.

The hook is process-wide, so what it does is checked in a subprocess; the test process
itself has the real PyTorch imported, which is what install_as_torch must refuse.
"""

import sys
import textwrap

import pytest

import retrograd
from retrograd import backend

_NOTEBOOK = """\
    import importlib, sys
    import retrograd
    retrograd.install_as_torch(device_map={"cuda": "cpu"})
    assert sys.modules["torch"] is retrograd
    import torch.nn.functional
    import torch.fft
    from torch.fft import rfft
    from torch.utils import data
    import torchvision.models.resnet
    assert torch.nn.functional is retrograd.nn.functional and data is retrograd.utils.data
    assert torch.fft is retrograd.fft and rfft is retrograd.fft.rfft
    assert sys.modules["torchvision.models.resnet"] is retrograd.models.resnet
    # the modules keep their own identity: name, spec, file
    for module in (retrograd, retrograd.nn.functional, retrograd.models.resnet):
        assert module.__spec__.name == module.__name__, module.__spec__
        assert importlib.util.find_spec(module.__name__) is module.__spec__
    assert importlib.util.find_spec("torch") is retrograd.__spec__
    assert importlib.util.find_spec("torch.no_such_module") is None
    retrograd.install_as_torch()  # again: nothing changes
    assert sys.meta_path.count(sys.meta_path[0]) == 1
    print(torch.ones(2, device="cuda").device, torch.__version__)
"""


def test_a_notebook_installs_it_first(python_run, tmp_path):
    r = python_run("-c", textwrap.dedent(_NOTEBOOK), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "cpu 2.13.0+retrograd.0.1.0\n"
    assert r.stderr.count("retrograd: device 'cuda' runs on 'cpu'") == 1


def test_it_refuses_once_the_real_torch_is_imported(torch):
    """Nothing changes: no hook, no device map."""
    assert sys.modules["torch"] is torch
    meta_path = list(sys.meta_path)
    with pytest.raises(RuntimeError, match="the real torch is already imported"):
        retrograd.install_as_torch(device_map={"cuda": "cpu"}, random_weights=True)
    assert sys.meta_path == meta_path and sys.modules["torch"] is torch
    assert backend._device_map == {}
    with pytest.raises(Exception):  # noqa: B017 (whatever a CPU-only build raises)
        retrograd.ones(1).cuda()


def test_a_device_map_is_checked_before_it_is_set():
    with pytest.raises(RuntimeError, match="device type at start of device string: gpu"):
        backend.set_device_map({"gpu": "cpu"})
    with pytest.raises((RuntimeError, AssertionError), match="(?i)cuda"):  # as .cuda() fails
        backend.set_device_map({"cpu": "cuda"})
    assert backend._device_map == {}
