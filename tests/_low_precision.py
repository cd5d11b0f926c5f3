"""The op database's samples in a low-precision dtype, shared by the float16 and
bfloat16 tests (tests/ops/test_half_compute.py, test_bfloat16_compute.py)."""

import zlib

import pytest

import retrograd
from opdb import op_db, reseed


# Ops PyTorch's CPU build refuses for Half and for BFloat16 alike (NotImplementedError
# "... not implemented for 'Half'", or a RuntimeError naming the dtype): their samples
# are skipped where PyTorch raises. retrograd computes them (in float32, rounded once).
TORCH_REFUSES = frozenset((
    "cdist", "pdist", "multi_margin_loss", "multilabel_margin_loss", "ctc_loss",
    "local_response_norm",  # its 3-D form: avg_pool3d
    "avg_pool3d", "lp_pool3d", "interpolate.bilinear", "interpolate.bicubic",  # antialias
    "affine_grid",  # 3-D
    "histogram", "histogramdd",  # (histogramdd over the data's range; given one, it runs)
    "quantile.linear", "quantile.lower", "quantile.higher", "quantile.midpoint",
    "quantile.nearest", "nanquantile.linear", "nanquantile.lower", "nanquantile.higher",
    "nanquantile.midpoint", "nanquantile.nearest",
    # linear algebra (LAPACK kernels): float and double only
    "linalg.det", "linalg.slogdet", "linalg.inv", "linalg.inv_ex", "linalg.solve",
    "linalg.solve_ex", "linalg.cholesky", "linalg.cholesky_ex", "linalg.qr", "linalg.eigh",
    "linalg.eigvalsh", "linalg.svd", "linalg.svdvals", "linalg.pinv", "linalg.pinv.hermitian",
    "linalg.solve_triangular", "linalg.matrix_power", "linalg.matrix_norm", "linalg.norm",
    "linalg.cond", "linalg.matrix_rank", "linalg.vander", "linalg.tensorinv",
    "linalg.tensorsolve", "det", "det.method", "logdet", "slogdet", "inverse",
    "inverse.method", "pinverse", "svd", "qr", "cholesky", "cholesky_solve",
    "cholesky_inverse", "triangular_solve", "matrix_power", "linalg.lstsq", "linalg.lu",
    "linalg.lu_factor", "linalg.lu_factor_ex", "linalg.lu_solve", "norm.nuc",
    "linalg.householder_product", "orgqr",
    # torch.special: no half backward (retrograd computes it); no half kernels (retrograd
    # refuses them too, as the fuzz suite checks)
    "special.i1", "special.i1e", "special.log_ndtr", "special.ndtri", "special.erfcx",
    # torch.fft: "Unsupported dtype Half" (retrograd refuses it too: CUDA's half FFTs give
    # complex32, which NumPy lacks)
    *(f"fft.{name}{variant}" for name in (
        "fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "fftn", "ifftn",
        "rfft2", "irfft2", "rfftn", "irfftn", "hfft2", "ihfft2", "hfftn", "ihfftn")
      for variant in ("", ".complex")),
))


def entries():
    """Op-database entries compared with PyTorch in float32 (and so in half precision)."""
    return [op for op in op_db if "float32" in op.dtypes and not op.skip_torch]


def samples(op, dtype, requires_grad):
    """``op``'s samples in ``dtype`` (a name), the same on every run."""
    reseed(zlib.crc32(f"{op.id}/{dtype}/{requires_grad}".encode()))
    return list(op.sample_inputs(dtype, requires_grad))


def params(dtype, requires_grad, keep=lambda op: True):
    """``(op, sample index)`` parameters for every kept entry's samples in ``dtype``."""
    return [pytest.param(op, i, id=f"{op.id}-{i}-{s.name}")
            for op in entries() if keep(op)
            for i, s in enumerate(samples(op, dtype, requires_grad))]


def flat(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def leaves(sample):
    """The tensors of a sample that require grad, each once, in order of appearance."""
    seen = {}

    def visit(x):
        if isinstance(x, retrograd.Tensor):
            seen.setdefault(id(x), x)
        elif isinstance(x, (list, tuple)):
            for e in x:
                visit(e)
        elif isinstance(x, dict):
            for e in x.values():
                visit(e)
    visit((sample.input, sample.args, sample.kwargs))
    return [t for t in seen.values() if t.requires_grad]
