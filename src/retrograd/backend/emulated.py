"""A CuPy-shaped array module on NumPy: the seam's proof on a machine without a GPU.

Its arrays are a distinct type that behaves as CuPy's does where it matters to the
seam: they refuse implicit conversion to NumPy (``numpy.asarray(x)`` raises CuPy's
TypeError; ``x.get()`` is the explicit copy to the host), its functions refuse NumPy
arrays and arrays of another device, reductions return 0-d arrays rather than NumPy
scalars, and the namespace holds only names CuPy provides (:mod:`._cupy_names`). NumPy
functions called on its arrays dispatch through ``__array_function__`` and
``__array_ufunc__`` to this module when CuPy has the function, as CuPy's arrays do,
and fail otherwise. Two devices exist (0 and 1), so mixing them can be tested; each
thread has its current device, as CUDA's runtime keeps it (:func:`current`,
:func:`select`: ``torch.cuda.current_device`` and ``set_device`` on it). ``cuda`` is
:mod:`.emulated_cuda` (CuPy's ``cupy.cuda``: streams, events, properties, the pool that
books every array made here).

An op that runs on these arrays runs on CuPy's as far as the namespace goes: the
op database's tests run on it in CI (``tests/device/``).
"""

import numpy

from . import _cupy_names, emulated_cuda
from .emulated_cuda import DEVICES, Device, _current, book, count, current, guard, select

__all__ = ["ndarray", "namespace", "Device", "asnumpy", "DEVICES", "count", "current", "select",
           "guard", "on_device", "cupy", "is_array"]

IMPLICIT = ("Implicit conversion to a NumPy array is not allowed. Please use `.get()` to "
            "construct a NumPy array explicitly.")


class ndarray:
    """An array on an emulated device: NumPy's data, CuPy's rules."""

    __slots__ = ("_a", "_dev", "__weakref__")

    def __init__(self, shape, dtype=float, *, _array=None, _device=None):
        a = self._a = numpy.empty(shape, dtype) if _array is None else _array
        dev = self._dev = _current.index if _device is None else _device
        if a.nbytes:
            book(a, dev)  # (the pool's books: a view of a booked buffer adds nothing)

    # ---- what CuPy's arrays refuse, and the explicit ways out -----------------------------
    def __array__(self, dtype=None, copy=None):
        raise TypeError(IMPLICIT)

    def get(self, stream=None, order="C", out=None):
        """A NumPy copy on the host (``out``: into that array)."""
        if out is not None:
            numpy.copyto(out, self._a)
            return out
        return numpy.array(self._a, order=order)

    def set(self, arr, stream=None):
        """Copy a host array of the same shape into this array."""
        if not isinstance(arr, numpy.ndarray) or arr.shape != self._a.shape:
            raise ValueError("Shape mismatch")
        self._a[...] = arr

    @property
    def device(self):
        return Device(self._dev)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        mine = namespace.__dict__.get(ufunc.__name__)
        if not isinstance(mine, _Ufunc) or not hasattr(mine, method):
            return NotImplemented
        return getattr(mine, method)(*inputs, **kwargs)

    def __array_function__(self, func, types, args, kwargs):
        mine = _lookup(func)
        if mine is None:
            return NotImplemented
        return mine(*args, **kwargs)

    # ---- attributes ------------------------------------------------------------------------
    shape = property(lambda self: self._a.shape)
    dtype = property(lambda self: self._a.dtype)
    ndim = property(lambda self: self._a.ndim)
    size = property(lambda self: self._a.size)
    strides = property(lambda self: self._a.strides)
    itemsize = property(lambda self: self._a.itemsize)
    nbytes = property(lambda self: self._a.nbytes)
    flags = property(lambda self: _Flags(self._a.flags))

    @property
    def data(self):
        """``cupy.cuda.MemoryPointer``: the address of the first element, as ``ptr``."""
        return _MemoryPointer(self._a.__array_interface__["data"][0])

    @property
    def base(self):
        b = self._a.base
        return None if b is None or not isinstance(b, numpy.ndarray) else _wrap1(b, self._dev)

    @property
    def T(self):
        return _wrap1(self._a.T, self._dev)

    @property
    def mT(self):
        return _wrap1(numpy.swapaxes(self._a, -1, -2), self._dev)

    @property
    def real(self):
        return _wrap1(self._a.real, self._dev)

    @property
    def imag(self):
        return _wrap1(self._a.imag, self._dev)

    def __len__(self):
        return len(self._a)

    def __iter__(self):
        for i in range(len(self._a)):
            yield self[i]

    def __bool__(self):
        return bool(self._a)

    def __float__(self):
        return float(self._a)

    def __int__(self):
        return int(self._a)

    def __complex__(self):
        return complex(self._a)

    def item(self, *args):
        return self._a.item(*args)

    def tolist(self):
        return self._a.tolist()

    def __repr__(self):
        return repr(self._a)

    def __str__(self):
        return str(self._a)

    # Indices may be host arrays (CuPy copies them to the device); values may not.
    def __getitem__(self, key):
        return _wrap(self._a[_unwrap(key, [self._dev], host_ok=True)], self._dev)

    def __setitem__(self, key, value):
        dev = [self._dev]
        self._a[_unwrap(key, dev, host_ok=True)] = _unwrap(value, dev)

    def __copy__(self):
        return _wrap1(self._a.copy(), self._dev)

    def __deepcopy__(self, memo):
        return self.__copy__()

    def __reduce__(self):
        raise TypeError("emulated device arrays are not picklable: call .get() first")


class _MemoryPointer:
    __slots__ = ("ptr",)

    def __init__(self, ptr):
        self.ptr = ptr


def _lookup(func):
    """This module's version of a NumPy function, when CuPy has it."""
    mod = getattr(func, "__module__", "") or ""
    name = getattr(func, "__name__", "")
    if mod.startswith("numpy.linalg"):
        return getattr(namespace.linalg, name, None)
    if mod.startswith("numpy.fft"):
        return getattr(namespace.fft, name, None)
    return getattr(namespace, name, None)


# ---- unwrapping arguments and wrapping results -------------------------------------------

def _unwrap(x, dev, host_ok=False):
    """``x`` with every emulated array replaced by its NumPy data, after checking they all
    live on one device (``dev``: a one-element list holding the device seen so far)."""
    t = type(x)
    if t is ndarray:
        if dev[0] is None:
            dev[0] = x._dev
        elif dev[0] != x._dev:
            raise ValueError(f"The device where the array resides ({x._dev}) is different "
                             f"from the current device ({dev[0]}). Peer access is "
                             f"unavailable between these devices.")
        return x._a
    if t is tuple or t is list:
        return t(_unwrap(e, dev, host_ok) for e in x)
    if t is dict:
        return {k: _unwrap(v, dev, host_ok) for k, v in x.items()}
    if isinstance(x, numpy.ndarray):
        if not host_ok:
            raise TypeError(f"Unsupported type {type(x)}")
        return x.copy()  # a host array is copied to the device, never shared
    if hasattr(x, "__array__") and not isinstance(x, (numpy.generic, type)):
        raise TypeError(f"Unsupported type {type(x)}")  # a Tensor, a host array-like
    return x


def _wrap1(a, dev):
    return ndarray(None, _array=a, _device=dev)


def _wrap(r, dev):
    """NumPy results as emulated arrays (NumPy scalars as 0-d arrays, as CuPy's
    reductions return them)."""
    if isinstance(r, numpy.ndarray):
        return _wrap1(r, dev)
    if isinstance(r, numpy.generic):
        return _wrap1(numpy.asarray(r), dev)
    if type(r) is tuple or type(r) is list:
        return type(r)(_wrap(e, dev) for e in r)
    if hasattr(r, "_fields") and isinstance(r, tuple):  # namedtuples (linalg results)
        return type(r)(*(_wrap(e, dev) for e in r))
    return r


def _call(f, args, kwargs, host_ok=False):
    dev = [None]
    a = _unwrap(args, dev, host_ok)
    k = _unwrap(kwargs, dev, host_ok)
    out = kwargs.get("out")
    r = f(*a, **k)
    if type(out) is ndarray and r is out._a:
        return out
    return _wrap(r, _current.index if dev[0] is None else dev[0])


def _function(f, host_ok=False, refused=()):
    def fn(*args, **kwargs):
        for k in refused:
            if k in kwargs:
                raise TypeError(f"{fn.__name__}() got an unexpected keyword argument '{k}'")
        return _call(f, args, kwargs, host_ok)
    fn.__name__ = fn.__qualname__ = getattr(f, "__name__", "function")
    fn.__doc__ = f"CuPy's ``{fn.__name__}``, emulated on NumPy."
    return fn


class _Ufunc:
    """A ufunc with CuPy's methods: ``reduce``/``accumulate`` for add and multiply only,
    ``reduceat`` for add, ``at`` for the ufuncs CuPy scatters with; keywords ``out``,
    ``dtype`` and ``casting`` only."""

    _KEYWORDS = frozenset({"out", "dtype", "casting"})

    def __init__(self, uf):
        self._uf = uf
        self.__name__ = uf.__name__
        self.nin, self.nout = uf.nin, uf.nout
        self.outer = _function(uf.outer)
        name = uf.__name__
        for method, allowed in (("reduce", _cupy_names.UFUNC_REDUCE),
                                ("accumulate", _cupy_names.UFUNC_REDUCE),
                                ("reduceat", _cupy_names.UFUNC_REDUCEAT)):
            if name in allowed:
                setattr(self, method, _function(getattr(uf, method)))
            else:
                setattr(self, method, _unsupported(f"cupy_{name}.{method}"))

    def __call__(self, *args, **kwargs):
        for k in kwargs:
            if k not in self._KEYWORDS:
                raise TypeError(f"Wrong arguments {{'{k}': ...}}")
        return _call(self._uf, args, kwargs)

    def at(self, a, indices, b=None):
        """``ufunc.at``: indices may be host arrays (CuPy scatters with them as with
        ``__setitem__``); the operands may not."""
        if self.__name__ not in _cupy_names.UFUNC_AT:
            raise NotImplementedError(f"`cupy_{self.__name__}.at` is not supported yet")
        dev = [None]
        a_, b_ = _unwrap((a, b), dev)
        self._uf.at(a_, _unwrap(indices, dev, host_ok=True), *(() if b is None else (b_,)))

    def __repr__(self):
        return f"<ufunc '{self.__name__}'>"


def _unsupported(what):
    def fn(*args, **kwargs):
        raise NotImplementedError(f"{what} is not supported yet")
    return fn


def _one_matrix(f):
    """``f`` for a 2-D array only, as cupyx.scipy.linalg's decompositions take."""
    def fn(a, *args, **kwargs):
        if getattr(a, "ndim", None) != 2:
            raise ValueError(f"expected a 2-D matrix, got {getattr(a, 'ndim', None)}-D")
        return f(a, *args, **kwargs)
    fn.__name__ = fn.__qualname__ = f.__name__
    return fn


def asnumpy(a, stream=None, order="C", out=None):
    """``cupy.asnumpy``: a host copy of an emulated array (NumPy input passes through)."""
    if type(a) is ndarray:
        return a.get(order=order, out=out)
    return numpy.asarray(a, order=order)


class _Namespace:
    """The module object ``xp`` that rules receive: CuPy's names only."""

    def __init__(self, names, source, host_ok=()):
        for name in names:
            obj = getattr(source, name, None)
            if obj is None:
                continue
            if isinstance(obj, numpy.ufunc):
                obj = _Ufunc(obj)
            elif callable(obj) and not isinstance(obj, type):
                obj = _function(obj, host_ok=name in host_ok,
                                refused=_cupy_names.UNSUPPORTED_KEYWORDS.get(name, ()))
            setattr(self, name, obj)

    def __repr__(self):
        return "<module 'retrograd.backend.emulated' (CuPy-shaped, on NumPy)>"


namespace = _Namespace(_cupy_names.MODULE, numpy, host_ok=_cupy_names.FROM_HOST)
namespace.ndarray = ndarray
namespace.asnumpy = asnumpy
namespace.linalg = _Namespace(_cupy_names.LINALG, numpy.linalg)
namespace.fft = _Namespace(_cupy_names.FFT, numpy.fft)
namespace.cuda = emulated_cuda
namespace.get_default_memory_pool = emulated_cuda.get_default_memory_pool
try:  # cupyx.scipy.special's functions, where SciPy has them
    import scipy.special as _scipy_special
except ImportError:  # pragma: no cover - exercised only without SciPy
    _scipy_special = None
special = _Namespace(_cupy_names.SPECIAL if _scipy_special else (), _scipy_special)


def __getattr__(name):
    """``scipy_linalg``: cupyx.scipy.linalg's functions, built on first use (importing
    scipy.linalg costs a tenth of a second)."""
    if name != "scipy_linalg":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import scipy.linalg
    la = _Namespace(_cupy_names.SCIPY_LINALG, scipy.linalg)
    for f in _cupy_names.SCIPY_LINALG_2D:
        setattr(la, f, _one_matrix(getattr(la, f)))
    globals()["scipy_linalg"] = la
    return la

namespace.lib = type("lib", (), {"stride_tricks": _Namespace(_cupy_names.STRIDE_TRICKS,
                                                             numpy.lib.stride_tricks)})


class _Flags:
    """``cupy.ndarray.flags``: CuPy's flag names only, so code that reads NumPy's others
    (``writeable``, ``contiguous``) fails here as it would on a GPU."""

    __slots__ = ("_flags",)

    def __init__(self, flags):
        self._flags = flags

    def __getattr__(self, name):
        if name not in _cupy_names.NDARRAY_FLAGS:
            raise AttributeError(f"'cupy._core.flags.Flags' object has no attribute '{name}'")
        return getattr(self._flags, name)


def _method(name):
    allowed = _cupy_names.METHOD_KEYWORDS.get(name)

    def m(self, *args, **kwargs):
        if allowed is not None:
            for k in kwargs:
                if k not in allowed:  # NumPy's extra keywords, which CuPy's methods lack
                    raise TypeError(f"{name}() got an unexpected keyword argument '{k}'")
        dev = [self._dev]
        r = getattr(self._a, name)(*_unwrap(args, dev), **_unwrap(kwargs, dev))
        if r is self._a:  # in-place operators return the array itself, as CuPy's
            return self
        out = kwargs.get("out")
        if type(out) is ndarray and r is out._a:
            return out
        return _wrap(r, self._dev)
    m.__name__ = m.__qualname__ = name
    return m


for _name in _cupy_names.NDARRAY_METHODS:
    setattr(ndarray, _name, _method(_name))

for _name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or",
              "xor", "lshift", "rshift", "divmod"):
    for _form in (f"__{_name}__", f"__r{_name}__", f"__i{_name}__"):
        if hasattr(numpy.ndarray, _form) and _form not in _cupy_names.NDARRAY_NO_PROTOCOLS:
            setattr(ndarray, _form, _method(_form))
for _form in ("__lt__", "__le__", "__gt__", "__ge__", "__eq__", "__ne__", "__neg__",
              "__pos__", "__abs__", "__invert__"):
    setattr(ndarray, _form, _method(_form))
ndarray.__hash__ = None


def is_array(array):
    """Whether ``array`` is an emulated device array (as :func:`.gpu.is_array` for CuPy's)."""
    return type(array) is ndarray


def cupy():
    """The CuPy-shaped module (``backend.cuda_runtime().cupy()``, as :func:`.gpu.cupy`)."""
    return namespace


# ---- creation on a device (issue 13) -------------------------------------------------------

def on_device(index, make):
    """``make(namespace)`` with device ``index`` current (None: the current one), as
    ``with cupy.cuda.Device(index)`` runs it: what it allocates lands there."""
    with Device(index):
        return make(namespace)
