"""The one place gradients are reduced back to an input's shape."""

import numpy

_HALF = numpy.dtype("float16")


def sum_to(xp, g, shape):
    """Sum ``g`` over the axes broadcasting added or stretched, giving ``shape``.

    Works on arrays (xp = numpy) and on Tensors (xp = the differentiable facade).
    """
    lead = g.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, n in enumerate(shape) if n == 1 and g.shape[lead + i] != 1)
    if axes:
        if g.dtype == _HALF:  # an array: add in float32 and round once, as PyTorch's sum
            g = xp.astype(xp.sum(g, axis=axes, keepdims=True, dtype="float32"), _HALF)
        else:  # float16 Tensors of the facade sum that way themselves
            g = xp.sum(g, axis=axes, keepdims=True)
    if lead or tuple(g.shape) != tuple(shape):
        g = xp.reshape(g, shape)
    return g
