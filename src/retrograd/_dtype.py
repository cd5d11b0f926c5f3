"""dtypes and PyTorch's type-promotion rules.

NumPy's promotion differs from PyTorch's in the cases users hit most
(``int_tensor * 2.5`` is float64 in NumPy, float32 in PyTorch; a float64
0-d tensor does not upcast a float32 tensor in PyTorch), so ops compute the
result dtype here and cast before calling NumPy.
"""

import builtins

import numpy as np

_BOOL, _INT = builtins.bool, builtins.int
_FLOAT, _COMPLEX = builtins.float, builtins.complex

__all__ = [
    "dtype", "float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8",
    "bool", "complex64", "complex128", "half", "float", "double", "short", "int", "long",
    "cfloat", "cdouble", "get_default_dtype", "set_default_dtype", "promote_types",
    "result_type", "can_cast",
]

# Category order used by promotion: a higher category always wins.
BOOL, INT, FLOAT, COMPLEX = 0, 1, 2, 3


class dtype:
    __slots__ = ("name", "np", "itemsize", "category", "is_floating_point", "is_complex",
                 "is_signed")

    def __init__(self, name, np_dtype, category):
        self.name = name
        self.np = np.dtype(np_dtype)
        self.itemsize = self.np.itemsize
        self.category = category
        self.is_floating_point = category == FLOAT
        self.is_complex = category == COMPLEX
        self.is_signed = name not in ("uint8", "bool")

    def __repr__(self):
        return "torch." + self.name

    def __reduce__(self):
        return (_by_name, (self.name,))

    def to_real(self):
        return {complex64: float32, complex128: float64}.get(self, self)

    def to_complex(self):
        return {float64: complex128, complex128: complex128}.get(self, complex64)


float16 = half = dtype("float16", np.float16, FLOAT)
float32 = float = dtype("float32", np.float32, FLOAT)
float64 = double = dtype("float64", np.float64, FLOAT)
int8 = dtype("int8", np.int8, INT)
int16 = short = dtype("int16", np.int16, INT)
int32 = int = dtype("int32", np.int32, INT)
int64 = long = dtype("int64", np.int64, INT)
uint8 = dtype("uint8", np.uint8, INT)
bool = dtype("bool", np.bool_, BOOL)
complex64 = cfloat = dtype("complex64", np.complex64, COMPLEX)
complex128 = cdouble = dtype("complex128", np.complex128, COMPLEX)

ALL = (float16, float32, float64, int8, int16, int32, int64, uint8, bool, complex64, complex128)
_from_np = {d.np: d for d in ALL}
_names = {d.name: d for d in ALL}


def _by_name(name):
    return _names[name]


def from_numpy_dtype(np_dtype):
    """The retrograd dtype of a NumPy dtype; TypeError for ones PyTorch lacks."""
    try:
        return _from_np[np_dtype]
    except KeyError:
        raise TypeError(
            f"can't convert np.ndarray of type numpy.{np.dtype(np_dtype).name}. The only "
            "supported types are: float64, float32, float16, complex64, complex128, int64, "
            "int32, int16, int8, uint8, and bool.") from None


_default = [float32]


def get_default_dtype():
    """The dtype of float tensors made from Python floats (float32 unless changed)."""
    return _default[0]


def set_default_dtype(d):
    """>>> set_default_dtype(float64)"""
    if d not in (float16, float32, float64):
        raise TypeError(f"only floating-point types are supported as the default type, got {d}")
    _default[0] = d


def promote_types(a, b):
    """PyTorch's promote_types: a higher category wins outright, else NumPy's rule."""
    if a is b:
        return a
    if a.category != b.category:
        return a if a.category > b.category else b
    return _from_np[np.promote_types(a.np, b.np)]


def scalar_category(x):
    t = type(x)
    if t is _BOOL or t is np.bool_:
        return BOOL
    if t is _INT or isinstance(x, (_INT, np.integer)):
        return INT
    if t is _FLOAT or isinstance(x, (_FLOAT, np.floating)):
        return FLOAT
    if isinstance(x, (_COMPLEX, np.complexfloating)):
        return COMPLEX
    raise TypeError(f"expected a number, got {type(x).__name__}")


def _scalar_dtype(category, current):
    """dtype a Python scalar of `category` promotes a lower-category result to."""
    if category == FLOAT:
        return get_default_dtype()
    if category == COMPLEX:
        return complex128 if current is float64 else complex64
    return int64 if category == INT else bool


def result_type(*operands):
    """PyTorch's result type: dimensioned tensors, then 0-d tensors, then scalars.

    A lower tier only matters when it has a higher category than the tiers above it.
    """
    dims, zero_dims, scalars = None, None, -1
    for x in operands:
        d = getattr(x, "dtype", None)
        if d is None or not hasattr(x, "ndim"):
            scalars = max(scalars, scalar_category(x))
        elif x.ndim:
            dims = d if dims is None else promote_types(dims, d)
        else:
            zero_dims = d if zero_dims is None else promote_types(zero_dims, d)
    res = dims
    if zero_dims is not None and (res is None or zero_dims.category > res.category):
        res = zero_dims
    if scalars >= 0 and (res is None or scalars > res.category):
        res = _scalar_dtype(scalars, res)
    return res


def can_cast(from_, to):
    """PyTorch's same-kind rule: no cast to a lower category."""
    return from_.category <= to.category
