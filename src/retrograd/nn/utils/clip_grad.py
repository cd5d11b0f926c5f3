"""Gradient clipping: ``clip_grad_norm_``, ``clip_grad_value_``, and torch 2.6's split of
the former into ``get_total_norm`` and ``clip_grads_with_norm_``.

The total norm is one reduction per gradient straight on its backend array (BLAS ``vdot``
for the 2-norm) and one norm of those norms, as torch's foreach path does, so clipping a
model costs no autograd dispatch and no concatenated copy of all gradients. The norm is
computed in the gradients' dtype (16-bit floats accumulate in float32), mixed dtypes
promote. ``foreach`` is accepted for torch's signatures and changes nothing here.
"""

import math
import types
import warnings

from ..._creation import tensor
from ..._tensor import Tensor, wrap
from ...backend import get_array_module

__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grads_with_norm_", "clip_grad_value_",
           "get_total_norm"]


def _as_list(tensors):
    return [tensors] if isinstance(tensors, Tensor) else list(tensors)


def _norm(xp, a, p):
    """``linalg.vector_norm(a, p)`` on a backend array: a 0-d array of a's real dtype,
    accumulated in float32 for 16-bit floats."""
    dtype = a.real.dtype
    if p == math.inf or p == -math.inf:
        a = xp.abs(a)
        if a.size:
            n = a.max() if p > 0 else a.min()
        else:  # (an empty tensor's; CuPy's max and min take no initial=)
            n = 0 if p > 0 else math.inf
    elif p == 0.0:
        n = xp.count_nonzero(a)
    else:
        if dtype.itemsize < 4:
            a = a.astype(xp.float32)
        if p == 2.0:
            n = xp.sqrt(xp.vdot(a, a).real)
        elif p == 1.0:
            n = xp.abs(a).sum()
        else:
            r = a.real.dtype.type
            n = (xp.abs(a) ** r(p)).sum() ** r(1.0 / p)
    return xp.asarray(n, dtype=dtype)


def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """The ``norm_type``-norm of all ``tensors`` taken as one vector (as torch computes it:
    the norm of the per-tensor norms).

    >>> get_total_norm([retrograd.tensor([3.]), retrograd.tensor([4.])])
    tensor(5.)
    """
    arrays = [t._data for t in _as_list(tensors)]
    p = float(norm_type)
    if not arrays:
        return tensor(0.0)
    xp = get_array_module(arrays[0])
    norms = [_norm(xp, a, p) for a in arrays]
    total = _norm(xp, xp.stack(norms), p)  # stack promotes mixed dtypes, as torch's
    if error_if_nonfinite and not bool(xp.isfinite(total)):
        raise RuntimeError(f"The total norm of order {p} for gradients from `parameters` is "
                           "non-finite, so it cannot be clipped. To disable this error and "
                           "scale the gradients by the non-finite norm anyway, set "
                           "`error_if_nonfinite=False`")
    return wrap(total, xp)


def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    """Scale the gradients in place by ``min(max_norm / (total_norm + 1e-6), 1)``."""
    grads = [p._grad for p in _as_list(parameters) if p._grad is not None]
    max_norm = float(max_norm)
    if not grads:
        return
    total = total_norm._data if isinstance(total_norm, Tensor) else total_norm
    xp = get_array_module(grads[0]._data)
    total = xp.asarray(total)
    one = total.dtype.type(1.0)
    coef = xp.minimum(total.dtype.type(max_norm) / (total + total.dtype.type(1e-6)), one)
    for g in grads:
        a = g._data
        a *= coef.astype(a.dtype)
        g._vc[0] += 1


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False,
                    foreach=None):
    """Clip the gradients' total norm to ``max_norm`` in place; returns the total norm.

    >>> clip_grad_norm_(model.parameters(), max_norm=1.0)
    """
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    else:
        is_generator = isinstance(parameters, types.GeneratorType)
        parameters = list(parameters)
        if is_generator and not parameters:
            warnings.warn("`parameters` is an empty generator, no gradient clipping will "
                          "occur.", stacklevel=2)
    grads = [p._grad for p in parameters if p._grad is not None]
    total_norm = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total_norm, foreach)
    return total_norm


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False,
                   foreach=None):
    """Deprecated alias of :func:`clip_grad_norm_`, warning as PyTorch does."""
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
                  "`torch.nn.utils.clip_grad_norm_`.", FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamp every gradient in place to ``[-clip_value, clip_value]``."""
    clip_value = float(clip_value)
    for p in _as_list(parameters):
        g = p._grad
        if g is not None:
            a = g._data
            get_array_module(a).clip(a, -clip_value, clip_value, out=a)
            g._vc[0] += 1
