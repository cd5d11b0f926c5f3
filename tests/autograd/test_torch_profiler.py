"""``torch.profiler`` (``retrograd.profiler``): the schedule and its state machine, the
profiler's results and exports, against PyTorch's for the same loops."""

import gzip
import inspect
import json
import textwrap
import warnings

import pytest

import retrograd
from retrograd import _observe

tp = retrograd.profiler

SCHEDULES = [dict(wait=1, warmup=1, active=2),
             dict(wait=0, warmup=0, active=1),
             dict(wait=0, warmup=0, active=1, repeat=3),
             dict(wait=2, warmup=1, active=3, repeat=2),
             dict(wait=2, warmup=1, active=3, repeat=2, skip_first=1),
             dict(wait=1, warmup=2, active=2, skip_first=3, skip_first_wait=1),
             dict(wait=5, warmup=0, active=4, repeat=1, skip_first_wait=1),
             dict(wait=0, warmup=3, active=1, skip_first=7),
             dict(wait=0, warmup=0, active=2, repeat=4)]


def _schedule(T, kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # warmup=0 warns
        return T.profiler.schedule(**kw)


def _step(T):
    x = T.ones(3, requires_grad=True)
    (x * 2).sin().sum().backward()


def _loop(T, kw, steps=14, **profile_kw):
    """Per on_trace_ready call: the step number, and the step ranges and sin ops the
    profiler holds then."""
    calls = []

    def ready(p):
        ev = p.events()
        calls.append((p.step_num, sum(e.name == "ProfilerStep*" for e in ev),
                      sum(e.name == "aten::sin" for e in ev)))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "Profiler clears events at the end of each cycle"
        with T.profiler.profile(schedule=_schedule(T, kw), on_trace_ready=ready,
                                **profile_kw) as p:
            for _ in range(steps):
                _step(T)
                p.step()
    return calls


# ---- schedule ----------------------------------------------------------------------------

@pytest.mark.torch
@pytest.mark.parametrize("kw", SCHEDULES)
def test_schedule_matches_pytorch(torch, kw):
    ours, ref = _schedule(retrograd, kw), _schedule(torch, kw)
    assert [ours(i).name for i in range(41)] == [ref(i).name for i in range(41)]
    assert {a.name: a.value for a in tp.ProfilerAction} == {
        a.name: a.value for a in torch.profiler.ProfilerAction}


@pytest.mark.torch
def test_schedule_errors_and_warning_match_pytorch(torch):
    for T in (retrograd, torch):
        with pytest.raises(AssertionError, match=r"active=0 \(need > 0\)"):
            T.profiler.schedule(wait=0, warmup=1, active=0)
        with pytest.warns(UserWarning, match="won't be using warmup"):
            s = T.profiler.schedule(wait=0, warmup=0, active=1)
        with pytest.raises(AssertionError, match="Step must be non-negative. Got -1."):
            s(-1)


# ---- the state machine against PyTorch ---------------------------------------------------

@pytest.mark.torch
@pytest.mark.parametrize("acc_events", [False, True])
@pytest.mark.parametrize("kw", SCHEDULES)
def test_on_trace_ready_steps_and_events_match_pytorch(torch, kw, acc_events):
    ours = _loop(retrograd, kw, acc_events=acc_events)
    assert ours == _loop(torch, kw, acc_events=acc_events)
    assert any(sins > 0 for _, _, sins in ours)


@pytest.mark.torch
def test_incorrect_schedule_warns_as_pytorch(torch):
    def record_then_none(step):
        return tp.ProfilerAction.RECORD if step == 0 else tp.ProfilerAction.NONE

    with pytest.warns(UserWarning, match="Incorrect schedule: RECORD followed by NONE"):
        with tp.profile(schedule=record_then_none) as p:
            p.step()
    with pytest.raises(ValueError, match="DEVICE_STOPPED is set internally"):
        tp.profile(schedule=lambda step: tp.ProfilerAction.DEVICE_STOPPED)


def test_start_stop_step_without_schedule():
    p = tp.profile()
    assert p.step_num == 0
    p.start()
    x = retrograd.ones(2, 2)
    x.exp()
    p.step()
    x.sin()
    p.stop()
    assert p.step_num == 1
    names = [e.name for e in p.events()]
    assert "aten::exp" in names and "aten::sin" in names
    assert not any(n.startswith("ProfilerStep") for n in names)  # only with a schedule
    assert _observe.engine is None


def test_warmup_steps_are_not_recorded():
    seen = []
    s = tp.schedule(wait=0, warmup=1, active=1, repeat=1)
    with tp.profile(schedule=s, on_trace_ready=lambda p: seen.append(p.events())) as p:
        retrograd.ones(2).exp()  # step 0: warmup
        p.step()
        retrograd.ones(2).sin()  # step 1: recorded
        p.step()
        retrograd.ones(2).cos()  # step 2: after the last cycle
    (events,) = seen
    names = [e.name for e in events]
    assert "aten::sin" in names
    assert "aten::exp" not in names and "aten::cos" not in names
    (step,) = [e for e in events if e.name == "ProfilerStep*"]
    assert "aten::sin" in [c.name for c in step.cpu_children]


# ---- results -----------------------------------------------------------------------------

def test_key_averages_table_holds_the_ops():
    with tp.profile(activities=[tp.ProfilerActivity.CPU], record_shapes=True) as p:
        _step(retrograd)
    table = p.key_averages().table(sort_by="self_cpu_time_total", row_limit=20)
    for name in ("aten::mul", "aten::sin", "aten::sum", "SinBackward0"):
        assert name in table
    assert "Self CPU time total" in table
    by_shape = p.key_averages(group_by_input_shape=True)
    assert [e.input_shapes for e in by_shape if e.key == "aten::sin"] == [[[3]]]


def test_export_chrome_trace_and_gzip(tmp_path):
    s = tp.schedule(wait=0, warmup=1, active=2, repeat=1)
    with tp.profile(schedule=s) as p:
        for _ in range(4):
            _step(retrograd)
            p.step()
    p.export_chrome_trace(str(tmp_path / "t.json"))
    p.export_chrome_trace(str(tmp_path / "t.json.gz"))
    trace = json.loads((tmp_path / "t.json").read_text())
    with gzip.open(tmp_path / "t.json.gz", "rt") as f:
        assert json.load(f)["traceEvents"] == trace["traceEvents"]
    names = [e["name"] for e in trace["traceEvents"] if e["ph"] == "X"]
    assert "aten::sin" in names
    assert [n for n in names if n.startswith("ProfilerStep")] == [
        "ProfilerStep#1", "ProfilerStep#2"]


def test_export_stacks(tmp_path):
    with tp.profile(with_stack=True) as p:
        _step(retrograd)
    p.export_stacks(str(tmp_path / "stacks.txt"))
    lines = (tmp_path / "stacks.txt").read_text().splitlines()
    assert lines and all(int(line.rsplit(" ", 1)[1]) > 0 for line in lines)
    assert any("test_export_stacks" in line.split(" ")[0] for line in lines)
    with pytest.raises(ValueError, match="metric should be one of"):
        p.export_stacks(str(tmp_path / "x.txt"), "cpu_time")


def test_tensorboard_trace_handler_writes_each_cycle(tmp_path):
    s = tp.schedule(wait=1, warmup=1, active=1, repeat=2)
    for use_gzip in (False, True):
        d = tmp_path / str(use_gzip)
        handler = tp.tensorboard_trace_handler(str(d), worker_name="w0", use_gzip=use_gzip)
        with tp.profile(schedule=s, on_trace_ready=handler) as p:
            for _ in range(7):
                _step(retrograd)
                p.step()
        files = sorted(d.iterdir())
        suffix = ".pt.trace.json" + (".gz" if use_gzip else "")
        assert len(files) == 2
        for f in files:
            worker, stamp, rest = f.name.split(".", 2)
            assert (worker, "." + rest) == ("w0", suffix) and stamp.isdigit()
            with (gzip.open(f, "rt") if use_gzip else open(f)) as fh:
                assert any(e["name"] == "aten::sin" for e in json.load(fh)["traceEvents"])


def test_results_before_profiling_raise():
    p = tp.profile()
    with pytest.raises(AssertionError, match="initialized before getting key averages"):
        p.key_averages()


# ---- activities --------------------------------------------------------------------------

@pytest.mark.torch
def test_activities_as_pytorch_cpu_build(torch):
    A = tp.ProfilerActivity
    assert {a.name: a.value for a in A} == {
        n: int(v) for n, v in torch.profiler.ProfilerActivity.__members__.items()}
    assert {a.name: a.value for a in tp.DeviceType} == {
        n: int(v) for n, v in torch.profiler.DeviceType.__members__.items()}
    assert tp.supported_activities() == {A.CPU}
    assert repr(A.CUDA) == repr(torch.profiler.ProfilerActivity.CUDA)
    for T in (retrograd, torch):
        B = T.profiler.ProfilerActivity
        with pytest.warns(UserWarning, match="CUDA is not available, disabling CUDA profiling"):
            with T.profiler.profile(activities=[B.CPU, B.CUDA]) as p:
                T.ones(2).exp()
        assert "aten::exp" in [e.key for e in p.key_averages()]
        with pytest.warns(UserWarning, match="CUDA is not available"):
            with pytest.raises(AssertionError, match="No activities specified"):
                T.profiler.profile(activities=[B.CUDA]).start()
        with pytest.raises(AssertionError, match="No valid profiler activities found"):
            T.profiler.profile(activities=[])
        with pytest.raises(ValueError, match="specified more than once"):
            T.profiler.profile(activities=[B.CPU, B.CPU])
        with pytest.warns(FutureWarning, match="`use_cuda` is deprecated"):
            T.profiler.profile(use_cuda=True)
    assert _observe.engine is None


@pytest.mark.torch
def test_names_and_signatures_match_pytorch(torch):
    assert set(tp.__all__) == set(torch.profiler.__all__) - {"ExecutionTraceObserver"}
    assert tp.record_function is retrograd.autograd.profiler.record_function
    for name in ("profile", "schedule", "tensorboard_trace_handler"):
        ours = inspect.signature(getattr(tp, name)).parameters
        ref = inspect.signature(getattr(torch.profiler, name)).parameters
        assert [(p.name, p.kind, p.default) for p in ours.values()] == [
            (p.name, p.kind, p.default) for p in ref.values()], name
    for name in ("key_averages", "export_chrome_trace", "export_stacks", "step", "start",
                 "stop", "events"):
        ours = inspect.signature(getattr(tp.profile, name)).parameters
        ref = inspect.signature(getattr(torch.profiler.profile, name)).parameters
        assert [(p.name, p.default) for p in ours.values()] == [
            (p.name, p.default) for p in ref.values()], name


def test_itt_is_absent():
    assert tp.itt.is_available() is False
    with pytest.raises(RuntimeError, match="ITT functions not installed"):
        with tp.itt.range("x"):
            pass


# ---- through the runner ------------------------------------------------------------------

def test_script_using_torch_profiler_runs_through_the_runner(tmp_path, python_run):
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent("""
        import torch
        import torch.nn as nn
        from torch.profiler import ProfilerActivity, profile, record_function, schedule

        model = nn.Linear(4, 2)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        ready = []
        with profile(activities=[ProfilerActivity.CPU], record_shapes=True,
                     schedule=schedule(wait=1, warmup=1, active=2, repeat=1),
                     on_trace_ready=lambda p: ready.append(p.step_num)) as prof:
            for _ in range(6):
                with record_function("train_step"):
                    loss = model(torch.randn(8, 4)).pow(2).mean()
                    opt.zero_grad()
                    loss.backward()
                    opt.step()
                prof.step()
        print("ready", ready)
        print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=30))
        import torch.profiler.itt
        print("module", torch.profiler.__name__)
    """))
    r = python_run("-m", "retrograd", "run", script, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "ready [4]" in r.stdout
    assert "train_step" in r.stdout and "ProfilerStep*" in r.stdout
    assert "module retrograd.profiler" in r.stdout
