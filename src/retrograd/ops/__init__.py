"""All ops; importing this package attaches them to Tensor and the public namespace."""

from . import (binary, comparison, conversion, indexing, linalg, pointwise,  # noqa: F401
               reduction, shape)
from ._registry import FUNCTIONS, apply, apply_inplace, defop, register  # noqa: F401
