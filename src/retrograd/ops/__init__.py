"""All ops; importing this package attaches them to Tensor and the public namespace
(``register`` refuses a name bound twice, so the order below is only the import order)."""

from . import (binary, comparison, conversion, convolution, indexing, joining, linalg,  # noqa: F401
               nn_ops, pointwise, reduction, scatter, shape, losses, activation, weight_norm,
               rearrange, resample, linalg_decomp, sorting, special, searching, combining,
               differences, stacking, matrices, statistics, random_sampling, numbers,
               predicates, dtype_info, threads, inplace_shape, pooling, norms, view_scatter,
               complex_parts, spectral, stft, windows)
from ._registry import FUNCTIONS, apply, apply_inplace, defop, register  # noqa: F401
