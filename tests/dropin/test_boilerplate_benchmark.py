"""``utils.benchmark``: Timer measures for real; Measurement and Compare print as
``torch.utils.benchmark`` does (compared on fixed times, so exactly)."""

import re

import pytest

import retrograd
import retrograd.utils.benchmark as rbench

pytestmark = pytest.mark.torch


@pytest.fixture(scope="module")
def tbench(torch):
    import torch.utils.benchmark as tbench
    return tbench


def _measurement(B, raw_times, number=1000, **spec):
    spec = {"stmt": "x + y", "setup": "pass", **spec}
    return B.Measurement(number, raw_times, B.TaskSpec(**spec))


def _body(m):
    """A Measurement's repr without its first line (the class and address)."""
    return repr(m).split("\n", 1)[1]


SPREADS = ([1.0e-3] * 7, [1e-3, 1.02e-3, 0.99e-3, 1.05e-3, 1.01e-3],
           [1e-3, 1.3e-3, 0.7e-3, 1.6e-3, 1.1e-3, 0.9e-3], [2.5e-2], [3e-7, 4e-7])


@pytest.mark.parametrize("times", SPREADS)
@pytest.mark.parametrize("spec", [{}, {"label": "add", "sub_label": "[4]", "description": "x"},
                                  {"stmt": "a = 1\nb = a", "setup": "import math\nx = 1",
                                   "sub_label": "two"}])
def test_measurement_statistics_and_repr(tbench, times, spec):
    ours, ref = _measurement(rbench, times, **spec), _measurement(tbench, times, **spec)
    assert _body(ours) == _body(ref)
    assert ours.mean == pytest.approx(ref.mean) and ours.median == pytest.approx(ref.median)
    assert ours.iqr == pytest.approx(ref.iqr) and ours.times == ref.times
    assert (ours.significant_figures, ours.has_warnings, ours.meets_confidence(),
            ours.title, ours.as_row_name, ours.env) == \
        (ref.significant_figures, ref.has_warnings, ref.meets_confidence(), ref.title,
         ref.as_row_name, ref.env)
    assert repr(ours).startswith("<retrograd.utils.benchmark")


def _results(B):
    """Two labels, two thread counts, two envs, a missing cell, varied spreads."""
    out = []
    for k, (threads, row, col, env) in enumerate(
            [(1, "[1]", "mul", None), (1, "[1]", "add", None), (1, "[64]", "mul", None),
             (1, "[64]", "add", None), (4, "[1]", "mul", None), (4, "[64]", "add", None)]):
        base = (k + 1) * 1.7e-6
        out.append(_measurement(B, [base * f for f in (1, 1.2, 0.9, 1.4, 1.05)],
                                number=1, label="ops", sub_label=row, description=col,
                                num_threads=threads, env=env))
    out.append(_measurement(B, [3e-3, 3.1e-3], label="other", description="big",
                            env="A"))
    out.append(_measurement(B, [2e-3, 2.2e-3], label="other", description="big",
                            env="B", stmt="y"))
    return out


@pytest.mark.parametrize("style", ["plain", "trim", "colorize", "rowwise", "warnings"])
def test_compare_table_matches_pytorch(tbench, style):
    tables = []
    for B in (rbench, tbench):
        c = B.Compare(_results(B))
        if style in ("trim", "colorize", "rowwise"):
            c.trim_significant_figures()
        if style == "colorize":
            c.colorize()
        if style == "rowwise":
            c.colorize(rowwise=True)
        if style == "warnings":
            c.highlight_warnings()
        tables.append(str(c))
    assert tables[0] == tables[1], f"\n{tables[0]}\n---- pytorch:\n{tables[1]}"


def test_compare_refuses_other_results():
    with pytest.raises(ValueError, match="Expected an instance of `Measurement`"):
        rbench.Compare([1.0])


def test_timer_measures_for_real():
    x = retrograd.ones(16)
    t = rbench.Timer("x * 2", globals={"x": x}, label="mul", sub_label="16",
                     description="x*2")
    m = t.timeit(50)
    assert m.number_per_run == 50 and len(m.times) == 1 and 0 < m.median < 0.1
    m = t.blocked_autorange(min_run_time=0.02)
    assert sum(m.raw_times) >= 0.02 and m.number_per_run >= 1 and len(m.times) >= 1
    m = t.adaptive_autorange(threshold=0.5, min_run_time=0.01, max_run_time=0.3)
    assert len(m.times) >= 1 and m.median > 0
    calls = []
    rbench.Timer("torch.zeros(3)", setup="import math").blocked_autorange(
        callback=lambda n, s: calls.append((n, s)), min_run_time=0.01)
    assert calls and all(s > 0 for _, s in calls)
    slow = rbench.Timer("time.sleep(0.002)", setup="import time").timeit(3)
    assert slow.median >= 0.002
    assert re.search(r"\n  1 measurement, 3 runs , 1 thread$", repr(slow))
    table = str(rbench.Compare([t.timeit(10), rbench.Timer("x + x", globals={"x": x},
                                label="mul", sub_label="16", description="x+x").timeit(10)]))
    assert table.startswith("[") and "x*2" in table and "Times are in" in table


def test_timer_argument_errors(tbench):
    for B in (rbench, tbench):
        with pytest.raises(ValueError, match="Currently only a `str` stmt is supported."):
            B.Timer(stmt=lambda: 1)
        with pytest.raises(ValueError, match="global_setup is C\\+\\+ only"):
            B.Timer(global_setup="int x;")
        with pytest.raises(NotImplementedError, match="See `Timer.blocked_autorange.`"):
            B.Timer().repeat()
    with pytest.raises(NotImplementedError, match="no C\\+\\+ API"):
        rbench.Timer(language="c++")


def test_num_threads_is_applied_and_restored():
    before = retrograd.get_num_threads()
    seen = []
    rbench.Timer("seen.append(torch.get_num_threads())", globals={"seen": seen},
                 num_threads=1).timeit(2)
    assert set(seen) == {1} and retrograd.get_num_threads() == before
