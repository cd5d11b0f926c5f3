"""The ``meta`` device's array module: arrays with a shape, a dtype and strides, no data.

A shape-only run builds a model and runs its training step on these arrays, so the
memory tracker can book every storage a real step would allocate (bytes from shape and
dtype) without allocating it. Rules run on this namespace as on NumPy's and cannot tell
the difference.

How results are found, without data:

- the functions a training step spends its memory in (ufuncs, ``matmul``, reductions,
  creation, ``astype``, ``where``, views and reshapes, ``concatenate``/``stack``) have
  shape rules here, and take their dtype from NumPy run on 0-d or size-1 stand-ins;
- views (basic indexing, transposes, reshapes that need no copy, ...) run NumPy on a
  stand-in carrying the array's real strides over a one-element buffer: these functions
  only rewrite the header, so the view's exact strides and offset come back and the view
  keeps its base;
- any other function runs on stand-ins that have the array's shape and dtype and zero
  strides (one element of memory each): NumPy's own shape logic gives the result's shape
  and dtype; the result is allocated while the call runs, then dropped.

What needs the values (``item()``, ``tolist()``, ``bool()``, ``nonzero``, ``unique``,
boolean masks) raises PyTorch's error for meta tensors.
"""

import math

import numpy
from numpy.lib import stride_tricks

__all__ = ["ndarray", "namespace", "NO_DATA", "ITEM", "on_device"]

NO_DATA = "Cannot copy out of meta tensor; no data!"
ITEM = "Tensor.item() cannot be called on meta tensors"
_NONZERO = ("The register_meta function for torch.nonzero() raises unimplemented by default, "
            "as a correct data-independent implementation does not exist. This "
            "implementation returns a fake value, assuming all elements of the tensor are "
            "non-zero. To enable this registration, please set "
            "'torch.fx.experimental._config.meta_nonzero_assume_all_nonzero' to True.")


def _contiguous(shape, itemsize):
    strides, step = [], itemsize
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


def _fortran(shape, itemsize):
    return _contiguous(shape[::-1], itemsize)[::-1]


class ndarray:
    """An array on the meta device: shape, dtype, strides, byte offset into its base."""

    __slots__ = ("shape", "dtype", "strides", "_offset", "_base", "__weakref__")
    __array_priority__ = -1  # a Tensor's operators win over ours

    def __init__(self, shape, dtype=float, strides=None, *, _offset=0, _base=None):
        self.shape = tuple(int(n) for n in shape)
        self.dtype = numpy.dtype(dtype)
        self.strides = _contiguous(self.shape, self.dtype.itemsize) if strides is None \
            else tuple(strides)
        self._offset = _offset
        self._base = _base

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: math.prod(self.shape))
    itemsize = property(lambda self: self.dtype.itemsize)
    nbytes = property(lambda self: self.size * self.dtype.itemsize)
    base = property(lambda self: self._base)
    T = property(lambda self: namespace.transpose(self))
    mT = property(lambda self: namespace.swapaxes(self, -1, -2))
    real = property(lambda self: namespace.real(self))
    imag = property(lambda self: namespace.imag(self))

    @property
    def flags(self):
        return _Flags(self.strides == _contiguous(self.shape, self.itemsize),
                      self.strides == _fortran(self.shape, self.itemsize), self._base is None)

    @property
    def device(self):
        return "meta"

    # ---- what needs values ----------------------------------------------------------------
    def item(self, *args):
        raise RuntimeError(ITEM)

    def __bool__(self):
        if self.size != 1:
            raise ValueError("The truth value of an array with more than one element is "
                             "ambiguous.")
        raise RuntimeError(ITEM)

    __float__ = __int__ = __complex__ = __index__ = item

    def tolist(self):
        raise NotImplementedError(NO_DATA)

    def __array__(self, dtype=None, copy=None):
        raise NotImplementedError(NO_DATA)

    def get(self, *args, **kwargs):
        raise NotImplementedError(NO_DATA)

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def __repr__(self):
        return f"meta.ndarray(shape={self.shape}, dtype={self.dtype})"

    # ---- NumPy dispatch ---------------------------------------------------------------------
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        uf = _Ufunc(ufunc)
        return getattr(uf, "__call__" if method == "__call__" else method)(*inputs, **kwargs)

    def __array_function__(self, func, types, args, kwargs):
        mine = _lookup(func)
        if mine is None:
            mine = _fallback(func)
        return mine(*args, **kwargs)

    def __getitem__(self, key):
        return _getitem(self, key)

    def __setitem__(self, key, value):
        target = _standin(self)[_standins(key)[0]].shape
        if _has_mask(key):  # the count of True elements is unknown: any count fits, as
            target = tuple(n or 1 for n in target)  # on PyTorch's meta
        numpy.broadcast_shapes(_shape(value), target)

    def __copy__(self):
        return namespace.copy(self)

    def __deepcopy__(self, memo):
        return namespace.copy(self)

    def __reduce__(self):
        return (ndarray, (self.shape, self.dtype))


class _Flags:
    """The ``flags`` NumPy's arrays have, as far as they mean something without data."""

    __slots__ = ("c_contiguous", "f_contiguous", "owndata")
    writeable = True

    def __init__(self, c_contiguous, f_contiguous, owndata):
        self.c_contiguous, self.f_contiguous, self.owndata = c_contiguous, f_contiguous, owndata

    def __getitem__(self, name):
        return getattr(self, name.lower())


def _shape(x):
    return tuple(getattr(x, "shape", None) or numpy.shape(x))


def _is_array(x):
    return isinstance(x, (ndarray, numpy.ndarray))


def _printed(shape):
    """A shape as NumPy's messages print it: ``(2,3)``, ``(3,)``."""
    return f"({','.join(map(str, shape))}{',' if len(shape) == 1 else ''})"


def _small(a):
    """A stand-in of ``a``'s dtype with every dimension at most 1: an empty one stays
    empty (NumPy's errors for it are kept), and it is not 0-d unless ``a`` is (NumPy's
    messages read a 0-d array as a scalar)."""
    return numpy.ones(tuple(min(n, 1) for n in a.shape), a.dtype)


def _has_mask(key):
    keys = key if isinstance(key, tuple) else (key,)
    return any(isinstance(k, ndarray) and k.dtype == numpy.bool_ for k in keys)


# ---- stand-ins ----------------------------------------------------------------------------

def _fill(dtype):
    """One element: 0 for integers and booleans (a valid index), 1 for floating point (in
    every function's domain)."""
    return numpy.zeros(1, dtype) if dtype.kind in "iub" else numpy.ones(1, dtype)


def _standin(a):
    """``a``'s shape and dtype over one element (zero strides); writable."""
    return stride_tricks.as_strided(_fill(a.dtype), a.shape, (0,) * a.ndim)


def _eye_standin(a):
    """For linear algebra: identity matrices (invertible, positive definite) with zero
    strides across the batch, so factorizations and solves succeed without data."""
    if a.ndim < 2 or a.dtype.kind not in "fc":
        return _standin(a)
    eye = numpy.eye(*a.shape[-2:], dtype=a.dtype)
    return stride_tricks.as_strided(eye, a.shape, (0,) * (a.ndim - 2) + eye.strides)


class _Header:
    """An ``__array_interface__`` for a header over a fake address (never read)."""

    def __init__(self, iface, keep):
        self.__array_interface__ = iface
        self.keep = keep


_BUFFER = numpy.zeros(1)
_ORIGIN = 1 << 40  # a meta storage's fake address: far from the buffer's, never read


def _strided(a):
    """``a``'s real header (shape, strides, byte offset) over a fake address: for
    functions that only rewrite headers. Its address minus ``_ORIGIN`` is the offset."""
    iface = {"shape": a.shape, "typestr": a.dtype.str, "descr": a.dtype.descr,
             "data": (_ORIGIN + a._offset, False), "strides": a.strides, "version": 3}
    out = numpy.asarray(_Header(iface, _BUFFER))
    return out if out.dtype == a.dtype else out.view(a.dtype)  # (bfloat16 reads as 'V2')


def _standins(obj, strided=False, make=_standin):
    """``obj`` with each meta array replaced by a stand-in (``make``'s); also the
    stand-ins made, paired with their arrays."""
    made = []
    return _sub(obj, strided, made, make), made


def _sub(x, strided, made, make):
    # (a plain function, not a recursive closure: a closure's cycle would keep the
    # arrays alive until the garbage collector ran, and the books would count them)
    if type(x) is ndarray:
        # (a 0-d header could be read as a scalar: a 0-d array has one layout anyway)
        s = _strided(x) if strided and x.ndim else make(x)
        made.append((s, x))
        return s
    if type(x) in (tuple, list):
        return type(x)(_sub(e, strided, made, make) for e in x)
    if type(x) is dict:
        return {k: _sub(v, strided, made, make) for k, v in x.items()}
    return x


def _root(a):
    return a if a._base is None else a._base


def _meta(r, made=(), strided=False):
    """A NumPy result as meta arrays: a view of a stand-in stays a view of its array."""
    if isinstance(r, numpy.ndarray):
        if strided and made:
            a = made[0][1]
            if not a.ndim:
                return ndarray(r.shape, r.dtype, _offset=a._offset, _base=_root(a))
            src = _root(a)
            offset = r.__array_interface__["data"][0] - _ORIGIN
            return ndarray(r.shape, r.dtype, r.strides, _offset=offset, _base=src)
        for s, a in made:
            if r.base is not None and numpy.may_share_memory(r, s):
                return ndarray(r.shape, r.dtype, _base=_root(a))
        return ndarray(r.shape, r.dtype)
    if isinstance(r, numpy.generic):
        return ndarray((), r.dtype)
    if type(r) in (tuple, list):
        return type(r)(_meta(e, made, strided) for e in r)
    if hasattr(r, "_fields") and isinstance(r, tuple):  # namedtuples (linalg results)
        return type(r)(*(_meta(e, made, strided) for e in r))
    return r


def _fallback(f, strided=False, make=_standin):
    """``f`` run on stand-ins, its results as meta arrays (see the module docstring)."""
    def fn(*args, **kwargs):
        out = kwargs.pop("out", None)
        (a, k), made = _standins((args, kwargs), strided, make)
        with numpy.errstate(all="ignore"):
            r = f(*a, **k)
        return _out(_meta(r, made, strided), out)
    fn.__name__ = fn.__qualname__ = getattr(f, "__name__", "function")
    return fn


def _out(result, out):
    """``out=``: the result's shape checked against it, and ``out`` returned."""
    if out is None:
        return result
    if isinstance(out, tuple):
        if len(out) == 1:
            out = out[0]
        else:
            for o, r in zip(out, result, strict=True):
                _out(r, o)
            return out
    if out.shape != result.shape:
        raise ValueError(f"non-broadcastable output operand with shape {out.shape} doesn't "
                         f"match the broadcast shape {result.shape}")
    return out


def _refuse(message, error=NotImplementedError):
    def fn(*args, **kwargs):
        raise error(message)
    return fn


def _no_kernel(name):
    return _refuse(f"aten::{name}: attempted to run this operator with Meta tensors, but "
                   f"there was no fake impl or Meta kernel registered.")


# ---- shape rules ----------------------------------------------------------------------------

class _Ufunc:
    """A ufunc on meta arrays: the broadcast shape, and the dtype NumPy gives 0-d operands."""

    def __init__(self, uf):
        self._uf = uf
        self.__name__ = uf.__name__
        self.nin, self.nout = uf.nin, uf.nout

    def __call__(self, *args, out=None, where=True, **kwargs):
        shape = numpy.broadcast_shapes(*(_shape(a) for a in args if _is_array(a)))
        small = [numpy.ones((), a.dtype) if _is_array(a) else a for a in args]
        with numpy.errstate(all="ignore"):
            r = self._uf(*small, **kwargs)
        if out is not None:  # the operands broadcast to out's shape, as NumPy's do
            outs = out if isinstance(out, tuple) else (out,)
            shape = numpy.broadcast_shapes(shape, outs[0].shape)
        res = tuple(ndarray(shape, x.dtype) for x in r) if self.nout > 1 \
            else ndarray(shape, numpy.asarray(r).dtype)
        return _out(res, out)

    def reduce(self, a, axis=0, dtype=None, out=None, keepdims=False, **kwargs):
        return _reduction(self._uf.reduce)(a, axis=axis, dtype=dtype, out=out,
                                           keepdims=keepdims, **kwargs)

    def accumulate(self, a, axis=0, dtype=None, out=None):
        with numpy.errstate(all="ignore"):
            d = self._uf.accumulate(numpy.ones(1, a.dtype), dtype=dtype).dtype
        return _out(ndarray(a.shape, d), out)

    def at(self, a, indices, b=None):
        _fallback(self._uf.at)(a, indices, *(() if b is None else (b,)))

    def outer(self, a, b, **kwargs):
        return _fallback(self._uf.outer)(a, b, **kwargs)

    def reduceat(self, *args, **kwargs):
        return _fallback(self._uf.reduceat)(*args, **kwargs)


def _axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    return tuple(_norm(int(x), ndim) for x in axes)


def _norm(axis, ndim):
    if not -max(ndim, 1) <= axis < max(ndim, 1):
        raise numpy.exceptions.AxisError(axis, ndim)
    return axis % max(ndim, 1)


def _reduction(f):
    """A reduction: the dtype from ``f`` on :func:`_small`'s stand-in, the shape by the
    axis rule."""
    def fn(a, axis=None, *args, out=None, keepdims=False, **kwargs):
        a = a if _is_array(a) else numpy.asarray(a)
        small = _small(a)
        with numpy.errstate(all="ignore"):
            r = numpy.asarray(f(small, axis, *args, keepdims=keepdims, **kwargs))
        axes = _axes(axis, a.ndim)
        if keepdims:
            shape = tuple(1 if i in axes else n for i, n in enumerate(a.shape))
        else:
            shape = tuple(n for i, n in enumerate(a.shape) if i not in axes)
        return _out(ndarray(shape, r.dtype), out)
    fn.__name__ = fn.__qualname__ = f.__name__
    return fn


def matmul(a, b, out=None, **kwargs):
    """``a @ b``: NumPy's shape rule (1-D operands promoted and their dimension dropped)."""
    sa, sb = _shape(a), _shape(b)
    if not sa or not sb:
        raise ValueError("matmul: Input operand 0 does not have enough dimensions (has 0, "
                         "gufunc core with signature (n?,k),(k,m?)->(n?,m?) requires 1)")
    k_a = sa[-1]
    k_b = sb[0] if len(sb) == 1 else sb[-2]
    if k_a != k_b:
        raise ValueError(f"matmul: Input operand 1 has a mismatch in its core dimension 0, "
                         f"with gufunc signature (n?,k),(k,m?)->(n?,m?) (size {k_b} is "
                         f"different from {k_a})")
    batch = numpy.broadcast_shapes(sa[:-2], sb[:-2])
    shape = batch + sa[-2:-1] + (sb[-1:] if len(sb) > 1 else ())
    with numpy.errstate(all="ignore"):
        d = numpy.matmul(numpy.ones((1, 1), a.dtype), numpy.ones((1, 1), b.dtype),
                         **kwargs).dtype
    return _out(ndarray(shape, d), out)


def _creation(f):
    def fn(shape, dtype=float, order="C", **kwargs):
        shape = (shape,) if isinstance(shape, (int, numpy.integer)) else tuple(shape)
        if any(n < 0 for n in shape):
            raise ValueError("negative dimensions are not allowed")
        dtype = numpy.dtype(dtype if dtype is not None else float)
        return ndarray(shape, dtype, _fortran(shape, dtype.itemsize) if order == "F" else None)
    fn.__name__ = f.__name__
    return fn


def full(shape, fill_value, dtype=None, **kwargs):
    shape = (shape,) if isinstance(shape, (int, numpy.integer)) else tuple(shape)
    if dtype is None:
        dtype = fill_value.dtype if _is_array(fill_value) else numpy.array(fill_value).dtype
    return ndarray(shape, dtype)


def _like(a, dtype=None, shape=None, *args, **kwargs):
    return ndarray(a.shape if shape is None else shape, a.dtype if dtype is None else dtype)


def full_like(a, fill_value, dtype=None, *args, shape=None, **kwargs):
    return _like(a, dtype, shape)


def asarray(a, dtype=None, *args, copy=None, **kwargs):
    """A meta array: itself (``astype`` for another dtype), or the shape and dtype of host
    data (which the meta device drops, as PyTorch's ``.to("meta")`` does)."""
    if type(a) is ndarray:
        return a if dtype is None or numpy.dtype(dtype) == a.dtype and not copy \
            else astype(a, dtype)
    host = numpy.asarray(a, dtype)
    return ndarray(host.shape, host.dtype)


def astype(a, dtype, *args, copy=True, **kwargs):
    dtype = numpy.dtype(dtype)
    if not copy and dtype == a.dtype:
        return a
    return ndarray(a.shape, dtype)


def copy(a, *args, **kwargs):
    return ndarray(a.shape, a.dtype)


def ascontiguousarray(a, dtype=None, **kwargs):
    """As NumPy's: ``a`` itself when row-major, else a new storage (as the real call
    allocates); at least one dimension."""
    a = asarray(a, dtype)
    if not a.ndim:
        return ndarray((1,), a.dtype)
    return a if a.flags.c_contiguous else copy(a)


def copyto(dst, src, casting="same_kind", where=True):
    """NumPy's checks (the shapes, then the casting rule on :func:`_small`'s stand-ins),
    and no write: the fallback's zero-stride stand-ins would have NumPy write every
    element into one (a (65536, 65536) parameter's update: four billion writes)."""
    for x, what in ((src, "input array"), (where, "where mask")):
        try:
            fits = numpy.broadcast_shapes(_shape(x), dst.shape) == dst.shape
        except ValueError:
            fits = False
        if not fits:
            raise ValueError(f"could not broadcast {what} from shape {_printed(_shape(x))} "
                             f"into shape {_printed(dst.shape)}")
    src, where = (_small(x) if _is_array(x) else _small(numpy.asarray(x)) if numpy.ndim(x)
                  else x for x in (src, where))  # (a number stays one: NumPy casts it so)
    numpy.copyto(_small(dst), src, casting=casting, where=where)


def where(condition, x=None, y=None):
    if x is None and y is None:
        raise NotImplementedError(_NONZERO)
    shape = numpy.broadcast_shapes(_shape(condition), _shape(x), _shape(y))
    small = [numpy.ones((), v.dtype) if _is_array(v) else v for v in (x, y)]
    return ndarray(shape, numpy.where(True, *small).dtype)


def _joined(f, stack):
    def fn(arrays, axis=0, out=None, dtype=None, **kwargs):
        arrays = list(arrays)
        small = [numpy.ones((1,) * max(len(_shape(a)), 1), a.dtype) if _is_array(a)
                 else numpy.asarray(a) for a in arrays]
        r = f([numpy.zeros(_shape(a), s.dtype) if _shape(a) == () else
               stride_tricks.as_strided(s, _shape(a), (0,) * len(_shape(a)))
               for a, s in zip(arrays, small, strict=True)],
              axis=axis, dtype=dtype, **kwargs) if axis is not None or stack \
            else f([s.reshape(-1) for s in small], axis=0, dtype=dtype)
        if axis is None and not stack:
            return _out(ndarray((sum(math.prod(_shape(a)) for a in arrays),), r.dtype), out)
        return _out(ndarray(r.shape, r.dtype), out)
    fn.__name__ = f.__name__
    return fn


def _reshape_to(a, shape):
    """``shape`` with its -1 resolved for ``a``'s size (NumPy's errors)."""
    shape = tuple(int(n) for n in shape)
    if shape.count(-1) > 1:
        raise ValueError("can only specify one unknown dimension")
    known = math.prod(n for n in shape if n != -1)
    if -1 in shape:
        if known == 0 or a.size % known:
            raise ValueError(f"cannot reshape array of size {a.size} into shape "
                             f"{tuple(shape)}")
        shape = tuple(a.size // known if n == -1 else n for n in shape)
    if math.prod(shape) != a.size:
        raise ValueError(f"cannot reshape array of size {a.size} into shape {shape}")
    return shape


def _nocopy_strides(a, shape):
    """The strides of ``a`` viewed as ``shape``, or None when that needs a copy (NumPy's
    ``_attempt_nocopy_reshape``, done here: NumPy's own would read the data to copy)."""
    if a.size == 0:
        return _contiguous(shape, a.itemsize)
    old = [(n, s) for n, s in zip(a.shape, a.strides, strict=True) if n != 1]
    odims, ostr = [n for n, _ in old], [s for _, s in old]
    new = [0] * len(shape)
    oi, oj, ni, nj = 0, 1, 0, 1
    while ni < len(shape) and oi < len(odims):
        np_, op = shape[ni], odims[oi]
        while np_ != op:
            if np_ < op:
                np_ *= shape[nj]
                nj += 1
            else:
                op *= odims[oj]
                oj += 1
        if any(ostr[k] != odims[k + 1] * ostr[k + 1] for k in range(oi, oj - 1)):
            return None
        new[nj - 1] = ostr[oj - 1]
        for k in range(nj - 1, ni, -1):
            new[k - 1] = new[k] * shape[k]
        ni, nj, oi, oj = nj, nj + 1, oj, oj + 1
    last = new[ni - 1] if ni >= 1 else a.itemsize
    for k in range(ni, len(shape)):
        new[k] = last
    return tuple(new)


def reshape(a, shape=None, order="C", *, copy=None, newshape=None):
    """A view when the strides allow one (NumPy's test), else a copy."""
    shape = newshape if shape is None else shape
    if type(a) is not ndarray:  # a scalar or host data
        return _fallback(numpy.reshape)(a, shape, order=order)
    shape = (shape,) if isinstance(shape, (int, numpy.integer)) else shape
    shape = _reshape_to(a, shape)
    strides = None if copy or order != "C" else _nocopy_strides(a, shape)
    if strides is not None:
        return ndarray(shape, a.dtype, strides, _offset=a._offset, _base=_root(a))
    if copy is False:
        raise ValueError("Unable to avoid creating a copy while reshaping.")
    return ndarray(shape, a.dtype)


def ravel(a, order="C"):
    return reshape(a, -1, order)


_repeat = _fallback(numpy.repeat)


def repeat(a, repeats, axis=None):
    """Repeat counts given as an array have values: the length needs them."""
    if isinstance(repeats, ndarray):
        raise RuntimeError(ITEM)
    return _repeat(a, repeats, axis)


def _basic(key):
    keys = key if isinstance(key, tuple) else (key,)
    return all(k is None or k is Ellipsis or isinstance(k, (int, numpy.integer, slice))
               and not isinstance(k, bool) for k in keys)


def _getitem(a, key):
    if _has_mask(key):
        raise NotImplementedError(_NONZERO)
    if _basic(key):
        keys = key if isinstance(key, tuple) else (key,)
        if Ellipsis not in keys:  # (an Ellipsis makes NumPy return a 0-d view, never a
            keys += (Ellipsis,)   # scalar read from the fake address)
        return _meta(_strided(a)[keys], [(None, a)], strided=True)
    (k,), _ = _standins((key,))
    with numpy.errstate(all="ignore"):
        r = _standin(a)[k]
    return ndarray(r.shape, r.dtype)


# Functions that only rewrite an array's header: run on its real strides.
_VIEWS = ("transpose", "swapaxes", "moveaxis", "rollaxis", "expand_dims", "squeeze",
          "broadcast_to", "broadcast_arrays", "diagonal", "matrix_transpose", "permute_dims",
          "flip", "fliplr", "flipud", "real", "atleast_1d", "atleast_2d", "atleast_3d",
          "split", "array_split", "hsplit", "vsplit", "dsplit")
# Functions whose result depends on the values.
_DATA = {"nonzero": _NONZERO, "argwhere": _NONZERO, "flatnonzero": _NONZERO}
_NO_KERNEL = ("unique", "unique_all", "unique_counts", "unique_inverse", "unique_values",
              "extract", "compress", "trim_zeros", "bincount", "allclose", "array_equal",
              "array_equiv")
_REDUCTIONS = ("sum", "mean", "prod", "max", "min", "amax", "amin", "any", "all", "std",
               "var", "argmax", "argmin", "nansum", "nanmean", "nanmax", "nanmin", "nanprod",
               "nanstd", "nanvar", "count_nonzero", "median", "nanmedian", "ptp")


def _view(name):
    return _fallback(getattr(numpy, name), strided=True)


class _Namespace:
    """The module object ``xp`` rules receive on the meta device: NumPy's names."""

    def __init__(self, source, make=_standin):
        self._source = source
        self._make = make

    def __getattr__(self, name):
        obj = getattr(self._source, name)
        if isinstance(obj, numpy.ufunc):
            obj = _Ufunc(obj)
        elif callable(obj) and not isinstance(obj, type):
            obj = _fallback(obj, make=self._make)
        setattr(self, name, obj)  # made once, on first use
        return obj

    def __repr__(self):
        return "<module 'retrograd.backend.meta' (shapes only)>"


namespace = _Namespace(numpy)
namespace.ndarray = ndarray
for _name in _VIEWS:
    setattr(namespace, _name, _view(_name))
for _name in _REDUCTIONS:
    setattr(namespace, _name, _reduction(getattr(numpy, _name)))
for _name, _msg in _DATA.items():
    setattr(namespace, _name, _refuse(_msg))
for _name in _NO_KERNEL:
    setattr(namespace, _name, _no_kernel(_name))
for _name in ("empty", "zeros", "ones"):
    setattr(namespace, _name, _creation(getattr(numpy, _name)))
for _name in ("empty_like", "zeros_like", "ones_like"):
    setattr(namespace, _name, _like)
for _name, _stack in (("concatenate", False), ("concat", False), ("stack", True)):
    setattr(namespace, _name, _joined(getattr(numpy, _name), _stack))
for _f in (matmul, full, full_like, asarray, astype, copy, copyto, ascontiguousarray, where,
           reshape, ravel, repeat):
    setattr(namespace, _f.__name__, _f)
namespace.array = namespace.asanyarray = asarray
namespace.linalg = _Namespace(numpy.linalg, _eye_standin)
namespace.linalg.matmul = matmul
namespace.fft = _Namespace(numpy.fft)
namespace.lib = type("lib", (), {"stride_tricks": _Namespace(stride_tricks)})
namespace.lib.stride_tricks.as_strided = _fallback(stride_tricks.as_strided, strided=True)
namespace.lib.stride_tricks.sliding_window_view = _fallback(
    stride_tricks.sliding_window_view, strided=True)


def address(a):
    """A stand-in for the address of ``a``'s first element: distinct per storage, and
    apart by the byte offset within one."""
    return (id(_root(a)) << 32) + a._offset


class _Lazy(_Namespace):
    """``scipy_linalg`` (SciPy's ``linalg`` on stand-ins), imported on first use."""

    def __getattr__(self, name):
        if name == "_source":
            import scipy.linalg
            self._source = scipy.linalg
            return self._source
        return super().__getattr__(name)


namespace.scipy_linalg = _Lazy.__new__(_Lazy)
namespace.scipy_linalg._make = _eye_standin


def _lookup(func):
    """This module's version of a NumPy function."""
    mod = getattr(func, "__module__", "") or ""
    name = getattr(func, "__name__", "")
    space = namespace.linalg if mod.startswith("numpy.linalg") else \
        namespace.fft if mod.startswith("numpy.fft") else namespace
    if mod.startswith("numpy"):
        return getattr(space, name, None)
    return None


# ---- methods and operators ----------------------------------------------------------------

def _method(name):
    f = getattr(namespace, name)

    def m(self, *args, **kwargs):
        return f(self, *args, **kwargs)
    m.__name__ = m.__qualname__ = name
    return m


def _method_fallback(name):
    def m(self, *args, **kwargs):
        out = kwargs.pop("out", None)
        (a, k), made = _standins((args, kwargs))
        s = _standin(self)
        with numpy.errstate(all="ignore"):
            r = getattr(s, name)(*a, **k)
        return _out(_meta(r, [(s, self), *made]), out)
    m.__name__ = m.__qualname__ = name
    return m


def _shape_args(args):
    return args[0] if len(args) == 1 and isinstance(args[0], (tuple, list)) else args


for _name in _REDUCTIONS + ("clip", "conj", "conjugate", "cumsum", "cumprod", "diagonal",
                            "round", "searchsorted", "sort", "argsort", "take", "swapaxes",
                            "squeeze", "repeat", "trace", "partition", "argpartition",
                            "choose", "dot", "put", "nonzero", "compress", "copy", "astype"):
    if hasattr(numpy.ndarray, _name):
        setattr(ndarray, _name, _method(_name))
ndarray.reshape = lambda self, *shape, **kw: reshape(self, _shape_args(shape), **kw)
ndarray.transpose = lambda self, *axes: namespace.transpose(self, _shape_args(axes) or None)
ndarray.ravel = lambda self, order="C": ravel(self, order)
ndarray.flatten = lambda self, order="C": ndarray((self.size,), self.dtype)
ndarray.fill = lambda self, value: None
ndarray.view = _method_fallback("view")
ndarray.__matmul__ = lambda self, other: matmul(self, other) if _operand(other) \
    else NotImplemented
ndarray.__rmatmul__ = lambda self, other: matmul(other, self) if _operand(other) \
    else NotImplemented


def _operand(x):
    return _is_array(x) or isinstance(x, (int, float, complex, bool, numpy.generic))


def _binary(uf):
    f = getattr(namespace, uf)

    def op(self, other):
        return f(self, other) if _operand(other) else NotImplemented

    def rop(self, other):
        return f(other, self) if _operand(other) else NotImplemented

    def iop(self, other):
        if not _operand(other):
            return NotImplemented
        return f(self, other, out=self)
    return op, rop, iop


for _dunder, _uf in (("add", "add"), ("sub", "subtract"), ("mul", "multiply"),
                     ("truediv", "true_divide"), ("floordiv", "floor_divide"),
                     ("mod", "remainder"), ("pow", "power"), ("and", "bitwise_and"),
                     ("or", "bitwise_or"), ("xor", "bitwise_xor"), ("lshift", "left_shift"),
                     ("rshift", "right_shift")):
    _op, _rop, _iop = _binary(_uf)
    setattr(ndarray, f"__{_dunder}__", _op)
    setattr(ndarray, f"__r{_dunder}__", _rop)
    setattr(ndarray, f"__i{_dunder}__", _iop)
for _dunder, _uf in (("lt", "less"), ("le", "less_equal"), ("gt", "greater"),
                     ("ge", "greater_equal"), ("eq", "equal"), ("ne", "not_equal")):
    setattr(ndarray, f"__{_dunder}__", _binary(_uf)[0])
for _dunder, _uf in (("neg", "negative"), ("pos", "positive"), ("abs", "absolute"),
                     ("invert", "invert")):
    setattr(ndarray, f"__{_dunder}__", _method(_uf))
ndarray.__divmod__ = _binary("divmod")[0]
ndarray.__hash__ = None


# ---- creation on a device (issue 13) -------------------------------------------------------

def on_device(make):
    """``make(namespace)``: the meta device is one, always current; what it allocates has a
    shape and a dtype, no memory."""
    return make(namespace)


# Ranges without data (the fallback would compute the whole range on the host): their
# length from the arguments; linspace's and logspace's dtype from a one-element range.

def arange(start, stop=None, step=1, dtype=None, **kwargs):
    """``numpy.arange``'s shape and dtype, for bounds that are Python ints and floats (the
    others, NumPy's rules on the whole range)."""
    if stop is None:
        start, stop = 0, start
    kinds = {type(v) for v in (start, stop, step)}
    if not kinds <= {int, float} or step == 0:
        return _fallback(numpy.arange)(start, stop, step, dtype=dtype, **kwargs)
    if kinds == {int}:
        n, default = len(range(start, stop, step)), numpy.int64
    else:
        n, default = max(math.ceil((stop - start) / step), 0), numpy.float64  # in doubles
    return ndarray((n,), numpy.dtype(default if dtype is None else dtype))


def _counted(f):
    """``f`` (linspace, logspace) whose third argument is the length, for scalar bounds."""
    def fn(start, stop, num=50, *args, **kwargs):
        if _is_array(start) or _is_array(stop) or kwargs.get("retstep") or num < 0:
            return _fallback(f)(start, stop, num, *args, **kwargs)
        return ndarray((int(num),), f(start, stop, 1, *args, **kwargs).dtype)
    fn.__name__ = fn.__qualname__ = f.__name__
    return fn


def eye(N, M=None, k=0, dtype=float, order="C", **kwargs):
    """``numpy.eye``'s shape and dtype."""
    return namespace.empty((N, N if M is None else M), dtype, order)


namespace.arange, namespace.eye = arange, eye
namespace.linspace, namespace.logspace = _counted(numpy.linspace), _counted(numpy.logspace)
