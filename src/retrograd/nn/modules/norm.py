"""Batch, instance, layer, group, RMS and local response norms (weights one, biases zero,
as PyTorch), and the lazy batch and instance norms (``num_features`` from the first
input)."""

import numbers
import warnings

from ... import _creation
from ..._dtype import int64
from .. import functional as F
from .. import init
from ..parameter import Parameter, UninitializedBuffer, UninitializedParameter
from .lazy import LazyModuleMixin
from .module import Module

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "InstanceNorm1d", "InstanceNorm2d",
           "InstanceNorm3d", "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d",
           "LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d", "LayerNorm",
           "GroupNorm", "RMSNorm", "LocalResponseNorm"]


class _BatchNorm(Module):
    _ndims = (2, 3)

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, device=None, dtype=None, *, bias=True):
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        if affine:
            self.weight = Parameter(_creation.ones(num_features, dtype=dtype, device=device))
            if bias:
                self.bias = Parameter(_creation.zeros(num_features, dtype=dtype, device=device))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            stats = {"dtype": dtype, "device": device}
            self.register_buffer("running_mean", _creation.zeros(num_features, **stats))
            self.register_buffer("running_var", _creation.ones(num_features, **stats))
            self.register_buffer("num_batches_tracked",
                                 _creation.tensor(0, dtype=int64, device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)

    def reset_running_stats(self):
        if self.track_running_stats:
            init.zeros_(self.running_mean)
            init.ones_(self.running_var)
            init.zeros_(self.num_batches_tracked)

    def reset_parameters(self):
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def forward(self, input):
        if input.ndim not in self._ndims:
            raise ValueError(f"expected {' or '.join(f'{d}D' for d in self._ndims)} input "
                             f"(got {input.ndim}D input)")
        momentum = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked._data += 1
            self.num_batches_tracked._vc[0] += 1
            if self.momentum is None:  # cumulative moving average
                momentum = 1.0 / float(self.num_batches_tracked._data)
        use_batch = self.training or self.running_mean is None
        track = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if track else None,
                            self.running_var if track else None, self.weight, self.bias,
                            use_batch, momentum, self.eps)

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.bias is not None}, "
                f"track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    _ndims = (2, 3)


class BatchNorm2d(_BatchNorm):
    _ndims = (4,)


class BatchNorm3d(_BatchNorm):
    _ndims = (5,)


class _InstanceNorm(_BatchNorm):
    """Per-sample statistics; running statistics only when asked for. ``_ndims`` is
    (unbatched, batched)."""

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False,
                 track_running_stats=False, device=None, dtype=None, *, bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device,
                         dtype, bias=bias)

    def forward(self, input):
        if input.ndim not in self._ndims:
            raise ValueError(f"expected {self._ndims[0]}D or {self._ndims[1]}D input (got "
                             f"{input.ndim}D input)")
        dim = input.ndim - self._ndims[0]
        if input.shape[dim] != self.num_features:
            if self.affine:
                raise ValueError(f"expected input's size at dim={dim} to match num_features "
                                 f"({self.num_features}), but got: {input.shape[dim]}.")
            warnings.warn(f"input's size at dim={dim} does not match num_features. You can "
                          "silence this warning by not passing in num_features, which is not "
                          "used because affine=False", stacklevel=2)
        unbatched = input.ndim == self._ndims[0]
        x = input.unsqueeze(0) if unbatched else input
        out = F.instance_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                              self.training or not self.track_running_stats,
                              0.0 if self.momentum is None else self.momentum, self.eps)
        return out.squeeze(0) if unbatched else out


class InstanceNorm1d(_InstanceNorm):
    _ndims = (2, 3)


class InstanceNorm2d(_InstanceNorm):
    _ndims = (3, 4)


class InstanceNorm3d(_InstanceNorm):
    _ndims = (4, 5)


class _LazyNorm(LazyModuleMixin):
    """``num_features`` from the first input's dim 1. Both the batch and the instance norms
    default to ``affine=True, track_running_stats=True``, as PyTorch's lazy ones do."""

    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 device=None, dtype=None, *, bias=True):
        super().__init__(0, eps, momentum, False, False, device, dtype, bias=False)
        self.affine, self.track_running_stats = affine, track_running_stats
        if affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            if bias:
                self.bias = UninitializedParameter(device=device, dtype=dtype)
        if track_running_stats:
            self.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            self.running_var = UninitializedBuffer(device=device, dtype=dtype)
            self.num_batches_tracked = _creation.tensor(0, dtype=int64, device=device)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input):
        if self.has_uninitialized_params():
            self.num_features = input.shape[1]
            for t in (self.weight, self.bias, self.running_mean, self.running_var):
                if t is not None:
                    t.materialize((self.num_features,))
            self.reset_parameters()


class LazyBatchNorm1d(_LazyNorm, BatchNorm1d):
    cls_to_become = BatchNorm1d


class LazyBatchNorm2d(_LazyNorm, BatchNorm2d):
    cls_to_become = BatchNorm2d


class LazyBatchNorm3d(_LazyNorm, BatchNorm3d):
    cls_to_become = BatchNorm3d


class LazyInstanceNorm1d(_LazyNorm, InstanceNorm1d):
    cls_to_become = InstanceNorm1d


class LazyInstanceNorm2d(_LazyNorm, InstanceNorm2d):
    cls_to_become = InstanceNorm2d


class LazyInstanceNorm3d(_LazyNorm, InstanceNorm3d):
    cls_to_become = InstanceNorm3d


def _affine_params(module, shape, affine, bias, dtype, device):
    """``weight`` (ones) and ``bias`` (zeros) of ``shape``, or None where switched off."""
    if affine:
        module.weight = Parameter(_creation.ones(*shape, dtype=dtype, device=device))
    else:
        module.register_parameter("weight", None)
    if affine and bias:
        module.bias = Parameter(_creation.zeros(*shape, dtype=dtype, device=device))
    else:
        module.register_parameter("bias", None)


class LayerNorm(Module):
    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True,
                 device=None, dtype=None):
        super().__init__()
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        _affine_params(self, self.normalized_shape, elementwise_affine, bias, dtype, device)

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}")


class GroupNorm(Module):
    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None,
                 dtype=None, *, bias=True):
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError("num_channels must be divisible by num_groups")
        self.num_groups, self.num_channels = num_groups, num_channels
        self.eps, self.affine = eps, affine
        _affine_params(self, (num_channels,), affine, bias, dtype, device)

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
                f"bias={self.bias is not None}")


class RMSNorm(Module):
    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None,
                 dtype=None):
        super().__init__()
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(_creation.ones(*self.normalized_shape, dtype=dtype,
                                                   device=device))
        else:
            self.register_parameter("weight", None)

    def reset_parameters(self):
        if self.weight is not None:
            init.ones_(self.weight)

    def forward(self, x):
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")


class LocalResponseNorm(Module):
    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"
