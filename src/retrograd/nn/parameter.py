"""``nn.Parameter`` and ``nn.Buffer``: tensors that a Module registers, as a parameter or a
buffer, when assigned as its attributes; and their uninitialized forms, which lazy modules
hold until their first input gives the shapes."""

import functools

from .. import _creation, _observe
from .._dtype import is_inexact
from .._tensor import Tensor, _init, wrap

__all__ = ["Parameter", "UninitializedParameter", "is_lazy", "Buffer", "UninitializedBuffer",
           "UninitializedTensorMixin"]


class Parameter(Tensor):
    """A Tensor that requires grad and is registered when assigned to a Module.

    >>> p = Parameter(retrograd.zeros(2)); p.requires_grad
    True
    """

    __slots__ = ()

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = _creation.empty(0)
        if requires_grad and not is_inexact(data._data.dtype):
            raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                               "gradients")
        p = object.__new__(cls)
        _init(p, data._data)
        p._vc = data._vc  # shares storage, as PyTorch's Parameter(t) does
        p._requires_grad = bool(requires_grad)
        if _observe.alloc is not None:
            _observe.alloc.retensored(p)
        return p

    def __init__(self, data=None, requires_grad=True):
        pass

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        t = Parameter(_wrap_copy(self), self.requires_grad)
        memo[id(self)] = t
        return t

    def __reduce_ex__(self, proto):
        return (_rebuild_parameter, (self._data, self._requires_grad))


class _BufferMeta(type):
    """``isinstance(t, Buffer)`` holds for the tensors ``Buffer(...)`` made (plain Tensors
    carrying the flag), as in torch."""

    def __instancecheck__(cls, instance):
        if cls is Buffer and isinstance(instance, Tensor):
            return instance.__dict__.get("_is_buffer", False)
        return super().__instancecheck__(instance)


class Buffer(Tensor, metaclass=_BufferMeta):
    """Marks a tensor as a buffer: ``self.running = nn.Buffer(t, persistent=False)`` in a
    Module registers it (in the state_dict when ``persistent``). Returns a detached Tensor
    (not a subclass), as torch does.

    >>> isinstance(Buffer(retrograd.zeros(2)), Buffer)
    True
    """

    __slots__ = ()

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            data = _creation.empty(0)
        t = data.detach().requires_grad_(data.requires_grad)
        t.persistent = persistent
        t._is_buffer = True
        return t


class UninitializedTensorMixin:
    """A tensor whose shape is not known yet: it keeps a dtype, a device and
    ``requires_grad``, and refuses every op but conversions until :meth:`materialize` turns
    it into its ``cls_to_become`` (the same object, so optimizers made before stay valid).

    Where PyTorch refuses through ``__torch_function__``, this refuses Tensor methods by
    name and the operators by defining them; functions called on it see a 0-element
    tensor.
    """

    __slots__ = ()
    # PyTorch's allowed methods (its ``_allowed_methods``); properties are all allowed.
    _allowed = frozenset({"size", "copy_", "is_complex", "is_floating_point", "half",
                          "float", "double", "char", "short", "int", "long", "cuda", "cpu",
                          "to", "get_device", "materialize", "share_memory_"})

    def materialize(self, shape, device=None, dtype=None):
        """Give this tensor uninitialized storage of ``shape`` (on its device, in its dtype
        unless given) and make it its ``cls_to_become``, in place."""
        device = self.device if device is None else device
        dtype = self.dtype if dtype is None else dtype
        self._data = _creation.empty(tuple(shape), device=device, dtype=dtype)._data
        self.__class__ = self.cls_to_become
        if _observe.alloc is not None:
            _observe.alloc.retensored(self)

    @property
    def shape(self):
        raise RuntimeError(
            "Can't access the shape of an uninitialized parameter or buffer. This error "
            "usually happens in `load_state_dict` when trying to load an uninitialized "
            "parameter into an initialized one. Call `forward` to initialize the parameters "
            "before accessing their attributes.")

    def share_memory_(self):
        raise RuntimeError("Can't share memory on an uninitialized parameter or buffer. Call "
                           "`forward` to initialize the parameters before calling "
                           "`module.share_memory()`.")

    def __repr__(self):
        return f"<{type(self).__name__}>"

    def __reduce_ex__(self, proto):
        return (type(self), (self.requires_grad,))

    def __getattribute__(self, name):
        if name in _refused_methods():
            _refuse(type(self), f"<method '{name}' of 'torch._C.TensorBase' objects>")
        return object.__getattribute__(self, name)


def _refuse(cls, func):
    raise ValueError(
        f"Attempted to use an uninitialized parameter in {func}. This error happens when you "
        "are using a `LazyModule` or explicitly manipulating "
        f"`torch.nn.parameter.{cls.__name__}` objects. When using LazyModules Call `forward` "
        "with a dummy batch to initialize the parameters before calling torch functions")


@functools.cache
def _refused_methods():
    """The public Tensor methods an uninitialized tensor refuses (asked on first use: the
    op modules install the methods after this module is imported)."""
    return frozenset(n for n in dir(Tensor) if not n.startswith("_")
                     and n not in UninitializedTensorMixin._allowed
                     and not isinstance(getattr(Tensor, n), property))


def _refusing(name):
    def operator(self, *args):
        _refuse(type(self), f"<slot wrapper '{name}' of 'torch._C.TensorBase' objects>")
    operator.__name__ = name
    return operator


_BINARY = "add sub mul truediv floordiv mod pow matmul and or xor lshift rshift".split()
for _name in ([f"__{p}{op}__" for op in _BINARY for p in ("", "r", "i")]
              + [f"__{op}__" for op in "neg pos abs invert eq ne lt le gt ge getitem setitem "
                 "len iter contains bool float int complex index array format".split()]):
    setattr(UninitializedTensorMixin, _name, _refusing(_name))
UninitializedTensorMixin.__hash__ = Tensor.__hash__  # (hashable, for sets of parameters)
# Tensor's deepcopy is refused too (UninitializedParameter defines its own), as in PyTorch.
UninitializedTensorMixin.__deepcopy__ = _refusing("__deepcopy__")


def is_lazy(param):
    """Whether ``param`` is an UninitializedParameter or UninitializedBuffer.

    >>> is_lazy(UninitializedParameter()), is_lazy(Parameter())
    (True, False)
    """
    return isinstance(param, UninitializedTensorMixin)


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A Parameter of unknown shape; ``materialize`` makes it a Parameter.

    >>> p = UninitializedParameter(); p.materialize((2, 3)); type(p).__name__, p.shape
    ('Parameter', torch.Size([2, 3]))
    """

    __slots__ = ()
    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        return Parameter.__new__(cls, _creation.empty(0, device=device, dtype=dtype),
                                 requires_grad)

    def __init__(self, requires_grad=True, device=None, dtype=None):
        pass

    def __deepcopy__(self, memo):
        if id(self) not in memo:
            memo[id(self)] = type(self)(self.requires_grad, self.device, self.dtype)
        return memo[id(self)]


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """A buffer of unknown shape; ``materialize`` makes it a Tensor.

    >>> b = UninitializedBuffer(); b.materialize((2,)); type(b).__name__
    'Tensor'
    """

    __slots__ = ()
    cls_to_become = Tensor

    def __new__(cls, requires_grad=False, device=None, dtype=None, persistent=True):
        t = object.__new__(cls)
        _init(t, _creation.empty(0, device=device, dtype=dtype)._data)
        t._requires_grad = bool(requires_grad)
        t.persistent = persistent
        t._is_buffer = True
        return t

    def __init__(self, requires_grad=False, device=None, dtype=None, persistent=True):
        pass


def _wrap_copy(t):
    return wrap(t._data.copy())


def _rebuild_parameter(data, requires_grad):
    return Parameter(wrap(data), requires_grad)
