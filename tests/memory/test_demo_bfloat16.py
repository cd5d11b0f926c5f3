"""``python -m retrograd demo --dtype bfloat16``: the runs in bfloat16 beside float32's."""

import pickle

import pytest

import retrograd
from retrograd import demo
from retrograd.memory import viz


def test_demo_in_bfloat16_halves_parameters_and_adam_state(tmp_path, capsys):
    assert demo.main(["--model", "vit_tiny", "--steps", "1", "--dtype", "bfloat16",
                      "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "usual, bfloat16" in out and "usual, float32" in out
    assert "bfloat16 saved" in out
    peaks = {}
    for name in ("snapshot.pickle", "snapshot-opt-in-bwd.pickle", "snapshot-float32.pickle"):
        with open(tmp_path / name, "rb") as f:
            peaks[name] = viz.timeline(pickle.load(f))["peak"]
    low, full = peaks["snapshot.pickle"], peaks["snapshot-float32.pickle"]
    numel = sum(p.numel() for p in retrograd.models.vit_tiny(weights=None).parameters())
    # Other tests' tensors alive in this worker are in both runs: the differences are the
    # model's own bytes, 4 per parameter in float32 and 2 in bfloat16 (Adam's two moments
    # each; its step counts are float32 0-d tensors in both).
    assert full["breakdown"]["parameter"] - low["breakdown"]["parameter"] == 2 * numel
    assert full["breakdown"]["optimizer_state"] - low["breakdown"]["optimizer_state"] \
        == 4 * numel
    assert low["bytes"] < full["bytes"]
    assert peaks["snapshot-opt-in-bwd.pickle"]["breakdown"]["gradient"] < \
        low["breakdown"]["gradient"]
    html = (tmp_path / "memory-report.html").read_text()
    assert "usual loop in float32" in html and "optimizer fused into backward in bfloat16" in html


def test_demo_refuses_an_unknown_dtype(capsys):
    with pytest.raises(SystemExit) as e:
        demo.main(["--dtype", "int8"])
    assert e.value.code == 2
    assert "invalid choice: 'int8'" in capsys.readouterr().err
