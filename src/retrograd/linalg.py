"""``torch.linalg``: decompositions, inverses, solvers and norms (real input).

>>> import retrograd as torch
>>> torch.linalg.det(torch.eye(3))
tensor(1.)
"""

from .ops import _out
from .ops._registry import FUNCTIONS
from .ops.linalg_decomp import (  # noqa: F401
    LinAlgError, cholesky, cholesky_ex, cond, cross, det, diagonal, eigh, eigvalsh,
    householder_product, inv, inv_ex, lstsq, lu, lu_factor, lu_factor_ex, lu_solve, matrix_exp,
    matrix_norm, matrix_power, matrix_rank, multi_dot, norm, pinv, qr, slogdet, solve, solve_ex,
    solve_triangular, svd, svdvals, tensorinv, tensorsolve, vander, vecdot, vector_norm)

matmul = FUNCTIONS["matmul"]  # torch.matmul itself, out= and all
# out= as PyTorch's, each named as its messages name it
cross = _out.wrap(cross, "linalg_cross")
vecdot = _out.wrap(vecdot, "linalg_vecdot")
multi_dot = _out.wrap(multi_dot, "multi_dot")
