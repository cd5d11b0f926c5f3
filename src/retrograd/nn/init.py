"""``torch.nn.init``: in-place initializers (under no_grad), with PyTorch's fan and gain
rules. Random streams are retrograd's (seed with ``retrograd.manual_seed``), not PyTorch's.

>>> w = retrograd.empty(3, 4)
>>> _ = kaiming_uniform_(w, a=math.sqrt(5))
"""

import math
import warnings

from .._random import default_generator
from ..backend import get_array_module
from ..backend.functions import functions

__all__ = ["calculate_gain", "uniform_", "normal_", "constant_", "zeros_", "ones_", "eye_",
           "xavier_uniform_", "xavier_normal_", "kaiming_uniform_", "kaiming_normal_",
           "trunc_normal_", "orthogonal_"]


def _rng(generator):
    return (generator or default_generator)._rng


def _draw(tensor, generator, name, *args, shape=None):
    """Random values for ``tensor`` from ``generator`` (its array module's functions draw
    them: none on the meta device)."""
    return functions(get_array_module(tensor._data)).draw(
        _rng(generator), name, args, tensor.shape if shape is None else shape)


def _fill(tensor, values):
    """Write ``values`` into ``tensor`` in place (bumping its version), as no_grad copy_."""
    tensor._data[...] = values
    tensor._vc[0] += 1
    return tensor


def calculate_gain(nonlinearity, param=None):
    linear = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
              "conv_transpose3d", "sigmoid")
    if nonlinearity in linear:
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, (int, float)):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _fans(tensor):
    if tensor.ndim < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 "
                         "dimensions")
    receptive = math.prod(tensor.shape[2:])
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    return _fill(tensor, _draw(tensor, generator, "uniform", a, b))


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    return _fill(tensor, _draw(tensor, generator, "normal", mean, std))


def constant_(tensor, val):
    return _fill(tensor, val)


def zeros_(tensor):
    return _fill(tensor, 0)


def ones_(tensor):
    return _fill(tensor, 1)


def eye_(tensor):
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    return _fill(tensor, get_array_module(tensor._data).eye(*tensor.shape))


def xavier_uniform_(tensor, gain=1.0, generator=None):
    fan_in, fan_out = _fans(tensor)
    a = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    fan_in, fan_out = _fans(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / (fan_in + fan_out)), generator)


def _kaiming_std(tensor, a, mode, nonlinearity):
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of fan_in, fan_out")
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=3)
        return None
    fan = _fans(tensor)[0 if mode == "fan_in" else 1]
    return calculate_gain(nonlinearity, a) / math.sqrt(fan)


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    std = _kaiming_std(tensor, a, mode, nonlinearity)
    if std is None:
        return tensor
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    std = _kaiming_std(tensor, a, mode, nonlinearity)
    return tensor if std is None else normal_(tensor, 0.0, std, generator)


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """Normal(mean, std) conditioned on [a, b]: out-of-range draws are redrawn."""
    out = _draw(tensor, generator, "normal", mean, std)
    check = functions(get_array_module(out)).any_true
    bad = (out < a) | (out > b)
    while check(bad):
        out[bad] = _draw(tensor, generator, "normal", mean, std, shape=int(bad.sum()))
        bad = (out < a) | (out > b)
    return _fill(tensor, out)


def orthogonal_(tensor, gain=1, generator=None):
    if tensor.ndim < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    flat = _draw(tensor, generator, "normal", 0, 1, shape=(rows, cols))
    if rows < cols:
        flat = flat.T
    xp = get_array_module(flat)
    q, r = xp.linalg.qr(flat)
    q *= xp.sign(xp.diag(r))
    if rows < cols:
        q = q.T
    return _fill(tensor, gain * q.reshape(tensor.shape))
