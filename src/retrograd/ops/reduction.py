"""Reductions (sum, mean, prod, max, var, norm, logsumexp, ...) and scans (cumsum, cumprod).

The public functions normalise ``dim`` once (PyTorch's range and duplicate
checks) to a sorted tuple of axes, so each forward is one NumPy reduction and
each rule re-inserts the reduced axes with ``xp.expand_dims`` before
broadcasting back to the input's shape. Result dtypes follow PyTorch: sums and
products of integers and bools are int64, means and variances need floats.
"""

import builtins
import math
import numbers
import operator
import warnings

from .. import _autocast, _observe, return_types
from .._dtype import (bfloat16, float16, float32, float64, int64, is_float, is_inexact, is_low,
                      uint8, dtype_arg)
from .._creation import _size
from .._tensor import Tensor
from ..backend import cpu_kernels
from ..backend.functions import functions
from ._registry import _pretty, apply, apply_inplace, defop, kernel, register
from .binary import maximum, minimum
from .pointwise import _torch_sign

__all__ = ["sum", "mean", "nansum", "nanmean", "prod", "max", "min", "amax", "amin", "argmax",
           "argmin", "aminmax", "var", "std", "var_mean", "std_mean", "logsumexp",
           "cumsum", "cumprod", "all", "any", "count_nonzero"]

_INT64 = int64.np
_S = ("self",)


# ---- dims ---------------------------------------------------------------------------------

def _dims(dim, ndim):
    """PyTorch's dim argument (int or sequence) -> sorted tuple of non-negative axes.

    A 0-d tensor accepts dim 0 or -1 and has no axes to reduce.
    """
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    n = ndim if ndim else 1
    out = []
    for d in dims:
        d = operator.index(d)
        if not -n <= d < n:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, "
                             f"{n - 1}], but got {d})")
        d %= n
        if d in out:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        out.append(d)
    return tuple(sorted(out)) if ndim else ()


def _reduce_dims(dim, ndim):
    """``dim`` of a reduction where None or an empty list means every dim (sum, amax, ...)."""
    if dim is None or (not isinstance(dim, int) and len(dim) == 0):
        return tuple(range(ndim))
    return _dims(dim, ndim)


def _dim1(dim, ndim):
    """A single dim (max(dim), cumsum, ...) as a non-negative int (0 for a 0-d tensor)."""
    n = ndim if ndim else 1
    d = operator.index(dim)
    if not -n <= d < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {d})")
    return d % n


def _no_out(out, name):
    """``out=`` is accepted for PyTorch's signature but not implemented: say so."""
    if out is not None:
        raise NotImplementedError(f"{name}(): the out= argument is not supported")


def _count(shape, dims):
    n = 1
    for d in dims:
        n *= shape[d]
    return n


def _unreduce(xp, g, dim, keepdim):
    """Put back the axes a reduction without keepdim removed, so ``g`` broadcasts."""
    return g if keepdim or not dim else xp.expand_dims(g, dim)


def _expand(xp, grad, shape, dim, keepdim):
    return xp.broadcast_to(_unreduce(xp, grad, dim, keepdim), shape)


def _acc_dtype(input, dtype):
    """NumPy accumulator dtype of sum/prod/cumsum: ``dtype``, or int64 for integer inputs."""
    if dtype is not None:
        return dtype.np
    return _INT64 if input._data.dtype.kind in "biu" else None


def _float_only(input, dtype, name):
    """mean/nanmean's result dtype (the input's or ``dtype``) must be floating or complex."""
    given = dtype is not None
    dt = dtype.np if given else input._data.dtype
    if not is_inexact(dt):
        raise RuntimeError(f"{name}(): could not infer output dtype. "
                           f"{'Optional' if given else 'Input'} dtype must be either a floating "
                           f"point or complex dtype. Got: {_pretty(dt)}")


def _nonempty(input, dims, name, full_exc=RuntimeError, full_msg=None):
    """max/amax/argmax/...: PyTorch's errors for reducing over nothing (no identity).

    ``dims`` None: a reduction over everything; ``name`` prefixes the messages."""
    if input._data.size:
        return
    if dims is None:
        raise full_exc(full_msg or f"{name}: Expected reduction dim to be specified for "
                       f"input.numel() == 0. Specify the reduction dim with the 'dim' argument.")
    for d in dims:
        if input._data.shape[d] == 0:
            raise IndexError(f"{name}: Expected reduction dim {d} to have non-zero size.")


# ---- compiled reductions over trailing dims ------------------------------------------------

def _trailing(self, dim, dtype=None):
    """Whether the compiled reductions take ``self`` reduced over ``dim`` (sorted dims, None
    for all) in its own dtype: float32, C-contiguous, non-empty, the dims its last ones."""
    return (dtype is None and (dim is None or dim == tuple(range(self.ndim - len(dim),
                                                                 self.ndim)))
            and cpu_kernels.takes(self))


def _reduced(kind, self, dim=None, keepdim=False):
    """:func:`cpu_kernels.reduce_trailing` of ``self`` over its trailing dims ``dim`` (None
    or all of them: :func:`cpu_kernels.reduce_all`), shaped as NumPy's reduction."""
    n = self.ndim if dim is None else len(dim)
    lead = self.ndim - n
    shape = self.shape[:lead] + ((1,) * n if keepdim else ())
    if lead == 0:
        return cpu_kernels.reduce_all(kind, self, shape)
    return cpu_kernels.reduce_trailing(kind, self, lead, shape)


def _compiled(kind, mean=False):
    """A rule's (fast, when) pair: ``kind`` over trailing dims compiled (a mean: the sum
    over the count, as NumPy's and PyTorch's), for a rule taking ``(self, dim, keepdim,
    dtype)``, or ``(self, dtype)`` or ``(self)`` for a reduction of everything."""
    def fast(xp, self, *args):
        dim, keepdim = (args[0], args[1]) if len(args) > 1 else (None, False)
        out = _reduced(kind, self, dim, keepdim)
        if mean:
            xp.divide(out, out.dtype.type(self.size // out.size), out=out)
        return out

    def when(self, *args):
        if len(args) > 1:
            return _trailing(self, args[0], args[2] if len(args) > 2 else None)
        return _trailing(self, None, args[0] if args else None)
    return fast, when


# ---- sum, mean, prod ----------------------------------------------------------------------

_sum = defop("sum", kernel(lambda xp, self, dtype: self.sum(dtype=dtype), *_compiled("sum")),
             vjp={"self": lambda xp, grad, self_shape: xp.broadcast_to(grad, self_shape)},
             jvp="linear")
_sum_dim = defop("sum_dim", kernel(lambda xp, self, dim, keepdim, dtype:
                                   self.sum(axis=dim, keepdims=keepdim, dtype=dtype),
                                   *_compiled("sum")),
                 vjp={"self": lambda xp, grad, self_shape, dim, keepdim:
                      _expand(xp, grad, self_shape, dim, keepdim)},
                 node="SumBackward1", jvp="linear")
_nansum = defop("nansum", lambda xp, self, dim, keepdim, dtype:
                xp.nansum(self, axis=dim, keepdims=keepdim, dtype=dtype),
                # PyTorch's: the backward multiplies by the mask (an inf gradient gives NaN),
                # the tangent is masked with where
                vjp={"self": lambda xp, grad, self, dim, keepdim:
                     _unreduce(xp, grad, dim, keepdim) * (self == self)},
                jvp=lambda xp, self_t, self, dim, keepdim, dtype:
                xp.sum(xp.where(self != self, 0, self_t), axis=dim, keepdims=keepdim,
                       dtype=dtype))
def _mean_fwd(xp, self, dim, keepdim, dtype):
    if self.size:
        return self.mean(axis=dim, keepdims=keepdim, dtype=dtype)
    # NumPy warns about an empty mean; PyTorch quietly gives NaN
    return self.sum(axis=dim, keepdims=keepdim, dtype=dtype) / (0 if dim is None else
                                                                _count(self.shape, dim))


_mean = defop("mean", kernel(lambda xp, self, dtype: _mean_fwd(xp, self, None, False, dtype),
                            *_compiled("sum", mean=True)),
              vjp={"self": lambda xp, grad, self_shape:
                   xp.broadcast_to(grad / math.prod(self_shape), self_shape)}, jvp="linear")
_mean_dim = defop("mean_dim", kernel(_mean_fwd, *_compiled("sum", mean=True)),
                  vjp={"self": lambda xp, grad, self_shape, dim, keepdim:
                       _expand(xp, grad / _count(self_shape, dim), self_shape, dim, keepdim)},
                  node="MeanBackward1", jvp="linear")


def _prod_others(xp, x, axis):
    """Product of the other elements along ``axis`` at every position, exact with zeros
    (exclusive cumulative products from both ends, as PyTorch's prod_safe_zeros_backward)."""
    head = (slice(None),) * axis
    ones = xp.ones_like(x[head + (slice(0, 1),)])
    drop_last = head + (slice(None, -1),)
    left = xp.cumprod(xp.concatenate([ones, x[drop_last]], axis=axis), axis)
    right = xp.cumprod(xp.concatenate([ones, xp.flip(x, axis)[drop_last]], axis=axis), axis)
    return left * xp.flip(right, axis)


def _prod_rule(xp, grad, self, result):
    """PyTorch's prod_backward: with two zeros or more every product of the others is
    exactly 0 (its plain backward returns zeros, so a NaN beside them gives no NaN)."""
    if self.ndim == 0:
        return grad
    zero = self == 0
    if not functions(xp).any_true(zero):  # a formula choice: meta takes the zero-free one
        return grad * (result / self)
    others = xp.reshape(_prod_others(xp, xp.reshape(self, (-1,)), 0), self.shape)
    return grad * xp.where((xp.sum(zero) > 1) & (others != others), 0, others)


def _prod_dim_rule(xp, grad, self, result, dim, keepdim):
    if self.ndim == 0:
        return grad
    grad = _unreduce(xp, grad, dim, keepdim)
    if not functions(xp).any_true(self == 0):
        return grad * (_unreduce(xp, result, dim, keepdim) / self)
    return grad * _prod_others(xp, self, dim[0])


_prod = defop("prod", lambda xp, self, dtype: self.prod(dtype=dtype),
              vjp={"self": _prod_rule}, jvp="transpose")
_prod_dim = defop("prod_dim", lambda xp, self, dim, keepdim, dtype:
                  self.prod(axis=dim, keepdims=keepdim, dtype=dtype),
                  vjp={"self": _prod_dim_rule}, node="ProdBackward1", jvp="transpose")


class _NoDim:
    """``dim``'s default in a reduction whose dim-less PyTorch overload takes no ``keepdim``:
    told apart from an explicit None, which the dim overload of sum and mean accepts."""

    def __repr__(self):
        return "<no dim>"


NO_DIM = _NoDim()

_DTYPE_SIGNATURES = {  # the dim-less and the dim overloads, as PyTorch's TypeError lists them
    "sum": ("Tensor input, *, torch.dtype dtype = None", "tuple of ints"),
    "mean": ("Tensor input, *, torch.dtype dtype = None, Tensor out = None", "tuple of ints"),
    "prod": ("Tensor input, *, torch.dtype dtype = None", "int"),
}


def _dim_given(name, dim, keepdim, dtype=None, out=None):
    """``dim`` (None for every dim) once PyTorch's overload resolution has accepted the call:
    ``keepdim`` without ``dim`` matches no overload of ``name`` (a TypeError naming the
    function's overloads; PyTorch's method form lists its own)."""
    if dim is not NO_DIM:
        return dim
    if keepdim is None:
        return None
    if name != "mean" and (dtype is not None or out is not None):  # mean's takes them
        _missing_dim(name)
    plain, dims = _DTYPE_SIGNATURES[name]
    raise TypeError(f"{name}() received an invalid combination of arguments - got (Tensor, "
                    f"keepdim=bool), but expected one of:\n * ({plain})\n * (Tensor input, "
                    f"{dims} dim, bool keepdim = False, *, torch.dtype dtype = None, Tensor "
                    f"out = None)\n")


def _missing_dim(name):
    raise TypeError(f'{name}() missing 1 required positional arguments: "dim"')


@register
def sum(input, dim=NO_DIM, keepdim=None, *, dtype=None, out=None):
    """Sum over ``dim`` (int or tuple; all dims when None); integer inputs sum to int64.

    >>> retrograd.tensor([[1, 2], [3, 4]]).sum(1)
    tensor([3, 7])
    """
    dtype = dtype_arg(dtype, "sum")
    dim, keepdim = _dim_given("sum", dim, keepdim, dtype, out), bool(keepdim)
    if dim is None and not keepdim:
        return apply(_sum, (input,), (_acc_dtype(input, dtype),))
    return apply(_sum_dim, (input,), (_reduce_dims(dim, input._data.ndim), keepdim,
                                      _acc_dtype(input, dtype)))


@register(function=False)
def sum_to_size(self, *size):
    """Summed down to ``size``, which must expand to ``self``'s shape (the reduction of a
    broadcast): its missing leading dims and its size-1 dims summed, as PyTorch's sum_to."""
    shape = _size(size, "sum_to_size")
    lead = self._data.ndim - len(shape)
    if lead < 0 or builtins.any(n != 1 and n != m for n, m in
                                zip(shape, self._data.shape[lead:], strict=True)):
        raise RuntimeError(f"size {{{list(shape)}}} is not expandable to size "
                           f"{{{list(self._data.shape)}}}.")
    if shape == self._data.shape:
        return self
    dims = [*range(lead), *(lead + i for i, n in enumerate(shape)
                             if n == 1 and self._data.shape[lead + i] != 1)]
    out = sum(self, dims, keepdim=True)
    return out.view(shape) if lead else out


@register
def nansum(input, dim=None, keepdim=False, *, dtype=None):
    """Sum treating NaN as zero; PyTorch's CPU kernel has no complex form."""
    dtype = dtype_arg(dtype, "nansum")
    if input._data.dtype.kind == "c":
        raise RuntimeError(f"nansum on {input.device.type.upper()} does not support complex "
                           f"inputs")
    if dtype is not None and dtype.is_complex:
        raise NotImplementedError(f"\"nansum_{input.device.type}\" not implemented for "
                                  f"'{_pretty(dtype.np)}'")
    return apply(_nansum, (input,), (_reduce_dims(dim, input._data.ndim), keepdim,
                                     _acc_dtype(input, dtype)))


@register
def mean(input, dim=NO_DIM, keepdim=None, *, dtype=None, out=None):
    """Mean over ``dim``; integer inputs need ``dtype=`` (as in PyTorch).

    >>> retrograd.tensor([1., 2., 6.]).mean()
    tensor(3.)
    """
    dtype = dtype_arg(dtype, "mean")
    dim, keepdim = _dim_given("mean", dim, keepdim, dtype, out), bool(keepdim)
    _float_only(input, dtype, "mean")
    dt = dtype.np if dtype is not None else None
    if dim is None and not keepdim:
        return apply(_mean, (input,), (dt,))
    return apply(_mean_dim, (input,), (_reduce_dims(dim, input._data.ndim), keepdim, dt))


@register
def nanmean(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """Mean of the non-NaN elements: PyTorch's composite ``nansum / count``, so the sum is
    rounded to its dtype first (a float16 one past 65504 is inf).

    >>> retrograd.tensor([1., float("nan"), 3.]).nanmean()
    tensor(2.)
    """
    dtype = dtype_arg(dtype, "nanmean")
    if not is_inexact(input._data.dtype):
        raise RuntimeError(f"nanmean(): expected input to have floating point or complex dtype "
                           f"but got {_pretty(input._data.dtype)}")
    _float_only(input, dtype, "nanmean")
    _no_out(out, "nanmean")
    return nansum(input, dim, keepdim, dtype=dtype) / (input == input).sum(dim, keepdim)


@register
@_autocast.policy("prod")
def prod(input, dim=NO_DIM, keepdim=None, *, dtype=None):
    """Product of all elements, or along one ``dim``; the gradient is exact with zeros.

    >>> retrograd.tensor([2., 0., 3.]).prod()
    tensor(0.)
    """
    dtype = dtype_arg(dtype, "prod")
    if dim is None:  # the dim overload takes an int
        raise TypeError("prod(): argument 'dim' must be int, not NoneType")
    dim, keepdim = _dim_given("prod", dim, keepdim, dtype), bool(keepdim)
    if dim is None:
        return apply(_prod, (input,), (_acc_dtype(input, dtype),))
    d = _dim1(dim, input._data.ndim)  # a scalar's dim too must be 0 or -1
    return apply(_prod_dim, (input,), ((d,) if input._data.ndim else (), keepdim,
                                       _acc_dtype(input, dtype)))


# ---- max, min, amax, amin, argmax, argmin, aminmax ----------------------------------------

def _even_rule(xp, grad, self, result, dim, keepdim):
    """amax/amin: the gradient is shared evenly among the elements equal to the result."""
    mask = self == _unreduce(xp, result, dim, keepdim)
    return (_unreduce(xp, grad, dim, keepdim) * mask
            / xp.sum(mask, axis=dim, keepdims=True, dtype=grad.dtype))


def _evenly_distribute(xp, grad, self, result):
    """max()/min() of everything: shared evenly among the maxima (NaN when the result is)."""
    mask = (self == result) | ((self != self) & (result != result))
    if hasattr(mask, "batched_namespace"):  # (the node's xp is grad's, which may not vary)
        xp = mask.batched_namespace()
    return xp.where(mask, grad, 0) / xp.sum(mask, dtype=grad.dtype)  # (the batch on the left)


def _select_rule(xp, grad, indices, self_shape, dim, keepdim):
    """max(dim)/min(dim): the gradient goes to the selected index only."""
    if not self_shape:
        return grad
    if not keepdim:
        grad, indices = xp.expand_dims(grad, dim), xp.expand_dims(indices, dim)
    pos = xp.reshape(xp.arange(self_shape[dim]), (-1,) + (1,) * (len(self_shape) - dim - 1))
    return xp.where(indices == pos, grad, 0)


def _select_fwd(pick, arg):
    def forward(xp, self, dim, keepdim):
        if self.ndim == 0:
            return xp.copy(self), xp.zeros((), _INT64)
        return (getattr(self, pick)(axis=dim, keepdims=keepdim),
                getattr(self, arg)(axis=dim, keepdims=keepdim))
    return forward


_max = defop("max", kernel(lambda xp, self: self.max(), *_compiled("max")),
             vjp={"self": _evenly_distribute}, node="MaxBackward1", jvp="transpose")
_min = defop("min", kernel(lambda xp, self: self.min(), *_compiled("min")),
             vjp={"self": _evenly_distribute}, node="MinBackward1", jvp="transpose")


def _select_compiled(kind, arg):
    """max(dim)/min(dim)'s (fast, when) pair: the values compiled over the last dim (a
    NaN or a zero is the one the index picks: the first), the indices NumPy's."""
    def fast(xp, self, dim, keepdim):
        return (_reduced(kind, self, (dim,), keepdim),
                getattr(self, arg)(axis=dim, keepdims=keepdim))
    return fast, lambda self, dim, keepdim: self.ndim > 0 and _trailing(self, (dim,))


_max_dim = defop("max_dim", kernel(_select_fwd("max", "argmax"),
                                   *_select_compiled("max", "argmax")), vjp={"self": _select_rule},
                 outputs=("values", "indices"), nondiff_outputs=("indices",),
                 node="MaxBackward0", jvp="transpose")
_min_dim = defop("min_dim", kernel(_select_fwd("min", "argmin"),
                                   *_select_compiled("min", "argmin")), vjp={"self": _select_rule},
                 outputs=("values", "indices"), nondiff_outputs=("indices",),
                 node="MinBackward0", jvp="transpose")
_amax = defop("amax", kernel(lambda xp, self, dim, keepdim: self.max(axis=dim, keepdims=keepdim),
                            *_compiled("max")), vjp={"self": _even_rule}, jvp="transpose")
_amin = defop("amin", kernel(lambda xp, self, dim, keepdim: self.min(axis=dim, keepdims=keepdim),
                            *_compiled("min")), vjp={"self": _even_rule}, jvp="transpose")
_aminmax = defop("aminmax", lambda xp, self, dim, keepdim:
                 (self.min(axis=dim, keepdims=keepdim), self.max(axis=dim, keepdims=keepdim)),
                 vjp={"self": lambda xp, grads, self, min, max, dim, keepdim:
                      _even_rule(xp, grads[0], self, min, dim, keepdim)
                      + _even_rule(xp, grads[1], self, max, dim, keepdim)},
                 outputs=("min", "max"), jvp="transpose")
_argmax = defop("argmax", lambda xp, self, dim, keepdim: self.argmax(axis=dim,
                                                                    keepdims=keepdim),
                inputs=_S)
_argmin = defop("argmin", lambda xp, self, dim, keepdim: self.argmin(axis=dim,
                                                                    keepdims=keepdim),
                inputs=_S)


def _maxmin(name, full, by_dim, named, binary):
    def fn(input, dim=NO_DIM, keepdim=None, *, other=None, out=None):
        if isinstance(dim, Tensor) or other is not None:
            return binary(input, dim if other is None else other)
        if dim is None:  # the dim overload takes an int (PyTorch's method form's message)
            raise TypeError(f"{name}(): argument 'dim' must be int, not NoneType")
        if dim is NO_DIM:
            if keepdim is not None:  # the dim-less overload takes no keepdim
                raise TypeError(
                    f"{name}() received an invalid combination of arguments - got (Tensor, "
                    f"keepdim=bool), but expected one of:\n * (Tensor input, *, Tensor out = "
                    f"None)\n * (Tensor input, Tensor other, *, Tensor out = None)\n * (Tensor "
                    f"input, int dim, bool keepdim = False, *, tuple of Tensors out = None)\n")
            _nonempty(input, None, name + "()")
            return apply(full, (input,))
        d = _dim1(dim, input._data.ndim)
        _nonempty(input, (d,), name + "()")
        return named(apply(by_dim, (input,), (d, bool(keepdim))))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"``{name}(input)``: the {name}imum; ``{name}(input, dim, keepdim=False)``: "
                  f"``(values, indices)`` along ``dim``; ``{name}(input, other)``: "
                  f"elementwise ``{name}imum``.")
    return register(fn)


max = _maxmin("max", _max, _max_dim, return_types.max, maximum)
min = _maxmin("min", _min, _min_dim, return_types.min, minimum)


def _extreme_dims(input, dim, name):
    """amax/amin's dims, checked as PyTorch: an empty input needs dims, each dim (in the order
    given, named as given) must have a nonzero size (IndexError), then the list no repeats."""
    ndim = input._data.ndim
    if input._data.size == 0:
        if not isinstance(dim, int) and len(dim) == 0:
            _nonempty(input, None, name)
        for d in (dim,) if isinstance(dim, int) else dim:
            if input._data.shape[_dim1(d, ndim)] == 0:
                raise IndexError(f"{name}: Expected reduction dim {d} to have non-zero size.")
    return _reduce_dims(dim, ndim)


@register
def amax(input, dim=(), keepdim=False, *, out=None):
    """Maximum over ``dim`` (all dims by default); ties share the gradient evenly."""
    return apply(_amax, (input,), (_extreme_dims(input, dim, "amax()"), keepdim))


@register
def amin(input, dim=(), keepdim=False, *, out=None):
    """Minimum over ``dim`` (all dims by default); ties share the gradient evenly."""
    return apply(_amin, (input,), (_extreme_dims(input, dim, "amin()"), keepdim))


@register
def aminmax(input, *, dim=None, keepdim=False, out=None):
    """``(min, max)`` in one pass, over everything or along ``dim``."""
    if dim is None:
        dims = tuple(range(input._data.ndim))
        _nonempty(input, None, "aminmax", full_msg="aminmax(): cannot compute aminmax over "
                  "an empty dimension as the operation has no identity.")
    else:
        if not isinstance(dim, numbers.Integral):
            raise TypeError(f"aminmax(): argument 'dim' must be int, not {type(dim).__name__}")
        d = _dim1(dim, input._data.ndim)  # (0-d: in [-1, 0], as PyTorch)
        dims = (d,) if input._data.ndim else ()
        _nonempty(input, dims, "aminmax")
    return return_types.aminmax(apply(_aminmax, (input,), (dims, keepdim)))


def _arg(name, op):
    def fn(input, dim=None, keepdim=False):
        if input._data.dtype.kind == "b":
            raise RuntimeError(f"{name}(): does not support bool input")
        if dim is None:
            _nonempty(input, None, name, IndexError, f"{name}(): Expected reduction dim to be "
                      f"specified for input.numel() == 0.")
            return apply(op, (input,), (None, keepdim))
        d = _dim1(dim, input._data.ndim)
        if input._data.ndim == 0:
            return apply(op, (input,), (None, False))
        _nonempty(input, (d,), name + "()")
        return apply(op, (input,), (d, keepdim))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Index of the {name[3:]}imum (of the flattened input when ``dim`` is None)."
    return register(fn)


argmax = _arg("argmax", _argmax)
argmin = _arg("argmin", _argmin)


# ---- var, std, var_mean, std_mean ---------------------------------------------------------

def _var_wide(xp, self, dim, correction, keepdim):
    """The variance as PyTorch's CPU kernels take it, in float64. A float32/float64 input
    reduced to one element takes its mean in the input's dtype (std_var_all_cpu); any other
    reduction is Welford's, whose float64 running mean never overflows: huge equal values
    have variance 0 there, where a float64 sum would be inf. The squared deviations are
    summed in float64 either way."""
    n = _count(self.shape, _all_dims(self, dim))
    if self.dtype.kind == "c":  # the mean of |x - mean|^2: real, in the input's precision
        d = self - self.sum(axis=dim, keepdims=True) / n
        ss = (d.real * d.real + d.imag * d.imag).sum(axis=dim, keepdims=keepdim)
        return ss / builtins.max(n - correction, 0)
    if not is_float(self.dtype):
        m = self.sum(axis=dim, keepdims=True) / n
        d = self - m
    elif self.size == n:
        d = self.astype(float64.np) - self.sum(axis=dim, keepdims=True) / n
    else:
        wide = self.astype(float64.np)
        m = _mean_in_range(xp, wide, dim, n)
        d = wide - m
        if self.dtype == float64.np:
            ss = _zero_if_equal(xp, wide, dim, m, (d * d).sum(axis=dim, keepdims=True), n)
            return (ss if keepdim else ss.squeeze(dim)) / builtins.max(n - correction, 0)
    return (d * d).sum(axis=dim, keepdims=keepdim) / builtins.max(n - correction, 0)


def _zero_if_equal(xp, x, dim, m, ss, n):
    """Welford's running mean is exact for equal values (variance 0, so std's gradient is
    0); a float64 sum / n may be ulps off, leaving a sum of squares of a few ulps squared.
    Only such outputs are checked (rarely), so common data pays nothing. (Float32 values
    sum exactly in float64: their mean is exact already.)"""
    near = ss <= n * (n * 2.220446049250313e-16 * xp.abs(m)) ** 2  # eps|m|: >= m's ulp
    if not functions(xp).any_true(near):
        return ss
    first = x[tuple(slice(0, 1) if i in dim else slice(None) for i in range(x.ndim))]
    return xp.where(near & (x == first).all(axis=dim, keepdims=True), 0.0, ss)


def _mean_in_range(xp, x, dim, n):
    """The mean along ``dim``; where the sum overflows, the mean of ``x`` scaled by its
    largest magnitude, scaled back (exact for equal values, as Welford's running mean)."""
    m = x.sum(axis=dim, keepdims=True) / n
    if not functions(xp).any_true(~xp.isfinite(m)):
        return m
    top = xp.abs(x).max(axis=dim, keepdims=True)
    return xp.where(xp.isfinite(m), m, (x / top).sum(axis=dim, keepdims=True) / n * top)


def _var_fwd(xp, self, dim, correction, keepdim):
    return _var_wide(xp, self, dim, correction, keepdim).astype(self.real.dtype, copy=False)


def _all_dims(self, dim):
    """``dim`` None stands for every dim: PyTorch's rule tells the two apart (see below)."""
    return tuple(range(self.ndim)) if dim is None else dim


def _var_rule(xp, grad, self, dim, correction, keepdim):
    """PyTorch's var_backward. Without ``dim`` (or of a 0-d input), no degrees of freedom
    give NaN where an element equals the mean (an infinite one too) and inf elsewhere;
    with ``dim``, the factor 2 / (n - correction) is taken as it comes (inf at
    n == correction)."""
    n = _count(self.shape, _all_dims(self, dim))
    half = is_low(self.dtype)
    if half:  # std's rule runs in float16 as PyTorch's half ops: its mean rounds once
        mean = xp.astype(xp.sum(self, axis=dim, keepdims=True, dtype=float32.np) / n,
                         self.dtype)
    else:
        mean = xp.sum(self, axis=dim, keepdims=True) / n
    grad = _unreduce(xp, grad, dim, keepdim)
    if n - correction <= 0 and dim is None:
        return grad * xp.where(self == mean, math.nan, math.inf)
    factor = 2 / (n - correction) if n != correction else math.inf
    if half:  # a Python number times float16 is taken in float32 (mul_kernel's opmath)
        return xp.astype(factor * xp.astype(grad, float32.np), self.dtype) * (self - mean)
    return factor * grad * (self - mean)


def _std_rule(xp, grad, self, result, dim, correction, keepdim):
    """PyTorch's: zero where the std is zero instead of 0/0. Each step of this composite
    rounds to float16 there (``upcast="forward"``)."""
    return _var_rule(xp, xp.where(result == 0, 0, grad / (2 * result)), self, dim, correction,
                     keepdim)


_var = defop("var", _var_fwd, vjp={"self": _var_rule}, jvp="transpose")
_std = defop("std", lambda xp, self, dim, correction, keepdim:
             xp.sqrt(_var_wide(xp, self, dim, correction, keepdim)).astype(self.real.dtype,
                                                                       copy=False),
             vjp={"self": _std_rule}, jvp="transpose", upcast="forward")


def _var_mean_fwd(xp, self, dim, correction, keepdim):
    n = _count(self.shape, _all_dims(self, dim))
    m = self.sum(axis=dim, keepdims=True) / n
    d = self - m
    var = (d.real * d.real + d.imag * d.imag if d.dtype.kind == "c" else d * d).sum(
        axis=dim, keepdims=keepdim) / builtins.max(n - correction, 0)
    return var, (m if keepdim else xp.squeeze(m, dim))


def _mean_part(xp, g, self, dim, keepdim):
    return _unreduce(xp, g, dim, keepdim) / _count(self.shape, _all_dims(self, dim))


_var_mean = defop("var_mean", _var_mean_fwd, outputs=("var", "mean"),
                  vjp={"self": lambda xp, grads, self, dim, correction, keepdim:
                       _var_rule(xp, grads[0], self, dim, correction, keepdim)
                       + _mean_part(xp, grads[1], self, dim, keepdim)}, jvp="transpose")
_std_mean = defop("std_mean", lambda xp, self, dim, correction, keepdim:
                  _sqrt_first(xp, _var_mean_fwd(xp, self, dim, correction, keepdim)),
                  outputs=("std", "mean"),
                  vjp={"self": lambda xp, grads, self, std, dim, correction, keepdim:
                       _std_rule(xp, grads[0], self, std, dim, correction, keepdim)
                       + _mean_part(xp, grads[1], self, dim, keepdim)}, jvp="transpose")


def _sqrt_first(xp, pair):
    return xp.sqrt(pair[0]), pair[1]


def _var_args(name, input, dim, unbiased, keepdim, correction):
    """PyTorch's overloads: (dim, unbiased, keepdim), (unbiased), (dim, *, correction)."""
    if isinstance(dim, bool):  # var(input, unbiased)
        dim, unbiased = None, dim
    if unbiased is not None and correction is not None:
        raise TypeError(f"{name}() received an invalid combination of arguments: 'unbiased' "
                        f"and 'correction' cannot both be given")
    if not is_inexact(input._data.dtype):
        raise RuntimeError(f"{name} only support floating point and complex dtypes"
                           if name.endswith("_mean") else
                           "std and var only support floating point and complex dtypes")
    if correction is None:
        correction = 1 if unbiased is None or unbiased else 0
    dims = _reduce_dims(dim, input._data.ndim)
    # PyTorch's reduction factor: input numel over output numel (at least 1), so an empty
    # output of an empty input counts no elements
    shape = input._data.shape
    kept = _count(shape, tuple(d for d in range(len(shape)) if d not in dims))
    if math.prod(shape) // builtins.max(kept, 1) - correction <= 0:
        warnings.warn(f"{name}(): degrees of freedom is <= 0. Correction should be strictly "
                      f"less than the reduction factor (input numel divided by output numel).",
                      UserWarning, stacklevel=_observe.user_stacklevel())
    return (None if dim is None or input._data.ndim == 0 else dims), correction, keepdim


def _variance(name, op):
    def fn(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None):
        return apply(op, (input,), _var_args(name, input, dim, unbiased, keepdim, correction))
    fn.__name__ = fn.__qualname__ = name
    return fn


var = register(_variance("var", _var))
var.__doc__ = """Variance over ``dim`` with Bessel's ``correction`` (1 by default).

    >>> retrograd.tensor([1., 2., 3., 4.]).var()
    tensor(1.6667)
    """
std = register(_variance("std", _std))
std.__doc__ = "Standard deviation over ``dim``; see :func:`var`."
var_mean = register(_variance("var_mean", _var_mean), method=False)
var_mean.__doc__ = "``(var, mean)`` computed together, as a plain tuple."
std_mean = register(_variance("std_mean", _std_mean), method=False)
std_mean.__doc__ = "``(std, mean)`` computed together, as a plain tuple."


# ---- norm ---------------------------------------------------------------------------------

def _vector_norm(xp, self, p, dim, keepdim):
    if p == 2:
        return xp.sqrt((self * self).sum(axis=dim, keepdims=keepdim))
    a = xp.abs(self)
    if p == 1:
        return a.sum(axis=dim, keepdims=keepdim)
    if p == math.inf:
        return a.max(axis=dim, keepdims=keepdim)
    if p == -math.inf:
        return a.min(axis=dim, keepdims=keepdim)
    if p == 0:
        return (a != 0).sum(axis=dim, keepdims=keepdim, dtype=self.dtype)
    return (a ** p).sum(axis=dim, keepdims=keepdim) ** (1.0 / p)


def _norm_rule(xp, grad, self, result, p, dim, keepdim):
    """PyTorch's norm_backward: subgradient 0 at zero for p = 2 and p < 2; its sgn is 0 at
    NaN, so a NaN element gets no gradient."""
    if p == 0:
        return None
    grad = _unreduce(xp, grad, dim, keepdim)
    norm = _unreduce(xp, result, dim, keepdim)
    if p == 1:
        return _torch_sign(xp, self) * grad
    if p == 2:
        return grad * xp.where(norm == 0, 0, self / norm)
    a = xp.abs(self)
    if math.isinf(p):
        mask = (a == norm) | (a != a)
        return _torch_sign(xp, self) * (grad / xp.sum(mask, axis=dim, keepdims=True,
                                              dtype=grad.dtype)) * mask
    if p < 1:
        return (_torch_sign(xp, self) * xp.where(self == 0, 0, a ** (p - 1))) * grad \
            * norm ** (1 - p)
    scaled = _torch_sign(xp, self) * a ** (p - 1) if p < 2 else self * a ** (p - 2)
    return scaled * xp.where(norm == 0, 0, grad / norm ** (p - 1))


def _norm_fwd(xp, self, p, dim, keepdim, trivial):
    """``trivial``: every reduced dim has size 1, where PyTorch returns ``|x|`` (``x != 0``
    for p = 0) rather than the reduction's formula, whose power underflows or overflows."""
    if not trivial:
        return _vector_norm(xp, self, p, dim, keepdim)
    a = xp.abs(self) if p else xp.astype(self != 0, self.dtype)
    return a if keepdim else xp.reshape(a, tuple(n for d, n in enumerate(self.shape)
                                                 if d not in dim))


_norm = defop("norm", _norm_fwd, vjp={"self": _norm_rule}, node="LinalgVectorNormBackward0",
              jvp="transpose", upcast="forward")


# ---- logsumexp ----------------------------------------------------------------------------

def _logsumexp_fwd(xp, self, dim, keepdim):
    """Shift by the max (0 where it is infinite, so all -inf gives -inf, not NaN)."""
    if self.size == 0:
        return xp.log(xp.sum(xp.exp(self), axis=dim, keepdims=keepdim))
    m = self.max(axis=dim, keepdims=True)
    m = xp.where(xp.isinf(m), 0, m)
    out = xp.log(xp.exp(self - m).sum(axis=dim, keepdims=True)) + m
    return out if keepdim else xp.squeeze(out, dim)


_logsumexp = defop("logsumexp", kernel(_logsumexp_fwd, *_compiled("logsumexp")),
                   vjp={"self": lambda xp, grad, self, result, dim, keepdim:
                        _unreduce(xp, grad, dim, keepdim)
                        * xp.exp(self - _unreduce(xp, result, dim, keepdim))},
                   to_float=True, jvp="transpose")


@register
def logsumexp(input, dim, keepdim=False, *, out=None):
    """``log(sum(exp(input), dim))`` without overflow; integer inputs give floats.

    >>> retrograd.tensor([0., 0.]).logsumexp(0)
    tensor(0.6931)
    """
    if dim is None:
        raise TypeError("logsumexp(): argument 'dim' must be tuple of ints, not NoneType")
    return apply(_logsumexp, (input,), (_reduce_dims(dim, input._data.ndim), keepdim))


# ---- cumsum, cumprod ----------------------------------------------------------------------

# PyTorch's CPU scans accumulate in the dtype's acc_type and round each output: float32 in
# float64, float16 in float32. Their backward formulas are composites of ops in the
# input's dtype, so the scans do not upcast float16: the rules see it as PyTorch's do.
_SCAN_ACC = {float32.np: float64.np, float16.np: float32.np, bfloat16.np: float32.np}


def _scan(name):
    def forward(xp, self, dim, dtype):
        out = dtype if dtype is not None else self.dtype
        if self.ndim == 0:
            return xp.array(self, dtype=out)
        acc = _SCAN_ACC.get(out, out)
        return getattr(self.astype(out, copy=False), name)(axis=dim, dtype=acc).astype(
            out, copy=False)
    return forward


def _running(xp, name, x, dim):
    """``x``'s running sum or product along ``dim`` accumulated as the forward does. (Under
    create_graph ``x`` is a Tensor, whose dtype is no key here: the op accumulates.)"""
    acc = _SCAN_ACC.get(x.dtype)
    if acc is None:
        return getattr(xp, name)(x, dim)
    return xp.astype(getattr(xp, name)(xp.astype(x, acc), dim), x.dtype)


def _rcumsum(xp, g, dim):
    """Sum from the end: the adjoint of cumsum."""
    return xp.flip(_running(xp, "cumsum", xp.flip(g, dim), dim), dim)


def _cumprod_rule(xp, grad, self, result, dim):
    """PyTorch's cumprod_backward, step by step in the input's dtype: exact with zeros. Past
    the first zero along ``dim`` the gradient is zero; at it, the cumulative products that
    skip it; before it, the zero-free formula. That is exact to first order only; under
    create_graph (Tensors) zeros take PyTorch's O(n^2) formula, exact at every order."""
    if self.ndim == 0 or self.shape[dim] == 1:
        return grad
    w = result * grad
    if not functions(xp).any_true(self == 0):
        return _rcumsum(xp, w, dim) / self
    if isinstance(self, Tensor):
        return _cumprod_grad_exact(xp, grad, self, dim)
    zero = self == 0
    seen = xp.cumsum(zero, dim)
    first = zero & (seen == 1)
    before = seen == 0
    # PyTorch's masks: before the first zero, the sums of grad * result up to it; at it,
    # the products of the stretch to the second zero against its gradients (masked, not
    # the products, so an inf past the second zero still gives inf * 0), times the
    # output just before it
    between = (seen == 1) & ~first
    head = (slice(None),) * dim
    ones = xp.ones_like(result[head + (slice(0, 1),)])
    prefix = xp.concatenate([ones, result[head + (slice(None, -1),)]], axis=dim)
    at_first = _sum_acc(xp, _running(xp, "cumprod", xp.where(between, self, 1), dim)
                        * xp.where(seen == 1, grad, 0), dim) * prefix
    return xp.where(before, _rcumsum(xp, xp.where(before, w, 0), dim)
                    / xp.where(before, self, 1), xp.where(first, at_first, 0))


def _sum_acc(xp, x, dim):
    """A sum along ``dim`` (kept) as PyTorch's: float16 accumulates in float32."""
    if not is_low(x.dtype):
        return xp.sum(x, axis=dim, keepdims=True)
    return xp.astype(xp.sum(x, axis=dim, keepdims=True, dtype=float32.np), x.dtype)


def _cumprod_grad_exact(xp, grad, self, dim):
    """For every k, the cumulative products with x_k replaced by 1: an (n, n) matrix per
    slice, summed against the gradient over the positions i >= k."""
    x, g = xp.moveaxis(self, dim, -1), xp.moveaxis(grad, dim, -1)
    n = x.shape[-1]
    skip_k = xp.cumprod(xp.where(xp.eye(n, dtype=bool), 1, xp.expand_dims(x, -2)), -1)
    pos = xp.arange(n)
    d = xp.sum(xp.where(xp.expand_dims(pos, -1) <= pos, xp.expand_dims(g, -2) * skip_k, 0),
               axis=-1)
    return xp.moveaxis(d, -1, dim)


_cumsum = defop("cumsum", _scan("cumsum"),
                vjp={"self": lambda xp, grad, dim: grad if grad.ndim == 0
                     else _rcumsum(xp, grad, dim)}, jvp="linear", upcast=False)
_cumprod = defop("cumprod", _scan("cumprod"), vjp={"self": _cumprod_rule}, jvp="transpose",
                 upcast=False)


@register
def cumsum(input, dim, *, dtype=None, out=None):
    """Running sum along ``dim``; integer inputs give int64.

    >>> retrograd.tensor([1, 2, 3]).cumsum(0)
    tensor([1, 3, 6])
    """
    dtype = dtype_arg(dtype, "cumsum")
    return apply(_cumsum, (input,), (_dim1(dim, input._data.ndim), _acc_dtype(input, dtype)))


@register
def cumprod(input, dim, *, dtype=None, out=None):
    """Running product along ``dim``; the gradient is exact with zeros."""
    dtype = dtype_arg(dtype, "cumprod")
    return apply(_cumprod, (input,), (_dim1(dim, input._data.ndim), _acc_dtype(input, dtype)))


def _cumulative_(name, op, self, dim, dtype):
    """In place, the running op computes in ``self``'s dtype: PyTorch has no bool kernel."""
    if dtype is None and self._data.dtype.kind == "b":
        raise NotImplementedError(f'"{name}_out_cpu" not implemented for \'Bool\'')
    return apply_inplace(op, self, (), (_dim1(dim, self._data.ndim),
                                        dtype.np if dtype is not None else None))


@register(function=False)
def cumsum_(self, dim, *, dtype=None):
    dtype = dtype_arg(dtype, "cumsum_")
    return _cumulative_("cumsum", _cumsum, self, dim, dtype)


@register(function=False)
def cumprod_(self, dim, *, dtype=None):
    dtype = dtype_arg(dtype, "cumprod_")
    return _cumulative_("cumprod", _cumprod, self, dim, dtype)


# ---- all, any, count_nonzero --------------------------------------------------------------

def _logical(name):
    def forward(xp, self, dim, keepdim):
        r = getattr(self, name)(axis=dim, keepdims=keepdim)
        return r.astype(uint8.np) if self.dtype == uint8.np else r
    return forward


_all = defop("all", _logical("all"), inputs=_S)
_any = defop("any", _logical("any"), inputs=_S)
_count_nonzero = defop("count_nonzero", lambda xp, self, dim:
                       xp.asarray(xp.count_nonzero(self, axis=dim), dtype=_INT64), inputs=_S)


def _logical_dims(dim, ndim):
    # all/any with an empty dim list reduce nothing (unlike sum).
    return None if dim is None else _dims(dim, ndim)


@register
def all(input, dim=None, keepdim=False, *, out=None):
    """Whether every element (along ``dim``) is nonzero; bool (uint8 for uint8 input)."""
    return apply(_all, (input,), (_logical_dims(dim, input._data.ndim), keepdim))


@register
def any(input, dim=None, keepdim=False, *, out=None):
    """Whether some element (along ``dim``) is nonzero; bool (uint8 for uint8 input)."""
    return apply(_any, (input,), (_logical_dims(dim, input._data.ndim), keepdim))


@register
def count_nonzero(input, dim=None):
    """Number of nonzero elements (along ``dim``), as int64."""
    dims = None if dim is None else _reduce_dims(dim, input._data.ndim)
    return apply(_count_nonzero, (input,), (dims,))
