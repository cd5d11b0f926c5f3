"""The op database: one ``OpInfo`` per op, with sample inputs and tolerances.

``tests/test_ops.py`` generates, for every entry: forward values and result
dtype against PyTorch, gradients against PyTorch, float64 finite-difference
gradient checks (first and second order). Entries live beside their op
family in ``_db_<module>.py`` files, each defining ``OPS``; adding an op is one
entry there.
"""

import importlib
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy

import retrograd

__all__ = ["OpInfo", "SampleInput", "make_tensor", "op_db", "rng"]

_MODULES = ("pointwise", "binary", "reduction", "linalg", "shape", "indexing", "comparison")


@dataclass
class SampleInput:
    """One call: ``op(input, *args, **kwargs)``; ``input`` may be a list (cat, stack)."""

    input: Any
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    name: str = ""

    def __repr__(self):
        def desc(x):
            if isinstance(x, retrograd.Tensor):
                return f"T{list(x.shape)}:{x.dtype.name}"
            if isinstance(x, (list, tuple)):
                return "[" + ", ".join(desc(e) for e in x) + "]"
            return repr(x)
        return (f"{self.name + ': ' if self.name else ''}{desc(self.input)}, "
                f"{', '.join(desc(a) for a in self.args)} {self.kwargs or ''}")


@dataclass
class OpInfo:
    """How to call, sample and check one op.

    name:           public name (``retrograd.<name>`` / ``torch.<name>``) and test id.
    sample_inputs:  ``f(dtype, requires_grad) -> iterable of SampleInput``.
    op, torch_op:   callables ``(input, *args, **kwargs)``; default the namespace function,
                    or the Tensor method of that name when ``method=True``.
    dtypes:         dtypes whose forward values/dtypes are compared with PyTorch.
    supports_grad:  differentiable (gradients checked in float64 and against PyTorch).
    supports_gradgrad: second-order check.
    grad_atol/grad_rtol: tolerances of the finite-difference checks.
    atol/rtol:      tolerances of the comparison with PyTorch (float32 default).
    nondeterministic_grad: gradient differs from PyTorch only at ties (e.g. max).
    """

    name: str
    sample_inputs: Callable
    op: Callable = None
    torch_op: Callable = None
    method: bool = False
    dtypes: tuple = ("float32", "float64")
    supports_grad: bool = True
    supports_gradgrad: bool = True
    grad_atol: float = 1e-5
    grad_rtol: float = 1e-3
    atol: float = 1e-5
    rtol: float = 1.3e-6
    compare_grad_with_torch: bool = True
    skip_torch: str = ""

    def __post_init__(self):
        if self.op is None:
            self.op = (_method(self.name) if self.method
                       else getattr(retrograd, self.name))
        if self.torch_op is None:
            self.torch_op = _method(self.name) if self.method else _torch_fn(self.name)


def _method(name):
    return lambda input, *args, **kwargs: getattr(input, name)(*args, **kwargs)


def _torch_fn(name):
    def call(*args, **kwargs):
        import torch
        return getattr(torch, name)(*args, **kwargs)
    return call


rng = numpy.random.default_rng(0)


def make_tensor(*shape, dtype="float32", low=-2.0, high=2.0, requires_grad=False,
                exclude_zero=False, seed=None):
    """A random retrograd tensor: uniform in [low, high) (integers for int dtypes)."""
    g = numpy.random.default_rng(seed) if seed is not None else rng
    np_dtype = numpy.dtype(dtype)
    if np_dtype.kind == "b":
        arr = g.random(shape) < 0.5
    elif np_dtype.kind in "iu":
        arr = g.integers(max(int(low), 0 if np_dtype.kind == "u" else int(low)),
                         max(int(high), 1) + 1, shape).astype(np_dtype)
    else:
        arr = g.uniform(low, high, shape).astype(np_dtype)
        if exclude_zero:
            arr[numpy.abs(arr) < 0.1] = 0.5
    t = retrograd.from_numpy(numpy.ascontiguousarray(arr))
    if requires_grad:
        t.requires_grad_(True)
    return t


def _load():
    ops = []
    for m in _MODULES:
        try:
            mod = importlib.import_module(f"retrograd.testing._db_{m}")
        except ModuleNotFoundError as e:
            if e.name != f"retrograd.testing._db_{m}":
                raise
            continue
        ops.extend(mod.OPS)
    return ops


op_db = _load()
