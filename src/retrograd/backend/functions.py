"""What rules need beyond the array namespace's own names, one implementation per array
module, so that a rule's body is the same whatever ``xp`` it receives.

``functions(xp)`` returns them for the module a rule received: the array
implementation below for NumPy (and the batched arrays, which dispatch NumPy calls), for
CuPy and for the emulator; a namespace that registered its own (the differentiable facade
over Tensors, whose versions are ops, so a backward of a backward records them) gets
those. The array versions reach SciPy through :func:`scipy_linalg` and
:func:`..special_functions`, which pick ``scipy`` or ``cupyx.scipy`` (or the emulator's)
by the arrays' module.
"""

import math
from fractions import Fraction

import numpy

import ml_dtypes

from .._dtype import FUSED, is_float, is_low
from . import cpu_kernels, emulated, erf, gpu_kernels, meta, mkl_gemm, special_functions

__all__ = ["functions", "register_functions", "scipy_linalg", "facade", "register_facade"]

_BFLOAT16 = numpy.dtype(ml_dtypes.bfloat16)
_MATH = {"erfc": math.erfc, "gammaln": math.lgamma}  # what special() has without SciPy
_known = {}  # namespace -> its functions (registered, or made on first use)
_facade = []  # the differentiable facade's namespace finder, once registered


def register_functions(namespace, impl):
    """Use ``impl``'s functions for rules that receive ``namespace``."""
    _known[namespace] = impl


def register_facade(of):
    """The differentiable facade (the namespace of rules under ``create_graph``) is
    ``of(tensor)``: the namespace for that tensor's device (None: the CPU's)."""
    _facade[:] = [of]


def facade(tensor):
    """The namespace rules run on to differentiate ``tensor``'s backward again."""
    return _facade[0](tensor)


def scipy_linalg(xp):
    """The ``scipy.linalg`` of array module ``xp``: ``cupyx.scipy.linalg`` for CuPy, the
    emulator's for its arrays, SciPy's for NumPy."""
    if xp is emulated.namespace:
        return emulated.scipy_linalg
    if xp is meta.namespace:
        return meta.namespace.scipy_linalg
    if getattr(xp, "__name__", "") == "cupy":
        import cupyx.scipy.linalg
        return cupyx.scipy.linalg
    import scipy.linalg
    return scipy.linalg


class ArrayFunctions:
    """The functions on arrays of module ``xp`` (NumPy's, CuPy's, the emulator's)."""

    # Fused kernels (``gpu_kernels``' functions) where the module has them, else None:
    # the caller then runs the chain of array operations they fuse.
    fused_adam = None

    def __init__(self, xp):
        self.xp = xp

    def sum_kept(self, a, axes):
        """``a`` summed over the tuple ``axes``, dims kept (gradients reduced to a
        broadcast input's shape)."""
        return self.xp.sum(a, axis=axes, keepdims=True)

    def real_pairs(self, a):
        """Complex ``a`` viewed as interleaved real and imaginary parts along its last axis
        (a 0-d array as one element first), which must be contiguous. (CuPy views a new
        axis of one element with stride 0, so :meth:`_NumpyFunctions.real_pairs`' view
        would alias the two parts there.)"""
        return (a if a.ndim else a.reshape(1)).view(a.real.dtype)

    def solve(self, a, b):
        """``a^{-1} b`` with NumPy 2's rules: ``b`` is a vector only when 1-D, batch dims
        broadcast."""
        return self.xp.linalg.solve(a, b)

    def where(self, cond, a, b):
        return self.xp.where(cond, a, b)

    def any_true(self, mask):
        """Whether any element of boolean ``mask`` holds: the argument checks on values
        (indices and targets in bounds) ask here, so they need no values where none exist."""
        return bool(mask.any())

    def search_sorted(self, s, v, right):
        """PyTorch's binary search of each row of ``v`` in the same row of ``s`` (sorted
        rows; the leading dims match): where each value would be inserted, after equal
        boundaries if ``right``. Every value's step is taken together, so an unsorted
        row or a NaN gives what PyTorch's gives."""
        xp = self.xp
        n = s.shape[-1]
        start = xp.zeros(v.shape, dtype=numpy.int64)
        end = xp.full(v.shape, n, dtype=numpy.int64)
        for _ in range(n.bit_length()):
            mid = start + (end - start) // 2
            at = xp.take_along_axis(s, xp.minimum(mid, n - 1), -1)
            stop = at > v if right else at >= v
            go = start < end
            start = xp.where(go & ~stop, mid + 1, start)
            end = xp.where(go & stop, mid, end)
        return start

    def storage(self, a):
        """The memory under ``a`` as one run of its elements (``as_strided``'s storage);
        None where that run is not ``a`` read in C order."""
        return a.reshape(-1) if a.flags.c_contiguous else None

    def all_true(self, mask):
        """Whether every element of boolean ``mask`` holds, for a result whose form depends
        on it (lstsq's residuals: under vmap, on the whole batch's, as in PyTorch)."""
        return bool(mask.all())

    def all_finite(self, a):
        """Whether every element of ``a`` is finite, for a choice of method (a solve that
        substitutes where LU meets infinities)."""
        return self.all_true(self.xp.isfinite(a))

    def checked_values(self, a):
        """The values of 0-d array ``a`` for an argument check (does a fill value fit the
        dtype?): one here, one per batch member under vmap, none on meta."""
        return [a.item()]

    def draw(self, rng, name, args, shape):
        """``rng.<name>(*args, shape)``: random values of ``shape`` for an initializer or a
        sampler, drawn on the host from NumPy's generator (so a device's values are the
        CPU's), as an array of this module."""
        return self.xp.asarray(getattr(rng, name)(*args, shape))

    def call(self, op, values, attrs=()):
        """Op ``op`` run from inside a rule: its forward on these arrays (the facade records
        the op, so a backward of the rule differentiates it)."""
        return op.forward(self.xp, *values, *attrs)

    def constant(self, a):
        """An array a rule computed aside (from primals, on the host) as a value of this
        namespace: on the rule's device; the facade wraps it, a constant of the graph."""
        return self.xp.asarray(a)

    def recomputed(self, saved, recompute):
        """What the forward saved and the inputs determine (a normalisation's mean and
        rstd): ``saved`` on arrays. The facade returns ``recompute()``: saved, the values
        are constants of the graph, and a second derivative must see their dependence on
        the inputs."""
        return saved

    def kernel_or_composite(self, kernel, composite, *args):
        """A rule with two forms: ``kernel(*args)`` on arrays, ``composite(*args)`` built
        from differentiable ops on the facade's Tensors (the batched arrays run the kernel
        per batch element)."""
        return kernel(*args)

    def once_differentiable(self, g, msg):
        """``g``, whose differentiation would be wrong: arrays are never differentiated;
        on the facade, a history that raises ``msg`` (PyTorch's DelayedError)."""
        return g

    def sigmoid(self, x):
        """``1 / (1 + exp(-x))`` with exp of a non-positive argument only (no overflow)."""
        xp = self.xp
        e = xp.exp(-xp.abs(x))
        r = 1 / (1 + e)
        return self.where(x >= 0, r, e * r)

    def erf(self, x):
        return erf(self.xp, x)

    def special(self, name, *args):
        """``scipy.special.<name>(*args)`` of the arrays' module (``cupyx.scipy.special``
        for CuPy's), in the dtype of the last argument (SciPy computes some in float64).
        Without SciPy (NumPy only: CuPy always has cupyx), erfc and gammaln elementwise
        with ``math``'s, the others refused."""
        x = args[-1]
        sp = special_functions(self.xp)
        if sp is None:  # pragma: no cover - exercised only without SciPy
            if name not in _MATH:
                raise NotImplementedError(f"{name} needs SciPy (pip install scipy)")
            return numpy.frompyfunc(_MATH[name], 1, 1)(x).astype(x.dtype)
        return self.xp.asarray(getattr(sp, name)(*args), dtype=x.dtype)

    def matmul(self, a, b):
        """``a @ b``, as the module's ``matmul``."""
        return self.xp.matmul(a, b)

    def matmul_tn(self, a, b):
        """``a.T @ b`` for matrices."""
        return self.xp.matmul(self.xp.swapaxes(a, 0, 1), b)

    def batched_matmul(self, a, b):
        """``a @ b`` with ``b`` a batch of matrices."""
        return self.xp.matmul(a, b)

    def concatenate(self, arrays, axis):
        """``concatenate(arrays, axis)`` of arrays of one dtype."""
        return self.xp.concatenate(arrays, axis=axis)

    def outer(self, a, b):
        """Outer products of the last axes, ``a[..., :, None] * b[..., None, :]``: a product
        over one contracted element (a column times a row, a one-row weight gradient)."""
        return self.xp.expand_dims(a, -1) * self.xp.expand_dims(b, -2)

    def fused_mul_sub(self, a, b, c):
        """``a * b - c`` rounded once, as PyTorch's CPU kernels compute it (compiled with
        FMA contraction): where the two nearly cancel, the product's rounding error is the
        whole difference. float32 computes in float64, where its product is exact and the
        difference is rounded to odd (the sum's error, by TwoSum, sets its last bit), so
        the rounding to float32 is the only one that counts, even at a halfway point.

        float64 has no wider float: Boldo and Melquiond's emulation of an FMA ("Emulation
        of FMA and correctly rounded sums: proved algorithms using rounding to odd", IEEE
        Trans. Computers 57(4), 2008, proved where nothing overflows or underflows).
        Dekker's product ``ph + pl`` and TwoSum's ``th + tl = ph - c`` are exact; then
        ``th + RO(tl + pl)`` (``tl + pl`` rounded to odd), rounded to nearest, is ``a * b
        - c`` rounded once. Nothing underflows where ``|ph| >= 2**-968``: every bit of
        the product's error lies at or above ``2**-1074`` (a sum that lands among the
        subnormals is then exact); an overflow in any step (a split of an ``|a|`` beyond
        about ``2**997`` too) leaves the result infinite or NaN. Elsewhere a zero or
        non-finite factor makes ``a * b`` exact, so ``ph - c`` rounds once, with IEEE's
        signed zeros, infinities and NaNs; the rest (products below ``2**-968``, results
        near or past overflow, huge factors: rare) is computed on the host by
        :meth:`mul_sub_exactly`, an element at a time (whether there is any: one flag
        read from a device)."""
        xp = self.xp
        if a.dtype != numpy.float64:
            p = xp.multiply(a.astype(numpy.float64), b)
            c = c.astype(numpy.float64) if hasattr(c, "dtype") else numpy.float64(c)
            return _to_odd(xp, *_two_diff(xp, p, c)).astype(a.dtype)
        b = xp.asarray(b)  # (a number: CuPy's isfinite below takes no lone one)
        ph, pl = _two_product(xp, a, b)
        th, tl = _two_diff(xp, ph, c)
        r = th + _to_odd(xp, *_two_diff(xp, tl, -pl))
        slow = ~xp.isfinite(r) | (xp.abs(ph) < 2.0 ** -968)
        if not self.any_true(slow):
            return r
        r = xp.where(slow, th, r)  # th: ph - c rounded
        hard = slow & xp.isfinite(a) & xp.isfinite(b) & (a != 0) & (b != 0)
        return self.mul_sub_exactly(hard, r, a, b, c) if self.any_true(hard) else r

    def fused_mul_add(self, a, b, c, out=None):
        """``a * b + c`` as PyTorch's add with an alpha, lerp and addcmul compute it: for
        float32 and float64 ``a`` rounded once (:meth:`fused_mul_sub` of ``-c``; a number
        ``b`` first rounded to ``a``'s dtype, as PyTorch's scalars are), for other dtypes
        as written (PyTorch's half ones fuse in float32); into ``out`` (an array of the
        result's shape; it may be ``c``) if given."""
        if a.dtype not in FUSED:
            return self.xp.add(a * b, c, out=out)
        r = self.fused_mul_sub(a, b if hasattr(b, "dtype") else a.dtype.type(b),
                               self.xp.negative(c))
        if out is None:
            return r
        self.xp.copyto(out, r, casting="same_kind")
        return out

    def mul_sub_exactly(self, where, r, a, b, c):
        """``r``, an array of the operands' broadcast shape that this writes into, with
        ``a * b - c`` rounded once where ``where`` holds (finite nonzero float64 ``a`` and
        ``b``): computed on the host in Python's rationals, an element at a time."""
        xp = self.xp
        host = getattr(xp, "asnumpy", numpy.asarray)
        ops = (host(xp.broadcast_to(xp.asarray(x), r.shape)[where]).tolist() for x in (a, b, c))
        r[where] = xp.asarray([_mul_sub(*x) for x in zip(*ops, strict=True)], numpy.float64)
        return r

    def in_float32(self, f, x):
        """``f(xp, x)`` as PyTorch's kernels compute it for float16: in float32, rounded
        once."""
        if is_low(x.dtype):
            return f(self.xp, x.astype(numpy.float32)).astype(x.dtype)
        return f(self.xp, x)

    def scalar_mul(self, a, b, opmath):
        """``a * b`` where a 0-d operand (a reduced loss's gradient, a scalar weight) does
        not promote a dimensioned one and enters a low-precision product in its compute
        dtype (``opmath``: dtype -> compute dtype), as ATen's CPU scalars."""
        if (a.ndim == 0) != (b.ndim == 0) and a.dtype != b.dtype:
            dt = b.dtype if a.ndim == 0 else a.dtype
            up = opmath.get(dt, dt)
            return (a.astype(up, copy=False) * b.astype(up, copy=False)).astype(dt, copy=False)
        return a * b

    def clamp_min(self, x, c):
        """``maximum(x, c)`` for a Python number ``c``."""
        return self.xp.maximum(x, c)

    def clamp_max(self, x, c):
        """``minimum(x, c)`` for a Python number ``c``."""
        return self.xp.minimum(x, c)

    def accumulate(self, name, a, axis):
        """``xp.<name>.accumulate(a, axis)`` for binary ufunc ``name`` (running maxima,
        log-sum-exps, ...)."""
        return getattr(self.xp, name).accumulate(a, axis=axis)

    def address(self, a):
        """The memory address of ``a``'s first element (where a view lies in its base)."""
        return a.__array_interface__["data"][0]

    def bincount(self, index, weights, length):
        """The sums of ``weights`` per value of ``index``, whose values the caller knows
        lie in ``[0, length)``: a result of ``length`` elements."""
        return self.xp.bincount(index, weights=weights, minlength=length)

    def copy_for_writes(self, a, *writes):
        """A copy of ``a`` for an op to write ``writes`` (its index and values) into
        (scatter, index_put): under vmap batched as they are, even where ``a`` is not, as
        PyTorch's batching rules give ``self`` their batch."""
        return a.copy()

    def index_add(self, a, index, values):
        """``a`` with ``values``' rows added into its rows ``index`` (repeats accumulate);
        arrays are written in place."""
        self.ufunc_at("add", a, index, values)
        return a

    def ufunc_at(self, name, a, at, b):
        """``xp.<name>.at(a, at, b)``: ``a[at] = name(a[at], b)`` unbuffered, repeated
        targets combined in order."""
        getattr(self.xp, name).at(a, at, b)

    def expm(self, a):
        """The matrix exponential of a batch of square matrices, in their dtype (SciPy's
        takes batches)."""
        return scipy_linalg(self.xp).expm(a).astype(a.dtype, copy=False)

    def lu(self, a):
        """The pivoted LU of a batch as ``(p, L, U)`` with ``A = L[p] U`` (SciPy's
        ``p_indices``: ``P[i, p[i]] = 1``)."""
        return scipy_linalg(self.xp).lu(a, p_indices=True)

    def factor_info(self, a, kind):
        """LAPACK's info for each matrix of batch ``a`` factored alone (``kind`` "lu":
        getrf's, "cholesky": potrf's), int32 of the batch shape: the error path of a
        batched factorization that failed, to name the matrix and pivot."""
        return _factor_info(numpy.asarray(a), kind)

    def errstate(self, **kinds):
        """A context in which the floating-point errors ``kinds`` name (``invalid="ignore"``)
        are handled so: NumPy's error state, which governs NumPy's arrays and those computed
        through NumPy (the emulator's, the batched ones); CuPy's kernels report none."""
        return numpy.errstate(**kinds)


def _two_diff(xp, x, y):
    """``(s, e)``: ``s = x - y`` rounded to nearest and ``e = x - y - s`` exactly (Knuth's
    TwoSum, exact unless a step overflows). (``xp``'s functions where two operands meet:
    an operator of a device array does not dispatch to a batch under vmap.)"""
    s = xp.subtract(x, y)
    t = s - x
    return s, xp.subtract(x, s - t) - xp.add(y, t)


def _split(x):
    """Veltkamp's ``x = hi + lo`` exactly, halves of at most 26 bits (unless ``2**27 + 1``
    times ``x`` overflows)."""
    g = (2.0 ** 27 + 1) * x
    hi = g - (g - x)
    return hi, x - hi


def _two_product(xp, a, b):
    """Dekker's ``(p, e)``: ``p = a * b`` rounded and ``e = a * b - p``, exactly where no
    step overflows and no partial product has bits below ``2**-1074``."""
    p = xp.multiply(a, b)
    (ah, al), (bh, bl) = _split(a), _split(b)
    return p, ((xp.multiply(ah, bh) - p) + xp.multiply(ah, bl) + xp.multiply(al, bh)
               ) + xp.multiply(al, bl)


def _to_odd(xp, s, e):
    """``s + e`` rounded to odd, given ``s``, rounded to nearest, and its exact error
    ``e``: where inexact, ``s`` rounded toward zero (one step down in magnitude where
    ``e``'s sign is not ``s``'s) with its last bit set. (A NaN ``e``, beside an infinite
    ``s``, leaves ``s``.)"""
    bits = s.view(numpy.int64)
    inexact = (e != 0) & xp.isfinite(e)
    down = inexact & ((e.view(numpy.int64) ^ bits) < 0)
    return ((bits - down) | inexact).view(numpy.float64)


def _mul_sub(a, b, c):
    """``a * b - c`` of Python floats, ``a`` and ``b`` finite and nonzero, rounded once:
    CPython divides ints rounding to nearest even, subnormals and the sign of an
    underflowed zero included."""
    if not math.isfinite(c):
        return -c
    q = Fraction(a) * Fraction(b) - Fraction(c)
    try:
        return q.numerator / q.denominator
    except OverflowError:
        return math.inf if q > 0 else -math.inf


def _factor_info(arr, kind):
    """``factor_info`` of a host array, with SciPy's LAPACK."""
    from scipy.linalg import lapack
    mats = arr.reshape((-1,) + arr.shape[-2:])
    out = numpy.zeros(len(mats), dtype=numpy.int32)
    for i, m in enumerate(mats):
        if kind == "lu":
            getrf, = lapack.get_lapack_funcs(("getrf",), (m,))
            out[i] = max(getrf(m)[2], 0)
        else:
            potrf, = lapack.get_lapack_funcs(("potrf",), (m,))
            out[i] = max(potrf(m, lower=1, clean=1)[1], 0)
    return out.reshape(arr.shape[:-2])


_CUPY_AT = frozenset({"add", "subtract", "maximum", "minimum", "bitwise_and", "bitwise_or",
                      "bitwise_xor"})
_BITS = {2: numpy.int16, 4: numpy.int32, 8: numpy.int64}
_BIT_SELECT_MIN = 1 << 15  # elements: below, numpy.where measured faster


def _tiled_batch(a, b):
    """Whether ``a @ b`` (a small product each) runs as :func:`cpu_kernels.matmuls`: float32
    NumPy batches of the same batch shape, at least 4 rows by 8 columns a product, and
    enough of them to pay for the call (some 15 us). Whatever the thread count, so that a
    product's bits do not depend on it."""
    return (type(a) is type(b) is numpy.ndarray and a.ndim == b.ndim >= 3
            and a.shape[:-2] == b.shape[:-2] and a.dtype == b.dtype == numpy.float32
            and a.shape[-2] >= 4 and b.shape[-1] >= 8
            and a.size * b.shape[-1] >= 1 << 21 and cpu_kernels.ready())


class _NumpyFunctions(ArrayFunctions):
    """NumPy's fast kernels."""

    def real_pairs(self, a):
        """Complex ``a`` viewed as its real and imaginary parts along a new last axis
        (PyTorch's ``view_as_real``), any layout: through a new axis of one element, whose
        stride NumPy ignores (viewing the last axis needs it contiguous: a transposed
        parameter's is not)."""
        return a[..., None].view(a.real.dtype)

    @property
    def fused_adam(self):
        """Adam's update in one compiled pass where numba is installed (NumPy's chain is
        ten passes over the parameter and its moments)."""
        return cpu_kernels.adam_step if cpu_kernels.ready() else None

    def sum_kept(self, a, axes):
        """Over the leading axes of a large float32 array (a bias's gradient over the rows
        of a linear layer), the compiled column sums: in parts on OpenBLAS's threads, and
        in chunks (NumPy's adds row after row on one thread). Else the ufunc's reduce, which
        ``numpy.sum`` calls through Python wrappers: in a training step, after a large pass
        has left them out of the cache, 15-20 us of w2's (128, 1024) bias gradient's 52."""
        lead = len(axes)
        if axes == tuple(range(lead)) and cpu_kernels.sums_columns(a, lead):
            sums = cpu_kernels.column_sums(a.reshape(math.prod(a.shape[:lead]), -1))
            return sums.reshape((1,) * lead + a.shape[lead:])
        return numpy.add.reduce(a, axis=axes, keepdims=True)

    def fused_mul_sub(self, a, b, c):
        """By the compiled kernel's fma where numba is (:func:`cpu_kernels.mul_sub`: 1M
        float64 elements 20 -> 1.2 ms, ten 22 -> 1 us); else, over many elements, in
        blocks of 8192 (broadcast by ``nditer``): the float64 form's some forty-five passes
        (the float32 one's seventeen) then stay in the cache (1M elements: float64 37 -> 18
        ms, float32 12 -> 7)."""
        if a.dtype in FUSED and cpu_kernels.ready():
            return cpu_kernels.mul_sub(a, b, c)
        if a.dtype not in FUSED or numpy.broadcast(a, b, c).size < 1 << 16:
            return super().fused_mul_sub(a, b, c)
        it = numpy.nditer((a, b, c, None), ("external_loop", "buffered"),
                          [["readonly"]] * 3 + [["writeonly", "allocate"]],
                          op_dtypes=(None, None, None, a.dtype), buffersize=1 << 13)
        with it:
            for x, y, z, out in it:
                out[...] = super().fused_mul_sub(x, y, z)
            return it.operands[3]

    def fused_mul_add(self, a, b, c, out=None):
        """By the compiled kernel's fma in one pass where numba is, into ``out`` (which may
        be ``c``; the ufunc rounds a number ``b`` to ``a``'s dtype); else the base's."""
        if a.dtype in FUSED and cpu_kernels.ready():
            return cpu_kernels.mul_add(a, b, c, out=out)
        return super().fused_mul_add(a, b, c, out)

    def matmul(self, a, b):
        """The product of two matrices (or of two batches of one shape) by MKL where the
        ``mkl`` extra takes it (:mod:`.mkl_gemm`: OpenBLAS is slower on newer cores), else
        NumPy's."""
        if mkl_gemm.takes(a, b):
            return mkl_gemm.matmul(a, b)
        return numpy.matmul(a, b)

    def matmul_tn(self, a, b):
        """OpenBLAS is up to 6x slower on a transposed-A product with fewer output rows
        than columns: the transposed product is then computed and laid out back (MKL's
        is not: it multiplies in place). Over one row (a batch-1 weight gradient) the
        product is an outer product, 15x faster by the compiled kernel than as a GEMM (4x
        as NumPy's broadcast product)."""
        if a.shape[0] == 1:
            if cpu_kernels.takes(a, b):
                return cpu_kernels.outer(a[0], b[0])
            return a.T * b
        if mkl_gemm.takes(a.T, b):
            return mkl_gemm.matmul(a.T, b)
        if a.shape[1] < b.shape[1]:
            return cpu_kernels.contiguous(numpy.matmul(b.T, a).T)
        return numpy.matmul(a.T, b)

    def batched_matmul(self, a, b):
        """MKL's products where the ``mkl`` extra takes them (:mod:`.mkl_gemm`: w4's
        attention products, 128 of (64, 48) @ (48, 64), from head views and transposes read
        in place: 459 -> 349 us on two threads). Else: NumPy multiplies a batch of
        matrices one at a time, each small one (at most
        64**3 multiply-adds, below OpenBLAS's threading threshold) on one thread. A float32
        batch of them (none broadcast, 2**21 multiply-adds in all at least) runs as
        :func:`cpu_kernels.matmuls`, laid out row-major first, its parts on OpenBLAS's
        threads (w4's attention scores, 128 of (64, 48) @ (48, 64): 458 -> 294 us on two,
        PyTorch 308-386; on one, 483, some 5% over NumPy's). Otherwise OpenBLAS
        multiplies a small matrix by a transposed one at two thirds of its speed on
        row-major ones (757 us against 458 there): such a ``b`` is laid out row-major
        first, by the tiled transpose. Larger ones gain nothing (measured up to 512)."""
        if mkl_gemm.takes(a, b):
            return mkl_gemm.matmul(a, b)
        small = (a.ndim >= 2 and 0 not in b.strides
                 and a.shape[-2] * a.shape[-1] * b.shape[-1] <= 1 << 18)
        if small and _tiled_batch(a, b):
            return cpu_kernels.matmuls(a, b)
        if small and b.strides[-2] == b.itemsize and cpu_kernels.copies(b):
            b = cpu_kernels.contiguous(b)
        return numpy.matmul(a, b)

    def concatenate(self, arrays, axis):
        """Large float32 pieces each copied into place by ``cpu_kernels.copy_into``: NumPy
        copies a transposed piece element by element (w4's attention key gradient, 1 ms
        of its q, k, v gradients' 1.5 ms concatenation)."""
        return cpu_kernels.concatenate(arrays, axis)

    def outer(self, a, b):
        """Over equal leading dims, the compiled kernel writes each row at memory speed:
        NumPy's broadcast product is 4x slower, its K=1 GEMM 15x."""
        if a.shape[:-1] == b.shape[:-1] and cpu_kernels.takes(a, b):
            return cpu_kernels.outer(a, b)
        return super().outer(a, b)

    def where(self, cond, a, b):
        """NumPy's where branches per element, 5-10x slower than an arithmetic pass on
        mixed signs; on large float arrays the bits of ``a`` and ``b`` are selected
        instead (exact, infs and nans included). Small ones keep ``where``: the bit
        select's ten calls cost more than the branches there."""
        if getattr(cond, "size", 0) < _BIT_SELECT_MIN:
            return numpy.where(cond, a, b)
        da, db = getattr(a, "dtype", None), getattr(b, "dtype", None)
        dt = da or db
        if dt is None or not is_float(dt) or da is not None and db is not None and da != db:
            return numpy.where(cond, a, b)
        it = _BITS[dt.itemsize]
        m = numpy.negative(cond, dtype=it)  # all bits set where cond holds
        out = numpy.bitwise_and(numpy.asarray(a, dt).view(it), m)
        out = numpy.bitwise_or(out, numpy.bitwise_and(numpy.asarray(b, dt).view(it),
                                                      numpy.invert(m)))
        return numpy.asarray(out).view(dt)


class _CupyFunctions(ArrayFunctions):
    """CuPy's differences (and the emulator's, which has CuPy's): ``cupyx.scipy.linalg``
    takes one matrix per call."""

    def accumulate(self, name, a, axis):
        """CuPy's ufuncs accumulate for add and multiply only: the others as a scan of
        ``log2(n)`` steps, each combining every element with the one ``2**k`` before it
        (the ufunc is associative, as maximum, minimum and logaddexp are)."""
        f = getattr(self.xp, name)
        if name in ("add", "multiply"):
            return f.accumulate(a, axis=axis)
        axis %= a.ndim
        head = (slice(None),) * axis
        out, shift, n = a, 1, a.shape[axis]
        while shift < n:
            out = self.xp.concatenate(
                [out[head + (slice(None, shift),)],
                 f(out[head + (slice(shift, None),)], out[head + (slice(None, n - shift),)])],
                axis)
            shift *= 2
        return out if out is not a else out.copy()

    def address(self, a):
        return a.data.ptr

    def draw(self, rng, name, args, shape):
        """Drawn on the host, from its generator: array arguments (poisson's rates) are
        read there, the values copied to the device."""
        return self.xp.asarray(getattr(rng, name)(
            *(self.xp.asnumpy(a) if hasattr(a, "shape") else a for a in args), shape))

    def solve(self, a, b):
        """CuPy's solve reads a ``b`` of one dim fewer than ``a`` as vectors (NumPy 1's
        rule) and broadcasts no batch dims: NumPy 2's rules, by hand."""
        xp = self.xp
        if b.ndim == 1:
            return self.solve(a, b[:, None])[..., 0]
        batch = numpy.broadcast_shapes(a.shape[:-2], b.shape[:-2])
        return xp.linalg.solve(xp.broadcast_to(a, batch + a.shape[-2:]),
                               xp.broadcast_to(b, batch + b.shape[-2:]))

    def ufunc_at(self, name, a, at, b):
        """CuPy's ``at`` exists for add, subtract, maximum, minimum and the bitwise ufuncs;
        the others (multiply) in rounds: the ``r``-th value for each target in round
        ``r`` (targets distinct within a round, values in their given order). The targets
        are the flat positions ``at`` picks (any index: arrays, slices, both)."""
        xp = self.xp
        f = getattr(xp, name)
        if name in _CUPY_AT:
            f.at(a, at, b)
            return
        lin = xp.arange(a.size).reshape(a.shape)[at]
        b = xp.broadcast_to(xp.asarray(b, dtype=a.dtype), lin.shape).reshape(-1)
        lin = lin.reshape(-1)
        order = xp.argsort(lin, kind="stable")
        s = lin[order]
        pos = xp.arange(s.size)
        starts = xp.where(xp.concatenate([xp.ones(min(s.size, 1), bool), s[1:] != s[:-1]]),
                          pos, 0)
        rank = xp.empty_like(pos)
        rank[order] = pos - self.accumulate("maximum", starts, 0)
        for r in range(int(rank.max()) + 1 if s.size else 0):
            sel = rank == r
            where = xp.unravel_index(lin[sel], a.shape)
            a[where] = f(a[where], b[sel])

    def expm(self, a):
        return self._per_matrix(scipy_linalg(self.xp).expm, a)

    def factor_info(self, a, kind):
        """On the host (the error path only; cupyx has no per-matrix info), copied back."""
        return self.xp.asarray(_factor_info(self.xp.asnumpy(a), kind))

    def lu(self, a):
        """cupyx's lu returns P as a matrix: its row indices are where each row's one is."""
        xp, lu = self.xp, scipy_linalg(self.xp).lu
        flat = a.reshape((-1,) + a.shape[-2:])
        m, n = a.shape[-2:]
        k = min(m, n)
        parts = [lu(x) for x in flat]
        if not parts:
            return (xp.zeros(a.shape[:-1], dtype=numpy.int64),
                    xp.zeros(a.shape[:-2] + (m, k), a.dtype),
                    xp.zeros(a.shape[:-2] + (k, n), a.dtype))
        p, L, U = (xp.stack([part[i] for part in parts]) for i in range(3))
        return (xp.argmax(p, -1).reshape(a.shape[:-1]), L.reshape(a.shape[:-2] + (m, k)),
                U.reshape(a.shape[:-2] + (k, n)))

    def _per_matrix(self, f, a):
        xp = self.xp
        flat = a.reshape((-1,) + a.shape[-2:])
        out = xp.stack([f(m) for m in flat]) if len(flat) else xp.empty_like(flat)
        return out.astype(a.dtype, copy=False).reshape(a.shape[:-2] + out.shape[-2:])


class _MetaFunctions(ArrayFunctions):
    """The meta device's: an address is its storage's identity plus the byte offset (no
    memory lies behind it)."""

    def address(self, a):
        return meta.address(a)

    def any_true(self, mask):
        """No values to check: PyTorch's meta kernels skip the checks on values too."""
        return False

    def checked_values(self, a):
        """No value to check: PyTorch's meta kernels skip the checks on values too."""
        return []

    def all_finite(self, a):
        """No values: a method chosen on them takes the finite values' (the usual) one."""
        return True

    def bincount(self, index, weights, length):
        """The length is known without the values (the caller bounds them)."""
        return meta.ndarray((length,), numpy.result_type(weights.dtype, numpy.float64))

    def draw(self, rng, name, args, shape):
        """No values to draw (the generator is left as it was, as on PyTorch's meta)."""
        return meta.ndarray(shape, numpy.float64)


class _GpuFunctions(_CupyFunctions):
    """CuPy on a GPU: the fused kernels (:mod:`.gpu_kernels`)."""

    @property
    def fused_adam(self):
        return gpu_kernels.adam_step

    def ufunc_at(self, name, a, at, b):
        """CuPy's ``at`` takes no bfloat16: such an ``a`` is updated in float32 and
        rounded back once."""
        if a.dtype != _BFLOAT16:
            return super().ufunc_at(name, a, at, b)
        up = a.astype(numpy.float32)
        super().ufunc_at(name, up, at, b.astype(numpy.float32) if hasattr(b, "astype") else b)
        a[...] = up.astype(a.dtype)

    def sum_kept(self, a, axes):
        """Over leading axes (a bias's gradient) as a product with ones: CuPy's reduction
        over leading axes is slow."""
        if axes == tuple(range(len(axes))) and a.flags.c_contiguous and gpu_kernels.floats(a):
            return gpu_kernels.sum_leading(a, len(axes))
        return self.xp.sum(a, axis=axes, keepdims=True)


# the emulator: _CupyFunctions
_BY_MODULE = {numpy: _NumpyFunctions, meta.namespace: _MetaFunctions}


def functions(xp):
    """The functions for rules that receive array namespace ``xp`` (one dict lookup for a
    known one: asking NumPy's module for a missing attribute costs microseconds)."""
    f = _known.get(xp)
    if f is not None:
        return f
    if getattr(xp, "batched", False):  # a namespace per call: not kept
        return xp.functions
    kind = _BY_MODULE.get(xp) or (_GpuFunctions if getattr(xp, "__name__", "") == "cupy"
                                  else _CupyFunctions)
    f = _known[xp] = kind(xp)
    return f
