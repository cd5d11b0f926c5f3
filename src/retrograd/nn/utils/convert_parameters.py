"""``parameters_to_vector`` / ``vector_to_parameters``: a model's parameters as one flat
vector (for second-order methods, evolution strategies, flat optimizers) and back."""

from ..._tensor import Tensor
from ...ops.joining import cat

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def parameters_to_vector(parameters):
    """One differentiable ``cat`` of the flattened parameters (a ``CatBackward0`` node).

    >>> parameters_to_vector(model.parameters()).shape
    """
    params = list(parameters)
    _check_same_device(params)
    return cat([p.view(-1) for p in params])


def vector_to_parameters(vec, parameters):
    """Point each parameter's data at its slice of ``vec`` (shared memory, as in torch)."""
    if not isinstance(vec, Tensor):
        t = type(vec)
        name = t.__qualname__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"
        raise TypeError(f"expected torch.Tensor, but got: {name}")
    params = list(parameters)
    _check_same_device(params)
    pointer = 0
    for p in params:
        n = p.numel()
        p.data = vec[pointer:pointer + n].view_as(p).data
        pointer += n


def _check_same_device(params):
    if len({str(p.device) for p in params}) > 1:
        raise TypeError("Found two parameters on different devices, this is currently not "
                        "supported.")
