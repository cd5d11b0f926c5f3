"""The one place gradients are reduced back to an input's shape."""

from .._dtype import OPMATH


def sum_to(xp, g, shape):
    """Sum ``g`` over the axes broadcasting added or stretched, giving ``shape``.

    Works on arrays (xp = numpy) and on Tensors (xp = the differentiable facade).
    """
    lead = g.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, n in enumerate(shape) if n == 1 and g.shape[lead + i] != 1)
    if axes:
        g = sum_acc(xp, g, axis=axes, keepdims=True)
    if lead or tuple(g.shape) != tuple(shape):
        g = xp.reshape(g, shape)
    return g


def sum_acc(xp, g, axis=None, keepdims=False):
    """``xp.sum`` as PyTorch's sum: float16 and bfloat16 arrays accumulate in float32 and
    round once (NumPy's half and ml_dtypes' bfloat16 sums stall: 2048, 256)."""
    up = OPMATH.get(g.dtype)
    if up is None:
        return xp.sum(g, axis=axis, keepdims=keepdims)
    return xp.astype(xp.sum(g, axis=axis, keepdims=keepdims, dtype=up), g.dtype)
