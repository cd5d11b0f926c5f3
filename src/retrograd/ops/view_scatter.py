"""The scatter forms of views: ``slice_scatter``, ``select_scatter`` and
``diagonal_scatter`` return a copy of ``input`` with ``src`` written where the view
(``input[..., start:end:step]``, ``input.select(dim, index)``, ``input.diagonal(...)``)
reads: writing through a view, out of place (functorch's and torch.compile's form of
it). Each is linear in (input, src): the input's gradient is the output's with the
view's part zeroed (the op itself, writing zeros there), src's is that part.
"""

import operator

from .._tensor import Tensor, _wrap_dim
from ._registry import apply, defop, register
from .indexing import select_at
from .shape import _diagonal_view, call

__all__ = ["slice_scatter", "select_scatter", "diagonal_scatter"]


def _at(a, index):
    """``a``'s part at basic index ``index`` (a view)."""
    return a[index]


def _index_forward(xp, self, src, index):
    out = self.copy()
    out[index] = src
    return out


def _index_op(name):
    def self_grad(xp, grad, index):
        return call(xp, op, grad, xp.zeros_like(_at(grad, index)), attrs=(index,))
    op = defop(name, _index_forward, inputs=("self", "src"),
               vjp={"self": self_grad, "src": lambda grad, index: _at(grad, index)},
               jvp="linear")
    return op


_slice_scatter = _index_op("slice_scatter")
_select_scatter = _index_op("select_scatter")


def _diagonal_forward(xp, self, src, offset, dim1, dim2):
    out = self.copy()
    _diagonal_view(xp, out, offset, dim1, dim2)[...] = src
    return out


def _diagonal_self_grad(xp, grad, offset, dim1, dim2):
    zeros = xp.zeros_like(xp.diagonal(grad, offset, dim1, dim2))
    return call(xp, _diagonal_scatter, grad, zeros, attrs=(offset, dim1, dim2))


_diagonal_scatter = defop(
    "diagonal_scatter", _diagonal_forward, inputs=("self", "src"),
    vjp={"self": _diagonal_self_grad,
         "src": lambda xp, grad, offset, dim1, dim2: xp.diagonal(grad, offset, dim1, dim2)},
    jvp="linear")


def _check_src(input, src, view_shape, fn):
    if not isinstance(src, Tensor):
        raise TypeError(f"{fn}(): argument 'src' (position 2) must be Tensor, not "
                        f"{type(src).__name__}")
    if tuple(src._data.shape) != tuple(view_shape):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size "
                           f"= {list(src._data.shape)}, slice size = {list(view_shape)}")


@register
def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    """A copy of ``input`` with ``src`` in ``input[..., start:end:step]`` (along ``dim``)."""
    a = input._data
    d = _wrap_dim(dim, a.ndim)
    step = operator.index(step)
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    index = (slice(None),) * d + (slice(start, end, step),)
    _check_src(input, src, a[index].shape, "slice_scatter")
    return apply(_slice_scatter, (input, src), (index,))


@register
def select_scatter(input, src, dim, index):
    """A copy of ``input`` with ``src`` in ``input.select(dim, index)``."""
    at = select_at(input, dim, index)
    _check_src(input, src, input._data[at].shape, "select_scatter")
    return apply(_select_scatter, (input, src), (at,))


@register
def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    """A copy of ``input`` with ``src`` on the diagonal ``input.diagonal(offset, dim1,
    dim2)`` reads (its last dim along the diagonal)."""
    a = input._data
    n = a.ndim
    d1, d2 = _wrap_dim(dim1, n), _wrap_dim(dim2, n)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    offset = operator.index(offset)
    rows, cols = a.shape[d1], a.shape[d2]
    length = max(min(rows, cols - offset) if offset >= 0 else min(rows + offset, cols), 0)
    view_shape = [n for i, n in enumerate(a.shape) if i not in (d1, d2)] + [length]
    _check_src(input, src, view_shape, "diagonal_scatter")
    attrs = (offset, d1, d2)
    return apply(_diagonal_scatter, (input, src), attrs)
