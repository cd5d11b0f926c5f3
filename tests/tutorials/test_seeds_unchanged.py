"""The three seed tutorials, unchanged, through ``python -m retrograd run``.

Each seed's ``.. code-block:: default`` sections are joined into one script, as the
tutorial's own .py file runs them, with no edits. What plain ``python`` prints must be
what the seed shows: the outputs of blocks that call ``print`` (sphinx-gallery also
shows a block's final expression and torchvision's download log, which a script does not
print); numbers drawn by ``randn`` are compared by format only.

- 002 (saved-tensor hooks) runs as it is;
- 003 (autograd tutorial) asks for ResNet-18's pretrained weights: ``--random-weights``;
- 000 (optimizer step in backward) puts ViT-L/16's pretrained weights on a GPU:
  ``--device-map cuda=cpu --random-weights``. ViT-L's training steps take minutes on a
  CPU, so the default run binds ``torchvision.models.vit_l_16`` to a two-block ViT of the
  same input and patch size (a driver script does that, then runs the unchanged seed);
  the real ViT-L/16 runs under ``-m slow``.
"""

import pickle
import re
import textwrap

import pytest

from _seeds import code_blocks, seed_path

RUN = ("-m", "retrograd", "run")


def _seed_script(name, tmp_path):
    """(the seed's blocks, the path of the script made of them)."""
    seed = seed_path(name)
    if seed is None:
        pytest.skip(f"seed {name} not found")
    blocks = code_blocks(seed.read_text())
    script = tmp_path / f"seed_{name[:3]}.py"
    script.write_text("\n\n".join(code for _, code, _ in blocks))
    return blocks, script


def _printed_by_the_seed(blocks):
    return "".join(shown for _, code, shown in blocks if shown is not None and "print(" in code)


def _masked(text):
    return re.sub(r" *-?\d+\.\d{4}", "N", text)


def test_seed_002_saved_tensor_hooks(python_run, tmp_path):
    blocks, script = _seed_script("002_7ce47280e1645c68.txt", tmp_path)
    r = python_run(*RUN, script, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""
    expected = _printed_by_the_seed(blocks)
    assert expected.count("\n") == 12
    assert _masked(r.stdout) == _masked(expected)


_WEIGHTS_NOTE = ("retrograd: {} asked for pretrained weights={}: keeping its random "
                 "initialisation instead (random weights; nothing is downloaded)\n")
_DEVICE_NOTE = ("retrograd: device 'cuda' runs on 'cpu' (device map cuda=cpu); this machine "
                "has no cuda backend\n")


def test_seed_003_autograd_tutorial(python_run, tmp_path):
    blocks, script = _seed_script("003_741c487edf251890.txt", tmp_path)
    r = python_run(*RUN, "--random-weights", script, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout == _printed_by_the_seed(blocks) == (
        "tensor([True, True])\ntensor([True, True])\n"
        "Does `a` require gradients? : False\nDoes `b` require gradients?: True\n")
    assert r.stderr == _WEIGHTS_NOTE.format("ResNet", "ResNet18_Weights.IMAGENET1K_V1")


_SMALL_VIT = """\
    import runpy
    import sys

    import torchvision.models
    from retrograd.models.vision_transformer import ViT_L_16_Weights, _vit

    def vit_l_16(*, weights=None, progress=True, **kwargs):
        return _vit(16, 2, 4, 64, 128, weights, ViT_L_16_Weights, kwargs)

    torchvision.models.vit_l_16 = vit_l_16
    del sys.argv[0]
    runpy.run_path(sys.argv[0], run_name="__main__")
"""


def _check_seed_000(r, tmp_path, largest_parameter):
    """It ran, said each flag's note once, and its two snapshots show what the tutorial
    says: the usual loop holds every gradient at once, the fused one at most one."""
    from retrograd.memory import viz
    assert r.returncode == 0, r.stderr
    assert r.stdout == ""
    assert r.stderr == _WEIGHTS_NOTE.format("VisionTransformer", "'DEFAULT'") + _DEVICE_NOTE
    most = []
    for name in ("snapshot.pickle", "snapshot-opt-in-bwd.pickle"):
        with open(tmp_path / name, "rb") as f:
            most.append(viz.timeline(pickle.load(f))["max_by_category"])
    usual, fused = most
    parameters = usual["parameter"]
    assert fused["parameter"] == parameters > 2 * largest_parameter
    assert usual["gradient"] == parameters
    assert 0 < fused["gradient"] <= largest_parameter


def test_seed_000_optimizer_in_backward_with_a_small_vit(python_run, tmp_path):
    _, script = _seed_script("000_038e2e05220164a4.txt", tmp_path)
    driver = tmp_path / "small_vit.py"
    driver.write_text(textwrap.dedent(_SMALL_VIT))
    r = python_run(*RUN, "--device-map", "cuda=cpu", "--random-weights", driver, script,
                   cwd=tmp_path)
    _check_seed_000(r, tmp_path, largest_parameter=1000 * 64 * 4)  # the head


@pytest.mark.slow
def test_seed_000_optimizer_in_backward_with_vit_l_16(python_run, tmp_path):
    _, script = _seed_script("000_038e2e05220164a4.txt", tmp_path)
    r = python_run(*RUN, "--device-map", "cuda=cpu", "--random-weights", script,
                   cwd=tmp_path, timeout=3600)
    _check_seed_000(r, tmp_path, largest_parameter=4096 * 1024 * 4)  # an MLP weight
