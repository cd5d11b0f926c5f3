"""``nn.Parameter``: a leaf Tensor that a Module registers as a parameter."""

from .. import _tensor
from .._tensor import Tensor, _init


class Parameter(Tensor):
    """A Tensor that requires grad and is registered when assigned to a Module.

    >>> p = Parameter(retrograd.zeros(2)); p.requires_grad
    True
    """

    __slots__ = ()

    def __new__(cls, data=None, requires_grad=True):
        from .. import _creation
        if data is None:
            data = _creation.empty(0)
        p = object.__new__(cls)
        _init(p, data._data)
        p._vc = data._vc  # shares storage, as PyTorch's Parameter(t) does
        p._requires_grad = bool(requires_grad)
        if _tensor._tracker is not None:
            _tensor._tracker.tensor_roles(p)
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


def _wrap_copy(t):
    from .._tensor import wrap
    return wrap(t._data.copy())


def _rebuild_parameter(data, requires_grad):
    from .._tensor import wrap
    return Parameter(wrap(data), requires_grad)
