"""Recording spaces out CPython's cyclic collections (autograd/_collector.py).

The premise: retrograd's graphs and training steps leave no cyclic garbage, so reference
counting frees them and the collector's scans find nothing in them. The mechanism: a
Spacer raises the collector's thresholds after an older collection that saw nodes
recorded, restores them after any collection that saw none, and leaves a program's own
thresholds be; while nodes are recorded, each young collection that finds no garbage
doubles the young wait (up to a bound), and one that finds some, or a backward pass,
brings it back.
"""

import gc

import pytest

import retrograd
from retrograd.autograd import _collector


@pytest.fixture
def spacing(monkeypatch):
    """``spacing(thresholds)``: a fresh Spacer in gc.callbacks (and the one the engine
    tells of backward passes), made under ``thresholds``, in place of the global one; the
    thresholds and the global spacer come back after."""
    saved, installed = gc.get_threshold(), _collector.SPACER
    gc.callbacks.remove(installed)
    made = []

    def start(thresholds):
        gc.set_threshold(*thresholds)
        made.append(_collector.Spacer())
        gc.callbacks.append(made[-1])
        monkeypatch.setattr(_collector, "SPACER", made[-1])
        return made[-1]
    try:
        yield start
    finally:
        for spacer in made:
            gc.callbacks.remove(spacer)
        gc.set_threshold(*saved)
        gc.callbacks.append(installed)


def _record(n=8):
    x = retrograd.ones(4, requires_grad=True)
    for _ in range(n):
        x = (x * 0.5).sin()
    return x


def _train_steps(n):
    retrograd.manual_seed(0)
    nn = retrograd.nn
    model = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.LayerNorm(16), nn.Linear(16, 3))
    opt = retrograd.optim.Adam(model.parameters(), lr=1e-3)
    x, y = retrograd.randn(5, 8), retrograd.tensor([0, 2, 1, 1, 0])
    for _ in range(n):
        opt.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
    return model, opt


def test_training_steps_leave_no_cyclic_garbage():
    _train_steps(1)
    gc.collect()
    gc.disable()
    try:
        kept = _train_steps(3)
        assert gc.collect() == 0
    finally:
        gc.enable()
    del kept


def test_a_graph_dropped_without_backward_leaves_no_cyclic_garbage():
    gc.collect()
    gc.disable()
    try:
        y = _record(50)
        y.sum()
        del y
        assert gc.collect() == 0
    finally:
        gc.enable()


def test_the_spacer_is_installed():
    assert _collector.SPACER in gc.callbacks


_SPACED = (_collector.RECORDING_YOUNG_EVERY, _collector.RECORDING_MIDDLE_EVERY,
           _collector.RECORDING_FULL_EVERY)


def test_recording_raises_the_thresholds_and_idling_restores_them(spacing):
    spacing((700, 10, 10))
    y = _record()
    gc.collect(1)
    assert gc.get_threshold() == _SPACED
    del y
    gc.collect(1)  # nothing was recorded since the last one
    assert gc.get_threshold() == (700, 10, 10)


def _cycle():
    """Cyclic garbage: two lists that hold each other, dropped."""
    a, b = [], []
    a.append(b)
    b.append(a)


def _raised(spacing):
    """A spacer made at CPython's thresholds, raised by an older collection after a
    recording."""
    spacer = spacing((700, 10, 10))
    _record()
    gc.collect(1)
    return spacer


def _young_collection_while_recording():
    _record()
    gc.collect(0)


def test_clean_young_collections_double_the_young_wait_up_to_its_bound(spacing):
    _raised(spacing)
    young, *older = _SPACED
    waits = []
    for _ in range(6):
        _young_collection_while_recording()  # finds no garbage
        waits.append(gc.get_threshold()[0])
    assert waits == [min(young << k, _collector.RECORDING_YOUNG_MOST) for k in range(1, 7)]
    assert list(gc.get_threshold()[1:]) == older


def test_a_young_collection_that_finds_garbage_brings_the_wait_back(spacing):
    _raised(spacing)
    _young_collection_while_recording()
    _young_collection_while_recording()
    assert gc.get_threshold()[0] == 4 * _collector.RECORDING_YOUNG_EVERY
    _cycle()
    _young_collection_while_recording()
    assert gc.get_threshold() == _SPACED


def test_a_backward_pass_brings_the_wait_back(spacing):
    """A training loop's garbage waits no longer than before: the wait a long recording
    grew ends with its backward pass (a loop kept at 131072 held 11x the cycles)."""
    _raised(spacing)
    _young_collection_while_recording()
    y = _record()
    _young_collection_while_recording()
    assert gc.get_threshold()[0] == 4 * _collector.RECORDING_YOUNG_EVERY
    y.sum().backward()
    assert gc.get_threshold() == _SPACED


def test_a_young_collection_that_saw_no_recording_restores_the_thresholds(spacing):
    """Idle since the last collection: the program's thresholds at once, and the next
    recording starts from the first wait."""
    _raised(spacing)
    _young_collection_while_recording()
    assert gc.get_threshold()[0] == 2 * _collector.RECORDING_YOUNG_EVERY
    gc.collect(0)
    assert gc.get_threshold() == (700, 10, 10)
    _record()
    gc.collect(1)
    assert gc.get_threshold() == _SPACED


def test_a_programs_larger_thresholds_are_kept(spacing):
    spacing((50_000, 200, 5000))
    _record()
    gc.collect(1)
    assert gc.get_threshold() == (50_000, 200, 5000)


def _young_collections_in_a_step():
    """Youngest-generation collections while a 1000-op graph (w1's size) is recorded and
    run backward."""
    before = gc.get_stats()[0]["collections"]
    _record(500).sum().backward()
    return gc.get_stats()[0]["collections"] - before


def test_a_step_meets_no_young_collection_while_recording(spacing):
    """At CPython's 700, a 1000-op step's graph is scanned by young collections several
    times; spaced, the step runs between two of them and frees its graph first."""
    spacing((700, 10, 10))
    gc.collect()  # (no node recorded since the spacer was made: not spaced)
    assert _young_collections_in_a_step() >= 2
    gc.collect(1)  # recording seen: spaced from here, the young generation empty
    assert gc.get_threshold() == _SPACED
    assert _young_collections_in_a_step() == 0


def test_a_long_chain_meets_few_young_collections_and_no_older_one(spacing):
    """Recording a chain of 6e4 ops (some 3.3e5 graph objects) runs young collections,
    each object scanned once and each wait twice the one before (at a fixed 10000,
    33), but no middle one (at CPython's 10, three): it would rescan the chain promoted
    so far, cold (the collector's share of a 1e5-op chain grew 2-3x with it)."""
    _raised(spacing)  # (the middle generation's count starts from 0)
    assert gc.get_threshold() == _SPACED
    before = [s["collections"] for s in gc.get_stats()]
    y = _record(30_000)
    after = [s["collections"] for s in gc.get_stats()]
    assert 3 <= after[0] - before[0] <= 6
    assert after[1:] == before[1:]
    assert gc.get_threshold()[0] > _collector.RECORDING_YOUNG_EVERY
    del y


def test_a_1e4_op_chain_meets_no_young_collection_once_the_wait_has_grown(spacing):
    """The issue's chain (1e4 ops, some 55000 objects here) is recorded without a young
    collection once clean collections have grown the wait: its per-op cost is then the
    1e3-op chain's (benchmarks/deep_chain.py)."""
    _raised(spacing)
    for _ in range(4):
        _young_collection_while_recording()
    assert gc.get_threshold()[0] == _collector.RECORDING_YOUNG_MOST
    before = gc.get_stats()[0]["collections"]
    y = _record(5_000)
    assert gc.get_stats()[0]["collections"] == before
    del y


def test_thresholds_the_program_sets_stand(spacing):
    spacer = _raised(spacing)
    assert gc.get_threshold() == _SPACED
    gc.set_threshold(300, 3, 3)  # the program tunes the collector while spaced
    _record()
    gc.collect(1)
    gc.collect(1)
    assert gc.get_threshold() == (300, 3, 3)
    assert spacer.stopped


def test_thresholds_the_program_sets_stand_after_the_wait_has_grown(spacing):
    spacer = _raised(spacing)
    _young_collection_while_recording()
    gc.set_threshold(300, 3, 3)
    _young_collection_while_recording()  # (it would double the wait: the program's own)
    assert gc.get_threshold() == (300, 3, 3)
    assert spacer.stopped


def test_a_program_that_puts_back_the_spacers_thresholds_keeps_it(spacing):
    """Thresholds read while the wait had grown and set again later are the spacer's
    own: it goes on, and idling restores the program's."""
    spacer = _raised(spacing)
    _young_collection_while_recording()
    read = gc.get_threshold()
    _young_collection_while_recording()
    gc.set_threshold(*read)
    _young_collection_while_recording()
    assert not spacer.stopped
    assert gc.get_threshold()[0] == 2 * read[0]
    gc.collect(1)
    assert gc.get_threshold() == (700, 10, 10)
    gc.set_threshold(*read)  # put back while idle: raised, until a collection sees idling
    gc.collect(0)
    assert not spacer.stopped
    assert gc.get_threshold() == (700, 10, 10)


def test_no_recording_under_no_grad_leaves_thresholds_alone(spacing):
    spacing((700, 10, 10))
    with retrograd.no_grad():
        _record()
    gc.collect(1)
    assert gc.get_threshold() == (700, 10, 10)
