"""Op database entries for ``ops/sorting.py``, ``ops/special.py`` and ``ops/misc.py``.

Random float samples have no ties, so every selecting op has one right index; ties
appear only where the op defines which one wins (stable sort, mode, cummax) and in
integer samples, compared forward only.
"""

import numpy

import retrograd

from .op_db import ErrorInput, OpInfo, SampleInput, make_tensor, rng

_FLOAT = ("float32", "float64")
_WITH_INT = ("float32", "float64", "int64")


def _is_int(dtype):
    return numpy.dtype(dtype).kind in "biu"


def _maker(dtype, requires_grad, **defaults):
    def t(*shape, **kw):
        return make_tensor(*shape, dtype=dtype, requires_grad=requires_grad,
                           **{**defaults, **kw})
    return t


def _distinct(dtype, requires_grad):
    """Tensors without ties: integer samples are shuffled ranges (PyTorch's unstable sort
    orders tied integers its own way)."""
    if not _is_int(dtype):
        return _maker(dtype, requires_grad, low=-9, high=9)

    def t(*shape, noncontiguous=False):
        n = int(numpy.prod(shape))
        x = make_tensor(*shape, dtype=dtype, noncontiguous=noncontiguous)
        x._data[...] = rng.permutation(n).reshape(shape) - n // 2
        return x
    return t


def _with_nan(dtype, requires_grad, shape=(3, 5), at=((0, 1), (0, 3), (2, 0), (2, 2))):
    x = make_tensor(*shape, dtype=dtype)
    for i in at:
        x._data[i] = numpy.nan
    return x.requires_grad_(requires_grad)


# ---- sorting ----------------------------------------------------------------------------------

def _sort_samples(dtype, requires_grad):
    t = _distinct(dtype, requires_grad)
    yield SampleInput(t(5), name="1d")
    yield SampleInput(t(3, 4), args=(0,), name="dim0")
    yield SampleInput(t(2, 3, 4), kwargs={"dim": 1, "descending": True}, name="descending")
    yield SampleInput(t(3, 4), kwargs={"stable": True}, name="stable")
    yield SampleInput(t(3, 4), kwargs={"stable": True, "descending": True},
                      name="stable_descending")
    yield SampleInput(t(), name="0d")
    yield SampleInput(t(0, 3), name="empty")
    yield SampleInput(t(3, 4, noncontiguous=True), args=(-1, True), name="strided")
    if not _is_int(dtype):
        yield SampleInput(_with_nan(dtype, requires_grad), kwargs={"stable": True},
                          name="nan", nondifferentiable=True)
        yield SampleInput(_with_nan(dtype, requires_grad),
                          kwargs={"stable": True, "descending": True}, name="nan_descending",
                          nondifferentiable=True)


def _argsort_samples(dtype, requires_grad):
    t = _maker(dtype, False, low=-3, high=3)  # integer ties: stable order is defined
    yield SampleInput(t(6), kwargs={"stable": True}, name="1d")
    yield SampleInput(t(3, 6), kwargs={"dim": 0, "stable": True}, name="dim0")
    yield SampleInput(t(3, 6), kwargs={"descending": True, "stable": True},
                      name="descending")
    yield SampleInput(t(), name="0d")


def _dim_errors(name, *args):
    def errors():
        yield ErrorInput(SampleInput(make_tensor(3), args=args, kwargs={"dim": 1}),
                         IndexError, name="dim_range")
    return errors


def _topk_samples(dtype, requires_grad):
    t = _distinct(dtype, requires_grad)
    yield SampleInput(t(6), args=(3,), name="1d")
    yield SampleInput(t(3, 5), args=(2, 0), name="dim0")
    yield SampleInput(t(3, 5), args=(2,), kwargs={"largest": False}, name="smallest")
    yield SampleInput(t(2, 3, 4), args=(4, -1, True, True), name="k_all")
    yield SampleInput(t(3, 5), args=(0,), name="k0")
    yield SampleInput(t(), args=(1,), name="0d")


def _topk_errors():
    yield ErrorInput(SampleInput(make_tensor(3), args=(4,)), name="k_large")
    yield ErrorInput(SampleInput(make_tensor(3), args=(-1,)), name="k_negative")


def _kth_samples(dtype, requires_grad):
    t = _distinct(dtype, requires_grad)
    yield SampleInput(t(6), args=(3,), name="1d")
    yield SampleInput(t(3, 5), args=(2, 0), name="dim0")
    yield SampleInput(t(3, 5), args=(5, 1, True), name="keepdim")
    yield SampleInput(t(), args=(1,), name="0d")


def _kth_errors():
    yield ErrorInput(SampleInput(make_tensor(3), args=(4,)), name="k_large")
    yield ErrorInput(SampleInput(make_tensor(3), args=(0,)), name="k0")
    yield ErrorInput(SampleInput(make_tensor(0, 2), args=(1, 0)), IndexError, name="empty")


def _median_samples(dtype, requires_grad):
    t = _distinct(dtype, requires_grad)
    yield SampleInput(t(5), name="odd")
    yield SampleInput(t(2, 3), name="even")
    yield SampleInput(t(), name="0d")
    if not _is_int(dtype):
        yield SampleInput(_with_nan(dtype, requires_grad), name="nan", nondifferentiable=True)
        yield SampleInput(t(0), name="empty", nondifferentiable=True)


def _median_dim_samples(dtype, requires_grad):
    t = _distinct(dtype, requires_grad)
    yield SampleInput(t(3, 5), args=(1,), name="odd")
    yield SampleInput(t(4, 3), args=(0, True), name="even_keepdim")
    yield SampleInput(t(2, 3, 4), kwargs={"dim": -1}, name="3d")
    yield SampleInput(t(), args=(0,), name="0d")
    if not _is_int(dtype):
        yield SampleInput(_with_nan(dtype, requires_grad), args=(1,), name="nan",
                          nondifferentiable=True)
        x = _with_nan(dtype, False, at=((1, slice(None)), (0, 0)))
        yield SampleInput(x.requires_grad_(requires_grad), args=(1,), name="all_nan_row",
                          nondifferentiable=True)


def _median_errors():
    yield ErrorInput(SampleInput(make_tensor(0, 3), args=(0,)), IndexError, name="empty")
    yield ErrorInput(SampleInput(make_tensor(3), args=(1,)), IndexError, name="dim_range")


def _mode_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad, low=-9, high=9)
    yield SampleInput(t(3, 5), args=(1,), name="distinct")
    yield SampleInput(t(), name="0d")
    x = make_tensor(3, 7, dtype=dtype, low=-2, high=2)
    x._data[...] = numpy.round(x._data)  # many ties: the smallest most frequent value wins
    yield SampleInput(x.requires_grad_(requires_grad and not _is_int(dtype)), name="ties",
                      nondifferentiable=True)
    yield SampleInput(x, args=(0, True), name="ties_dim0", nondifferentiable=True)


def _cum_samples(dtype, requires_grad):
    t = _distinct(dtype, requires_grad)
    yield SampleInput(t(6), args=(0,), name="1d")
    yield SampleInput(t(3, 5), args=(1,), name="dim1")
    yield SampleInput(t(2, 3, 4), args=(-2,), name="3d")
    yield SampleInput(t(), args=(0,), name="0d")
    x = make_tensor(3, 7, dtype=dtype, low=-2, high=2)
    x._data[...] = numpy.round(x._data)
    yield SampleInput(x.requires_grad_(requires_grad and not _is_int(dtype)), args=(1,),
                      name="ties", nondifferentiable=True)
    if not _is_int(dtype):
        yield SampleInput(_with_nan(dtype, requires_grad), args=(1,), name="nan",
                          nondifferentiable=True)


def _logcumsumexp_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad, low=-3, high=3)
    yield SampleInput(t(6), args=(0,), name="1d")
    yield SampleInput(t(3, 5), args=(1,), name="dim1")
    yield SampleInput(t(2, 3, 4), args=(-2,), name="3d")
    yield SampleInput(t(), args=(0,), name="0d")
    big = make_tensor(2, 4, dtype=dtype, low=-800, high=800)
    yield SampleInput(big.requires_grad_(requires_grad), args=(1,), name="wide_range")


def _quantile_samples(interpolation):
    def samples(dtype, requires_grad):
        t = _maker(dtype, requires_grad, low=-9, high=9)
        kw = {"interpolation": interpolation}
        q = make_tensor(3, dtype=dtype, low=0, high=1)
        yield SampleInput(t(7), args=(0.3,), kwargs=kw, name="scalar_q")
        yield SampleInput(t(3, 5), args=(q,), kwargs=kw, name="tensor_q")
        yield SampleInput(t(3, 5), args=(0.75, 1), kwargs=kw, name="dim1")
        yield SampleInput(t(3, 5), args=(q, 0, True), kwargs=kw, name="dim0_keepdim")
        yield SampleInput(t(2, 3), args=(1.0,), kwargs={**kw, "keepdim": True},
                          name="keepdim_all")
        yield SampleInput(_with_nan(dtype, requires_grad), args=(0.4, 1), kwargs=kw,
                          name="nan", nondifferentiable=True)
    return samples


def _quantile_errors(name):
    def errors():
        yield ErrorInput(SampleInput(make_tensor(3), args=(1.5,)), name="q_range")
        yield ErrorInput(SampleInput(make_tensor(3), args=(0.5,),
                                     kwargs={"interpolation": "foo"}), name="interpolation")
        yield ErrorInput(SampleInput(make_tensor(3, dtype="int64"), args=(0.5,)), name="int")
        yield ErrorInput(SampleInput(make_tensor(0), args=(0.5,)), name="empty")
        yield ErrorInput(SampleInput(make_tensor(3, dtype="float64"),
                                     args=(make_tensor(2),)), name="q_dtype")
    return errors


def _unique_samples(dtype, requires_grad):
    x = make_tensor(4, 5, dtype=dtype, low=-2, high=2)
    x._data[...] = numpy.round(x._data)
    yield SampleInput(x, name="plain")
    yield SampleInput(x, kwargs={"return_inverse": True, "return_counts": True}, name="all")
    yield SampleInput(x, kwargs={"return_counts": True}, name="counts")
    rows = make_tensor(5, 3, dtype=dtype, low=-1, high=1)
    rows._data[...] = numpy.round(rows._data)
    rows._data[3] = rows._data[0]
    yield SampleInput(rows, kwargs={"dim": 0, "return_inverse": True, "return_counts": True},
                      name="dim0")
    yield SampleInput(rows, kwargs={"dim": 1, "return_inverse": True}, name="dim1")
    yield SampleInput(make_tensor(dtype=dtype), kwargs={"return_inverse": True}, name="0d")


def _unique_consecutive_samples(dtype, requires_grad):
    x = retrograd.tensor([1, 1, 2, 2, 3, 1, 1, 2]).to(getattr(retrograd, dtype))
    yield SampleInput(x, name="plain")
    yield SampleInput(x, kwargs={"return_inverse": True, "return_counts": True}, name="all")
    rows = retrograd.tensor([[1, 2], [1, 2], [0, 5], [1, 2]]).to(getattr(retrograd, dtype))
    yield SampleInput(rows, kwargs={"dim": 0, "return_inverse": True, "return_counts": True},
                      name="dim0")


# ---- special functions ------------------------------------------------------------------------

def _unary_samples(low, high, extra=()):
    def samples(dtype, requires_grad):
        t = _maker(dtype, requires_grad, low=low, high=high)
        yield SampleInput(t(3, 4), name="2d")
        yield SampleInput(t(), name="0d")
        yield SampleInput(t(0, 2), name="empty")
        yield SampleInput(t(2, 3, noncontiguous=True), name="strided")
        if extra and not _is_int(dtype):
            x = retrograd.tensor(list(extra), dtype=getattr(retrograd, dtype))
            yield SampleInput(x.requires_grad_(requires_grad), name="points")
    return samples


def _polygamma_samples(dtype, requires_grad):
    for n in range(4):
        x = make_tensor(3, 4, dtype=dtype, low=0.5, high=3, requires_grad=requires_grad)
        yield SampleInput(n, args=(x,), name=f"n{n}")


def _polygamma_errors():
    yield ErrorInput(SampleInput(-1, args=(make_tensor(3),)), name="negative_n")


def _polygamma_method_samples(dtype, requires_grad):
    for s in _polygamma_samples(dtype, requires_grad):
        yield SampleInput(s.args[0], args=(s.input,), name=s.name)


def _binary_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad, low=-3, high=3)
    yield SampleInput(t(3, 4), args=(t(3, 4),), name="same_shape")
    yield SampleInput(t(3, 4), args=(t(4),), name="broadcast")
    yield SampleInput(t(), args=(t(2, 3),), name="0d_self")
    big = make_tensor(3, dtype=dtype, low=500, high=900)
    yield SampleInput(big.requires_grad_(requires_grad), args=(t(3),), name="large")


def _binary_errors(name):
    def errors():
        yield ErrorInput(SampleInput(make_tensor(3), args=(1.0,)), TypeError, name="scalar")
        yield ErrorInput(SampleInput(make_tensor(3, dtype="int64"),
                                     args=(make_tensor(3, dtype="int64"),)),
                         NotImplementedError, name="int")
    return errors


def _copysign_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad, low=-3, high=3, exclude_zero=True)
    yield SampleInput(t(3, 4), args=(t(3, 4),), name="same_shape")
    yield SampleInput(t(3, 4), args=(t(4),), name="broadcast")
    yield SampleInput(t(3, 4), args=(-1.0,), name="scalar")
    yield SampleInput(t(3), args=(2,), name="int_scalar")
    if not _is_int(dtype):
        z = make_tensor(4, dtype=dtype)
        z._data[1] = 0
        yield SampleInput(z.requires_grad_(requires_grad), args=(t(4),), name="zero",
                          nondifferentiable=True)


def _heaviside_samples(dtype, requires_grad):
    x = make_tensor(3, 4, dtype=dtype, low=-2, high=2)
    x._data[x._data.__abs__() < 0.7] = 0
    yield SampleInput(x, args=(make_tensor(4, dtype=dtype),), name="broadcast")
    yield SampleInput(x, args=(make_tensor(dtype=dtype),), name="0d_values")


def _heaviside_errors():
    yield ErrorInput(SampleInput(make_tensor(3), args=(make_tensor(3, dtype="int64"),)),
                     name="dtypes")
    yield ErrorInput(SampleInput(make_tensor(3), args=(0.5,)), TypeError, name="scalar")


def _inplace(name):
    """``x.clone().<name>(...)``: in place on a non-leaf copy."""
    fn = lambda x, *a, **k: getattr(x.clone(), name)(*a, **k)  # noqa: E731
    return dict(op=fn, torch_op=fn)


def _inplace_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad, low=0.5, high=0.9)
    yield SampleInput(t(3, 4), name="2d")


_SPECIAL = (("erfc", -2, 2, (0.0, 3.0)), ("erfinv", -0.9, 0.9, (0.0,)),
            ("lgamma", 0.2, 4, (-0.5, -1.5, 10.0)), ("digamma", 0.2, 4, (-0.5, -1.5, 10.0)),
            ("i0", -3, 3, (0.0,)), ("sinc", -2, 2, (1.0, -0.5, 2.5)),
            ("deg2rad", -180, 180, ()), ("rad2deg", -3, 3, ()))


OPS = [
    OpInfo("sort", _sort_samples, dtypes=_WITH_INT, error_inputs=_dim_errors("sort")),
    OpInfo("sort", _sort_samples, variant="method", method=True, dtypes=_FLOAT),
    OpInfo("argsort", _argsort_samples, dtypes=("float64", "int64"), supports_grad=False),
    OpInfo("msort", lambda dtype, rg: (s for s in _sort_samples(dtype, rg) if not s.kwargs
                                       and not s.args), dtypes=_WITH_INT),
    OpInfo("topk", _topk_samples, dtypes=_WITH_INT, error_inputs=_topk_errors),
    OpInfo("kthvalue", _kth_samples, dtypes=_WITH_INT, error_inputs=_kth_errors),
    OpInfo("median", _median_samples, dtypes=_WITH_INT),
    OpInfo("median", _median_dim_samples, variant="dim", dtypes=_WITH_INT,
           error_inputs=_median_errors),
    OpInfo("nanmedian", _median_samples, dtypes=_FLOAT),
    OpInfo("nanmedian", _median_dim_samples, variant="dim", dtypes=_FLOAT),
    OpInfo("mode", _mode_samples, dtypes=_WITH_INT),
    OpInfo("cummax", _cum_samples, dtypes=_WITH_INT),
    OpInfo("cummin", _cum_samples, dtypes=_WITH_INT),
    OpInfo("logcumsumexp", _logcumsumexp_samples, dtypes=_FLOAT),
    *(OpInfo(name, _quantile_samples(i), variant=i, dtypes=_FLOAT,
             compare_grad_with_torch=False,  # grad_fn names differ: see test_sorting.py
             error_inputs=_quantile_errors(name) if i == "linear" else None)
      for name in ("quantile", "nanquantile")
      for i in ("linear", "lower", "higher", "midpoint", "nearest")),
    OpInfo("unique", _unique_samples, dtypes=_WITH_INT, supports_grad=False),
    OpInfo("unique_consecutive", _unique_consecutive_samples, dtypes=_WITH_INT,
           supports_grad=False),
    *(OpInfo(name, _unary_samples(lo, hi, extra), dtypes=_WITH_INT)
      for name, lo, hi, extra in _SPECIAL),
    *(OpInfo(f"{name}_", _inplace_samples, variant="inplace", **_inplace(f"{name}_"))
      for name, *_ in _SPECIAL),
    OpInfo("polygamma", _polygamma_samples, dtypes=_WITH_INT, error_inputs=_polygamma_errors),
    OpInfo("polygamma", _polygamma_method_samples, variant="method", method=True),
    OpInfo("logaddexp", _binary_samples, error_inputs=_binary_errors("logaddexp")),
    OpInfo("logaddexp2", _binary_samples, error_inputs=_binary_errors("logaddexp2")),
    OpInfo("copysign", _copysign_samples, dtypes=_WITH_INT),
    OpInfo("heaviside", _heaviside_samples, dtypes=_WITH_INT, supports_grad=False,
           error_inputs=_heaviside_errors),
]
