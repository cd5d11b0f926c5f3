"""``nn.Parameter`` and ``nn.Buffer``: tensors that a Module registers, as a parameter or a
buffer, when assigned as its attributes."""

from .. import _creation, _observe
from .._dtype import is_inexact
from .._tensor import Tensor, _init, wrap


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


def _wrap_copy(t):
    return wrap(t._data.copy())


def _rebuild_parameter(data, requires_grad):
    return Parameter(wrap(data), requires_grad)
