"""The memory planner (``retrograd.memory.plan``): its predictions against real steps,
its choice against the budget, installing and removing plans, and its errors."""

import copy

import numpy as np
import pytest

import retrograd
from retrograd import memory, nn
from retrograd.memory.planner import Choice, parse_bytes
from retrograd.memory.planner._plan import dry_run as _dry_run
from retrograd.memory.planner._blocks import find_blocks
from retrograd.memory.planner._catalog import GPT
from retrograd.memory.planner._install import install
from retrograd.memory.planner._shadow import shadow
from retrograd.memory.planner._step import measure, train_step
from retrograd.models import resnet18, vit_tiny

F = nn.functional


def _mlp():
    blocks = [nn.Sequential(nn.Linear(32, 64), nn.GELU(), nn.Linear(64, 32)) for _ in range(4)]
    return nn.Sequential(*blocks, nn.Linear(32, 10)), (16, 32)


def _vit():
    return vit_tiny(), (4, 3, 32, 32)


def _resnet():
    return resnet18(num_classes=10), (2, 3, 32, 32)


def _setup(build, dtype=retrograd.float32):
    retrograd.manual_seed(0)
    model, shape = build()
    model.to(dtype)
    x = retrograd.randn(*shape, dtype=dtype)
    y = retrograd.randint(0, 10, (shape[0],))
    opt = retrograd.optim.Adam(model.parameters(), lr=1e-3)
    return model, (x,), (lambda out: F.cross_entropy(out, y)), opt


def _gpt_setup():
    retrograd.manual_seed(0)
    model = GPT(vocab=65, context=32, layers=2, heads=2, dim=32)
    idx, target = retrograd.randint(0, 65, (3, 32)), retrograd.randint(0, 65, (3, 32))
    opt = retrograd.optim.AdamW(model.parameters())
    return model, (idx,), lambda out: F.cross_entropy(out.reshape(-1, 65),
                                                      target.reshape(-1)), opt


SETUPS = {"mlp": lambda: _setup(_mlp), "vit_tiny": lambda: _setup(_vit),
          "resnet18": lambda: _setup(_resnet), "gpt": _gpt_setup,
          "mlp_float64": lambda: _setup(_mlp, retrograd.float64)}


def _choices(model, name):
    blocks = tuple(find_blocks(model))
    half = blocks[: len(blocks) // 2]
    if name == "resnet18":  # the slowest: the mixed choices only
        return [Choice(True, half, "disk"), Choice(False, blocks, None)]
    return [Choice(), Choice(fuse=True), Choice(checkpoint=blocks), Choice(offload="disk"),
            Choice(True, half, "disk")]


@pytest.mark.parametrize("name", list(SETUPS))
def test_a_dry_run_on_meta_predicts_the_real_steps_peak_to_the_byte(name, tmp_path):
    """Each kind of choice, dry-run on meta copies, has the peak (and the bytes per
    category at it) that the real model measures with the choice installed: the same
    rules allocate the same storages."""
    model, inputs, loss_fn, opt = SETUPS[name]()
    for choice in _choices(model, name):
        predicted = _dry_run(choice, model, opt, inputs, loss_fn, "meta", tmp_path)
        real, real_opt, xs = shadow(model, opt, inputs, "real")
        installed = install(choice, real, real_opt, offload_dir=tmp_path)
        try:
            train_step(real, xs, loss_fn, real_opt)
            measured = measure(real, xs, loss_fn, real_opt)
        finally:
            installed.remove()
        assert (predicted.peak, predicted.at_peak) == (measured.peak, measured.at_peak), choice


def test_plans_fit_their_budgets_and_the_peak_falls_with_the_budget(tmp_path):
    """The chosen plan is the fastest predicted to fit; as the budget falls, the chosen
    plan's predicted peak never rises; a budget under every candidate raises, with the
    table."""
    model, inputs, loss_fn, opt = _setup(_mlp)
    full = memory.plan(model, inputs, loss_fn, opt, budget=1 << 40, offload_dir=tmp_path)
    assert full.chosen.seconds == min(c.seconds for c in full.candidates)
    peaks = sorted({c.peak for c in full.candidates}, reverse=True)
    previous = None
    for budget in (peaks[0], peaks[len(peaks) // 2], peaks[-1]):
        p = memory.plan(model, inputs, loss_fn, opt, budget=budget, offload_dir=tmp_path)
        assert p.predicted_peak <= budget
        assert p.chosen.seconds == min(c.seconds for c in p.candidates if c.peak <= budget)
        assert previous is None or p.predicted_peak <= previous
        previous = p.predicted_peak
    with pytest.raises(RuntimeError, match="no plan fits a budget of .*lowest predicted "
                                           "peak") as e:
        memory.plan(model, inputs, loss_fn, opt, budget=peaks[-1] - 1)
    assert "checkpoint" in str(e.value) and "offload to disk" in str(e.value)


def test_verify_measures_the_predicted_peak_and_trains_as_the_plain_loop(tmp_path):
    """verify() runs two real steps with the plan: the measured peak is the predicted
    one, and the parameters are those of two plain steps (fusing, checkpointing and
    offloading change memory, not results)."""
    model, inputs, loss_fn, opt = _setup(_mlp, retrograd.float64)
    plain = copy.deepcopy(model)
    plain_opt = retrograd.optim.Adam(plain.parameters(), lr=1e-3)
    for _ in range(2):
        train_step(plain, inputs, loss_fn, plain_opt)
    everything = max(c.peak for c in memory.plan(model, inputs, loss_fn, opt,
                                                 budget="1GiB").candidates)
    p = memory.plan(model, inputs, loss_fn, opt, budget=everything - 1, offload_dir=tmp_path)
    assert p.choice != Choice()
    report = p.verify()
    assert report.measured_peak == report.predicted_peak == p.predicted_peak
    assert report.measured_at_peak == report.predicted_at_peak
    assert report.timelines["measured"][-1] >= 0 and max(report.timelines["measured"]) == \
        report.measured_peak
    for a, b in zip(model.parameters(), plain.parameters(), strict=True):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    assert "measured peak" in str(report) and "predicted" in str(report)


def test_apply_and_remove_leave_the_model_as_it_was(tmp_path):
    model, inputs, loss_fn, opt = _setup(_vit)
    keys = list(model.state_dict())
    full = memory.plan(model, inputs, loss_fn, opt, budget="1GiB")
    lowest = min(c.peak for c in full.candidates)
    p = memory.plan(model, inputs, loss_fn, opt, budget=lowest, offload_dir=tmp_path)
    assert p.choice.checkpoint or p.choice.offload
    p.apply(model, opt)
    with pytest.raises(RuntimeError, match="installed already"):
        p.apply(model, opt)
    with pytest.raises(RuntimeError, match="a memory plan is installed on this model"):
        memory.plan(model, inputs, loss_fn, opt, budget="1GiB")
    assert list(model.state_dict()) == keys
    assert any("forward" in m.__dict__ for m in model.modules())
    p.remove()
    assert not any("forward" in m.__dict__ for m in model.modules())
    assert "step" not in opt.__dict__  # the fusing is undone too
    p.remove()  # twice is nothing


def test_planning_leaves_no_trace(tmp_path):
    """plan() draws no random numbers the user sees, touches no parameter, and stops
    the accounting it started."""
    model, inputs, loss_fn, opt = _setup(_vit)
    memory.stop_accounting()
    state = retrograd.get_rng_state()
    before = [p.detach().clone() for p in model.parameters()]
    memory.plan(model, inputs, loss_fn, opt, budget="1GiB", offload_dir=tmp_path)
    assert retrograd.equal(retrograd.get_rng_state(), state)
    assert all(retrograd.equal(a, b) for a, b in zip(before, model.parameters(), strict=True))
    assert all(p.grad is None for p in model.parameters()) and not opt.state
    assert not memory.TRACKER.started
    assert not list(tmp_path.iterdir())  # the offloaded files are gone


def test_a_model_too_big_for_the_host_is_planned_on_meta():
    """A model built on meta (64 GiB of float32 weights) is planned without memory."""
    retrograd.set_default_device("meta")
    model = nn.Sequential(*(nn.Sequential(nn.Linear(1 << 16, 1 << 16, bias=False), nn.ReLU())
                            for _ in range(4)))
    x, y = retrograd.empty(4, 1 << 16), retrograd.empty(4, dtype=retrograd.int64)
    retrograd.set_default_device("cpu")
    opt = retrograd.optim.SGD(model.parameters(), lr=0.1)
    p = memory.plan(model, (x,), lambda out: F.cross_entropy(out, y), opt, budget="96GiB")
    weights = 4 * (1 << 32) * 4
    assert weights < p.predicted_peak <= parse_bytes("96GiB")
    assert p.choice.fuse  # gradients of all four layers at once would not fit


def test_blocks_are_the_outermost_repeated_modules():
    vit = vit_tiny()
    assert find_blocks(vit) == [f"encoder.layers.encoder_layer_{i}" for i in range(2)]
    resnet = resnet18()
    blocks = find_blocks(resnet)
    assert len(blocks) == 8 and all(type(resnet.get_submodule(b)).__name__ == "BasicBlock"
                                    for b in blocks)
    assert find_blocks(_mlp()[0]) == ["0", "1", "2", "3"]
    assert find_blocks(nn.Sequential(nn.Linear(2, 2), nn.ReLU())) == []


@pytest.mark.parametrize("text, value", [("1.5GiB", 3 << 29), ("800MB", 800 * 10 ** 6),
                                         (" 2 kib ", 2048), ("1e3", 1000), (4096, 4096),
                                         (2.5, 2)])
def test_budgets_read_as_users_write_them(text, value):
    assert parse_bytes(text) == value


@pytest.mark.parametrize("bad, error", [("1.5 GB/s", ValueError), ("GiB", ValueError),
                                        (-1, ValueError), ("0MB", ValueError),
                                        (float("inf"), ValueError), (True, TypeError),
                                        (None, TypeError)])
def test_bad_budgets_are_refused(bad, error):
    with pytest.raises(error, match="memory size"):
        parse_bytes(bad)


def test_bad_arguments_are_refused():
    model, inputs, loss_fn, opt = _setup(_mlp)
    with pytest.raises(TypeError, match="nn.Module"):
        memory.plan(lambda x: x, inputs, loss_fn, opt, budget=1)
    with pytest.raises(TypeError, match="Optimizer"):
        memory.plan(model, inputs, loss_fn, object(), budget=1)
    with pytest.raises(TypeError, match="callable"):
        memory.plan(model, inputs, 3, opt, budget=1)
    with pytest.raises(ValueError, match="trace must be 'meta' or 'real'"):
        memory.plan(model, inputs, loss_fn, opt, budget=1, trace="gpu")
    with pytest.raises(TypeError, match="example_inputs"):
        memory.plan(model, {"x": inputs[0]}, loss_fn, opt, budget=1)
    other = retrograd.optim.SGD([nn.Parameter(retrograd.zeros(3))], lr=0.1)
    with pytest.raises(ValueError, match="not the model's"):
        memory.plan(model, inputs, loss_fn, other, budget="1GiB")


def test_real_tracing_plans_as_meta_does(tmp_path):
    model, inputs, loss_fn, opt = _setup(_mlp)
    on_meta = memory.plan(model, inputs, loss_fn, opt, budget="1GiB", offload_dir=tmp_path)
    real = memory.plan(model, inputs, loss_fn, opt, budget="1GiB", trace="real",
                       offload_dir=tmp_path)
    assert [c.peak for c in on_meta.candidates] == [c.peak for c in real.candidates]


def test_host_tensors_join_meta_only_inside_the_planners_context():
    a, b = retrograd.ones(3, device="meta"), retrograd.ones(3)
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device, "
                                           "but found at least two devices, meta and cpu!"):
        a + b
    with retrograd.backend.host_joins_meta():
        assert (a + b).is_meta


def test_an_expand_view_books_no_bytes():
    """An expand is a view (NumPy hangs a DummyArray between it and its array): the
    books must not count it as a new storage."""
    p = nn.Parameter(retrograd.zeros(1, 1, 1024))
    memory.reset_peak_memory_stats()
    before = memory.memory_allocated()
    v = p.expand(64, -1, -1)
    assert memory.memory_allocated() == before and v.shape == (64, 1, 1024)


def test_the_largest_batch_is_the_last_that_fits():
    retrograd.manual_seed(0)
    model = GPT(vocab=65, context=16, layers=1, heads=2, dim=16)

    def make(n):
        idx, target = retrograd.randint(0, 65, (n, 16)), retrograd.randint(0, 65, (n, 16))
        return (idx,), lambda out: F.cross_entropy(out.reshape(-1, 65), target.reshape(-1))

    inputs, loss_fn = make(2)
    opt = retrograd.optim.Adam(model.parameters())
    p = memory.plan(model, inputs, loss_fn, opt, budget="2MiB")
    n, peak = p.largest_batch(make)
    assert n > 2 and peak <= p.budget
    bigger, bigger_loss = make(n + 1)
    over = _dry_run(p.choice, model, opt, bigger, bigger_loss, "meta", None)
    assert over.peak > p.budget
    tiny = memory.plan(model, inputs, loss_fn, opt, budget=peak)
    assert tiny.largest_batch(make, limit=n)[0] == n


def test_a_bfloat16_view_on_meta_keeps_its_dtype():
    w = retrograd.randn(5, 3, device="meta", dtype=retrograd.bfloat16)
    assert w[1:3].dtype == retrograd.bfloat16 and w.t().dtype == retrograd.bfloat16


def test_the_command_line_plans_verifies_and_writes_the_report(tmp_path, capsys):
    from retrograd.__main__ import main
    out = tmp_path / "plan.html"
    assert main(["plan", "--model", "gpt", "--batch", "1", "--budget", "200MiB",
                 "--no-verify", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "budget 200 MiB:" in text and "offload to disk" in text and "*" in text
    page = out.read_text()
    assert "<svg" in page and "predicted" in page and "measured" not in page.split("<h2>")[0]
    assert main(["plan", "--model", "gpt", "--batch", "1", "--budget", "1MiB",
                 "--no-verify", "--out", str(out)]) == 1
    assert "no plan fits a budget of 1.00 MiB" in capsys.readouterr().err


def test_the_report_shows_predicted_beside_measured(tmp_path):
    from retrograd.memory.planner._report import render
    model, inputs, loss_fn, opt = _setup(_mlp)
    p = memory.plan(model, inputs, loss_fn, opt, budget="1GiB", offload_dir=tmp_path)
    page = render(p, p.verify())
    assert page.count("<polyline") == 2 and "budget" in page
    assert page.count("<tr") == len(p.candidates) + 1 and 'class="chosen"' in page
    p.remove()
