"""The autograd profiler (the "Profiler" section of the autograd reference): events of
forward ops and backward nodes, times, shapes, memory, sequence numbers, PyTorch's table
and a Chrome trace, against PyTorch where observable."""

import json
import threading

import pytest

import retrograd
from retrograd import _observe
from retrograd.autograd import profiler as rprof

BACKWARD = ("Backward0", "AccumulateGrad")


def _program(T, label="fwd"):
    x = T.ones(2, 3, requires_grad=True)
    with T.autograd.profiler.record_function(label):
        y = x * 2
        z = y.sin().sum()
    z.backward()
    return x


def _profile(T, **kw):
    with T.autograd.profiler.profile(**kw) as prof:
        _program(T)
    return prof


def _nodes(prof):
    """Backward node events (not the evaluate_function wrappers), in order."""
    return [e for e in prof.function_events
            if e.name.endswith(BACKWARD) and not e.name.startswith("autograd::")]


def _children(prof, name):
    (ev,) = [e for e in prof.function_events if e.name == name]
    return ev.cpu_children


# ---- events ------------------------------------------------------------------------------

@pytest.mark.torch
def test_forward_ops_and_backward_nodes_match_pytorch(torch):
    ours, ref = _profile(retrograd), _profile(torch)
    assert ([e.name for e in _children(ours, "fwd")] == [e.name for e in _children(ref, "fwd")]
            == ["aten::mul", "aten::sin", "aten::sum"])
    assert [e.name for e in _nodes(ours)] == [e.name for e in _nodes(ref)] == [
        "SumBackward0", "SinBackward0", "MulBackward0", "torch::autograd::AccumulateGrad"]
    for p in (ours, ref):  # each node inside the engine's evaluate_function event
        for e in _nodes(p):
            assert e.cpu_parent.name == "autograd::engine::evaluate_function: " + e.name


@pytest.mark.torch
def test_sequence_numbers_pair_forward_ops_with_their_nodes(torch):
    pairs = {}
    for T in (retrograd, torch):
        prof = _profile(T)
        fwd = {e.sequence_nr: e.name for e in _children(prof, "fwd")}
        pairs[T] = sorted((fwd[e.sequence_nr], e.name) for e in _nodes(prof)
                          if e.sequence_nr >= 0)
        acc = [e for e in _nodes(prof) if "AccumulateGrad" in e.name]
        assert acc[0].sequence_nr == -1
    assert pairs[retrograd] == pairs[torch] == [
        ("aten::mul", "MulBackward0"), ("aten::sin", "SinBackward0"),
        ("aten::sum", "SumBackward0")]


def test_sequence_number_is_the_nodes():
    with retrograd.autograd.profiler.profile() as prof:
        x = retrograd.ones(2, requires_grad=True)
        y = x.exp()
        z = retrograd.ones(2).exp()  # no node: -1
    seqs = [e.sequence_nr for e in prof.function_events if e.name == "aten::exp"]
    assert seqs == [y.grad_fn._sequence_nr(), -1]
    del z


def test_list_ops_are_recorded_and_paired_with_their_nodes():
    """cat/stack/split/unbind/chunk bypass ``apply``; they still get ``aten::`` events
    carrying the sequence number of the node they made."""
    x = retrograd.randn(2, 3, requires_grad=True)
    with retrograd.autograd.profiler.profile(record_shapes=True) as prof:
        y = retrograd.cat([x, x])
        a, b = y.split(2)
        z = retrograd.stack([a, b])
        x.unbind(0)
        x.chunk(3, 1)
        z.sum().backward()
    events = {e.name: e for e in prof.function_events}
    for name in ("cat", "split", "stack", "unbind", "chunk"):
        assert "aten::" + name in events
    assert events["aten::cat"].input_shapes[0] == [[2, 3], [2, 3]]
    for op, node in (("cat", "CatBackward0"), ("split", "SplitBackward0"),
                     ("stack", "StackBackward0")):
        assert events["aten::" + op].sequence_nr == events[node].sequence_nr >= 0


def test_times_self_time_and_nesting():
    prof = _profile(retrograd)
    for e in prof.function_events:
        assert e.cpu_time_total >= 0
        assert e.self_cpu_time_total == pytest.approx(
            e.cpu_time_total - sum(c.cpu_time_total for c in e.cpu_children), abs=1e-6)
        assert e.self_cpu_time_total >= -1e-6
        for c in e.cpu_children:
            assert e.start_ns <= c.start_ns <= c.end_ns <= e.end_ns
            assert c.cpu_parent is e
        # the range's ends are microseconds since the clock's origin (floats): their
        # difference is exact to a few ulps of the timestamps, not of the duration
        assert e.time_range.elapsed_us() == pytest.approx(e.cpu_time_total, abs=1e-3)
    assert prof.self_cpu_time_total == pytest.approx(
        sum(e.self_cpu_time_total for e in prof.function_events))
    assert prof.self_cpu_time_total == pytest.approx(
        sum(e.cpu_time_total for e in prof.function_events if e.cpu_parent is None))


@pytest.mark.torch
def test_call_counts_match_pytorch(torch):
    counts = {}
    for T in (retrograd, torch):
        x = T.randn((1, 1), requires_grad=True)
        with T.autograd.profiler.profile() as prof:
            for _ in range(10):
                y = x ** 2
                y.backward()
        avg = {e.key: e.count for e in prof.key_averages()}
        counts[T] = {k: avg[k] for k in ("PowBackward0", "torch::autograd::AccumulateGrad")}
        if T is retrograd:  # PyTorch's PowBackward0 calls aten::pow again; ours NumPy
            assert avg["aten::pow"] == 10
    assert counts[retrograd] == counts[torch] == {
        "PowBackward0": 10, "torch::autograd::AccumulateGrad": 10}


def test_key_averages_sum_events():
    with retrograd.autograd.profiler.profile() as prof:
        x = retrograd.ones(3, requires_grad=True)
        for _ in range(5):
            x.exp().sum().backward()
    evs = [e for e in prof.function_events if e.name == "aten::exp"]
    (avg,) = [e for e in prof.key_averages() if e.key == "aten::exp"]
    assert avg.count == 5
    assert avg.cpu_time_total == pytest.approx(sum(e.cpu_time_total for e in evs))
    assert avg.cpu_time == pytest.approx(avg.cpu_time_total / 5)
    total = prof.total_average()
    assert total.key == "Total" and total.count == len(prof.function_events)
    assert total.self_cpu_time_total == pytest.approx(prof.self_cpu_time_total)
    assert repr(total).startswith("<FunctionEventAvg key=Total self_cpu_time=")


def test_inplace_ops_and_create_graph_backward_are_recorded():
    with retrograd.autograd.profiler.profile() as prof:
        x = retrograd.ones(3, requires_grad=True)
        y = x * 1
        y.mul_(2)
        (g,) = retrograd.autograd.grad(y.sin().sum(), x, create_graph=True)
        g.sum().backward()
    names = [e.name for e in prof.function_events]
    assert "aten::mul_" in names
    # under create_graph the backward's own ops are recorded inside the node's event
    (sin_bwd, *_) = [e for e in prof.function_events if e.name == "SinBackward0"]
    assert any(c.name.startswith("aten::") for c in sin_bwd.cpu_children)
    assert "CosBackward0" in names  # the double backward ran through the made nodes


@pytest.mark.torch
def test_record_shapes_match_pytorch(torch):
    shapes = {}
    for T in (retrograd, torch):
        prof = _profile(T, record_shapes=True)
        fwd = [e.input_shapes for e in _children(prof, "fwd")]
        bwd = [e.input_shapes for e in _nodes(prof)]
        shapes[T] = fwd[:2], bwd
    assert shapes[retrograd] == shapes[torch]
    assert shapes[retrograd] == ([[[2, 3], []], [[2, 3]]],
                                 [[[]], [[2, 3]], [[2, 3]], [[2, 3]]])


def test_group_by_input_shape():
    with retrograd.autograd.profiler.profile(record_shapes=True) as prof:
        for n in (2, 3, 3):
            retrograd.ones(n).exp()
    keys = [(e.key, e.input_shapes, e.count) for e in
            prof.key_averages(group_by_input_shape=True) if e.key == "aten::exp"]
    assert keys == [("aten::exp", [[2]], 1), ("aten::exp", [[3]], 2)]
    assert "Input Shapes" in prof.key_averages(group_by_input_shape=True).table()
    assert "Input Shapes" not in prof.key_averages().table()


@pytest.mark.torch
def test_profile_memory_counts_outputs_like_pytorch(torch):
    mem = {}
    for T in (retrograd, torch):
        prof = _profile(T, profile_memory=True)
        mem[T] = [e.cpu_memory_usage for e in _children(prof, "fwd")]
    assert mem[retrograd] == mem[torch] == [24, 24, 4]


def test_profile_memory_frees_and_backward_grads():
    with retrograd.autograd.profiler.profile(profile_memory=True) as prof:
        x = retrograd.ones(256, requires_grad=True)  # made outside the profile's ops
        with retrograd.autograd.profiler.record_function("scope"):
            y = x.exp()  # 1 KiB
            del y        # freed inside "scope"
        (x.exp() * 2).sum().backward()
    (scope,) = [e for e in prof.function_events if e.name == "scope"]
    assert scope.cpu_memory_usage == 0 and scope.self_cpu_memory_usage == -1024
    (exp,) = [e for e in scope.cpu_children]
    assert exp.self_cpu_memory_usage == 1024
    (exp_bwd,) = [e for e in prof.function_events if e.name == "ExpBackward0"]
    assert exp_bwd.self_cpu_memory_usage >= 1024  # the gradient it returned
    acc = [e for e in prof.function_events if e.name == "torch::autograd::AccumulateGrad"]
    assert sum(e.cpu_memory_usage for e in acc) in (0, 1024)  # stole or copied its grad
    table = prof.key_averages().table()
    assert "CPU Mem" in table and "Self CPU Mem" in table and "1.00 KB" in table


def test_memory_is_not_tracked_without_profile_memory():
    prof = _profile(retrograd)
    assert all(e.cpu_memory_usage == 0 for e in prof.function_events)
    assert "CPU Mem" not in prof.key_averages().table()


# ---- the table ---------------------------------------------------------------------------

def _header(table):
    return table.split("\n")[:3]


@pytest.mark.torch
@pytest.mark.parametrize("kw", [{}, {"profile_memory": True}, {"record_shapes": True}])
def test_table_layout_matches_pytorch(torch, kw):
    group = kw.get("record_shapes", False)
    tables = [_profile(T, **kw).key_averages(group_by_input_shape=group).table(
        sort_by="self_cpu_time_total", row_limit=5) for T in (retrograd, torch)]
    ours, ref = tables
    # the shapes column is as wide as the widest shapes listed (PyTorch lists more ops)
    cut = ref.split("\n")[1].index("# of Calls") + len("# of Calls")
    assert [h[:cut] for h in _header(ours)] == [h[:cut] for h in _header(ref)]
    assert ("Input Shapes" in _header(ours)[1]) == ("Input Shapes" in _header(ref)[1]) == group
    rows = ours.rstrip("\n").split("\n")
    assert len(rows) == 3 + 5 + 2 and rows[-2] == rows[0]
    assert rows[-1].startswith("Self CPU time total: ")
    widths = [len(r) for r in rows[:-1]]
    assert len(set(widths)) == 1


def test_table_sorting_row_limit_and_names():
    prof = _profile(retrograd)
    avgs = prof.key_averages()
    table = avgs.table(sort_by="cpu_time_total", row_limit=3)
    body = table.split("\n")[3:6]
    totals = sorted((e.cpu_time_total for e in avgs), reverse=True)[:3]
    assert [r[99:111].strip() for r in body] == [rprof._format_time(t) for t in totals]
    long_name = "autograd::engine::evaluate_function: torch::autograd..."
    assert long_name in avgs.table()  # names cut at 55 columns as PyTorch does
    assert prof.table() == prof.function_events.table()
    assert str(prof) == prof.table()
    assert avgs.table(sort_by="self_cuda_time_total")  # device columns sort as zero


def test_format_helpers_match_pytorch():
    assert rprof._format_time(12.3456) == "12.346us"
    assert rprof._format_time(1234.5) == "1.234ms"  # PyTorch formats with .3f too
    assert rprof._format_time(2.5e6) == "2.500s"
    assert rprof._format_memory(-24) == "-24 B"
    assert rprof._format_memory(1536) == "1.50 KB"
    assert rprof._format_memory(3 * 1024 ** 2) == "3.00 MB"


def test_with_stack_source_location():
    with retrograd.autograd.profiler.profile(with_stack=True) as prof:
        retrograd.ones(2).exp()
    (ev,) = [e for e in prof.function_events if e.name == "aten::exp"]
    assert ev.stack[0].startswith(__file__ + "(") and ev.stack[0].endswith(
        ": test_with_stack_source_location")
    assert "Source Location" in prof.key_averages(group_by_stack_n=2).table()
    assert "Source Location" not in prof.key_averages().table()


# ---- chrome trace ------------------------------------------------------------------------

def test_chrome_trace_schema(tmp_path):
    """Valid JSON; complete "X" events with ts/dur/pid/tid; forward on the thread that ran
    it, backward on the thread that ran backward (here another one); flow arrows from
    each forward op to the node it created."""
    with retrograd.autograd.profiler.profile(record_shapes=True) as prof:
        x = retrograd.ones(2, 3, requires_grad=True)
        z = (x * 2).sin().sum()
        t = threading.Thread(target=z.backward, name="bwd")
        t.start()
        t.join()
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    data = json.loads(path.read_text())
    events = data["traceEvents"]
    xs = [e for e in events if e["ph"] == "X"]
    assert len(xs) == len(prof.function_events)
    for e in xs:
        assert isinstance(e["name"], str) and e["cat"] in ("cpu_op", "user_annotation")
        assert all(isinstance(e[k], (int, float)) for k in ("ts", "dur", "pid", "tid"))
        assert e["dur"] >= 0
    threads = {e["tid"]: e["args"]["name"] for e in events
               if e["ph"] == "M" and e["name"] == "thread_name"}
    fwd_tid = {e["tid"] for e in xs if e["name"].startswith("aten::")}
    bwd_tid = {e["tid"] for e in xs if e["name"].endswith(BACKWARD)}
    assert len(fwd_tid) == len(bwd_tid) == 1 and fwd_tid != bwd_tid
    assert threads[bwd_tid.pop()].endswith("(bwd)") and fwd_tid.pop() in threads
    starts = {e["id"] for e in events if e["ph"] == "s"}
    ends = {e["id"] for e in events if e["ph"] == "f"}
    assert starts == ends and len(starts) == 3
    (mul,) = [e for e in xs if e["name"] == "aten::mul"]
    assert mul["args"]["Input Dims"] == [[2, 3], []]
    assert mul["args"]["Sequence number"] in starts


# ---- record_function, switches, errors -----------------------------------------------------

def test_record_function_as_decorator_and_nested():
    @retrograd.autograd.profiler.record_function("fact")
    def fact(n):
        return retrograd.ones(1) if n == 0 else fact(n - 1) * n

    with retrograd.autograd.profiler.profile() as prof:
        fact(2)
    ranges = [e for e in prof.function_events if e.name == "fact"]
    assert len(ranges) == 3
    assert ranges[1].cpu_parent is ranges[0] and ranges[2].cpu_parent is ranges[1]
    assert all(e.is_user_annotation for e in ranges)
    assert fact(1).tolist() == [1.0]  # a no-op when nothing records


def test_disabled_profile_records_nothing():
    with retrograd.autograd.profiler.profile(enabled=False) as prof:
        _program(retrograd)
    assert prof.function_events is None and _observe.engine is None


def test_profiler_switches_off_on_exit_and_on_error():
    with pytest.raises(ValueError):
        with retrograd.autograd.profiler.profile() as prof:
            retrograd.ones(2).exp()
            raise ValueError
    assert _observe.engine is None
    n = len(prof.function_events)
    retrograd.ones(2).exp()
    assert len(prof.function_events) == n


def test_op_error_keeps_the_profile_consistent():
    with retrograd.autograd.profiler.profile() as prof:
        with pytest.raises(RuntimeError, match="must match the size"):
            retrograd.ones(2) + retrograd.ones(3)
        retrograd.ones(2).exp()
    add, exp = prof.function_events
    assert (add.name, exp.name) == ("aten::add", "aten::exp")
    assert exp.cpu_parent is None


def test_not_reentrant_and_results_need_exit():
    p = retrograd.autograd.profiler.profile()
    with p:
        with pytest.raises(RuntimeError, match="Profiler didn't finish running"):
            p.key_averages()
        with pytest.raises(RuntimeError, match="not reentrant"):
            p.__enter__()
        with pytest.raises(RuntimeError, match="already enabled"):
            with retrograd.autograd.profiler.profile():
                pass
    assert p.key_averages() is not None


@pytest.mark.torch
def test_signatures_match_pytorch(torch):
    import inspect
    for name in ("profile", "record_function", "emit_nvtx", "emit_itt"):
        ours = inspect.signature(getattr(rprof, name).__init__).parameters
        ref = inspect.signature(getattr(torch.autograd.profiler, name).__init__).parameters
        assert list(ours)[:len(ours)] == [p for p in ref if p in ours]
        for p in ours:
            assert ours[p].default == ref[p].default, (name, p)
    for meth in ("table", "key_averages"):
        ours = inspect.signature(getattr(rprof.EventList, meth)).parameters
        ref = inspect.signature(
            getattr(torch.autograd.profiler_util.EventList, meth)).parameters
        assert list(ours) == list(ref)[:len(ours)]


def test_emit_nvtx_and_itt_are_noops():
    for cls, kind in ((rprof.emit_nvtx, "NVTX"), (rprof.emit_itt, "ITT")):
        ctx = cls()
        with ctx:
            x = retrograd.ones(2, requires_grad=True)
            x.exp().sum().backward()
            with pytest.raises(RuntimeError, match=f"{kind} annotation context manager is not "
                                                   "reentrant"):
                ctx.__enter__()
        assert x.grad.tolist() == pytest.approx([2.718281828] * 2)
        with cls(enabled=False) as c:
            assert c is None
        assert _observe.engine is None


def test_profiler_with_anomaly_mode():
    with retrograd.autograd.set_detect_anomaly(True):
        with retrograd.autograd.profiler.profile() as prof:
            a = retrograd.tensor([-1.0], requires_grad=True)
            with pytest.raises(RuntimeError, match="returned nan"):
                with pytest.warns(UserWarning, match="Error detected in SqrtBackward0"):
                    a.sqrt().sum().backward()
        assert _observe.engine is not None
    assert _observe.engine is None
    assert "SqrtBackward0" in [e.name for e in prof.function_events]
