"""Matrix products by MKL in parts on OpenBLAS's threads (backend/mkl_gemm.py): every layout
MKL reads in place, float32 and float64, split by columns or by rows, the same bits in any
number of parts; what it refuses goes to NumPy; linear layers and matmul through it against
PyTorch, and with it turned off."""

import ctypes

import numpy
import pytest
import torch

import retrograd
from retrograd.backend import blas_threads, mkl_gemm

needs_mkl = pytest.mark.skipif(not mkl_gemm.available(),
                               reason="the mkl extra (or numba, or OpenBLAS) is not here")


def _matrix(shape, dtype, seed, layout):
    """A (rows, cols) matrix: "c" row-major, "f" transposed storage, "view" a strided block
    of a larger row-major array, "fview" of a larger column-major one."""
    rng = numpy.random.default_rng(seed)
    r, c = shape
    if layout == "c":
        return rng.standard_normal(shape).astype(dtype)
    if layout == "f":
        return rng.standard_normal((c, r)).astype(dtype).T
    if layout == "view":
        return rng.standard_normal((r + 3, c + 5)).astype(dtype)[2:2 + r, 1:1 + c]
    return rng.standard_normal((c + 5, r + 3)).astype(dtype).T[1:1 + r, 2:2 + c]


def _threads(monkeypatch, n):
    monkeypatch.setattr(blas_threads, "threads", lambda: n)


LAYOUTS = ["c", "f", "view", "fview"]


@needs_mkl
@pytest.mark.parametrize("dtype", [numpy.float32, numpy.float64])
@pytest.mark.parametrize("la", LAYOUTS)
@pytest.mark.parametrize("lb", LAYOUTS)
@pytest.mark.parametrize("mkn", [(128, 784, 1024), (1000, 64, 100), (77, 300, 413)])
def test_products_in_every_layout_match_float64_same_bits_on_any_threads(mkn, la, lb, dtype,
                                                                         monkeypatch):
    m, k, n = mkn
    a, b = _matrix((m, k), dtype, 1, la), _matrix((k, n), dtype, 2, lb)
    assert mkl_gemm.takes(a, b)
    monkeypatch.setattr(mkl_gemm, "_cores", lambda: 4)
    _threads(monkeypatch, 1)
    one = mkl_gemm.matmul(a, b)
    want = a.astype(numpy.float64) @ b.astype(numpy.float64)
    tol = 1e-5 if dtype == numpy.float32 else 1e-13
    assert one.dtype == dtype and one.flags.c_contiguous and one.shape == (m, n)
    assert numpy.abs(one - want).max() <= tol * numpy.abs(want).max()
    for threads in (2, 3, 8):
        _threads(monkeypatch, threads)
        assert numpy.array_equal(mkl_gemm.matmul(a, b), one)


@pytest.mark.parametrize("cores, m, n, grid", [
    (1, 4096, 4096, (1, 1)), (2, 128, 1024, (1, 2)), (2, 2048, 576, (2, 1)),
    (4, 128, 1024, (1, 4)), (3, 128, 1024, (1, 4)), (16, 128, 1024, (2, 8)),
    (2, 100, 200, (1, 1)), (8, 64, 100_000, (1, 8)), (4, 300, 300, (2, 2)),
    (4, 5000, 127, (4, 1))])
def test_grid_takes_a_part_a_core_down_to_the_smallest_part(cores, m, n, grid, monkeypatch):
    monkeypatch.setattr(mkl_gemm, "_cores", lambda: cores)
    assert mkl_gemm._grid(m, n) == grid


@needs_mkl
def test_parts_start_on_aligned_rows_and_columns_runs_on_each_thread(monkeypatch):
    """Eight cores, three threads: a (300, 1000) output in 2 x 4 blocks, starting on
    multiples of 16, run 2, 3 and 3 to a thread."""
    seen = []
    run = blas_threads.run_jobs

    def record(job, jobs):
        seen.append([(numpy.frombuffer(ctypes.string_at(int(at), int(n) * 96), numpy.int64)
                      .reshape(-1, 12)) for at, n, _ in jobs])
        run(job, jobs)
    monkeypatch.setattr(blas_threads, "run_jobs", record)
    monkeypatch.setattr(mkl_gemm, "_cores", lambda: 8)
    _threads(monkeypatch, 3)
    a = numpy.ones((300, 50), numpy.float32)
    b = numpy.ones((50, 1000), numpy.float32)
    out = mkl_gemm.matmul(a, b)
    assert (out == 50).all()
    runs, = seen
    assert [len(r) for r in runs] == [2, 3, 3]
    products = numpy.concatenate(runs)
    assert [tuple(p) for p in products[:, 3:5]] == [(160, 256)] * 3 + [(160, 232)] + \
        [(140, 256)] * 3 + [(140, 232)]
    offsets = (products[:, 10] - out.ctypes.data) // 4
    assert list(offsets) == [r * 1000 + c for r in (0, 160) for c in (0, 256, 512, 768)]


@needs_mkl
@pytest.mark.parametrize("case", ["int", "mixed", "half", "big_endian", "reversed", "broadcast",
                                  "batched", "small", "unaligned", "list", "gapped"])
def test_refused_products_are_numpys(case):
    a = numpy.ones((256, 128), numpy.float32)
    b = numpy.ones((128, 256), numpy.float32)
    if case == "int":
        a, b = a.astype(numpy.int32), b.astype(numpy.int32)
    elif case == "mixed":
        b = b.astype(numpy.float64)
    elif case == "half":
        a, b = a.astype(numpy.float16), b.astype(numpy.float16)
    elif case == "big_endian":
        a, b = a.astype(">f4"), b.astype(">f4")
    elif case == "reversed":
        a = a[::-1]
    elif case == "broadcast":
        b = numpy.broadcast_to(numpy.ones(256, numpy.float32), (128, 256))
    elif case == "batched":
        a, b = a[None], b[None]
    elif case == "small":
        a, b = a[:16, :16], b[:16, :16]
    elif case == "unaligned":
        a = numpy.frombuffer(bytearray(a.nbytes + 1), numpy.float32, a.size,
                             offset=1).reshape(a.shape)
    elif case == "list":
        a = a.tolist()
    else:  # neither axis of unit step
        a = numpy.ones((512, 256), numpy.float32)[::2, ::2]
    assert not mkl_gemm.takes(a, b)


@needs_mkl
def test_vectors_as_matrices_read_in_place():
    """A row or a column whose other stride is anything (NumPy's for a length-1 axis)."""
    rng = numpy.random.default_rng(0)
    big = rng.standard_normal((8192, 3000)).astype(numpy.float32)
    row, col = big[7:8, :], big[:, 5:6]
    for a, b in ((row, rng.standard_normal((3000, 2048)).astype(numpy.float32)),
                 (col, rng.standard_normal((1, 1024)).astype(numpy.float32))):
        assert mkl_gemm.takes(a, b)
        numpy.testing.assert_allclose(mkl_gemm.matmul(a, b), a @ b, rtol=1e-5, atol=1e-4)


def _mlp_grads(lib, x, w1, b1, w2):
    x = lib.tensor(x)
    w1, b1, w2 = (lib.tensor(v, requires_grad=True) for v in (w1, b1, w2))
    h = lib.nn.functional.linear(x, w1, b1).relu()
    (h @ w2.t()).square().mean().backward()
    return [v.grad.numpy() for v in (w1, b1, w2)]


@pytest.mark.parametrize("mkl", [True, False])
def test_linear_and_matmul_gradients_match_pytorch(mkl, monkeypatch):
    if not mkl:
        monkeypatch.setattr(mkl_gemm, "_gemms", lambda: None)
    elif not mkl_gemm.available():
        pytest.skip("the mkl extra is not here")
    rng = numpy.random.default_rng(3)
    x = rng.standard_normal((128, 300)).astype(numpy.float32)
    w1 = rng.standard_normal((512, 300)).astype(numpy.float32) / 17
    b1 = rng.standard_normal(512).astype(numpy.float32)
    w2 = rng.standard_normal((256, 512)).astype(numpy.float32) / 23
    for got, want in zip(_mlp_grads(retrograd, x, w1, b1, w2), _mlp_grads(torch, x, w1, b1, w2),
                         strict=True):
        numpy.testing.assert_allclose(got, want, rtol=2e-4, atol=1e-6)


@needs_mkl
def test_mkl_already_threaded_in_the_process_is_left_alone(python_run):
    """MKL used before retrograd's first product (its threading layer set): retrograd
    cannot make it sequential, so NumPy multiplies, and the products are right."""
    code = """if True:
        import ctypes, numpy
        from retrograd.backend import functions, mkl_gemm
        lib = ctypes.CDLL(mkl_gemm._mkl_runtime())
        lib.MKL_Get_Max_Threads()
        a, b = numpy.ones((256, 256), numpy.float32), numpy.ones((256, 256), numpy.float32)
        got = functions.functions(numpy).matmul(a, b)
        print(mkl_gemm.available(), mkl_gemm.takes(a, b), bool((got == 256).all()))
    """
    run = python_run("-c", code)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["False", "False", "True"]
