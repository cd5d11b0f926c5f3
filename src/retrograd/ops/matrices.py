"""Building matrices: tril_indices/triu_indices, block_diag (a primitive with its own
BlockDiagBackward0, as in PyTorch), diagflat and vander."""

from .._dtype import dtype_arg
from .. import _dtype
from .._layout import check_layout
from .._tensor import Tensor, wrap
from ..backend import check_device, cpu, get_array_module, on_device
from ._registry import register
from .joining import _list_node, _record_list, cat

__all__ = ["tril_indices", "triu_indices", "block_diag", "diagflat", "vander"]


def _tri_indices(row, col, offset, dtype, upper, device):
    if dtype not in (_dtype.int64, _dtype.int32):
        raise NotImplementedError(f"\"tri{'u' if upper else 'l'}_indices\" not implemented "
                                  f"for '{_dtype.SCALAR_NAMES[dtype.name]}'")
    dt = dtype.np

    def make(xp):
        i, j = (xp.triu_indices if upper else xp.tril_indices)(row, offset, col)
        return xp.stack([i, j]).astype(dt)

    return wrap(on_device(check_device(device), make))


@register(method=False)
def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """The (2, N) coordinates of the lower triangle of a row x col matrix, row by row."""
    dtype = dtype_arg(dtype, "tril_indices")
    check_layout(layout, "tril_indices")
    return _tri_indices(row, col, offset, dtype or _dtype.int64, False, device)


@register(method=False)
def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """The (2, N) coordinates of the upper triangle of a row x col matrix, row by row."""
    dtype = dtype_arg(dtype, "triu_indices")
    check_layout(layout, "triu_indices")
    return _tri_indices(row, col, offset, dtype or _dtype.int64, True, device)


def _block_diag_vjp(xp, grads, shapes):
    g = grads[0]
    out, r, c = [], 0, 0
    for s in shapes:
        h, w = (1, 1) if len(s) == 0 else (1, s[0]) if len(s) == 1 else s
        block = g[r:r + h, c:c + w]
        out.append(xp.reshape(block, s))
        r, c = r + h, c + w
    return out


def _block_diag_jvp(xp, tangents, outs):
    return _block_diag_arrays(xp, tangents, outs[0].dtype)


def _block_diag_arrays(xp, arrays, dtype):
    mats = [a.reshape(1, -1) if a.ndim == 1 else a.reshape(1, 1) if a.ndim == 0 else a
            for a in arrays]
    out = xp.zeros((sum(m.shape[0] for m in mats), sum(m.shape[1] for m in mats)), dtype)
    r = c = 0
    for m in mats:
        out[r:r + m.shape[0], c:c + m.shape[1]] = m
        r, c = r + m.shape[0], c + m.shape[1]
    return out


_BlockDiagBackward0 = _list_node("BlockDiagBackward0", _block_diag_vjp, _block_diag_jvp)


@register(method=False)
def block_diag(*tensors):
    """The tensors (0-d, 1-d as a row, 2-d) along the diagonal of a zero matrix."""
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got "
                            f"{type(t).__name__}")
        if t._data.ndim > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer "
                               f"dimensions. Input {i} has {t._data.ndim} dimensions")
    if not tensors:
        dt = _dtype.get_default_dtype().np
        return wrap(on_device(cpu, lambda xp: xp.zeros((1, 0), dt)))  # on the CPU, as PyTorch's
    dtype = _dtype.result_type(*tensors).np  # PyTorch's promotion, not NumPy's
    arrays = [t._data for t in tensors]
    out = _block_diag_arrays(get_array_module(arrays[0]), arrays, dtype)
    return _record_list(_BlockDiagBackward0, list(tensors), out, ())


@register
def diagflat(input, offset=0):
    """A matrix with the flattened input on diagonal ``offset``."""
    return input.reshape(-1).diag_embed(offset)


@register(method=False)
def vander(x, N=None, increasing=False):
    """The Vandermonde matrix of a 1-D ``x``: columns ``x ** (N-1) ... x ** 0`` (or
    increasing powers)."""
    if x._data.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x._data.shape[0] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    if x._data.dtype.kind in "biu" and x._data.dtype != _dtype.int64.np:
        x = x.to(_dtype.int64)
    cols = [x.new_ones((x._data.shape[0], min(n, 1)))]
    if n > 1:
        cols.append(x.unsqueeze(1).expand(x._data.shape[0], n - 1))
    out = cat(cols, 1).cumprod(1)
    return out if increasing else out.flip(1)
