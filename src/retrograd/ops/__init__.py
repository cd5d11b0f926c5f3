"""All ops; importing this package attaches them to Tensor and the public namespace."""

from . import (binary, comparison, conversion, conv, indexing, joining, linalg,  # noqa: F401
               nn_ops, pointwise, reduction, scatter, shape)
from . import losses  # noqa: F401
from ._registry import FUNCTIONS, apply, apply_inplace, defop, register  # noqa: F401
from . import activation  # noqa: F401,E402
from . import weight_norm  # noqa: F401,E402 (_weight_norm, norm_except_dim)
from . import rearrange, resample  # noqa: F401,E402
from . import linalg_decomp  # noqa: F401,E402 (torch.linalg's decompositions and solvers)
from . import sorting  # noqa: F401,E402
from . import special  # noqa: F401,E402
from . import misc  # noqa: F401,E402
from . import inplace_shape  # noqa: F401,E402
from . import conv_nd, pooling_nd  # noqa: F401,E402 (beyond conv.py's 1-D/2-D kernels)
