"""Adam (and, with decoupled weight decay, AdamW), with AMSGrad and maximize."""

from .. import _dtype
from .._tensor import Tensor
from ..backend import get_array_module
from ..backend.functions import functions
from .optimizer import (Optimizer, _bump, _check_fused, _check_lr, _count_step,
                        _directed_grad, _real, _scalar, _step_tensor, _zeros_like)

__all__ = ["Adam", "adam_update"]


def adam_update(param, grad, state, group):
    """One parameter's Adam step, in PyTorch's order of operations::

        step += 1;  g = -grad if maximize else grad
        param *= 1 - lr * weight_decay (decoupled) or g = g + weight_decay * param
        exp_avg.lerp_(g, 1 - beta1);  exp_avg_sq = beta2 * exp_avg_sq + (1 - beta2) * g * g
        denom = sqrt(max_exp_avg_sq if amsgrad else exp_avg_sq) / sqrt(1 - beta2**step) + eps
        param += (-lr / (1 - beta1**step)) * exp_avg / denom

    with PyTorch's fused multiply-adds (the weight decay's add, lerp, exp_avg_sq's addcmul),
    so its bits. A few temporaries the size of the parameter.
    """
    beta1, beta2 = group["betas"]
    beta1, beta2 = _scalar(beta1), _scalar(beta2)
    lr = _scalar(group["lr"])
    step = float(_count_step(state)._data)
    step_size = lr / (1 - beta1 ** step)
    bias_correction2_sqrt = (1 - beta2 ** step) ** 0.5
    if _fused(param, grad, state, group, lr, beta1, beta2, step_size, bias_correction2_sqrt):
        return
    xp = get_array_module(param._data)
    p, _, m, v, tmp = _adam_moments(xp, param, grad, state, group, lr, beta1, beta2)
    if group["amsgrad"]:
        vmax_t = state["max_exp_avg_sq"]
        vmax = _real(vmax_t._data)
        xp.maximum(vmax, v, out=vmax)
        _bump(vmax_t)
        v = vmax
    xp.sqrt(v, out=tmp)
    tmp /= bias_correction2_sqrt
    tmp += group["eps"]
    p += xp.divide(xp.multiply(m, -step_size), tmp, out=tmp)  # (addcdiv_'s order)
    _bump(param, state["exp_avg"], state["exp_avg_sq"])


def _fused(param, grad, state, group, lr, beta1, beta2, step_size, bc2_sqrt):
    """The whole update as one kernel where the arrays' module has one (CuPy: a launch
    costs more than the arithmetic), for the plain case: float32 or float64 (numba has no
    float16), no AMSGrad, no maximize. Its order of operations is this module's, so the
    results are the same."""
    p, g = param._data, grad._data
    fused = functions(get_array_module(p)).fused_adam
    if (fused is None or group["amsgrad"] or group["maximize"] or p.dtype not in _dtype.FUSED
            or g.dtype != p.dtype or g.shape != p.shape):
        return False
    wd, decoupled = group["weight_decay"], group["decoupled_weight_decay"]
    fused(p, g, state["exp_avg"]._data, state["exp_avg_sq"]._data,
          decay=1 - lr * wd if decoupled else 1, wd=0 if decoupled else wd, weight=1 - beta1,
          beta2=beta2, bc2_sqrt=bc2_sqrt, eps=group["eps"], step_size=step_size)
    _bump(param, state["exp_avg"], state["exp_avg_sq"])
    return True


def _adam_moments(xp, param, grad, state, group, lr, beta1, beta2):
    """What the Adam family's steps share (on array module ``xp``), in PyTorch's order:
    weight decay (into the gradient, or decoupled onto the parameter), then
    ``exp_avg.lerp_(g, 1 - beta1)`` and ``exp_avg_sq = beta2 * exp_avg_sq + (1 - beta2) *
    g * g``. Returns the real views of the parameter, gradient and moments, and a
    temporary the size of the moments."""
    wd, decoupled = group["weight_decay"], group["decoupled_weight_decay"]
    p, g = param._data, grad._data
    g = _directed_grad(p, g, group["maximize"], 0 if decoupled else wd)
    if wd != 0 and decoupled:
        p *= 1 - lr * wd
    m, v = _real(state["exp_avg"]._data), _real(state["exp_avg_sq"]._data)
    p, g = _real(p), _real(g)
    tmp = xp.subtract(g, m, out=xp.empty_like(m))  # (0-d inputs give no array)
    _lerp_into(xp, m, g, tmp, 1 - beta1)
    v *= beta2
    xp.multiply(g, 1 - beta2, out=tmp)
    functions(xp).fused_mul_add(tmp, g, v, out=v)  # (addcmul_)
    return p, g, m, v, tmp


def _lerp_into(xp, m, g, diff, weight):
    """``m.lerp_(g, weight)`` given ``diff = g - m``, arrays of module ``xp``, with PyTorch's
    two formulas (the one that is exact at its end of the interval), each an fma, the
    weight in the arrays' dtype."""
    w = m.dtype.type(weight)
    if abs(w) < 0.5:
        functions(xp).fused_mul_add(diff, w, m, out=m)
    else:  # (w - 1: +0 at 1, as PyTorch's, for the sign of a zero)
        functions(xp).fused_mul_add(diff, w - 1, g, out=m)


class Adam(Optimizer):
    """Adam, as ``torch.optim.Adam`` (``decoupled_weight_decay=True`` is AdamW).

    >>> opt = retrograd.optim.Adam(params, lr=1e-3, betas=(0.9, 0.999))
    """

    _update = staticmethod(adam_update)
    _group_defaults = (("amsgrad", False), ("maximize", False), ("foreach", None),
                       ("capturable", False), ("differentiable", False),
                       ("decoupled_weight_decay", False), ("fused", None))
    _has_step = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 amsgrad=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False, fused=None, decoupled_weight_decay=False):
        if isinstance(lr, Tensor):
            if foreach and not capturable:
                raise ValueError("lr as a Tensor is not supported for capturable=False and "
                                 "foreach=True")
        _check_lr(lr)
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not ((isinstance(betas[0], float) and isinstance(betas[1], float))
                or (isinstance(betas[0], Tensor) and isinstance(betas[1], Tensor))):
            raise ValueError("betas must be either both floats or both Tensors")
        for i, b in enumerate(betas):
            if isinstance(b, Tensor):
                if not capturable and foreach:
                    raise ValueError(f"betas[{i}] as a Tensor is not supported for "
                                     f"capturable=False and foreach=True")
                if b.numel() != 1:
                    raise ValueError(f"Tensor betas[{i}] must be 1-element")
        betas = tuple(b.squeeze() if isinstance(b, Tensor) and b.dim() != 0 else b
                      for b in betas)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "amsgrad": amsgrad, "maximize": maximize, "foreach": foreach,
                    "capturable": capturable, "differentiable": differentiable,
                    "fused": fused, "decoupled_weight_decay": decoupled_weight_decay}
        super().__init__(params, defaults)
        _check_fused(fused, foreach, differentiable)

    def _init_state(self, p, group):
        state = self.state[p]
        if len(state) == 0:
            state["step"] = _step_tensor(fused=group["fused"])
            state["exp_avg"] = _zeros_like(p)
            state["exp_avg_sq"] = _zeros_like(p)
            if group["amsgrad"]:
                state["max_exp_avg_sq"] = _zeros_like(p)
        return state

    def step(self, closure=None):
        """Perform one optimization step; ``closure`` re-evaluates the loss."""
        return self._run_step(closure)
