"""Fused CuPy kernels for the hot elementwise chains of a training step on a GPU.

Each kernel does in one launch what a chain of array operations does in several (a
launch costs the Python engine far more than the arithmetic of a parameter-sized
update), in the same order of operations and with contraction into fused multiply-adds
turned off, so that its results are the chain's, rounding included. Kernels are compiled
on first use (CuPy caches them on disk).
"""

import functools
import math

from . import gpu

__all__ = ["adam_step", "floats", "gelu", "gelu_grad", "layer_norm",
           "layer_norm_sums", "layer_norm_dx", "layer_norm_dw", "softmax", "softmax_grad",
           "sum_leading"]

_NO_FMA = ("--fmad=false",)


@functools.cache
def _adam_kernel():
    """Adam's update in PyTorch's order (see ``optim.adam.adam_update``): weight decay
    (decoupled onto the parameter, or L2 into the gradient), ``exp_avg.lerp_`` with the
    formula exact at its end of the interval, ``exp_avg_sq``, then the step; fused
    multiply-adds (``fma``, which ``--fmad=false`` leaves) where PyTorch's CPU ops have
    them, so the CPU's arithmetic."""
    return gpu.cupy().ElementwiseKernel(
        "T g, T decay, T wd, T w, T w_minus_one, bool small_w, T beta2, T one_minus_beta2, "
        "T bc2_sqrt, T eps, T neg_step_size",
        "T p, T m, T v",
        """
        if (decay != (T)1) p = p * decay;
        T gg = wd != (T)0 ? fma(p, wd, g) : g;
        T diff = gg - m;
        if (small_w) m = fma(w, diff, m); else m = fma(w_minus_one, diff, gg);
        v = fma(one_minus_beta2 * gg, gg, v * beta2);
        T denom = sqrt(v) / bc2_sqrt + eps;
        p = p + neg_step_size * m / denom;
        """,
        "retrograd_adam_step", options=_NO_FMA)


def adam_step(p, g, m, v, *, decay, wd, weight, beta2, bc2_sqrt, eps, step_size):
    """One Adam update of CuPy arrays ``p``, ``m``, ``v`` (in place) from gradient ``g``,
    all of one real float dtype and shape. ``decay``: the decoupled factor ``1 - lr * wd``
    (1 for none); ``wd``: the L2 coefficient (0 for none); ``weight``: the moment's lerp
    weight ``1 - beta1``."""
    t = p.dtype.type
    _adam_kernel()(g, t(decay), t(wd), t(weight), t(weight) - 1, weight < 0.5, t(beta2),
                   t(1 - beta2), t(bc2_sqrt), t(eps), t(-step_size), p, m, v)


def _elementwise(name, params, out, body):
    return gpu.cupy().ElementwiseKernel(params, out, body, f"retrograd_{name}",
                                        options=_NO_FMA)


def _sum_of(name, params, expr):
    """A reduction summing ``expr`` of the broadcast inputs over the axes it is given (its
    output is named ``total``: a kernel's inputs and outputs share one C parameter list,
    so an input named as the output does not compile)."""
    return gpu.cupy().ReductionKernel(params, "T total", expr, "a + b", "total = a", "0",
                                      f"retrograd_{name}", options=_NO_FMA)


@functools.cache
def _kernels():
    """The kernels of GELU, layer norm and softmax, compiled on first use."""
    erf_cdf = "(T)0.5 * ((T)1 + erf(x * (T)0.7071067811865476))"
    return {
        "gelu": _elementwise("gelu", "T x", "T y", "y = (T)0.5 * x * ((T)1 + erf(x * "
                             "(T)0.7071067811865476))"),
        "gelu_grad": _elementwise("gelu_grad", "T g, T x", "T dx", f"T cdf = {erf_cdf}; "
                                  "dx = g * (cdf + x * (T)0.3989422804014327 * "
                                  "exp((T)-0.5 * x * x));"),
        "sq_dev_sum": _sum_of("sq_dev_sum", "T x, T m", "(x - m) * (x - m)"),
        "rstd": _elementwise("rstd", "T s, T cnt, T eps", "T r",
                             "r = (T)1 / sqrt(s / cnt + eps)"),
        "ln_out": _elementwise("ln_out", "T x, T m, T r, T w, T b", "T y",
                               "y = (x - m) * r * w + b"),
        "gwx_sum": _sum_of("gwx_sum", "T g, T w, T x", "g * w * x"),
        "gw_sum": _sum_of("gw_sum", "T g, T w", "g * w"),
        "ln_dx": _elementwise("ln_dx", "T g, T w, T x, T r, T b, T c", "T dx",
                              "dx = r * (g * w) + b * x + c"),
        "ln_dw": _elementwise("ln_dw", "T g, T x, T m, T r", "T y", "y = g * ((x - m) * r)"),
        "exp_dev_sum": _sum_of("exp_dev_sum", "T x, T m", "exp(x - m)"),
        "softmax_out": _elementwise("softmax_out", "T x, T m, T s", "T y", "y = exp(x - m) / s"),
        "prod_sum": _sum_of("prod_sum", "T g, T y", "g * y"),
        "softmax_dx": _elementwise("softmax_dx", "T y, T g, T s", "T d", "d = y * (g - s)"),
    }


def floats(*arrays):
    """Whether the kernels here take these arrays (None: absent): non-empty, float32 or
    float64, one dtype."""
    a = [x for x in arrays if x is not None]
    return (a[0].size > 0 and a[0].dtype.char in "fd"
            and all(x.dtype == a[0].dtype for x in a))


def gelu(x):
    """The exact (erf) GELU, ``0.5 * x * (1 + erf(x / sqrt 2))``, in one pass."""
    return _kernels()["gelu"](x)


def gelu_grad(g, x):
    """``g * (Phi(x) + x phi(x))`` in one pass."""
    return _kernels()["gelu_grad"](g, x)


def _one(x):
    return x.dtype.type(1)


def layer_norm(x, axes, eps, weight, bias):
    """Layer norm's ``(out, mean, rstd)`` over ``axes`` (kept dims): the mean, the sum of
    squared deviations and the scaled and shifted output one pass each."""
    cp, k = gpu.cupy(), _kernels()
    t = x.dtype.type
    mean = cp.mean(x, axis=axes, keepdims=True)
    n = math.prod(x.shape[a] for a in axes)
    rstd = k["rstd"](k["sq_dev_sum"](x, mean, axis=axes, keepdims=True), t(n), t(eps))
    out = k["ln_out"](x, mean, rstd, _one(x) if weight is None else weight,
                      t(0) if bias is None else bias)
    return out, mean, rstd


def layer_norm_sums(grad, weight, x, axes):
    """``sum(g * x)`` and ``sum(g)`` over ``axes`` for ``g = grad * weight``, kept dims."""
    k = _kernels()
    w = _one(x) if weight is None else weight
    return (k["gwx_sum"](grad, w, x, axis=axes, keepdims=True),
            k["gw_sum"](grad, w, axis=axes, keepdims=True))


def layer_norm_dx(grad, weight, x, rstd, b, c):
    """``rstd * g + b * x + c`` for ``g = grad * weight``, in one pass."""
    return _kernels()["ln_dx"](grad, _one(x) if weight is None else weight, x, rstd, b, c)


def layer_norm_dw(grad, x, mean, rstd):
    return _kernels()["ln_dw"](grad, x, mean, rstd)


def softmax(x, axis):
    """``exp(x - max) / sum(exp(x - max))`` in three passes (max, sum, output)."""
    cp, k = gpu.cupy(), _kernels()
    m = cp.max(x, axis=axis, keepdims=True)
    return k["softmax_out"](x, m, k["exp_dev_sum"](x, m, axis=axis, keepdims=True))


def softmax_grad(grad, result, axis):
    """``result * (grad - sum(grad * result))`` in two passes."""
    k = _kernels()
    return k["softmax_dx"](result, grad, k["prod_sum"](grad, result, axis=axis, keepdims=True))


def sum_leading(g, lead):
    """``g`` summed over its first ``lead`` axes (dims kept) as a product with a vector of
    ones: cuBLAS reads the rows once, where CuPy's reduction over leading axes is slow."""
    cp = gpu.cupy()
    m = 1
    for n in g.shape[:lead]:
        m *= n
    rows = g.reshape(m, -1)
    return cp.matmul(cp.ones(m, g.dtype), rows).reshape((1,) * lead + g.shape[lead:])
