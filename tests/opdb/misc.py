"""Op database entries for ``ops/sorting.py``, ``ops/special.py``, ``ops/misc.py`` and
``ops/inplace_shape.py`` (``ops/statistics.py``'s are in ``statistics.py``).

Random float samples have no ties, so every selecting op has one right index; ties
appear only where the op defines which one wins (stable sort, mode, cummax) and in
integer samples, compared forward only.
"""


import numpy

import retrograd

from ._core import ErrorInput, OpInfo, SampleInput, make_tensor, rng, maker as _maker

_FLOAT = ("float32", "float64")
_WITH_INT = ("float32", "float64", "int64")


def _is_int(dtype):
    return numpy.dtype(dtype).kind in "biu"


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
        yield SampleInput(t(3, 5), args=(q, 0, True), kwargs=kw, name="dim0_keepdim")
        if interpolation == "linear":  # the argument patterns; other modes: only the ranks
            yield SampleInput(t(7), args=(0.3,), kwargs=kw, name="scalar_q")
            yield SampleInput(t(3, 5), args=(q,), kwargs=kw, name="tensor_q")
            yield SampleInput(t(3, 5), args=(0.75, 1), kwargs=kw, name="dim1")
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


# torch.special's own ops: (name, low, high, special points)
_SPECIAL_OWN = (("entr", 0.1, 3, (1.0, 2.0)), ("log_ndtr", -4, 4, (0.0, -6.0, 5.0)),
                ("ndtri", 0.05, 0.95, (0.5,)), ("erfcx", -2, 4, (0.0, 30.0)),
                ("i0e", -3, 3, (1.0,)), ("i1", -3, 3, (0.0,)), ("i1e", -3, 3, (0.0,)))
# PyTorch's bfloat16 i0e runs its series in bfloat16 (up to 2 units off); retrograd's in
# float32, rounded once
_SPECIAL_TOLERANCES = {"i0e": {"bfloat16": (0.02, 0.02)}}


def _torch_special(name):
    """``torch.special.<name>``, looked up at call time (torch stays optional)."""
    def call(*args, **kwargs):
        import torch
        return getattr(torch.special, name)(*args, **kwargs)
    return call


def _xlog1py_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad, low=0.1, high=2)
    yield SampleInput(t(3, 4), args=(t(3, 4),), name="tensors")
    yield SampleInput(t(3, 4), args=(t(4),), name="broadcast")
    yield SampleInput(t(3), args=(0.5,), name="number_other")
    yield SampleInput(retrograd.tensor([0.0, 1.0], dtype=getattr(retrograd, dtype))
                      .requires_grad_(requires_grad), args=(t(2),), name="zero_self")


# ---- misc -------------------------------------------------------------------------------------

def _repeat_interleave_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    yield SampleInput(t(2, 3), args=(2,), name="flat")
    yield SampleInput(t(2, 3), args=(3,), kwargs={"dim": 1}, name="dim1")
    yield SampleInput(t(3, 2), args=(retrograd.tensor([1, 0, 2]),), kwargs={"dim": 0},
                      name="tensor_repeats")
    yield SampleInput(t(3, 2), args=(retrograd.tensor([2]),), kwargs={"dim": -1},
                      name="one_repeat")
    yield SampleInput(t(3), args=(retrograd.tensor(2),), name="0d_repeats")
    yield SampleInput(t(), args=(2,), name="0d")
    yield SampleInput(t(3, 2), args=(retrograd.tensor([1, 1, 2]), 0),
                      kwargs={"output_size": 4}, name="output_size")


def _repeat_interleave_errors():
    yield ErrorInput(SampleInput(make_tensor(3, 2), args=(retrograd.tensor([1, 2]),),
                                 kwargs={"dim": 0}), name="repeats_size")
    yield ErrorInput(SampleInput(make_tensor(3), args=(-1,)), name="negative")
    yield ErrorInput(SampleInput(make_tensor(3), args=(retrograd.tensor([-1, 1, 1]),)),
                     name="negative_tensor")
    yield ErrorInput(SampleInput(make_tensor(3), args=(retrograd.tensor([[1]]),)), name="2d")


def _search_samples(dtype, requires_grad):
    seq = make_tensor(2, 6, dtype=dtype, low=-5, high=5)
    seq._data.sort(-1)
    values = make_tensor(2, 4, dtype=dtype, low=-6, high=6)
    values._data[0, :2] = seq._data[0, 1:3]  # exact hits: left and right differ
    yield SampleInput(seq, args=(values,), name="batched")
    yield SampleInput(seq[0], args=(values,), kwargs={"right": True}, name="1d_right")
    yield SampleInput(seq[1], args=(values,), kwargs={"side": "right", "out_int32": True},
                      name="side")
    perm = retrograd.from_numpy(rng.permutation(6))
    yield SampleInput(seq[0][perm], args=(values,), kwargs={"sorter": perm.argsort()},
                      name="sorter")


def _search_errors():
    yield ErrorInput(SampleInput(make_tensor(4), args=(make_tensor(3),),
                                 kwargs={"side": "up"}), name="side")
    yield ErrorInput(SampleInput(make_tensor(4), args=(make_tensor(3),),
                                 kwargs={"side": "left", "right": True}), name="opposite")
    yield ErrorInput(SampleInput(make_tensor(2, 4), args=(make_tensor(3, 2),)),
                     name="batch_shape")


def _bucketize_errors():
    yield ErrorInput(SampleInput(make_tensor(2), args=(make_tensor(2, 2),)), name="2d")


def _bucketize_samples(dtype, requires_grad):
    b = make_tensor(5, dtype=dtype, low=-5, high=5)
    b._data.sort()
    x = make_tensor(3, 4, dtype=dtype, low=-6, high=6)
    x._data[0, 0] = b._data[2]
    yield SampleInput(x, args=(b,), name="left")
    yield SampleInput(x, args=(b,), kwargs={"right": True}, name="right")


def _kron_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    yield SampleInput(t(2, 3), args=(t(3, 2),), name="2d")
    yield SampleInput(t(3), args=(t(2, 2),), name="1d_2d")
    yield SampleInput(t(2, 1, 2), args=(t(2, 3),), name="3d")


def _diff_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    yield SampleInput(t(3, 5), name="last")
    yield SampleInput(t(4, 3), kwargs={"dim": 0, "n": 2}, name="n2")
    yield SampleInput(t(3, 4), kwargs={"prepend": t(3, 1), "append": t(3, 2)}, name="pend")
    yield SampleInput(t(3, 4), args=(5,), name="n_past_size")


def _rot90_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    yield SampleInput(t(2, 3), name="default")
    yield SampleInput(t(2, 3, 4), args=(2, (1, 2)), name="k2")
    yield SampleInput(t(2, 3, 4), args=(-1, [2, 0]), name="negative_k")
    yield SampleInput(t(2, 3), args=(4,), name="k4")


def _rot90_errors():
    yield ErrorInput(SampleInput(make_tensor(2, 3), args=(1, (0,))), name="one_dim")
    yield ErrorInput(SampleInput(make_tensor(3), args=(1,)), name="1d")
    yield ErrorInput(SampleInput(make_tensor(2, 3), args=(1, (1, 1))), name="same_dims")


def _list_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    yield SampleInput([t(2, 3), t(2, 3)], name="2d")
    yield SampleInput([t(3), t(3)], name="1d")
    yield SampleInput([t(2, 3, 2), t(2, 3, 1)], name="3d")


def _column_stack_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    yield SampleInput([t(3), t(3, 2), t(3)], name="mixed")
    yield SampleInput([t(), t()], name="0d")


def _row_stack_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    yield SampleInput([t(3), t(2, 3)], name="mixed")


def _split_samples(dim):
    def samples(dtype, requires_grad):
        t = _maker(dtype, requires_grad)
        shape = [2, 4, 6]
        yield SampleInput(t(*shape), args=(2,), name="sections")
        yield SampleInput(t(*shape), args=([1, 3],), name="indices")
        if dim == 1:
            yield SampleInput(t(6), args=(3,), name="1d")
    return samples


def _split_errors(name, dim):
    def errors():
        yield ErrorInput(SampleInput(make_tensor(3, 3, 3), args=(2,)), name="not_divisible")
        yield ErrorInput(SampleInput(make_tensor(*(3,) * (dim - 1)), args=(1,)),
                         name="too_few_dims")
    return errors


def _atleast_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    yield SampleInput(t(), name="0d")
    yield SampleInput(t(3), name="1d")
    yield SampleInput(t(2, 3), name="2d")
    yield SampleInput(t(2, 1, 3), name="3d")
    yield SampleInput(t(3), args=(t(2, 2),), name="several")
    yield SampleInput([t(3), t()], name="list")


def _block_diag_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    yield SampleInput(t(2, 3), args=(t(3), t(), t(1, 2)), name="mixed")
    yield SampleInput(t(2, 2), name="one")
    yield SampleInput(t(2, 0), args=(t(1, 2),), name="empty_block")


def _block_diag_errors():
    yield ErrorInput(SampleInput(make_tensor(2, 2, 2)), name="3d")


def _diagflat_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    yield SampleInput(t(3), name="1d")
    yield SampleInput(t(2, 2), args=(1,), name="2d_offset")
    yield SampleInput(t(3), args=(-2,), name="negative_offset")


def _grid_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    yield SampleInput(t(3), args=(t(4),), kwargs={"indexing": "ij"}, name="ij")
    yield SampleInput(t(3), args=(t(4), t(2)), kwargs={"indexing": "xy"}, name="xy")
    yield SampleInput([t(2), t()], kwargs={"indexing": "ij"}, name="list")


def _cartesian_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    yield SampleInput(t(3), args=(t(4),), name="two")
    yield SampleInput(t(2), args=(t(3), t(2)), name="three")
    yield SampleInput(t(3), name="one")


def _combinations_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    yield SampleInput(t(4), name="r2")
    yield SampleInput(t(5), args=(3,), name="r3")
    yield SampleInput(t(3), kwargs={"with_replacement": True}, name="replacement")
    yield SampleInput(t(3), args=(1,), name="r1")
    yield SampleInput(t(2), args=(3,), name="r_too_big")


def _trapezoid_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    x = make_tensor(4, dtype=dtype, low=0, high=1)
    x._data[...] = numpy.cumsum(x._data)
    yield SampleInput(t(3, 4), name="unit")
    yield SampleInput(t(3, 4), args=(x,), name="x")
    yield SampleInput(t(4, 3), kwargs={"dx": 0.5, "dim": 0}, name="dx")
    yield SampleInput(t(3, 4), args=(t(3, 4),), name="x_same_shape")


def _tri_indices_samples(dtype, requires_grad):
    yield SampleInput(3, args=(4,), name="wide")
    yield SampleInput(4, args=(3, 1), name="offset")
    yield SampleInput(3, args=(3, -1), kwargs={"dtype": retrograd.int32}, name="int32")


def _inplace_view_samples(name):
    def samples(dtype, requires_grad):
        t = _maker(dtype, requires_grad)
        if name == "t_":
            yield SampleInput(t(2, 3), name="2d")
            yield SampleInput(t(3), name="1d")
        elif name in ("transpose_", "swapdims_", "swapaxes_"):
            yield SampleInput(t(2, 3, 4), args=(0, -1), name="3d")
        elif name == "unsqueeze_":
            yield SampleInput(t(2, 3), args=(1,), name="middle")
            yield SampleInput(t(2, 3), args=(-1,), name="last")
        elif name == "squeeze_":
            yield SampleInput(t(2, 1, 3, 1), name="all")
            yield SampleInput(t(2, 1, 3), args=(1,), name="dim")
            yield SampleInput(t(2, 1, 3, 1), args=((1, 3),), name="dims")
        else:
            yield SampleInput(t(3, 4), args=((2, 2), (1, 3), 1), name="overlap_free")
    return samples


def _unary_method(name):
    return dict(op=lambda x, *a, **k: getattr(x, name)(*a, **k),
                torch_op=lambda x, *a, **k: getattr(x, name)(*a, **k))


def _vander_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    yield SampleInput(t(4), name="square")
    yield SampleInput(t(3), args=(5,), name="wide")
    yield SampleInput(t(3), kwargs={"N": 1}, name="N1")
    yield SampleInput(t(3), kwargs={"N": 4, "increasing": True}, name="increasing")


def _adjoint_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    yield SampleInput(t(3, 4), name="2d")
    yield SampleInput(t(2, 3, 4), name="batched")


def _gcd_samples(dtype, requires_grad):
    t = _maker(dtype, False, low=-20, high=20)
    yield SampleInput(t(3, 4), args=(t(3, 4),), name="same_shape")
    yield SampleInput(t(3, 4), args=(t(4),), name="broadcast")


def _gcd_errors():
    yield ErrorInput(SampleInput(make_tensor(3), args=(make_tensor(3),)), NotImplementedError,
                     name="float")


def _frexp_samples(dtype, requires_grad):
    x = make_tensor(3, 4, dtype=dtype, low=-100, high=100)
    x._data[0, :3] = [0.0, 1.0, 0.5]
    yield SampleInput(x, name="values")


def _frexp_errors():
    yield ErrorInput(SampleInput(make_tensor(3, dtype="int64")), name="int")


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
    *(OpInfo(f"special.{name}", _unary_samples(lo, hi, extra), dtypes=_WITH_INT,
             op=getattr(retrograd.special, name), torch_op=_torch_special(name),
             tolerances=_SPECIAL_TOLERANCES.get(name, {}))
      for name, lo, hi, extra in _SPECIAL_OWN),
    OpInfo("special.xlog1py", _xlog1py_samples, op=retrograd.special.xlog1py,
           torch_op=_torch_special("xlog1py")),
    OpInfo("polygamma", _polygamma_samples, dtypes=_WITH_INT, error_inputs=_polygamma_errors),
    OpInfo("polygamma", _polygamma_method_samples, variant="method", method=True),
    OpInfo("polygamma_", _polygamma_method_samples, variant="inplace",
           **_inplace("polygamma_")),
    OpInfo("copysign_", lambda dtype, rg: (s for s in _copysign_samples(dtype, rg)
                                           if s.name != "int_scalar"),
           variant="inplace", **_inplace("copysign_")),
    OpInfo("logaddexp", _binary_samples, error_inputs=_binary_errors("logaddexp")),
    OpInfo("logaddexp2", _binary_samples, error_inputs=_binary_errors("logaddexp2")),
    OpInfo("copysign", _copysign_samples, dtypes=_WITH_INT),
    OpInfo("heaviside", _heaviside_samples, dtypes=_WITH_INT, supports_grad=False,
           error_inputs=_heaviside_errors),
    OpInfo("repeat_interleave", _repeat_interleave_samples, dtypes=_WITH_INT,
           error_inputs=_repeat_interleave_errors),
    OpInfo("searchsorted", _search_samples, dtypes=_WITH_INT, supports_grad=False,
           error_inputs=_search_errors),
    OpInfo("bucketize", _bucketize_samples, dtypes=_WITH_INT, supports_grad=False,
           error_inputs=_bucketize_errors),
    OpInfo("kron", _kron_samples, dtypes=_WITH_INT),
    OpInfo("diff", _diff_samples, dtypes=_WITH_INT),
    OpInfo("rot90", _rot90_samples, dtypes=_WITH_INT, error_inputs=_rot90_errors),
    OpInfo("dstack", _list_samples, dtypes=_WITH_INT),
    OpInfo("column_stack", _column_stack_samples, dtypes=_WITH_INT),
    OpInfo("row_stack", _row_stack_samples, dtypes=_WITH_INT),
    *(OpInfo(name, _split_samples(d), dtypes=_WITH_INT, error_inputs=_split_errors(name, d),
             **_unary_method(name))
      for name, d in (("hsplit", 1), ("vsplit", 2), ("dsplit", 3))),
    *(OpInfo(name, _atleast_samples, dtypes=_WITH_INT)
      for name in ("atleast_1d", "atleast_2d", "atleast_3d")),
    OpInfo("block_diag", _block_diag_samples, dtypes=_WITH_INT,
           error_inputs=_block_diag_errors),
    OpInfo("diagflat", _diagflat_samples, dtypes=_WITH_INT),
    OpInfo("meshgrid", _grid_samples, dtypes=_WITH_INT),
    OpInfo("cartesian_prod", _cartesian_samples, dtypes=_WITH_INT),
    OpInfo("combinations", _combinations_samples, dtypes=_WITH_INT),
    # PyTorch's last node is mul/div with a Scalar (MulBackward1), retrograd's MulBackward0:
    # gradients are checked against PyTorch in test_tensorfns.py instead
    *(OpInfo(name, _trapezoid_samples, compare_grad_with_torch=False)
      for name in ("trapezoid", "trapz", "cumulative_trapezoid")),
    OpInfo("ravel", lambda dtype, rg: [SampleInput(make_tensor(3, 4, dtype=dtype,
                                                               requires_grad=rg).t())],
           dtypes=_WITH_INT),
    *(OpInfo(name, _tri_indices_samples, dtypes=("int64",), supports_grad=False)
      for name in ("tril_indices", "triu_indices")),
    *(OpInfo(name, _inplace_view_samples(name), variant="inplace", **_inplace(name))
      for name in ("t_", "transpose_", "swapdims_", "swapaxes_", "unsqueeze_", "squeeze_",
                   "as_strided_")),
    # PyTorch's vander backward fails ("modified by an inplace operation"): finite
    # differences check retrograd's gradient instead
    OpInfo("vander", _vander_samples, dtypes=_WITH_INT, compare_grad_with_torch=False),
    OpInfo("adjoint", _adjoint_samples, dtypes=_WITH_INT),
    *(OpInfo(name, _gcd_samples, dtypes=("int64",), supports_grad=False,
             error_inputs=_gcd_errors) for name in ("gcd", "lcm")),
    OpInfo("frexp", _frexp_samples, supports_grad=False, error_inputs=_frexp_errors),
]
