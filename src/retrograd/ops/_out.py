"""``out=``: PyTorch's contract for writing a function's result into a given tensor.

Every public function whose signature has ``out`` gets this wrapper at registration
(its Tensor method stays the plain function: PyTorch's methods take no ``out``, so none
is expected there). The result is computed as
usual, then copied into ``out``: its dtype must be castable to ``out``'s (PyTorch's
``canCast``: no float into integers, no complex into reals, nothing but bool into bool),
a wrong-shaped ``out`` is resized (with PyTorch's deprecation warning unless it was
empty), and autograd refuses, as PyTorch's does, when grad mode is on and anything
involved requires grad.
"""

import functools
import inspect
import warnings

from .. import _autocast
from .._dtype import CPP_NAMES, SCALAR_NAMES, can_cast, from_numpy_dtype
from .._memory_format import is_dense
from .._tensor import Tensor
from .._tensor import wrap as _wrap
from ..autograd import grad_mode
from ..backend import check_writeable, get_array_module
from ..backend.functions import functions


def write(name, result, out, args=()):
    """Copy ``result`` (a Tensor, or a tuple of them) into ``out``; returns ``out``.
    ``args`` are the call's tensor arguments, in order (``_EXACT_DTYPE``'s checks read them)."""
    if isinstance(result, tuple):
        if not isinstance(out, (tuple, list)) or len(out) != len(result):
            raise TypeError(f"{name}(): argument 'out' must be tuple of {len(result)} Tensors")
        written = tuple(write(name, r, o) for r, o in zip(result, out, strict=True))
        return type(result)(written)  # (a plain tuple, or a return_types structseq)
    if not isinstance(out, Tensor):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if grad_mode.state.enabled and (result.requires_grad or out.requires_grad):
        raise RuntimeError(f"{name}(): functions with out=... arguments don't support "
                           "automatic differentiation, but one of the arguments requires "
                           "grad.")
    src, dst = result._data, out._data
    exact = _EXACT_DTYPE.get(name) if src.dtype != dst.dtype or name in _MULTI_DOT else None
    message = exact and exact(args, src.dtype.name, dst.dtype.name)
    if message:
        raise RuntimeError(message)
    if not can_cast(from_numpy_dtype(src.dtype), from_numpy_dtype(dst.dtype)):
        raise RuntimeError(f"result type {SCALAR_NAMES[src.dtype.name]} can't be cast to the "
                           f"desired output type {SCALAR_NAMES[dst.dtype.name]}")
    if dst.shape != src.shape:
        if dst.size:
            warnings.warn(f"An output with one or more elements was resized since it had shape "
                          f"{list(dst.shape)}, which does not match the required output shape "
                          f"{list(src.shape)}. This behavior is deprecated, and in a future "
                          "PyTorch release outputs will not be resized unless they have zero "
                          "elements. You can explicitly reuse an out tensor t by resizing it, "
                          "inplace, to zero elements with t.resize_(0).", stacklevel=3)
        out.data = _wrap(src.astype(dst.dtype, copy=True))
    else:
        check_writeable(dst, "out")
        get_array_module(dst).copyto(dst, src, casting="unsafe")
    out._vc[0] += 1
    return out


def wrap(f, name):
    """``f`` taking ``out=``: computed, then written into ``out`` when one is given."""
    policy = getattr(f, "autocast_policy", None)  # autocast wraps this op's entry
    out_forms = _OUT_OF_OUT_FORMS.get(name)

    @functools.wraps(f)
    def with_out(*args, out=None, **kwargs):
        if out is None:
            return f(*args, **kwargs)
        for o in out if isinstance(out, (tuple, list)) else (out,):
            if isinstance(o, Tensor):
                check_no_partial_overlap(o._data, (*args, *kwargs.values()))
        if _autocast.threads_on and (policy or out_forms and out_forms(args, kwargs)):
            with _autocast.excluded():
                result = f(*args, **kwargs)
        else:
            result = f(*args, **kwargs)
        return write(name, result, out, _tensor_args(f, args, kwargs))
    return with_out


# Composites whose out= form PyTorch writes by its products' out= forms, unlowered: of two
# matrices (a longer chain's inner products it computes first, and autocast lowers them);
# other composites' products are lowered as ever.
_OUT_OF_OUT_FORMS = {"chain_matmul": lambda args, kwargs: len(args) == 2,
                     "multi_dot": lambda args, kwargs:
                     len(args[0] if args else kwargs.get("tensors", ())) == 2}


def _tensor_args(f, args, kwargs):
    """The call's arguments in ``f``'s order, keywords too (``matmul(other=b, input=a)``
    reaches the kernel of ``a @ b``): the dtype checks below read them."""
    return tuple(_signature(f).bind_partial(*args, **kwargs).arguments.values())


_signature = functools.cache(inspect.signature)


# The products (BLAS calls in PyTorch), and cross, take no ``out`` of another dtype than
# their result, not even one it casts to: name -> the message, from (tensor arguments,
# result dtype name, out's dtype name), as PyTorch words it for the kernel the call reaches
# (None: a cast is fine there).
def _expected(args, r, o):
    return f"Expected out tensor to have dtype {CPP_NAMES[r]}, but got {CPP_NAMES[o]} instead"


def _dot(args, r, o):
    return f"result dtype {SCALAR_NAMES[o]} does not match input dtype {SCALAR_NAMES[r]}"


def _addmv(args, r, o):
    return (f"addmv input tensors must have the same dtype, but got {SCALAR_NAMES[o]}, "
            f"{SCALAR_NAMES[r]}, and {SCALAR_NAMES[r]}")


def _tensordot(args, r, o):
    return (f"tensordot: Expected the output tensor to have dtype {SCALAR_NAMES[r]}, but got "
            f"an output tensor with dtype {SCALAR_NAMES[o]}")


def _inner(args, r, o):
    """inner of a 0-d operand is a product, which casts."""
    if any(isinstance(a, Tensor) and a._data.ndim == 0 for a in args[:2]):
        return None
    return _tensordot(args, r, o)


def _addbmm(args, r, o):  # (out becomes the sum's self)
    return (f"self and mat2 must have the same dtype, but got {SCALAR_NAMES[o]} and "
            f"{SCALAR_NAMES[r]}")


def _multi_dot(args, r, o):
    """multi_dot checks ``out`` against its inputs' dtype first; under autocast a longer
    chain's last product is then mm's, of a lowered result."""
    first = args[0][0] if isinstance(args[0], (list, tuple)) else args[0]
    i = first._data.dtype.name if isinstance(first, Tensor) else r
    if o != i:
        return (f"multi_dot(): expected out tensor to have dtype {CPP_NAMES[i]} but got "
                f"{CPP_NAMES[o]}")
    return _expected(args, r, o) if r != o else None


_MULTI_DOT = ("chain_matmul", "multi_dot")  # (checked against the inputs' dtype too)


def _vecdot(args, r, o):
    return f"linalg.vecdot: Expected out of dtype{SCALAR_NAMES[r]} but found {SCALAR_NAMES[o]}"


def _matmul(args, r, o):
    """matmul reaches dot (two vectors), addmv (a matrix or batch by a vector) or mm."""
    dims = [a._data.ndim for a in args[:2] if isinstance(a, Tensor)]
    if dims == [1, 1]:
        return _dot(args, r, o)
    if len(dims) == 2 and dims[0] >= 2 and dims[1] == 1:
        return _addmv(args, r, o)
    return _expected(args, r, o)


_EXACT_DTYPE = {"mm": _expected, "bmm": _expected, "addmm": _expected, "baddbmm": _expected,
                "addmv": _expected, "matmul": _matmul, "mv": _addmv, "dot": _dot,
                "vdot": _dot, "inner": _inner, "tensordot": _tensordot,
                "addbmm": _addbmm, "cross": _expected, "chain_matmul": _multi_dot,
                "linalg_cross": _expected, "linalg_vecdot": _vecdot, "multi_dot": _multi_dot}


def check_no_partial_overlap(dst, values):
    """PyTorch's ``assert_no_partial_overlap``: a Tensor among ``values`` whose memory
    meets the written-to array ``dst`` without being the same view of it would be read
    where it was already written. As in PyTorch, only arrays both non-overlapping and dense
    are compared (others are "too hard" to tell, and pass). Arrays of different memory
    owners never meet: that test alone runs on every in-place op."""
    owner = _owner(dst)
    shared = [v._data for v in values if isinstance(v, Tensor) and v._data is not dst
              and _owner(v._data) is owner]
    if not shared or not dst.size or not is_dense(dst):
        return
    span = _span(dst)
    for a in shared:
        if not a.size or type(a) is not type(dst) or not is_dense(a):
            continue
        other = _span(a)
        if other == span and a.strides == dst.strides and a.shape == dst.shape:
            continue  # the same elements: each read before it is written
        if other[0] < span[1] and span[0] < other[1]:
            raise RuntimeError("unsupported operation: some elements of the input tensor and "
                               "the written-to tensor refer to a single memory location. "
                               "Please clone() the tensor before performing the operation.")


def _owner(a):
    """The array whose memory ``a`` views (NumPy and CuPy keep the owner as ``base``)."""
    base = getattr(a, "base", None)
    return a if base is None else base


def _span(a):
    """The bytes ``a`` spans: [first, last + 1)."""
    start = functions(get_array_module(a)).address(a)
    reach = [(n - 1) * s for n, s in zip(a.shape, a.strides, strict=True)]
    return (start + sum(r for r in reach if r < 0),
            start + sum(r for r in reach if r > 0) + a.itemsize)


def takes_out(f):
    try:
        return "out" in inspect.signature(f).parameters
    except (TypeError, ValueError):  # a builtin without a signature
        return False
