"""Batched arrays, for ``autograd.grad(..., is_grads_batched=True)`` (``_batched_grad``)
and vectorized forward mode (``forward_ad``).

A rule sees a batch of gradients (or tangents) as a :class:`Batched` array, whose
``shape``/``ndim`` are those of one batch element (what the rule was written for) while
its data holds them all on a leading axis, as ``vmap`` does. The ``xp`` a rule gets is
:class:`~._batched_xp.BatchedNumpy`, whose functions (NumPy's names, the array module's
vocabulary) run a *batching rule* where an operand is batched: it maps the call's axes,
shapes and indices past the batch dim and calls the same function once on the whole
batch, in the module of the batch's data (NumPy's, the device's, or a lower level's
batched namespace). So the vjp and jvp rules, and the op forwards they call, run
unchanged and once. Values that are not batched (saved tensors, shapes, indices)
broadcast over the batch; buffers ``xp`` allocates (``xp.zeros``...) are batched, so a
rule may write into them. The rules are keyed by name (``"reshape"``, ``"linalg.inv"``,
ufuncs by theirs); those of reductions, joins, gathers and linear algebra live in
:mod:`._batched_rules`. A batched value handed to NumPy's functions reaches the same rule
by the function's name, through NumPy's protocols (``__array_function__``,
``__array_ufunc__``); a device module's functions and operators refuse it, as CuPy's
refuse objects not their own, so a rule calls ``xp``'s. A function with no batching rule
raises NotImplementedError naming it.

Batches nest (``vmap`` of ``vmap``, a batched backward inside ``vmap``): each
:class:`Batched` has a *level*, and a batch of a higher level holds, as its data, values
of the lower levels. A call is handled by its innermost (highest) level first: values of
lower levels among its operands are broadcast over that level's batch, and the call on the
data then goes to the next level down (the data's module is that level's namespace).
:func:`new_level` hands out levels.
"""

import math
import operator

from ..backend import get_array_module, special_functions
from ..backend.functions import functions

__all__ = ["Batched", "levels_of", "new_level", "register_namespace", "rule_namespace",
           "shape_of", "state", "unbatch"]


DATA_DEPENDENT = ("vmap: It looks like you're attempting to use a Tensor in some "
                  "data-dependent control flow. We don't support that yet, please file an "
                  "issue at https://github.com/pytorch/pytorch/issues .")
ITEM = ("vmap: It looks like you're calling .item() on a Tensor. We don't support vmap over "
        "calling .item() on a Tensor, please try to rewrite what you're doing with other "
        "operations. If error is occurring somewhere inside PyTorch internals, please file a "
        "bug report.")


INPLACE = ("vmap: inplace arithmetic(self, *extra_args) is not possible because there exists "
           "a Tensor `other` in extra_args that has more elements than `self`. This happened "
           "due to `other` being vmapped over but `self` not being vmapped over in a vmap. "
           "Please try to use out-of-place operators instead of inplace arithmetic. If said "
           "operator is being called inside the PyTorch framework, please file a bug report "
           "instead.")


SAME_BATCHED = ("Vmap does not currently support same randomness with a batched tensor "
                "input. Please file an issue with functorch")

RANDOMNESS = {}  # vmap level -> its randomness ("error", "same", "different"), while it runs


class _State:
    level = 0  # the level the call being handled runs at: what rules construct
    top = 0  # the highest level handed out and not released


state = _State()  # (the engine's nodes read ``top``: whether any vmap is running)


class new_level:
    """A context giving a fresh level, above every level in use (``with new_level() as lv``)."""

    def __enter__(self):
        self.prev = state.top
        state.top += 1
        return state.top

    def __exit__(self, *exc):
        state.top = self.prev


# ---- the batched array ----------------------------------------------------------------------

def _norm(axis, nd):
    """A logical axis (or sequence of them) of an ``nd``-dim value, as data axes."""
    if isinstance(axis, (tuple, list)):
        return tuple(operator.index(a) % nd + 1 if nd else 1 for a in axis)
    return operator.index(axis) % nd + 1 if nd else 1


def _ndim(x):
    """The ndim of an operand: an array's, a (nested) sequence's depth, 0 for a number."""
    if type(x) is Batched:
        return x.ndim
    n = 0
    while type(x) is list or type(x) is tuple:
        n += 1
        if not x:
            return n
        x = x[0]
    return n + getattr(x, "ndim", 0)


def _xp(x):
    """The array module of batch ``x``'s data: the device's (NumPy's on the CPU), or the
    batched namespace of the lower level it holds."""
    return get_array_module(x.data)


def _first(values):
    """The first batch among ``values``."""
    for v in values:
        if type(v) is Batched:
            return v
    return None


def _lift(x, nd):
    """``x`` as data that broadcasts with batched data of logical ndim ``nd``."""
    if type(x) is not Batched:
        return x
    d = x.data
    k = nd - d.ndim + 1
    return d.reshape(d.shape[:1] + (1,) * k + d.shape[1:]) if k > 0 else d


def _function(xp, name):
    """Function ``name`` of array module ``xp``: ``"linalg.inv"`` of its ``linalg``,
    ``"special.erf"`` (or a ufunc only SciPy has, handed over by NumPy's protocol) of its
    ``scipy.special`` (``backend.special_functions``)."""
    head, _, rest = name.partition(".")
    if rest:
        return getattr(special_functions(xp) if head == "special" else getattr(xp, head), rest)
    f = getattr(xp, name, None)
    return f if f is not None else getattr(special_functions(xp), name)


def _ufunc_call(name, args, kwargs):
    """Elementwise function ``name`` of the batch's module on the lifted operands."""
    nd, first = 0, None
    for a in args:  # (one pass: this runs for every elementwise call under vmap)
        if type(a) is Batched:
            n = a.data.ndim - 1
            if first is None:
                first = a
        else:
            n = _ndim(a)
        if n > nd:
            nd = n
    out = _function(get_array_module(first.data), name)(*[_lift(a, nd) for a in args],
                                                         **kwargs)
    return tuple(Batched(o) for o in out) if type(out) is tuple else Batched(out)


def _shape_tuple(shape):
    try:
        return (operator.index(shape),)
    except TypeError:
        return tuple(shape)


def _batch(x, like):
    """``x`` as a batch like ``like`` (a plain array broadcast over it)."""
    return x if type(x) is Batched else Batched(_full_batch(x, like))


def _full_batch(x, like):
    """Batched data of ``x`` (a plain array is broadcast over the batch of ``like``, in
    the module of its data)."""
    if type(x) is Batched:
        return x.data
    xp = _xp(like)
    x = xp.asarray(x)
    return xp.broadcast_to(x, like.data.shape[:1] + x.shape)


class BatchShape(tuple):
    """The shape of one element of a batch of level ``level``: what a node records for a
    batched input, so that a gradient of a higher level is summed over that level."""


def _values(x):
    """The values of a batch (of any depth), as one plain array."""
    while type(x) is Batched:
        x = x.data
    return x


def shape_of(a):
    """``a.shape``; a :class:`BatchShape` for a batch."""
    if type(a) is not Batched:
        return a.shape
    s = BatchShape(a.shape)
    s.level = a.level
    return s


def levels_of(a):
    """The levels ``a`` is batched over (none for a plain array)."""
    out = set()
    while type(a) is Batched:
        out.add(a.level)
        a = a.data
    return out


def rule_namespace(xp, g, grads, values):
    """``(xp, g, grads)`` for a backward rule over gradient ``g`` (``grads``: all of them,
    or None) and ``values`` (what its node saved, its attributes): as given, unless a
    value is batched deeper than ``xp``, as when a cotangent given under vmap (to vjp, to
    ``autograd.grad``) is batched at fewer levels than the values saved there. Then the
    innermost level's namespace, as a forward's is its innermost input's, and the
    gradients broadcast over its batch: the buffers the rule makes, and the copies of a
    gradient it writes into, must hold what it writes there."""
    found = _levels(values, _levels((g, grads), []))
    if not found:
        return xp, g, grads
    top = max(found, key=lambda b: b.level)
    level = top.level
    if level <= getattr(xp, "level", 0):
        return xp, g, grads
    n = top.data.shape[0]
    return (top.batched_namespace(), _over(g, level, n),
            None if grads is None else [_over(x, level, n) for x in grads])


def unbatch(g, shape):
    """Gradient ``g`` summed over the batches that ``shape``'s input lacked, of levels that
    have ended (a tensor used unbatched inside a vmap that a backward outside
    differentiates: the sum over the batch). Inside a running vmap the gradient of an
    unbatched tensor stays batched: each element's own (per-sample gradients)."""
    level = max(getattr(shape, "level", 0), state.top)
    while type(g) is Batched and g.level > level:
        g = g.data.sum(axis=0)
    return g


class Batched:
    """A batch of arrays along axis 0 of ``data``, seen as one array of ``data.shape[1:]``;
    ``level``: which batch (by default the level of the call being handled)."""

    __slots__ = ("data", "level")

    def __init__(self, data, level=None):
        self.data = data
        self.level = state.level if level is None else level

    def like(self, data):
        """``data`` as a batch of this one's level."""
        return Batched(data, self.level)

    def batched_namespace(self):
        """The ``xp`` of rules run on this batch (``backend.get_array_module``): a
        :class:`~._batched_xp.BatchedNumpy` over its data's module."""
        return _NAMESPACE[0](self.data.shape[0], self.level, get_array_module(self.data))

    shape = property(lambda self: self.data.shape[1:])
    ndim = property(lambda self: self.data.ndim - 1)
    dtype = property(lambda self: self.data.dtype)
    size = property(lambda self: math.prod(self.data.shape[1:]))
    itemsize = property(lambda self: self.data.itemsize)
    strides = property(lambda self: self.data.strides[1:])
    flags = property(lambda self: self.data.flags)
    real = property(lambda self: self.like(self.data.real))
    imag = property(lambda self: self.like(self.data.imag))
    T = property(lambda self: _transpose(self))

    def __repr__(self):
        return f"Batched({self.data!r}, level={self.level})"

    def __len__(self):
        return self.data.shape[1]

    # A value that differs across the batch cannot become one Python value (PyTorch's
    # messages; NotImplementedError, a RuntimeError, lets an op fall back to a loop).
    def __bool__(self):
        raise NotImplementedError(DATA_DEPENDENT)

    def item(self, *args):
        raise NotImplementedError(ITEM)

    __float__ = __int__ = __complex__ = __index__ = tolist = item

    def __array__(self, dtype=None, copy=None):
        raise TypeError("batched: a batched gradient was converted to a plain array "
                        "(written into an array not made by the rule's xp?)")

    # NumPy's protocols (the functions of NumPy and CuPy dispatch on them): the rule of
    # the function's name.
    def __array_ufunc__(self, ufunc, method, *args, **kwargs):
        return _ufunc(ufunc.__name__, method, args, kwargs)

    def __array_function__(self, func, types, args, kwargs):
        name = _name_of(func)
        impl = _FUNCS.get(name)
        if impl is None:
            raise NotImplementedError(f"batched: no batching rule for numpy.{name}")
        return impl(*args, **kwargs)

    # Operators: the ufuncs' batching rule (Python numbers and arrays broadcast).
    def __add__(self, o):
        return _ufunc_call("add", (self, o), {})

    def __radd__(self, o):
        return _ufunc_call("add", (o, self), {})

    def __sub__(self, o):
        return _ufunc_call("subtract", (self, o), {})

    def __rsub__(self, o):
        return _ufunc_call("subtract", (o, self), {})

    def __mul__(self, o):
        return _ufunc_call("multiply", (self, o), {})

    def __rmul__(self, o):
        return _ufunc_call("multiply", (o, self), {})

    def __truediv__(self, o):
        return _ufunc_call("true_divide", (self, o), {})

    def __rtruediv__(self, o):
        return _ufunc_call("true_divide", (o, self), {})

    def __floordiv__(self, o):
        return _ufunc_call("floor_divide", (self, o), {})

    def __rfloordiv__(self, o):
        return _ufunc_call("floor_divide", (o, self), {})

    def __mod__(self, o):
        return _ufunc_call("remainder", (self, o), {})

    def __rmod__(self, o):
        return _ufunc_call("remainder", (o, self), {})

    def __pow__(self, o):
        return _ufunc_call("power", (self, o), {})

    def __rpow__(self, o):
        return _ufunc_call("power", (o, self), {})

    def __matmul__(self, o):
        return _matmul(self, o)

    def __rmatmul__(self, o):
        return _matmul(o, self)

    def __and__(self, o):
        return _ufunc_call("bitwise_and", (self, o), {})

    def __rand__(self, o):
        return _ufunc_call("bitwise_and", (o, self), {})

    def __or__(self, o):
        return _ufunc_call("bitwise_or", (self, o), {})

    def __ror__(self, o):
        return _ufunc_call("bitwise_or", (o, self), {})

    def __xor__(self, o):
        return _ufunc_call("bitwise_xor", (self, o), {})

    def __rxor__(self, o):
        return _ufunc_call("bitwise_xor", (o, self), {})

    def __eq__(self, o):
        return _ufunc_call("equal", (self, o), {})

    def __ne__(self, o):
        return _ufunc_call("not_equal", (self, o), {})

    def __lt__(self, o):
        return _ufunc_call("less", (self, o), {})

    def __le__(self, o):
        return _ufunc_call("less_equal", (self, o), {})

    def __gt__(self, o):
        return _ufunc_call("greater", (self, o), {})

    def __ge__(self, o):
        return _ufunc_call("greater_equal", (self, o), {})

    __hash__ = None

    def __neg__(self):
        return self.like(-self.data)

    def __pos__(self):
        return self

    def __abs__(self):
        return self.like(abs(self.data))

    def __invert__(self):
        return self.like(~self.data)

    def _inplace(self, name, o):
        getattr(_xp(self), name)(self.data, _lift(o, self.ndim), out=self.data)
        return self

    def __iadd__(self, o):
        return self._inplace("add", o)

    def __isub__(self, o):
        return self._inplace("subtract", o)

    def __imul__(self, o):
        return self._inplace("multiply", o)

    def __itruediv__(self, o):
        return self._inplace("true_divide", o)

    # Indexing: the index applies past the batch dim.
    def __getitem__(self, index):
        xp = _xp(self)
        if _varies(index):
            full, k, p = _batched_index(index, self.ndim, self.data.shape[0], xp)
            r = _lower(self.data, full)[full]
            return Batched(get_array_module(r).moveaxis(r, tuple(range(1, 1 + k)),
                                                        tuple(range(1 + p, 1 + p + k))))
        bidx, nadv, _ = _index_plan(index, self.ndim, xp)
        r = self.data[bidx]
        return Batched(r if nadv is None else xp.moveaxis(r, nadv, 0))

    def __setitem__(self, index, value):
        xp = _xp(self)
        if _varies(index):
            full, k, p, v = _batched_write(index, self.ndim, self, value)
            self.data[full] = v
            return
        bidx, nadv, out_nd = _index_plan(index, self.ndim, xp)
        self.data[bidx] = _index_value(value, nadv, out_nd, xp)

    # The ndarray methods rules and forwards use, as NumPy's functions.
    def reshape(self, *shape, order="C"):
        return _reshape(self, shape[0] if len(shape) == 1 else shape, order=order)

    def copy(self, order="C"):
        return Batched(self.data.copy(order))

    def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
        return Batched(self.data.astype(dtype, copy=copy))

    def ravel(self, order="C"):
        return _reshape(self, (-1,))

    flatten = ravel

    def transpose(self, *axes):
        return _transpose(self, axes[0] if len(axes) == 1 else (axes or None))

    def swapaxes(self, axis1, axis2):
        return _swapaxes(self, axis1, axis2)

    def squeeze(self, axis=None):
        return _squeeze(self, axis)

    def conj(self):
        return Batched(self.data.conj())

    def sum(self, *args, **kwargs):
        return _FUNCS["sum"](self, *args, **kwargs)

    def mean(self, *args, **kwargs):
        return _FUNCS["mean"](self, *args, **kwargs)

    def prod(self, *args, **kwargs):
        return _FUNCS["prod"](self, *args, **kwargs)

    def max(self, *args, **kwargs):
        return _FUNCS["max"](self, *args, **kwargs)

    def min(self, *args, **kwargs):
        return _FUNCS["min"](self, *args, **kwargs)

    def any(self, *args, **kwargs):
        return _FUNCS["any"](self, *args, **kwargs)

    def all(self, *args, **kwargs):
        return _FUNCS["all"](self, *args, **kwargs)

    def cumsum(self, *args, **kwargs):
        return _FUNCS["cumsum"](self, *args, **kwargs)

    def cumprod(self, *args, **kwargs):
        return _FUNCS["cumprod"](self, *args, **kwargs)

    def clip(self, *args, **kwargs):
        return _FUNCS["clip"](self, *args, **kwargs)

    def argmax(self, *args, **kwargs):
        return _FUNCS["argmax"](self, *args, **kwargs)

    def argmin(self, *args, **kwargs):
        return _FUNCS["argmin"](self, *args, **kwargs)

    def view(self, dtype):
        return Batched(self.data.view(dtype))


# ---- indices ----------------------------------------------------------------------------------

def _index_plan(index, nd, xp):
    """``(data index, nadv, logical result ndim)`` for ``index`` on an ``nd``-dim value.

    ``nadv`` is set when NumPy puts the advanced-index dims first (advanced indices not
    next to each other): the batch dim then lands after them, at ``nadv``. ``xp``: the
    module of the indexed data (a list becomes its array).
    """
    items = index if type(index) is tuple else (index,)
    arrays, adv_pos, adv_nd, consumed, basic = False, [], 0, 0, 0
    conv = []
    for k, it in enumerate(items):
        if type(it) is Batched:
            raise NotImplementedError("batched: an index that varies over the batch")
        if isinstance(it, list):
            it = xp.asarray(it)
        conv.append(it)
        if it is None:
            basic += 1
        elif it is Ellipsis:
            pass
        elif isinstance(it, slice):
            consumed += 1
            basic += 1
        elif isinstance(it, bool) or getattr(it, "ndim", None) == 0 and it.dtype.kind == "b":
            arrays = True
            adv_pos.append(k)
            adv_nd = max(adv_nd, 1)
        elif getattr(it, "ndim", 0):  # an index array
            arrays = True
            adv_pos.append(k)
            if it.dtype.kind == "b":
                consumed += it.ndim
                adv_nd = max(adv_nd, 1)
            else:
                consumed += 1
                adv_nd = max(adv_nd, it.ndim)
        else:  # an int (a 0-d integer array indexes as one)
            consumed += 1
            adv_pos.append(k)
    if not arrays:
        adv_nd = 0
    out_nd = basic + nd - consumed + adv_nd
    nadv = None
    if arrays and adv_pos[-1] - adv_pos[0] + 1 != len(adv_pos):
        nadv = adv_nd
    return (slice(None), *conv), nadv, out_nd


def _index_value(value, nadv, out_nd, xp):
    """A value written through an index: laid out like the indexed data (of module
    ``xp``)."""
    if type(value) is Batched:
        v = _lift(value, out_nd)
    elif nadv is None or not _ndim(value):
        return value
    else:
        v = xp.asarray(value)
        v = v.reshape((1,) * (out_nd - v.ndim + 1) + v.shape)
    return v if nadv is None else get_array_module(v).moveaxis(v, 0, nadv)


def _varies(index):
    """Whether an index holds a batch (an index array that differs across the batch)."""
    if type(index) is Batched:
        return True
    return type(index) is tuple and any(type(i) is Batched for i in index)


def _batched_index(index, nd, batch, xp):
    """An index with batched index arrays as one advanced index of the data: the batch's
    own ``arange`` first, broadcast against them. Returns it, the number ``k`` of
    advanced dims and where ``p`` they belong in one element's result (NumPy puts them
    first, after the batch dim, since the arange makes them non-adjacent). ``xp``: the
    module of the indexed data."""
    items = list(index) if type(index) is tuple else [index]
    if any(type(i) is Batched and i.dtype.kind == "b" for i in items):
        raise NotImplementedError("batched: a boolean mask that varies over the batch")
    consumed = sum(1 for i in items if i is not None and i is not Ellipsis)
    e = next((j for j, i in enumerate(items) if i is Ellipsis), None)
    if e is not None:
        items[e:e + 1] = [slice(None)] * (nd - consumed)
    adv = [j for j, i in enumerate(items) if not isinstance(i, slice) and i is not None]
    k = max((i.ndim for i in (items[j] for j in adv) if hasattr(i, "ndim")), default=0)
    for j in adv:
        i = items[j]
        if type(i) is Batched:
            d = i.data
            items[j] = d.reshape(d.shape[:1] + (1,) * (k - i.ndim) + d.shape[1:])
        elif not isinstance(i, int):
            i = xp.asarray(i)
            items[j] = i.reshape((1,) * (k + 1 - i.ndim) + i.shape)
    ar = xp.arange(batch).reshape((batch,) + (1,) * k)
    together = adv[-1] - adv[0] + 1 == len(adv)
    p = sum(1 for i in items[:adv[0]] if isinstance(i, slice) or i is None) if together else 0
    return (ar, *items), k, p


def _lower(data, full):
    """``data`` as a batch of the lower level its index arrays carry (nested vmap: an index
    batched at both levels into a value batched at the outer one only)."""
    inner = _levels(full, [])
    if type(data) is Batched or not inner:
        return data
    b = inner[0]
    return Batched(get_array_module(data).broadcast_to(data, (b.data.shape[0],) + data.shape),
                   b.level)


def _batched_write(index, nd, dst, value):
    """``_batched_index`` for a write into batch ``dst``, with ``value`` laid out as the
    data it replaces."""
    xp = _xp(dst)
    full, k, p = _batched_index(index, nd, dst.data.shape[0], xp)
    used = sum(1 for i in full[1:] if i is not None)  # the dims indexed; the rest follow
    out_nd = k + sum(1 for i in full[1:] if isinstance(i, slice) or i is None) + nd - used
    v = value.data if type(value) is Batched else xp.asarray(value)
    if type(value) is Batched:
        v = v.reshape(v.shape[:1] + (1,) * (out_nd - value.ndim) + v.shape[1:])
    elif v.ndim:
        v = v.reshape((1,) * (out_nd + 1 - v.ndim) + v.shape)
    if type(value) is Batched or v.ndim:
        v = get_array_module(v).moveaxis(v, tuple(range(1 + p, 1 + p + k)),
                                         tuple(range(1, 1 + k)))
    return full, k, p, v


def _ufunc_at(name, a, index, b=None):
    """``<name>.at(a, index, b)``, unbuffered: the backend's ``ufunc_at`` on the data."""
    if type(a) is not Batched:
        raise TypeError(f"batched: numpy.{name}.at writes a batched value "
                        "into an unbatched array")
    xp = _xp(a)
    if _varies(index):
        full, _, _, v = _batched_write(index, a.ndim, a, 0 if b is None else b)
    else:
        full, nadv, out_nd = _index_plan(index, a.ndim, xp)
        v = None if b is None else _index_value(b, nadv, out_nd, xp)
    if b is None:
        getattr(xp, name).at(a.data, full)
    else:
        functions(xp).ufunc_at(name, a.data, full, v)


# ---- the protocol's functions, by name ----------------------------------------------------

_SUBMODULES = ("linalg", "fft")


def _name_of(func):
    """The name a batching rule is keyed by: a function's NumPy name (``"reshape"``), with
    its submodule (``"linalg.inv"``), whichever module (NumPy's, CuPy's) handed it over."""
    sub = (getattr(func, "__module__", None) or "").split(".")
    return f"{sub[1]}.{func.__name__}" if len(sub) > 1 and sub[1] in _SUBMODULES \
        else func.__name__


def _ufunc(name, method, args, kwargs):
    """Ufunc ``name``'s ``method`` (``__call__``, ``reduce``, ``accumulate``, ``outer``,
    ``at``) with a batched operand."""
    if method == "at":
        return _ufunc_at(name, *args, **kwargs)
    if method in ("reduce", "accumulate") and type(args[0]) is Batched:
        a, axis = args[0], kwargs.pop("axis", args[1] if len(args) > 1 else 0)
        axis = tuple(range(1, a.ndim + 1)) if axis is None else _norm(axis, a.ndim)
        return Batched(getattr(getattr(_xp(a), name), method)(a.data, axis, *args[2:],
                                                              **kwargs))
    if method == "outer":
        a, b = args
        nb = _ndim(b)
        if type(a) is Batched:
            a = a.like(a.data.reshape(a.data.shape + (1,) * nb))
        else:
            a = _xp(b).asarray(a)
            a = a.reshape(a.shape + (1,) * nb)
        return _ufunc_call(name, (a, b), kwargs)
    if method != "__call__":
        raise NotImplementedError(f"batched: no batching rule for numpy.{name}.{method}")
    if name == "matmul":
        return _matmul(*args)
    out = kwargs.get("out")
    if out is not None:
        dst = out[0] if type(out) is tuple else out
        if type(dst) is not Batched:
            raise TypeError(f"batched: numpy.{name} writes a batched result into an "
                            "unbatched array")
        kwargs["out"] = dst.data
        nd = max(dst.ndim, *(_ndim(a) for a in args))
        getattr(_xp(dst), name)(*(_lift(a, nd) for a in args), **kwargs)
        return dst
    return _ufunc_call(name, args, kwargs)


# ---- functions ------------------------------------------------------------------------------

_FUNCS = {}  # a function's name (see _name_of) -> its batching rule
_NAMESPACE = []  # the class of the batches' namespaces (``_batched_xp`` registers it)


def register_namespace(cls):
    """Make ``cls(batch, level, inner)`` the ``xp`` of rules run on batches."""
    _NAMESPACE[:] = [cls]


def _rule(*names):
    def deco(f):
        for name in names:
            _FUNCS[name] = f
        return f
    return deco


@_rule("reshape")
def _reshape(a, shape=None, order="C", *, newshape=None, copy=None):
    shape = _shape_tuple(newshape if shape is None else shape)
    return Batched(a.data.reshape(a.data.shape[:1] + shape, order=order))


@_rule("ravel")
def _ravel(a, order="C"):
    return _reshape(a, (-1,))


@_rule("broadcast_to")
def _broadcast_to(array, shape, subok=False):
    shape = _shape_tuple(shape)
    d = _lift(array, len(shape))
    return Batched(_xp(array).broadcast_to(d, d.shape[:1] + shape))


@_rule("expand_dims")
def _expand_dims(a, axis):
    n = len(axis) if isinstance(axis, (tuple, list)) else 1
    return Batched(_xp(a).expand_dims(a.data, _norm(axis, a.ndim + n)))


@_rule("squeeze")
def _squeeze(a, axis=None):
    if axis is None:
        axis = tuple(i for i, n in enumerate(a.shape) if n == 1)
    return Batched(_xp(a).squeeze(a.data, _norm(axis, a.ndim)))


@_rule("transpose", "permute_dims")
def _transpose(a, axes=None):
    nd = a.ndim
    axes = range(nd - 1, -1, -1) if axes is None else axes
    return Batched(_xp(a).transpose(a.data, (0, *_norm(tuple(axes), nd))))


@_rule("swapaxes")
def _swapaxes(a, axis1, axis2):
    return Batched(_xp(a).swapaxes(a.data, _norm(axis1, a.ndim), _norm(axis2, a.ndim)))


@_rule("take")
def _take(a, indices, axis=None, out=None, mode="raise"):
    if type(indices) is Batched:
        if mode != "raise":
            raise NotImplementedError(f"batched: numpy.take with mode={mode!r}")
        if type(a) is not Batched:
            a = _batch(a, indices)
        if axis is None:
            return _reshape(a, (-1,))[indices]
        nd = a.ndim  # (a logical index: the logical axis, not the data's)
        return a[(slice(None),) * (operator.index(axis) % nd) + (indices,)] if nd \
            else a[indices]
    d, xp = a.data, _xp(a)
    kw = {} if mode == "raise" else {"mode": mode}  # (CuPy's take has no mode: it wraps)
    if axis is None:
        return Batched(xp.take(d.reshape(d.shape[0], -1), indices, 1, **kw))
    return Batched(xp.take(d, indices, _norm(axis, a.ndim), **kw))


def _matmul(a, b):
    """``a @ b`` with either or both batched. A batched vector becomes a one-row (``a``)
    or one-column (``b``) matrix, and the batched operand gets unit stack dims so that
    its batch dim lines up ahead of the other's stack dims. Against a plain matrix or
    vector, the batch folds into the rows of one GEMM (NumPy would loop over it)."""
    ba, bb = type(a) is Batched, type(b) is Batched
    na, nb = _ndim(a), _ndim(b)
    xp = _xp(a if ba else b)
    if ba and not bb and nb <= 2:
        d = a.data
        r = xp.matmul(d.reshape(math.prod(d.shape[:-1]), d.shape[-1]), b)
        return Batched(r.reshape(d.shape[:-1] + r.shape[1:]))
    if bb and not ba and na <= 2 and nb <= 2:  # a @ b_k as (b_k^T @ a^T)^T
        d = b.data
        at = a.T if na == 2 else a
        if nb == 1:
            return Batched(xp.matmul(d, at))
        r = xp.matmul(xp.swapaxes(d, 1, 2).reshape(d.shape[0] * d.shape[2], d.shape[1]), at)
        r = r.reshape(d.shape[:1] + d.shape[2:] + r.shape[1:])
        return Batched(xp.swapaxes(r, 1, 2) if na == 2 else r)
    da = a.data if ba else a
    db = b.data if bb else b
    row, col = ba and na == 1, bb and nb == 1
    if row:
        da, na = da[:, None, :], 2
    if col:
        db, nb = db[:, :, None], 2
    nd = max(na, nb)
    if ba and na < nd:
        da = da.reshape(da.shape[:1] + (1,) * (nd - na) + da.shape[1:])
    if bb and nb < nd:
        db = db.reshape(db.shape[:1] + (1,) * (nd - nb) + db.shape[1:])
    r = xp.matmul(da, db)
    if col:
        r = r[..., 0]
    if row:
        r = r[..., 0] if col or nb == 1 else r[..., 0, :]
    return Batched(r)


def _as_strided(x, shape=None, strides=None):
    """``as_strided`` on each batch element: the batch keeps its own stride."""
    if type(x) is not Batched:
        return get_array_module(x).lib.stride_tricks.as_strided(x, shape, strides)
    d = x.data  # (a lower level's batch, whose namespace's as_strided is this one)
    return x.like(_xp(x).lib.stride_tricks.as_strided(
        d, d.shape[:1] + tuple(shape), d.strides[:1] + tuple(strides)))


def _elementwise(name):
    """The batching rule of elementwise function ``name``."""
    def fn(*args, **kwargs):
        return _ufunc_call(name, args, kwargs)
    return fn


# ---- levels: every entry point handles its innermost level ------------------------------------

def _levels(args, found):
    for a in args:
        t = type(a)
        if t is Batched:
            found.append(a)
        elif t is list or t is tuple:
            _levels(a, found)
        elif t is dict:
            _levels(a.values(), found)
    return found


def _over(x, level, batch):
    """Array ``x``, plain or batched at lower levels, broadcast over the batch of ``level``
    (``batch`` elements); None and batches of that level as they are."""
    if x is None or type(x) is Batched and x.level >= level:
        return x
    xp = get_array_module(x)
    return Batched(xp.broadcast_to(xp.expand_dims(x, 0), (batch,) + x.shape), level)


def _promote(x, top, batch):
    """A value of a lower level (or none) as a batch of level ``top``: broadcast over it."""
    t = type(x)
    if t is Batched and x.level < top:
        return _over(x, top, batch)
    if t is list or t is tuple:
        return t(_promote(e, top, batch) for e in x)
    return x


def _found(args, kwargs):
    """The Batched values among a call's arguments (in lists, tuples and dicts too)."""
    found = _levels(args, [])
    return _levels(kwargs.values(), found) if kwargs else found


def _at_level(f, found, args, kwargs):
    """``f(*args, **kwargs)`` run at the innermost level among ``found`` (the call's
    Batched arguments, not empty), those of lower levels promoted to it."""
    top = found[0].level
    for a in found:
        if a.level != top:  # mixed levels: the lower ones broadcast over the top one
            top = max(b.level for b in found)
            batch = next(b.data.shape[0] for b in found if b.level == top)
            args = _promote(args, top, batch)
            kwargs = {k: _promote(v, top, batch) for k, v in kwargs.items()}
            break
    prev = state.level
    if prev == top:  # (a rule's own calls, at the level it runs at)
        return f(*args, **kwargs)
    state.level = top
    try:
        return f(*args, **kwargs)
    finally:
        state.level = prev


def _entry(f):
    """``f`` run at the innermost level among its Batched arguments (:func:`_at_level`)."""
    def run(*args, **kwargs):
        found = _found(args, kwargs)
        return _at_level(f, found, args, kwargs) if found else f(*args, **kwargs)
    run.__name__ = run.__qualname__ = f.__name__
    run.__doc__ = f.__doc__
    return run


for _name, _f in list(vars(Batched).items()):
    if callable(_f) and _name not in ("__init__", "like", "batched_namespace", "__repr__",
                                      "__len__", "__bool__", "__array__", "__hash__"):
        setattr(Batched, _name, _entry(_f))
Batched.T = property(_entry(lambda self: _transpose(self)))
