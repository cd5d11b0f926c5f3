"""Op database entries for ``ops/statistics.py``: histograms, bincount, cov and corrcoef.
Histogram samples put points on bin edges (integer data over integer edges), outside the
range and at its ends, where a bin is decided by the last edge at or below a value."""

import math

import retrograd

from ._core import ErrorInput, OpInfo, SampleInput, make_tensor, maker as _maker


def _histc_samples(dtype, requires_grad):
    x = make_tensor(20, dtype=dtype, low=-3, high=3)
    yield SampleInput(x, kwargs={"bins": 7}, name="data_range")
    yield SampleInput(x, args=(4, -1, 1), name="range")
    yield SampleInput(make_tensor(3, 4, dtype=dtype), name="default_bins")


def _histc_errors():
    yield ErrorInput(SampleInput(make_tensor(3, dtype="int64")), NotImplementedError,
                     name="int")
    yield ErrorInput(SampleInput(make_tensor(3), kwargs={"bins": 0}), name="bins")
    yield ErrorInput(SampleInput(make_tensor(3), kwargs={"min": 2, "max": 1}), name="range")
    yield ErrorInput(SampleInput(make_tensor(3), kwargs={"min": 0, "max": math.inf}),
                     name="infinite_range")
    yield ErrorInput(SampleInput(retrograd.tensor([0.5, -math.inf])), name="infinite_data")
    for lo, hi in ((0, 1e300), (-1e39, 0)):  # past float32's range: c10's overflow error
        yield ErrorInput(SampleInput(make_tensor(3, dtype="float32"),
                                     kwargs={"min": lo, "max": hi}), name=f"overflow_{hi}")


def _bincount_samples(dtype, requires_grad):
    x = retrograd.tensor([1, 1, 3, 0, 7]).to(getattr(retrograd, dtype))
    yield SampleInput(x, name="plain")
    yield SampleInput(x, kwargs={"minlength": 10}, name="minlength")
    yield SampleInput(x, args=(make_tensor(5, dtype="float64"),), name="weights")


def _bincount_errors():
    yield ErrorInput(SampleInput(retrograd.tensor([-1, 2])), name="negative")
    yield ErrorInput(SampleInput(retrograd.tensor([[1]])), name="2d")
    yield ErrorInput(SampleInput(make_tensor(3)), NotImplementedError, name="float")


def _cov_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    yield SampleInput(t(3, 5), name="2d")
    yield SampleInput(t(5), name="1d")
    yield SampleInput(t(3, 5), kwargs={"correction": 0}, name="correction0")
    yield SampleInput(t(3, 4), kwargs={"fweights": retrograd.tensor([1, 2, 1, 3])},
                      name="fweights")
    yield SampleInput(t(3, 4), kwargs={"aweights": make_tensor(4, dtype=dtype, low=0.5,
                                                               high=2)}, name="aweights")
    yield SampleInput(t(3, 4), kwargs={"fweights": retrograd.tensor([1, 2, 1, 3]),
                                       "aweights": make_tensor(4, dtype=dtype, low=0.5,
                                                               high=2)}, name="both")


def _corrcoef_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    yield SampleInput(t(3, 5), name="2d")
    yield SampleInput(t(5), name="1d")


def _histogram_samples(dtype, requires_grad):
    x = make_tensor(30, dtype=dtype, low=-3, high=3)
    yield SampleInput(x, args=(5,), name="bins")
    yield SampleInput(x, args=(4,), kwargs={"range": (-1.0, 2.0), "density": True},
                      name="range_density")
    yield SampleInput(x, kwargs={"bins": retrograd.tensor([-3.0, -1.0, 0.0, 2.5, 3.0],
                                                          dtype=getattr(retrograd, dtype))},
                      name="edges")
    yield SampleInput(x, args=(3,), kwargs={"weight": make_tensor(30, dtype=dtype, low=0,
                                                                  high=1)}, name="weight")


def _histogram_errors():
    x = make_tensor(5)
    yield ErrorInput(SampleInput(x, args=(4,), kwargs={"range": (0.0, math.inf)}),
                     name="infinite_range")
    yield ErrorInput(SampleInput(x, args=(4,), kwargs={"range": (math.nan, 1.5)}),
                     name="nan_range")
    yield ErrorInput(SampleInput(x, args=(4,), kwargs={"range": (1.0, 0.25)}),
                     name="reversed_range")
    yield ErrorInput(SampleInput(retrograd.tensor([1.0, math.inf]), args=(4,)),
                     name="infinite_data")
    yield ErrorInput(SampleInput(retrograd.tensor([1.0, math.nan]), args=(4,)),
                     name="nan_data")
    for lo, hi in ((0.0, 1e300), (-1e39, 1.0)):  # past float32's range: c10's overflow error
        yield ErrorInput(SampleInput(make_tensor(5, dtype="float32"), args=(4,),
                                     kwargs={"range": (lo, hi)}), name=f"overflow_{hi}")


def _histogramdd_samples(dtype, requires_grad):
    x = make_tensor(20, 2, dtype=dtype, low=-3, high=3)
    w = make_tensor(20, dtype=dtype, low=0, high=1)
    yield SampleInput(x, args=(3,), name="bins")
    yield SampleInput(make_tensor(4, 5, 3, dtype=dtype), args=([2, 3, 4],), name="bins_list")
    yield SampleInput(x, args=((2, 3),), kwargs={"range": [-1, 1, -2.0, 2.5], "weight": w},
                      name="range_weight")
    yield SampleInput(x, args=(3,), kwargs={"weight": w, "density": True},
                      name="weight_density")
    edges = [retrograd.tensor(e, dtype=getattr(retrograd, dtype))
             for e in ([-3.0, -1.0, 0.0, 2.5, 3.0], [-2.0, 2.0])]
    yield SampleInput(x, kwargs={"bins": edges}, name="edges")
    yield SampleInput(x, args=(edges,), kwargs={"density": True, "range": [0, 1, 0, 1]},
                      name="edges_density")
    ints = retrograd.tensor([[0, 4], [1, 1], [2, 3], [4, 0], [3, 3], [2, 2]],
                            dtype=getattr(retrograd, dtype))
    yield SampleInput(ints, args=(4,), name="on_edges")
    yield SampleInput(ints, args=([3, 2],), kwargs={"range": [1, 3, 0, 2]},
                      name="on_edges_and_outside")
    same = make_tensor(6, 2, dtype=dtype)
    same._data[:, 1] = 0.25
    yield SampleInput(same, args=(2,), name="one_value")
    yield SampleInput(make_tensor(0, 2, dtype=dtype), args=(2,), kwargs={"density": True},
                      name="empty")
    yield SampleInput(make_tensor(3, 0, dtype=dtype), args=([],), name="no_dimensions")


def _histogramdd_errors():
    x = make_tensor(4, 2)
    edge = retrograd.tensor([0.0, 1.0])
    for bins, name in ((0, "bins_0"), (-1, "bins_-1"), (-2, "bins_-2"), ([2, 3, 4], "bins_n"),
                       ([edge], "edges_n"), ([edge, edge.double()], "edges_dtype"),
                       ([edge, edge.reshape(1, 2)], "edges_2d"), ([edge, edge[:0]], "no_edges"),
                       ([edge, edge[:1]], "one_edge")):
        yield ErrorInput(SampleInput(x, args=(bins,)), name=name)
    yield ErrorInput(SampleInput(make_tensor(4), args=(2,)), name="1d")
    yield ErrorInput(SampleInput(make_tensor(), args=(2,)), IndexError, name="0d")
    yield ErrorInput(SampleInput(make_tensor(), args=([2],)), name="0d_list")
    for rng, name in (([0, 1], "range_n"), ([1, 0, 0, 1], "reversed_range"),
                      ([0, math.inf, 0, 1], "infinite_range"),
                      ([0, 1, math.nan, 1], "nan_range")):
        yield ErrorInput(SampleInput(x, args=(2,), kwargs={"range": rng}), name=name)
    for bad, name in ((math.inf, "infinite_data"), (math.nan, "nan_data")):
        y = make_tensor(4, 2)
        y._data[2, 1] = bad
        yield ErrorInput(SampleInput(y, args=(2,)), name=name)
    for w, name in ((make_tensor(4, dtype="float64"), "weight_dtype"),
                    (make_tensor(3), "weight_shape"), (make_tensor(), "weight_0d")):
        yield ErrorInput(SampleInput(x, args=(2,), kwargs={"weight": w}), name=name)
    for dtype, kwargs in (("int64", {}), ("int64", {"range": [0, 1, 0, 1]}),
                          ("bool", {"range": [0, 1, 0, 1]}), ("float16", {})):
        yield ErrorInput(SampleInput(make_tensor(4, 2, dtype=dtype), args=(2,), kwargs=kwargs),
                         NotImplementedError, name=f"{dtype}_{len(kwargs)}")
    for bins, kwargs, name in ((2.5, {}, "float_bins"), ([2, 2.5], {}, "float_in_bins"),
                               ([edge, 2], {}, "int_after_edges"), ([True, 2], {}, "bool_bins"),
                               (2, {"range": retrograd.tensor([0.0, 1.0, 0.0, 1.0])},
                                "tensor_range"),
                               (2, {"range": [0, "1", 0, 1]}, "str_in_range")):
        yield ErrorInput(SampleInput(x, args=(bins,), kwargs=kwargs), TypeError, name=name)


OPS = [
    OpInfo("histc", _histc_samples, supports_grad=False, error_inputs=_histc_errors),
    OpInfo("histogram", _histogram_samples, supports_grad=False,
           error_inputs=_histogram_errors),
    OpInfo("histogramdd", _histogramdd_samples, supports_grad=False,
           error_inputs=_histogramdd_errors),
    OpInfo("bincount", _bincount_samples, dtypes=("int64",), supports_grad=False,
           error_inputs=_bincount_errors),
    OpInfo("cov", _cov_samples, tolerances={"float32": (1e-5, 1e-5)}),
    OpInfo("corrcoef", _corrcoef_samples, tolerances={"float32": (1e-5, 1e-5)}),
]
