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
        up = OPMATH.get(g.dtype)  # float16/bfloat16 arrays sum in float32, as PyTorch's
        g = (xp.sum(g, axis=axes, keepdims=True) if up is None else
             xp.astype(xp.sum(g, axis=axes, keepdims=True, dtype=up), g.dtype))
    if lead or tuple(g.shape) != tuple(shape):
        g = xp.reshape(g, shape)
    return g
