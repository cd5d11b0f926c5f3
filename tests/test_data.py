"""retrograd.utils.data against torch.utils.data: collated structures and dtypes, batches
drawn in the same sampler order, lengths, errors; samplers' seeding; worker processes."""

import collections
import math
import os
import sys

import numpy
import pytest

import retrograd
from retrograd.utils import data as rd

pytestmark = pytest.mark.torch
torch = pytest.importorskip("torch")
td = torch.utils.data

Point = collections.namedtuple("Point", ["x", "y"])


def _same(r, t):
    """retrograd structure ``r`` equals torch structure ``t``: container types, tensor
    dtypes, shapes and values."""
    if isinstance(t, torch.Tensor):
        assert isinstance(r, retrograd.Tensor), type(r)
        assert str(r.dtype) == str(t.dtype) and tuple(r.shape) == tuple(t.shape)
        numpy.testing.assert_array_equal(r.detach().numpy(), t.detach().numpy())
    elif isinstance(t, dict):
        assert type(r) is type(t) and list(r) == list(t)
        for k in t:
            _same(r[k], t[k])
    elif isinstance(t, (list, tuple)):
        assert type(r).__name__ == type(t).__name__ and len(r) == len(t)
        for a, b in zip(r, t, strict=True):
            _same(a, b)
    else:
        assert r == t and type(r) is type(t)


def _samples(make):
    """One sample list built with retrograd tensors and one with torch tensors."""
    return make(retrograd), make(torch)


COLLATE_CASES = {
    "tensors": lambda m: [m.tensor([1.0, 2.0]), m.tensor([3.0, 4.0])],
    "int_tensors": lambda m: [m.tensor(1), m.tensor(2)],
    "floats": lambda m: [1.5, 2.5],
    "ints": lambda m: [1, 2, 3],
    "bools": lambda m: [True, False],
    "strings": lambda m: ["a", "b"],
    "numpy": lambda m: [numpy.ones((2, 3), numpy.float32), numpy.zeros((2, 3), numpy.float32)],
    "numpy_int": lambda m: [numpy.arange(3), numpy.arange(3, 6)],
    "numpy_scalars": lambda m: [numpy.float32(1.5), numpy.float32(2.5)],
    "numpy_int_scalars": lambda m: [numpy.int64(1), numpy.int64(2)],
    "dicts": lambda m: [{"a": m.ones(2), "b": 1, "s": "x"}, {"a": m.zeros(2), "b": 2, "s": "y"}],
    "tuples": lambda m: [(m.ones(2), 0), (m.zeros(2), 1)],
    "lists": lambda m: [[m.ones(2), 0.5], [m.zeros(2), 1.5]],
    "namedtuples": lambda m: [Point(m.ones(1), 1), Point(m.zeros(1), 2)],
    "nested": lambda m: [{"p": (1, [2.0, "s"])}, {"p": (3, [4.0, "t"])}],
    "tuple_of_strings": lambda m: [("a", 1), ("b", 2)],
}


@pytest.mark.parametrize("case", list(COLLATE_CASES))
def test_default_collate_matches_torch(case):
    r, t = _samples(COLLATE_CASES[case])
    _same(rd.default_collate(r), td.default_collate(t))


@pytest.mark.parametrize("case", ["numpy", "numpy_scalars", "dicts", "tuples", "lists",
                                  "namedtuples", "strings"])
def test_default_convert_matches_torch(case):
    r, t = _samples(COLLATE_CASES[case])
    for a, b in zip(r, t, strict=True):
        _same(rd.default_convert(a), td.default_convert(b))


def test_default_collate_errors():
    for bad in ([object(), object()], [numpy.array(["a"]), numpy.array(["b"])]):
        with pytest.raises(TypeError) as te:
            td.default_collate(bad)
        with pytest.raises(TypeError) as re:
            rd.default_collate(bad)
        assert str(re.value).split("found")[0] == str(te.value).split("found")[0]
    with pytest.raises(RuntimeError, match="each element in list of batch should be of equal"):
        rd.default_collate([[1, 2], [1]])


def _dataset(m):
    x = m.arange(30.0).reshape(10, 3)
    return m.utils.data.TensorDataset(x, m.arange(10)) if m is torch else \
        rd.TensorDataset(x, m.arange(10))


def _loaders(**kwargs):
    return rd.DataLoader(_dataset(retrograd), **kwargs), td.DataLoader(_dataset(torch),
                                                                        **kwargs)


@pytest.mark.parametrize("kwargs", [
    {}, {"batch_size": 4}, {"batch_size": 4, "drop_last": True}, {"batch_size": None},
    {"batch_size": 3, "sampler": [9, 0, 4, 4, 2, 7, 1]},
    {"batch_sampler": [[3, 1], [0], [9, 8, 7]]},
    {"batch_size": 2, "collate_fn": lambda b: len(b)},
])
def test_dataloader_batches_match_torch(kwargs):
    r, t = _loaders(**kwargs)
    rb, tb = list(r), list(t)
    assert len(r) == len(t) == len(rb) == len(tb)
    for a, b in zip(rb, tb, strict=True):
        _same(a, b)


class _Stream:
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        info = (torch.utils.data.get_worker_info() if self.torch
                else rd.get_worker_info())
        lo, step = (0, 1) if info is None else (info.id, info.num_workers)
        return iter(range(lo, self.n, step))

    def __len__(self):
        return self.n


class RStream(_Stream, rd.IterableDataset):
    torch = False


class TStream(_Stream, td.IterableDataset):
    torch = True


@pytest.mark.parametrize("kwargs", [{}, {"batch_size": 3}, {"batch_size": 3, "drop_last": True},
                                    {"batch_size": None}])
def test_iterable_dataset_matches_torch(kwargs):
    r, t = rd.DataLoader(RStream(7), **kwargs), td.DataLoader(TStream(7), **kwargs)
    assert len(r) == len(t)
    rb, tb = list(r), list(t)
    assert len(rb) == len(tb)
    for a, b in zip(rb, tb, strict=True):
        _same(a, b)


def _error(make_r, make_t):
    with pytest.raises(Exception) as te:
        make_t()
    with pytest.raises(type(te.value)) as re:
        make_r()
    assert str(re.value) == str(te.value)


@pytest.mark.parametrize("kwargs", [
    {"num_workers": -1}, {"timeout": -1}, {"prefetch_factor": 2},
    {"persistent_workers": True}, {"shuffle": True, "sampler": [0]},
    {"batch_sampler": [[0]], "batch_size": 2}, {"batch_sampler": [[0]], "drop_last": True},
    {"batch_size": None, "drop_last": True}])
def test_dataloader_argument_errors(kwargs):
    _error(lambda: rd.DataLoader(_dataset(retrograd), **kwargs),
           lambda: td.DataLoader(_dataset(torch), **kwargs))


def test_iterable_dataloader_errors_and_frozen_attributes():
    for kw in ({"shuffle": True}, {"sampler": None, "batch_sampler": [[0]]}):
        with pytest.raises(ValueError, match="DataLoader with IterableDataset: expected"):
            rd.DataLoader(RStream(3), **kw)
    with pytest.raises(ValueError, match="batch_size attribute should not be set after "
                                         "DataLoader is initialized"):
        rd.DataLoader(RStream(3)).batch_size = 3


def test_shuffle_is_a_seeded_permutation():
    ds = _dataset(retrograd)
    retrograd.manual_seed(3)
    a = [b[1].tolist() for b in rd.DataLoader(ds, batch_size=4, shuffle=True)]
    retrograd.manual_seed(3)
    b = [b[1].tolist() for b in rd.DataLoader(ds, batch_size=4, shuffle=True)]
    assert a == b and sorted(sum(a, [])) == list(range(10)) and sum(a, []) != list(range(10))
    g1, g2 = retrograd.Generator().manual_seed(5), retrograd.Generator().manual_seed(5)
    epochs = [[x[1].tolist() for x in rd.DataLoader(ds, 5, shuffle=True, generator=g)]
              for g in (g1, g2)]
    assert epochs[0] == epochs[1]
    loader = rd.DataLoader(ds, 10, shuffle=True)
    assert next(iter(loader))[1].tolist() != next(iter(loader))[1].tolist()  # new epoch order


def test_samplers():
    data = range(6)
    assert list(rd.SequentialSampler(data)) == list(td.SequentialSampler(data))
    retrograd.manual_seed(0)
    perm = list(rd.RandomSampler(data))
    assert sorted(perm) == list(range(6)) and len(rd.RandomSampler(data)) == 6
    retrograd.manual_seed(0)
    assert list(rd.RandomSampler(data)) == perm
    s = rd.RandomSampler(data, num_samples=14)
    drawn = list(s)
    assert len(s) == 14 and len(drawn) == 14 and sorted(drawn[:12]) == sorted(list(data) * 2)
    rep = list(rd.RandomSampler(data, replacement=True, num_samples=50))
    assert len(rep) == 50 and set(rep) <= set(data) and len(set(rep)) < 50
    sub = list(rd.SubsetRandomSampler([10, 20, 30]))
    assert sorted(sub) == [10, 20, 30]
    w = list(rd.WeightedRandomSampler([0.0, 1.0, 3.0], 40))
    assert 0 not in w and set(w) == {1, 2}
    nr = list(rd.WeightedRandomSampler([0.0, 1.0, 3.0, 2.0], 4, replacement=False))
    assert sorted(nr) == [0, 1, 2, 3] and nr[-1] == 0
    g = lambda: retrograd.Generator().manual_seed(1)  # noqa: E731
    assert list(rd.WeightedRandomSampler([1, 2, 3], 9, generator=g())) == \
        list(rd.WeightedRandomSampler([1, 2, 3], 9, generator=g()))
    for bs, dl in ((3, False), (3, True), (1, False), (7, False)):
        assert list(rd.BatchSampler(data, bs, dl)) == list(td.BatchSampler(data, bs, dl))
        assert len(rd.BatchSampler(data, bs, dl)) == len(td.BatchSampler(data, bs, dl))


@pytest.mark.parametrize("make", [
    lambda m: m.RandomSampler(range(3), replacement=1),
    lambda m: m.RandomSampler(range(3), num_samples=0),
    lambda m: m.WeightedRandomSampler([1.0], 0),
    lambda m: m.WeightedRandomSampler([1.0], 2, replacement=None),
    lambda m: m.WeightedRandomSampler([[1.0]], 2),
    lambda m: m.BatchSampler(range(3), 0, False),
    lambda m: m.BatchSampler(range(3), 2, None),
    lambda m: list(m.WeightedRandomSampler([0.0, 0.0], 2)),
    lambda m: list(m.WeightedRandomSampler([1.0, -1.0], 2)),
    lambda m: list(m.WeightedRandomSampler([1.0, math.nan], 2)),
    lambda m: list(m.WeightedRandomSampler([1.0, 2.0], 3, replacement=False)),
])
def test_sampler_errors_match_torch(make):
    _error(lambda: make(rd), lambda: make(td))


def test_datasets_match_torch():
    a, b = list(range(5)), list(range(10, 13))
    rc, tc = rd.ConcatDataset([a, b]), td.ConcatDataset([a, b])
    assert len(rc) == len(tc) and rc.cumulative_sizes == tc.cumulative_sizes
    assert [rc[i] for i in range(-8, 8)] == [tc[i] for i in range(-8, 8)]
    _error(lambda: rc[-9], lambda: tc[-9])
    _error(lambda: rd.ConcatDataset([]), lambda: td.ConcatDataset([]))
    _error(lambda: rd.ConcatDataset([RStream(2)]), lambda: td.ConcatDataset([TStream(2)]))
    sub = rd.Subset(a, [4, 0])
    assert len(sub) == 2 and sub[0] == 4 and sub.__getitems__([1, 0]) == [0, 4]
    ds = rd.TensorDataset(retrograd.zeros(3, 2), retrograd.arange(3))
    assert len(ds) == 3 and ds[2][1].item() == 2
    _error(lambda: rd.TensorDataset(retrograd.zeros(3), retrograd.zeros(2)),
           lambda: td.TensorDataset(torch.zeros(3), torch.zeros(2)))
    assert isinstance(ds + ds, rd.ConcatDataset)
    assert list(RStream(2) + RStream(3)) == [0, 1, 0, 1, 2]
    assert rd.StackDataset(a, a)[1] == (1, 1) and rd.StackDataset(x=a)[2] == {"x": 2}
    with pytest.raises(NotImplementedError):
        rd.Dataset()[0]

    class Custom(rd.Subset):
        def __getitem__(self, i):
            return 0
    _error(lambda: Custom(a, [0]), lambda: type("Custom", (td.Subset,),
                                                  {"__getitem__": lambda s, i: 0})(a, [0]))


def test_random_split():
    data = list(range(10))
    for lengths in ([0.5, 0.3, 0.2], [0.34, 0.33, 0.33], [3, 7], [1.0]):
        rs = rd.random_split(data, lengths)
        ts = td.random_split(data, lengths)
        assert [len(s) for s in rs] == [len(s) for s in ts]
        assert sorted(x for s in rs for x in s) == data
    g = lambda: retrograd.Generator().manual_seed(7)  # noqa: E731
    assert [list(s) for s in rd.random_split(data, [4, 6], g())] == \
        [list(s) for s in rd.random_split(data, [4, 6], g())]
    for lengths in ([3, 3], [1.2, -0.2]):
        _error(lambda n=lengths: rd.random_split(data, n),
               lambda n=lengths: td.random_split(data, n))
    with pytest.warns(UserWarning, match="Length of split at index 2 is 0"):
        assert [len(s) for s in rd.random_split(list(range(3)), [0.5, 0.5, 0.0])] == [2, 1, 0]


# ---- worker processes ------------------------------------------------------------------
needs_fork = pytest.mark.skipif(sys.platform == "win32", reason="fork start method")


def _fail_on_five(i):
    if i == 5:
        raise ValueError("bad sample 5")
    return i


class _MissingKey(rd.Dataset):
    def __getitem__(self, i):
        return {}["absent"]

    def __len__(self):
        return 1


class _Failing(rd.Dataset):
    def __getitem__(self, i):
        return _fail_on_five(i)

    def __len__(self):
        return 8


def _record_pid(worker_id):
    info = rd.get_worker_info()
    assert info.id == worker_id and info.num_workers == 2
    info.dataset.pid = os.getpid()


class _Pids(rd.Dataset):
    pid = None

    def __getitem__(self, i):
        return (i, self.pid, rd.get_worker_info().seed, int(retrograd.randint(0, 10 ** 9, ())))

    def __len__(self):
        return 12


@needs_fork
def test_workers_keep_order_seed_and_match_single_process():
    r, t = _loaders(batch_size=3, sampler=[9, 0, 4, 4, 2, 7, 1], num_workers=2)
    rb = list(r)
    for a, b in zip(rb, list(t), strict=True):
        _same(a, b)
    loader = rd.DataLoader(_Pids(), batch_size=2, num_workers=2, worker_init_fn=_record_pid)
    batches = list(loader)
    assert [i for b in batches for i in b[0].tolist()] == list(range(12))
    pids = {p for b in batches for p in b[1].tolist()}
    assert len(pids) == 2 and os.getpid() not in pids
    seeds = {s for b in batches for s in b[2].tolist()}
    assert len(seeds) == 2 and max(seeds) - min(seeds) == 1  # base_seed + worker_id
    assert rd.get_worker_info() is None


@needs_fork
def test_workers_iterable_split_and_errors():
    r = list(rd.DataLoader(RStream(7), batch_size=2, num_workers=2))
    t = list(td.DataLoader(TStream(7), batch_size=2, num_workers=2))
    for a, b in zip(r, t, strict=True):
        _same(a, b)
    with pytest.raises(ValueError) as e:
        list(rd.DataLoader(_Failing(), batch_size=2, num_workers=2))
    assert "Caught ValueError in DataLoader worker process 0" in str(e.value)
    assert "bad sample 5" in str(e.value)
    # as PyTorch's, the iterator goes on after a worker's error, with the same workers
    results = []
    for lib in (rd, td):
        it, got = iter(lib.DataLoader(_Failing(), batch_size=2, num_workers=2)), []
        for _ in range(len(_Failing()) // 2):
            try:
                got.append(next(it).tolist())
            except ValueError:
                got.append("error")
        results.append(got)
    assert results[0] == results[1] and "error" in results[0]
    with pytest.raises(KeyError) as e:  # a KeyError's message prints line by line, as torch's
        list(rd.DataLoader(_MissingKey(), num_workers=1))
    assert str(e.value).startswith("Caught KeyError in DataLoader worker process 0.\n")


@needs_fork
def test_persistent_workers_reuse_processes():
    loader = rd.DataLoader(_Pids(), batch_size=4, num_workers=2, persistent_workers=True,
                           worker_init_fn=_record_pid)
    first = [p for b in loader for p in b[1].tolist()]
    second = [p for b in loader for p in b[1].tolist()]
    assert set(first) == set(second) and len(set(first)) == 2
    next(iter(loader))  # an epoch left early: its batches in flight must not leak into the next
    assert [i for b in loader for i in b[0].tolist()] == list(range(12))
    loader._iterator._shutdown_workers()
    stream = rd.DataLoader(RStream(7), batch_size=2, num_workers=2, persistent_workers=True)
    expected = [b.tolist() for b in td.DataLoader(TStream(7), batch_size=2, num_workers=2)]
    for _ in range(3):
        assert [b.tolist() for b in stream] == expected
    stream._iterator._shutdown_workers()


def test_utils_is_not_imported_with_retrograd():
    import subprocess
    code = "import sys, retrograd; print('retrograd.utils' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert out.stdout.strip() == "False"
    assert retrograd.utils.data.DataLoader is rd.DataLoader
