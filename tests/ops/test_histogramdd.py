"""``torch.histogramdd`` beyond the op database's samples: equal bins' edges as PyTorch's
linspace makes them, points lying exactly on those edges (through 1-D ``histogram`` too),
and what it returns."""

import numpy
import pytest

import retrograd

_RNG = numpy.random.default_rng(7)
_RANGES = [(float(a), float(b), int(n)) for (a, b), n in zip(
    numpy.sort(_RNG.standard_normal((40, 2)) * 10.0 ** _RNG.integers(-3, 4, (40, 1)), axis=1),
    _RNG.integers(1, 40, 40), strict=True)]


@pytest.mark.torch
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_equal_bin_edges_are_torchs_bit_for_bit(torch, dtype):
    for lo, hi, n in _RANGES:
        r = retrograd.histogramdd(retrograd.zeros(1, 1, dtype=getattr(retrograd, dtype)), n,
                                  range=[lo, hi]).bin_edges[0]
        t = torch.histogramdd(torch.zeros(1, 1, dtype=getattr(torch, dtype)), n,
                              range=[lo, hi]).bin_edges[0]
        numpy.testing.assert_array_equal(r.numpy(), t.numpy(), err_msg=f"{lo}, {hi}, {n}")


@pytest.mark.torch
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_points_on_the_edges_fall_in_torchs_bins(torch, dtype):
    """Every point is an edge (and its neighbours one unit either side): each lands in
    the bin PyTorch puts it in, the last edge in the last bin."""
    edges = torch.histogramdd(torch.zeros(1, 2, dtype=getattr(torch, dtype)), [7, 5],
                              range=[-1.3, 2.9, 0.1, 0.7]).bin_edges
    cols = []
    for e in edges:
        e = e.numpy()
        near = numpy.concatenate([e, numpy.nextafter(e, -numpy.inf),
                                  numpy.nextafter(e, numpy.inf)])
        cols.append(numpy.resize(near, 3 * 8))
    points = numpy.stack(cols, axis=1)
    r = retrograd.histogramdd(retrograd.from_numpy(points), [7, 5], range=[-1.3, 2.9, 0.1, 0.7])
    t = torch.histogramdd(torch.from_numpy(points), [7, 5], range=[-1.3, 2.9, 0.1, 0.7])
    numpy.testing.assert_array_equal(r.hist.numpy(), t.hist.numpy())
    assert r.hist.sum().item() == t.hist.sum().item() > 0


@pytest.mark.torch
def test_what_histogramdd_returns_as_torch(torch):
    """A ``torch.return_types.histogramdd`` whose edges are a tuple (the given edge
    tensors themselves); no Tensor method."""
    edges = [retrograd.tensor([0.0, 1.0, 2.0]), retrograd.tensor([0.0, 2.0])]
    r = retrograd.histogramdd(retrograd.ones(3, 2), edges)
    t = torch.histogramdd(torch.ones(3, 2), [torch.tensor([0.0, 1.0, 2.0]),
                                             torch.tensor([0.0, 2.0])])
    assert type(r).__name__ == type(t).__name__ == "histogramdd"
    assert r._fields == ("hist", "bin_edges") and type(r.bin_edges) is tuple
    assert all(a is b for a, b in zip(r.bin_edges, edges, strict=True))
    assert repr(r) == repr(t)
    assert hasattr(retrograd.Tensor, "histogramdd") == hasattr(torch.Tensor, "histogramdd")


@pytest.mark.torch
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_histogram_bins_edge_neighbours_as_torch(torch, dtype):
    """1-D ``histogram`` bins through the histogramdd kernel: the edges, their
    neighbours either side and random values land in PyTorch's bins, with equal bins
    over the data's range or a given one, or given edges; weights sum in the dtype in
    the input's order."""
    rng = numpy.random.default_rng(11)
    for trial, (lo, hi, n) in enumerate(_RANGES):
        edges = torch.linspace(lo, hi, n + 1, dtype=getattr(torch, dtype)).numpy()
        values = numpy.concatenate([edges, numpy.nextafter(edges, numpy.inf),
                                    numpy.nextafter(edges, -numpy.inf),
                                    rng.uniform(lo, hi, 40).astype(edges.dtype)])
        weight = rng.uniform(0, 2, values.size).astype(edges.dtype)
        kwargs = {"range": (lo, hi)} if trial % 2 else {}
        if trial % 3 == 0:
            kwargs["weight"] = weight
        for bins in (n, edges):
            if not isinstance(bins, int) and "range" in kwargs:
                continue
            got = retrograd.histogram(
                retrograd.from_numpy(values), bins if isinstance(bins, int)
                else retrograd.from_numpy(bins),
                **{k: retrograd.from_numpy(v) if k == "weight" else v
                   for k, v in kwargs.items()})
            want = torch.histogram(
                torch.from_numpy(values), bins if isinstance(bins, int)
                else torch.from_numpy(bins),
                **{k: torch.from_numpy(v) if k == "weight" else v for k, v in kwargs.items()})
            numpy.testing.assert_array_equal(got.hist.numpy(), want.hist.numpy())
            numpy.testing.assert_array_equal(got.bin_edges.numpy(), want.bin_edges.numpy())
