"""Tensor predicates: is_nonzero, is_same_size, is_signed, is_inference and get_device."""



from .._dtype import kind_of
from ._registry import register

__all__ = ["is_nonzero", "is_same_size", "is_signed", "get_device", "is_inference"]


@register
def is_nonzero(input):
    """The truth of a one-element tensor."""
    n = input._data.size
    if n == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if n > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(input._data.reshape(-1)[0])


@register
def is_same_size(input, other):
    return input._data.shape == other._data.shape


@register
def is_signed(input):
    return kind_of(input._data.dtype) in "ifc"


@register
def get_device(input):
    """-1 for CPU tensors, the GPU's index otherwise."""
    dev = input.device
    return -1 if dev.type == "cpu" else dev.index


@register(method=False)
def is_inference(input):
    """Whether ``input`` was made under ``inference_mode`` (``Tensor.is_inference``)."""
    return input.is_inference()
