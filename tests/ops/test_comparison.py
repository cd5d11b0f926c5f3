"""Comparison, logical, bitwise and classification ops beyond the op database: operators
with Python numbers, type promotion corner cases, autograd behaviour (never a grad_fn,
except the in-place forms' zero-gradient nodes), identity hashing, ``in``, ``out=``,
``equal``/``allclose``/``isin``, and error types and messages against PyTorch.
"""

import operator

import numpy
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import retrograd

_CMP = ("eq", "ne", "lt", "le", "gt", "ge")
_ALIASES = {"not_equal": "ne", "less": "lt", "less_equal": "le", "greater": "gt",
            "greater_equal": "ge"}


def _same(r, t):
    """Same dtype and values (bool/int exactly)."""
    assert repr(r.dtype) == str(t.dtype)
    numpy.testing.assert_array_equal(r.numpy(), t.numpy())


# ---- values and promotion against PyTorch -------------------------------------------------

_PROMOTION_CASES = [
    # (self values, self dtype, other: values + dtype, or a Python number)
    ([255, 1], "uint8", -1),  # the number wraps into uint8: 255 == -1
    ([255, 1], "uint8", 256),
    ([5, -3], "int32", 2 ** 40),
    ([5, -3], "int32", ([0], "int64")),
    ([16777217, 3], "int64", 16777216.0),  # compared in float32
    ([0.1, 0.2], "float16", 0.1),
    ([5.0, -1.0], "float16", 1e10),  # the number is inf in float16
    ([1.0, 2.0], "float32", (2.0, "float64")),  # a 0-d float64 tensor: float32 compare
    ([0.1, 2.0], "float16", (0.1, "float32")),
    ([1, 2], "int64", (1.5, "float64")),  # a 0-d float of a higher category wins
    ([True, False], "bool", 1),
    ([True, False], "bool", 0.5),
    ([1.0, 2.0], "float32", 1 + 0j),
    ([1 + 1j, 2.0], "complex64", ([1 + 1j, 2.0], "complex128")),
]


def _make(lib, spec):
    if isinstance(spec, tuple) and len(spec) == 2 and isinstance(spec[1], str):
        return lib.tensor(spec[0], dtype=getattr(lib, spec[1]))
    return spec


@pytest.mark.torch
@pytest.mark.parametrize("case", _PROMOTION_CASES, ids=str)
@pytest.mark.parametrize("name", _CMP)
def test_comparison_promotion_matches_torch(torch, name, case):
    values, dtype, other = case
    if name not in ("eq", "ne") and (dtype.startswith("complex") or isinstance(other, complex)):
        pytest.skip("complex numbers have no ordering (PyTorch raises): "
                    "test_errors_match_torch checks that error")
    r = getattr(retrograd, name)(retrograd.tensor(values, dtype=getattr(retrograd, dtype)),
                                 _make(retrograd, other))
    t = getattr(torch, name)(torch.tensor(values, dtype=getattr(torch, dtype)),
                             _make(torch, other))
    _same(r, t)


_OPS = [operator.eq, operator.ne, operator.lt, operator.le, operator.gt, operator.ge,
        operator.and_, operator.or_, operator.xor, operator.lshift, operator.rshift]


@st.composite
def _operands(draw):
    dtype = draw(st.sampled_from(["bool", "uint8", "int32", "int64", "float16", "float32",
                                  "float64"]))
    shapes = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=4))
    a = draw(hnp.arrays(dtype, shapes.input_shapes[0], elements=_small(dtype)))
    if draw(st.booleans()):
        dtype_b = draw(st.sampled_from(["bool", "int64", "int32", "float32", "float64"]))
        b = draw(hnp.arrays(dtype_b, shapes.input_shapes[1], elements=_small(dtype_b)))
    else:
        b = draw(st.one_of(st.integers(-3, 3), st.sampled_from([0.5, -1.0, True, False])))
    return a, b


def _small(dtype):
    """Few distinct values, so ties are common."""
    if dtype == "bool":
        return st.booleans()
    if numpy.dtype(dtype).kind == "u":
        return st.integers(0, 3)
    if numpy.dtype(dtype).kind == "i":
        return st.integers(-3, 3)
    return st.sampled_from([-1.5, -1.0, 0.0, 0.5, 1.0, 3.0, float("nan"), float("inf")])


@pytest.mark.torch
@settings(max_examples=200, deadline=None)
@given(operands=_operands(), op=st.sampled_from(_OPS), reflected=st.booleans())
def test_operators_match_torch(torch, operands, op, reflected):
    """``a <op> b`` and ``b <op> a`` with broadcasting, mixed dtypes and Python numbers."""
    a, b = operands
    ra, ta = retrograd.from_numpy(a.copy()), torch.from_numpy(a.copy())
    rb, tb = ((retrograd.from_numpy(b.copy()), torch.from_numpy(b.copy()))
              if isinstance(b, numpy.ndarray) else (b, b))
    args_r, args_t = ((rb, ra), (tb, ta)) if reflected else ((ra, rb), (ta, tb))
    try:
        t = op(*args_t)
    except (RuntimeError, TypeError, NotImplementedError) as e:
        with pytest.raises(type(e)) as info:
            op(*args_r)
        assert str(info.value) == str(e)
        return
    _same(op(*args_r), t)


@pytest.mark.torch
@pytest.mark.parametrize("alias", list(_ALIASES))
def test_aliases(torch, alias):
    x = retrograd.tensor([1.0, 2.0, 3.0])
    assert getattr(retrograd, alias) is getattr(retrograd, _ALIASES[alias])
    assert getattr(x, alias)(2.0).tolist() == getattr(torch.tensor([1.0, 2.0, 3.0]),
                                                      alias)(2.0).tolist()
    y = retrograd.tensor([1.0, 2.0, 3.0])
    getattr(y, alias + "_")(2)
    t = torch.tensor([1.0, 2.0, 3.0])
    getattr(t, alias + "_")(2)
    assert y.tolist() == t.tolist()


# ---- autograd ------------------------------------------------------------------------------

@pytest.mark.parametrize("name", _CMP + ("isclose",))
def test_no_grad_fn_even_when_inputs_require_grad(name):
    x = retrograd.tensor([1.0, 2.0], requires_grad=True)
    y = retrograd.tensor([1.0, 3.0], requires_grad=True)
    out = getattr(retrograd, name)(x * 1, y)
    assert out.dtype is retrograd.bool
    assert out.grad_fn is None and not out.requires_grad and out.is_leaf


def test_predicates_and_logical_have_no_grad_fn():
    x = retrograd.tensor([0.0, float("nan"), float("inf")], requires_grad=True) * 1
    for out in (retrograd.isnan(x), retrograd.isinf(x), retrograd.isfinite(x),
                retrograd.isposinf(x), retrograd.isneginf(x), retrograd.isreal(x),
                retrograd.logical_and(x, x), retrograd.logical_not(x), x == x, x < 1):
        assert out.grad_fn is None and not out.requires_grad


@pytest.mark.torch
@pytest.mark.parametrize("name", _CMP)
@pytest.mark.parametrize("tensor_other", [False, True])
def test_inplace_comparison_records_zero_gradient_node(torch, name, tensor_other):
    """``b.eq_(c)`` on a non-leaf: ``EqBackward1`` (``EqBackward0`` for a number), as
    PyTorch; the gradients are zero for both operands."""
    def run(lib):
        a = lib.tensor([0.5, 1.5, 2.5], requires_grad=True)
        c = lib.tensor([1.5, 1.5, 0.5], requires_grad=True)
        b = a * 1
        getattr(b, name + "_")(c if tensor_other else 1.5)
        b.backward(lib.ones(3))
        return b, a.grad, c.grad

    (rb, ra, rc), (tb, ta, tc) = run(retrograd), run(torch)
    assert rb.grad_fn.name() == tb.grad_fn.name()
    assert rb.tolist() == tb.tolist() and rb.dtype is retrograd.float32
    assert ra.tolist() == ta.tolist() == [0.0, 0.0, 0.0]
    assert (rc is None) == (tc is None)
    if tc is not None:
        assert rc.tolist() == tc.tolist()


def test_inplace_comparison_on_leaf_requiring_grad_raises():
    a = retrograd.tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        a.eq_(1.0)


def test_rules_can_compare_tensors_under_create_graph():
    """vjp rules call ``xp.isfinite``/``==`` on Tensors when differentiating twice."""
    x = retrograd.tensor([1.0, 2.0, 2.0], requires_grad=True)
    y = retrograd.tensor([3.0, 2.0, 1.0], requires_grad=True)
    (g,) = retrograd.autograd.grad(retrograd.maximum(x, y) * x, [x],
                                   retrograd.ones(3), create_graph=True)
    assert g.tolist() == [3.0, 3.0, 4.0]
    from retrograd.ops import _tensor_xp as xp
    t = retrograd.tensor([1.0, float("inf"), float("nan")])
    assert xp.isfinite(t).tolist() == [True, False, False]
    assert xp.isnan(t).tolist() == [False, False, True]
    assert xp.isinf(t).tolist() == [False, True, False]
    assert xp.logical_and(xp.greater(t, 0), xp.less_equal(t, 1)).tolist() == [True, False,
                                                                                False]
    assert xp.logical_or(xp.equal(t, 1), xp.not_equal(t, t)).tolist() == [True, False, True]
    assert xp.logical_not(xp.greater_equal(t, 2)).tolist() == [True, False, True]
    assert xp.less(t, 2).tolist() == [True, False, False]


# ---- Python protocol -----------------------------------------------------------------------

def test_hash_is_identity_and_dicts_work():
    a, b = retrograd.tensor([1.0]), retrograd.tensor([1.0])
    assert hash(a) != hash(b) and hash(a) == hash(a)
    d = {a: "a", b: "b"}
    assert d[a] == "a" and d[b] == "b"
    assert len({a, b, a}) == 2


@pytest.mark.torch
def test_contains(torch):
    r, t = retrograd.tensor([[1, 2], [3, 4]]), torch.tensor([[1, 2], [3, 4]])
    for element in (3, 5, 2.0, True):
        assert (element in r) == (element in t)
    assert (retrograd.tensor([9, 4]) in r) == (torch.tensor([9, 4]) in t)
    with pytest.raises(RuntimeError) as info:
        "a" in r  # noqa: B015
    with pytest.raises(RuntimeError) as expected:
        "a" in t  # noqa: B015
    assert str(info.value) == str(expected.value)


@pytest.mark.torch
def test_non_numbers_compare_by_identity(torch):
    r, t = retrograd.tensor([1, 2]), torch.tensor([1, 2])
    for other in (None, "a", [1, 2], object()):
        assert (r == other) == (t == other) is False
        assert (r != other) == (t != other) is True
    with pytest.raises(TypeError):
        r < None  # noqa: B015


@pytest.mark.torch
def test_bitwise_operators_inplace_and_invert(torch):
    for lib in (retrograd, torch):
        a = lib.tensor([1, 2, 3], dtype=lib.int32)
        a &= lib.tensor([3])
        a |= 4
        a ^= 1
        b = lib.tensor([True, False])
        b &= True
        b |= lib.tensor([False, True])
        if lib is retrograd:
            ra, rb, rn, rr = a, b, ~a, 6 ^ a
        else:
            _same(ra, a)
            _same(rb, b)
            _same(rn, ~a)
            _same(rr, 6 ^ a)


# ---- out= -----------------------------------------------------------------------------------

@pytest.mark.torch
def test_out_argument(torch):
    for lib in (retrograd, torch):
        x = lib.tensor([1, 2, 3])
        into_float = lib.empty(3)
        res = lib.eq(x, 2, out=into_float)
        assert res is into_float
        into_bool = lib.empty(0, dtype=lib.bool)
        lib.logical_not(x, out=into_bool)
        into_int = lib.zeros(3, dtype=lib.int64)
        lib.bitwise_and(x, 6, out=into_int)
        if lib is retrograd:
            r = (into_float, into_bool, into_int)
        else:
            for a, b in zip(r, (into_float, into_bool, into_int), strict=True):
                _same(a, b)
    bad = retrograd.zeros(3, dtype=retrograd.bool)
    with pytest.raises(RuntimeError, match="result type Long can't be cast to the desired "
                                           "output type Bool"):
        retrograd.bitwise_and(retrograd.tensor([1, 2, 3]), 1, out=bad)
    wrong_shape = retrograd.zeros(2, dtype=retrograd.bool)
    with pytest.warns(UserWarning, match="was resized"):
        retrograd.lt(retrograd.tensor([1, 2, 3]), 2, out=wrong_shape)
    assert wrong_shape.tolist() == [True, False, False]


# ---- isclose, allclose, equal, isin ----------------------------------------------------------

@pytest.mark.torch
def test_allclose_and_equal_return_python_bools(torch):
    cases = [([1.0, 2.0], [1.0, 2.0 + 1e-6], {}),
             ([1.0, 2.0], [1.0, 2.1], {}),
             ([1.0, 2.0], [1.0, 2.1], {"rtol": 0.1}),
             ([1.0, float("nan")], [1.0, float("nan")], {}),
             ([1.0, float("nan")], [1.0, float("nan")], {"equal_nan": True}),
             ([1.0, float("inf")], [1.0, float("inf")], {}),
             ([[1.0, 2.0]], [1.0, 2.0], {})]
    for a, b, kw in cases:
        r = retrograd.allclose(retrograd.tensor(a), retrograd.tensor(b), **kw)
        t = torch.allclose(torch.tensor(a), torch.tensor(b), **kw)
        assert type(r) is bool and r == t
        assert retrograd.tensor(a).allclose(retrograd.tensor(b), **kw) == t
        assert retrograd.equal(retrograd.tensor(a), retrograd.tensor(b)) == \
            torch.equal(torch.tensor(a), torch.tensor(b))
    assert retrograd.equal(retrograd.tensor([1, 2]), retrograd.tensor([1.0, 2.0])) is \
        torch.equal(torch.tensor([1, 2]), torch.tensor([1.0, 2.0])) is True
    assert retrograd.tensor([1, 2]).equal(retrograd.tensor([1, 2, 3])) is False
    assert retrograd.equal(retrograd.tensor([1, 2]), retrograd.tensor([[1, 2]])) is False


@pytest.mark.torch
def test_isin_matches_torch(torch):
    cases = [(([1, 2, 3], "int64"), ([2.5, 3.0], "float32"), {}),
             (([1, 2, 3], "int64"), 2, {}),
             (2, ([1, 2, 3], "int64"), {}),
             (([0.1, 0.2], "float16"), 0.1, {}),
             (([0.1, 0.2], "float16"), ([0.1], "float32"), {}),
             (([255, 0], "uint8"), -1, {}),
             (([[1, 2], [3, 4]], "int32"), ([4, 1], "int32"), {"invert": True}),
             (([1, 2, 3], "int64"), ([1, 3], "int64"), {"assume_unique": True})]
    for e, te, kw in cases:
        r = retrograd.isin(_make(retrograd, e), _make(retrograd, te), **kw)
        t = torch.isin(_make(torch, e), _make(torch, te), **kw)
        _same(r, t)


# ---- errors -----------------------------------------------------------------------------------

_ERRORS = [
    ("lt", lambda m: (m.tensor([1 + 1j]), m.tensor([1j]))),
    ("eq", lambda m: (m.tensor([1]), "a")),
    ("eq", lambda m: (1, m.tensor([1]))),
    ("bitwise_and", lambda m: (m.tensor([1.0]), m.tensor([1.0]))),
    ("bitwise_or", lambda m: (m.tensor([1]), 1.5)),
    ("bitwise_not", lambda m: (m.tensor([1.0]),)),
    ("logical_and", lambda m: (m.tensor([1.0]), 1)),
    ("logical_or", lambda m: (1, m.tensor([1.0]))),
    ("isnan", lambda m: (3,)),
    ("isposinf", lambda m: (m.tensor([1j]),)),
    ("isneginf", lambda m: (m.tensor([1j]),)),
    ("isclose", lambda m: (m.tensor([1.0]), m.tensor([1.0], dtype=m.float64))),
    ("isclose", lambda m: (m.tensor([1.0]), 1.0)),
    ("allclose", lambda m: (m.tensor([True]), m.tensor([1]))),
    ("equal", lambda m: (m.tensor([1]), 3)),
    ("isin", lambda m: (m.tensor([True]), m.tensor([1]))),
    ("isin", lambda m: (m.tensor([1]), 1 + 1j)),
    ("isin", lambda m: (2, 3)),
]


@pytest.mark.torch
@pytest.mark.parametrize("name, args", _ERRORS, ids=[f"{n}-{i}" for i, (n, _) in
                                                      enumerate(_ERRORS)])
def test_errors_match_torch(torch, name, args):
    with pytest.raises(Exception) as expected:
        getattr(torch, name)(*args(torch))
    with pytest.raises(type(expected.value)) as actual:
        getattr(retrograd, name)(*args(retrograd))
    assert str(actual.value) == str(expected.value)


@pytest.mark.torch
def test_operator_errors_match_torch(torch):
    for fn in (lambda m: ~m.tensor([1.0]), lambda m: m.tensor([1.0]) & 1,
               lambda m: m.tensor([1.0, 2.0]).isclose(m.tensor([1.0]), rtol=-1.0),
               lambda m: m.tensor([1.0]).isclose(m.tensor([1.0]), atol=-1e-9),
               lambda m: m.tensor([1, 2]).lt_(m.tensor([[1], [2]])),
               lambda m: m.tensor([1 + 1j]) >= 0):
        with pytest.raises(Exception) as expected:
            fn(torch)
        with pytest.raises(type(expected.value)) as actual:
            fn(retrograd)
        assert str(actual.value) == str(expected.value)


def test_int_beyond_64_bits_overflows():
    with pytest.raises(OverflowError, match="int too big to convert"):
        retrograd.tensor([5.0]) == 2 ** 70  # noqa: B015
    with pytest.raises(OverflowError):
        retrograd.tensor([5]) == -2 ** 63 - 1  # noqa: B015


_SHIFTS = ["x << 1", "x >> 1", "1 << x", "8 >> x", "x << x", "T.bitwise_left_shift(2, x)",
           "T.bitwise_right_shift(16, x)", "f << 1", "x << 1.5", "1.5 << x", "x << -1",
           "-1 >> x", "300 << u", "1 << b", "True << x", "b << b", "1 << u", "-5 >> i8",
           "i8 << 3", "T.tensor(3) << x", "2**63 << x", "x << 'a'", "'a' << x",
           "x.clone().__ilshift__(2)", "x.clone().__irshift__(1)", "x.clone().__ilshift__(1.5)",
           "u.clone().__ilshift__(x[:2])", "T.bitwise_left_shift(2, 3)",
           "T.bitwise_right_shift(x, 'a')"]


@pytest.mark.torch
@pytest.mark.parametrize("expr", _SHIFTS)
def test_shift_operators_and_number_shifted_match_torch(torch, expr):
    """``<<``, ``>>`` (reflected and in place) and a number shifted by a tensor: values,
    dtypes (an out-of-range number wraps into the tensor's dtype) and refusals."""
    def run(T):
        env = {"T": T, "x": T.tensor([1, 2, 3]), "f": T.tensor([1.5]),
               "u": T.tensor([1, 200], dtype=T.uint8), "b": T.tensor([True, False]),
               "i8": T.tensor([3, -4], dtype=T.int8)}
        return eval(expr, env)
    try:
        want = run(torch)
    except (RuntimeError, TypeError, NotImplementedError) as e:
        with pytest.raises(type(e)) as info:
            run(retrograd)
        assert str(info.value).split("\n")[0] == str(e).split("\n")[0]
        return
    _same(run(retrograd), want)
