"""Edge cases the differential fuzz suite found in shape, indexing and sorting ops.

Each case runs the same call on retrograd and PyTorch and expects the same outcome:
equal values, dtype and shape, or the same exception type and message.
"""

import numpy
import pytest

import retrograd


def _outcome(lib, call):
    try:
        out = call(lib)
    except Exception as e:  # the exception is the outcome under comparison
        return type(e).__name__, str(e)
    return "ok", out


def _same(torch, call):
    r_kind, r = _outcome(retrograd, call)
    t_kind, t = _outcome(torch, call)
    assert (r_kind, r if r_kind != "ok" else None) == (t_kind, t if t_kind != "ok" else None)
    if r_kind == "ok":
        for ro, to in zip(r if isinstance(r, tuple) else (r,),
                          t if isinstance(t, tuple) else (t,), strict=True):
            assert str(ro.dtype) == str(to.dtype)
            assert tuple(ro.shape) == tuple(to.shape)
            numpy.testing.assert_array_equal(ro.detach().numpy(), to.detach().numpy())


@pytest.mark.torch
@pytest.mark.parametrize("source,destination", [(-1, 0), ([0], [-1]), ([], []), (1, 0)])
def test_movedim_of_a_scalar(torch, source, destination):
    _same(torch, lambda T: T.movedim(T.tensor(1.5), source, destination))


@pytest.mark.torch
def test_movedim_of_a_scalar_passes_its_gradient(torch):
    x = retrograd.tensor(2.0, requires_grad=True)
    retrograd.movedim(x, 0, -1).backward()
    assert x.grad.item() == 1.0


@pytest.mark.torch
@pytest.mark.parametrize("shape,shifts,dims", [
    ((), 0, 0), ((), 1, -1), ((), 1, 1), ((), [1, 2], [0, 0]), ((), 1, None),
    ((4, 0), 0, -3), ((4, 0), [1, 2], [5, 7]), ((4, 0), [1, 2], [5]),
    ((4, 1), 1, 5), ((4, 1), 1, -3), ((4, 1), [], []), ((4, 0), [], []),
    ((4, 1), [1], []), ((4, 1), [1, 1], None), ((2, 3), [1, -1], [1, 0]),
    ((2, 3), [1, 1], [1, 1]), ((2, 3), 2, None),
])
def test_roll_dims_checks(torch, shape, shifts, dims):
    def call(T):
        x = T.arange(float(numpy.prod(shape))).reshape(shape)
        return T.roll(x, shifts, dims)
    _same(torch, call)


@pytest.mark.torch
def test_roll_of_an_empty_tensor_passes_its_gradient(torch):
    x = retrograd.zeros(4, 0, requires_grad=True)
    retrograd.roll(x, 1, 7).sum().backward()
    assert x.grad.shape == (4, 0)


@pytest.mark.torch
@pytest.mark.parametrize("dtype", ["int64", "int32", "int8", "uint8", "bool", "float16",
                                   "float32", "float64"])
@pytest.mark.parametrize("value", [float("nan"), float("inf"), 1e20, 300, -1, -255, -256,
                                   2 ** 63, float(2 ** 63), 1.5, 70000.0, 3.5e38, 5 + 0j,
                                   5 + 1j, "nan tensor", "300 tensor"])
def test_masked_fill_refuses_values_the_dtype_cannot_hold(torch, dtype, value):
    def call(T):
        v = {"nan tensor": T.tensor(float("nan")), "300 tensor": T.tensor(300)}.get(value, value)
        x = T.zeros(2, 0, 2, dtype=getattr(T, dtype)) if value == 300 else T.zeros(
            2, dtype=getattr(T, dtype))
        return T.masked_fill(x, T.tensor([True, False]), v)
    _same(torch, call)


@pytest.mark.torch
def test_masked_fill_in_place_checks_before_writing(torch):
    x = retrograd.zeros(3, dtype=retrograd.int8)
    with pytest.raises(RuntimeError, match="int8_t without overflow"):
        x.masked_fill_(retrograd.tensor([True, False, True]), float("inf"))
    assert x.tolist() == [0, 0, 0]


@pytest.mark.torch
@pytest.mark.parametrize("shape,dim,index", [
    ((3, 0), 1, [0, 1]), ((3, 0), 0, [5]), ((3, 0), 0, [1, -1, 5]), ((3, 0), 0, 7),
    ((3, 0), 0, [1]), ((0, 3), 0, [0]), ((0, 3), 1, [7]), ((0, 3), 1, [1]), ((0,), 0, [0]),
    ((3, 3), 1, [-7]), ((3, 3), -1, [1, 3]), ((3, 3), 0, [-1]), ((3,), 0, [3]),
    ((), 0, [1]), ((), 0, [0, 0]), ((), -1, [-2, 0]), ((2, 3, 4), 2, [4]), ((2, 3, 4), 1, [4]),
])
def test_index_select_out_of_range_errors(torch, shape, dim, index):
    _same(torch, lambda T: T.index_select(T.zeros(shape), dim, T.tensor(index)))


@pytest.mark.torch
@pytest.mark.parametrize("fn", ["median", "nanmedian"])
@pytest.mark.parametrize("dtype", ["bool", "int64", "int32", "int16", "uint8", "float16"])
@pytest.mark.parametrize("shape,kwargs", [
    ((2, 0), {}), ((0,), {}), ((2,), {}), ((2, 0), {"dim": 1}), ((2, 3), {"dim": 5}),
    ((2, 0), {"dim": 0}), ((2, 3), {"dim": 1}),
])
def test_median_of_empty_tensors_and_check_order(torch, fn, dtype, shape, kwargs):
    _same(torch, lambda T: getattr(T, fn)(T.zeros(shape, dtype=getattr(T, dtype)), **kwargs))


@pytest.mark.torch
@pytest.mark.parametrize("shape,dtype,dim", [
    ((3, 4), "bool", 2), ((3, 4), "bool", 1), ((), "int64", 0), ((), "int64", 1),
    ((3, 4), "float64", -3),
])
def test_logcumsumexp_checks_the_dim_before_the_dtype(torch, shape, dtype, dim):
    _same(torch, lambda T: T.logcumsumexp(T.zeros(shape, dtype=getattr(T, dtype)), dim))


@pytest.mark.torch
@pytest.mark.parametrize("shape,start,end", [
    ((), 0, 1), ((), 0, 0), ((), -1, 0), ((), 1, 0), ((), -2, 0),
    ((4, 0, 4), 1, -1), ((4, 0, 4), 0, -1), ((4, 0, 4), 0, 1), ((4, 0, 4), 2, 0),
    ((0, 4, 4), 1, -1), ((0, 4, 4), 0, 1),
])
def test_flatten_scalars_and_empty_tensors(torch, shape, start, end):
    _same(torch, lambda T: T.flatten(T.zeros(shape).transpose(0, -1) if shape else T.zeros(
        shape), start, end))


@pytest.mark.torch
def test_flatten_of_an_empty_tensor_passes_its_gradient(torch):
    x = retrograd.zeros(4, 0, 4, requires_grad=True)
    out = retrograd.flatten(x.transpose(0, 2), 1)
    out.sum().backward()
    assert tuple(out.shape) == (4, 0) and x.grad.shape == (4, 0, 4)


@pytest.mark.torch
@pytest.mark.parametrize("shape,dim", [((), -2), ((), 1), ((), -1), ((), 0), ((2, 3), 5)])
def test_prod_checks_a_scalars_dim(torch, shape, dim):
    _same(torch, lambda T: T.prod(T.full(shape, 2.0), dim, True))


@pytest.mark.torch
@pytest.mark.parametrize("dtype,k,dim", [("bool", 1, -3), ("bool", 5, 0), ("bool", 1, 0),
                                         ("float32", 5, 0), ("float32", -1, 0)])
def test_topk_checks_dim_and_k_before_the_dtype(torch, dtype, k, dim):
    _same(torch, lambda T: T.topk(T.zeros(4, 1, dtype=getattr(T, dtype)), k, dim))


@pytest.mark.torch
@pytest.mark.parametrize("shape,src_shape,start,stop,transposed", [
    ((3, 0), (1, 0), 1, 1, True), ((4, 0), (2, 1), 1, 3, False), ((4, 0), (2, 0), 1, 3, True),
])
def test_setitem_into_a_clone_of_an_empty_tensor(torch, shape, src_shape, start, stop,
                                                 transposed):
    """An empty base has no memory layout for in-place autograd to refuse."""
    def call(T):
        leaf = T.zeros(shape[::-1] if transposed else shape, requires_grad=True)
        src = T.zeros(src_shape, requires_grad=True)
        y = (leaf.transpose(0, 1) if transposed else leaf).clone()
        y[start:stop] = src
        y.sum().backward()
        return y, leaf.grad, src.grad
    _same(torch, call)


@pytest.mark.parametrize("dim", [0, -1, -2, 5])
@pytest.mark.parametrize("dtype", ["float32", "bool"])
def test_cat_of_legacy_empty_tensors_only(torch, dim, dtype):
    """Legacy empty 1-d tensors are skipped by cat: when every tensor is one, any dim
    joins them (a shape (0,) result); beside a real tensor, the dim is checked against it."""
    _same(torch, lambda lib: lib.cat([lib.tensor([], dtype=getattr(lib, dtype))] * 2, dim=dim))
    _same(torch, lambda lib: lib.cat([lib.tensor([], dtype=getattr(lib, dtype)),
                                      lib.ones(2, 3, dtype=getattr(lib, dtype))], dim=dim))
