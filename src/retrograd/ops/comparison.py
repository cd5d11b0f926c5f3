"""Comparison, logical, bitwise and classification ops: results without gradients.

Comparisons promote their operands with PyTorch's rules (an int tensor
compared with 2.5 compares in float; a float16 tensor with a float32 0-d
tensor compares in float16) and give bool tensors. They are declared without
vjp rules, so no node is recorded even when an input requires grad. Their
in-place forms (``x.eq_(y)``) write 1/0 into ``x`` and, as in PyTorch,
record a node (``EqBackward0`` for a number, ``EqBackward1`` for a tensor)
whose gradients are zero. They compute in their operands' dtype, float16
included (a number compared with a float16 tensor is rounded to float16 first,
as in PyTorch): every op here is declared ``upcast=False``.
"""

import functools
import numbers

import ml_dtypes

from .._dtype import can_cast, is_inexact, kind_of, result_type
from .. import _dtype
from .._tensor import Tensor
from .shape import broadcast_shapes
from ._registry import (_broadcast_error, _pretty, apply, apply_inplace, defop, register,
                        register_pair)

defop = functools.partial(defop, upcast=False)

__all__ = ["eq", "ne", "lt", "le", "gt", "ge", "not_equal", "less", "less_equal", "greater",
           "greater_equal", "logical_and", "logical_or", "logical_xor", "logical_not",
           "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift",
           "bitwise_right_shift", "bitwise_not", "isnan", "isinf",
           "isfinite", "isposinf", "isneginf", "isreal", "isclose", "allclose", "equal", "isin"]

_BOTH = ("self", "other")

# Python ints reach PyTorch kernels through int64/uint64 and are then cast (wrapping)
# to the integer dtype computed in; NumPy would raise for out-of-range ints instead.
_INT_RANGE = {d.np: (int(ml_dtypes.iinfo(d.np).min), int(ml_dtypes.iinfo(d.np).max))
              for d in (_dtype.int8, _dtype.int16, _dtype.int32, _dtype.int64, _dtype.uint8)}
_ANY_RANGE = (-2 ** 63, 2 ** 64 - 1)


def _fit_int(v, dtype):
    """A Python int as PyTorch converts it for an operation in ``dtype``."""
    lo, hi = _INT_RANGE.get(dtype, _ANY_RANGE)
    if lo <= v <= hi:
        return v
    if v > _ANY_RANGE[1]:
        raise OverflowError("int too big to convert")
    if v < _ANY_RANGE[0]:
        raise OverflowError("can't convert negative int to unsigned")
    return (v - lo) % (hi - lo + 1) + lo


def _not_implemented(name, dtype):
    return NotImplementedError(f'"{name}_cpu" not implemented for \'{_pretty(dtype)}\'')


def _binary_forward(ufunc, name, reject):
    """Forward of a promoted binary op (``xp.<ufunc>``): ints wrapped as PyTorch does,
    dtype kinds checked.

    ``self`` is the promoted array (its dtype is the result type), ``other`` an
    array or a Python number.
    """
    def forward(xp, self, other):
        if kind_of(self.dtype) in reject:
            raise _not_implemented(name, self.dtype)
        if type(other) is int:
            other = _fit_int(other, self.dtype)
        return getattr(xp, ufunc)(self, other)
    forward.__name__ = name
    return forward


def _zero(xp, grad):
    return xp.zeros_like(grad)


def _comparison(name, ufunc, reject=""):
    """The op of ``name`` and the two differentiable twins its in-place form records."""
    fwd = _binary_forward(ufunc, name, reject)
    node = name.capitalize() + "Backward"
    return (defop(name, fwd, inputs=_BOTH, promote=_BOTH),
            defop(name, fwd, inputs=_BOTH, promote=_BOTH, vjp={"self": _zero},
                  node=node + "0", jvp="elementwise"),
            defop(name, fwd, promote=_BOTH, vjp={"self": _zero, "other": _zero},
                  node=node + "1", jvp="elementwise"))


_eq = _comparison("eq", "equal")
_ne = _comparison("ne", "not_equal")
_lt = _comparison("lt", "less", "c")
_le = _comparison("le", "less_equal", "c")
_gt = _comparison("gt", "greater", "c")
_ge = _comparison("ge", "greater_equal", "c")

_bitwise_and = defop("bitwise_and", _binary_forward("bitwise_and", "bitwise_and", "fc"),
                     inputs=_BOTH, promote=_BOTH)
_bitwise_or = defop("bitwise_or", _binary_forward("bitwise_or", "bitwise_or", "fc"),
                    inputs=_BOTH, promote=_BOTH)
_bitwise_xor = defop("bitwise_xor", _binary_forward("bitwise_xor", "bitwise_xor", "fc"),
                     inputs=_BOTH, promote=_BOTH)


def _bitwise_not_fwd(xp, self):
    if is_inexact(self.dtype):
        raise _not_implemented("bitwise_not", self.dtype)
    return xp.invert(self)


_bitwise_not = defop("bitwise_not", _bitwise_not_fwd, inputs=("self",))

_logical_and = defop("logical_and", lambda xp, self, other: xp.logical_and(self, other),
                     inputs=_BOTH)
_logical_or = defop("logical_or", lambda xp, self, other: xp.logical_or(self, other),
                    inputs=_BOTH)
_logical_xor = defop("logical_xor", lambda xp, self, other: xp.logical_xor(self, other),
                     inputs=_BOTH)
_logical_not = defop("logical_not", lambda xp, self: xp.logical_not(self), inputs=("self",))

_isnan = defop("isnan", lambda xp, self: xp.isnan(self), inputs=("self",))
_isinf = defop("isinf", lambda xp, self: xp.isinf(self), inputs=("self",))
_isfinite = defop("isfinite", lambda xp, self: xp.isfinite(self), inputs=("self",))
_isreal = defop("isreal", lambda xp, self: xp.isreal(self), inputs=("self",))


def _signed_inf(name, ufunc):
    def forward(xp, self):
        if self.dtype.kind == "c":
            raise RuntimeError(f"{name} does not support complex inputs.")
        return getattr(xp, ufunc)(self)
    return defop(name, forward, inputs=("self",))


_isposinf = _signed_inf("isposinf", "isposinf")
_isneginf = _signed_inf("isneginf", "isneginf")


def _isclose_fwd(xp, self, other, rtol, atol, equal_nan):
    """PyTorch's isclose: equal, or both nan (equal_nan), or |a - b| <= atol + |rtol * b|."""
    close = self == other
    kind = kind_of(self.dtype)
    if equal_nan and kind in "fc":
        close |= (self != self) & (other != other)
    if rtol == 0 and atol == 0:
        return close
    if kind in "biu":  # differences in the default float dtype: uint8's do not wrap
        f = _dtype.get_default_dtype().np
        self, other = self.astype(f), other.astype(f)
    allowed = atol + xp.abs(rtol * other)
    actual = xp.abs(self - other)
    close |= xp.isfinite(actual) & (actual <= allowed)
    return close


_isclose = defop("isclose", _isclose_fwd, inputs=_BOTH)


def _isin_fwd(xp, elements, test_elements, assume_unique, invert):
    """NumPy's isin on operands of the promoted dtype (a number is converted to it first)."""
    dtype = (elements if hasattr(elements, "dtype") else test_elements).dtype
    elements, test_elements = (
        x if hasattr(x, "dtype") else xp.asarray(_fit_int(x, dtype) if type(x) is int else x,
                                                 dtype=dtype)
        for x in (elements, test_elements))
    return xp.isin(elements, test_elements, assume_unique=assume_unique, invert=invert)


_isin = defop("isin", _isin_fwd, inputs=("elements", "test_elements"),
              promote=("elements", "test_elements"))


# ---- argument checks ----------------------------------------------------------------------

def _type_name(x):
    return "Tensor" if isinstance(x, Tensor) else type(x).__name__


def _invalid(name, args, signatures):
    got = ", ".join(_type_name(a) for a in args)
    return TypeError(f"{name}() received an invalid combination of arguments - got ({got}), "
                     "but expected one of:\n" + "".join(f" * ({s})\n" for s in signatures))


def _must_be_tensor(name, x, arg, position):
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument '{arg}' (position {position}) must be Tensor, "
                        f"not {type(x).__name__}")


_TENSOR_OR_NUMBER = ("Tensor input, Tensor other, *, Tensor out = None",
                     "Tensor input, Number other, *, Tensor out = None")
_BITWISE_SIGNATURES = ("Tensor input, Tensor other, *, Tensor out = None",
                       "Number self, Tensor other",
                       "Tensor input, Number other, *, Tensor out = None")


# ---- comparisons --------------------------------------------------------------------------

def _comparison_public(name, ops, aliases):
    op, inplace_scalar, inplace_tensor = ops

    def fn(input, other, *, out=None):
        if not isinstance(input, Tensor) or not isinstance(other, (Tensor, numbers.Number)):
            raise _invalid(name, (input, other), _TENSOR_OR_NUMBER)
        return apply(op, (input, other))

    def fn_(self, other):
        if isinstance(other, Tensor):
            return apply_inplace(inplace_tensor, self, (other,))
        if not isinstance(other, numbers.Number):
            raise _invalid(name + "_", (other,), ("Tensor other", "Number other"))
        return apply_inplace(inplace_scalar, self, (other,))

    fn_.__doc__ = f"In-place ``{name}``: 1 where it holds, else 0, in ``self``'s dtype."
    return register_pair(name, fn, fn_, f"Elementwise ``{name}`` with broadcasting; a bool "
                         f"tensor.", aliases)


eq, eq_ = _comparison_public("eq", _eq, ())
ne, ne_ = _comparison_public("ne", _ne, ("not_equal",))
lt, lt_ = _comparison_public("lt", _lt, ("less",))
le, le_ = _comparison_public("le", _le, ("less_equal",))
gt, gt_ = _comparison_public("gt", _gt, ("greater",))
ge, ge_ = _comparison_public("ge", _ge, ("greater_equal",))
not_equal, less, less_equal, greater, greater_equal = ne, lt, le, gt, ge


# ---- logical ------------------------------------------------------------------------------

def _logical_public(name, op):
    def fn(input, other, *, out=None):
        _must_be_tensor(name, input, "input", 1)
        _must_be_tensor(name, other, "other", 2)
        return apply(op, (input, other))

    def fn_(self, other):
        _must_be_tensor(name + "_", other, "other", 1)
        return apply_inplace(op, self, (other,))

    return register_pair(name, fn, fn_, f"Elementwise ``{name}`` of the truth values "
                         f"(nonzero is True); a bool tensor.")


logical_and, logical_and_ = _logical_public("logical_and", _logical_and)
logical_or, logical_or_ = _logical_public("logical_or", _logical_or)
logical_xor, logical_xor_ = _logical_public("logical_xor", _logical_xor)


@register
def logical_not(input, *, out=None):
    """Elementwise not of the truth values; a bool tensor."""
    _must_be_tensor("logical_not", input, "input", 1)
    return apply(_logical_not, (input,))


@register(function=False)
def logical_not_(self):
    return apply_inplace(_logical_not, self, ())


# ---- bitwise ------------------------------------------------------------------------------

def _bitwise_public(name, op):
    def fn(input, other, *, out=None):
        if not isinstance(input, Tensor):  # the ops commute: a number first is swapped
            input, other = other, input
        if not isinstance(input, Tensor) or not isinstance(other, (Tensor, numbers.Number)):
            raise _invalid(name, (input, other) if isinstance(input, Tensor)
                           else (other, input), _BITWISE_SIGNATURES)
        return apply(op, (input, other))

    def fn_(self, other):
        if not isinstance(other, (Tensor, numbers.Number)):
            raise _invalid(name + "_", (other,), ("Tensor other", "Number other"))
        return apply_inplace(op, self, (other,))

    return register_pair(name, fn, fn_, f"Elementwise ``{name}`` of bool or integer tensors.")


bitwise_and, bitwise_and_ = _bitwise_public("bitwise_and", _bitwise_and)
bitwise_or, bitwise_or_ = _bitwise_public("bitwise_or", _bitwise_or)
bitwise_xor, bitwise_xor_ = _bitwise_public("bitwise_xor", _bitwise_xor)


def _shift_forward(name, left):
    """PyTorch's shifts: a shift by a negative amount or by the width or more leaves 0 (the
    sign's fill for a right shift of a signed value) where NumPy's is undefined."""
    def forward(xp, self, other):
        if not hasattr(self, "dtype"):  # a number shifted by a tensor: in its dtype
            self = xp.asarray(_fit_int(self, other.dtype) if type(self) is int else self,
                              dtype=other.dtype)
        if kind_of(self.dtype) in "bfc":
            raise _not_implemented(name, self.dtype)
        if type(other) is int:
            other = _fit_int(other, self.dtype)
        bits = 8 * self.dtype.itemsize
        ok = (other >= 0) & (other < bits)
        by = xp.asarray(xp.where(ok, other, 0)).astype(self.dtype)
        if left:
            return xp.where(ok, xp.left_shift(self, by), 0).astype(self.dtype)
        fill = xp.right_shift(self, bits - 1) if self.dtype.kind == "i" else 0
        return xp.where(ok, xp.right_shift(self, by), fill).astype(self.dtype)
    forward.__name__ = name
    return forward


_left_shift = defop("bitwise_left_shift", _shift_forward("lshift", True), inputs=_BOTH,
                    promote=_BOTH)
_right_shift = defop("bitwise_right_shift", _shift_forward("rshift", False), inputs=_BOTH,
                     promote=_BOTH)


def _shift_public(name, op):
    def fn(input, other, *, out=None):
        if not (isinstance(input, Tensor) and isinstance(other, (Tensor, numbers.Number))
                or isinstance(input, numbers.Number) and isinstance(other, Tensor)):
            raise _invalid(name, (input, other), _BITWISE_SIGNATURES)
        rt = result_type(input, other)
        if kind_of(rt.np) in "bfc":  # (the shapes first, as PyTorch's TensorIterator)
            raise _broadcast_error((input, other), _not_implemented(op.forward.__name__,
                                                                    rt.np))
        return apply(op, (input, other))

    def fn_(self, other):
        if not isinstance(other, (Tensor, numbers.Number)):
            why = (f"      didn't match because some of the arguments have invalid types: "
                   f"(!{_type_name(other)}!)\n")
            raise TypeError(f"{name}_() received an invalid combination of arguments - got "
                            f"({_type_name(other)}), but expected one of:\n * (Tensor other)\n"
                            f"{why} * (Number other)\n{why}")
        rt = result_type(self, other)  # (the cast and the shape before the kernel's refusal)
        if not can_cast(rt, self.dtype):
            raise RuntimeError(f"result type {_pretty(rt.np)} can't be cast to the desired "
                               f"output type {_pretty(self._data.dtype)}")
        if isinstance(other, Tensor):
            shape = broadcast_shapes(self.shape, other.shape)
            if shape != self.shape:
                raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the "
                                   f"broadcast shape {list(shape)}")
        return apply_inplace(op, self, (other,))

    return register_pair(name, fn, fn_, f"Elementwise ``{name}`` of integer tensors.")


bitwise_left_shift, bitwise_left_shift_ = _shift_public("bitwise_left_shift", _left_shift)
bitwise_right_shift, bitwise_right_shift_ = _shift_public("bitwise_right_shift", _right_shift)


@register
def bitwise_not(input, *, out=None):
    """Elementwise ``~``: logical not for bool, two's complement for integers."""
    _must_be_tensor("bitwise_not", input, "input", 1)
    return apply(_bitwise_not, (input,))


@register(function=False)
def bitwise_not_(self):
    return apply_inplace(_bitwise_not, self, ())


# ---- classification -----------------------------------------------------------------------

def _predicate_public(name, op, doc):
    def fn(input):
        _must_be_tensor(name, input, "input", 1)
        return apply(op, (input,))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return register(fn)


isnan = _predicate_public("isnan", _isnan, "Where the elements are NaN; a bool tensor.")
isinf = _predicate_public("isinf", _isinf, "Where the elements are +-inf; a bool tensor.")
isfinite = _predicate_public("isfinite", _isfinite,
                             "Where the elements are neither inf nor NaN; a bool tensor.")
isreal = _predicate_public("isreal", _isreal,
                           "Where the imaginary part is zero (everywhere for real dtypes).")


@register
def isposinf(input, *, out=None):
    """Where the elements are +inf; a bool tensor."""
    _must_be_tensor("isposinf", input, "input", 1)
    return apply(_isposinf, (input,))


@register
def isneginf(input, *, out=None):
    """Where the elements are -inf; a bool tensor."""
    _must_be_tensor("isneginf", input, "input", 1)
    return apply(_isneginf, (input,))


# ---- closeness and equality ---------------------------------------------------------------

def _check_close(name, input, other, rtol, atol):
    _must_be_tensor(name, input, "input", 1)
    _must_be_tensor(name, other, "other", 2)
    if input._data.dtype != other._data.dtype:
        raise RuntimeError(f"{_pretty(input._data.dtype)} did not match "
                           f"{_pretty(other._data.dtype)}")
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol:g}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol:g}")


@register
def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Where ``|input - other| <= atol + rtol * |other|`` (tensors of one dtype).

    >>> isclose(tensor([1., 2.]), tensor([1., 2.1]))
    tensor([ True, False])
    """
    _check_close("isclose", input, other, rtol, atol)
    return apply(_isclose, (input, other), (rtol, atol, equal_nan))


@register
def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Whether every element is close (a Python bool); see :func:`isclose`."""
    _check_close("allclose", input, other, rtol, atol)
    return bool(apply(_isclose, (input, other), (rtol, atol, equal_nan))._data.all())


@register
def equal(input, other):
    """Whether both tensors have the same shape and the same values (a Python bool).

    >>> equal(tensor([1, 2]), tensor([1., 2.]))
    True
    """
    _must_be_tensor("equal", input, "input", 1)
    _must_be_tensor("equal", other, "other", 2)
    if input._data.shape != other._data.shape:
        return False
    return bool(apply(_eq[0], (input, other))._data.all())


_ISIN_SIGNATURES = (
    "Tensor elements, Tensor test_elements, *, bool assume_unique = False, "
    "bool invert = False, Tensor out = None",
    "Number element, Tensor test_elements, *, bool assume_unique = False, "
    "bool invert = False, Tensor out = None",
    "Tensor elements, Number test_element, *, bool assume_unique = False, "
    "bool invert = False, Tensor out = None")


def _isin_unsupported(x):
    """PyTorch's name of a bool or complex operand's dtype (a number as a 0-d tensor)."""
    if isinstance(x, Tensor):
        return _pretty(x._data.dtype) if x._data.dtype.kind in "bc" else None
    if isinstance(x, bool):
        return "Bool"
    return "ComplexDouble" if isinstance(x, complex) else None


@register(method=False)
def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """Where each of ``elements`` occurs in ``test_elements``; shaped like ``elements``.

    >>> isin(tensor([1, 2, 3]), tensor([2, 5]))
    tensor([False,  True, False])
    """
    e_ok = isinstance(elements, (Tensor, numbers.Number))
    t_ok = isinstance(test_elements, (Tensor, numbers.Number))
    if not (e_ok and t_ok) or not (isinstance(elements, Tensor)
                                   or isinstance(test_elements, Tensor)):
        raise _invalid("isin", (elements, test_elements), _ISIN_SIGNATURES)
    for x in (elements, test_elements):
        bad = _isin_unsupported(x)
        if bad:
            raise RuntimeError(f"Unsupported input type encountered for isin(): {bad}")
    return apply(_isin, (elements, test_elements), (assume_unique, invert))


# ---- operators ----------------------------------------------------------------------------

def _operator(fn):
    def op(self, other):
        if not isinstance(other, (Tensor, numbers.Number)):
            return NotImplemented
        return fn(self, other)
    op.__name__ = fn.__name__
    return op


def _invert(self):
    if self._data.dtype.kind not in "biu":
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type "
                        "tensors")
    return bitwise_not(self)


def _contains(self, element):
    """``element in tensor``: whether any element equals it, as PyTorch."""
    if not isinstance(element, (Tensor, numbers.Number)):
        raise RuntimeError(f"Tensor.__contains__ only supports Tensor or scalar, but you "
                           f"passed in a {type(element)}.")
    return bool(eq(self, element)._data.any())


# Python swaps the reflected comparisons itself (``2 < t`` calls ``t.__gt__(2)``).
Tensor.__eq__ = _operator(eq)
Tensor.__ne__ = _operator(ne)
Tensor.__lt__ = _operator(lt)
Tensor.__le__ = _operator(le)
Tensor.__gt__ = _operator(gt)
Tensor.__ge__ = _operator(ge)
Tensor.__hash__ = object.__hash__  # tensors hash by identity, whatever __eq__ does
Tensor.__and__ = Tensor.__rand__ = _operator(bitwise_and)
Tensor.__or__ = Tensor.__ror__ = _operator(bitwise_or)
Tensor.__xor__ = Tensor.__rxor__ = _operator(bitwise_xor)
Tensor.__lshift__ = _operator(bitwise_left_shift)
Tensor.__rshift__ = _operator(bitwise_right_shift)
Tensor.__rlshift__ = _operator(lambda self, other: bitwise_left_shift(other, self))
Tensor.__rrshift__ = _operator(lambda self, other: bitwise_right_shift(other, self))
Tensor.__ilshift__ = _operator(bitwise_left_shift_)
Tensor.__irshift__ = _operator(bitwise_right_shift_)
Tensor.__iand__ = _operator(bitwise_and_)
Tensor.__ior__ = _operator(bitwise_or_)
Tensor.__ixor__ = _operator(bitwise_xor_)
Tensor.__invert__ = _invert
Tensor.__contains__ = _contains
