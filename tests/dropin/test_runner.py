"""``python -m retrograd run``: scripts run unchanged, as ``python script.py`` runs them.

Each test starts a subprocess (``python_run``, tests/conftest.py): the runner installs an
import hook and replaces ``__main__``, which the test process must keep.
"""

import signal
import textwrap
from pathlib import Path

import pytest

import retrograd
import retrograd.__main__
from retrograd import _runner

SCRIPTS = sorted((Path(__file__).parent / "scripts").glob("*.py"))
RUN = ("-m", "retrograd", "run")


def _write(path, code):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(code))
    return path


_CPU_BUILD_SCRIPTS = ("boilerplate", "imports")  # they assert the CPU-only build


@pytest.mark.parametrize("script", [
    pytest.param(s, marks=pytest.mark.cpu_build) if s.stem in _CPU_BUILD_SCRIPTS else s
    for s in SCRIPTS], ids=[s.stem for s in SCRIPTS])
def test_every_script_in_the_scripts_folder_runs(script, python_run, tmp_path):
    """The plain ``import torch`` scripts beside this file (their asserts are the test)."""
    r = python_run(*RUN, script, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr


_INTROSPECT = """\
    import os, sys
    print(sys.argv)
    print(__name__, __file__, __package__, __spec__, type(__loader__).__name__)
    print(sorted(k for k in globals() if k.startswith("__")))
    print(sys.path[0] == os.path.dirname(os.path.realpath(__file__)))
    print(sys.modules["__main__"].__dict__ is globals())
    class Point:
        pass
    import pickle
    print(type(pickle.loads(pickle.dumps(Point()))) is Point)
    if __name__ == "__main__":
        print("main block")
"""


def test_the_script_sees_what_python_script_py_gives_it(python_run, tmp_path):
    _write(tmp_path / "sub" / "introspect.py", _INTROSPECT)
    args = ("sub/introspect.py", "a", "--flag", "-h")
    python = python_run(*args, cwd=tmp_path)
    runner = python_run(*RUN, *args, cwd=tmp_path)
    assert python.returncode == runner.returncode == 0, runner.stderr
    assert runner.stdout == python.stdout
    assert "['sub/introspect.py', 'a', '--flag', '-h']" in runner.stdout
    assert runner.stdout.endswith("True\nTrue\nTrue\nmain block\n")


_ENDINGS = {
    "exit_status": "import sys\nprint('partial output')\nsys.exit(3)\n",
    "traceback": "def f(x):\n    try:\n        {}[x]\n    except KeyError as e:\n"
                 "        raise ValueError('bad') from e\n\ndef g():\n    f(0)\n\ng()\n",
    "syntax_error": "x = 1\ndef (\n",
    "keyboard_interrupt": "import atexit\natexit.register(print, 'atexit ran')\n"
                          "raise KeyboardInterrupt\n",
}


@pytest.mark.parametrize("ending", list(_ENDINGS))
def test_exit_status_output_and_traceback_are_pythons(ending, python_run, tmp_path):
    script = _write(tmp_path / f"ends_{ending}.py", _ENDINGS[ending])
    python = python_run(script, cwd=tmp_path)
    runner = python_run(*RUN, script, cwd=tmp_path)
    assert (runner.returncode, runner.stdout, runner.stderr) == \
        (python.returncode, python.stdout, python.stderr)
    if ending == "keyboard_interrupt":
        assert runner.returncode == -signal.SIGINT and runner.stdout == "atexit ran\n"


def test_a_missing_script_is_reported_as_python_reports_it(python_run, tmp_path):
    python = python_run("nope.py", cwd=tmp_path)
    runner = python_run(*RUN, "nope.py", cwd=tmp_path)
    assert runner.returncode == python.returncode == 2
    assert runner.stderr == python.stderr and "can't open file" in runner.stderr


@pytest.mark.parametrize("argv, message", [
    ((), "no script given"),
    (("--fast", "x.py"), "unknown option '--fast'"),
    (("--device-map",), "--device-map needs a value"),
    (("--device-map", "cuda", "x.py"), "--device-map expects SRC=DST (e.g. cuda=cpu), got 'cuda'"),
    (("--device-map=cuda=cpu,", "x.py"), "got ''"),
])
def test_usage_errors(argv, message, capsys):
    assert _runner.main(list(argv)) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("usage: python -m retrograd run") and message in err


def test_help(capsys):
    assert _runner.main(["-h"]) == 0 and retrograd.__main__.main(["--help"]) == 0
    out = capsys.readouterr().out
    assert "--device-map SRC=DST" in out and "--random-weights" in out and "  run  " in out


def test_a_refused_device_map_is_a_usage_error(python_run, tmp_path):
    r = python_run(*RUN, "--device-map", "cpu=cuda", "x.py", cwd=tmp_path)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.startswith("usage: python -m retrograd run") and "--device-map: " in r.stderr


_GPU_SCRIPT = """\
    import torch
    from torch import nn
    x = torch.ones(2, 3).cuda()
    y = torch.zeros(3, device="cuda") + torch.randn(3).to("cuda:0") + torch.ones(3).cuda(0)
    model = nn.Linear(3, 2).to(torch.device("cuda"))
    torch.save(model.state_dict(), "w.pt")
    state = torch.load("w.pt", map_location="cuda")
    print(x.device, y.device, model.weight.device, state["weight"].device, model(x).shape)
"""


def _cpu_only_error():
    """What ``.cuda()`` raises on this build without a device map ('Type: message')."""
    with pytest.raises(Exception) as e:  # noqa: B017 (the type is what is being read)
        retrograd.ones(1).cuda()
    return f"{type(e.value).__name__}: {e.value}"


@pytest.mark.cpu_build
def test_without_a_device_map_cuda_fails_as_on_a_cpu_build(python_run, tmp_path):
    script = _write(tmp_path / "gpu.py", _GPU_SCRIPT)
    r = python_run(*RUN, script, cwd=tmp_path)
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr.rstrip().endswith(_cpu_only_error())
    assert "x = torch.ones(2, 3).cuda()" in r.stderr


def test_device_map_runs_a_gpu_script_on_the_cpu_and_says_so_once(python_run, tmp_path):
    script = _write(tmp_path / "gpu.py", _GPU_SCRIPT)
    r = python_run(*RUN, "--device-map", "cuda=cpu", script, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "cpu cpu cpu cpu torch.Size([2, 2])\n"
    assert r.stderr == ("retrograd: device 'cuda' runs on 'cpu' (device map cuda=cpu); this "
                        "machine has no cuda backend\n")


_WEIGHTS_SCRIPT = """\
    import warnings
    import torch
    import torchvision
    from torchvision.models import resnet18, ResNet18_Weights
    a = resnet18(weights=ResNet18_Weights.DEFAULT)
    b = torchvision.models.resnet18(weights="IMAGENET1K_V1")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        c = resnet18(pretrained=True)
    print(len(caught), type(a).__name__, type(c).__name__)
"""


def test_pretrained_weights_fail_offline_without_the_flag(python_run, tmp_path):
    script = _write(tmp_path / "weights.py", _WEIGHTS_SCRIPT)
    r = python_run(*RUN, script, cwd=tmp_path)
    assert r.returncode == 1
    assert "ValueError: weights=ResNet18_Weights.IMAGENET1K_V1 is not a local checkpoint" \
        in r.stderr and "--random-weights" in r.stderr


def test_random_weights_stand_in_for_pretrained_ones_and_say_so_once(python_run, tmp_path):
    script = _write(tmp_path / "weights.py", _WEIGHTS_SCRIPT)
    r = python_run(*RUN, "--random-weights", script, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "2 ResNet ResNet\n"  # pretrained=True: torchvision's two warnings
    assert r.stderr == ("retrograd: ResNet asked for pretrained weights=ResNet18_Weights."
                        "IMAGENET1K_V1: keeping its random initialisation instead (random "
                        "weights; nothing is downloaded)\n")
