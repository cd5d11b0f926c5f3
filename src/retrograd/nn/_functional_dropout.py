"""Dropout, ``nn.functional``'s ``dropout*`` family: zeroing elements (or channels) at
random, the rest scaled so the expected value is kept."""

import math
import warnings

import numpy

from .. import _random
from .._dtype import is_inexact
from .._tensor import wrap
from ..backend import to_device
from ..ops._registry import _pretty

__all__ = ["dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout",
           "feature_alpha_dropout"]


def dropout(input, p=0.5, training=True, inplace=False):
    """Zero elements with probability ``p`` and scale the rest by ``1/(1-p)``."""
    return _dropout(input, p, training, inplace, False, False)


def _dropout(input, p, training, inplace, feature, alpha):
    """PyTorch's one dropout: ``feature`` draws one keep per (sample, channel); ``alpha``
    sets dropped values to SELU's negative saturation and keeps mean and variance."""
    _check_p(p)
    if not training or p == 0:
        return input
    if feature and input.ndim < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    if not is_inexact(input._data.dtype):
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{_pretty(input._data.dtype)}")
    if p == 1:
        return input.mul_(0) if inplace else input * 0
    shape = input.shape[:2] + (1,) * (input.ndim - 2) if feature else input.shape
    keep = _kept(tuple(shape), p, input.device)
    dtype = input._data.dtype
    if not alpha:
        mask = wrap((keep * (1 / (1 - p))).astype(dtype))
        return input.mul_(mask) if inplace else input * mask
    sat = 1.7580993408473766  # -SELU's negative saturation value
    a = 1 / math.sqrt((sat * sat * p + 1) * (1 - p))
    mask = wrap((keep * a).astype(dtype))
    shift = wrap(((keep - 1.0) * (sat * a) + sat * a * p).astype(dtype))
    return input.mul_(mask).add_(shift) if inplace else input * mask + shift


def _kept(shape, p, device):
    """Where dropout keeps elements, on ``device``: drawn on the host from the default
    generator, then moved; on meta nothing is drawn (no values, and PyTorch's meta
    tensors leave the CPU generator alone)."""
    if device.type == "meta":
        return to_device(numpy.broadcast_to(numpy.True_, shape), device)
    return to_device(_random.default_generator._rng.random(shape, dtype=numpy.float32) >= p, device)


def _check_p(p):
    if p < 0 or p > 1:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _channel_dropout(input, p, training, inplace, batched):
    """dropout1d/3d: channel-wise on (N, C, *spatial) or unbatched (C, *spatial)."""
    if not batched:
        input = input.unsqueeze_(0) if inplace else input.unsqueeze(0)
    out = _dropout(input, p, training, inplace, True, False)
    if not batched:
        out = out.squeeze_(0) if inplace else out.squeeze(0)
    return out


def dropout1d(input, p=0.5, training=True, inplace=False):
    _check_p(p)
    if input.ndim not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {input.ndim}D "
                           "input. Note that dropout1d exists to provide channel-wise dropout "
                           "on inputs with 1 spatial dimension, a channel dimension, and an "
                           "optional batch dimension (i.e. 2D or 3D inputs).")
    return _channel_dropout(input, p, training, inplace, input.ndim == 3)


def _dims_warning(name, nd, dims):
    warnings.warn(f"{name}: Received a {nd}-D input to {name}, which is deprecated and will "
                  "result in an error in a future release. To retain the behavior and silence "
                  f"this warning, please use dropout instead. Note that {name} exists to "
                  f"provide channel-wise dropout on inputs with {dims[0] - 1} spatial "
                  "dimensions, a channel dimension, and an optional batch dimension (i.e. "
                  f"{dims[0]}D or {dims[1]}D inputs).", stacklevel=3)


def dropout2d(input, p=0.5, training=True, inplace=False):
    _check_p(p)
    if input.ndim not in (3, 4):
        _dims_warning("dropout2d", input.ndim, (3, 4))
    if input.ndim == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that "
                      "channel-wise 1D dropout behavior is desired - input is interpreted as "
                      "shape (N, C, L), where C is the channel dim. This behavior will change "
                      "in a future release to interpret the input as one without a batch "
                      "dimension, i.e. shape (C, H, W). To maintain the 1D channel-wise dropout "
                      "behavior, please switch to using dropout1d instead.", stacklevel=2)
    return _dropout(input, p, training, inplace, True, False)


def dropout3d(input, p=0.5, training=True, inplace=False):
    _check_p(p)
    if input.ndim not in (4, 5):
        _dims_warning("dropout3d", input.ndim, (4, 5))
    return _channel_dropout(input, p, training, inplace, input.ndim == 5)


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    return _dropout(input, p, training, inplace, False, True)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    return _dropout(input, p, training, inplace, True, True)
