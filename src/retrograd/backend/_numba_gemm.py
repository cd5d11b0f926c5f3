"""The job that runs a part of a GEMM on OpenBLAS's threads (:mod:`.mkl_gemm`): calls of
MKL's ``cblas_sgemm`` or ``cblas_dgemm``, whose address the job carries, each on a block
of the output that a bias (a linear layer's) may fill first (then added with beta 1, as
PyTorch's addmm), or on a step of a block along the inner size, added to the steps before
it.

The address is read from the job, not compiled in: MKL is mapped anywhere in a process, and
numba caches the job on disk for the next one.
"""

from llvmlite import ir
from numba import carray, types
from numba.extending import intrinsic

from ._numba_kernels import float32_at, float64_at, int64_at, jit, job

_I32, _I64, _BYTES = ir.IntType(32), ir.IntType(64), ir.IntType(8).as_pointer()
_ROW_MAJOR = 101
# of a product: cblas_?gemm, transa, transb, M, N, K, a, lda, b, ldb, c, ldc, bias, and 1
# where it adds to the output (a step along K after the first); a, b, c and bias as byte
# offsets from the first elements of the operands, the output and the bias
FIELDS = 14


def _gemm_call(real):
    """An intrinsic making the product described at an address (``FIELDS`` int64s), its
    operands and output at offsets from three addresses: its ``cblas_?gemm`` called
    row-major with alpha 1, and beta 1 where it adds to the output (a bias is there
    already, or a step before it), else 0."""
    def call(typingctx, address, a_at, b_at, c_at, adds):
        def codegen(context, builder, signature, args):
            row = builder.inttoptr(args[0], _I64.as_pointer())
            f = [builder.load(builder.gep(row, [ir.Constant(_I64, i)])) for i in range(FIELDS)]
            for i, base in ((6, args[1]), (8, args[2]), (10, args[3])):
                f[i] = builder.add(f[i], base)
            kind = ir.FunctionType(ir.VoidType(), [_I32] * 6 + [real, _BYTES, _I32, _BYTES,
                                                                _I32, real, _BYTES, _I32])
            gemm = builder.inttoptr(f[0], kind.as_pointer())
            ta, tb, m, n, k, lda, ldb, ldc = (builder.trunc(f[i], _I32)
                                               for i in (1, 2, 3, 4, 5, 7, 9, 11))
            a, b, c = (builder.inttoptr(f[i], _BYTES) for i in (6, 8, 10))
            beta = builder.select(args[4], ir.Constant(real, 1.0), ir.Constant(real, 0.0))
            builder.call(gemm, [ir.Constant(_I32, _ROW_MAJOR), ta, tb, m, n, k,
                                ir.Constant(real, 1.0), a, lda, b, ldb, beta, c, ldc])
            return context.get_dummy_value()
        return types.void(*[types.int64] * 4, types.boolean), codegen
    return intrinsic(call)


_sgemm = _gemm_call(ir.FloatType())
_dgemm = _gemm_call(ir.DoubleType())


@jit
def _fill(c, bias, ldc, rows, cols):
    """Each of ``rows`` rows of a block (``ldc`` apart) set to ``bias`` (``cols`` values)."""
    for r in range(rows):
        c[r * ldc:r * ldc + cols] = bias


@job
def gemm_job(p):
    """[address of the first of a run of products, their number, 1 for float64, addresses of
    the first elements of a, b, the output and the bias (0: none)]."""
    run = carray(p, 7)
    a, b, c, bias = run[3], run[4], run[5], run[6]
    for i in range(run[1]):
        at = run[0] + 8 * FIELDS * i
        f = carray(int64_at(at), FIELDS)
        m, n, ldc = f[3], f[4], f[11]
        fills = bias != 0 and f[13] == 0  # (the first step of a biased block)
        if run[2]:
            if fills:
                _fill(carray(float64_at(c + f[10]), (m - 1) * ldc + n),
                      carray(float64_at(bias + f[12]), n), ldc, m, n)
            _dgemm(at, a, b, c, bias != 0 or f[13] != 0)
        else:
            if fills:
                _fill(carray(float32_at(c + f[10]), (m - 1) * ldc + n),
                      carray(float32_at(bias + f[12]), n), ldc, m, n)
            _sgemm(at, a, b, c, bias != 0 or f[13] != 0)


JOBS = {"gemm": gemm_job.address}
