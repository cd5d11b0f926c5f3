"""Convolutions and transposed convolutions in 1-D, 2-D and 3-D (weights kaiming_uniform
a=sqrt 5, as PyTorch), with the transposed layers' ``output_size`` as PyTorch computes it,
and their lazy forms (``in_channels`` from the first input)."""

import math

from ... import _creation
from ..._tensor import Size
from .. import functional as F
from .. import init
from ..parameter import Parameter, UninitializedParameter
from .lazy import LazyModuleMixin
from .module import Module

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d",
           "ConvTranspose3d", "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d",
           "LazyConvTranspose2d", "LazyConvTranspose3d"]


def _ntuple(v, n):
    return tuple(v) if isinstance(v, (tuple, list)) else (v,) * n


class _ConvNd(Module):
    _n = 2
    _transposed = False

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 dilation=1, groups=1, bias=True, padding_mode="zeros", device=None,
                 dtype=None, output_padding=0):
        super().__init__()
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        n = self._n
        self.kernel_size = _ntuple(kernel_size, n)
        self.stride = _ntuple(stride, n)
        self.dilation = _ntuple(dilation, n)
        valid_padding_strings = {"same", "valid"}
        if isinstance(padding, str):
            if padding not in valid_padding_strings:
                raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                                 f"{valid_padding_strings}")
            if padding == "same" and any(s != 1 for s in self.stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        valid_padding_modes = {"zeros", "reflect", "replicate", "circular"}
        if padding_mode not in valid_padding_modes:
            raise ValueError(f"padding_mode must be one of {valid_padding_modes}, but got "
                             f"padding_mode='{padding_mode}'")
        self.in_channels, self.out_channels = in_channels, out_channels
        self.padding = padding if isinstance(padding, str) else _ntuple(padding, n)
        self.transposed = self._transposed
        self.output_padding = _ntuple(output_padding, n)
        self.groups = groups
        self.padding_mode = padding_mode
        # F.pad's amounts (last dim first) for the non-zero padding modes, which pad first
        # and convolve unpadded; padding="same" splits an odd total with more on the right.
        if isinstance(self.padding, str):
            self._reversed_padding_repeated_twice = [0, 0] * n
            if self.padding == "same":
                for d, k, i in zip(self.dilation, self.kernel_size, range(n - 1, -1, -1),
                                   strict=True):
                    total = d * (k - 1)
                    self._reversed_padding_repeated_twice[2 * i] = total // 2
                    self._reversed_padding_repeated_twice[2 * i + 1] = total - total // 2
        else:
            self._reversed_padding_repeated_twice = tuple(
                p for p in reversed(self.padding) for _ in range(2))
        self.weight = Parameter(_creation.empty(*self._weight_shape(), dtype=dtype,
                                                device=device))
        if bias:
            self.bias = Parameter(_creation.empty(out_channels, dtype=dtype, device=device))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def _weight_shape(self):
        i, o, g = self.in_channels, self.out_channels, self.groups
        return ((i, o // g) if self._transposed else (o, i // g)) + self.kernel_size

    def reset_parameters(self):
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in = self.weight.shape[1] * math.prod(self.kernel_size)
            if fan_in:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self):
        s = "{in_channels}, {out_channels}, kernel_size={kernel_size}, stride={stride}"
        if self.padding != (0,) * self._n:
            s += ", padding={padding}"
        if self.dilation != (1,) * self._n:
            s += ", dilation={dilation}"
        if self.output_padding != (0,) * self._n:
            s += ", output_padding={output_padding}"
        if self.groups != 1:
            s += ", groups={groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += ", padding_mode={padding_mode}"
        return s.format(**self.__dict__)


class _Conv(_ConvNd):
    def forward(self, input):
        if self.padding_mode != "zeros":
            return self._fn(F.pad(input, self._reversed_padding_repeated_twice,
                                  mode=self.padding_mode),
                            self.weight, self.bias, self.stride, 0, self.dilation, self.groups)
        return self._fn(input, self.weight, self.bias, self.stride, self.padding,
                        self.dilation, self.groups)


class Conv1d(_Conv):
    _n, _fn = 1, staticmethod(F.conv1d)


class Conv2d(_Conv):
    _n, _fn = 2, staticmethod(F.conv2d)


class Conv3d(_Conv):
    _n, _fn = 3, staticmethod(F.conv3d)


class _ConvTransposeNd(_ConvNd):
    _transposed = True

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 output_padding=0, groups=1, bias=True, dilation=1, padding_mode="zeros",
                 device=None, dtype=None):
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for '
                             f"{self.__class__.__name__}")
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, device, dtype, output_padding)

    def _output_padding(self, input, output_size):
        """The output_padding that gives ``output_size`` (PyTorch's rule and errors)."""
        if output_size is None:
            return self.output_padding
        n = self._n
        lead = 2 if input.ndim == n + 2 else 1
        output_size = list(output_size)
        if len(output_size) == lead + n:
            output_size = output_size[lead:]
        if len(output_size) != n:
            raise ValueError(f"ConvTranspose{n}D: for {input.ndim}D input, output_size must "
                             f"have {n} or {lead + n} elements (got {len(output_size)})")
        lo = [(input.shape[d + lead] - 1) * self.stride[d] - 2 * self.padding[d]
              + self.dilation[d] * (self.kernel_size[d] - 1) + 1 for d in range(n)]
        hi = [lo[d] + self.stride[d] - 1 for d in range(n)]
        for d in range(n):
            if not lo[d] <= output_size[d] <= hi[d]:
                raise ValueError(f"requested an output size of {output_size}, but valid sizes "
                                 f"range from {lo} to {hi} (for an input of "
                                 f"{Size(input.shape[2:])})")  # [2:] even unbatched, as PyTorch
        return [output_size[d] - lo[d] for d in range(n)]

    def forward(self, input, output_size=None):
        return self._fn(input, self.weight, self.bias, self.stride, self.padding,
                        self._output_padding(input, output_size), self.groups, self.dilation)


class ConvTranspose1d(_ConvTransposeNd):
    _n, _fn = 1, staticmethod(F.conv_transpose1d)


class ConvTranspose2d(_ConvTransposeNd):
    _n, _fn = 2, staticmethod(F.conv_transpose2d)


class ConvTranspose3d(_ConvTransposeNd):
    _n, _fn = 3, staticmethod(F.conv_transpose3d)


class _LazyConvMixin(LazyModuleMixin):
    """``in_channels`` from the first input's channel dimension (dim 1, or 0 unbatched)."""

    def _lazy_parameters(self, out_channels, bias, device, dtype):
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self, input, *args, **kwargs):
        if self.has_uninitialized_params():
            self.in_channels = self._in_channels(input)
            if self.in_channels % self.groups != 0:
                raise ValueError("in_channels must be divisible by groups")
            self.weight.materialize(self._weight_shape())
            if self.bias is not None:
                self.bias.materialize((self.out_channels,))
            self.reset_parameters()

    def _in_channels(self, input):
        unbatched = self._n + 1
        if input.dim() not in (unbatched, unbatched + 1):
            raise RuntimeError(f"Expected {unbatched}D (unbatched) or {unbatched + 1}D "
                               f"(batched) input to {type(self).__name__}, but got input of "
                               f"size: {input.shape}")
        return input.shape[input.dim() - unbatched]


class _LazyConv(_LazyConvMixin):
    def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False,
                         padding_mode, device, dtype)
        self._lazy_parameters(out_channels, bias, device, dtype)


class _LazyConvTranspose(_LazyConvMixin):
    def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0,
                 groups=1, bias=True, dilation=1, padding_mode="zeros", device=None,
                 dtype=None):
        super().__init__(0, 0, kernel_size, stride, padding, output_padding, groups, False,
                         dilation, padding_mode, device, dtype)
        self._lazy_parameters(out_channels, bias, device, dtype)


class LazyConv1d(_LazyConv, Conv1d):
    cls_to_become = Conv1d


class LazyConv2d(_LazyConv, Conv2d):
    cls_to_become = Conv2d


class LazyConv3d(_LazyConv, Conv3d):
    cls_to_become = Conv3d


class LazyConvTranspose1d(_LazyConvTranspose, ConvTranspose1d):
    cls_to_become = ConvTranspose1d


class LazyConvTranspose2d(_LazyConvTranspose, ConvTranspose2d):
    cls_to_become = ConvTranspose2d


class LazyConvTranspose3d(_LazyConvTranspose, ConvTranspose3d):
    cls_to_become = ConvTranspose3d
