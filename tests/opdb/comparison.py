"""Op database entries for ``ops/comparison.py``: comparisons, logical, bitwise,
classification (isnan ...), isclose and isin.

Results are bool tensors without gradients (``supports_grad=False``), so the
samples test values and type promotion: ties, broadcasting both ways, 0-d
tensors and Python numbers (ints outside the dtype's range wrap as in
PyTorch), mixed dtypes (int with float, float32 with a float64 0-d tensor,
which compares in float32), nan and inf. The in-place comparisons are the
exception: they record a node with zero gradients, checked against PyTorch.
"""

import operator

import numpy

import retrograd

from ._core import ErrorInput, OpInfo, SampleInput, make_tensor

_FLOAT = ("float32", "float64")
_INT = ("int64", "int32", "uint8", "bool")
_ALL = ("float32", "float64", "float16", "int64", "int32", "uint8", "bool")


def _kind(dtype):
    return numpy.dtype(dtype).kind


def _other_category(dtype):
    return "float32" if _kind(dtype) in "biu" else "int64"


def _tensor(value, dtype):
    return retrograd.tensor(value, dtype=getattr(retrograd, dtype))


def _specials(x):
    """Put nan, +inf, -inf and 0 into the first elements of a float tensor."""
    if _kind(x.dtype.name) == "f":
        flat = x._data.reshape(-1)
        flat[:4] = (numpy.nan, numpy.inf, -numpy.inf, 0.0)[:flat.size]
    return x


def _comparison_samples(inplace=False):
    """``op(self, other)``; ``inplace`` keeps the samples whose broadcast shape is self's."""
    def samples(dtype, requires_grad):
        def a(*shape, dt=dtype, **kw):
            return make_tensor(*shape, dtype=dt, low=-3, high=3, requires_grad=requires_grad,
                               **kw)

        x, y = a(2, 3), a(2, 3)
        y._data[0] = x._data[0]
        yield SampleInput(x, args=(y,), name="ties", nondifferentiable=True)
        yield SampleInput(a(2, 3), args=(a(3),), name="broadcast_other")
        yield SampleInput(a(2, 3), args=(a(),), name="0d_other")
        yield SampleInput(a(3, 2, noncontiguous=True), args=(a(3, 2),), name="strided")
        for s in (1, 0.5, True):
            yield SampleInput(a(2, 3), args=(s,), name=f"scalar_{type(s).__name__}")
        if _kind(dtype) in "iu":  # PyTorch wraps the number into the dtype: uint8 255 == -1
            x = a(2, 3)
            x._data[0, 0] = numpy.array(-1).astype(x._data.dtype)
            yield SampleInput(x, args=(-1,), name="wrapped_negative_int")
            yield SampleInput(a(2, 3), args=(2 ** 40 + 1,), name="wrapped_large_int")
        other = _other_category(dtype)
        y = a(3, dt=other)
        x = a(2, 3)
        x._data[0] = y._data  # equal values of two categories
        yield SampleInput(x, args=(y,), name=f"{other}_other", nondifferentiable=True)
        if _kind(dtype) == "f":  # a wider 0-d tensor is converted to self's dtype
            wider = "float32" if dtype == "float64" else "float64"
            x = a(2, 3)
            x._data[0, 0] = 0.1
            yield SampleInput(x, args=(_tensor(0.1, wider),), name=f"{wider}_0d_other",
                              nondifferentiable=True)
            y = _specials(a(2, 3))
            yield SampleInput(_specials(a(2, 3)), args=(y,), name="nan_inf",
                              nondifferentiable=True)
        if inplace:
            return
        yield SampleInput(a(3, 1), args=(a(1, 4),), name="broadcast_both")
        yield SampleInput(a(3), args=(a(2, 3),), name="broadcast_self")
        yield SampleInput(a(), args=(a(2, 3),), name="0d_self")
        yield SampleInput(a(0, 3), args=(a(3),), name="empty")
    return samples


def _inplace(name):
    """The method ``name`` on the sample's tensor, on a non-leaf copy when it requires grad."""
    def fn(input, *args, **kwargs):
        return getattr(input * 1 if input.requires_grad else input, name)(*args, **kwargs)
    return dict(op=fn, torch_op=fn, method=True)


def _same(fn):
    """An entry written with Python operators: one callable serves both libraries."""
    return dict(op=fn, torch_op=fn)


def _comparison(name, torch_aliases=()):
    """The function, its aliases, the in-place form and the in-place aliases."""
    samples, ip = _comparison_samples(), _comparison_samples(inplace=True)
    entries = [OpInfo(name, samples, dtypes=_ALL, supports_grad=False)]
    entries += [OpInfo(a, samples, dtypes=_FLOAT, supports_grad=False) for a in torch_aliases]
    entries += [OpInfo(n + "_", ip, dtypes=_ALL if n == name else _FLOAT,
                       supports_gradgrad=False, **_inplace(n + "_"))
                for n in (name, *torch_aliases)]
    return entries


def _comparison_errors(name):
    def errors():
        x = make_tensor(3, dtype="complex64")
        yield ErrorInput(SampleInput(x, args=(x,)), NotImplementedError, name="complex")
        yield ErrorInput(SampleInput(make_tensor(3), args=("a",)), TypeError, name="str_other")
    return errors


def _inplace_errors():
    yield ErrorInput(SampleInput(make_tensor(3), args=(make_tensor(2, 3),)),
                     name="output_shape")


def _operator_entries():
    """``x < y``, ``2 < x`` (Python swaps it to ``x > 2``), ``x == None`` and friends."""
    samples = _comparison_samples()
    entries = []
    for name, fn in (("eq", operator.eq), ("ne", operator.ne), ("lt", operator.lt),
                     ("le", operator.le), ("gt", operator.gt), ("ge", operator.ge)):
        entries += [OpInfo(f"__{name}__", samples, dtypes=("float32", "int64"),
                           supports_grad=False, **_same(fn)),
                    OpInfo(f"__{name}__", _scalar_samples(2, 0.5), variant="reflected",
                           dtypes=("float32", "int64"), supports_grad=False,
                           **_same(lambda x, s, fn=fn: fn(s, x)))]
    entries.append(OpInfo("__eq__", _scalar_samples(None, "a", [1]), variant="non_number",
                          dtypes=("float32",), supports_grad=False,
                          **_same(lambda x, s: (x == s, x != s))))
    return entries


def _scalar_samples(*values):
    def samples(dtype, requires_grad):
        x = make_tensor(2, 3, dtype=dtype, low=-3, high=3, requires_grad=requires_grad)
        for v in values:
            yield SampleInput(x, args=(v,), name=f"scalar_{type(v).__name__}")
    return samples


# ---- logical and bitwise ------------------------------------------------------------------

def _logical_samples(inplace=False, dtypes_of_other=None):
    def samples(dtype, requires_grad):
        def a(*shape, dt=dtype):
            t = make_tensor(*shape, dtype=dt, low=0, high=2)
            t._data.reshape(-1)[::2] = 0  # zeros among the nonzero values
            return t

        yield SampleInput(a(2, 3), args=(a(2, 3),), name="same_shape")
        yield SampleInput(a(2, 3), args=(a(3),), name="broadcast_other")
        yield SampleInput(a(2, 3), args=(a(),), name="0d_other")
        for other in dtypes_of_other(dtype) if dtypes_of_other else (_other_category(dtype),):
            yield SampleInput(a(2, 3), args=(a(3, dt=other),), name=f"{other}_other")
        if inplace:
            return
        yield SampleInput(a(3), args=(a(2, 3),), name="broadcast_self")
        yield SampleInput(a(0, 3), args=(a(3),), name="empty")
    return samples


def _bitwise_samples(inplace=False):
    def others(dtype):  # in place, a bool self cannot take an integer result
        return () if inplace and dtype == "bool" else tuple(d for d in _INT if d != dtype)
    base = _logical_samples(inplace, others)

    def samples(dtype, requires_grad):
        yield from base(dtype, requires_grad)
        x = make_tensor(2, 3, dtype=dtype, low=0, high=9)
        yield SampleInput(x, args=(True,), name="scalar_bool")
        if dtype != "bool":
            for s in (5, -1, 300):  # -1 and 300 wrap into uint8
                yield SampleInput(x, args=(s,), name=f"scalar_{s}")
    return samples


def _unary_samples(dtype, requires_grad):
    x = make_tensor(2, 3, dtype=dtype, low=-3, high=3)
    yield SampleInput(_specials(x), name="specials")
    yield SampleInput(make_tensor(dtype=dtype, low=-3, high=3), name="0d")
    yield SampleInput(make_tensor(0, 2, dtype=dtype), name="empty")


def _complex_unary_samples(dtype, requires_grad):
    x = make_tensor(2, 3, dtype=dtype)
    x._data[0] += 1j
    x._data[1, 0] = complex(numpy.nan, 0)
    x._data[1, 1] = complex(0, numpy.inf)
    yield SampleInput(x, name="complex")


def _bitwise_errors(name):
    def errors():
        x = make_tensor(3)
        yield ErrorInput(SampleInput(x, args=(x,)), NotImplementedError, name="float")
        i = make_tensor(3, dtype="int64")
        yield ErrorInput(SampleInput(i, args=(1.5,)), NotImplementedError, name="float_scalar")
    return errors


def _logical_errors():
    yield ErrorInput(SampleInput(make_tensor(3), args=(1,)), TypeError, name="number_other")


def _not_errors(name):
    def errors():
        if name == "bitwise_not":
            yield ErrorInput(SampleInput(make_tensor(3)), NotImplementedError, name="float")
        yield ErrorInput(SampleInput(3), TypeError, name="number_input")
    return errors


def _signed_inf_errors():
    yield ErrorInput(SampleInput(make_tensor(3, dtype="complex64")), name="complex")


# ---- isclose, isin ------------------------------------------------------------------------

def _isclose_samples(dtype, requires_grad):
    x = make_tensor(2, 3, dtype=dtype, low=-3, high=3)
    if _kind(dtype) in "biu":
        y = make_tensor(2, 3, dtype=dtype, low=-3, high=3)
        yield SampleInput(x, args=(y,), name="default")
        yield SampleInput(x, args=(y,), kwargs={"rtol": 0.5, "atol": 1}, name="loose")
        yield SampleInput(x, args=(make_tensor(3, dtype=dtype),), name="broadcast")
        return
    y = x * (1 + 1e-6) if dtype != "float16" else x * 1
    y._data[0, 0] += 1e-3
    yield SampleInput(x, args=(y,), name="near")
    yield SampleInput(x, args=(y,), kwargs={"rtol": 1e-2, "atol": 0.0}, name="rtol_only")
    yield SampleInput(x, args=(y,), kwargs={"rtol": 0, "atol": 0}, name="zero_tolerance")
    yield SampleInput(x, args=(make_tensor(3, dtype=dtype),), kwargs={"atol": 0.5},
                      name="broadcast")
    s, t = _specials(make_tensor(2, 3, dtype=dtype)), _specials(make_tensor(2, 3, dtype=dtype))
    t._data[0, 2] = -numpy.inf
    for equal_nan in (False, True):
        yield SampleInput(s, args=(t,), kwargs={"equal_nan": equal_nan},
                          name=f"nan_inf_equal_nan_{equal_nan}")


def _isclose_errors():
    yield ErrorInput(SampleInput(make_tensor(3), args=(make_tensor(3, dtype="float64"),)),
                     name="dtypes")
    yield ErrorInput(SampleInput(make_tensor(3), args=(make_tensor(3),), kwargs={"rtol": -1.0}),
                     name="negative_rtol")
    yield ErrorInput(SampleInput(make_tensor(3), args=(make_tensor(3),), kwargs={"atol": -0.5}),
                     name="negative_atol")
    yield ErrorInput(SampleInput(make_tensor(3), args=(1.0,)), TypeError, name="number_other")


def _isin_samples(dtype, requires_grad):
    x = make_tensor(2, 3, dtype=dtype, low=0, high=6)
    yield SampleInput(x, args=(make_tensor(4, dtype=dtype, low=0, high=6),), name="tensor")
    yield SampleInput(x, args=(make_tensor(2, 2, dtype=dtype, low=0, high=6),),
                      kwargs={"invert": True}, name="invert")
    yield SampleInput(x, args=(_tensor([1, 3], dtype),), kwargs={"assume_unique": True},
                      name="assume_unique")
    yield SampleInput(x, args=(3,), name="scalar_test_element")
    yield SampleInput(2, args=(x,), name="scalar_element")
    other = _other_category(dtype)
    yield SampleInput(x, args=(_tensor([1.5, 2, 3], "float32") if other == "float32"
                               else _tensor([1, 2], "int64"),), name=f"{other}_test_elements")
    if _kind(dtype) == "f":
        x = make_tensor(2, 3, dtype=dtype, low=0, high=6)
        x._data[0, 0] = 0.1
        yield SampleInput(x, args=(0.1,), name="scalar_in_self_dtype")


def _isin_errors():
    yield ErrorInput(SampleInput(make_tensor(3, dtype="bool"), args=(make_tensor(3),)),
                     name="bool")
    yield ErrorInput(SampleInput(make_tensor(3, dtype="int64"), args=(1 + 1j,)),
                     name="complex_number")


OPS = [
    *_comparison("eq"),
    *_comparison("ne", ("not_equal",)),
    *_comparison("lt", ("less",)),
    *_comparison("le", ("less_equal",)),
    *_comparison("gt", ("greater",)),
    *_comparison("ge", ("greater_equal",)),
    *[OpInfo(n, _comparison_samples(), variant="errors", dtypes=(), supports_grad=False,
             error_inputs=_comparison_errors(n)) for n in ("lt", "ge")],
    OpInfo("eq_", _comparison_samples(inplace=True), variant="errors", dtypes=(),
           supports_grad=False, error_inputs=_inplace_errors, **_inplace("eq_")),
    *_operator_entries(),
    *[OpInfo(n, _logical_samples(), dtypes=_ALL + ("complex64",), supports_grad=False)
      for n in ("logical_and", "logical_or", "logical_xor")],
    *[OpInfo(n + "_", _logical_samples(inplace=True), dtypes=_ALL, supports_grad=False,
             **_inplace(n + "_")) for n in ("logical_and", "logical_or", "logical_xor")],
    OpInfo("logical_and", _logical_samples(), variant="errors", dtypes=(), supports_grad=False,
           error_inputs=_logical_errors),
    OpInfo("logical_not", _unary_samples, dtypes=_ALL, supports_grad=False,
           error_inputs=_not_errors("logical_not")),
    OpInfo("logical_not_", _unary_samples, dtypes=_ALL, supports_grad=False,
           **_inplace("logical_not_")),
    *[OpInfo(n, _bitwise_samples(), dtypes=_INT, supports_grad=False,
             error_inputs=_bitwise_errors(n)) for n in ("bitwise_and", "bitwise_or",
                                                       "bitwise_xor")],
    *[OpInfo(n + "_", _bitwise_samples(inplace=True), dtypes=_INT, supports_grad=False,
             **_inplace(n + "_")) for n in ("bitwise_and", "bitwise_or", "bitwise_xor")],
    *[OpInfo(f"__{n}__", _bitwise_samples(), dtypes=_INT, supports_grad=False, **_same(fn))
      for n, fn in (("and", operator.and_), ("or", operator.or_), ("xor", operator.xor))],
    *[OpInfo(f"__r{n}__", _scalar_samples(True, 6), dtypes=_INT, supports_grad=False,
             **_same(lambda x, s, fn=fn: fn(s, x)))
      for n, fn in (("and", operator.and_), ("or", operator.or_), ("xor", operator.xor))],
    OpInfo("bitwise_not", _unary_samples, dtypes=_INT, supports_grad=False,
           error_inputs=_not_errors("bitwise_not")),
    OpInfo("bitwise_not_", _unary_samples, dtypes=_INT, supports_grad=False,
           **_inplace("bitwise_not_")),
    OpInfo("__invert__", _unary_samples, dtypes=_INT, supports_grad=False,
           **_same(operator.invert)),
    *[OpInfo(n, _unary_samples, dtypes=_ALL, supports_grad=False)
      for n in ("isnan", "isinf", "isfinite")],
    *[OpInfo(n, _unary_samples, dtypes=_ALL, supports_grad=False,
             error_inputs=_signed_inf_errors) for n in ("isposinf", "isneginf")],
    *[OpInfo(n, _complex_unary_samples, variant="complex", dtypes=("complex64", "complex128"),
             supports_grad=False) for n in ("isnan", "isinf", "isfinite", "isreal")],
    OpInfo("isreal", _unary_samples, dtypes=_ALL, supports_grad=False),
    OpInfo("isclose", _isclose_samples, dtypes=("float32", "float64", "float16", "int64",
                                                "bool"),
           supports_grad=False, error_inputs=_isclose_errors),
    OpInfo("isin", _isin_samples, dtypes=("float32", "float64", "int64", "int32", "uint8"),
           supports_grad=False, error_inputs=_isin_errors),
]
