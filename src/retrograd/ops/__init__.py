"""All ops; importing this package attaches them to Tensor and the public namespace."""

from . import binary, comparison, indexing, linalg, pointwise, reduction, shape  # noqa: F401
from ._registry import FUNCTIONS, apply, apply_inplace, defop, register  # noqa: F401
