"""``torch.random`` (``retrograd.random``): the default generator's functions, as the
root's, and ``fork_rng``, compared with PyTorch's."""

import inspect

import pytest

import retrograd
import retrograd.random


def test_random_module_names_are_the_roots():
    for name in ("manual_seed", "seed", "initial_seed", "get_rng_state", "set_rng_state",
                 "default_generator", "Generator"):
        assert getattr(retrograd.random, name) is getattr(retrograd, name), name
    assert retrograd.random.manual_seed(5) is retrograd.default_generator
    assert retrograd.random.initial_seed() == 5


@pytest.mark.torch
def test_fork_rng_signature_matches_torch(torch):
    params = inspect.signature(torch.random.fork_rng).parameters
    assert inspect.signature(retrograd.random.fork_rng).parameters == params


def test_fork_rng_restores_the_cpu_state():
    before = retrograd.get_rng_state()
    with retrograd.random.fork_rng():
        inside = retrograd.rand(4)
        retrograd.manual_seed(123)
        retrograd.rand(2)
    assert retrograd.equal(retrograd.get_rng_state(), before)
    assert retrograd.equal(retrograd.rand(4), inside)


def test_fork_rng_disabled_or_on_meta_leaves_the_draws():
    for kw in ({"enabled": False}, {"device_type": "meta"}):
        retrograd.manual_seed(0)
        with retrograd.random.fork_rng(**kw):
            first = retrograd.rand(3)
        assert not retrograd.equal(retrograd.rand(3), first)


@pytest.mark.torch
def test_fork_rng_unknown_device_type_raises_as_torch(torch):
    def enter(m):
        with m.random.fork_rng(device_type="foo"):
            pass
    with pytest.raises(RuntimeError) as t:
        enter(torch)
    with pytest.raises(RuntimeError) as r:
        enter(retrograd)
    assert str(r.value) == str(t.value)


def test_fork_rng_restores_emulated_cuda_devices(emulated_cuda):
    before = retrograd.cuda.get_rng_state(0)
    with retrograd.random.fork_rng(devices=iter([0])):  # a generator is read once
        retrograd.rand(5, device="cuda")
    assert retrograd.equal(retrograd.cuda.get_rng_state(0), before)


def test_torch_random_imports_under_the_runner(python_run, tmp_path):
    script = tmp_path / "s.py"
    script.write_text("import torch.random\nfrom torch.random import fork_rng\n"
                      "with fork_rng(devices=[]):\n    a = torch.rand(2)\n"
                      "print(torch.equal(a, torch.rand(2)), torch.random.__name__, torch.pi)\n")
    res = python_run("-m", "retrograd", "run", script)
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["True", "retrograd.random", "3.141592653589793"]
