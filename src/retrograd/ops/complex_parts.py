"""A complex tensor's real and imaginary parts, with gradients: ``view_as_real``,
``view_as_complex``, ``real`` and ``imag`` (PyTorch's ``select`` of ``view_as_real``),
and the real-to-complex cast the FFTs promote their input with.

Gradients follow PyTorch's convention for a real loss L of z = x + iy: the gradient of z
is dL/dx + i dL/dy, so ``view_as_real``'s vjp is ``view_as_complex`` of its gradient, and
a cast from real to complex keeps the real part of the complex gradient. The parts are
copies, where PyTorch's are views of the complex storage (docs/deviations.md).
"""

from .._dtype import SCALAR_NAMES
from .._tensor import Tensor
from ._registry import apply, defop, register
from .indexing import select
from .joining import stack
from .shape import broadcast_tensors
from .shape import call


def _to_real(xp, self):
    return xp.stack((xp.real(self), xp.imag(self)), axis=-1)


def _to_complex(xp, self):
    return self[..., 0] + 1j * self[..., 1]


_view_as_real = defop("view_as_real", _to_real,
                      vjp={"self": lambda xp, grad: call(xp, _view_as_complex, grad)},
                      jvp="linear", upcast=False)
_view_as_complex = defop("view_as_complex", _to_complex,
                         vjp={"self": lambda xp, grad: call(xp, _view_as_real, grad)},
                         jvp="linear", upcast=False)


def _real_part(xp, grad):
    return call(xp, _view_as_real, grad)[..., 0]


# real -> complex (PyTorch's ``to``, ToCopyBackward0): the gradient's real part
as_complex = defop("as_complex", lambda xp, self: self + 0j,
                   vjp={"self": _real_part}, node="ToCopyBackward0", jvp="linear",
                   upcast=False)


@register(method=False)
def view_as_real(input):
    """The complex ``input`` as real pairs in a new last dimension of size 2.

    >>> import retrograd as torch
    >>> torch.view_as_real(torch.tensor([1 + 2j]))
    tensor([[1., 2.]])
    """
    if not input.is_complex():
        raise RuntimeError("view_as_real is only supported for complex tensors")
    return apply(_view_as_real, (input,))


@register(method=False)
def view_as_complex(input):
    """Pairs in the last dimension (size 2) of a float or double ``input`` as complex numbers.

    >>> import retrograd as torch
    >>> torch.view_as_complex(torch.tensor([[1., 2.]]))
    tensor([1.+2.j])
    """
    name = input.dtype.name
    if name not in ("float32", "float64"):
        raise RuntimeError("view_as_complex is only supported for half, float and double "
                           f"tensors, but got a tensor of scalar type: {SCALAR_NAMES[name]}")
    if not input.ndim or input.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    return apply(_view_as_complex, (input,))


@register(method=False)
def complex(real, imag, *, out=None):  # noqa: A001
    """``real + i imag`` from two float tensors of one dtype (broadcast together).

    >>> import retrograd as torch
    >>> torch.complex(torch.tensor([1.]), torch.tensor([2.]))
    tensor([1.+2.j])
    """
    _check_parts("complex", ("real", real), ("imag", imag))
    return view_as_complex(stack(broadcast_tensors(real, imag), -1))


@register(method=False)
def polar(abs, angle, *, out=None):  # noqa: A002
    """``abs * (cos(angle) + i sin(angle))``.

    >>> import retrograd as torch
    >>> torch.polar(torch.tensor([2.]), torch.tensor([0.]))
    tensor([2.+0.j])
    """
    _check_parts("polar", ("abs", abs), ("angle", angle))
    return complex(abs * angle.cos(), abs * angle.sin())


def _check_parts(fn, *args):
    """ATen's checks of ``complex`` and ``polar``'s two real tensors."""
    for pos, (name, t) in enumerate(args, 1):
        if not isinstance(t, Tensor):
            raise TypeError(f"{fn}(): argument '{name}' (position {pos}) must be Tensor, not "
                            f"{type(t).__name__}")
    a, b = (t.dtype for _, t in args)
    if a.name not in _PART_DTYPES or b.name not in _PART_DTYPES:
        raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got "
                           f"{SCALAR_NAMES[a.name]} and {SCALAR_NAMES[b.name]}")
    if a is not b:
        raise RuntimeError(f"Expected object of scalar type {SCALAR_NAMES[a.name]} but got "
                           f"scalar type {SCALAR_NAMES[b.name]} for second argument")


_PART_DTYPES = ("float16", "float32", "float64")


@register(method=False)
def real(input):
    """The real part: ``input`` itself when it is real, as PyTorch."""
    return select(view_as_real(input), -1, 0) if input.is_complex() else input


@register(method=False)
def imag(input):
    if not input.is_complex():
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return select(view_as_real(input), -1, 1)


Tensor.real = property(real, doc="The real part (a copy: see the module docstring).")
Tensor.imag = property(imag, doc="The imaginary part (a copy: see the module docstring).")
