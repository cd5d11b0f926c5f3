"""How often PyTorch's square root on this machine differs from the correctly rounded one:
its CPU kernel is Sleef's, whose last bit depends on the vector ISA it picked (measured: in
float32 0.7% of values with AVX-512, 16% with AVX2; in float64 0.8% and 1.3%). An
optimizer whose step divides by a square root differs from PyTorch's in that bit, carried
on through the steps, on a share of elements bounded by a small multiple of this."""

import functools

import numpy


@functools.cache
def torch_sqrt_misses(dtype):
    import torch
    x = numpy.random.default_rng(0).random(100_000).astype(dtype) * 10
    return float((torch.from_numpy(x).sqrt().numpy() != numpy.sqrt(x)).mean())


def carried_limit(dtype, floor):
    """The share of elements allowed to differ: ``floor`` (what AVX-512's Sleef needs),
    or three times PyTorch's share of square roots off by an ulp here if more."""
    return max(floor, 3 * torch_sqrt_misses(dtype))
