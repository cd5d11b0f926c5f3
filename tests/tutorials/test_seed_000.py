"""Seed 000, PyTorch's "fusing the optimizer step into the backward pass" tutorial, run
with retrograd.

The code blocks are parsed from the seed file itself (its ``.. code-block:: default``
sections), with ``import torch`` meaning ``import retrograd as torch``. What cannot run
here, and why:

- the first block downloads torchvision's ViT-L/16 weights onto a CUDA GPU: its
  torchvision lines are dropped and ``model`` is given instead, a small patch-embedding
  model (a 16x16 stride-16 convolution, as ViT's, then a linear head); the rest of the
  block (``optimizer = torch.optim.Adam(model.parameters())``) runs;
- ``.cuda()`` calls are dropped: retrograd has no CUDA backend, the blocks run on the CPU;

Everything else runs as the seed writes it: the model's forward, the per-parameter
optimizer dict, the post-accumulate-grad hooks, both ``train`` functions and the two
memory-snapshot blocks (``torch.cuda.memory._record_memory_history`` / ``_snapshot``,
pickled to ``snapshot.pickle`` and ``snapshot-opt-in-bwd.pickle``). The fused training
must give the same parameters as the usual loop, and the snapshots must show what the
tutorial says: no gradient memory left alive with the optimizer fused into backward.
"""

import pickle
import re

import numpy
import pytest

import retrograd
from _seeds import code_blocks, seed_path

SEED_NAME = "000_038e2e05220164a4.txt"
SEED = seed_path(SEED_NAME)
_MEMORY_API = "torch.cuda.memory."


def _blocks(text):
    return [code for _, code, _ in code_blocks(text)]


def _as_retrograd(code):
    code = re.sub(r"^import torch$", "import retrograd as torch", code, flags=re.M)
    return code.replace(".cuda()", "")


def _setup(code):
    """The first block without its torchvision lines (the model is given instead)."""
    return _as_retrograd("\n".join(x for x in code.splitlines() if "torchvision" not in x
                                   and "models.vit_l_16" not in x))


def _small_model():
    nn = retrograd.nn
    return nn.Sequential(nn.Conv2d(3, 8, 16, stride=16), nn.GELU(), nn.Flatten(),
                         nn.Linear(8 * 14 * 14, 10))


BLOCKS = _blocks(SEED.read_text()) if SEED is not None else []


@pytest.fixture
def blocks():
    if SEED is None:
        pytest.skip(f"seed {SEED_NAME} not found")
    return BLOCKS


def test_seed_has_the_expected_blocks(blocks):
    assert len(blocks) == 5
    assert "models.vit_l_16" in blocks[0]
    assert "optimizer = torch.optim.Adam(model.parameters())" in _setup(blocks[0])
    assert [_MEMORY_API in b for b in blocks] == [False, False, True, False, True]
    assert "register_post_accumulate_grad_hook" in blocks[3]


def _run_usual_and_fused(blocks, steps=3):
    """Run the seed's blocks on two equal small models: ``ns_ref`` stops after the usual
    ``train(model, optimizer)`` block, ``ns`` goes on to the fused block."""
    namespaces = []
    for _ in range(2):
        retrograd.manual_seed(0)
        ns = {"model": _small_model()}
        exec(compile(_setup(blocks[0]), f"{SEED_NAME}:setup", "exec"), ns)
        exec(compile(_as_retrograd(blocks[1]), f"{SEED_NAME}:train", "exec"), ns)
        namespaces.append(ns)
    ns_ref, ns = namespaces
    usual_train = ns["train"]
    exec(compile(_as_retrograd(blocks[3]), f"{SEED_NAME}:fused", "exec"), ns)
    assert ns["train"] is not usual_train
    assert ns["IMAGE_SIZE"] == 224
    for i in range(steps):  # the skipped snapshot blocks' loops: train 3 steps
        retrograd.manual_seed(100 + i)  # the same fake images on both sides
        ns_ref["train"](ns_ref["model"], ns_ref["optimizer"])
        retrograd.manual_seed(100 + i)
        ns["train"](ns["model"])
    return ns_ref, ns


def test_fused_training_matches_the_usual_loop(blocks):
    ns_ref, ns = _run_usual_and_fused(blocks)
    model, ref = ns["model"], ns_ref["model"]
    assert len(ns["optimizer_dict"]) == len(list(model.parameters())) == 4
    for p, q in zip(model.parameters(), ref.parameters(), strict=True):
        assert p.grad is None and q.grad is None
        numpy.testing.assert_array_equal(p.detach().numpy(), q.detach().numpy())
    # Each per-parameter Adam holds the state of its parameter only.
    for p, opt in ns["optimizer_dict"].items():
        assert list(opt.state) == [p] and int(opt.state[p]["step"]) == 3


def test_the_parameters_did_train(blocks):
    retrograd.manual_seed(0)
    initial = [p.detach().clone() for p in _small_model().parameters()]
    _, ns = _run_usual_and_fused(blocks, steps=1)
    for p, p0 in zip(ns["model"].parameters(), initial, strict=True):
        assert not numpy.array_equal(p.detach().numpy(), p0.numpy())


def _gradient_bytes_at_peak(snapshot):
    from retrograd.memory import viz
    return viz.timeline(snapshot)["peak"]["breakdown"].get("gradient", 0)


def test_the_whole_seed_runs_with_its_memory_snapshots(blocks, tmp_path, monkeypatch):
    """All five blocks in order, as the tutorial runs them."""
    monkeypatch.chdir(tmp_path)
    retrograd.manual_seed(0)
    ns = {"model": _small_model()}
    try:
        for i, code in enumerate(blocks):
            code = _setup(code) if i == 0 else _as_retrograd(code)
            exec(compile(code, f"{SEED_NAME}:block{i}", "exec"), ns)
    finally:
        retrograd.memory._record_memory_history(None)
        retrograd.memory.stop_accounting()
    with open("snapshot.pickle", "rb") as f:
        usual = pickle.load(f)
    with open("snapshot-opt-in-bwd.pickle", "rb") as f:
        fused = pickle.load(f)
    params = list(ns["model"].parameters())
    P = sum(p._data.nbytes for p in params)
    largest = max(p._data.nbytes for p in params)
    # The usual loop's peak has (nearly) every gradient alive; fused, at most one is.
    assert _gradient_bytes_at_peak(usual) >= P - largest
    assert _gradient_bytes_at_peak(fused) <= largest
    for snap in (usual, fused):
        assert snap["device_traces"][0] and snap["segments"]
