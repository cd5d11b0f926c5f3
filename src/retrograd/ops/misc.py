"""Commonly used odds and ends, mostly composites of existing ops as in PyTorch (their
grad_fn shows the inner ops): repeat_interleave, searchsorted, bucketize, meshgrid,
cartesian_prod, combinations, kron, diff, rot90, atleast_*d, dstack, column_stack,
hsplit/vsplit/dsplit, tril/triu_indices, block_diag, diagflat, trapezoid,
cumulative_trapezoid, histc, bincount, bernoulli, multinomial, poisson, and predicates.

rot90 and block_diag have backward nodes of their own in PyTorch, so they are primitives
here too; bernoulli and poisson record a node whose gradient is zero, as PyTorch's.
"""

import itertools
import operator
import warnings

import numpy

from .. import _dtype, _random, return_types
from .._tensor import Tensor, _wrap_dim, wrap
from ._registry import _pretty, apply, apply_inplace, defop, register
from .joining import _list_node, _record_list, _tensor_list, cat, stack, tensor_split
from .shape import _unsafe_view

__all__ = ["repeat_interleave", "searchsorted", "bucketize", "meshgrid", "cartesian_prod",
           "combinations", "kron", "diff", "rot90", "atleast_1d", "atleast_2d", "atleast_3d",
           "dstack", "column_stack", "row_stack", "hsplit", "vsplit", "dsplit", "tril_indices",
           "triu_indices", "block_diag", "diagflat", "trapezoid", "trapz",
           "cumulative_trapezoid", "histc", "bincount", "bernoulli", "multinomial", "poisson",
           "is_nonzero", "is_same_size", "is_signed", "detach", "ravel", "cov",
           "corrcoef", "vander", "adjoint", "gcd", "lcm", "can_cast", "histogram", "frexp"]

_INT64 = numpy.dtype(numpy.int64)


# ---- repeat_interleave, searchsorted, bucketize ---------------------------------------------

@register
def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """Repeat each element (slice along ``dim``; of the flattened input when None)
    ``repeats`` times; ``repeat_interleave(counts)`` gives the indices repeated."""
    if repeats is None:  # torch.repeat_interleave(repeats)
        r = input._data
        if r.ndim != 1:
            raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
        return wrap(numpy.repeat(numpy.arange(r.shape[0], dtype=_INT64), r))
    if dim is None:
        input, d = input.reshape(-1), 0
    else:
        d = _wrap_dim(dim, max(input._data.ndim, 1))
        if input._data.ndim == 0:
            input = input.reshape(1)
    n = input._data.shape[d]
    if isinstance(repeats, Tensor):
        r = repeats._data
        if r.ndim > 1:
            raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
        if r.size == 1:
            r = numpy.broadcast_to(r.reshape(-1), (n,))
        if r.shape[0] != n:
            raise RuntimeError("repeats must have the same size as input along dim, but got "
                               f"repeats.size(0) = {r.shape[0]} and input.size({d}) = {n}")
        if (r < 0).any():
            raise RuntimeError("repeats can not be negative")
        index = numpy.repeat(numpy.arange(n, dtype=_INT64), r)
        if output_size is not None and index.shape[0] != output_size:
            raise RuntimeError("allocated size does not match required size")
        return input.index_select(d, wrap(index))
    k = operator.index(repeats)
    if k < 0:
        raise RuntimeError("Repeats must be non-negative")
    shape = list(input._data.shape)
    expanded = input.unsqueeze(d + 1).expand(*shape[:d + 1], k, *shape[d + 1:])
    return expanded.contiguous().flatten(d, d + 1)


def _search(seq, values, right, side, sorter, out_int32, name="torch.searchsorted"):
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"{name}(): side can only be 'left' or 'right' but got {side}")
        if right and side == "left":
            raise RuntimeError(f"{name}(): side and right can't be set to opposites, got side "
                               f"of left while right was True")
        right = side == "right"
    s = seq._data
    v = values._data if isinstance(values, Tensor) else numpy.asarray(values)  # (no cast)
    if sorter is not None:
        s = numpy.take_along_axis(s, sorter._data, -1)
    how = "right" if right else "left"
    if s.ndim <= 1:
        out = numpy.searchsorted(s, v, side=how)
    else:
        if s.shape[:-1] != v.shape[:-1]:
            raise RuntimeError(f"{name}(): boundaries tensor should be 1 dimension or the first "
                               f"N-1 dimensions of boundaries tensor and input value tensor "
                               f"must match, but we got boundaries tensor {list(s.shape)} and "
                               f"input value tensor {list(v.shape)}")
        rows_s = s.reshape(-1, s.shape[-1])
        rows_v = v.reshape(-1, v.shape[-1])
        out = numpy.stack([numpy.searchsorted(a, b, side=how)
                           for a, b in zip(rows_s, rows_v, strict=True)]).reshape(v.shape)
    return wrap(numpy.asarray(out, numpy.int32 if out_int32 else _INT64))


@register(method=False)
def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None,
                 sorter=None, out=None):
    """Where ``input`` would be inserted into the innermost dim of ``sorted_sequence``."""
    return _search(sorted_sequence, input, right, side, sorter, out_int32)


@register(method=False)
def bucketize(input, boundaries, *, out_int32=False, right=False, out=None):
    """The bucket of each element: ``boundaries[i-1] < x <= boundaries[i]`` (``right``:
    ``boundaries[i-1] <= x < boundaries[i]``)."""
    if boundaries._data.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim("
                           f"{boundaries._data.ndim})")
    return _search(boundaries, input, right, None, None, out_int32)


# ---- meshgrid, cartesian_prod, combinations, kron ------------------------------------------

def _tensors_arg(tensors, fn):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    return _tensor_list(list(tensors), fn)


@register(method=False)
def meshgrid(*tensors, indexing=None):
    """Coordinate grids from 1-D (or 0-d) tensors: ``indexing='ij'`` (matrix, the
    default) or ``'xy'`` (Cartesian: the first two dims swapped)."""
    tensors = _tensors_arg(tensors, "meshgrid")
    if indexing is None:
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass "
                      "the indexing argument.", UserWarning, stacklevel=2)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but '
                           f'received: {indexing}')
    for t in tensors:
        if t._data.ndim > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list "
                               f"but got: {t}")
    swap = indexing == "xy" and len(tensors) >= 2
    if swap:
        tensors = [tensors[1], tensors[0], *tensors[2:]]
    shape = [t._data.size for t in tensors]
    n = len(tensors)
    grids = [t.reshape(*(s if i == k else 1 for k, s in enumerate(shape))).expand(*shape)
             for i, (t, s) in enumerate(zip(tensors, shape, strict=True))]
    if swap:  # the grids of the first two inputs, back in their order
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids) if n else ()


@register(method=False)
def cartesian_prod(*tensors):
    """Every combination of one element from each 1-D tensor, as rows."""
    tensors = _tensors_arg(tensors, "cartesian_prod")
    if len(tensors) == 1:
        return tensors[0]
    return stack([g.flatten() for g in meshgrid(*tensors, indexing="ij")], 1)


@register(method=False)
def combinations(input, r=2, with_replacement=False):
    """The length-``r`` subsequences of a 1-D tensor (itertools.combinations order)."""
    if input._data.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input._data.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return input.new_empty((0,))
    pick = itertools.combinations_with_replacement if with_replacement else \
        itertools.combinations
    idx = numpy.array(list(pick(range(input._data.shape[0]), r)), dtype=_INT64).reshape(-1, r)
    return stack([input[wrap(numpy.ascontiguousarray(idx[:, k]))] for k in range(r)], 1)


@register
def kron(input, other, *, out=None):
    """The Kronecker product (dims aligned from the right, as PyTorch)."""
    nd = max(input._data.ndim, other._data.ndim)
    a = input.reshape((1,) * (nd - input._data.ndim) + tuple(input._data.shape))
    b = other.reshape((1,) * (nd - other._data.ndim) + tuple(other._data.shape))
    prod = a.reshape(*(x for s in a._data.shape for x in (s, 1))) * \
        b.reshape(*(x for s in b._data.shape for x in (1, s)))
    # a fresh product: PyTorch's _unsafe_view of it (UnsafeViewBackward0)
    return apply(_unsafe_view, (prod,), (tuple(a._data.shape[k] * b._data.shape[k]
                                                for k in range(nd)),))


# ---- diff, rot90 ----------------------------------------------------------------------------

@register
def diff(input, n=1, dim=-1, prepend=None, append=None):
    """The ``n``-th forward difference along ``dim``, after joining ``prepend``/``append``."""
    if input._data.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    d = _wrap_dim(dim, input._data.ndim)
    if prepend is not None or append is not None:
        parts = [prepend, input, append]
        input = cat([p if p._data.ndim else p.expand(*(1 if k == d else s for k, s in
                                                        enumerate(input._data.shape)))
                     for p in parts if p is not None], d)
    for _ in range(n):
        size = input._data.shape[d]
        if size == 0:
            break
        input = input.narrow(d, 1, size - 1) - input.narrow(d, 0, size - 1)
    return input


def _rot(xp, a, k, dims):
    """NumPy's rot90 from flip and swapaxes (which every array module here has)."""
    d0, d1 = dims
    k %= 4
    if k == 0:
        return a
    if k == 2:
        return xp.flip(xp.flip(a, d0), d1)
    if k == 1:
        return xp.swapaxes(xp.flip(a, d1), d0, d1)
    return xp.flip(xp.swapaxes(a, d0, d1), d1)


_rot90 = defop("rot90",
               lambda xp, self, k, dims: xp.ascontiguousarray(_rot(xp, self, k, dims)),
               vjp={"self": lambda xp, grad, k, dims: _rot(xp, grad, -k, dims)},
               jvp=lambda xp, self_t, k, dims: _rot(xp, self_t, k, dims))


@register
def rot90(input, k=1, dims=(0, 1)):
    """Rotate by 90 degrees ``k`` times in the plane ``dims``, from the first toward the
    second."""
    dims = tuple(dims)
    nd = input._data.ndim
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if nd < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {nd}")
    if dims[0] == dims[1] or abs(dims[0] - dims[1]) == nd:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {dims[0]} "
                           f"and dim1 = {dims[1]}")
    d = tuple(_wrap_dim(x, nd) for x in dims)
    return apply(_rot90, (input,), (k % 4, d))


# ---- atleast_*d, stacking and splitting -----------------------------------------------------

def _atleast_view(t, n):
    """``t`` with at least ``n`` dims, as PyTorch makes it: unsqueeze, or a reshape of a
    0-d tensor."""
    s = t._data.shape
    if len(s) >= n:
        return t
    if len(s) == 0:
        return t.reshape((1,) * n)
    if n == 2 or len(s) == 2:
        return t.unsqueeze(0 if n == 2 else -1)
    return t.unsqueeze(0).unsqueeze(-1)  # 1-d to 3-d: (1, N, 1)


def _atleast(n):
    def fn(*tensors):
        if len(tensors) == 1 and isinstance(tensors[0], Tensor):
            return _atleast_view(tensors[0], n)
        ts = tensors[0] if len(tensors) == 1 else tensors
        return tuple(_atleast_view(t, n) for t in ts)
    fn.__name__ = fn.__qualname__ = f"atleast_{n}d"
    fn.__doc__ = f"The tensor(s) with at least {n} dims (views)."
    return register(fn, method=False)


atleast_1d = _atleast(1)
atleast_2d = _atleast(2)
atleast_3d = _atleast(3)


@register(method=False)
def dstack(tensors):
    """Join along the third dim (after atleast_3d)."""
    tensors = _tensor_list(tensors, "dstack")
    return cat([_atleast_view(t, 3) for t in tensors], 2)


@register(method=False)
def column_stack(tensors):
    """Join as columns: 0-d and 1-d tensors become columns, the others join along dim 1."""
    tensors = _tensor_list(tensors, "column_stack")
    return cat([t.reshape(t._data.size, 1) if t._data.ndim <= 1 else t for t in tensors], 1)


@register(method=False)
def row_stack(tensors):
    """Alias of :func:`vstack`."""
    from .joining import vstack
    return vstack(tensors)


def _split_fn(name, dim, min_dims):
    def fn(input, indices_or_sections):
        nd = input._data.ndim
        if nd < min_dims:
            raise RuntimeError(f"torch.{name} requires a tensor with at least {min_dims} "
                               f"dimension, but got a tensor with {nd} dimensions!")
        d = 0 if name == "hsplit" and nd == 1 else dim
        if isinstance(indices_or_sections, int):
            size = input._data.shape[d]
            if indices_or_sections == 0 or size % indices_or_sections:
                raise RuntimeError(f"torch.{name} attempted to split along dimension {d}, but "
                                   f"the size of the dimension {size} is not divisible by the "
                                   f"split_size {indices_or_sections}!")
        return tensor_split(input, indices_or_sections, d)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``tensor_split`` along dim {dim} (sections must divide it evenly)."
    return register(fn)


hsplit = _split_fn("hsplit", 1, 1)
vsplit = _split_fn("vsplit", 0, 2)
dsplit = _split_fn("dsplit", 2, 3)


def _tri_indices(row, col, offset, dtype, upper):
    if dtype not in (_dtype.int64, _dtype.int32):
        raise RuntimeError(f"\"tri{'u' if upper else 'l'}_indices\" not implemented for "
                           f"'{dtype}'")
    i, j = (numpy.triu_indices if upper else numpy.tril_indices)(row, offset, col)
    return wrap(numpy.stack([i, j]).astype(dtype.np).reshape(2, -1))


@register(method=False)
def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """The (2, N) coordinates of the lower triangle of a row x col matrix, row by row."""
    return _tri_indices(row, col, offset, dtype or _dtype.int64, False)


@register(method=False)
def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """The (2, N) coordinates of the upper triangle of a row x col matrix, row by row."""
    return _tri_indices(row, col, offset, dtype or _dtype.int64, True)


def _block_diag_vjp(xp, grads, shapes):
    g = grads[0]
    out, r, c = [], 0, 0
    for s in shapes:
        h, w = (1, 1) if len(s) == 0 else (1, s[0]) if len(s) == 1 else s
        block = g[r:r + h, c:c + w]
        out.append(xp.reshape(block, s))
        r, c = r + h, c + w
    return out


def _block_diag_jvp(xp, tangents, outs):
    return _block_diag_arrays(xp, tangents, outs[0].dtype)


def _block_diag_arrays(xp, arrays, dtype):
    mats = [a.reshape(1, -1) if a.ndim == 1 else a.reshape(1, 1) if a.ndim == 0 else a
            for a in arrays]
    out = xp.zeros((sum(m.shape[0] for m in mats), sum(m.shape[1] for m in mats)), dtype)
    r = c = 0
    for m in mats:
        out[r:r + m.shape[0], c:c + m.shape[1]] = m
        r, c = r + m.shape[0], c + m.shape[1]
    return out


_BlockDiagBackward0 = _list_node("BlockDiagBackward0", _block_diag_vjp, _block_diag_jvp)


@register(method=False)
def block_diag(*tensors):
    """The tensors (0-d, 1-d as a row, 2-d) along the diagonal of a zero matrix."""
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got "
                            f"{type(t).__name__}")
        if t._data.ndim > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer "
                               f"dimensions. Input {i} has {t._data.ndim} dimensions")
    if not tensors:
        return wrap(numpy.zeros((1, 0), _dtype.get_default_dtype().np))
    dtype = _dtype.result_type(*tensors).np  # PyTorch's promotion, not NumPy's
    out = _block_diag_arrays(numpy, [t._data for t in tensors], dtype)
    return _record_list(_BlockDiagBackward0, list(tensors), out, ())


@register
def diagflat(input, offset=0):
    """A matrix with the flattened input on diagonal ``offset``."""
    return input.reshape(-1).diag_embed(offset)


# ---- trapezoid ------------------------------------------------------------------------------

def _dx_along(x, y, d):
    if x._data.ndim == 1:
        dx = x[1:] - x[:-1]
        return dx.reshape(*(-1 if k == d else 1 for k in range(y._data.ndim)))
    return x.narrow(d, 1, x._data.shape[d] - 1) - x.narrow(d, 0, x._data.shape[d] - 1)


@register(method=False)
def trapezoid(y, x=None, *, dx=None, dim=-1):
    """The trapezoidal rule along ``dim``, with sample points ``x`` or spacing ``dx``."""
    d = _wrap_dim(dim, y._data.ndim)
    n = y._data.shape[d]
    if isinstance(x, Tensor):
        if dx is not None:
            raise RuntimeError("trapezoid: received both x and dx")
        if n == 0:
            return y.sum(d)
        return ((y.narrow(d, 1, n - 1) + y.narrow(d, 0, n - 1)) * _dx_along(x, y, d)).sum(d) / 2
    step = 1 if dx is None and x is None else (dx if dx is not None else x)
    if n == 0:
        return y.sum(d)
    return (y.sum(d) - (y.select(d, 0) + y.select(d, -1)) * 0.5) * step


@register(method=False)
def trapz(y, x=None, *, dx=None, dim=-1):
    """Alias of :func:`trapezoid`."""
    return trapezoid(y, x, dx=dx, dim=dim)


@register(method=False)
def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """The running trapezoidal integral along ``dim`` (one element shorter)."""
    d = _wrap_dim(dim, y._data.ndim)
    n = y._data.shape[d]
    pair = y.narrow(d, 1, max(n - 1, 0)) + y.narrow(d, 0, max(n - 1, 0))
    if isinstance(x, Tensor):
        return (pair * _dx_along(x, y, d)).cumsum(d) / 2
    step = 1 if dx is None and x is None else (dx if dx is not None else x)
    return (pair * (step / 2)).cumsum(d)


# ---- histograms, counts ---------------------------------------------------------------------

@register
def histc(input, bins=100, min=0, max=0, *, out=None):
    """Histogram of ``bins`` equal bins over [min, max] (the data's range when both are 0);
    elements outside are ignored."""
    a = input._data
    if a.dtype.kind != "f":
        raise NotImplementedError(f"\"histogram_cpu\" not implemented for '{_pretty(a.dtype)}'")
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for "
                           f"dimension 0")
    if min > max:
        raise RuntimeError("torch.histc: max must be larger than min")
    lo, hi = float(min), float(max)
    if lo == hi and a.size:
        lo, hi = float(a.min()), float(a.max())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    hist, _ = numpy.histogram(a, bins=bins, range=(lo, hi))
    return wrap(hist.astype(a.dtype))


@register
def histogram(input, bins, *, range=None, weight=None, density=False, out=None):
    """``(hist, bin_edges)``: ``bins`` equal bins over ``range`` (the data's by default) or
    the given edges; the last bin includes its right edge."""
    a = input._data
    if a.dtype.kind != "f":
        raise NotImplementedError(f"\"histogram_cpu\" not implemented for '{_pretty(a.dtype)}'")
    edges = bins._data if isinstance(bins, Tensor) else bins
    if not isinstance(bins, Tensor) and bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for "
                           f"dimension 0")
    hist, edges = numpy.histogram(a, bins=edges, range=range, density=density,
                                  weights=None if weight is None else weight._data)
    return return_types.histogram((wrap(hist.astype(a.dtype)), wrap(edges.astype(a.dtype))))


@register
def bincount(input, weights=None, minlength=0):
    """Occurrences of each non-negative integer (summed ``weights`` when given)."""
    a = input._data
    if a.dtype.kind not in "iub":
        raise NotImplementedError(f"\"bincount_cpu\" not implemented for '{_pretty(a.dtype)}'")
    if a.ndim != 1 or (a.size and a.min() < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is None:
        return wrap(numpy.bincount(a, minlength=minlength).astype(_INT64))
    w = weights._data
    dt = w.dtype if w.dtype.kind == "f" else numpy.dtype(numpy.float64)
    return wrap(numpy.bincount(a, w, minlength=minlength).astype(dt))


# ---- random sampling ------------------------------------------------------------------------

def _gen(generator):
    return (generator or _random.default_generator)._rng


def _zero(xp, grad):
    return xp.zeros_like(grad)


_bernoulli = defop("bernoulli", lambda xp, self, rng:
                   (rng.random(self.shape) < self).astype(self.dtype),
                   vjp={"self": _zero}, jvp="elementwise")
_poisson = defop("poisson", lambda xp, self, rng: rng.poisson(self).astype(self.dtype),
                 vjp={"self": _zero}, jvp="elementwise")


@register
def bernoulli(input, p=None, *, generator=None, out=None):
    """1 with probability ``input`` (or ``p``) elementwise, else 0, in input's dtype."""
    rng = _gen(generator)
    if p is not None:
        return wrap((rng.random(input._data.shape) < p).astype(input._data.dtype))
    return apply(_bernoulli, (input,), (rng,))


@register(function=False)
def bernoulli_(self, p=0.5, *, generator=None):
    rng = _gen(generator)
    prob = p._data if isinstance(p, Tensor) else p
    return self.copy_(wrap((rng.random(self._data.shape) < prob).astype(self._data.dtype)))


@register(method=False)
def poisson(input, generator=None):
    """A Poisson sample with rate ``input`` elementwise."""
    return apply(_poisson, (input,), (_gen(generator),))


@register
def multinomial(input, num_samples, replacement=False, *, generator=None, out=None):
    """``num_samples`` category indices per row, drawn with probabilities proportional to
    the (non-negative) weights in ``input``."""
    a = input._data
    if a.dtype.kind != "f":
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: "
                           f"{_pretty(a.dtype)}")
    if a.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    if not replacement and num_samples > a.shape[-1]:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without "
                           "replacement")
    if not numpy.isfinite(a).all() or (a < 0).any():
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    rows = a.reshape(-1, a.shape[-1]).astype(numpy.float64)
    total = rows.sum(-1, keepdims=True)
    if (total <= 0).any():
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    rng = _gen(generator)
    if replacement:
        cdf = numpy.cumsum(rows / total, -1)
        u = rng.random((rows.shape[0], num_samples))
        out = numpy.stack([numpy.searchsorted(c, x, side="right") for c, x in zip(cdf, u,
                                                                                     strict=True)])
        out = numpy.minimum(out, rows.shape[1] - 1)
    else:  # Gumbel top-k: the order of exponential races, weights as rates
        keys = rng.exponential(size=rows.shape) / numpy.where(rows > 0, rows, numpy.nan)
        out = numpy.argsort(numpy.where(numpy.isnan(keys), numpy.inf, keys), -1,
                            kind="stable")[:, :num_samples]
    return wrap(out.reshape(a.shape[:-1] + (num_samples,)).astype(_INT64))


# ---- predicates and small utilities ---------------------------------------------------------

@register
def frexp(input, *, out=None):
    """``(mantissa, exponent)`` with ``input = mantissa * 2 ** exponent``, |mantissa| in
    [0.5, 1); the exponent is int32."""
    a = input._data
    if a.dtype.kind != "f":
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    m, e = numpy.frexp(a)
    return return_types.frexp((wrap(m), wrap(e.astype(numpy.int32))))


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
    return input._data.dtype.kind in "ifc"


@register(method=False)
def detach(input):
    return input.detach()


@register
def ravel(input):
    """The flattened tensor (a view of a contiguous input)."""
    return input.contiguous().view(-1)


@register
def nan_to_num_(self, nan=0.0, posinf=None, neginf=None):
    from .pointwise import _nan_to_num
    return apply_inplace(_nan_to_num, self, (), (nan, posinf, neginf))


# ---- dtype limits, threads, Tensor predicates -----------------------------------------------

def _g(x):
    return format(x, ".6g")


@register(method=False)
class finfo:
    """``torch.finfo``: the limits of a floating dtype (the default dtype when None)."""

    def __init__(self, type=None):
        dt = type or _dtype.get_default_dtype()
        if dt.np.kind not in "fc":
            raise TypeError("torch.finfo() requires a floating point input type. Use "
                            "torch.iinfo to handle 'torch.finfo'")
        info = numpy.finfo(dt.np)
        self.bits = info.bits
        self.eps, self.max, self.min = float(info.eps), float(info.max), float(info.min)
        self.tiny = self.smallest_normal = float(info.smallest_normal)
        self.resolution = 10.0 ** -info.precision
        self.dtype = info.dtype.name

    def __eq__(self, other):
        return isinstance(other, finfo) and other.dtype == self.dtype

    __hash__ = object.__hash__

    def __repr__(self):
        return (f"finfo(resolution={_g(self.resolution)}, min={_g(self.min)}, "
                f"max={_g(self.max)}, eps={_g(self.eps)}, "
                f"smallest_normal={_g(self.smallest_normal)}, tiny={_g(self.tiny)}, "
                f"dtype={self.dtype})")


@register(method=False)
class iinfo:
    """``torch.iinfo``: the limits of an integer dtype."""

    def __init__(self, type):
        if type.np.kind == "b":
            raise TypeError("torch.bool is not supported by torch.iinfo")
        if type.np.kind not in "iu":
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo "
                            "to handle 'torch.iinfo'")
        info = numpy.iinfo(type.np)
        self.bits, self.max, self.min = info.bits, int(info.max), int(info.min)
        self.dtype = type.np.name

    def __eq__(self, other):
        return isinstance(other, iinfo) and other.dtype == self.dtype

    __hash__ = object.__hash__

    def __repr__(self):
        return f"iinfo(min={_g(self.min)}, max={_g(self.max)}, dtype={self.dtype})"


def _blas_pools():
    try:
        import threadpoolctl
    except ImportError:
        return None, None
    return threadpoolctl, threadpoolctl.threadpool_info()


@register(method=False)
def get_num_threads():
    """The threads of NumPy's BLAS (what runs retrograd's dense work), read through
    threadpoolctl; without it, the CPU count (BLAS's default)."""
    import os
    _, pools = _blas_pools()
    blas = [p["num_threads"] for p in pools or () if p.get("user_api") == "blas"]
    return max(blas) if blas else os.cpu_count() or 1


@register(method=False)
def set_num_threads(int):
    """Limit NumPy's BLAS to ``int`` threads (through threadpoolctl; without it, set
    ``OMP_NUM_THREADS`` before starting Python instead: NumPy reads it once)."""
    n = operator.index(int)
    if n <= 0:
        raise RuntimeError("set_num_threads expects a positive integer")
    tpc, _ = _blas_pools()
    if tpc is None:
        raise NotImplementedError("set_num_threads needs threadpoolctl (pip install "
                                  "threadpoolctl), or set OMP_NUM_THREADS before starting")
    tpc.threadpool_limits(limits=n, user_api="blas")


def _get_device(self):
    """-1 for CPU tensors, the GPU's index otherwise."""
    dev = self.device
    return -1 if dev.type == "cpu" else dev.index


Tensor.get_device = _get_device


# ---- cov, corrcoef, vander, adjoint, gcd, lcm, can_cast -------------------------------

@register
def cov(input, *, correction=1, fweights=None, aweights=None):
    """Covariance of the variables in the rows of ``input`` (observations in columns),
    with integer frequency and float importance weights, as PyTorch computes it."""
    if input._data.dtype.kind in "biu":  # integers are averaged in the default float type
        input = input.to(_dtype.get_default_dtype())
    x = input if input._data.ndim == 2 else input.reshape(1, -1)
    if input._data.ndim > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an "
                           f"input with {input._data.ndim} dimensions")
    n = x._data.shape[1]
    w = None
    if fweights is not None:
        w = fweights
    if aweights is not None:
        w = aweights if w is None else w * aweights
    if w is None:
        avg = x.mean(1)
        w_sum = n
        norm = w_sum - correction
    else:
        w_sum = w.sum()
        avg = (x * w).sum(1) / w_sum
        if aweights is None or correction == 0:
            norm = w_sum - correction
        else:
            norm = w_sum - correction * (w * aweights).sum() / w_sum
    norm_value = float(norm.item() if isinstance(norm, Tensor) else norm)
    if norm_value <= 0:
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less "
                      "than the number of observations.", UserWarning, stacklevel=2)
        norm = 0
    x = x - avg.unsqueeze(1)
    c = x.mm((x if w is None else x * w).t())
    return (c / norm).squeeze()


@register
def corrcoef(input):
    """Pearson correlation coefficients of the rows of ``input``, clipped to [-1, 1]."""
    c = cov(input)
    if c._data.ndim == 0:
        return c / c
    std = c.diagonal().sqrt()
    c = c / std.reshape(-1, 1)
    c = c / std.reshape(1, -1)
    return c.clip(-1, 1)


@register(method=False)
def vander(x, N=None, increasing=False):
    """The Vandermonde matrix of a 1-D ``x``: columns ``x ** (N-1) ... x ** 0`` (or
    increasing powers)."""
    if x._data.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x._data.shape[0] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    if x._data.dtype.kind in "biu" and x._data.dtype != numpy.int64:
        x = x.to(_dtype.int64)
    cols = [x.new_ones((x._data.shape[0], min(n, 1)))]
    if n > 1:
        cols.append(x.unsqueeze(1).expand(x._data.shape[0], n - 1))
    out = cat(cols, 1).cumprod(1)
    return out if increasing else out.flip(1)


@register
def adjoint(input):
    """The conjugate transpose of the last two dims (a view; real tensors: ``mT``)."""
    if input._data.ndim < 2:
        raise RuntimeError(f"tensor.adjoint() is only supported on matrices or batches of "
                           f"matrices. Got {input._data.ndim}-D tensor.")
    return input.transpose(-2, -1)


def _int_binary(name, ufunc):
    def check(input, other):
        for t in (input, other):
            if isinstance(t, Tensor) and t._data.dtype.kind not in "iu":
                raise NotImplementedError(f"\"{name}_cpu\" not implemented for "
                                          f"'{_pretty(t._data.dtype)}'")

    def fn(input, other, *, out=None):
        check(input, other)
        return wrap(getattr(numpy, ufunc)(input._data, other._data))

    def fn_(self, other):
        check(self, other)
        return self.copy_(wrap(getattr(numpy, ufunc)(self._data, other._data)))
    fn.__name__ = fn.__qualname__ = name
    fn_.__name__ = fn_.__qualname__ = name + "_"
    fn.__doc__ = f"Elementwise ``{name}`` of integer tensors."
    register(fn_, function=True)
    return register(fn)


gcd = _int_binary("gcd", "gcd")
lcm = _int_binary("lcm", "lcm")


@register(method=False)
def can_cast(from_, to):
    """Whether PyTorch's casting rules allow ``from_`` to ``to`` in type-promoting ops:
    never to a lower category (complex > float > integer > bool)."""
    return from_.category <= to.category


def _sampler(name, draw, doc):
    def fn(self, *args, generator=None):
        return self.copy_(wrap(numpy.asarray(draw((generator or _random.default_generator)._rng,
                                                  self._data.shape, *args))))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return register(fn, function=False)


exponential_ = _sampler("exponential_", lambda g, shape, lambd=1.0:
                        g.exponential(1 / lambd, shape), "Fill with Exp(lambd) samples.")
geometric_ = _sampler("geometric_", lambda g, shape, p: g.geometric(p, shape),
                      "Fill with Geometric(p) samples (trials to the first success).")
log_normal_ = _sampler("log_normal_", lambda g, shape, mean=1.0, std=2.0:
                       g.lognormal(mean, std, shape),
                       "Fill with samples whose log is N(mean, std**2).")
cauchy_ = _sampler("cauchy_", lambda g, shape, median=0.0, sigma=1.0:
                   median + sigma * g.standard_cauchy(shape),
                   "Fill with Cauchy(median, sigma) samples.")
