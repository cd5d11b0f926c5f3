"""Weight normalization: ``w = g * v / ||v||``, the norm taken over every dim but ``dim``
(``torch._weight_norm``, ``torch.norm_except_dim``).

As in PyTorch, dim 0 and the last dim run one fused kernel with its own backward node
(``WeightNormInterfaceBackward0``: the norm is computed once and reused by both input
gradients); other dims, and -1 (the norm of the whole tensor), are composites.
"""

from ._registry import apply, defop, register

__all__ = ["_weight_norm", "norm_except_dim"]


def _axes(ndim, dim):
    return tuple(i for i in range(ndim) if i != dim)


def _sum_except(xp, x, dim):
    """Sum over every dim but ``dim``, keeping them; a 1-d ``x`` has nothing to sum (the
    facade's sum follows torch, where ``dim=()`` would mean all dims)."""
    axes = _axes(x.ndim, dim)
    return xp.sum(x, axis=axes, keepdims=True) if axes else x


def _norm(xp, v, dim):
    return xp.sqrt(_sum_except(xp, v * v, dim))


def _wn_fwd(xp, v, g, dim):
    return xp.multiply(v, xp.divide(xp.reshape(g, _norm(xp, v, dim).shape), _norm(xp, v, dim)))


def _wn_dv(xp, grad, v, g, dim):
    n = _norm(xp, v, dim)
    gv = _sum_except(xp, grad * v, dim)
    return (xp.reshape(g, n.shape) / n) * (grad - v * (gv / (n * n)))


def _wn_dg(xp, grad, v, g_shape, dim):
    gv = _sum_except(xp, grad * v, dim)
    return xp.reshape(gv / _norm(xp, v, dim), g_shape)


def _wn_jvp(xp, v_t, g_t, v, g, dim):
    n = _norm(xp, v, dim)
    g = xp.reshape(g, n.shape)
    out = 0
    if v_t is not None:
        vvt = _sum_except(xp, v * v_t, dim)
        out = v_t * (g / n) - v * (g * vvt / (n * n * n))
    if g_t is not None:
        out = out + v * (xp.reshape(g_t, n.shape) / n)
    return out


_weight_norm_interface = defop(
    "weight_norm_interface", _wn_fwd, vjp={"v": _wn_dv, "g": _wn_dg}, jvp=_wn_jvp,
    node="WeightNormInterfaceBackward0")


@register(method=False)
def norm_except_dim(v, pow=2, dim=0):
    """The ``pow``-norm of ``v`` over all dims but ``dim``, keeping them as size 1 (the
    whole tensor's norm, 0-d, for ``dim=-1``).

    >>> retrograd.norm_except_dim(retrograd.ones(2, 3), 2, 0)
    tensor([[1.7321],
            [1.7321]])
    """
    if dim == -1:
        return v.norm(pow)
    axes = _axes(v.ndim, dim)
    return v.norm(pow, dim=axes, keepdim=True) if axes else v.abs()  # 1-d: one per entry


@register(method=False)
def _weight_norm(v, g, dim=0):
    """``v * (g / norm_except_dim(v, 2, dim))``: the weight of ``nn.utils.weight_norm``."""
    if v.dtype != g.dtype:
        raise RuntimeError(f"expected scalar type {_scalar(v.dtype)} but found "
                           f"{_scalar(g.dtype)}")
    if dim == 0 or dim == v.ndim - 1:
        return apply(_weight_norm_interface, (v, g), (dim,))
    return v * (g / norm_except_dim(v, 2, dim))


def _scalar(dtype):
    return {"float32": "Float", "float64": "Double", "float16": "Half",
            "bfloat16": "BFloat16"}.get(dtype.name, dtype.name)
