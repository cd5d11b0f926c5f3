"""The ``xp`` of rules run on batched arrays (:class:`BatchedNumpy`) and their backend
functions (:class:`BatchedFunctions`): the array module of the batch's data, whose
functions run the batching rule of their name (``_batched._FUNCS``) where an operand is
batched, and the module's own otherwise."""

import types

from ..backend import get_array_module, host_array_module, special_functions
from ..backend.functions import ArrayFunctions, functions
from ._batched import (_FUNCS, _SUBMODULES, Batched, _as_strided, _at_level, _elementwise,
                       _entry, _found, _levels, _norm, _shape_tuple, _ufunc, _values, levels_of,
                       register_namespace)

__all__ = ["BatchedNumpy", "BatchedFunctions", "covering_namespace"]


def _entry_or(name, plain, rule):
    """Function ``name`` of the batched namespace: batching ``rule`` where an operand is
    batched (of any level), ``plain`` (the inner module's) otherwise. Without a rule, a
    batch ``plain`` refuses (a device module's TypeError) is NumPy's protocol's refusal:
    no batching rule."""
    def fn(*args, **kwargs):
        found = _found(args, kwargs)
        if not found:
            return plain(*args, **kwargs)
        if rule is not None:
            return _at_level(rule, found, args, kwargs)
        try:
            return plain(*args, **kwargs)
        except TypeError as e:
            raise NotImplementedError(f"batched: no batching rule for numpy.{name}") from e
    fn.__name__ = fn.__qualname__ = name.rpartition(".")[2]
    return fn


class _Ufunc:
    """A ufunc of the batched namespace, with its methods: the batching rule where an
    operand is batched, the inner module's ufunc otherwise."""

    def __init__(self, name, plain):
        self.__name__, self._plain = name, plain
        self.nin, self.nout = plain.nin, plain.nout

    def _run(self, method, args, kwargs):
        found = _found(args, kwargs)
        if found:
            return _at_level(_ufunc, found, (self.__name__, method, args, kwargs), {})
        return (self._plain if method == "__call__" else getattr(self._plain, method))(
            *args, **kwargs)

    def __call__(self, *args, **kwargs):
        return self._run("__call__", args, kwargs)

    def reduce(self, *args, **kwargs):
        return self._run("reduce", args, kwargs)

    def accumulate(self, *args, **kwargs):
        return self._run("accumulate", args, kwargs)

    def outer(self, *args, **kwargs):
        return self._run("outer", args, kwargs)

    def at(self, *args, **kwargs):
        return self._run("at", args, kwargs)

    def __repr__(self):
        return f"<batched ufunc '{self.__name__}'>"


def _member(name, plain):
    """The batched namespace's ``name``, given the inner module's member ``plain``."""
    if hasattr(plain, "nin") and hasattr(plain, "nout"):
        return _Ufunc(name, plain)
    if name in _SUBMODULES:
        return _Submodule(name, plain)
    if callable(plain) and not isinstance(plain, type):
        return _entry_or(name, plain, _FUNCS.get(name))
    return plain


class _Submodule:
    """``xp.linalg``, ``xp.fft``, ``xp.special`` (``scipy.special``) of the batched
    namespace: the inner module's, their functions' rules keyed ``"linalg.<name>"``;
    special functions are elementwise."""

    def __init__(self, name, inner):
        self._name, self._inner = name, inner

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        value = getattr(self._inner, name)
        if callable(value) and not isinstance(value, type):
            full = f"{self._name}.{name}"
            value = _entry_or(full, value, _elementwise(full) if self._name == "special"
                              else _FUNCS.get(full))
        setattr(self, name, value)
        return value


class BatchedNumpy:
    """The ``xp`` of batched rules: the array module ``inner`` (that of the batch's data:
    NumPy, the device's, or a lower level's namespace), whose functions run their batching
    rule where an operand is batched, with batched buffers from
    ``zeros``/``ones``/``empty``/``full``/``*_like`` (of level ``level``, made by
    ``inner``, so that they hold lower levels)."""

    batched = True  # rules that branch on NumPy vs Tensors take the array branch
    lib = types.SimpleNamespace(stride_tricks=types.SimpleNamespace(as_strided=_as_strided))

    def __new__(cls, batch, level=0, inner=None):
        inner = host_array_module() if inner is None else inner
        key = (batch, level, inner)
        xp = _NAMESPACES.get(key)
        if xp is None:
            xp = _NAMESPACES[key] = super().__new__(cls)
            xp.batch, xp.level, xp.inner = batch, level, inner
            xp.functions = BatchedFunctions(xp)  # backend.functions' for this namespace
        return xp

    def __getattr__(self, name):
        if name.startswith("__"):  # (probes of copy, pickle, ...)
            raise AttributeError(name)
        if name == "special":  # (scipy.special: backend.special_functions asks here)
            sp = special_functions(self.inner)
            value = None if sp is None else _Submodule(name, sp)
        else:
            value = _member(name, getattr(self.inner, name))
        setattr(self, name, value)  # looked up once per namespace
        return value

    # The constructors pass batched arrays through.
    def array(self, a, dtype=None, *, copy=True, **kwargs):
        if type(a) is Batched:
            return a.like(self.inner.array(a.data, dtype, copy=copy))
        return self.inner.array(a, dtype, copy=copy, **kwargs)

    def asarray(self, a, dtype=None, **kwargs):
        if type(a) is Batched:
            return a if dtype is None else a.like(a.data.astype(dtype, copy=False))
        return self.inner.asarray(a, dtype, **kwargs)

    def ascontiguousarray(self, a, dtype=None, **kwargs):
        if type(a) is Batched:
            return a.like(self.inner.ascontiguousarray(a.data, dtype))
        return self.inner.ascontiguousarray(a, dtype, **kwargs)

    def zeros(self, shape, dtype=float, order="C", **kwargs):
        shape = _shape_tuple(shape)
        return Batched(self.inner.zeros((self.batch,) + shape, dtype), self.level)

    def ones(self, shape, dtype=float, order="C", **kwargs):
        shape = _shape_tuple(shape)
        return Batched(self.inner.ones((self.batch,) + shape, dtype), self.level)

    def empty(self, shape, dtype=float, order="C", **kwargs):
        shape = _shape_tuple(shape)
        return Batched(self.inner.empty((self.batch,) + shape, dtype), self.level)

    def full(self, shape, fill_value, dtype=None, order="C", **kwargs):
        shape = _shape_tuple(shape)
        return Batched(self.inner.full((self.batch,) + shape, fill_value, dtype), self.level)

    def _like(self, name, a, dtype, shape, *args):
        if type(a) is Batched and a.level == self.level:
            return _entry(_FUNCS[name])(a, *args, dtype=dtype, shape=shape)
        if type(a) is not Batched:
            a = self.inner.asarray(a)
        shape = a.shape if shape is None else _shape_tuple(shape)
        if name == "full_like":
            return self.full(shape, args[0], a.dtype if dtype is None else dtype)
        return getattr(self, name[:-5])(shape, a.dtype if dtype is None else dtype)

    def zeros_like(self, a, dtype=None, order="K", subok=True, shape=None):
        return self._like("zeros_like", a, dtype, shape)

    def empty_like(self, a, dtype=None, order="K", subok=True, shape=None):
        return self._like("empty_like", a, dtype, shape)

    def full_like(self, a, fill_value, dtype=None, order="K", subok=True, shape=None):
        return self._like("full_like", a, dtype, shape, fill_value)


_NAMESPACES = {}  # (batch, level, inner) -> its BatchedNumpy


def covering_namespace(*arrays):
    """The ``xp`` over every batch level among ``arrays`` (the innermost outermost), on
    their data's module: the buffers a rule makes there hold what it writes of any of
    them, where no one array's namespace has all those levels."""
    sizes, xp = {}, None
    for a in arrays:
        while type(a) is Batched:
            sizes[a.level] = a.data.shape[0]
            a = a.data
        xp = xp or get_array_module(a)
    for level in sorted(sizes):
        xp = BatchedNumpy(sizes[level], level, xp)
    return xp


class BatchedFunctions(ArrayFunctions):
    """The backend functions on batched arrays: those of the data's module, the batch dim
    mapped past, and a rule's array kernel run once per batch element."""

    def any_true(self, mask):
        """Whether any element of any batch element holds (value checks: an index out of
        range in one element fails the call, as in PyTorch)."""
        return bool(_values(mask).any())

    def all_true(self, mask):
        """Whether every element of every batch element holds."""
        return bool(_values(mask).all())

    def checked_values(self, a):
        """Every batch member's value (each is checked, as each call would check it)."""
        return _values(a).reshape(-1).tolist()

    def address(self, a):
        """Where one batch element's data starts: views of a batch keep its batch dim, so
        a view's offset inside its base is that of every element's."""
        return functions(self.xp.inner).address(a.data)

    def storage(self, a):
        """Each element's memory as one run of as many elements, from its first: as
        PyTorch's batching rule reads as_strided's storage (element ``i``'s at ``i`` times
        the batch's stride, in the memory under the whole batch). None where that memory
        is not one dense block."""
        d = _values(a)
        laid = sorted((s // d.itemsize, n) for s, n in zip(d.strides, d.shape, strict=True)
                      if n != 1)
        run = 1
        for s, n in laid:
            if s != run:
                return None
            run *= n
        return _as_strided(a, (a.size,), (a.itemsize,))

    def accumulate(self, name, a, axis):
        """The data's module's running ``name`` along the axis past the batch dim (CuPy's
        ufuncs accumulate for add and multiply only: the backend's scan for the others)."""
        return a.like(functions(self.xp.inner).accumulate(name, a.data, _norm(axis, a.ndim)))

    def outer(self, a, b):
        """Two batches of this level with equal leading dims: the data's module's outer
        products (its compiled kernel) over the batch dim as one more leading dim."""
        if (type(a) is Batched and type(b) is Batched and a.level == b.level == self.xp.level
                and a.data.shape[:-1] == b.data.shape[:-1]):
            return a.like(functions(self.xp.inner).outer(a.data, b.data))
        return super().outer(a, b)

    def expm(self, a):
        """SciPy's takes stacks of matrices: the batch is one more stack dim."""
        return a.like(functions(self.xp.inner).expm(a.data))

    def lu(self, a):
        """As :meth:`expm`: SciPy's LU takes stacks of matrices."""
        return tuple(a.like(x) for x in functions(self.xp.inner).lu(a.data))

    def copy_for_writes(self, a, *writes):
        """As the arrays', batched at every level of ``writes`` too."""
        return self._widened(a, writes) if _lacks(a, writes) else a.copy()

    def index_add(self, a, index, values):
        """As the arrays', into copies of ``a`` batched as the rows added where ``a`` (a
        gradient's zeros) is not."""
        if _lacks(a, (index, values)):
            a = self._widened(a, (index, values))
        self.ufunc_at("add", a, index, values)
        return a

    def _widened(self, a, writes):
        """``a`` broadcast against zeros batched as each write (a select: -0.0 and NaNs
        kept): a fresh array at every level of theirs."""
        for w in _levels(writes, []):
            a = self.xp.where(True, a, get_array_module(w).zeros_like(w, a.dtype, shape=()))
        return a

    def mul_sub_exactly(self, where, r, a, b, c):
        """On the values of every level at once, in the data's module (which reads them
        on the host): the operands first take ``r``'s batches and shape (``where``'s too),
        so that the five hold their elements alike; written into ``r``'s values."""
        a, b, c = (self.xp.where(where, x, r) for x in (a, b, c))
        values = [_values(x) for x in (where, r, a, b, c)]
        functions(get_array_module(values[1])).mul_sub_exactly(*values)
        return r

    def kernel_or_composite(self, kernel, composite, *args):
        lv = self.xp.level
        rows = range(self.xp.batch)
        return Batched(self.xp.inner.stack([
            kernel(*(a.data[i] if type(a) is Batched and a.level == lv else a for a in args))
            for i in rows]), lv)


def _lacks(a, writes):
    """Whether some of ``writes`` (arrays, or sequences of them) are batched at a level
    ``a`` is not."""
    have = levels_of(a)
    return any(not have.issuperset(levels_of(w)) for w in _levels(writes, []))


register_namespace(BatchedNumpy)
