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
    usual, fused = (viz.timeline(s)["peak"] for s in snaps)
    # Fused: no gradient is alive at the peak, and the peak is lower by the gradient
    # bytes less the activations the new peak holds.
    assert fused["breakdown"]["gradient"] == 0
    assert usual["breakdown"]["gradient"] > 0
    saved = usual["bytes"] - fused["bytes"]
    assert saved >= usual["breakdown"]["gradient"] - fused["breakdown"]["activation"] - 4096
    assert saved > 0
    from retrograd import _tensor
    assert _tensor._tracker is None  # the demo leaves accounting off behind it


def test_main_entry_point_dispatches(capsys):
    from retrograd.__main__ import main
    assert main([]) == 0
    assert "demo" in capsys.readouterr().out
    assert main(["nonsense"]) == 2


def test_demo_exact_mode_adds_the_temporary_row(tmp_path, capsys):
    assert demo.main(["--model", "vit_tiny", "--steps", "1", "--exact", "--out",
                      str(tmp_path)]) == 0
    assert "  temporary " in capsys.readouterr().out
