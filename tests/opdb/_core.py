"""The op database's vocabulary: ``OpInfo``, ``SampleInput``, ``ErrorInput`` and the
seeded sample makers the entry modules build with (see the package docstring)."""

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy

import retrograd

__all__ = ["OpInfo", "SampleInput", "ErrorInput", "make_tensor", "maker", "torch_functional",
           "rng", "reseed"]


@dataclass
class SampleInput:
    """One call: ``op(input, *args, **kwargs)``; ``input`` may be a list (cat, stack).

    nondifferentiable: the point is a kink or tie (maximum at equal values, abs at 0),
    where finite differences are meaningless: gradients are compared with PyTorch only.
    """

    input: Any
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    name: str = ""
    nondifferentiable: bool = False

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
class ErrorInput:
    """A call that must raise: the same exception type and message as PyTorch's."""

    sample: SampleInput
    error_type: type = RuntimeError
    name: str = ""


@dataclass
class OpInfo:
    """How to call, sample and check one op.

    name:           public name (``retrograd.<name>`` / ``torch.<name>``) and test id.
    variant:        tells apart entries of one name (``div`` with rounding_mode: "floor").
    sample_inputs:  ``f(dtype, requires_grad) -> iterable of SampleInput``.
    op, torch_op:   callables ``(input, *args, **kwargs)``; default the namespace function,
                    or the Tensor method of that name when ``method=True``.
    dtypes:         dtypes whose forward values/dtypes are compared with PyTorch.
    supports_grad:  differentiable (gradients checked in float64 and against PyTorch).
    supports_gradgrad: second-order check.
    grad_atol/grad_rtol: tolerances of the finite-difference checks.
    atol/rtol:      tolerances of the comparison with PyTorch for float32.
    tolerances:     ``{dtype: (atol, rtol)}`` overriding :meth:`tols` per dtype.
    compare_grad_with_torch: gradients and grad_fn names are compared with PyTorch.
    skip_torch:     a reason to skip every comparison with PyTorch.
    error_inputs:   ``f() -> iterable of ErrorInput``.
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
    tolerances: dict = field(default_factory=dict)
    error_inputs: Callable = None
    variant: str = ""

    def __post_init__(self):
        if self.op is None:
            self.op = (_method(self.name) if self.method
                       else getattr(retrograd, self.name))
        if self.torch_op is None:
            self.torch_op = _method(self.name) if self.method else _torch_fn(self.name)

    @property
    def id(self):
        """The entry's test id: ``name`` or ``name.variant``."""
        return f"{self.name}.{self.variant}" if self.variant else self.name

    def tols(self, dtype):
        """``(atol, rtol)`` for comparing results of ``dtype`` (a name) with PyTorch."""
        if dtype in self.tolerances:
            return self.tolerances[dtype]
        if dtype == "float32":
            return self.atol, self.rtol
        return _DEFAULT_TOLS.get(dtype, (0.0, 0.0))


# Reference (atol, rtol) per dtype; exact for integer and bool results. Low precision: one
# ulp of the significand (float16 11 bits: 2**-10, about 1e-3; bfloat16 8 bits: 2**-7,
# about 8e-3), since both libraries compute in float32 and round once, except where
# results round the other way at a tie of the float32 values (the ulp covers that).
_DEFAULT_TOLS = {"float16": (1e-3, 1e-3), "bfloat16": (8e-3, 8e-3), "float64": (1e-7, 1e-7)}


def _method(name):
    return lambda input, *args, **kwargs: getattr(input, name)(*args, **kwargs)


def _torch_fn(name):
    def call(*args, **kwargs):
        import torch
        return getattr(torch, name)(*args, **kwargs)
    return call


def maker(dtype, requires_grad, **defaults):
    """``t(*shape, **kw)``: :func:`make_tensor` of a sample function's dtype and
    requires_grad (and ``defaults``), the shorthand the entry modules build with."""
    def t(*shape, **kw):
        return make_tensor(*shape, dtype=dtype, requires_grad=requires_grad,
                           **{**defaults, **kw})
    return t


def torch_functional(name):
    """``torch.nn.functional.<name>``, looked up at call time (torch stays optional)."""
    def call(*args, **kwargs):
        import torch
        return getattr(torch.nn.functional, name)(*args, **kwargs)
    return call


rng = numpy.random.default_rng(0)


def reseed(seed=0):
    """Restart :data:`rng` (in place: modules hold the object) at ``seed``."""
    rng.bit_generator.state = numpy.random.default_rng(seed).bit_generator.state


def make_tensor(*shape, dtype="float32", low=-2.0, high=2.0, requires_grad=False,
                exclude_zero=False, seed=None, noncontiguous=False):
    """A random retrograd tensor: uniform in [low, high) (integers for int dtypes);
    ``requires_grad`` applies to float tensors only. ``noncontiguous`` lays it out with a
    stride of 2 elements in the last dimension."""
    g = numpy.random.default_rng(seed) if seed is not None else rng
    np_dtype = numpy.dtype(getattr(dtype, "np", dtype))
    if np_dtype.kind == "b":
        arr = g.random(shape) < 0.5
    elif np_dtype.kind in "iu":
        arr = g.integers(max(int(low), 0 if np_dtype.kind == "u" else int(low)),
                         max(int(high), 1) + 1, shape).astype(np_dtype)
        if exclude_zero:
            arr[arr == 0] = 1
    else:
        arr = g.uniform(low, high, shape).astype(np_dtype)
        if exclude_zero:
            arr[numpy.abs(arr) < 0.1] = 0.5
    if noncontiguous and arr.ndim:
        strided = numpy.empty(shape[:-1] + (2 * shape[-1],), dtype=np_dtype)[..., ::2]
        strided[...] = arr
        arr = strided
    else:
        arr = numpy.array(arr, dtype=np_dtype, order="C")  # keeps 0-d samples 0-d
    t = retrograd.from_numpy(arr)
    if requires_grad and (np_dtype.kind == "f" or np_dtype == retrograd.bfloat16.np):
        t.requires_grad_(True)
    return t

