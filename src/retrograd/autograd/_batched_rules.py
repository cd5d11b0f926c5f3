"""The batching rules of NumPy functions that rules call on batched arrays (reductions,
scans, views and joins, gathers, products, padding, linear algebra): each maps the
function's axes past the batch dim of :class:`~._batched.Batched` arrays and runs it
once on the whole batch. Registered in ``_batched._FUNCS``, which the arrays'
``__array_function__`` consults; ``autograd`` imports this module with ``_batched``."""

import operator

import numpy

from ..backend.functions import functions
from ._batched import (INPLACE, _FUNCS, Batched, _batch, _batch_of, _expand_dims,
                       _full_batch, _lift, _ndim, _norm, _ravel, _reshape, _rule,
                       _shape_tuple, _ufunc_call)

__all__ = []

def _reduction(name):
    np_fn = getattr(numpy, name)

    def reduce(a, axis=None, *args, keepdims=False, **kwargs):
        nd = a.ndim
        ax = tuple(range(1, nd + 1)) if axis is None else _norm(axis, nd)
        return Batched(np_fn(a.data, ax, *args, keepdims=keepdims, **kwargs))
    return reduce


for _name in ("sum", "mean", "prod", "max", "min", "amax", "amin", "any", "all", "nansum",
              "nanmean", "nanmax", "nanmin", "var", "std", "count_nonzero"):
    _FUNCS[getattr(numpy, _name)] = _reduction(_name)


def _arg_reduction(np_fn):
    def reduce(a, axis=None, out=None, *, keepdims=False):
        d = a.data
        if axis is None:
            r = np_fn(d.reshape(d.shape[0], -1), 1)
            return Batched(r.reshape((-1,) + (1,) * a.ndim) if keepdims else r)
        return Batched(np_fn(d, _norm(axis, a.ndim), keepdims=keepdims))
    return reduce


_FUNCS[numpy.argmax] = _arg_reduction(numpy.argmax)
_FUNCS[numpy.argmin] = _arg_reduction(numpy.argmin)


def _along(np_fn):
    """A function along one axis (sort, argsort, partition): the axis past the batch dim."""
    def fn(a, *args, axis=-1, **kwargs):
        if args and not isinstance(args[0], str):
            axis, args = args[0], args[1:]
        if axis is None:
            return Batched(np_fn(a.data.reshape(a.data.shape[0], -1), *args, axis=1, **kwargs))
        return Batched(np_fn(a.data, *args, axis=_norm(axis, a.ndim), **kwargs))
    return fn


for _fn in (numpy.sort, numpy.argsort):
    _FUNCS[_fn] = _along(_fn)


def _partition(np_fn):
    """partition and argpartition: ``kth`` first, then the axis."""
    def fn(a, kth, axis=-1, **kwargs):
        if axis is None:
            return Batched(np_fn(a.data.reshape(a.data.shape[0], -1), kth, axis=1, **kwargs))
        return Batched(np_fn(a.data, kth, axis=_norm(axis, a.ndim), **kwargs))
    return fn


for _fn in (numpy.partition, numpy.argpartition):
    _FUNCS[_fn] = _partition(_fn)


@_rule(numpy.unravel_index)
def _unravel_index(indices, shape, order="C"):
    """Elementwise on the flat indices (the shape is one for the whole batch)."""
    return tuple(Batched(a) for a in numpy.unravel_index(indices.data, shape, order=order))


def _scan(np_fn):
    def scan(a, axis=None, dtype=None, out=None):
        if axis is None:
            return Batched(np_fn(a.data.reshape(a.data.shape[0], -1), 1, dtype))
        return Batched(np_fn(a.data, _norm(axis, a.ndim), dtype))
    return scan


_FUNCS[numpy.cumsum] = _scan(numpy.cumsum)
_FUNCS[numpy.cumprod] = _scan(numpy.cumprod)


def _elementwise(np_fn):
    def fn(*args, **kwargs):
        return _ufunc_call(np_fn, args, kwargs)
    return fn


for _fn in (numpy.where, numpy.clip, numpy.round, numpy.around, numpy.isreal, numpy.isposinf,
            numpy.isneginf, numpy.sinc, numpy.nan_to_num, numpy.real_if_close):
    _FUNCS[_fn] = _elementwise(_fn)


@_rule(numpy.moveaxis)
def _moveaxis(a, source, destination):
    return Batched(numpy.moveaxis(a.data, _norm(source, a.ndim), _norm(destination, a.ndim)))


@_rule(numpy.flip)
def _flip(m, axis=None):
    nd = m.ndim
    return Batched(numpy.flip(m.data, tuple(range(1, nd + 1)) if axis is None
                              else _norm(axis, nd)))


@_rule(numpy.roll)
def _roll(a, shift, axis=None):
    if axis is None:
        d = a.data
        return Batched(numpy.roll(d.reshape(d.shape[0], -1), shift, 1).reshape(d.shape))
    return Batched(numpy.roll(a.data, shift, _norm(axis, a.ndim)))


@_rule(numpy.concatenate, numpy.concat)
def _concatenate(arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    batch = _batch_of(arrays)
    if axis is None:
        arrays = [_ravel(a) if type(a) is Batched else numpy.ravel(a) for a in arrays]
        axis = 0
    nd = max(_ndim(a) for a in arrays)
    return Batched(numpy.concatenate([_full_batch(a, batch) for a in arrays], _norm(axis, nd),
                                     dtype=dtype, casting=casting))


@_rule(numpy.stack)
def _stack(arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    batch = _batch_of(arrays)
    nd = max(_ndim(a) for a in arrays)
    return Batched(numpy.stack([_full_batch(a, batch) for a in arrays], _norm(axis, nd + 1),
                               dtype=dtype, casting=casting))


@_rule(numpy.tile)
def _tile(A, reps):
    reps = _shape_tuple(reps)
    nd = max(A.ndim, len(reps))
    reps = (1,) * (nd - len(reps)) + reps
    return Batched(numpy.tile(_lift(A, nd), (1,) + reps))


def _splitter(np_fn):
    def split(ary, indices_or_sections, axis=0):
        return [Batched(p) for p in np_fn(ary.data, indices_or_sections, _norm(axis, ary.ndim))]
    return split


_FUNCS[numpy.split] = _splitter(numpy.split)
_FUNCS[numpy.array_split] = _splitter(numpy.array_split)


@_rule(numpy.diag)
def _diag(v, k=0):
    """A vector's diagonal matrix, or a matrix's diagonal."""
    if v.ndim == 2:
        return _diagonal(v, k)
    d = v.data
    n = d.shape[1] + abs(k)
    out = numpy.zeros_like(d, shape=(d.shape[0], n, n))  # (a batch itself when nested)
    i = numpy.arange(d.shape[1])
    out[:, i + max(-k, 0), i + max(k, 0)] = d
    return Batched(out)


@_rule(numpy.trace)
def _trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    return Batched(numpy.trace(a.data, offset, _norm(axis1, a.ndim), _norm(axis2, a.ndim),
                               dtype))


@_rule(numpy.diagonal)
def _diagonal(a, offset=0, axis1=0, axis2=1):
    return Batched(numpy.diagonal(a.data, offset, _norm(axis1, a.ndim), _norm(axis2, a.ndim)))


def _tri_rule(np_fn):
    def fn(m, k=0):
        if m.ndim < 2:
            raise NotImplementedError(f"batched: numpy.{np_fn.__name__} of a 1-d array")
        return Batched(np_fn(m.data, k))
    return fn


_FUNCS[numpy.tril] = _tri_rule(numpy.tril)
_FUNCS[numpy.triu] = _tri_rule(numpy.triu)


@_rule(numpy.take_along_axis)
def _take_along_axis(arr, indices, axis=-1):
    if type(indices) is Batched:
        batch = indices.data.shape[0]
        if axis is None:
            return numpy.take_along_axis(_reshape(_batch(arr, batch), (-1,)),
                                         _reshape(indices, (-1,)), 0)
        nd = _ndim(arr)
        return Batched(numpy.take_along_axis(_full_batch(arr, batch), _lift(indices, nd),
                                             _norm(axis, nd)))
    d = arr.data
    if axis is None:
        d, axis, indices = d.reshape(d.shape[0], -1), 0, numpy.ravel(indices)
    return Batched(numpy.take_along_axis(d, indices[None], _norm(axis, arr.ndim)))


@_rule(numpy.put_along_axis)
def _put_along_axis(arr, indices, values, axis):
    if type(arr) is not Batched:
        raise RuntimeError(INPLACE)
    nd = arr.ndim
    idx = _lift(indices, nd) if type(indices) is Batched else indices[None]
    numpy.put_along_axis(arr.data, idx, _lift(values, nd), _norm(axis, nd))


@_rule(numpy.outer)
def _outer(a, b, out=None):
    a = _ravel(a) if type(a) is Batched else numpy.ravel(a)
    b = _ravel(b) if type(b) is Batched else numpy.ravel(b)
    return _ufunc_call(numpy.multiply, (_expand_dims(a, 1) if type(a) is Batched
                                        else a[:, None], b), {})


_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


@_rule(numpy.einsum)
def _einsum(subscripts, *operands, **kwargs):
    if "->" in subscripts:
        ins, out = subscripts.replace(" ", "").split("->")
    else:  # NumPy's implicit output: the letters seen once, in order, after any ellipsis
        ins = subscripts.replace(" ", "")
        letters = ins.replace(",", "").replace(".", "")
        out = ("..." if "..." in ins else "") + "".join(
            sorted(c for c in set(letters) if letters.count(c) == 1))
    z = next(c for c in _LETTERS if c not in subscripts)
    terms = [z + t if type(o) is Batched else t
             for t, o in zip(ins.split(","), operands, strict=True)]
    data = [o.data if type(o) is Batched else o for o in operands]
    return Batched(numpy.einsum(",".join(terms) + "->" + z + out, *data, **kwargs))


@_rule(numpy.tensordot)
def _tensordot(a, b, axes=2):
    na, nb = _ndim(a), _ndim(b)
    if isinstance(axes, int):
        ax_a, ax_b = tuple(range(na - axes, na)), tuple(range(axes))
    else:
        ax_a, ax_b = axes
        ax_a = (ax_a,) if isinstance(ax_a, int) else tuple(ax_a)
        ax_b = (ax_b,) if isinstance(ax_b, int) else tuple(ax_b)
    ax_a = tuple(x % na for x in ax_a)
    ax_b = tuple(x % nb for x in ax_b)
    la, lb = _LETTERS[:na], _LETTERS[na:na + nb]
    lb = "".join(la[ax_a[ax_b.index(i)]] if i in ax_b else c for i, c in enumerate(lb))
    out = ("".join(c for i, c in enumerate(la) if i not in ax_a)
           + "".join(c for i, c in enumerate(lb) if i not in ax_b))
    return _einsum(f"{la},{lb}->{out}", a, b)


@_rule(numpy.pad)
def _pad(array, pad_width, mode="constant", **kwargs):
    nd = array.ndim
    pw = numpy.broadcast_to(numpy.asarray(pad_width), (nd, 2)).tolist()
    return Batched(numpy.pad(array.data, [(0, 0)] + pw, mode, **kwargs))


@_rule(numpy.copy)
def _copy(a, order="K", subok=False):
    return Batched(numpy.copy(a.data, order))


@_rule(numpy.astype)
def _astype(x, dtype, /, *, copy=True, device=None):
    return Batched(x.data.astype(dtype, copy=copy))


def _like_shape(d, shape):
    return d.shape if shape is None else d.shape[:1] + _shape_tuple(shape)


def _like(np_fn):
    def fn(a, dtype=None, order="K", subok=True, shape=None, **kwargs):
        return Batched(np_fn(a.data, dtype, shape=_like_shape(a.data, shape)))
    return fn


for _fn in (numpy.zeros_like, numpy.ones_like, numpy.empty_like):
    _FUNCS[_fn] = _like(_fn)


@_rule(numpy.full_like)
def _full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None, **kwargs):
    return Batched(numpy.full_like(a.data, fill_value, dtype, shape=_like_shape(a.data, shape)))


def _values(x):
    """The values of a batch (of any depth), as one plain array."""
    while type(x) is Batched:
        x = x.data
    return x


@_rule(numpy.bincount)
def _bincount(x, weights=None, minlength=0):
    """Per batch element: the bins are offset by the element's index times their count,
    which must be one for the batch (``minlength`` or each element's largest value past
    it: PyTorch stacks the elements' results)."""
    b = (x if type(x) is Batched else weights).data.shape[0]
    xd = _full_batch(x, b).reshape(b, -1)
    n = minlength
    if xd.shape[1]:
        n = _equal_sizes(numpy.maximum(numpy.max(xd, 1) + 1, minlength), lambda c: [c])
    ids = (numpy.arange(b)[:, None] * n + xd).ravel()
    w = None if weights is None else _full_batch(weights, b).reshape(-1)
    return Batched(numpy.bincount(ids, w, b * n).reshape(b, n))


# ---- numpy.linalg: gufuncs over the last two dims (the decompositions' rules) -----------------

def _linalg_rule(np_fn):
    def f(*args, **kwargs):
        nd = max(_ndim(a) for a in args)
        out = np_fn(*(_lift(a, nd) for a in args), **kwargs)
        if isinstance(out, tuple):  # a named result (svd, eigh, slogdet)
            return type(out)(*(Batched(o) for o in out))
        return Batched(out)
    return f


for _fn in (numpy.linalg.solve, numpy.linalg.inv, numpy.linalg.det, numpy.linalg.slogdet,
            numpy.linalg.svd, numpy.linalg.eigh, numpy.linalg.pinv, numpy.linalg.cholesky,
            numpy.linalg.eigvalsh, numpy.linalg.eigvals, numpy.linalg.eig, numpy.linalg.qr,
            numpy.linalg.matrix_power):
    _FUNCS[_fn] = _linalg_rule(_fn)


@_rule(numpy.copyto)
def _copyto(dst, src, casting="same_kind", where=True):
    """An in-place write: into a batch only (a batched value cannot be written into a
    tensor that vmap does not map)."""
    if type(dst) is not Batched:
        raise RuntimeError(INPLACE)
    nd = dst.ndim
    numpy.copyto(dst.data, _lift(src, nd), casting=casting, where=_lift(where, nd))


@_rule(numpy.cross)
def _cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    nd = max(_ndim(a), _ndim(b))
    ax = operator.index(-1 if axis is None else axis) % nd - nd  # counted from the end
    return Batched(numpy.cross(_lift(a, nd), _lift(b, nd), axis=ax))


# ---- searching sorted rows, and repeats that vary over the batch -------------------------------

def _search_rows(s, v, side):
    """``numpy.searchsorted(s[i], v[i], side)`` for every row ``i`` at once, by PyTorch's
    binary search (the backend's)."""
    return functions(numpy).search_sorted(s, v, side == "right")


@_rule(numpy.searchsorted)
def _searchsorted(a, v, side="left", sorter=None):
    if sorter is not None:
        raise NotImplementedError("batched: numpy.searchsorted with a sorter")
    if type(a) is not Batched:  # one sequence for the whole batch
        vd = v.data
        return Batched(_search_rows(numpy.reshape(a, (1, -1)), vd.reshape(1, -1),
                                    side).reshape(vd.shape))
    d = a.data
    vd = _full_batch(v, d.shape[0])
    return Batched(_search_rows(d, vd.reshape(d.shape[0], -1), side).reshape(vd.shape))


def _repeat(a, repeats, axis=None):
    """``numpy.repeat`` with ``repeats`` varying over the batch: each element's indices,
    the boundaries of its running counts searched, then gathered. Their number must be one
    for the whole batch (PyTorch stacks the elements' results)."""
    if type(repeats) is not Batched:
        if axis is None:
            return Batched(numpy.repeat(a.data.reshape(a.data.shape[0], -1), repeats, 1))
        return Batched(numpy.repeat(a.data, repeats, _norm(axis, a.ndim)))
    if axis is None:
        a, axis = (_ravel(a) if type(a) is Batched else numpy.ravel(a)), 0
    shape = list(numpy.shape(a) if type(a) is not Batched else a.shape)
    r = repeats.data
    b = r.shape[0]
    r = numpy.broadcast_to(r.reshape(b, -1), (b, shape[axis]))
    total = _equal_sizes(numpy.sum(r, -1), lambda t: shape[:axis] + [t] + shape[axis + 1:])
    index = _search_rows(numpy.cumsum(r, -1),
                         numpy.broadcast_to(numpy.arange(total), (b, total)), "right")
    return _FUNCS[numpy.take](a, Batched(index), axis)


_FUNCS[numpy.repeat] = _repeat


@_rule(numpy.isin)
def _isin(element, test_elements, assume_unique=False, invert=False, *, kind=None):
    """Against test elements that vary over the batch: each element's sorted row of them
    searched."""
    if type(test_elements) is not Batched:
        return Batched(numpy.isin(element.data, test_elements, invert=invert))
    t = test_elements.data
    b = t.shape[0]
    t = numpy.sort(t.reshape(b, -1), -1)
    e = _full_batch(element, b)
    v = e.reshape(b, -1)
    k = t.shape[-1]
    if k:
        i = _search_rows(t, v, "left")
        found = (i < k) & (numpy.take_along_axis(t, numpy.minimum(i, k - 1), -1) == v)
    else:
        found = numpy.zeros_like(v, dtype=bool)
    return Batched((found != invert).reshape(e.shape))


def _equal_sizes(counts, shape):
    """PyTorch's error where the elements' results differ in size (it stacks them):
    ``counts`` per element (any depth), ``shape(count)`` one element's result shape."""
    counts = _values(counts).reshape(-1)
    odd = numpy.flatnonzero(counts != counts[0])
    if odd.size:
        raise RuntimeError(f"stack expects each tensor to be equal size, but got "
                           f"{shape(int(counts[0]))} at entry 0 and "
                           f"{shape(int(counts[odd[0]]))} at entry {odd[0]}")
    return int(counts[0]) if counts.size else 0


@_rule(numpy.argwhere)
def _argwhere(a):
    """The indices of every element's nonzeros (their number must be one for the batch):
    the batch's own, its index column dropped."""
    d = a.data
    b = d.shape[0]
    c = _equal_sizes(numpy.count_nonzero(d.reshape(b, -1), axis=1), lambda c: [c, a.ndim])
    return Batched(numpy.argwhere(d).reshape(b, c, 1 + a.ndim)[..., 1:])


@_rule(numpy.histogram)
def _histogram(a, bins=10, range=None, density=None, weights=None):
    """NumPy's histogram of every element at once: its edges (equal bins over its own
    range, computed as NumPy computes them, or given edges that may vary over the batch),
    each value's bin, and one bincount over the batch's bins side by side."""
    b = _batch_of((a, bins, weights))
    x = _full_batch(a, b).reshape(b, -1)
    if type(bins) is not Batched and numpy.ndim(bins) == 0:
        k = operator.index(bins)
        edges, idx = _equal_bins(x, k, range)
    else:
        edges = _full_batch(bins, b)
        k = edges.shape[-1] - 1
        if _values(edges[:, :-1] > edges[:, 1:]).any():
            raise ValueError("`bins` must increase monotonically, when an array")
        idx = numpy.minimum(_search_rows(edges, x, "right") - 1, k - 1)
    keep = (x >= edges[:, :1]) & (x <= edges[:, -1:])
    w = 1.0 if weights is None else _full_batch(weights, b).reshape(b, -1)
    ids = numpy.where(keep, idx, 0) + numpy.arange(b)[:, None] * k
    n = numpy.bincount(numpy.ravel(ids), numpy.ravel(numpy.where(keep, w, 0)), b * k)
    n = n.reshape(b, k).astype(numpy.intp if weights is None else w.dtype)
    if density:
        db = (edges[:, 1:] - edges[:, :-1]).astype(float)
        return Batched(n / db / numpy.sum(n, 1, keepdims=True)), Batched(edges)
    return Batched(n), Batched(edges)


def _equal_bins(x, k, range):
    """Each row's ``k`` equal bins over ``range`` (its own range when None) and its
    values' bins, as NumPy's histogram computes both."""
    b = x.shape[0]
    if range is not None:
        if range[0] > range[1]:
            raise ValueError("max must be larger than min in range parameter.")
        lo, hi = numpy.full(b, float(range[0])), numpy.full(b, float(range[1]))
    elif x.shape[1] == 0:
        lo, hi = numpy.zeros(b), numpy.ones(b)
    else:
        lo, hi = numpy.min(x, 1), numpy.max(x, 1)
    bad = ~(numpy.isfinite(_values(lo)) & numpy.isfinite(_values(hi)))
    if bad.any():
        i = numpy.flatnonzero(bad.reshape(-1))[0]
        what = "supplied" if range is not None else "autodetected"
        raise ValueError(f"{what} range of [{_values(lo).reshape(-1)[i]}, "
                         f"{_values(hi).reshape(-1)[i]}] is not finite")
    same = lo == hi
    lo, hi = numpy.where(same, lo - 0.5, lo), numpy.where(same, hi + 0.5, hi)
    dt = x.dtype if x.dtype.kind in "fc" else numpy.dtype(float)  # (a range's floats: weak)
    step = (hi - lo) / k  # (numpy.linspace's steps; a batch has no rule for it)
    edges = numpy.arange(k + 1, dtype=step.dtype) * step[:, None] + lo[:, None]
    edges[:, -1] = hi
    edges = edges.astype(dt, copy=False)
    if _values(edges[:, :-1] >= edges[:, 1:]).any():
        raise ValueError(f"Too many bins for data range. Cannot create {k} finite-sized bins.")
    xs = x.astype(dt, copy=False)
    first, span = lo.astype(dt)[:, None], (hi - lo).astype(dt)[:, None]
    idx = ((xs - first) / span * k).astype(numpy.intp)
    idx = numpy.where(idx == k, k - 1, idx)
    idx = numpy.where(xs < numpy.take_along_axis(edges, numpy.clip(idx, 0, k), 1), idx - 1, idx)
    up = (xs >= numpy.take_along_axis(edges, numpy.clip(idx + 1, 0, k), 1)) & (idx != k - 1)
    return edges, numpy.where(up, idx + 1, idx)
