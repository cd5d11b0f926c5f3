"""Reductions: behaviour beyond the op database.

PyTorch's named result tuples (printing, fields, construction), result dtypes of
integer and bool inputs, argument errors, gradients at the points the database
marks nondifferentiable (zeros of prod/cumprod/norm, ties of max, infinities of
logsumexp) and their second derivatives, each against PyTorch.
"""

import math
import pickle
import warnings

import numpy
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import retrograd


def _pair(torch, a, dtype=None, requires_grad=False):
    r = retrograd.tensor(a, dtype=getattr(retrograd, dtype) if dtype else None,
                         requires_grad=requires_grad)
    t = torch.tensor(a, dtype=getattr(torch, dtype) if dtype else None,
                     requires_grad=requires_grad)
    return r, t


def _close(r, t, atol=1e-6):
    numpy.testing.assert_allclose(r.detach().numpy(), t.detach().numpy(), rtol=1e-5, atol=atol,
                                  equal_nan=True)


# ---- return_types -------------------------------------------------------------------------

@pytest.mark.torch
@pytest.mark.parametrize("keepdim", [False, True])
def test_max_dim_prints_like_torch(torch, keepdim):
    a = [[1.0, 3.0, 3.0], [2.0, 2.0, 0.5]]
    r, t = _pair(torch, a, requires_grad=True)
    assert repr(r.max(1, keepdim)) == repr(t.max(1, keepdim))
    assert str(retrograd.min(r, 0)) == str(torch.min(t, 0))
    assert repr(retrograd.aminmax(r)) == repr(torch.aminmax(t))


def test_named_tuple_fields_and_protocols():
    x = retrograd.tensor([[1.0, 5.0], [7.0, 2.0]])
    r = x.max(1)
    assert isinstance(r, tuple) and type(r) is retrograd.return_types.max
    values, indices = r
    assert r.values is values is r[0] and r.indices is indices is r[1]
    assert indices.tolist() == [1, 0] and r.n_fields == r.n_sequence_fields == 2
    assert r.n_unnamed_fields == 0
    s = retrograd.return_types.sort((1, 2))
    assert pickle.loads(pickle.dumps(s)) == s and type(pickle.loads(pickle.dumps(s))) is type(s)
    assert retrograd.return_types.svd((1, 2, 3)).V == 3


@pytest.mark.torch
def test_return_types_match_torch(torch):
    ours = {c.__name__: c for c in retrograd.return_types.all_return_types}
    theirs = {c.__name__: c for c in torch.return_types.all_return_types
              if not c.__name__.endswith("_out")}
    assert ours.keys() == theirs.keys()
    for name, cls in theirs.items():
        values = tuple(range(cls.n_fields))
        assert repr(ours[name](values)) == repr(cls(values))
    for bad in [(1, 2, 3), 5]:
        with pytest.raises(TypeError) as expected:
            torch.return_types.max(bad)
        with pytest.raises(TypeError) as actual:
            retrograd.return_types.max(bad)
        assert str(actual.value) == str(expected.value)


# ---- dtypes -------------------------------------------------------------------------------

_INT_CASES = [
    ("sum", ()), ("sum", (0,)), ("prod", ()), ("prod", (1,)), ("cumsum", (0,)),
    ("cumprod", (1,)), ("max", ()), ("amax", (0,)), ("amin", ()), ("logsumexp", (1,)),
    ("all", ()), ("any", (1,)), ("count_nonzero", ()), ("trace", ()),
]


@pytest.mark.torch
@pytest.mark.parametrize("dtype", ["int64", "int32", "int16", "uint8", "bool"])
@pytest.mark.parametrize("name, args", _INT_CASES)
def test_integer_result_dtypes(torch, name, args, dtype):
    a = [[1, 0, 2], [3, 1, 1]] if dtype != "bool" else [[True, False, True], [True, True, True]]
    r, t = _pair(torch, a, dtype)
    try:
        expected = getattr(torch, name)(t, *args)
    except (RuntimeError, NotImplementedError) as e:
        with pytest.raises(type(e)) as err:
            getattr(retrograd, name)(r, *args)
        assert str(err.value) == str(e)
        return
    actual = getattr(retrograd, name)(r, *args)
    assert repr(actual.dtype) == str(expected.dtype)
    numpy.testing.assert_allclose(actual.numpy(), expected.numpy(), rtol=1e-6)


@pytest.mark.torch
@pytest.mark.parametrize("name, kwargs", [
    ("sum", {"dtype": "float64"}), ("sum", {"dtype": "int32"}), ("prod", {"dtype": "float32"}),
    ("mean", {"dtype": "float64"}), ("cumsum", {"dim": 0, "dtype": "float16"}),
    ("cumprod", {"dim": 1, "dtype": "int32"}), ("sum", {"dtype": "bool"}),
])
def test_dtype_argument(torch, name, kwargs):
    a = [[1, 0, 2], [3, 1, 1]]
    r, t = _pair(torch, a, "int64")
    dt = kwargs["dtype"]
    actual = getattr(retrograd, name)(r, **{**kwargs, "dtype": getattr(retrograd, dt)})
    expected = getattr(torch, name)(t, **{**kwargs, "dtype": getattr(torch, dt)})
    assert repr(actual.dtype) == str(expected.dtype)
    assert actual.tolist() == expected.tolist()


# ---- errors -------------------------------------------------------------------------------

def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - comparing what each library raises
        return type(e).__name__, str(e)
    return None


@pytest.mark.torch
@pytest.mark.parametrize("call", [
    lambda T, x: T.sum(x, 2), lambda T, x: T.sum(x, (0, -2)), lambda T, x: x.mean((1, 1)),
    lambda T, x: T.amax(x, -3), lambda T, x: x.max(5), lambda T, x: x.argmax(2),
    lambda T, x: x.cumsum(-3), lambda T, x: x.var(3), lambda T, x: x.logsumexp(4),
    lambda T, x: T.count_nonzero(x, (0, 0)), lambda T, x: x.all(7),
    lambda T, x: T.norm(x, dim=3), lambda T, x: x[0, 0].sum(1), lambda T, x: x[0, 0].max(-2),
    lambda T, x: T.prod(x, 2), lambda T, x: T.empty(0, 2).max(),
    lambda T, x: T.empty(0, 2).amin(0), lambda T, x: T.empty(0, 2).argmin(),
    # amin/amax check each dim for zero size, in order and named as given, before repeats
    lambda T, x: T.amin(T.empty(2, 0).mT, (0, -2)), lambda T, x: T.amax(T.empty(2, 0), -1),
    lambda T, x: T.amin(T.empty(2, 0), (0, 1, 0)), lambda T, x: T.amax(T.empty(2, 0), (1, 5)),
    lambda T, x: T.amin(T.empty(0, 2), []),
    lambda T, x: T.norm(T.empty(0, 2), float("inf")), lambda T, x: T.std_mean(x.long()),
    lambda T, x: T.nanmean(x.long()),
])
def test_errors_match_torch(torch, call):
    a = [[1.0, 2.0], [3.0, 4.0]]
    r, t = _pair(torch, a)
    expected = _error(lambda: call(torch, t))
    assert expected is not None
    assert _error(lambda: call(retrograd, r)) == expected


def test_var_argument_conflicts_and_nuclear_norm():
    x = retrograd.ones(3, 4)
    with pytest.raises(TypeError):
        x.var(1, True, correction=0)
    assert abs(float(x.norm("nuc")) - 12 ** 0.5) < 1e-5  # rank one: the one singular value


@pytest.mark.torch
def test_var_warns_when_degrees_of_freedom_vanish(torch):
    for lib in (torch, retrograd):
        x = lib.ones(1, 3)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            v = x.var(0)
        assert [w.category for w in caught] == [UserWarning]
        assert str(caught[0].message).startswith("var(): degrees of freedom is <= 0.")
        assert numpy.isnan(v.numpy()).all()


def test_mean_of_empty_is_quiet_nan():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert math.isnan(retrograd.zeros(0).mean().item())
        assert retrograd.zeros(0, 3).mean(1).shape == (0,)


# ---- gradients at nondifferentiable points, and second order -------------------------------

def _grads(lib, a, fn, order=1):
    """Gradient (and with order=2, the gradient of its weighted sum) of ``fn`` at ``a``."""
    x = lib.tensor(a, dtype=lib.float64, requires_grad=True)
    out = fn(lib, x)
    out = out[0] if isinstance(out, tuple) else out
    w = lib.tensor(numpy.linspace(0.5, 1.5, out.numel()).reshape(tuple(out.shape)),
                   dtype=lib.float64)
    (g,) = lib.autograd.grad((out * w).sum(), x, create_graph=order == 2)
    if order == 1:
        return g.tolist()
    if not g.requires_grad:  # piecewise linear (max, ...): no second derivative
        return g.tolist(), None
    (gg,) = lib.autograd.grad((g * g).sum(), x, allow_unused=True)
    return g.tolist(), None if gg is None else gg.tolist()


_ZEROS_1 = [[2.0, 0.0, 3.0, 0.5], [1.5, 2.0, 0.5, 3.0], [0.0, 0.0, 2.0, 1.0]]
_TIES = [[1.0, 3.0, 3.0, -1.0], [2.0, 2.0, -4.0, -4.0]]
_INF = [[-math.inf, -math.inf, -math.inf], [math.inf, 1.0, 2.0], [-math.inf, 0.5, 1.0]]

_NONDIFF = [
    ("prod_all", _ZEROS_1, lambda T, x: x.prod()),
    ("prod_row", [[2.0, 0.0, 3.0], [1.0, 2.0, 3.0]], lambda T, x: x.prod()),
    ("prod_dim", _ZEROS_1, lambda T, x: x.prod(1)),
    ("prod_dim0", _ZEROS_1, lambda T, x: x.prod(0, keepdim=True)),
    ("cumprod", _ZEROS_1, lambda T, x: x.cumprod(1)),
    ("cumprod_dim0", _ZEROS_1, lambda T, x: x.cumprod(0)),
    ("max", _TIES, lambda T, x: x.max()),
    ("min", _TIES, lambda T, x: x.min()),
    ("max_dim", _TIES, lambda T, x: x.max(1)),
    ("min_dim", _TIES, lambda T, x: x.min(0, True)),
    ("amax", _TIES, lambda T, x: x.amax(1)),
    ("amin_all", _TIES, lambda T, x: x.amin()),
    ("aminmax", _TIES, lambda T, x: sum(T.aminmax(x, dim=1))),
    ("norm2_zero", [[0.0, 0.0], [3.0, 4.0]], lambda T, x: x.norm(dim=1)),
    ("norm3_zero", [[0.0, 0.0], [3.0, 4.0]], lambda T, x: x.norm(3, 1)),
    ("norm1.5_zero", [[0.0, 0.0], [3.0, 4.0]], lambda T, x: x.norm(1.5, 1)),
    ("norm0.5_zero", [[0.0, 1.0], [3.0, 4.0]], lambda T, x: x.norm(0.5, 1)),
    ("norm_inf_ties", _TIES, lambda T, x: x.norm(float("inf"), 1)),
    ("norm1_zero", [[0.0, -2.0], [3.0, 4.0]], lambda T, x: x.norm(1)),
    ("std_zero", [[1.0, 1.0], [3.0, 4.0]], lambda T, x: x.std(1)),
    ("logsumexp_inf", _INF, lambda T, x: x.logsumexp(1)),
    ("max_nan", [[1.0, math.nan], [0.0, 2.0]], lambda T, x: x.max()),
    ("amax_nan", [[1.0, math.nan], [0.0, 2.0]], lambda T, x: x.amax(1)),
]


@pytest.mark.torch
@pytest.mark.parametrize("name, a, fn", _NONDIFF, ids=[c[0] for c in _NONDIFF])
def test_gradients_at_nondifferentiable_points(torch, name, a, fn):
    r = _grads(retrograd, a, fn)
    t = _grads(torch, a, fn)
    numpy.testing.assert_allclose(r, t, rtol=1e-10, atol=1e-12, equal_nan=True)


_SECOND = [c for c in _NONDIFF
           if c[0].startswith(("prod", "cumprod", "max", "min", "amax", "norm2", "norm3"))]


@pytest.mark.torch
@pytest.mark.parametrize("name, a, fn", _SECOND, ids=[c[0] for c in _SECOND])
def test_second_order_at_nondifferentiable_points(torch, name, a, fn):
    r = _grads(retrograd, a, fn, order=2)
    t = _grads(torch, a, fn, order=2)
    numpy.testing.assert_allclose(r[0], t[0], rtol=1e-10, atol=1e-12, equal_nan=True)
    if t[1] is None:
        assert r[1] is None or not numpy.any(r[1])
    else:
        numpy.testing.assert_allclose(r[1], t[1], rtol=1e-10, atol=1e-12, equal_nan=True)


@pytest.mark.torch
def test_logsumexp_values_with_infinities(torch):
    r, t = _pair(torch, _INF + [[math.nan, 1.0, 2.0], [800.0, 801.0, -800.0]])
    _close(r.logsumexp(1), t.logsumexp(1))
    _close(r.logsumexp((0, 1)), t.logsumexp((0, 1)))


def test_prod_and_cumprod_double_backward_agree_with_first_order():
    """The O(n^2) create_graph formula for cumprod with zeros equals the O(n) one."""
    a = numpy.array(_ZEROS_1)
    for fn in (lambda x: x.cumprod(1), lambda x: x.cumprod(0), lambda x: x.prod(1)):
        x = retrograd.tensor(a, requires_grad=True)
        plain = retrograd.autograd.grad(fn(x).sum(), x)[0]
        graph = retrograd.autograd.grad(fn(x).sum(), x, create_graph=True)[0]
        numpy.testing.assert_allclose(graph.detach().numpy(), plain.numpy())


# ---- accumulation, rounding and overflow as PyTorch's CPU kernels --------------------------

def _value_and_grad(lib, a, dtype, fn, seed=0):
    """``fn``'s value and input gradient for a fixed random cotangent, as float64 lists."""
    x = lib.tensor(a, dtype=getattr(lib, dtype), requires_grad=True)
    out = fn(lib, x)
    g = numpy.random.default_rng(seed).standard_normal(tuple(out.shape))
    out.backward(lib.tensor(g, dtype=getattr(lib, dtype)))
    return numpy.array(out.detach().tolist()), numpy.array(x.grad.tolist())


def _same_bits(torch, a, dtype, fn, seed=0):
    for r, t in zip(_value_and_grad(retrograd, a, dtype, fn, seed),
                    _value_and_grad(torch, a, dtype, fn, seed), strict=True):
        numpy.testing.assert_array_equal(r, t)


_SUBNORMAL_COLUMN = [[-0.6690511703491211, 1.661694884300232, -1.401298464324817e-45],
                     [1.1754943508222875e-38, 0.5592166781425476, -0.9021235704421997],
                     [0.7457523345947266, 1.026676893234253, -1.222767949104309],
                     [-1.0, -0.8545875549316406, -10000.0]]
_HALF_WIDE = [[14840.0, -0.51806640625, -0.00705718994140625, -56864.0],
              [22.890625, -0.0294952392578125, -0.00012123584747314453, -0.00010263919830322266],
              [0.035614013671875, -329.5, -826.0, 13.6328125],
              [0.00031566619873046875, -38.0, -2378.0, 0.0026798248291015625]]


@pytest.mark.torch
@pytest.mark.parametrize("a, dtype, fn", [
    (_SUBNORMAL_COLUMN, "float32", lambda T, x: T.cumprod(x, 0)),
    (_HALF_WIDE, "float16", lambda T, x: T.cumprod(x, -2)),
    ([[2.0, 0.0, 3.0, 0.5, 7.0], [1.5, 2.0, 0.0, 3.0, 0.0]], "float16",
     lambda T, x: T.cumprod(x, 1)),
    ([1e8, 3.0, 3.0, 3.0], "float32", lambda T, x: T.cumsum(x, 0)),
    ([[1e8, 3.0], [3.0, 3.0], [3.0, 3.0]], "float32", lambda T, x: x.flip(0).cumsum(0)),
    ([2048.0, 1.0, 1.0, 1.0, 1.0], "float16", lambda T, x: T.cumsum(x, 0)),
], ids=["cumprod_subnormal_f32", "cumprod_half_overflow", "cumprod_half_zeros",
        "cumsum_f32", "cumsum_f32_backward", "cumsum_half"])
def test_scans_accumulate_as_torch(torch, a, dtype, fn):
    """float32 scans accumulate in float64 and float16 ones in float32, each output rounded;
    the backward is PyTorch's composite in the input's dtype (float16 products past 65504
    are inf there)."""
    _same_bits(torch, a, dtype, fn)


@pytest.mark.torch
@pytest.mark.parametrize("dtype", ["float16", "float32"])
@pytest.mark.parametrize("a", [math.inf, -math.inf, 2.0, math.nan])
def test_var_grad_without_degrees_of_freedom(torch, dtype, a):
    """PyTorch's var_backward compares each element with the mean: NaN where equal (an
    infinite element equals its mean: inf - inf is not 0, but inf == inf)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _same_bits(torch, a, dtype, lambda T, x: T.var(x, dim=0))


@pytest.mark.torch
@pytest.mark.parametrize("a, dtype, fn", [
    ([[-33504.0]] * 2, "float16", lambda T, x: T.nanmean(x, dim=-2, keepdim=True)),
    ([[[-0.478759765625, -32752.0], [0.305908203125, math.nan], [0.611328125, 0.5571289]]] * 3,
     "float16", lambda T, x: T.nanmean(x, dim=0)),
    ([[1.0, math.nan], [math.nan, math.nan]], "float32", lambda T, x: T.nanmean(x, 1)),
    ([[1.0, math.nan], [math.nan, math.nan]], "float32", lambda T, x: T.nansum(x, 1) / 0),
], ids=["nanmean_half_overflow", "nanmean_half_nan_column", "nanmean_all_nan",
        "nansum_inf_grad"])
def test_nanmean_is_nansum_over_count(torch, a, dtype, fn):
    """PyTorch's nanmean rounds the nansum to its dtype before dividing, and nansum's
    backward multiplies by the not-NaN mask (inf * 0: NaN at a NaN element)."""
    _same_bits(torch, a, dtype, fn)
    r, t = (fn(lib, lib.ones(2, 2, requires_grad=True)).grad_fn for lib in (retrograd, torch))
    assert type(r).__name__ == type(t).__name__
    assert [type(f).__name__ for f, _ in r.next_functions] == [
        type(f).__name__ for f, _ in t.next_functions]


@pytest.mark.torch
@pytest.mark.parametrize("a, dtype, fn", [
    ([[[-8.988465674311579e307, -1.6698873332471662]]], "float64",
     lambda T, x: T.std(x.expand(3, 1, 2), dim=-3)),
    ([[-8.988465674311579e307] * 3, [1.0, 2.0, 4.0]], "float64", lambda T, x: T.var(x, 1)),
    ([[3e38, 3e38], [1.0, 2.0]], "float32", lambda T, x: T.std(x, 1)),
    ([[1.0, 1.0000001, 1.0000001], [2.0, 2.0000002, 2.0]], "float32", lambda T, x: T.var(x, 1)),
    ([-8.988465674311579e307] * 3, "float64", lambda T, x: T.std(x)),
    ([[3e38], [3e38]], "float32", lambda T, x: T.var(x, 0)),
], ids=["std_expanded_huge", "var_huge_rows", "std_f32_huge", "var_f32_mean_in_f64",
        "std_all_overflows", "var_one_output_overflows"])
def test_variance_as_torch_kernels(torch, a, dtype, fn):
    """A reduction to several outputs is Welford's in float64 (its running mean does not
    overflow); one to a single float32/float64 output takes the mean in the input's dtype."""
    _same_bits(torch, a, dtype, fn)



@pytest.mark.torch
@pytest.mark.parametrize("a, p, dim", [
    ([[0.15660317, 0.37062612, 1.401298464324817e-45, -1.1863039]], 2, 0),
    ([[[0.5, -1.7014117331926443e+38, 1.3445873]]], 3, -2),
    ([[[1.401298464324817e-45]]], 2, None),
], ids=["subnormal_p2", "huge_p3", "all_dims"])
def test_norm_over_dims_of_size_one_is_abs(torch, a, p, dim):
    """PyTorch's norm over dims all of size 1 is ``|x|`` (``x != 0`` for p = 0), not the
    reduction's formula, whose square or cube underflows to 0 or overflows to inf."""
    _same_bits(torch, a, "float32", lambda T, x: T.norm(x, p=p, dim=dim))
    r, t = (lib.norm(lib.tensor([[[-2.5, 0.0, 4.0]]]), p=0, dim=(0, 1)) for lib in (retrograd,
                                                                                  torch))
    assert r.tolist() == t.tolist() == [1.0, 0.0, 1.0]

# ---- properties ---------------------------------------------------------------------------

@settings(max_examples=40, deadline=None)
@given(shape=st.lists(st.integers(1, 4), min_size=0, max_size=4),
       data=st.data(), keepdim=st.booleans())
def test_sum_mean_amax_over_random_dims(shape, data, keepdim):
    a = numpy.random.default_rng(len(shape)).standard_normal(shape)
    dims = data.draw(st.lists(st.integers(-max(len(shape), 1), max(len(shape), 1) - 1),
                              unique_by=lambda d: d % max(len(shape), 1), max_size=len(shape)))
    axes = tuple(d % max(len(shape), 1) for d in dims) if shape else ()
    full = axes if dims else tuple(range(len(shape)))
    x = retrograd.tensor(a, requires_grad=True)
    for name, ref in (("sum", numpy.sum), ("mean", numpy.mean), ("amax", numpy.amax)):
        out = getattr(retrograd, name)(x, tuple(dims), keepdim=keepdim)
        numpy.testing.assert_allclose(out.detach().numpy(),
                                      ref(a, axis=full, keepdims=keepdim), rtol=1e-12)
        (g,) = retrograd.autograd.grad(out.sum(), x)
        assert g.shape == x.shape
    (g,) = retrograd.autograd.grad(x.sum(tuple(dims), keepdim=keepdim).sum(), x)
    numpy.testing.assert_array_equal(g.numpy(), numpy.ones(shape))


@pytest.mark.torch
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("fn", [
    lambda T, x: T.var(x), lambda T, x: T.std(x, 1), lambda T, x: x.var(0, correction=0),
    lambda T, x: T.var_mean(x, 1), lambda T, x: T.std_mean(x, 0, keepdim=True)],
    ids=["var", "std_dim", "var_corr0", "var_mean", "std_mean"])
def test_variance_of_complex_is_real(torch, dtype, fn):
    """The mean of |x - mean|^2, in the real dtype of the input's precision."""
    a = [[1 + 2j, 3 - 1j, 0.5 + 0.5j], [2j, 1, -1 - 1j]]
    r, t = _pair(torch, a, dtype)
    rs, ts = fn(retrograd, r), fn(torch, t)
    for ro, to in zip(*((o,) if not isinstance(o, tuple) else o for o in (rs, ts)), strict=True):
        assert str(ro.dtype) == str(to.dtype)
        numpy.testing.assert_allclose(ro.numpy(), to.numpy(), rtol=1e-6)


@pytest.mark.torch
def test_nansum_refuses_complex_as_torch(torch):
    for call in (lambda T: T.nansum(T.tensor([1 + 1j, 2])),
                 lambda T: T.nansum(T.tensor([1.0, 2.0]), dtype=T.complex64),
                 lambda T: T.nanmean(T.tensor([1 + 1j, float("nan")]))):
        assert _error(lambda c=call: c(retrograd)) == _error(lambda c=call: c(torch))


@pytest.mark.torch
@pytest.mark.parametrize("fn", [
    lambda lib: lib.ones(2).mean(dtype=lib.int64),
    lambda lib: lib.ones(2, 3).mean(1, dtype=lib.bool),
    lambda lib: lib.ones(2, dtype=lib.int64).mean(5, dtype=lib.int64),  # dtype checked first
    lambda lib: lib.ones(2).nanmean(dtype=lib.int64),
    lambda lib: lib.ones(2, dtype=lib.int64).nanmean(dtype=lib.int64),
    lambda lib: lib.aminmax(lib.tensor(1.0), dim=1),
    lambda lib: lib.aminmax(lib.tensor(1.0), dim=(0,)),
    lambda lib: lib.aminmax(lib.ones(2), dim=(0,)),
])
def test_mean_dtype_and_aminmax_dim_errors(torch, fn):
    """A sweep of reductions with dims and dtype= found these accepted: mean/nanmean to an
    integer dtype (an int64 result), aminmax of a 0-d tensor with a dim out of range or a
    tuple of dims."""
    def outcome(lib):
        try:
            return fn(lib)
        except (RuntimeError, IndexError, TypeError) as e:
            return type(e).__name__, str(e)
    assert outcome(retrograd) == outcome(torch)


@pytest.mark.torch
@pytest.mark.parametrize("name", ["cummax", "cummin"])
@pytest.mark.parametrize("shape, dim", [((), 1), ((), -2), ((), 0), ((), (0,)), ((2,), (0,))])
def test_running_extrema_dim_errors(torch, name, shape, dim):
    """cummax/cummin of a 0-d tensor name their own range ([-1, 0]); a tuple dim is a
    TypeError naming the argument."""
    def outcome(lib):
        try:
            return [t.tolist() for t in getattr(lib, name)(lib.ones(shape), dim)]
        except (IndexError, TypeError) as e:
            return type(e).__name__, str(e)
    assert outcome(retrograd) == outcome(torch)


def _reduction_outcome(lib, call, exact):
    try:
        out = eval(call, {"lib": lib, "x": lib.ones(2, 3)})
    except TypeError as e:
        return "TypeError", str(e) if exact else None
    return [t.shape for t in out] if isinstance(out, tuple) else out.shape


@pytest.mark.torch
@pytest.mark.parametrize("call", [
    f"lib.{name}(x, {args})"
    for name in ("sum", "mean", "prod", "max", "min", "median", "nanmedian")
    for args in ("keepdim=True", "keepdim=False")
] + [
    "lib.sum(x, keepdim=True, dtype=lib.float64)", "lib.prod(x, keepdim=True, dtype=lib.int64)",
    "lib.sum(x, dim=None, keepdim=True)", "lib.sum(x, None, True)", "lib.sum(x, None)",
    "lib.mean(x, dim=None, keepdim=True)", "lib.nansum(x, keepdim=True)",
    "lib.nanmean(x, keepdim=True)", "lib.amax(x, keepdim=True)", "lib.std(x, keepdim=True)",
    "lib.var(x, keepdim=True)", "lib.std_mean(x, keepdim=True)", "lib.all(x, keepdim=True)",
    "lib.any(x, keepdim=True)", "lib.argmax(x, keepdim=True)", "lib.sum(x)", "lib.prod(x)",
    "lib.median(x)", "lib.max(x)", "lib.max(x, 1, keepdim=True)", "lib.median(x, 0, True)",
    "lib.prod(x, dim=None, keepdim=True)", "lib.prod(x, dim=None, dtype=lib.float64)",
    "lib.median(x, dim=None, keepdim=True)", "lib.nanmedian(x, dim=None)",
    "lib.mode(x, dim=None)", "lib.logsumexp(x, dim=None, keepdim=True)",
    "x.max(dim=None, keepdim=True)", "x.min(dim=None, keepdim=False)",
])
def test_keepdim_without_a_dim(torch, call):
    """``keepdim`` without ``dim`` matches none of PyTorch's overloads of sum, mean, prod,
    max, min, median and nanmedian (retrograd reduced everything), and those whose dim is
    an int refuse an explicit None; the TypeError's message as the function form's."""
    assert _reduction_outcome(retrograd, call, True) == _reduction_outcome(torch, call, True)


@pytest.mark.torch
@pytest.mark.parametrize("call", [
    "x.sum(keepdim=True)", "x.mean(keepdim=False)", "x.prod(keepdim=True)",
    "x.max(keepdim=True)", "x.median(keepdim=True)", "lib.max(x, dim=None, keepdim=True)",
    "lib.prod(x, None, True)", "x.median(None, True)", "lib.prod(x, dim=None)", "x.min(dim=None)",
    "lib.mean(x, keepdim=True, dtype=lib.float64)",
])
def test_keepdim_without_a_dim_methods_and_positions(torch, call):
    """The method forms and positional Nones raise the same TypeError; PyTorch's message
    lists the method's overloads or the argument's position, which retrograd's shared
    function cannot tell (docs/deviations.md)."""
    assert _reduction_outcome(retrograd, call, False) == _reduction_outcome(torch, call, False)
