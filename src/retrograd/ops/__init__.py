"""All ops; importing this package attaches them to Tensor and the public namespace (in
this order: a later module's registration of a name would win)."""

from . import (binary, comparison, conversion, conv, indexing, joining, linalg,  # noqa: F401
               nn_ops, pointwise, reduction, scatter, shape, losses, activation, weight_norm,
               rearrange, resample, linalg_decomp, sorting, special, misc, inplace_shape,
               conv_nd, pooling_nd)
from ._registry import FUNCTIONS, apply, apply_inplace, defop, register  # noqa: F401
