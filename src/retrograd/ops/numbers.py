"""Number decomposition and integer arithmetic: frexp, gcd, lcm, and nan_to_num_."""

from .._dtype import can_cast, int32, is_float, result_type
from .. import return_types
from .._tensor import Tensor, wrap
from ..backend import get_array_module
from ._registry import _pretty, apply_inplace, inplace_shape, register
from .pointwise import _nan_to_num

__all__ = ["frexp", "nan_to_num_", "gcd", "lcm"]


@register
def frexp(input, *, out=None):
    """``(mantissa, exponent)`` with ``input = mantissa * 2 ** exponent``, |mantissa| in
    [0.5, 1); the exponent is int32."""
    a = input._data
    if not is_float(a.dtype):
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    m, e = get_array_module(a).frexp(a)
    return return_types.frexp((wrap(m), wrap(e.astype(int32.np))))


@register
def nan_to_num_(self, nan=0.0, posinf=None, neginf=None):
    return apply_inplace(_nan_to_num, self, (), (nan, posinf, neginf))


def _int_binary(name, ufunc):
    def check(input, other):
        for t in (input, other):
            if isinstance(t, Tensor) and t._data.dtype.kind not in "iu":
                raise NotImplementedError(f"\"{name}_cpu\" not implemented for "
                                          f"'{_pretty(t._data.dtype)}'")

    def fn(input, other, *, out=None):
        check(input, other)
        return wrap(getattr(get_array_module(input._data), ufunc)(input._data, other._data))

    def fn_(self, other):
        inplace_shape((self, other))  # then the cast, before the kernel's dtype
        rt = result_type(self, other)
        if not can_cast(rt, self.dtype):
            raise RuntimeError(f"result type {_pretty(rt.np)} can't be cast to the desired "
                               f"output type {_pretty(self._data.dtype)}")
        return self.copy_(fn(self, other))
    fn.__name__ = fn.__qualname__ = name
    fn_.__name__ = fn_.__qualname__ = name + "_"
    fn.__doc__ = f"Elementwise ``{name}`` of integer tensors."
    register(fn_, function=True)
    return register(fn)


gcd = _int_binary("gcd", "gcd")
lcm = _int_binary("lcm", "lcm")
