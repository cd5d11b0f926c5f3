"""PyTorch's printed form of tensors."""

import numpy


def tensor_repr(t):
    body = numpy.array2string(t._data, separator=", ", prefix="tensor(")
    extra = []
    if t._data.dtype.name not in ("float32", "int64", "bool"):
        extra.append(f"dtype={t.dtype}")
    if t._grad_fn is not None:
        extra.append(f"grad_fn=<{t._grad_fn.name()}>")
    elif t._requires_grad:
        extra.append("requires_grad=True")
    return "tensor(" + body + "".join(", " + e for e in extra) + ")"
