"""dtypes, PyTorch's type-promotion rules, and the names its messages give them.

NumPy's promotion differs from PyTorch's in the cases users hit most
(``int_tensor * 2.5`` is float64 in NumPy, float32 in PyTorch; a float64
0-d tensor does not upcast a float32 tensor in PyTorch), so ops compute the
result dtype here and cast before calling NumPy.
"""

import builtins
import math

import ml_dtypes
import numpy as np

_BOOL, _INT = builtins.bool, builtins.int
_FLOAT, _COMPLEX = builtins.float, builtins.complex

__all__ = [
    "dtype", "float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64",
    "uint8", "bool", "complex64", "complex128", "half", "float", "double", "short", "int", "long",
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
bfloat16 = dtype("bfloat16", ml_dtypes.bfloat16, FLOAT)  # NumPy's kind "V": test via LOW
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

ALL = (float16, bfloat16, float32, float64, int8, int16, int32, int64, uint8, bool, complex64,
       complex128)
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


# The compute-dtype policy: what PyTorch's CPU kernels compute a low-precision dtype in
# (its "opmath type"). Ops upcast inputs of a key dtype to its value and round their
# results once (``ops._registry``; an op opts out with ``defop(upcast=False)``).
OPMATH = {float16.np: float32.np, bfloat16.np: float32.np}
LOW = frozenset(OPMATH)  # the low-precision NumPy dtypes: ``x.dtype in LOW``
# The NumPy dtypes in which ``a * b + c`` is one fused multiply-add in PyTorch's CPU kernels
# (add and sub with an alpha, lerp, addcmul); its half ones fuse in float32.
FUSED = (float32.np, float64.np)


def is_inexact(np_dtype):
    """Whether a NumPy dtype is floating or complex (bfloat16 included: NumPy files it
    under kind "V")."""
    return np_dtype.kind in "fc" or np_dtype is bfloat16.np


def is_float(np_dtype):
    """Whether a NumPy dtype is a real floating dtype, bfloat16 included."""
    return np_dtype.kind == "f" or np_dtype is bfloat16.np


def kind_of(np_dtype):
    """NumPy's one-letter kind of a dtype, with bfloat16 filed as "f"."""
    return "f" if np_dtype is bfloat16.np else np_dtype.kind


np_finfo = ml_dtypes.finfo  # numpy.finfo that also knows bfloat16
np_iinfo = ml_dtypes.iinfo  # numpy.iinfo, for any array module's integer dtypes


def is_low(d):
    """Whether a NumPy dtype (an array's) or a retrograd dtype (a facade Tensor's) is one
    PyTorch computes in float32 and rounds (float16, bfloat16): identities, as
    ``dtype.name`` costs microseconds in NumPy 2."""
    return d is float16.np or d is bfloat16.np or d is float16 or d is bfloat16


def opmath_arrays(arrays):
    """``(arrays with each low-precision one cast to its compute dtype, that low dtype)``,
    or None when they do not compute in a wider dtype: none is low-precision, or another
    float or complex dtype is among them. Arrays of the compute dtype itself may be (a
    float16 input with float32 parameters: PyTorch's mixed-type norms give float16)."""
    floats = {a.dtype for a in arrays if getattr(a, "dtype", None) is not None
              and is_inexact(a.dtype)}
    low = [dt for dt in floats if dt in OPMATH]
    if len(low) != 1:
        return None
    low = low[0]
    up = OPMATH[low]
    if floats - {low, up}:
        return None
    return [a.astype(up) if getattr(a, "dtype", None) is low else a for a in arrays], low


_default = [float32]


# Python's own types, as PyTorch's argument parser reads them where a dtype is expected.
PYTHON_TYPES = {builtins.bool: bool, builtins.int: int64, builtins.float: float64,
                 builtins.complex: complex128}


def dtype_arg(value, fname):
    """A ``dtype=`` argument of ``fname`` as a dtype (None stays None): Python's bool, int,
    float and complex read as bool, int64, float64 and complex128, as PyTorch reads them;
    anything else is PyTorch's TypeError."""
    if value is None or type(value) is dtype:
        return value
    if isinstance(value, type) and value in PYTHON_TYPES:
        return PYTHON_TYPES[value]
    raise TypeError(f"{fname}(): argument 'dtype' must be torch.dtype, not "
                    f"{type(value).__name__}")


def get_default_dtype():
    """The dtype of float tensors made from Python floats (float32 unless changed)."""
    return _default[0]


def set_default_dtype(d):
    """>>> set_default_dtype(float64)"""
    if d not in (float16, bfloat16, float32, float64):
        raise TypeError(f"only floating-point types are supported as the default type, got {d}")
    _default[0] = d


def promote_types(a, b):
    """PyTorch's promote_types: a higher category wins (a complex type widened to hold a
    wider float: float64 with complex64 is complex128), else NumPy's rule; bfloat16 (which
    NumPy does not promote) with another float is the wider one, float32 with float16."""
    if a is b:
        return a
    if a.category != b.category:
        hi, lo = (a, b) if a.category > b.category else (b, a)
        if hi.category == COMPLEX and lo.category == FLOAT and 2 * lo.itemsize > hi.itemsize:
            return lo.to_complex()
        return hi
    if bfloat16 in (a, b):
        other = b if a is bfloat16 else a
        return float32 if other is float16 else other
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


def _scalar_dtype(x):
    """The dtype of a Python number: bool, int64, or the default float/complex dtype."""
    category = scalar_category(x)
    if category == FLOAT:
        return get_default_dtype()
    if category == COMPLEX:
        return get_default_dtype().to_complex()
    return int64 if category == INT else bool


def _combine(higher, lower):
    """PyTorch's combine_categories: a lower tier counts only with a higher category, and
    a complex one then takes the float precision of the higher tier."""
    if higher is None:
        return lower
    if lower is None or higher.category == COMPLEX:
        return higher
    if lower.category == COMPLEX:
        return higher.to_complex() if higher.category == FLOAT else lower
    if higher.category == FLOAT:
        return higher
    if higher is bool or lower.category == FLOAT:
        return promote_types(higher, lower)
    return higher


def result_type(*operands):
    """PyTorch's result type over three tiers: dimensioned tensors, then 0-d tensors,
    then Python numbers; a lower tier only matters with a higher category."""
    dims = zero_dims = scalars = None
    for x in operands:
        d = getattr(x, "dtype", None)
        if not isinstance(d, dtype):  # Python and NumPy scalars: weakly typed numbers
            d = _scalar_dtype(x)
            scalars = d if scalars is None else promote_types(scalars, d)
        elif x.ndim:
            dims = d if dims is None else promote_types(dims, d)
        else:
            zero_dims = d if zero_dims is None else promote_types(zero_dims, d)
    return _combine(dims, _combine(zero_dims, scalars))


def can_cast(from_, to):
    """PyTorch's same-kind rule: no cast to a lower category."""
    return from_.category <= to.category


# dtype name -> PyTorch's C++ ScalarType name, as its messages print a dtype ("Float").
SCALAR_NAMES = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
                "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
                "bool": "Bool", "complex64": "ComplexFloat", "complex128": "ComplexDouble"}

# dtype name -> legacy type name: what Tensor.type() prints and the legacy constructors
# (torch.FloatTensor, ...) are named.
LEGACY_NAMES = {k: v + "Tensor" for k, v in SCALAR_NAMES.items()}


def legacy_type_name(dtype):
    """``torch.FloatTensor`` for float32: the name ``Tensor.type()`` and errors print."""
    return "torch." + LEGACY_NAMES[dtype.name]


# dtype name -> the C++ element type as PyTorch's messages print it by its type's name
# ("long int", "c10::Half"): masked_fill's mask check, mm's dtype check, grad assignment.
CPP_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half",
             "bfloat16": "c10::BFloat16",
             "int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
             "uint8": "unsigned char", "bool": "bool", "complex64": "c10::complex<float>",
             "complex128": "c10::complex<double>"}

# dtype name -> the C++ element type as c10's checked scalar conversion and its range
# checks print it ("int64_t").
C10_NAMES = {**CPP_NAMES, "int64": "int64_t", "int16": "int16_t", "int8": "int8_t",
             "uint8": "uint8_t"}


def checked_convert(value, np_dtype, one_element=False):
    """``value`` as an element of ``np_dtype``, or PyTorch's error where c10's checked
    scalar conversion finds an overflow: bool takes anything; a real type refuses an
    imaginary part; floats take inf and nan but nothing past their finite range; integers
    refuse nan and anything outside their range (for unsigned types, an integer outside
    +-max, so -1 wraps to 255 as in C). Floats are compared with the limits as doubles, as
    C++ does. A Python int past 64 bits is refused before any dtype, as PyTorch reads
    numbers into a Scalar (OverflowError). ``one_element``: PyTorch's fill of a single
    element converts to float16 and bfloat16 unchecked (an overflow is inf there)."""
    if type(value) is _INT and not -2 ** 63 <= value < 2 ** 64:
        raise OverflowError("int too big to convert" if value > 0 else
                            "can't convert negative int to unsigned")
    if np_dtype.kind == "b":
        return _BOOL(value)
    if isinstance(value, _COMPLEX) and np_dtype.kind != "c":
        fits, value = value.imag == 0, value.real
    else:
        fits = True
    if is_inexact(np_dtype):
        if not (one_element and is_low(np_dtype)):
            big = _FLOAT(np_finfo(np_dtype).max)
            finite = not isinstance(value, (_FLOAT, _COMPLEX)) or math.isfinite(abs(value))
            fits = fits and (not finite or abs(value) <= big)
    elif isinstance(value, _FLOAT) and math.isnan(value):
        fits = False
    else:
        info = np_iinfo(np_dtype)
        lo, hi = (-info.max if info.min == 0 else info.min), info.max
        if isinstance(value, _FLOAT):  # (no wrap-around from a float: 0 is the lowest)
            lo, hi = _FLOAT(info.min), _FLOAT(hi)
        fits = fits and lo <= value <= hi
    if not fits:
        raise RuntimeError(f"value cannot be converted to type "
                           f"{C10_NAMES[np_dtype.name]} without overflow")
    if np_dtype.kind in "iu":  # C's wrap-around for what fits the checks but not the type
        wrapped = np.array(_INT(value) % 2 ** (8 * np_dtype.itemsize), dtype=np.uint64)
        return wrapped.astype(np_dtype)[()]
    return np.array(value).astype(np_dtype)[()]
