"""The viewer's module tree, frames found by module name, and one unit on the PNG's axis."""

import pickle
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import retrograd
from retrograd import memory, nn
from retrograd.memory import viz
from test_viz import page_data, torch_like_snapshot

SRC = Path(retrograd.__file__).resolve().parents[1]  # the tree under test


@pytest.fixture(autouse=True)
def fresh_books():
    memory.stop_accounting()
    yield
    memory._record_memory_history(None)
    memory.stop_accounting()


class TreeNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(32, 128), nn.Tanh(), nn.Linear(128, 32))
        self.head = nn.Linear(32, 2)

    def forward(self, x):
        return self.head(self.body(x))


def _training_snapshot():
    model = TreeNet()
    opt = retrograd.optim.Adam(model.parameters())
    memory._record_memory_history()
    for _ in range(2):
        model(retrograd.randn(64, 32)).sum().backward()
        opt.step()
        opt.zero_grad()
    return memory._snapshot()


def test_page_has_each_modules_bytes_at_the_peak():
    snap = _training_snapshot()
    tl = viz.timeline(snap)
    mods = tl["modules"]
    assert sum(sum(row.values()) for row in mods.values()) == tl["peak"]["bytes"]
    assert {"TreeNet.body.0", "TreeNet.body.1", "TreeNet.head", "Adam.step"} <= set(mods)
    assert mods["Adam.step"] == {"optimizer_state": tl["peak"]["breakdown"]["optimizer_state"]}
    panel = page_data(viz.render_html([("run", snap)]))["panels"][0]
    cats = page_data(viz.render_html([("run", snap)]))["categories"]
    rows = {path: (bytes_, peak) for path, bytes_, peak in panel["modules"]}
    body0, own_peak = rows["TreeNet.body.0"]
    assert dict(zip(cats, body0, strict=True)) == {c: mods["TreeNet.body.0"].get(c, 0)
                                                   for c in cats}
    assert own_peak == snap["by_module"]["TreeNet.body.0"]["peak"] >= sum(body0)


def test_a_pytorch_snapshot_has_no_module_tree():
    tl = viz.timeline(torch_like_snapshot())
    assert tl["modules"] is None
    assert page_data(viz.render_html([("t", torch_like_snapshot())]))["panels"][0][
        "modules"] is None


_SCRIPT = textwrap.dedent("""
    import sys
    import retrograd
    retrograd.memory._record_memory_history()
    x = retrograd.randn(1000, 10)   # made here, at line 5
    y = (x * 2).sum()
    retrograd.memory._dump_snapshot(sys.argv[1])
""")


def _where_of_x(script_dir, pythonpath, tmp_path):
    """Run the script from ``script_dir``; the "where" frame the page gives the block of
    ``x`` (found by its size)."""
    script_dir.mkdir(parents=True, exist_ok=True)
    script = script_dir / "train.py"
    script.write_text(_SCRIPT)
    out = tmp_path / "snap.pickle"
    subprocess.run([sys.executable, str(script), str(out)], check=True, cwd=script_dir,
                   env={"PYTHONPATH": str(pythonpath), "PATH": "/usr/bin:/bin"})
    with open(out, "rb") as f:
        snap = pickle.load(f)
    panel = page_data(viz.render_html([("run", snap)]))["panels"][0]
    tl = viz.timeline(snap)
    blk = next(b for b in tl["largest"] if b["size"] == 1000 * 10 * 4)
    stack = panel["stacks"][int(tl["blocks"]["stack"][blk["block"]])]
    return stack["frames"][stack["where"]]


def test_user_frame_found_by_module_under_a_folder_named_torch(tmp_path):
    filename, line, name, internal = _where_of_x(tmp_path / "torch" / "proj", SRC, tmp_path)
    assert (Path(filename).name, line, name, internal) == ("train.py", 5, "<module>", False)


def test_user_frame_found_by_module_in_a_checkout_named_retrograd(tmp_path):
    checkout = tmp_path / "retrograd"
    shutil.copytree(SRC / "retrograd", checkout / "src" / "retrograd",
                    ignore=shutil.ignore_patterns("__pycache__"))
    filename, line, name, internal = _where_of_x(checkout, checkout / "src", tmp_path)
    assert (Path(filename).name, line, name, internal) == ("train.py", 5, "<module>", False)
    assert "/retrograd/" in filename


def test_library_frames_are_marked_by_module_name():
    memory._record_memory_history()
    x = retrograd.randn(100, 10)  # noqa: F841
    trace = memory._snapshot()["device_traces"][0]
    frames = next(e for e in trace if e["size"] == 4000)["frames"]
    mine = [f for f in frames if f["filename"] == __file__]
    assert mine and not any(f["internal"] for f in mine)
    assert all(f["internal"] for f in frames if "/src/retrograd/" in f["filename"])


@pytest.mark.parametrize("top", [3 * 2**20, 900 * 2**20, 1100 * 2**20, int(1.6 * 2**30),
                                 5 * 2**30, 700, 3 * 2**10 + 5, 40 * 2**40])
def test_axis_ticks_use_one_unit(top):
    step, unit = viz._byte_step(top)
    ticks = [k * step for k in range(int(top // step) + 2)]
    labels = [viz._tick_label(v, unit) for v in ticks]
    units = {lab.split(" ")[1] for lab in labels if lab != "0"}
    assert len(units) == 1, labels
    assert len(set(labels)) == len(labels)  # no two ticks look alike


def test_png_axis_labels_share_one_unit(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    from matplotlib import pyplot as plt
    figs = []
    monkeypatch.setattr(plt, "close", figs.append)
    snap = torch_like_snapshot()
    for seg in snap["segments"]:  # scale sizes so the axis spans ~1.5 GiB
        for b in seg["blocks"]:
            b["size"] *= 2**30 // 1000
    for e in snap["device_traces"][0]:
        e["size"] *= 2**30 // 1000
    viz.write_png(tmp_path / "x.png", [("big", snap)])
    fig = figs[0]
    fig.canvas.draw()
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels() if t.get_text()]
    units = {lab.split(" ")[1] for lab in labels if lab != "0"}
    assert len(units) == 1 and len(labels) >= 3, labels
    plt.close(fig)
