"""Conv3d, ConvTranspose1d and ConvTranspose3d (``_ConvNd``'s parameters and init), with
the transposed layers' ``output_size`` as PyTorch computes it."""

from ..._tensor import Size
from .. import functional as F
from .conv import _ConvNd

__all__ = ["Conv3d", "ConvTranspose1d", "ConvTranspose3d"]


class Conv3d(_ConvNd):
    _n = 3

    def forward(self, input):
        if self.padding_mode != "zeros":
            return F.conv3d(F.pad(input, self._reversed_padding_repeated_twice,
                                  mode=self.padding_mode),
                            self.weight, self.bias, self.stride, 0, self.dilation, self.groups)
        return F.conv3d(input, self.weight, self.bias, self.stride, self.padding,
                        self.dilation, self.groups)


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


class ConvTranspose3d(_ConvTransposeNd):
    _n, _fn = 3, staticmethod(F.conv_transpose3d)
