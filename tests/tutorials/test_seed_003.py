"""Seed 003, PyTorch's "A Gentle Introduction to torch.autograd", run with retrograd.

The code blocks are parsed from the seed file itself (its ``.. code-block:: default``
sections) and run in order in one namespace with ``import torch`` meaning
``import retrograd as torch`` and torchvision's ``resnet18, ResNet18_Weights`` coming from
``retrograd.models``; what they print must equal the output the seed shows after them.
retrograd cannot download pretrained weights, so ``weights=ResNet18_Weights.DEFAULT`` is
replaced by ``weights=None`` (random initialisation: the tutorial only trains it one step
and then freezes it); the block whose shown output is torchvision's download log is
therefore not compared.
"""

import contextlib
import io
import re

import pytest
from _seeds import code_blocks, seed_path

SEED_NAME = "003_741c487edf251890.txt"
SEED = seed_path(SEED_NAME)

_TORCHVISION_IMPORT = "from torchvision.models import resnet18, ResNet18_Weights"
_PRETRAINED = "weights=ResNet18_Weights.DEFAULT"


def _as_retrograd(code):
    """The block with torch, torchvision and the pretrained weights mapped to retrograd."""
    code = re.sub(r"^import torch$", "import retrograd as torch", code, flags=re.M)
    code = re.sub(r"^from torch import ", "from retrograd import ", code, flags=re.M)
    code = code.replace(_TORCHVISION_IMPORT,
                        "from retrograd.models import resnet18, ResNet18_Weights")
    return code.replace(_PRETRAINED, "weights=None")


BLOCKS = code_blocks(SEED.read_text()) if SEED is not None else []


def _seed():
    if SEED is None:
        pytest.skip(f"seed {SEED_NAME} not found")


def test_seed_has_the_expected_blocks():
    _seed()
    codes = [b[1] for b in BLOCKS]
    assert len(BLOCKS) == 13 and sum(b[2] is not None for b in BLOCKS) == 3
    assert sum(_TORCHVISION_IMPORT in c for c in codes) == 1
    assert sum(_PRETRAINED in c for c in codes) == 2
    assert BLOCKS[0][2].startswith("Downloading: ")


def test_pretrained_weights_explain_that_downloads_are_unavailable():
    from retrograd.models import ResNet18_Weights, resnet18
    with pytest.raises(ValueError, match="cannot download pretrained weights"):
        resnet18(weights=ResNet18_Weights.DEFAULT)


def test_seed_runs_and_prints_what_the_seed_shows():
    _seed()
    namespace = {}
    checked = 0
    for line, code, expected in BLOCKS:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(_as_retrograd(code), f"{SEED_NAME}:{line}", "exec"), namespace)
            if line == 296:  # after the backward pass: remember the weights before the step
                before = namespace["model"].conv1.weight.detach().clone()
        if expected is not None and not expected.startswith("Downloading: "):
            assert out.getvalue().strip().splitlines() == expected.strip().splitlines(), \
                f"block at line {line}"
            checked += 1
    assert checked == 2
    ns = namespace
    assert ns["torch"].__name__ == "retrograd" and ns["nn"] is ns["torch"].nn
    assert ns["a"].requires_grad is False and ns["b"].requires_grad is True
    assert ns["prediction"].shape == (1, 1000) and ns["labels"].shape == (1, 1000)
    assert not bool((before == ns["model"].conv1.weight).all())  # the first model was stepped

    # The finetuning model: only the new classifier learns.
    model, optimizer = ns["model"], ns["optimizer"]
    assert model.fc.out_features == 10
    assert [n for n, p in model.named_parameters() if p.requires_grad] == \
        ["fc.weight", "fc.bias"]
    frozen = model.layer4[1].conv2.weight.detach().clone()
    fc = model.fc.weight.detach().clone()
    model(ns["data"]).sum().backward()
    optimizer.step()
    assert all(p.grad is None for n, p in model.named_parameters() if not n.startswith("fc."))
    assert bool((frozen == model.layer4[1].conv2.weight).all())
    assert not bool((fc == model.fc.weight).all())
