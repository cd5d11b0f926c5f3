"""The batching rules of the array functions that rules call on batched arrays
(reductions, scans, views and joins, gathers, products, padding, linear algebra): each maps
the function's axes past the batch dim of :class:`~._batched.Batched` arrays and runs it
once on the whole batch, in the module of the batch's data. Registered by name in
``_batched._FUNCS``; ``autograd`` imports this module with ``_batched``."""

import functools
import operator

from ..backend import get_array_module
from ..backend.functions import functions
from ._batched import (INPLACE, _FUNCS, Batched, _batch, _elementwise, _expand_dims, _first,
                       _full_batch, _lift, _ndim, _norm, _ravel, _reshape, _rule, _shape_tuple,
                       _take, _ufunc_call, _values, _xp)

__all__ = []


def _reduction(name):
    def reduce(a, axis=None, *args, keepdims=False, **kwargs):
        nd = a.ndim
        ax = tuple(range(1, nd + 1)) if axis is None else _norm(axis, nd)
        if keepdims:  # (passed only when set: CuPy's count_nonzero has no keepdims)
            kwargs["keepdims"] = True
        return Batched(getattr(_xp(a), name)(a.data, ax, *args, **kwargs))
    return reduce


for _name in ("sum", "mean", "prod", "max", "min", "amax", "amin", "any", "all", "nansum",
              "nanmean", "nanmax", "nanmin", "var", "std", "count_nonzero"):
    _FUNCS[_name] = _reduction(_name)


def _arg_reduction(name):
    def reduce(a, axis=None, out=None, *, keepdims=False):
        d, f = a.data, getattr(_xp(a), name)
        if axis is None:
            r = f(d.reshape(d.shape[0], -1), 1)
            return Batched(r.reshape((-1,) + (1,) * a.ndim) if keepdims else r)
        return Batched(f(d, _norm(axis, a.ndim), **({"keepdims": True} if keepdims else {})))
    return reduce


_FUNCS["argmax"] = _arg_reduction("argmax")
_FUNCS["argmin"] = _arg_reduction("argmin")


def _along(name):
    """A function along one axis (sort, argsort): the axis past the batch dim."""
    def fn(a, *args, axis=-1, **kwargs):
        if args and not isinstance(args[0], str):
            axis, args = args[0], args[1:]
        f = getattr(_xp(a), name)
        if axis is None:
            return Batched(f(a.data.reshape(a.data.shape[0], -1), *args, axis=1, **kwargs))
        return Batched(f(a.data, *args, axis=_norm(axis, a.ndim), **kwargs))
    return fn


for _name in ("sort", "argsort"):
    _FUNCS[_name] = _along(_name)


def _partition(name):
    """partition and argpartition: ``kth`` first, then the axis."""
    def fn(a, kth, axis=-1, **kwargs):
        f = getattr(_xp(a), name)
        if axis is None:
            return Batched(f(a.data.reshape(a.data.shape[0], -1), kth, axis=1, **kwargs))
        return Batched(f(a.data, kth, axis=_norm(axis, a.ndim), **kwargs))
    return fn


for _name in ("partition", "argpartition"):
    _FUNCS[_name] = _partition(_name)


@_rule("unravel_index")
def _unravel_index(indices, shape, order="C"):
    """Elementwise on the flat indices (the shape is one for the whole batch)."""
    return tuple(Batched(a) for a in _xp(indices).unravel_index(indices.data, shape,
                                                                 order=order))


def _scan(name):
    def scan(a, axis=None, dtype=None, out=None):
        f = getattr(_xp(a), name)
        if axis is None:
            return Batched(f(a.data.reshape(a.data.shape[0], -1), 1, dtype))
        return Batched(f(a.data, _norm(axis, a.ndim), dtype))
    return scan


_FUNCS["cumsum"] = _scan("cumsum")
_FUNCS["cumprod"] = _scan("cumprod")


for _name in ("where", "clip", "round", "around", "isreal", "isposinf", "isneginf", "sinc",
              "nan_to_num", "real_if_close"):
    _FUNCS[_name] = _elementwise(_name)


@_rule("moveaxis")
def _moveaxis(a, source, destination):
    return Batched(_xp(a).moveaxis(a.data, _norm(source, a.ndim), _norm(destination, a.ndim)))


@_rule("flip")
def _flip(m, axis=None):
    nd = m.ndim
    return Batched(_xp(m).flip(m.data, tuple(range(1, nd + 1)) if axis is None
                               else _norm(axis, nd)))


@_rule("roll")
def _roll(a, shift, axis=None):
    xp = _xp(a)
    if axis is None:
        d = a.data
        return Batched(xp.roll(d.reshape(d.shape[0], -1), shift, 1).reshape(d.shape))
    return Batched(xp.roll(a.data, shift, _norm(axis, a.ndim)))


@_rule("concatenate", "concat")
def _concatenate(arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    like = _first(arrays)
    xp = _xp(like)
    if axis is None:
        arrays = [_ravel(a) if type(a) is Batched else xp.ravel(a) for a in arrays]
        axis = 0
    nd = max(_ndim(a) for a in arrays)
    return Batched(xp.concatenate([_full_batch(a, like) for a in arrays], _norm(axis, nd),
                                  dtype=dtype, casting=casting))


@_rule("stack")
def _stack(arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    like = _first(arrays)
    nd = max(_ndim(a) for a in arrays)
    return Batched(_xp(like).stack([_full_batch(a, like) for a in arrays], _norm(axis, nd + 1),
                                   dtype=dtype, casting=casting))


@_rule("tile")
def _tile(A, reps):
    reps = _shape_tuple(reps)
    nd = max(A.ndim, len(reps))
    reps = (1,) * (nd - len(reps)) + reps
    return Batched(_xp(A).tile(_lift(A, nd), (1,) + reps))


def _splitter(name):
    def split(ary, indices_or_sections, axis=0):
        return [Batched(p) for p in getattr(_xp(ary), name)(ary.data, indices_or_sections,
                                                           _norm(axis, ary.ndim))]
    return split


_FUNCS["split"] = _splitter("split")
_FUNCS["array_split"] = _splitter("array_split")


@_rule("diag")
def _diag(v, k=0):
    """A vector's diagonal matrix, or a matrix's diagonal."""
    if v.ndim == 2:
        return _diagonal(v, k)
    d, xp = v.data, _xp(v)
    n = d.shape[1] + abs(k)
    out = xp.zeros_like(d, shape=(d.shape[0], n, n))  # (a batch itself when nested)
    i = xp.arange(d.shape[1])
    out[:, i + max(-k, 0), i + max(k, 0)] = d
    return Batched(out)


@_rule("trace")
def _trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    return Batched(_xp(a).trace(a.data, offset, _norm(axis1, a.ndim), _norm(axis2, a.ndim),
                                dtype))


@_rule("diagonal")
def _diagonal(a, offset=0, axis1=0, axis2=1):
    return Batched(_xp(a).diagonal(a.data, offset, _norm(axis1, a.ndim),
                                   _norm(axis2, a.ndim)))


def _tri_rule(name):
    def fn(m, k=0):
        if m.ndim < 2:
            raise NotImplementedError(f"batched: numpy.{name} of a 1-d array")
        return Batched(getattr(_xp(m), name)(m.data, k))
    return fn


_FUNCS["tril"] = _tri_rule("tril")
_FUNCS["triu"] = _tri_rule("triu")


@_rule("take_along_axis")
def _take_along_axis(arr, indices, axis=-1):
    if type(indices) is Batched:
        if axis is None:
            return _take_along_axis(_reshape(_batch(arr, indices), (-1,)),
                                    _reshape(indices, (-1,)), 0)
        nd = _ndim(arr)
        return Batched(_xp(indices).take_along_axis(_full_batch(arr, indices),
                                                    _lift(indices, nd), _norm(axis, nd)))
    d, xp = arr.data, _xp(arr)
    if axis is None:
        d, axis, indices = d.reshape(d.shape[0], -1), 0, xp.ravel(indices)
    return Batched(xp.take_along_axis(d, indices[None], _norm(axis, arr.ndim)))


@_rule("put_along_axis")
def _put_along_axis(arr, indices, values, axis):
    if type(arr) is not Batched:
        raise RuntimeError(INPLACE)
    nd = arr.ndim
    idx = _lift(indices, nd) if type(indices) is Batched else indices[None]
    _xp(arr).put_along_axis(arr.data, idx, _lift(values, nd), _norm(axis, nd))


@_rule("outer")
def _outer(a, b, out=None):
    xp = _xp(_first((a, b)))
    a = _ravel(a) if type(a) is Batched else xp.ravel(a)
    b = _ravel(b) if type(b) is Batched else xp.ravel(b)
    return _ufunc_call("multiply", (_expand_dims(a, 1) if type(a) is Batched
                                    else a[:, None], b), {})


_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


@_rule("einsum")
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
    return Batched(_xp(_first(operands)).einsum(",".join(terms) + "->" + z + out, *data,
                                                **kwargs))


@_rule("tensordot")
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


def _pad_pairs(pad_width, nd):
    """``pad``'s widths (a number, a pair, or one number or pair per dim) as one
    ``[before, after]`` per dim, as NumPy broadcasts them to ``(nd, 2)``."""
    p = pad_width.tolist() if hasattr(pad_width, "tolist") else pad_width
    if not isinstance(p, (list, tuple)):
        p = [[p]]
    elif not isinstance(p[0], (list, tuple)):
        p = [p]
    rows = [list(r) * (2 // len(r)) for r in p]
    return rows * nd if len(rows) == 1 else rows


@_rule("pad")
def _pad(array, pad_width, mode="constant", **kwargs):
    return Batched(_xp(array).pad(array.data, [(0, 0)] + _pad_pairs(pad_width, array.ndim),
                                  mode, **kwargs))


@_rule("copy")
def _copy(a, order="K", subok=False):
    """A copy in which every element owns one run of memory, the batch outermost, each
    element laid out in its own ``order`` ("K": its dims in its strides' order): the
    fresh tensors a loop of calls makes (a clone of a batch mapped on its last dim would
    otherwise interleave the elements, and ``as_strided`` on it read the others')."""
    xp, d = _xp(a), a.data
    if order != "K":
        return Batched(xp.copy(d, order))
    dims = sorted(range(1, d.ndim), key=lambda k: -abs(d.strides[k]))  # (ties keep order)
    laid = xp.copy(xp.transpose(d, (0, *dims)), "C")
    return Batched(xp.transpose(laid, [0, *(dims.index(k) + 1 for k in range(1, d.ndim))]))


@_rule("astype")
def _astype(x, dtype, /, *, copy=True, device=None):
    return Batched(x.data.astype(dtype, copy=copy))


def _like_shape(d, shape):
    return d.shape if shape is None else d.shape[:1] + _shape_tuple(shape)


def _like(name):
    def fn(a, dtype=None, order="K", subok=True, shape=None, **kwargs):
        return Batched(getattr(_xp(a), name)(a.data, dtype, shape=_like_shape(a.data, shape)))
    return fn


for _name in ("zeros_like", "ones_like", "empty_like"):
    _FUNCS[_name] = _like(_name)


@_rule("full_like")
def _full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None, **kwargs):
    return Batched(_xp(a).full_like(a.data, fill_value, dtype,
                                    shape=_like_shape(a.data, shape)))


@_rule("bincount")
def _bincount(x, weights=None, minlength=0):
    """Per batch element: the bins are offset by the element's index times their count,
    which must be one for the batch (``minlength`` or each element's largest value past
    it: PyTorch stacks the elements' results)."""
    like = x if type(x) is Batched else weights
    b, xp = like.data.shape[0], _xp(like)
    xd = _full_batch(x, like).reshape(b, -1)
    n = minlength
    if xd.shape[1]:
        n = _equal_sizes(xp.maximum(xp.max(xd, 1) + 1, minlength), lambda c: [c])
    ids = (xd + xp.arange(b)[:, None] * n).ravel()  # (a lower level's batch on the left)
    w = None if weights is None else _full_batch(weights, like).reshape(-1)
    return Batched(xp.bincount(ids, w, b * n).reshape(b, n))


# ---- linalg: gufuncs over the last two dims (the decompositions' rules) ------------------------

def _linalg_rule(name):
    def f(*args, **kwargs):
        nd = max(_ndim(a) for a in args)
        out = getattr(_xp(_first(args)).linalg, name)(*(_lift(a, nd) for a in args), **kwargs)
        if isinstance(out, tuple):  # a named result (svd, eigh, slogdet)
            return type(out)(*(Batched(o) for o in out))
        return Batched(out)
    return f


for _name in ("solve", "inv", "det", "slogdet", "svd", "eigh", "pinv", "cholesky", "eigvalsh",
              "eigvals", "eig", "qr", "matrix_power"):
    _FUNCS[f"linalg.{_name}"] = _linalg_rule(_name)


# ---- fft: the spectral ops transform over negative axes, which a leading batch leaves valid ----

def _fft_rule(name):
    def f(a, s=None, axes=None, norm=None):
        if axes is None or max(axes, default=-1) >= 0:
            raise NotImplementedError(f"batched: numpy.fft.{name} over non-negative axes")
        return Batched(getattr(_xp(a).fft, name)(a.data, s, axes, norm))
    return f


for _name in ("fftn", "ifftn", "rfftn", "irfftn"):
    _FUNCS[f"fft.{_name}"] = _fft_rule(_name)
for _name in ("real", "imag"):  # (numpy's functions, not ufuncs)
    _FUNCS[_name] = functools.partial(lambda name, a: Batched(getattr(_xp(a), name)(a.data)),
                                      _name)


@_rule("copyto")
def _copyto(dst, src, casting="same_kind", where=True):
    """An in-place write: into a batch only (a batched value cannot be written into a
    tensor that vmap does not map)."""
    if type(dst) is not Batched:
        raise RuntimeError(INPLACE)
    nd = dst.ndim
    kw = {} if where is True else {"where": _lift(where, nd)}  # (CuPy's default: None)
    _xp(dst).copyto(dst.data, _lift(src, nd), casting=casting, **kw)


@_rule("cross")
def _cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    nd = max(_ndim(a), _ndim(b))
    ax = operator.index(-1 if axis is None else axis) % nd - nd  # counted from the end
    return Batched(_xp(_first((a, b))).cross(_lift(a, nd), _lift(b, nd), axis=ax))


# ---- searching sorted rows, and repeats that vary over the batch -------------------------------

def _search_rows(s, v, side):
    """``searchsorted(s[i], v[i], side)`` for every row ``i`` at once, by PyTorch's
    binary search (the backend's)."""
    return functions(get_array_module(v if type(v) is Batched else s)).search_sorted(
        s, v, side == "right")  # (a lower level's batch of values: its namespace searches)


@_rule("searchsorted")
def _searchsorted(a, v, side="left", sorter=None):
    if sorter is not None:
        raise NotImplementedError("batched: numpy.searchsorted with a sorter")
    if type(a) is not Batched:  # one sequence for the whole batch
        vd = v.data
        return Batched(_search_rows(_xp(v).asarray(a).reshape(1, -1), vd.reshape(1, -1),
                                    side).reshape(vd.shape))
    d = a.data
    vd = _full_batch(v, a)
    return Batched(_search_rows(d, vd.reshape(d.shape[0], -1), side).reshape(vd.shape))


@_rule("repeat")
def _repeat(a, repeats, axis=None):
    """``repeat`` with ``repeats`` varying over the batch: each element's indices, the
    boundaries of its running counts searched, then gathered. Their number must be one
    for the whole batch (PyTorch stacks the elements' results)."""
    if type(repeats) is not Batched:
        xp = _xp(a)
        if axis is None:
            return Batched(xp.repeat(a.data.reshape(a.data.shape[0], -1), repeats, 1))
        return Batched(xp.repeat(a.data, repeats, _norm(axis, a.ndim)))
    xp = _xp(repeats)
    if axis is None:
        a, axis = (_ravel(a) if type(a) is Batched else xp.ravel(a)), 0
    shape = list(a.shape if type(a) is Batched else xp.asarray(a).shape)
    r = repeats.data
    b = r.shape[0]
    r = xp.broadcast_to(r.reshape(b, -1), (b, shape[axis]))
    total = _equal_sizes(xp.sum(r, -1), lambda t: shape[:axis] + [t] + shape[axis + 1:])
    index = _search_rows(xp.cumsum(r, -1),
                         xp.broadcast_to(xp.arange(total), (b, total)), "right")
    return _take(a, Batched(index), axis)


@_rule("isin")
def _isin(element, test_elements, assume_unique=False, invert=False, *, kind=None):
    """Against test elements that vary over the batch: each element's sorted row of them
    searched."""
    if type(test_elements) is not Batched:
        return Batched(_xp(element).isin(element.data, test_elements, invert=invert))
    t, xp = test_elements.data, _xp(test_elements)
    b = t.shape[0]
    t = xp.sort(t.reshape(b, -1), -1)
    e = _full_batch(element, test_elements)
    v = e.reshape(b, -1)
    k = t.shape[-1]
    if k:
        i = _search_rows(t, v, "left")
        found = (i < k) & (xp.take_along_axis(t, xp.minimum(i, k - 1), -1) == v)
    else:
        found = xp.zeros_like(v, dtype=bool)
    return Batched((found != invert).reshape(e.shape))


def _equal_sizes(counts, shape):
    """PyTorch's error where the elements' results differ in size (it stacks them):
    ``counts`` per element (any depth), ``shape(count)`` one element's result shape."""
    counts = _values(counts).reshape(-1)
    odd = get_array_module(counts).flatnonzero(counts != counts[0])
    if odd.size:
        raise RuntimeError(f"stack expects each tensor to be equal size, but got "
                           f"{shape(int(counts[0]))} at entry 0 and "
                           f"{shape(int(counts[odd[0]]))} at entry {int(odd[0])}")
    return int(counts[0]) if counts.size else 0


@_rule("argwhere")
def _argwhere(a):
    """The indices of every element's nonzeros (their number must be one for the batch):
    the batch's own, its index column dropped."""
    d, xp = a.data, _xp(a)
    b = d.shape[0]
    c = _equal_sizes(xp.count_nonzero(d.reshape(b, -1), axis=1), lambda c: [c, a.ndim])
    return Batched(xp.argwhere(d).reshape(b, c, 1 + a.ndim)[..., 1:])


@_rule("histogram")
def _histogram(a, bins=10, range=None, density=None, weights=None):
    """NumPy's histogram of every element at once: its edges (equal bins over its own
    range, computed as NumPy computes them, or given edges that may vary over the batch),
    each value's bin, and one bincount over the batch's bins side by side."""
    like = _first((a, bins, weights))
    b, xp = like.data.shape[0], _xp(like)
    x = _full_batch(a, like).reshape(b, -1)
    if type(bins) is not Batched and _ndim(bins) == 0:
        k = operator.index(bins)
        edges, idx = _equal_bins(xp, x, k, range)
    else:
        edges = _full_batch(bins, like)
        k = edges.shape[-1] - 1
        if _values(edges[:, :-1] > edges[:, 1:]).any():
            raise ValueError("`bins` must increase monotonically, when an array")
        idx = xp.minimum(_search_rows(edges, x, "right") - 1, k - 1)
    keep = (x >= edges[:, :1]) & (x <= edges[:, -1:])
    w = 1.0 if weights is None else _full_batch(weights, like).reshape(b, -1)
    ids = xp.where(keep, idx, 0) + xp.arange(b)[:, None] * k
    n = xp.bincount(xp.ravel(ids), xp.ravel(xp.where(keep, w, 0)), b * k)
    n = n.reshape(b, k).astype(xp.intp if weights is None else w.dtype)
    if density:
        db = (edges[:, 1:] - edges[:, :-1]).astype(float)
        return Batched(n / db / xp.sum(n, 1, keepdims=True)), Batched(edges)
    return Batched(n), Batched(edges)


def _equal_bins(xp, x, k, range):
    """Each row's ``k`` equal bins over ``range`` (its own range when None) and its
    values' bins, as NumPy's histogram computes both (``xp``: the module of ``x``)."""
    b = x.shape[0]
    if range is not None:
        if range[0] > range[1]:
            raise ValueError("max must be larger than min in range parameter.")
        lo, hi = xp.full(b, float(range[0])), xp.full(b, float(range[1]))
    elif x.shape[1] == 0:
        lo, hi = xp.zeros(b), xp.ones(b)
    else:
        lo, hi = xp.min(x, 1), xp.max(x, 1)
    lv, hv = _values(lo), _values(hi)
    vp = get_array_module(lv)
    bad = ~(vp.isfinite(lv) & vp.isfinite(hv))
    if bad.any():
        i = int(vp.flatnonzero(bad.reshape(-1))[0])
        what = "supplied" if range is not None else "autodetected"
        raise ValueError(f"{what} range of [{lv.reshape(-1)[i]}, {hv.reshape(-1)[i]}] is not "
                         f"finite")
    same = lo == hi
    lo, hi = xp.where(same, lo - 0.5, lo), xp.where(same, hi + 0.5, hi)
    dt = x.dtype if x.dtype.kind in "fc" else xp.dtype(float)  # (a range's floats: weak)
    step = (hi - lo) / k  # (linspace's steps; a batch has no rule for it)
    edges = step[:, None] * xp.arange(k + 1, dtype=step.dtype) + lo[:, None]
    edges[:, -1] = hi
    edges = edges.astype(dt, copy=False)
    if _values(edges[:, :-1] >= edges[:, 1:]).any():
        raise ValueError(f"Too many bins for data range. Cannot create {k} finite-sized bins.")
    xs = x.astype(dt, copy=False)
    first, span = lo.astype(dt)[:, None], (hi - lo).astype(dt)[:, None]
    idx = ((xs - first) / span * k).astype(xp.intp)
    idx = xp.where(idx == k, k - 1, idx)
    idx = xp.where(xs < xp.take_along_axis(edges, xp.clip(idx, 0, k), 1), idx - 1, idx)
    up = (xs >= xp.take_along_axis(edges, xp.clip(idx + 1, 0, k), 1)) & (idx != k - 1)
    return edges, xp.where(up, idx + 1, idx)
