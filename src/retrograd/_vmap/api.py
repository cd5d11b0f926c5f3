"""``vmap``: ``func`` run once on inputs that carry a batch dim hidden from it.

Each mapped input becomes a Tensor over a :class:`~..autograd._batched.Batched` array of
a fresh level: its shape is one sample's, and every op's own forward, vjp and jvp rules
run on the whole batch at once (the batched arrays map each NumPy call past the batch
dim). Results leave the level with their batch moved to ``out_dims``. Nested vmaps
nest levels.
"""

import functools
from contextlib import nullcontext

from .._tensor import Tensor
from ..ops.joining import cat
from ..autograd._batched import new_level
from . import _random
from ._batch_dim import add_batch_dim, remove_batch_dim
from ._pytree import broadcast_prefix, tree_flatten, tree_unflatten

__all__ = ["vmap"]


def _name(func):
    if hasattr(func, "__name__"):
        return func.__name__
    if isinstance(func, functools.partial):
        return f"functools.partial({_name(func.func)}, ...)"
    return repr(func)


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """``func`` mapped over dim ``in_dims`` of its inputs, results stacked on ``out_dims``.

    >>> retrograd.vmap(retrograd.dot)(x, y)  # x, y: [N, D] -> [N]
    """
    _random.check_randomness(randomness)
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. "
                         f"(got {chunk_size})")

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        _check_out_dims(out_dims, func)
        batch, flat_dims, flat_args, spec = _inputs(in_dims, args, func)
        if chunk_size is None or chunk_size >= batch:
            return _run(func, flat_dims, flat_args, spec, kwargs, batch, out_dims,
                        randomness)
        return _chunked(func, flat_dims, flat_args, spec, kwargs, batch, out_dims,
                        randomness, chunk_size)
    return wrapped


def _check_out_dims(out_dims, func):
    if isinstance(out_dims, int):
        return
    for d in tree_flatten(out_dims)[0]:
        if d is not None and not isinstance(d, int):
            raise ValueError(f"vmap({_name(func)}, ..., out_dims={out_dims}): `out_dims` must "
                             f"be an int, None or a python collection of ints representing "
                             f"where in the outputs the vmapped dimension should appear.")


def _inputs(in_dims, args, func):
    """The batch size, each leaf's in_dim (normalized), the leaves and the args' spec."""
    head = f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): "
    if not isinstance(in_dims, (int, tuple)):
        raise ValueError(head + f"expected `in_dims` to be int or a (potentially nested) tuple "
                         f"matching the structure of inputs, got: {type(in_dims)}.")
    if not args:
        raise ValueError(f"vmap({_name(func)})(<inputs>): got no inputs. Maybe you forgot to "
                         f"add inputs, or you are trying to vmap over a function with no "
                         f"inputs. The latter is unsupported.")
    flat_args, spec = tree_flatten(args)
    flat_dims = broadcast_prefix(in_dims, spec)
    if flat_dims is None:
        raise ValueError(head + f"in_dims is not compatible with the structure of `inputs`. "
                         f"in_dims has structure {tree_flatten(in_dims)[1]} but inputs has "
                         f"structure {spec}.")
    for i, (arg, d) in enumerate(zip(flat_args, flat_dims, strict=True)):
        if d is not None and (not isinstance(d, int) or isinstance(d, bool)):
            raise ValueError(head + f"Got in_dim={d} for an input but in_dim must be either "
                             f"an integer dimension or None.")
        if d is not None and not isinstance(arg, Tensor):
            raise ValueError(head + f"Got in_dim={d} for an input but the input is of type "
                             f"{type(arg)}. We cannot vmap over non-Tensor arguments, please "
                             f"use None as the respective in_dim")
        if d is not None:
            n = arg.dim()
            if not -n <= d < n:
                raise ValueError(head + f"Got in_dim={d} for some input, but that input is a "
                                 f"Tensor of dimensionality {n} so expected in_dim to satisfy "
                                 f"-{n} <= in_dim < {n}.")
            flat_dims[i] = d % n
    sizes = [a.shape[d] for a, d in zip(flat_args, flat_dims, strict=True) if d is not None]
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if any(s != sizes[0] for s in sizes):
        raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped "
                         f"dimension, got sizes {sizes} for the mapped dimension")
    return sizes[0], flat_dims, flat_args, spec


def _run(func, flat_dims, flat_args, spec, kwargs, batch, out_dims, randomness, level=None):
    with new_level() if level is None else nullcontext(level) as level:
        with _random.mode(level, batch, randomness):
            ins = [a if d is None else add_batch_dim(a, d, level)
                   for a, d in zip(flat_args, flat_dims, strict=True)]
            out = func(*tree_unflatten(ins, spec), **kwargs)
            return _outputs(out, out_dims, level, batch, func)


def vmap_at(level, func, randomness="error"):
    """``vmap(func)`` (in and out on dim 0) at a level its caller reserved with
    :func:`~..autograd._batched.new_level` (a transform whose batch must nest below the
    vmaps its function runs: jacrev's basis)."""
    def wrapped(*args):
        batch, flat_dims, flat_args, spec = _inputs(0, args, func)
        return _run(func, flat_dims, flat_args, spec, {}, batch, 0, randomness, level)
    return wrapped


def _outputs(out, out_dims, level, batch, func):
    flat, spec = tree_flatten(out)
    if isinstance(out, Tensor):
        dims = ([out_dims] if isinstance(out_dims, int) or out_dims is None else
                list(out_dims) if isinstance(out_dims, tuple) and len(out_dims) == 1 else None)
    else:
        dims = broadcast_prefix(out_dims, spec)
    if dims is None:
        raise ValueError(f"vmap({_name(func)}, ..., out_dims={out_dims})(<inputs>): out_dims "
                         f"is not compatible with the structure of `outputs`. out_dims has "
                         f"structure {tree_flatten(out_dims)[1]} but outputs has structure "
                         f"{spec}.")
    name = _name(func)
    res = []
    for o, d in zip(flat, dims, strict=True):
        if d is None:
            if isinstance(o, Tensor) and _level_of(o) == level:
                raise ValueError(f"vmap({name}, ...): `{name}` can not return a "
                                 f"BatchedTensor when out_dim is None")
            res.append(o)
            continue
        if not isinstance(o, Tensor):
            raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type "
                             f"{type(o)}. Did you mean to set out_dims= to None for output?")
        n = o.dim() + 1
        if not -n <= d < n:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, "
                             f"{n - 1}], but got {d})")
        res.append(remove_batch_dim(o, level, batch, d % n))
    return tree_unflatten(res, spec)


def _level_of(t):
    return getattr(t._data, "level", None)


def _chunked(func, flat_dims, flat_args, spec, kwargs, batch, out_dims, randomness, size):
    """``chunk_size``: vmap over consecutive chunks of the batch, outputs concatenated."""
    starts = range(0, batch, size)
    parts = []
    for s in starts:
        n = min(size, batch - s)
        args = [a if d is None else a.narrow(d, s, n)
                for a, d in zip(flat_args, flat_dims, strict=True)]
        parts.append(_run(func, flat_dims, args, spec, kwargs, n, out_dims, randomness))
    flat0, out_spec = tree_flatten(parts[0])
    if isinstance(parts[0], Tensor):
        dims = [out_dims if isinstance(out_dims, int) else tree_flatten(out_dims)[0][0]]
    else:
        dims = broadcast_prefix(out_dims, out_spec)
    columns = zip(*(tree_flatten(p)[0] for p in parts), strict=True)
    joined = [col[0] if d is None else cat(list(col), d)
              for col, d in zip(columns, dims, strict=True)]
    return tree_unflatten(joined, out_spec)
