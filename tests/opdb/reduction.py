"""Op database entries for the reductions and scans of ``ops/reduction.py``.

Samples reduce over one dim, negative dims, tuples of dims, with and without
keepdim, over 0-d and empty tensors, and pass ``dtype=``; integer and bool
inputs check PyTorch's result dtypes. Points where the gradient is not
defined (ties of max/amax, zeros of norm) are marked ``nondifferentiable``:
their gradients are compared with PyTorch's choice only.
"""

import math

import numpy

import retrograd

from ._core import ErrorInput, OpInfo, SampleInput, make_tensor, maker as _maker


_FLOAT = ("float32", "float64")
_WITH_INT = ("float32", "float64", "int64")
_ALL = ("float32", "float64", "int64", "bool")


def _is_int(dtype):
    return numpy.dtype(dtype).kind in "biu"


def _dim_samples(t, keepdim=True, tuples=True, name=""):
    """The usual ``(dim, keepdim)`` argument patterns on tensors made by ``t``."""
    yield SampleInput(t(2, 3, 4), name=f"{name}all")
    yield SampleInput(t(2, 3, 4), args=(1,), name=f"{name}dim1")
    yield SampleInput(t(2, 3, 4), args=(-1,), name=f"{name}dim-1")
    if keepdim:
        yield SampleInput(t(2, 3, 4), args=(0, True), name=f"{name}dim0_keepdim")
    if tuples:
        yield SampleInput(t(2, 3, 4), args=((0, 2),), name=f"{name}dims02")
        if keepdim:
            yield SampleInput(t(2, 3, 4), args=((-1, 0),), kwargs={"keepdim": True},
                              name=f"{name}dims-1,0_keepdim")
    yield SampleInput(t(), name=f"{name}0d")
    yield SampleInput(t(), args=(0,), name=f"{name}0d_dim0")
    yield SampleInput(t(3, 4, noncontiguous=True), args=(1,), name=f"{name}strided")


# ---- sum, mean, prod ----------------------------------------------------------------------

def _sum_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    yield from _dim_samples(t)
    yield SampleInput(t(2, 3), args=((),), name="empty_dim_list")
    yield SampleInput(t(2, 3), args=(None, True), name="None_keepdim")
    yield SampleInput(t(0, 3), args=(1,), name="empty")
    yield SampleInput(t(0, 3), name="empty_all")
    yield SampleInput(t(2, 3), kwargs={"dtype": retrograd.float64}, name="dtype_float64")
    if not _is_int(dtype) and not requires_grad:  # no finite differences in float32
        yield SampleInput(t(2, 3), args=(1,), kwargs={"dtype": retrograd.float32},
                          name="dim_dtype_float32")


def _mean_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    yield from _dim_samples(t)
    yield SampleInput(t(2, 3), args=((),), name="empty_dim_list")
    yield SampleInput(t(0, 3), args=(1,), name="empty")
    yield SampleInput(t(2, 3), kwargs={"dtype": retrograd.float64}, name="dtype_float64")
    yield SampleInput(make_tensor(2, 3, dtype="int64"), args=(1,),
                      kwargs={"dtype": retrograd.float32}, name="int_with_dtype")


def _dim_errors():
    yield ErrorInput(SampleInput(make_tensor(2, 3), args=(2,)), IndexError, name="dim_range")
    yield ErrorInput(SampleInput(make_tensor(2, 3), args=((1, -1),)), name="dim_twice")
    yield ErrorInput(SampleInput(make_tensor(), args=(1,)), IndexError, name="0d_dim_range")


def _mean_errors():
    yield ErrorInput(SampleInput(make_tensor(2, 3, dtype="int64")), name="int")
    yield ErrorInput(SampleInput(make_tensor(2, 3, dtype="bool"), args=(0,)), name="bool")
    yield from _dim_errors()


def _nan_samples(dtype, requires_grad):
    x = make_tensor(3, 4, dtype=dtype)
    x._data[0, 1] = x._data[2, 3] = x._data[2, 0] = numpy.nan
    x.requires_grad_(requires_grad)
    yield SampleInput(x, name="all")
    yield SampleInput(x, args=(1,), name="dim1")
    yield SampleInput(x, args=((0, 1), True), name="dims01_keepdim")


def _prod_samples(dtype, requires_grad):
    lo, hi = (-3, 3) if _is_int(dtype) else (0.5, 1.5)
    t = _maker(dtype, requires_grad, low=lo, high=hi)
    yield SampleInput(t(2, 3, 4), name="all")
    yield SampleInput(t(2, 3, 4), args=(1,), name="dim1")
    yield SampleInput(t(2, 3, 4), args=(-1, True), name="dim-1_keepdim")
    yield SampleInput(t(), name="0d")
    yield SampleInput(t(), args=(0,), name="0d_dim0")
    yield SampleInput(t(2, 3), kwargs={"dtype": retrograd.float64}, name="dtype_float64")
    yield SampleInput(t(0, 3), args=(0,), name="empty")
    if _is_int(dtype):
        return
    for zeros in ((1,), (0, 2)):
        x = make_tensor(3, 4, dtype=dtype, low=lo, high=hi)
        x._data[zeros, 1] = 0
        x._data[1, 3] = 0
        x.requires_grad_(requires_grad)
        yield SampleInput(x, name=f"{len(zeros) + 1}_zeros")
        yield SampleInput(x, args=(0,), name=f"{len(zeros)}_zeros_in_column")
        yield SampleInput(x, args=(1, True), name="zero_rows_keepdim")


# ---- max, min, amax, amin, aminmax, argmax, argmin ----------------------------------------

def _ties(dtype, requires_grad):
    """A tensor whose maximum and minimum are each reached twice per row."""
    x = make_tensor(3, 4, dtype=dtype, low=-5, high=5)
    x._data[:, 3] = x._data.max(1)
    x._data[:, 0] = x._data.min(1)
    x._data[:, 1] = x._data[:, 0]
    return x.requires_grad_(requires_grad and not _is_int(dtype))


def _extreme_samples(dtype, requires_grad):
    """max()/min() over everything."""
    yield SampleInput(make_tensor(2, 3, 4, dtype=dtype, requires_grad=requires_grad),
                      name="all")
    yield SampleInput(make_tensor(dtype=dtype, requires_grad=requires_grad), name="0d")
    yield SampleInput(_ties(dtype, requires_grad), name="ties", nondifferentiable=True)
    if not _is_int(dtype):
        x = make_tensor(2, 3, dtype=dtype)
        x._data[1, 1] = numpy.nan
        yield SampleInput(x.requires_grad_(requires_grad), name="nan", nondifferentiable=True)


def _extreme_dim_samples(dtype, requires_grad):
    """max(dim)/min(dim): (values, indices); ties pick the first index, as PyTorch."""
    t = _maker(dtype, requires_grad)
    yield SampleInput(t(2, 3, 4), args=(1,), name="dim1")
    yield SampleInput(t(2, 3, 4), args=(-1, True), name="dim-1_keepdim")
    yield SampleInput(t(2, 3, 4), kwargs={"dim": 0, "keepdim": False}, name="kwargs")
    yield SampleInput(t(), args=(0,), name="0d")
    yield SampleInput(t(0, 3), args=(1,), name="empty_kept_dim")
    yield SampleInput(_ties(dtype, requires_grad), args=(1,), name="ties",
                      nondifferentiable=True)


def _extreme_binary_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    yield SampleInput(t(2, 3), args=(t(2, 3),), name="same_shape")
    yield SampleInput(t(2, 3), args=(t(3),), name="broadcast")


def _extreme_errors(name):
    def errors():
        yield ErrorInput(SampleInput(make_tensor(0, 3)), name="empty")
        yield ErrorInput(SampleInput(make_tensor(0, 3), args=(0,)), IndexError,
                         name="empty_dim")
        yield ErrorInput(SampleInput(make_tensor(2, 3), args=(2,)), IndexError,
                         name="dim_range")
    return errors


def _amax_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    yield from _dim_samples(t)
    yield SampleInput(t(0, 3), args=(1,), name="empty_kept_dim")
    yield SampleInput(_ties(dtype, requires_grad), args=(1,), name="ties",
                      nondifferentiable=True)
    yield SampleInput(_ties(dtype, requires_grad), name="ties_all", nondifferentiable=True)


def _amax_errors(name):
    def errors():
        yield ErrorInput(SampleInput(make_tensor(0, 3)), name="empty")
        yield ErrorInput(SampleInput(make_tensor(0, 3), args=(0,)), IndexError,
                         name="empty_dim")
        yield ErrorInput(SampleInput(make_tensor(2, 3), args=((0, 0),)), name="dim_twice")
    return errors


def _aminmax_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    yield SampleInput(t(2, 3, 4), name="all")
    yield SampleInput(t(2, 3, 4), kwargs={"dim": 1}, name="dim1")
    yield SampleInput(t(2, 3, 4), kwargs={"dim": -1, "keepdim": True}, name="dim-1_keepdim")
    yield SampleInput(t(), name="0d")
    yield SampleInput(_ties(dtype, requires_grad), kwargs={"dim": 1}, name="ties",
                      nondifferentiable=True)


def _aminmax_errors():
    yield ErrorInput(SampleInput(make_tensor(0, 3)), name="empty")
    yield ErrorInput(SampleInput(make_tensor(0, 3), kwargs={"dim": 0}), IndexError,
                     name="empty_dim")


def _arg_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    yield SampleInput(t(2, 3, 4), name="all")
    yield SampleInput(t(2, 3, 4), args=(1,), name="dim1")
    yield SampleInput(t(2, 3, 4), args=(-1, True), name="dim-1_keepdim")
    yield SampleInput(t(2, 3), kwargs={"keepdim": True}, name="all_keepdim")
    yield SampleInput(t(), name="0d")
    yield SampleInput(t(), args=(0,), name="0d_dim0")
    yield SampleInput(_ties(dtype, False), args=(1,), name="ties")


def _arg_errors(name):
    def errors():
        yield ErrorInput(SampleInput(make_tensor(0, 3)), IndexError, name="empty")
        yield ErrorInput(SampleInput(make_tensor(0, 3), args=(0,)), IndexError,
                         name="empty_dim")
        yield ErrorInput(SampleInput(make_tensor(2, 3, dtype="bool")), name="bool")
    return errors


# ---- var, std, var_mean, std_mean ---------------------------------------------------------

def _var_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    yield SampleInput(t(3, 4, 2), name="all")
    yield SampleInput(t(3, 4, 2), args=(1,), name="dim1")
    yield SampleInput(t(3, 4, 2), args=((0, 2),), kwargs={"keepdim": True},
                      name="dims02_keepdim")
    yield SampleInput(t(3, 4), args=(1,), kwargs={"correction": 0}, name="correction0")
    yield SampleInput(t(3, 4), kwargs={"correction": 2.5}, name="correction2.5")
    yield SampleInput(t(3, 4), args=(False,), name="unbiased_False")
    yield SampleInput(t(3, 4), args=(-1, False, True), name="dim_unbiased_keepdim")
    yield SampleInput(t(3, 4), kwargs={"dim": 0, "unbiased": True}, name="kw_unbiased")
    yield SampleInput(t(3, 4, noncontiguous=True), args=(1,), name="strided")


def _var_errors(name):
    def errors():
        yield ErrorInput(SampleInput(make_tensor(3, dtype="int64")), name="int")
        yield ErrorInput(SampleInput(make_tensor(3), args=(1,)), IndexError, name="dim_range")
    return errors


# ---- norm ---------------------------------------------------------------------------------

def _norm_samples(p):
    def samples(dtype, requires_grad):
        # |x| >= 0.1: p-norms with p < 2 have a kink at zero (but the inf-norms would get
        # ties at the 0.5 that replaces small values)
        t = _maker(dtype, requires_grad, exclude_zero=p not in (math.inf, -math.inf))
        args = () if p is None else (p,)
        yield SampleInput(t(2, 3, 4), args=args, name="all")
        if args:
            yield SampleInput(t(2, 3, 4), args=(*args, 1), name="dim1")
        yield SampleInput(t(2, 3, 4), args=args, kwargs={"dim": 1}, name="dim1_kwarg")
        yield SampleInput(t(2, 3, 4), args=args, kwargs={"dim": (0, 2), "keepdim": True},
                          name="dims02_keepdim")
        yield SampleInput(t(3, 4), args=args, kwargs={"dim": -1}, name="dim-1")
        yield SampleInput(t(), args=args, name="0d")
        yield SampleInput(t(3, 4), args=args, kwargs={"dtype": retrograd.float64},
                          name="dtype_float64")
        if p in (None, 2, "fro", 1.5, 3):
            z = make_tensor(2, 3, dtype=dtype)
            z._data[0] = 0
            yield SampleInput(z.requires_grad_(requires_grad), args=args, kwargs={"dim": 1},
                              name="zero_row", nondifferentiable=True)
        if p in (math.inf, -math.inf):
            yield SampleInput(_ties(dtype, requires_grad), args=args, kwargs={"dim": 1},
                              name="ties", nondifferentiable=True)
    return samples


def _norm_errors():
    yield ErrorInput(SampleInput(make_tensor(3, dtype="int64")), name="int")
    yield ErrorInput(SampleInput(make_tensor(2, 2, 2), args=("fro", (0, 1, 2))),
                     name="fro_three_dims")
    yield ErrorInput(SampleInput(make_tensor(2, 2), args=("abc",)), name="bad_order")
    yield ErrorInput(SampleInput(make_tensor(0, 3), args=(math.inf,)), name="inf_empty")


def _norm_entry(p, variant):
    return OpInfo("norm", _norm_samples(p), variant=variant, dtypes=_FLOAT)


# ---- logsumexp ----------------------------------------------------------------------------

def _logsumexp_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad, low=-5, high=5)
    yield SampleInput(t(2, 3, 4), args=(1,), name="dim1")
    yield SampleInput(t(2, 3, 4), args=((0, 2),), name="dims02")
    yield SampleInput(t(2, 3, 4), args=(-1, True), name="dim-1_keepdim")
    yield SampleInput(t(), args=(0,), name="0d")
    yield SampleInput(t(0, 3), args=(0,), name="empty_reduced")
    if _is_int(dtype):
        return
    big = make_tensor(2, 3, dtype=dtype, low=500, high=600)  # exp overflows without the shift
    yield SampleInput(big.requires_grad_(requires_grad), args=(1,), name="large")
    x = make_tensor(3, 4, dtype=dtype)
    x._data[0] = -numpy.inf
    x._data[1, :2] = -numpy.inf
    x._data[2, 0] = numpy.inf
    yield SampleInput(x.requires_grad_(requires_grad), args=(1,), name="infinities",
                      nondifferentiable=True)


# ---- cumsum, cumprod ----------------------------------------------------------------------

def _scan_samples(zeros):
    def samples(dtype, requires_grad):
        lo, hi = (-3, 3) if _is_int(dtype) else ((0.5, 1.5) if zeros else (-2.0, 2.0))
        t = _maker(dtype, requires_grad, low=lo, high=hi)
        yield SampleInput(t(2, 3, 4), args=(1,), name="dim1")
        yield SampleInput(t(2, 3, 4), args=(-1,), name="dim-1")
        yield SampleInput(t(5), args=(0,), name="1d")
        yield SampleInput(t(), args=(0,), name="0d")
        yield SampleInput(t(3, 4), args=(0,), kwargs={"dtype": retrograd.float64},
                          name="dtype_float64")
        yield SampleInput(t(3, 4, noncontiguous=True), args=(1,), name="strided")
        if zeros and not _is_int(dtype):
            x = make_tensor(3, 5, dtype=dtype, low=lo, high=hi)
            x._data[0, 1] = x._data[1, 1] = x._data[1, 3] = x._data[2, 4] = 0
            yield SampleInput(x.requires_grad_(requires_grad), args=(1,), name="zeros")
    return samples


def _inplace_scan(name):
    """``x.clone().<name>(...)``: in place on a non-leaf copy."""
    fn = lambda x, *a, **k: getattr(x.clone(), name)(*a, **k)  # noqa: E731
    return dict(op=fn, torch_op=fn)


def _scan_inplace_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad, low=0.5, high=1.5)
    yield SampleInput(t(3, 4), args=(1,), name="dim1")
    yield SampleInput(t(3, 4), args=(-2,), name="dim-2")


# ---- all, any, count_nonzero --------------------------------------------------------------

def _logical_samples(dtype, requires_grad):
    def t(*shape):
        x = make_tensor(*shape, dtype=dtype, low=-1, high=1)
        if not _is_int(dtype):
            x._data[numpy.abs(x._data) < 0.5] = 0
        return x
    yield SampleInput(t(3, 4), name="all")
    yield SampleInput(t(3, 4), args=(1,), name="dim1")
    yield SampleInput(t(2, 3, 4), args=((0, 2),), name="dims02")
    yield SampleInput(t(2, 3, 4), args=(-1, True), name="dim-1_keepdim")
    yield SampleInput(t(3, 4), args=((),), name="empty_dim_list")
    yield SampleInput(t(), name="0d")
    yield SampleInput(t(0, 3), args=(1,), name="empty")


def _count_nonzero_samples(dtype, requires_grad):
    for s in _logical_samples(dtype, requires_grad):
        if not s.name.endswith("keepdim"):
            yield s


_LOGICAL = ("float32", "int64", "bool", "uint8")

OPS = [
    OpInfo("sum", _sum_samples, dtypes=_ALL),
    OpInfo("sum", _sum_samples, variant="method", method=True, dtypes=_FLOAT),
    OpInfo("sum", _sum_samples, variant="errors", dtypes=(), supports_grad=False,
           error_inputs=_dim_errors),
    OpInfo("nansum", _nan_samples, dtypes=_FLOAT),
    OpInfo("mean", _mean_samples, dtypes=_FLOAT, error_inputs=_mean_errors),
    OpInfo("nanmean", _nan_samples, dtypes=_FLOAT),
    OpInfo("prod", _prod_samples, dtypes=_ALL),
    OpInfo("max", _extreme_samples, dtypes=_ALL, error_inputs=_extreme_errors("max")),
    OpInfo("max", _extreme_dim_samples, variant="dim", dtypes=_ALL),
    OpInfo("max", _extreme_binary_samples, variant="binary", dtypes=_WITH_INT),
    OpInfo("min", _extreme_samples, dtypes=_ALL, error_inputs=_extreme_errors("min")),
    OpInfo("min", _extreme_dim_samples, variant="dim", dtypes=_ALL),
    OpInfo("min", _extreme_binary_samples, variant="binary", dtypes=_WITH_INT),
    OpInfo("amax", _amax_samples, dtypes=_ALL, error_inputs=_amax_errors("amax")),
    OpInfo("amin", _amax_samples, dtypes=_ALL, error_inputs=_amax_errors("amin")),
    OpInfo("aminmax", _aminmax_samples, dtypes=_WITH_INT, error_inputs=_aminmax_errors),
    OpInfo("argmax", _arg_samples, dtypes=_WITH_INT, supports_grad=False,
           error_inputs=_arg_errors("argmax")),
    OpInfo("argmin", _arg_samples, dtypes=_WITH_INT, supports_grad=False,
           error_inputs=_arg_errors("argmin")),
    OpInfo("var", _var_samples, dtypes=_FLOAT, error_inputs=_var_errors("var")),
    OpInfo("std", _var_samples, dtypes=_FLOAT, error_inputs=_var_errors("std")),
    OpInfo("var_mean", _var_samples, dtypes=_FLOAT, error_inputs=_var_errors("var_mean")),
    OpInfo("std_mean", _var_samples, dtypes=_FLOAT, error_inputs=_var_errors("std_mean")),
    OpInfo("norm", _norm_samples(None), dtypes=_FLOAT, error_inputs=_norm_errors),
    _norm_entry("fro", "fro"),
    _norm_entry(1, "p1"),
    _norm_entry(math.inf, "inf"),
    _norm_entry(-math.inf, "-inf"),
    _norm_entry(3, "p3"),
    _norm_entry(1.5, "p1.5"),
    _norm_entry(0.5, "p0.5"),
    _norm_entry(0, "p0"),
    OpInfo("logsumexp", _logsumexp_samples, dtypes=_WITH_INT),
    OpInfo("cumsum", _scan_samples(False), dtypes=_ALL),
    OpInfo("cumprod", _scan_samples(True), dtypes=_WITH_INT),
    OpInfo("cumsum_", _scan_inplace_samples, dtypes=_FLOAT, method=True,
           **_inplace_scan("cumsum_")),
    OpInfo("cumprod_", _scan_inplace_samples, dtypes=_FLOAT, method=True,
           **_inplace_scan("cumprod_")),
    OpInfo("all", _logical_samples, dtypes=_LOGICAL, supports_grad=False),
    OpInfo("any", _logical_samples, dtypes=_LOGICAL, supports_grad=False),
    OpInfo("count_nonzero", _count_nonzero_samples, dtypes=_LOGICAL, supports_grad=False),
]
