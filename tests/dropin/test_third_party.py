"""Third-party tools written for PyTorch, on retrograd through the runner: torchviz walks
the autograd graph, tqdm wraps a DataLoader, matplotlib plots tensors.

Where the tool can run on both, the same script runs under PyTorch (plain ``python``)
and under the runner, and their outputs must be equal.
"""

import re
import textwrap

import pytest


RUN = ("-m", "retrograd", "run")

_TORCHVIZ = """\
    import re
    import torch
    from torchviz import make_dot

    class Square(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, grad):
            x, = ctx.saved_tensors
            return 2 * x * grad

    x = torch.randn(2, 3, requires_grad=True)
    w = torch.randn(3, 4, requires_grad=True)
    b = torch.zeros(4, requires_grad=True)
    y = ((x @ w).relu() * 2 + b).sum() + Square.apply(x.t()).mean()
    dot = make_dot((y, x[0]), params={"x": x, "w": w, "b": b})
    ids = {}  # node ids are id()s: number them by first appearance
    print(re.sub(r"\\b\\d{6,}\\b", lambda m: "n%d" % ids.setdefault(m.group(0), len(ids)),
                 dot.source))
"""


def test_torchviz_draws_the_graph_pytorch_draws(python_run, tmp_path, torch):
    """Every node torchviz names (backward nodes, leaves with their parameter names and
    sizes, a custom Function's saved tensor, a view's base) and every edge, in order."""
    pytest.importorskip("torchviz")
    script = tmp_path / "graph.py"
    script.write_text(textwrap.dedent(_TORCHVIZ))
    python = python_run(script, cwd=tmp_path)
    runner = python_run(*RUN, script, cwd=tmp_path)
    assert python.returncode == 0, python.stderr
    assert runner.returncode == 0, runner.stderr
    assert runner.stdout == python.stdout
    for name in ("MmBackward0", "ReluBackward0", "SquareBackward", "TBackward0",
                 "SelectBackward0", "AccumulateGrad", '"w\n (3, 4)"', "style=dotted"):
        assert name in runner.stdout, name


_TQDM = """\
    import torch
    from torch.utils.data import DataLoader, TensorDataset
    from tqdm import tqdm

    total = 0.0
    for (xb,) in tqdm(DataLoader(TensorDataset(torch.arange(10.0)), batch_size=3),
                      desc="batches"):
        total += xb.sum().item()
    print(total, sum(1 for _ in tqdm(torch.arange(4))))
"""


def test_tqdm_counts_a_dataloader(python_run, tmp_path):
    pytest.importorskip("tqdm")
    script = tmp_path / "progress.py"
    script.write_text(textwrap.dedent(_TQDM))
    r = python_run(*RUN, script, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "45.0 4\n"
    assert "batches: 100%" in r.stderr and "| 4/4 [" in r.stderr


_MATPLOTLIB = """\
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import torch

    t = torch.linspace(0, 1, 5)
    line, = plt.plot(t, t * 2)
    image = plt.imshow(torch.arange(12.0).reshape(3, 4))
    counts, _, _ = plt.hist(torch.tensor([1.0, 2.0, 2.0, 3.0]), bins=3)
    points = plt.scatter(t, t)
    plt.savefig("figure.png")
    print(line.get_xdata().tolist(), line.get_ydata().tolist())
    print(image.get_array().tolist(), counts.tolist(), points.get_offsets().shape)
"""


def test_matplotlib_plots_tensors(python_run, tmp_path):
    pytest.importorskip("matplotlib")
    script = tmp_path / "plots.py"
    script.write_text(textwrap.dedent(_MATPLOTLIB))
    r = python_run(*RUN, script, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        "[0.0, 0.25, 0.5, 0.75, 1.0] [0.0, 0.5, 1.0, 1.5, 2.0]",
        "[[0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0], [8.0, 9.0, 10.0, 11.0]] "
        "[1.0, 2.0, 1.0] (5, 2)"]
    assert re.match(rb"\x89PNG", (tmp_path / "figure.png").read_bytes())
