"""``python -m retrograd demo`` on the small ViT: files, table, and the saving it claims."""

import pickle

from retrograd import demo
from retrograd.memory import viz


def test_demo_writes_snapshots_report_and_the_peak_table(tmp_path, capsys):
    assert demo.main(["--model", "vit_tiny", "--steps", "2", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "peak memory by category" in out and "fusing saved" in out
    snaps = []
    for name in ("snapshot.pickle", "snapshot-opt-in-bwd.pickle"):
        with open(tmp_path / name, "rb") as f:
            snaps.append(pickle.load(f))
    html = (tmp_path / "memory-report.html").read_text()
    assert "optimizer fused into backward" in html
    timelines = [viz.timeline(s) for s in snaps]
    usual, fused = (tl["peak"] for tl in timelines)
    # Gradients other tests left alive in this worker, there from the start and constant.
    tl = timelines[1]
    foreign = int(tl["bytes"][list(tl["categories"]).index("gradient"), 0])
    # Fused: no gradient of the demo's model is alive at the peak, and the peak is lower
    # by the gradient bytes less the activations the new peak holds.
    assert fused["breakdown"]["gradient"] == foreign
    assert usual["breakdown"]["gradient"] > foreign
    saved = usual["bytes"] - fused["bytes"]
    assert saved >= (usual["breakdown"]["gradient"] - foreign
                     - fused["breakdown"]["activation"] - 4096)
    assert saved > 0
    from retrograd import _observe
    assert _observe.alloc is None  # the demo leaves accounting off behind it


def test_main_entry_point_dispatches(capsys):
    from retrograd.__main__ import main
    assert main([]) == 0
    assert "demo" in capsys.readouterr().out
    assert main(["nonsense"]) == 2


def test_demo_exact_mode_adds_the_temporary_row(tmp_path, capsys):
    assert demo.main(["--model", "vit_tiny", "--steps", "1", "--exact", "--out",
                      str(tmp_path)]) == 0
    assert "  temporary " in capsys.readouterr().out
