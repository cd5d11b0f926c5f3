"""Differential fuzzing against PyTorch: every op of ``specs.SPECS`` on drawn inputs.

Each mismatch must be covered by a registry entry (a deliberate deviation, or a
known open bug while its fix lands); any other fails the test with a torch
reproducer. The default run is derandomized (the same examples every run, so CI
stays stable): 40 examples per op (5 per cross-family KL divergence), about 40 s of
CPU. ``pytest -m slow tests/fuzz`` draws fresh examples, 200 per op.
``tests/fuzz/report.py`` counts mismatches per class.
"""

import pathlib
import re

import numpy
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from . import cases, compare, registry, specs
from .deviations import DEVIATIONS
from .known_bugs import KNOWN_BUGS

DEFAULT_EXAMPLES = 40
SLOW_EXAMPLES = 200
DOC = pathlib.Path(__file__).resolve().parents[2] / "docs" / "deviations.md"


def _check(torch, name, data):
    spec = specs.SPECS[name]
    case = cases.Case(name, *spec.make(cases.HypothesisDraw(data)),
                      data.draw(st.integers(0, 2**32 - 1)))
    bad = [m for m in compare.compare(spec, case, torch) if registry.covering(case, m) is None]
    assert not bad, "\n".join([f"{case!r}:"] + [f"  {m.cls}: {m.detail[:300]}" for m in bad]
                              + ["reproducer:", specs.reproducer(case)])


def _fuzz(torch, name, **options):
    @settings(suppress_health_check=list(HealthCheck), database=None, **options)
    @given(st.data())
    def check(data):
        _check(torch, name, data)
    check()


@pytest.mark.torch
@pytest.mark.parametrize("name", sorted(specs.SPECS))
def test_op_matches_torch(torch, name):
    _fuzz(torch, name, max_examples=specs.SPECS[name].examples or DEFAULT_EXAMPLES,
          derandomize=True)


@pytest.mark.slow
@pytest.mark.torch
@pytest.mark.parametrize("name", sorted(specs.SPECS))
def test_op_matches_torch_long(torch, name):
    _fuzz(torch, name, max_examples=SLOW_EXAMPLES)


def test_every_deviation_names_a_section_of_the_deviations_file():
    sections = set(re.findall(r"^## (.+?)\s*$", DOC.read_text(), re.M))
    missing = {d.section for d in DEVIATIONS} - sections
    assert not missing, f"docs/deviations.md has no section {sorted(missing)}"


@pytest.mark.torch
def test_kl_ops_cover_every_pair_across_families_pytorch_registers(torch):
    registered = {(p.__name__, q.__name__) for p, q in torch.distributions.kl._KL_REGISTRY
                  if p is not q}
    assert set(specs.KL_CROSS.values()) == registered


def test_registry_entries_name_fuzzed_ops():
    named = {o for d in DEVIATIONS for o in d.ops} | {b.op for b in KNOWN_BUGS}
    assert named <= set(specs.SPECS), sorted(named - set(specs.SPECS))
    assert all(b.count >= 0 and b.cls for b in KNOWN_BUGS)
    assert len(specs.SPECS) >= 90


@pytest.mark.torch
def test_harness_names_disagreements(torch):
    """The comparison is not vacuous: a wrong value, dtype, gradient or exception shows."""
    def probe(call):
        spec = specs.OpSpec("probe", call, None, "probe", False)
        x = cases.TensorSpec(numpy.array([1.0, -2.0, 0.0], "float32"), "contiguous", True)
        return {m.cls for m in compare.compare(spec, cases.Case("probe", [x], {}, 0), torch)}

    ours = lambda lib: lib is not torch  # noqa: E731
    assert probe(lambda lib, x: x * 2 if ours(lib) else x * 3) == {"values differ (float32)"}
    assert probe(lambda lib, x: x.double() if ours(lib) else x) == {
        "dtype differs: retrograd float64 vs torch float32"}
    assert probe(lambda lib, x: x * x.detach() if ours(lib) else x * x) == {
        "grad: values differ (float32)"}
    assert probe(lambda lib, x: x.log() if ours(lib) else x.exp()) >= {
        "NaN where torch gives a number"}
    assert probe(lambda lib, x: x[5] if ours(lib) else x.view(7)) == {
        "exception type differs: retrograd IndexError vs torch RuntimeError"}
    assert probe(lambda lib, x: x[5] if ours(lib) else x[7]) == set()
    assert probe(lambda lib, x: x[5] if ours(lib) else x) == {
        "retrograd raises IndexError, torch does not"}
    assert probe(lambda lib, x: x if ours(lib) else x.view(7)) == {
        "torch raises RuntimeError, retrograd does not"}
