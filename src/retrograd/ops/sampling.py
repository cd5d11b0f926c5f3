"""Spatial transformers: ``affine_grid`` (a linear map of a fixed base grid) and
``grid_sample`` on 4-D and 5-D inputs (bilinear or nearest, zeros/border/reflection
padding), with PyTorch's coordinate arithmetic (GridSampler.h): unnormalize, clip or
reflect, then sample.

grid_sample's gradients scatter into arbitrary input positions: one ``bincount`` over all
corners for the input, the weights' slopes for the grid. Under create_graph the same
rules run as gathers and scatter-adds of Tensors, so they are differentiable again (the
second-order graph is those ops, where PyTorch has one GridSampler2DBackwardBackward0).
"""

import itertools
import math

from .. import _creation
from .._dtype import int64
from .._tensor import wrap
from ..backend import get_array_module
from ..backend.functions import functions
from ._registry import FUNCTIONS, _pretty, apply, defop

__all__ = ["affine_grid", "grid_sample"]

_MODES = ("bilinear", "nearest")
_PADDINGS = ("zeros", "border", "reflection")


# ---- affine_grid --------------------------------------------------------------------------
def _linspace(n, align_corners, dtype, device):
    """One axis of the base grid, on ``device``: PyTorch's linspace(-1, 1, n), scaled by
    (n - 1) / n in ``dtype`` unless ``align_corners``."""
    if n <= 1:
        return _creation.zeros(1, dtype=dtype, device=device)._data
    r = _creation.linspace(-1, 1, n, dtype=dtype, device=device)._data
    return r if align_corners else r * r.dtype.type((n - 1) / n)


def _base_grid(spatial, align_corners, dtype, device):
    """(prod(spatial), k + 1) rows of (x, y[, z], 1): x along the last dim."""
    axes = [_linspace(n, align_corners, dtype, device) for n in spatial]
    xp = get_array_module(axes[0])
    mesh = xp.meshgrid(*axes, indexing="ij")
    cols = [xp.reshape(m, -1) for m in reversed(mesh)]
    return xp.stack(cols + [xp.ones(cols[0].shape, dtype=cols[0].dtype)], axis=1)


def _const(xp, a, like):
    """The base grid as the rule's values are: a Tensor on the facade (a constant of the
    graph), in ``like``'s dtype (a low-precision grid's values are exact in float32,
    where the rules compute)."""
    c = functions(xp).constant(a)
    return c if c.dtype == like.dtype else xp.astype(c, like.dtype)


def _affine_fwd(xp, theta, base, out_shape):
    return xp.reshape(xp.matmul(_const(xp, base, theta), xp.swapaxes(theta, -1, -2)),
                      tuple(theta.shape[:-2]) + out_shape)


def _affine_grad(xp, grad, base, out_shape):
    k = len(out_shape) - 1
    g = xp.reshape(grad, tuple(grad.shape[:-k - 1]) + (-1, out_shape[-1]))
    return xp.matmul(xp.swapaxes(g, -1, -2), _const(xp, base, g))


_affine_grid = defop("affine_grid_generator", _affine_fwd, vjp={"theta": _affine_grad},
                     jvp="linear")


def affine_grid(theta, size, align_corners):
    k = len(size) - 2
    if size[0] != theta.shape[0]:  # PyTorch's bmm of the base grid and theta rejects it
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{size[0]}, {k + 1}] but got: [{theta.shape[0]}, {k + 1}].")
    base = _base_grid(tuple(size[2:]), align_corners, theta.dtype, theta.device)
    return apply(_affine_grid, (theta,), (base, tuple(size[2:]) + (k,)))


# ---- grid_sample --------------------------------------------------------------------------
def _unnormalize(coord, size, align_corners):
    """Grid coordinates in [-1, 1] as input pixel coordinates, and d pixel / d grid."""
    if align_corners:
        return (coord + 1) / 2 * (size - 1), (size - 1) / 2
    return ((coord + 1) * size - 1) / 2, size / 2


def _clip(x, size):
    """clip_coordinates and its slope (0 at and beyond the ends, as PyTorch)."""
    xp = get_array_module(x)
    return xp.minimum(xp.maximum(x, 0), size - 1), (x > 0) & (x < size - 1)


def _reflect(x, twice_low, twice_high):
    """reflect_coordinates and its slope (+-1)."""
    xp = get_array_module(x)
    if twice_low == twice_high:
        return xp.zeros_like(x), xp.zeros_like(x)
    lo, span = twice_low / 2, (twice_high - twice_low) / 2
    d = x - lo
    sign = xp.where(d < 0, -1.0, 1.0)
    d = xp.abs(d)
    extra = xp.fmod(d, span)
    flips = xp.floor(d / span)
    odd = flips % 2 == 1
    return xp.where(odd, span - extra + lo, extra + lo), xp.where(odd, -sign, sign)


def _coords(coord, size, padding_mode, align_corners):
    """compute_coordinates: pixel coordinates and d pixel / d grid coordinate."""
    xp = get_array_module(coord)
    x, slope = _unnormalize(coord, size, align_corners)
    slope = xp.full_like(x, slope)
    if padding_mode == "border":
        x, s = _clip(x, size)
        slope = slope * s
    elif padding_mode == "reflection":
        x, s = (_reflect(x, 0, 2 * (size - 1)) if align_corners
                else _reflect(x, -1, 2 * size - 1))
        slope = slope * s
        x, s = _clip(x, size)
        slope = slope * s
    # safe_downgrade_to_int_range: NaN and huge coordinates read nothing
    x = xp.where(xp.isfinite(x) & (xp.abs(x) < 2.0 ** 31 - 1), x, -100.0)
    return x.astype(coord.dtype, copy=False), slope.astype(coord.dtype, copy=False)


def _corners(spatial, grid, mode, padding_mode, align_corners):
    """Per corner: (flat index into the spatial dims, weight with out-of-bounds zeroed, its
    slope along each grid coordinate) over the (N, P) sample points; and the grid slopes.
    Grid coordinate 0 is x (the last dim), corners in PyTorch's order (x fastest)."""
    xp = get_array_module(grid)
    k, n = len(spatial), grid.shape[0]
    sizes = spatial[::-1]  # per grid coordinate
    strides = [math.prod(spatial[k - d:]) for d in range(k)]
    coords, slopes = zip(*(_coords(grid[..., d].reshape(n, -1), sizes[d], padding_mode,
                                   align_corners) for d in range(k)), strict=True)
    if mode == "nearest":
        ends = [((xp.rint(c), xp.ones_like(c), None),) for c in coords]
    else:
        ends = []
        for c in coords:
            lo = xp.floor(c)
            ends.append(((lo, lo + 1 - c, -1), (lo + 1, c - lo, 1)))
    out = []
    for combo in itertools.product(*reversed(ends)):
        combo = combo[::-1]  # per grid coordinate
        inside = xp.ones(coords[0].shape, dtype=bool)
        flat = 0
        for d, (pos, _, _) in enumerate(combo):
            inside &= (pos >= 0) & (pos < sizes[d])
            flat = flat + xp.clip(pos, 0, sizes[d] - 1).astype(int64.np) * strides[d]
        factors = [f for _, f, _ in combo]
        wt = math.prod(factors[1:], start=factors[0]) * inside
        dws = None if mode == "nearest" else [
            math.prod((f for e, f in enumerate(factors) if e != d), start=inside * sign)
            for d, (_, _, sign) in enumerate(combo)]
        out.append((flat, wt, dws))
    return out, slopes


def _gather(xflat, flat):
    """(N, C, S) values at (N, P) flat indices -> (N, C, P)."""
    xp = get_array_module(xflat)
    return xp.take_along_axis(xflat, flat[:, None, :], axis=2)


def _sample(input, grid, mode, padding_mode, align_corners):
    n, c = input.shape[:2]
    xflat = input.reshape(n, c, -1)
    corners, _ = _corners(input.shape[2:], grid, mode, padding_mode, align_corners)
    out = None
    for flat, wt, _ in corners:
        v = _gather(xflat, flat)
        v *= wt[:, None, :].astype(v.dtype, copy=False)
        out = v if out is None else out + v
    return out.reshape((n, c) + grid.shape[1:-1])


def _slopes(input, grid, mode, padding_mode, align_corners):
    """d out / d grid coordinate, per coordinate: (N, C, P) each; None for nearest."""
    if mode == "nearest":
        return None
    n, c = input.shape[:2]
    xflat = input.reshape(n, c, -1)
    corners, slopes = _corners(input.shape[2:], grid, mode, padding_mode, align_corners)
    ds = [0] * len(slopes)
    for flat, _, dws in corners:
        v = _gather(xflat, flat)
        ds = [d + v * dw[:, None, :] for d, dw in zip(ds, dws, strict=True)]
    return [d * s[:, None, :] for d, s in zip(ds, slopes, strict=True)]


def _input_grad(grad, input_shape, grid, mode, padding_mode, align_corners):
    xp = get_array_module(grad)
    n, c = input_shape[:2]
    size = math.prod(input_shape[2:])
    corners, _ = _corners(tuple(input_shape[2:]), grid, mode, padding_mode, align_corners)
    g = grad.reshape(n, c, -1)
    base = (xp.arange(n * c) * size).reshape(n, c, 1)
    idx = xp.concatenate([(base + flat[:, None, :]).reshape(-1) for flat, _, _ in corners])
    wts = xp.concatenate([(g * wt[:, None, :]).reshape(-1) for _, wt, _ in corners])
    out = functions(xp).bincount(idx, wts, n * c * size)
    return out.astype(grad.dtype, copy=False).reshape(input_shape)


def _grid_grad(grad, input, grid, mode, padding_mode, align_corners):
    xp = get_array_module(grid)
    ds = _slopes(input, grid, mode, padding_mode, align_corners)
    if ds is None:
        return xp.zeros_like(grid)
    g = grad.reshape(ds[0].shape)
    return xp.stack([xp.sum(g * d, axis=1) for d in ds], axis=-1).reshape(grid.shape)


def _tensor_corners(spatial, grid, mode, padding_mode, align_corners):
    """:func:`_corners` for a Tensor grid under create_graph: indices, masks and grid
    slopes as constants, weights and their slopes as Tensors differentiable in the grid. A
    coordinate is piecewise linear in the grid: its value plus its slope times the grid's
    change."""
    xp = get_array_module(grid._data)
    k, n = len(spatial), grid.shape[0]
    g = grid.detach()._data
    sizes = spatial[::-1]
    strides = [math.prod(spatial[k - d:]) for d in range(k)]
    dt = g.dtype
    ends, slopes = [], []
    for d in range(k):
        c, slope = _coords(g[..., d].reshape(n, -1), sizes[d], padding_mode, align_corners)
        slopes.append(wrap(slope))
        gd = grid[..., d].reshape(n, -1)
        ct = wrap(c) + wrap(slope) * (gd - wrap(g[..., d].reshape(n, -1)))
        if mode == "nearest":
            ends.append(((xp.rint(c), None, None),))
        else:
            lo = xp.floor(c)
            ends.append(((lo, wrap(lo + 1) - ct, -1), (lo + 1, ct - wrap(lo), 1)))
    out = []
    for combo in itertools.product(*reversed(ends)):
        combo = combo[::-1]
        inside = xp.ones((n, g[..., 0].size // n), dtype=bool)
        flat = 0
        for d, (pos, _, _) in enumerate(combo):
            inside &= (pos >= 0) & (pos < sizes[d])
            flat = flat + xp.clip(pos, 0, sizes[d] - 1).astype(int64.np) * strides[d]
        mask = wrap(inside.astype(dt))
        if mode == "nearest":
            out.append((flat, mask, None))
            continue
        factors = [f for _, f, _ in combo]
        dws = [math.prod((f for e, f in enumerate(factors) if e != d), start=mask * sign)
               for d, (_, _, sign) in enumerate(combo)]
        out.append((flat, math.prod(factors, start=mask), dws))
    return out, slopes


def _index(flat, c):
    """(N, P) flat indices as an int64 (N, C, P) index Tensor."""
    xp = get_array_module(flat)
    n, p = flat.shape
    return wrap(xp.ascontiguousarray(xp.broadcast_to(flat[:, None, :], (n, c, p)),
                                        dtype=int64.np))


def _input_grad_t(grad, input_shape, grid, mode, padding_mode, align_corners):
    xp = get_array_module(grad._data)
    n, c = input_shape[:2]
    g = grad.reshape(n, c, -1)
    out = wrap(xp.zeros((n, c, math.prod(input_shape[2:])), dtype=grad._data.dtype))
    corners, _ = _tensor_corners(tuple(input_shape[2:]), grid, mode, padding_mode,
                                 align_corners)
    for flat, wt, _ in corners:
        out = FUNCTIONS["scatter_add"](out, 2, _index(flat, c), g * wt.unsqueeze(1))
    return out.reshape(tuple(input_shape))


def _grid_slopes_t(input, grid, mode, padding_mode, align_corners):
    """d output / d grid coordinate, per coordinate, as (N, C, P) Tensors differentiable
    in the input and the grid."""
    n, c = input.shape[:2]
    xflat = input.reshape(n, c, -1)
    ds = None
    corners, slopes = _tensor_corners(tuple(input.shape[2:]), grid, mode, padding_mode,
                                      align_corners)
    for flat, _, dws in corners:
        v = FUNCTIONS["gather"](xflat, 2, _index(flat, c))
        terms = [v * dw.unsqueeze(1) for dw in dws]
        ds = terms if ds is None else [a + b for a, b in zip(ds, terms, strict=True)]
    return [d * s.unsqueeze(1) for d, s in zip(ds, slopes, strict=True)]


def _grid_grad_t(grad, input, grid, mode, padding_mode, align_corners):
    if mode == "nearest":
        return grid * 0
    n, c = input.shape[:2]
    g = grad.reshape(n, c, -1)
    return FUNCTIONS["stack"]([(g * d).sum(1) for d in _grid_slopes_t(
        input, grid, mode, padding_mode, align_corners)], -1).reshape(tuple(grid.shape))


def _rule(xp, rule, tensor_rule, grad, *args):
    """A vjp rule: on arrays; on Tensors (create_graph) as differentiable gathers and
    scatter-adds."""
    return functions(xp).kernel_or_composite(rule, tensor_rule, grad, *args)


def _grid_sample_jvp(xp, input_t, grid_t, input, grid, mode, padding_mode, align_corners):
    """The tangent: on arrays; on Tensors (reverse-over-forward) as a graph."""
    return functions(xp).kernel_or_composite(_grid_sample_jvp_arrays, _grid_sample_jvp_t,
                                             input_t, grid_t, input, grid, mode,
                                             padding_mode, align_corners)


def _grid_sample_jvp_arrays(input_t, grid_t, input, grid, mode, padding_mode, align_corners):
    out = None
    if input_t is not None:
        out = _sample(input_t, grid, mode, padding_mode, align_corners)
    if grid_t is not None:
        ds = _slopes(input, grid, mode, padding_mode, align_corners)
        shape = input.shape[:2] + grid.shape[1:-1]
        t = get_array_module(input).zeros(shape, dtype=input.dtype)
        if ds is not None:
            n = grid.shape[0]
            t = sum(d * grid_t[..., e].reshape(n, 1, -1) for e, d in enumerate(ds))
            t = t.reshape(shape)
        out = t if out is None else out + t
    return out


def _grid_sample_jvp_t(input_t, grid_t, input, grid, mode, padding_mode, align_corners):
    """The tangent from Tensors: linear in the input's tangent (the sampler itself), plus
    the grid's tangent times the output's slopes along each grid coordinate."""
    out = None
    if input_t is not None:
        out = apply(_GRID_SAMPLERS[grid.ndim - 2], (input_t, grid),
                    (mode, padding_mode, align_corners))
    if grid_t is not None and mode != "nearest":
        n = grid.shape[0]
        shape = tuple(input.shape[:2]) + tuple(grid.shape[1:-1])
        t = sum(d * grid_t[..., e].reshape(n, 1, -1) for e, d in enumerate(
            _grid_slopes_t(input, grid, mode, padding_mode, align_corners))).reshape(shape)
        out = t if out is None else out + t
    return out


def _grid_sample_fwd(xp, input, grid, mode, padding_mode, align_corners):
    return _sample(input, grid, mode, padding_mode, align_corners)


def _grid_sampler_op(k):
    return defop(
        f"grid_sampler_{k}d", _grid_sample_fwd,
        vjp={"input": lambda xp, grad, input_shape, grid, mode, padding_mode, align_corners:
             _rule(xp, _input_grad, _input_grad_t, grad, tuple(input_shape), grid, mode,
                   padding_mode, align_corners),
             "grid": lambda xp, grad, input, grid, mode, padding_mode, align_corners:
             _rule(xp, _grid_grad, _grid_grad_t, grad, input, grid, mode, padding_mode,
                   align_corners)},
        jvp=_grid_sample_jvp, node=f"GridSampler{k}DBackward0",
        upcast=False)  # PyTorch's CPU kernel computes half grids and values in half


_GRID_SAMPLERS = {2: _grid_sampler_op(2), 3: _grid_sampler_op(3)}


def grid_sample(input, grid, mode, padding_mode, align_corners):
    """grid_sample of an (N, C, H, W) input at an (N, Ho, Wo, 2) grid, or of an
    (N, C, D, H, W) one at an (N, Do, Ho, Wo, 3) grid."""
    k = input.ndim - 2
    if grid.shape[-1] != k:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {k} in last dimension, "
                           f"but got grid with sizes {list(grid.shape)}")
    if grid.ndim != input.ndim or k not in (2, 3):
        dims = f"{input.ndim}D" if k in (2, 3) else "4D or 5D"
        raise RuntimeError(f"grid_sampler(): expected {dims} input and grid with same number of "
                           f"dimensions, but got input with sizes {list(input.shape)} and grid "
                           f"with sizes {list(grid.shape)}")
    if input.shape[0] != grid.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, "
                           f"but got input with sizes {list(input.shape)} and grid with sizes "
                           f"{list(grid.shape)}")
    if input.dtype != grid.dtype:
        raise RuntimeError(f"expected scalar type {_pretty(input._data.dtype)} but found "
                           f"{_pretty(grid._data.dtype)}")
    if mode == "bicubic":
        raise NotImplementedError("grid_sample: mode 'bicubic' is not supported")
    if 0 in input.shape[2:]:
        raise RuntimeError(f"grid_sampler(): expected input to have non-empty spatial "
                           f"dimensions, but input has sizes {list(input.shape)} with "
                           f"dimension 2 being empty")
    return apply(_GRID_SAMPLERS[k], (input, grid), (mode, padding_mode, align_corners))
