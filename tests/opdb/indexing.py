"""Op database entries for indexing and the gather/scatter family (``ops/indexing.py``).

Index tensors are arguments, never differentiable inputs. Gathering ops are
sampled with repeated indices (their gradients must accumulate); ops that
overwrite (scatter, index_copy, put, setitem) with distinct indices, where
PyTorch's result does not depend on the write order.
"""

import numpy

import retrograd

from ._core import ErrorInput, OpInfo, SampleInput, make_tensor, rng

_FLOAT = ("float32", "float64")
_NUM = ("float32", "float64", "int64")
_ALL = ("float32", "float64", "int64", "bool")


def _long(values):
    return retrograd.tensor(values, dtype=retrograd.int64)


def _idx(*shape, high):
    """Random indices in [0, high) (repeats likely)."""
    return retrograd.from_numpy(rng.integers(0, high, shape))


def _distinct(rows, k, n, dim=1):
    """Per row, ``k`` distinct indices in [0, n); ``dim=0`` gives them per column."""
    a = numpy.argsort(rng.random((rows, n)), axis=1)[:, :k]
    return retrograd.from_numpy(numpy.ascontiguousarray(a if dim == 1 else a.T))


def _mask(*shape):
    return make_tensor(*shape, dtype="bool")


def _on_clone(name):
    fn = lambda input, *args, **kwargs: getattr(input.clone(), name)(*args, **kwargs)  # noqa: E731
    return dict(op=fn, torch_op=fn)


def _getitem_samples(dtype, requires_grad):
    t = lambda *s, **kw: make_tensor(*s, dtype=dtype, requires_grad=requires_grad, **kw)  # noqa: E731
    x = t(3, 4)
    yield SampleInput(x, args=(1,), name="int")
    yield SampleInput(x, args=(-1,), name="negative_int")
    yield SampleInput(x, args=(slice(1, 3),), name="slice")
    yield SampleInput(x, args=(slice(None, None, 2),), name="step")
    yield SampleInput(x, args=(slice(None),), name="full_slice")
    yield SampleInput(x, args=((1, slice(1, 3)),), name="int_slice")
    yield SampleInput(x, args=((slice(1, None), 0),), name="slice_int")
    yield SampleInput(x, args=((None, slice(None), 1),), name="none")
    yield SampleInput(x, args=((Ellipsis, 1),), name="ellipsis")
    yield SampleInput(x, args=(Ellipsis,), name="alias")
    yield SampleInput(x, args=((slice(None), slice(0, 4)),), name="full_range")
    yield SampleInput(x, args=(_long(1),), name="0d_tensor")
    yield SampleInput(x, args=(_mask(3, 4),), name="mask")
    yield SampleInput(x, args=(retrograd.tensor([True, False, True]),), name="row_mask")
    yield SampleInput(x, args=(_long([0, 2, 0]),), name="repeats")
    yield SampleInput(x, args=([0, 0, 1],), name="list")
    yield SampleInput(x, args=((_long([0, 2, 2]), _long([1, 3, 1])),), name="pairs")
    yield SampleInput(x, args=((slice(None), _long([[1, 1], [3, 0]])),), name="slice_2d_index")
    yield SampleInput(x, args=((_long([0, 2]), None),), name="index_none")
    yield SampleInput(x, args=(True,), name="true")
    yield SampleInput(x, args=([],), name="empty_list")
    yield SampleInput(x, args=((slice(3, None), 0),), name="empty_slice")
    z = t(2, 3, 4, 5)
    yield SampleInput(z, args=((slice(None), 0, slice(None), _long([0, 1])),),
                      name="int_then_index")
    yield SampleInput(z, args=((_long([0, 1]), slice(None), _long([1, 1])),),
                      name="separated")
    yield SampleInput(z, args=((1, _long([0, 1]), slice(None), _long([1, 1])),),
                      name="int_separated")
    yield SampleInput(t(4, 3, noncontiguous=True), args=((slice(1, None), _long([2, 0])),),
                      name="strided")
    yield SampleInput(t(), args=(None,), name="0d_none")


def _getitem_errors():
    x = make_tensor(3, 4)
    yield ErrorInput(SampleInput(x, args=(slice(None, None, -1),)), ValueError,
                     name="negative_step")
    yield ErrorInput(SampleInput(x, args=(3,)), IndexError, name="int_range")
    yield ErrorInput(SampleInput(x, args=((0, 0, 0),)), IndexError, name="too_many")
    yield ErrorInput(SampleInput(x, args=(retrograd.tensor([True, False]),)), IndexError,
                     name="mask_shape")
    yield ErrorInput(SampleInput(x, args=(retrograd.tensor([0.0]),)), IndexError, name="float")
    yield ErrorInput(SampleInput(x, args=(_long([5]),)), IndexError, name="tensor_range")
    yield ErrorInput(SampleInput(make_tensor(dtype="float32", requires_grad=False), args=(0,)),
                     IndexError, name="0d")


def _set(x, index, value):
    y = x.clone()
    y[index] = value
    return y


def _setitem_view_samples(dtype, requires_grad):
    t = lambda *s: make_tensor(*s, dtype=dtype, requires_grad=requires_grad)  # noqa: E731
    yield SampleInput(t(3, 4), args=(1, 2), name="int_number")
    yield SampleInput(t(3, 4), args=(slice(1, 3), t(4)), name="slice_broadcast")
    yield SampleInput(t(3, 4), args=((slice(None), 1), t(3)), name="column")
    yield SampleInput(t(3, 4), args=((0, 2), t()), name="element")
    yield SampleInput(t(3, 4), args=(Ellipsis, t(1, 4)), name="ellipsis")
    yield SampleInput(t(3, 4), args=(0, t(1, 4)), name="leading_one")
    yield SampleInput(t(2, 3, 4), args=((1, slice(None), _long([0, 2])), t(2)),
                      name="int_and_index")


def _setitem_index_samples(dtype, requires_grad):
    t = lambda *s: make_tensor(*s, dtype=dtype, requires_grad=requires_grad)  # noqa: E731
    yield SampleInput(t(3, 4), args=(_long([2, 0]), t(2, 4)), name="rows")
    yield SampleInput(t(3, 4), args=(_long([2, 0]), t(4)), name="rows_broadcast")
    yield SampleInput(t(3, 4), args=(_mask(3, 4), 0), name="mask_number")
    yield SampleInput(t(3, 4), args=(retrograd.tensor([True, False, True]), t(2, 4)),
                      name="row_mask")
    yield SampleInput(t(3, 4), args=((slice(None), _long([3, 1])), t(3, 1)), name="columns")


def _setitem_view_errors():
    yield ErrorInput(SampleInput(make_tensor(3, 4), args=(0, make_tensor(5))), RuntimeError,
                     name="shape")


def _setitem_errors():
    yield ErrorInput(SampleInput(make_tensor(3, 4), args=(_long([0]), make_tensor(5))),
                     RuntimeError, name="shape")


def _index_put_samples(dtype, requires_grad):
    t = lambda *s: make_tensor(*s, dtype=dtype, requires_grad=requires_grad)  # noqa: E731
    yield SampleInput(t(3, 4), args=((_long([2, 0]),), t(2, 4)), name="rows")
    yield SampleInput(t(3, 4), args=((_long([2, 0, 2]), _long([1, 1, 1])), t(3), True),
                      name="accumulate_repeats")
    yield SampleInput(t(3, 4), args=((_mask(3, 4),), t(1), True), name="mask_accumulate")


def _gather_samples(dtype, requires_grad):
    t = lambda *s: make_tensor(*s, dtype=dtype, requires_grad=requires_grad)  # noqa: E731
    yield SampleInput(t(3, 4), args=(1, _idx(3, 5, high=4)), name="dim1")
    yield SampleInput(t(3, 4), args=(0, _idx(2, 4, high=3)), name="dim0")
    yield SampleInput(t(3, 4, 2), args=(-2, _idx(2, 3, 1, high=4)), name="smaller")
    yield SampleInput(t(), args=(0, _long(0)), name="0d")
    yield SampleInput(t(3, 4), args=(1, _idx(3, 0, high=4)), name="empty")


def _gather_errors():
    x = make_tensor(3, 4)
    yield ErrorInput(SampleInput(x, args=(1, _long([[5]]))), RuntimeError, name="range")
    yield ErrorInput(SampleInput(x, args=(1, _long([0]))), RuntimeError, name="ndim")
    yield ErrorInput(SampleInput(x, args=(1, _idx(4, 1, high=4))), RuntimeError, name="size")


def _scatter_samples(dtype, requires_grad):
    t = lambda *s: make_tensor(*s, dtype=dtype, requires_grad=requires_grad)  # noqa: E731
    yield SampleInput(t(3, 4), args=(1, _distinct(3, 2, 4), t(3, 2)), name="src")
    yield SampleInput(t(3, 4), args=(0, _distinct(4, 2, 3, dim=0), make_tensor(2, 5, dtype=dtype,
                                                                       requires_grad=False)),
                      name="big_src")
    yield SampleInput(t(3, 4), args=(-1, _distinct(2, 3, 4), 1), name="value")
    yield SampleInput(t(3, 4), args=(1, _distinct(3, 2, 4)), kwargs={"value": 2},
                      name="value_kw")


def _scatter_reduce_samples(dtype, requires_grad):
    t = lambda *s: make_tensor(*s, dtype=dtype, requires_grad=requires_grad)  # noqa: E731
    yield SampleInput(t(3, 4), args=(1, _idx(3, 3, high=4), t(3, 3)), kwargs={"reduce": "add"},
                      name="add")
    yield SampleInput(t(3, 4), args=(1, _idx(3, 3, high=4), t(3, 3)),
                      kwargs={"reduce": "multiply"}, name="multiply")


def _scatter_add_samples(dtype, requires_grad):
    t = lambda *s: make_tensor(*s, dtype=dtype, requires_grad=requires_grad)  # noqa: E731
    yield SampleInput(t(3, 4), args=(1, _idx(3, 6, high=4), t(3, 6)), name="repeats")
    yield SampleInput(t(3, 4), args=(0, _idx(2, 3, high=3), make_tensor(3, 4, dtype=dtype,
                                                                requires_grad=False)),
                      name="big_src")


_REDUCES = ("sum", "prod", "mean", "amax", "amin")


def _made(a, dtype, requires_grad):
    """A tensor of the given values (zeros and ties placed on purpose)."""
    t = retrograd.from_numpy(numpy.asarray(a, dtype=dtype))
    return t.requires_grad_(requires_grad and dtype.startswith("float"))


def _reduce_samples(reduce):
    """Samples of one reduction: repeated indices (several values meet), every dim form,
    include_self both ways; zeros for prod, ties for amax/amin (gradients compared with
    PyTorch only: finite differences are meaningless at ties)."""
    def samples(dtype, requires_grad):
        t = lambda *s: make_tensor(*s, dtype=dtype, requires_grad=requires_grad)  # noqa: E731
        for include_self in (True, False):
            kw = {"include_self": include_self}
            yield SampleInput(t(3, 4), args=(1, _idx(3, 5, high=4), t(3, 5), reduce), kwargs=kw,
                              name=f"dim1_{include_self}")
            yield SampleInput(t(3, 4), args=(-2, _idx(2, 3, high=3), t(2, 3), reduce),
                              kwargs=kw, name=f"dim0_smaller_{include_self}")
            yield SampleInput(t(), args=(0, _long([0, 0]), t(2), reduce), kwargs=kw,
                              name=f"0d_self_{include_self}")
            if reduce == "prod":
                x = _made([[0, 2, 3, 1.5]], dtype, requires_grad)
                yield SampleInput(x, args=(1, _long([[0, 1, 1, 2, 2]]),
                                           _made([[2, 0, 1.5, 0, -1]], dtype, requires_grad),
                                           reduce), kwargs=kw, name=f"single_zeros_{include_self}")
            if reduce in ("amax", "amin"):
                yield SampleInput(_made([[1, 2, 0, -1]], dtype, requires_grad),
                                  args=(1, _long([[0, 0, 1, 2, 3]]),
                                        _made([[1, 1, 2, -1, 0]], dtype, requires_grad), reduce),
                                  kwargs=kw, name=f"ties_{include_self}", nondifferentiable=True)
        yield SampleInput(t(3, 4), args=(1, _idx(3, 0, high=4), t(3, 0), reduce),
                          name="empty_index")
    return samples


def _index_reduce_samples(reduce):
    """index_reduce along each dim, include_self both ways, repeated indices (ties for
    amax/amin: gradients compared with PyTorch only)."""
    def samples(dtype, requires_grad):
        t = lambda *s: make_tensor(*s, dtype=dtype, requires_grad=requires_grad)  # noqa: E731
        for include_self in (True, False):
            kw = {"include_self": include_self}
            yield SampleInput(t(4, 3), args=(0, _long([0, 0, 2, 3, 0]), t(5, 3), reduce),
                              kwargs=kw, name=f"dim0_{include_self}")
            yield SampleInput(t(3, 4), args=(-1, _long([2, 2, 0]), t(3, 3), reduce),
                              kwargs=kw, name=f"dim1_{include_self}")
            if reduce in ("amax", "amin"):
                yield SampleInput(_made([[1.0, 2.0]], dtype, requires_grad),
                                  args=(1, _long([0, 0, 1]), _made([[1.0, 1.0, 2.0]], dtype,
                                                                   requires_grad), reduce),
                                  kwargs=kw, name=f"ties_{include_self}", nondifferentiable=True)
    return samples


def _index_reduce_errors():
    x, i, src = make_tensor(4, 3), _long([0, 0, 2, 3, 0]), make_tensor(5, 3)
    yield ErrorInput(SampleInput(x, args=(0, i, src, "sum")), RuntimeError, name="reduce")
    yield ErrorInput(SampleInput(x, args=(0, _long([0, 9, 2, 3, 0]), src, "prod")),
                     IndexError, name="index_range")
    yield ErrorInput(SampleInput(x, args=(0, i, make_tensor(4, 3), "prod")), RuntimeError,
                     name="count")


def _prod_zeros_samples(dtype, requires_grad):
    """Two zeros meeting at a target (their gradients are 0): PyTorch refuses double
    backward there, so this entry has no second-order check."""
    for include_self in (True, False):
        yield SampleInput(_made([[0, 2, 3, 1.5]], dtype, requires_grad),
                          args=(1, _long([[1, 1, 0, 0, 2]]),
                                _made([[0, 0, 0, 1.5, 0]], dtype, requires_grad), "prod"),
                          kwargs={"include_self": include_self}, name=f"two_zeros_{include_self}")


def _scatter_reduce_errors():
    x, i, src = make_tensor(3, 4), _idx(3, 2, high=4), make_tensor(3, 2)
    yield ErrorInput(SampleInput(x, args=(1, i, src, "max_")), RuntimeError, name="reduce")
    yield ErrorInput(SampleInput(x, args=(1, i, src, "add")), RuntimeError, name="add")
    yield ErrorInput(SampleInput(x, args=(2, i, src, "sum")), IndexError, name="dim")
    yield ErrorInput(SampleInput(x, args=(1, make_tensor(3, 2), src, "sum")), RuntimeError,
                     name="float_index")
    yield ErrorInput(SampleInput(x, args=(1, _long([[4]]), src, "sum")), RuntimeError,
                     name="index_range")
    yield ErrorInput(SampleInput(x, args=(1, _long([0]), src, "sum")), RuntimeError,
                     name="index_ndim")
    yield ErrorInput(SampleInput(x, args=(1, i, make_tensor(3, 2, dtype="float64"), "sum")),
                     RuntimeError, name="src_dtype")
    yield ErrorInput(SampleInput(x, args=(1, i, make_tensor(3, 1), "sum")), RuntimeError,
                     name="src_small")
    yield ErrorInput(SampleInput(x, args=(1, i, 2.0, "sum")), TypeError, name="src_number")
    yield ErrorInput(SampleInput(x, args=(1, i, src, "sum"), kwargs={"include_self": 1}),
                     TypeError, name="include_self")


def _index_select_samples(dtype, requires_grad):
    t = lambda *s: make_tensor(*s, dtype=dtype, requires_grad=requires_grad)  # noqa: E731
    yield SampleInput(t(3, 4), args=(0, _long([2, 0, 2])), name="rows")
    yield SampleInput(t(3, 4), args=(-1, _long([3, 3])), name="columns")
    yield SampleInput(t(3, 4), args=(1, _long(1)), name="0d_index")
    yield SampleInput(t(3, 4), args=(0, _long([])), name="empty")


def _index_select_errors():
    x = make_tensor(3, 4)
    yield ErrorInput(SampleInput(x, args=(0, _long([3]))), IndexError, name="range")
    yield ErrorInput(SampleInput(x, args=(0, _long([[0]]))), IndexError, name="2d")


def _index_add_samples(dtype, requires_grad):
    t = lambda *s: make_tensor(*s, dtype=dtype, requires_grad=requires_grad)  # noqa: E731
    yield SampleInput(t(3, 4), args=(0, _long([2, 0, 2]), t(3, 4)), name="repeats")
    yield SampleInput(t(3, 4), args=(1, _long([1]), t(3, 1)), kwargs={"alpha": 2},
                      name="alpha")


def _index_add_errors():
    x = make_tensor(3, 4)
    yield ErrorInput(SampleInput(x, args=(0, _long([0]), make_tensor(2, 4))), RuntimeError,
                     name="count")


def _index_fill_samples(dtype, requires_grad):
    t = lambda *s: make_tensor(*s, dtype=dtype, requires_grad=requires_grad)  # noqa: E731
    yield SampleInput(t(3, 4), args=(1, _long([0, 2, 0]), 2), name="number")
    yield SampleInput(t(3, 4), args=(0, _long([1]), t()), name="tensor")
    yield SampleInput(t(3, 4), args=(0, _long([-1]), 0.5), name="negative")


def _index_copy_samples(dtype, requires_grad):
    t = lambda *s: make_tensor(*s, dtype=dtype, requires_grad=requires_grad)  # noqa: E731
    yield SampleInput(t(3, 4), args=(0, _long([2, 0]), t(2, 4)), name="rows")
    yield SampleInput(t(3, 4), args=(1, _long([3]), t(3, 1)), name="column")


def _masked_fill_samples(dtype, requires_grad):
    t = lambda *s: make_tensor(*s, dtype=dtype, requires_grad=requires_grad)  # noqa: E731
    yield SampleInput(t(3, 4), args=(_mask(3, 4), 2), name="number")
    yield SampleInput(t(3, 4), args=(_mask(4), t()), name="tensor_broadcast")


def _masked_fill_out_samples(dtype, requires_grad):
    yield from _masked_fill_samples(dtype, requires_grad)
    yield SampleInput(make_tensor(4, dtype=dtype, requires_grad=requires_grad),
                      args=(_mask(3, 4), 1), name="broadcast_self")


def _masked_fill_errors():
    x = make_tensor(3, 4)
    yield ErrorInput(SampleInput(x, args=(make_tensor(3, 4), 1.0)), RuntimeError, name="float")
    yield ErrorInput(SampleInput(x, args=(make_tensor(3, 4, dtype="complex64"), 1.0)),
                     RuntimeError, name="complex")
    yield ErrorInput(SampleInput(x, args=(_mask(3, 4), make_tensor(1))), RuntimeError,
                     name="1d_value")


def _masked_select_samples(dtype, requires_grad):
    t = lambda *s: make_tensor(*s, dtype=dtype, requires_grad=requires_grad)  # noqa: E731
    yield SampleInput(t(3, 4), args=(_mask(3, 4),))
    yield SampleInput(t(4), args=(_mask(3, 4),), name="broadcast_self")
    yield SampleInput(t(3, 4), args=(_mask(3, 1),), name="broadcast_mask")


def _masked_scatter_samples(dtype, requires_grad):
    t = lambda *s: make_tensor(*s, dtype=dtype, requires_grad=requires_grad)  # noqa: E731
    yield SampleInput(t(3, 4), args=(_mask(3, 4), t(3, 5)))
    yield SampleInput(t(3, 4), args=(_mask(4), t(12)), name="broadcast_mask")


def _take_samples(dtype, requires_grad):
    t = lambda *s: make_tensor(*s, dtype=dtype, requires_grad=requires_grad)  # noqa: E731
    yield SampleInput(t(3, 4), args=(_long([[0, 11], [5, 5]]),), name="repeats")
    yield SampleInput(t(3, 4), args=(_long([-1, -12]),), name="negative")


def _take_errors():
    yield ErrorInput(SampleInput(make_tensor(3, 4), args=(_long([12]),)), IndexError,
                     name="range")


def _take_along_dim_samples(dtype, requires_grad):
    t = lambda *s: make_tensor(*s, dtype=dtype, requires_grad=requires_grad)  # noqa: E731
    yield SampleInput(t(3, 4), args=(_idx(3, 2, high=4), 1), name="dim")
    yield SampleInput(t(3, 4), args=(_idx(1, 2, high=4), -1), name="broadcast_index")
    yield SampleInput(t(1, 4), args=(_idx(3, 4, high=1), 0), name="broadcast_self")
    yield SampleInput(t(3, 4), args=(_idx(5, high=12),), name="flat")


def _put_samples(dtype, requires_grad):
    t = lambda *s: make_tensor(*s, dtype=dtype, requires_grad=requires_grad)  # noqa: E731
    yield SampleInput(t(3, 4), args=(_long([1, -1, 6]), t(3)), name="distinct")
    yield SampleInput(t(3, 4), args=(_long([[1, 1], [6, 1]]), t(2, 2), True),
                      name="accumulate")


def _nonzero_samples(dtype, requires_grad):
    x = make_tensor(3, 4, dtype=dtype, requires_grad=requires_grad, low=-1, high=1)
    yield SampleInput(x)
    yield SampleInput(x, kwargs={"as_tuple": True}, name="tuple")
    yield SampleInput(make_tensor(dtype=dtype, requires_grad=requires_grad, low=1, high=2),
                      name="0d")
    yield SampleInput(make_tensor(dtype=dtype, requires_grad=requires_grad, low=1, high=2),
                      kwargs={"as_tuple": True}, name="0d_tuple")


def _argwhere_samples(dtype, requires_grad):
    yield SampleInput(make_tensor(3, 4, dtype=dtype, requires_grad=requires_grad, low=-1, high=1))
    yield SampleInput(make_tensor(dtype=dtype, requires_grad=requires_grad, low=1, high=2),
                      name="0d")


OPS = [
    OpInfo("__getitem__", _getitem_samples, method=True, dtypes=_ALL,
           error_inputs=_getitem_errors),
    OpInfo("__setitem__", _setitem_view_samples, op=_set, torch_op=_set, dtypes=_ALL,
           variant="view", error_inputs=_setitem_view_errors),
    OpInfo("__setitem__", _setitem_index_samples, op=_set, torch_op=_set, dtypes=_ALL,
           variant="index", error_inputs=_setitem_errors),
    OpInfo("index_put", _index_put_samples, dtypes=_NUM),
    OpInfo("index_put_", _index_put_samples, dtypes=_NUM, **_on_clone("index_put_")),
    OpInfo("gather", _gather_samples, dtypes=_ALL, error_inputs=_gather_errors),
    OpInfo("scatter", _scatter_samples, dtypes=_NUM),
    OpInfo("scatter_", _scatter_samples, dtypes=_NUM, **_on_clone("scatter_")),
    OpInfo("scatter", _scatter_reduce_samples, dtypes=_NUM, variant="reduce",
           supports_grad=False),
    *(OpInfo("scatter_reduce", _reduce_samples(r), dtypes=_NUM, variant=r,
             error_inputs=_scatter_reduce_errors if r == "sum" else None) for r in _REDUCES),
    OpInfo("scatter_reduce", _prod_zeros_samples, dtypes=_NUM, variant="prod_zeros",
           supports_gradgrad=False),
    *(OpInfo("scatter_reduce", _reduce_samples(r), dtypes=_NUM, method=True,
             variant=f"method_{r}") for r in ("sum", "amax")),
    *(OpInfo("scatter_reduce_", _reduce_samples(r), dtypes=_NUM, variant=r,
             **_on_clone("scatter_reduce_")) for r in ("mean", "prod")),
    *(OpInfo("index_reduce", _index_reduce_samples(r), dtypes=_NUM, variant=r,
             error_inputs=_index_reduce_errors if r == "prod" else None)
      for r in ("prod", "mean", "amax", "amin")),
    OpInfo("index_reduce_", _index_reduce_samples("mean"), dtypes=_NUM,
           **_on_clone("index_reduce_")),
    OpInfo("scatter_add", _scatter_add_samples, dtypes=_NUM),
    OpInfo("scatter_add_", _scatter_add_samples, dtypes=_NUM, **_on_clone("scatter_add_")),
    OpInfo("index_select", _index_select_samples, dtypes=_ALL,
           error_inputs=_index_select_errors),
    OpInfo("index_add", _index_add_samples, dtypes=_NUM, error_inputs=_index_add_errors),
    OpInfo("index_add_", _index_add_samples, dtypes=_NUM, **_on_clone("index_add_")),
    OpInfo("index_fill", _index_fill_samples, dtypes=_NUM),
    OpInfo("index_fill_", _index_fill_samples, dtypes=_NUM, **_on_clone("index_fill_")),
    OpInfo("index_copy", _index_copy_samples, dtypes=_ALL),
    OpInfo("index_copy_", _index_copy_samples, dtypes=_ALL, **_on_clone("index_copy_")),
    OpInfo("masked_fill", _masked_fill_out_samples, dtypes=_ALL,
           error_inputs=_masked_fill_errors),
    OpInfo("masked_fill_", _masked_fill_samples, dtypes=_ALL, **_on_clone("masked_fill_")),
    OpInfo("masked_select", _masked_select_samples, dtypes=_ALL),
    OpInfo("masked_scatter", _masked_scatter_samples, dtypes=_ALL),
    OpInfo("masked_scatter_", _masked_scatter_samples, dtypes=_ALL,
           **_on_clone("masked_scatter_")),
    OpInfo("take", _take_samples, dtypes=_ALL, error_inputs=_take_errors),
    OpInfo("take_along_dim", _take_along_dim_samples, dtypes=_ALL),
    OpInfo("put", _put_samples, dtypes=_NUM),
    OpInfo("put_", _put_samples, dtypes=_NUM, **_on_clone("put_")),
    OpInfo("nonzero", _nonzero_samples, dtypes=_ALL, supports_grad=False),
    OpInfo("argwhere", _argwhere_samples, dtypes=_ALL, supports_grad=False),
]
