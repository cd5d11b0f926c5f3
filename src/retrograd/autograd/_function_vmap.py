"""``autograd.Function`` under vmap, as PyTorch's: a Function needs ``setup_context``, and
either ``generate_vmap_rule = True`` (its forward and backward then run on the batched
tensors, op by op, which batches them) or a ``vmap`` staticmethod, which gets the batch
as a leading dim (``in_dims`` 0, or None for an unbatched argument) and returns
``(outputs, out_dims)``."""

import types

from .._tensor import Tensor, wrap
from ..backend import get_array_module
from ._batched import RANDOMNESS, Batched

__all__ = ["batch_level", "dispatch", "NO_VMAP_STATICMETHOD"]

_DOCS = "For more details, please see https://pytorch.org/docs/main/notes/extending.func.html"
NO_VMAP_STATICMETHOD = ("To use autograd.Function with vmap, you must either override the vmap "
                        "staticmethod or set generate_vmap_rule=True.")


def batch_level(args):
    """The innermost vmap level among the tensors in ``args``, or None."""
    levels = [a._data.level for a in args
              if isinstance(a, Tensor) and type(a._data) is Batched]
    return max(levels) if levels else None


def dispatch(cls, base, args, level, record):
    """The outputs of ``cls.vmap`` on the batch of ``level``, or NotImplemented when the
    forward should run on the batched tensors (``generate_vmap_rule``, or a gradient to
    record); raises PyTorch's errors for a Function that cannot run under vmap (``base``:
    ``autograd.Function``, whose methods a subclass may not have overridden)."""
    if cls.setup_context is base.setup_context:
        raise RuntimeError("In order to use an autograd.Function with functorch transforms "
                           "(vmap, grad, jvp, jacrev, ...), it must override the setup_context "
                           "staticmethod. " + _DOCS)
    if cls.vmap is base.vmap and not cls.generate_vmap_rule:
        raise RuntimeError(f"You tried to vmap over {cls.__name__}, but it does not have vmap "
                           f"support. Please override and implement the vmap staticmethod or "
                           f"set generate_vmap_rule=True. " + _DOCS)
    if cls.generate_vmap_rule or record:
        return NotImplemented
    return _run_rule(cls, args, level)


def _run_rule(cls, args, level):
    batch = next(a._data.data.shape[0] for a in args
                 if isinstance(a, Tensor) and type(a._data) is Batched and a._data.level == level)
    mapped = [isinstance(a, Tensor) and type(a._data) is Batched and a._data.level == level
              for a in args]
    physical = [wrap(a._data.data) if m else a for a, m in zip(args, mapped, strict=True)]
    in_dims = tuple(0 if m else None for m in mapped)
    info = types.SimpleNamespace(batch_size=batch, randomness=RANDOMNESS.get(level, "error"))
    result = cls.vmap(info, in_dims, *physical)
    if not isinstance(result, tuple) or len(result) != 2:
        raise RuntimeError("Expected the vmap staticmethod to have two returns, an output and "
                           "out_dims with pytree structure compatible with the output. "
                           + (f"Got a {type(result)} instead" if not isinstance(result, tuple)
                              else f"Got {len(result)} returns instead"))
    out, out_dims = result
    single = not isinstance(out, tuple)
    outs = (out,) if single else out
    dims = out_dims if isinstance(out_dims, tuple) else (out_dims,) * len(outs)
    batched = tuple(o if d is None else
                    wrap(Batched(get_array_module(o._data).moveaxis(o._data, d, 0), level))
                    for o, d in zip(outs, dims, strict=True))
    return batched[0] if single else batched
