"""Muon: momentum whose update is orthogonalised by a Newton-Schulz iteration, for 2-D
parameters (hidden layers' weight matrices), as ``torch.optim.Muon``.

PyTorch runs the iteration in bfloat16, which NumPy lacks: here the values are bfloat16
numbers held in float32 arrays, each operation computed in float32 and its result rounded
to bfloat16 (round to nearest even), as PyTorch's CPU kernels round their float32
accumulations. Results agree with PyTorch's to bfloat16's precision.
"""

import math

from .. import _dtype
from .._tensor import Tensor
from ..backend import get_array_module
from .adam import _lerp_into
from .optimizer import Optimizer, _bump, _new_state, _scalar

__all__ = ["Muon", "muon_update"]

EPS = 1e-7
DEFAULT_A = 3.4445
DEFAULT_B = -4.7750
DEFAULT_C = 2.0315
DEFAULT_NS_STEPS = 5


def _bf16(x):
    """``x`` rounded to bfloat16 (8 significant bits, nearest even), kept as float32."""
    xp = get_array_module(x)
    m, e = xp.frexp(x.astype(xp.float64, copy=False))
    return xp.ldexp(xp.rint(xp.ldexp(m, 8)), e - 8).astype(xp.float32)


def _zeropower_via_newtonschulz(grad, ns_coefficients, ns_steps, eps):
    """The quintic Newton-Schulz iteration of ``grad / ||grad||``: roughly ``U V^T`` of
    its SVD (singular values pushed towards 1), in PyTorch's order of operations."""
    if ns_steps >= 100:
        raise ValueError("Number of steps must be less than 100 for computational efficiency")
    if grad.ndim != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(ns_coefficients) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    f32 = _dtype.float32.np
    a, b, c = (f32.type(v) for v in ns_coefficients)
    xp = get_array_module(grad)
    x = _bf16(grad)
    tall = grad.shape[0] > grad.shape[1]
    if tall:
        x = x.T
    norm = _bf16(xp.sqrt(xp.sum(xp.square(x))))
    x = _bf16(x / xp.maximum(norm, _bf16(f32.type(eps))))
    for _ in range(ns_steps):
        gram = _bf16(x @ x.T)
        gram_update = _bf16(b * gram + c * (gram @ gram))
        x = _bf16(a * x + gram_update @ x)
    return x.T if tall else x


def _adjust_lr(lr, adjust_lr_fn, param_shape):
    """The learning rate scaled for the matrix's shape, so the update's RMS is alike
    across shapes (``"original"``: Keller Jordan's; ``"match_rms_adamw"``: Moonshot's)."""
    a, b = param_shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        adjusted_ratio = math.sqrt(max(1, a / b))
    elif adjust_lr_fn == "match_rms_adamw":
        adjusted_ratio = 0.2 * math.sqrt(max(a, b))
    else:
        adjusted_ratio = 1.0
    return lr * adjusted_ratio


def muon_update(param, grad, state, group):
    """One parameter's Muon step, in PyTorch's order of operations::

        buf.lerp_(grad, 1 - momentum);  u = grad.lerp(buf, momentum) if nesterov else buf
        u = newton_schulz(u);  param *= 1 - lr * weight_decay;  param -= adjusted_lr * u
    """
    lr, momentum = _scalar(group["lr"]), group["momentum"]
    p, g = param._data, grad._data
    xp = get_array_module(p)
    if g.ndim != 2:
        raise ValueError("Param gradient must be a 2D matrix")
    buf_t = state["momentum_buffer"]
    buf = buf_t._data
    _lerp_into(xp, buf, g, xp.subtract(g, buf), 1 - momentum)
    if group["nesterov"]:
        update = g.copy()
        _lerp_into(xp, update, buf, xp.subtract(buf, update), momentum)
    else:
        update = buf
    update = _zeropower_via_newtonschulz(update, group["ns_coefficients"], group["ns_steps"],
                                         group["eps"])
    adjusted_lr = _adjust_lr(lr, group["adjust_lr_fn"], p.shape)
    p *= 1 - lr * group["weight_decay"]
    p -= xp.multiply(update, adjusted_lr, dtype=p.dtype)
    _bump(param, buf_t)


class Muon(Optimizer):
    """Muon, as ``torch.optim.Muon``: 2-D parameters only (optimise biases and
    embeddings with another optimizer, e.g. AdamW).

    >>> opt = retrograd.optim.Muon([lin.weight for lin in hidden_layers], lr=0.02)
    """

    _update = staticmethod(muon_update)

    def __init__(self, params, lr=1e-3, weight_decay=0.1, momentum=0.95, nesterov=True,
                 ns_coefficients=(DEFAULT_A, DEFAULT_B, DEFAULT_C), eps=EPS,
                 ns_steps=DEFAULT_NS_STEPS, adjust_lr_fn=None):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in ["original", "match_rms_adamw"]:
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        defaults = {"lr": lr, "weight_decay": weight_decay, "momentum": momentum,
                    "nesterov": nesterov, "ns_coefficients": ns_coefficients, "eps": eps,
                    "ns_steps": ns_steps, "adjust_lr_fn": adjust_lr_fn}
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError(f"Muon only supports 2D parameters whereas we found a "
                                     f"parameter with size: {p.size()}")

    def _init_state(self, p, group):
        if p.is_complex():
            raise RuntimeError("Muon does not support complex parameters")
        state = self.state[p]
        if "momentum_buffer" not in state:
            g = p._grad._data
            xp = get_array_module(g)
            state["momentum_buffer"] = _new_state(xp.zeros_like(g))
        return state

    def step(self, closure=None):
        """Perform one optimization step; ``closure`` re-evaluates the loss."""
        return self._run_step(closure)
