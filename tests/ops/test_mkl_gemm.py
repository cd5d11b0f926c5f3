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


REAL_THREADS = blas_threads.threads()
FIELDS = 14  # of a product (backend/_numba_gemm.py)


def _threads(monkeypatch, n):
    """``n`` threads, at most OpenBLAS's (``run_flat`` takes no more jobs than it has)."""
    n = min(n, REAL_THREADS)
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
    for threads in (2, 8):  # (as many as OpenBLAS has)
        _threads(monkeypatch, threads)
        assert numpy.array_equal(mkl_gemm.matmul(a, b), one)


@pytest.mark.parametrize("cores, m, n, grid", [
    (1, 4096, 4096, (1, 1)), (2, 128, 1024, (1, 2)), (2, 2048, 576, (2, 1)),
    (4, 128, 1024, (1, 4)), (3, 128, 1024, (1, 4)), (16, 128, 1024, (2, 8)),
    (2, 100, 200, (1, 1)), (8, 64, 100_000, (1, 8)), (4, 300, 300, (2, 2)),
    (4, 5000, 127, (4, 1))])
def test_grid_takes_a_part_a_core_down_to_the_smallest_part(cores, m, n, grid):
    assert mkl_gemm._grid(m, n, cores, 784) == grid


@pytest.mark.parametrize("cores, m, n, k, grid", [
    (2, 128, 1024, 10, (2, 1)), (2, 128, 1024, 33, (1, 2)), (4, 128, 1024, 8, (2, 2)),
    (2, 100, 1024, 16, (1, 2)), (8, 512, 2048, 32, (8, 1))])
def test_short_products_split_rows_first(cores, m, n, k, grid):
    """Up to ``_SHORT_K``, rows are halved first while they stay ``_MIN_ROWS`` or more."""
    assert mkl_gemm._grid(m, n, cores, k) == grid


@needs_mkl
def test_parts_start_on_aligned_rows_and_columns_runs_on_each_thread(monkeypatch):
    """Eight cores: a (300, 1000) output in 2 x 4 blocks, starting on multiples of 16, in
    as many runs as threads."""
    seen = []
    run = blas_threads.run_flat

    def record(job, jobs, width):
        seen.append([(numpy.frombuffer(ctypes.string_at(int(at), int(n) * 8 * FIELDS),
                                       numpy.int64).reshape(-1, FIELDS))
                     for at, n, *_ in numpy.array(jobs).reshape(-1, width)])
        run(job, jobs, width)
    monkeypatch.setattr(blas_threads, "run_flat", record)
    monkeypatch.setattr(mkl_gemm, "_cores", lambda: 8)
    a = numpy.ones((300, 50), numpy.float32)
    b = numpy.ones((50, 1000), numpy.float32)
    out = mkl_gemm.matmul(a, b)
    assert (out == 50).all()
    runs, = seen
    assert [len(r) for r in runs] == [8 // REAL_THREADS] * REAL_THREADS
    products = numpy.concatenate(runs)
    assert [tuple(p) for p in products[:, 3:5]] == [(160, 256)] * 3 + [(160, 232)] + \
        [(140, 256)] * 3 + [(140, 232)]
    offsets = products[:, 10] // 4  # (from the output's first element)
    assert list(offsets) == [r * 1000 + c for r in (0, 160) for c in (0, 256, 512, 768)]


@needs_mkl
@pytest.mark.parametrize("dtype", [numpy.float32, numpy.float64])
@pytest.mark.parametrize("lb", LAYOUTS)
@pytest.mark.parametrize("biased", [False, True])
def test_few_rows_of_an_untransposed_b_in_steps_along_k(lb, dtype, biased, monkeypatch):
    """(100, 1300) @ (1300, 1200) on two cores: each column half in steps of 512, 512 and
    276 of the inner size, the later ones added to the first (a bias filled in once); a
    transposed B, more rows, or narrower blocks, at once. The same as float64, and the
    same bits on any number of threads."""
    monkeypatch.setattr(mkl_gemm, "_cores", lambda: 2)
    a, b = _matrix((100, 1300), dtype, 3, "view"), _matrix((1300, 1200), dtype, 4, lb)
    bias = numpy.random.default_rng(5).standard_normal(1200).astype(dtype) if biased else None
    products, runs = mkl_gemm._plan(a.shape, a.strides, b.shape, b.strides, a.itemsize, 2, 2)
    untransposed = lb in ("c", "view")
    assert [list(p[[3, 4, 5, 13]]) for p in products] == (
        [[100, 608, 512, 0], [100, 608, 512, 1], [100, 608, 276, 1],
         [100, 592, 512, 0], [100, 592, 512, 1], [100, 592, 276, 1]] if untransposed
        else [[100, 608, 1300, 0], [100, 592, 1300, 0]])
    assert [n for _, n, _ in runs] == [len(products) // 2] * 2
    want = a.astype(numpy.float64) @ b.astype(numpy.float64)
    if biased:
        want += bias
    _threads(monkeypatch, 1)
    one = mkl_gemm.matmul(a, b, bias=bias)
    tol = 1e-5 if dtype == numpy.float32 else 1e-13
    assert numpy.abs(one - want).max() <= tol * numpy.abs(want).max()
    _threads(monkeypatch, 2)
    assert numpy.array_equal(mkl_gemm.matmul(a, b, bias=bias), one)
    more, narrow = _matrix((200, 1300), dtype, 3, "c"), b[:, :1000]
    for x, y in ((more, b), (a, narrow)):
        whole, _ = mkl_gemm._plan(x.shape, x.strides, y.shape, y.strides, a.itemsize, 2, 2)
        assert list(whole[:, 5]) == [1300, 1300]


@needs_mkl
@pytest.mark.parametrize("case", ["int", "mixed", "half", "big_endian", "reversed", "broadcast",
                                  "small", "unaligned", "list", "gapped"])
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
        import ctypes, numpy, torch
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


def _heads(n, length, heads, width, seed, dtype=numpy.float32):
    """(n, heads, length, width) head views of an (n, length, 3 * heads * width) projection,
    as attention takes them: strided batch dims, rows 3 * heads * width apart."""
    rng = numpy.random.default_rng(seed)
    qkv = rng.standard_normal((n, length, 3 * heads * width)).astype(dtype)
    return [qkv[..., i * heads * width:(i + 1) * heads * width]
            .reshape(n, length, heads, width).transpose(0, 2, 1, 3) for i in range(3)]


@needs_mkl
@pytest.mark.parametrize("dtype", [numpy.float32, numpy.float64])
@pytest.mark.parametrize("case", ["scores", "weighted", "grad_p", "grad_v", "broadcast",
                                  "reversed", "few_large"])
def test_batches_read_in_place_match_float64_same_bits_on_any_threads(case, dtype,
                                                                      monkeypatch):
    q, k, v = _heads(8, 64, 4, 48, 5, dtype)
    p = numpy.random.default_rng(6).standard_normal((8, 4, 64, 64)).astype(dtype)
    a, b = {"scores": (q, k.swapaxes(-1, -2)), "weighted": (p, v),
            "grad_p": (p.swapaxes(-1, -2), v), "grad_v": (q, v.swapaxes(-1, -2)[..., :48, :]),
            "broadcast": (p, numpy.broadcast_to(v[:1, :1], v.shape)),
            "reversed": (p[::-1, ::-1], v[::-1, ::1]),
            "few_large": (numpy.ones((2, 300, 200), dtype), numpy.ones((2, 200, 500), dtype))
            }[case]
    assert mkl_gemm.takes(a, b)
    want = a.astype(numpy.float64) @ b.astype(numpy.float64)
    _threads(monkeypatch, 1)
    one = mkl_gemm.matmul(a, b)
    tol = 1e-5 if dtype == numpy.float32 else 1e-13
    assert one.shape == want.shape and one.dtype == dtype and one.flags.c_contiguous
    assert numpy.abs(one - want).max() <= tol * numpy.abs(want).max()
    for threads in (2, 8):
        _threads(monkeypatch, threads)
        assert numpy.array_equal(mkl_gemm.matmul(a, b), one)


@needs_mkl
def test_a_batch_has_a_block_per_core_in_all(monkeypatch):
    """Two large matrices on eight cores: four blocks each; eight small ones: one each."""
    seen = []
    run = blas_threads.run_flat
    monkeypatch.setattr(blas_threads, "run_flat", lambda job, jobs, width: (
        seen.append(int(sum(jobs[1::width]))), run(job, jobs, width)))
    monkeypatch.setattr(mkl_gemm, "_cores", lambda: 8)
    mkl_gemm.matmul(numpy.ones((2, 512, 64), numpy.float32), numpy.ones((2, 64, 512),
                                                                        numpy.float32))
    mkl_gemm.matmul(numpy.ones((8, 512, 64), numpy.float32), numpy.ones((8, 64, 512),
                                                                        numpy.float32))
    assert seen == [8, 8]


@needs_mkl
@pytest.mark.parametrize("case", ["batch_mismatch", "batched_by_matrix", "shape", "tiny"])
def test_refused_batches(case):
    a = numpy.ones((8, 64, 128), numpy.float32)
    b = numpy.ones((8, 128, 64), numpy.float32)
    if case == "batch_mismatch":
        a = numpy.ones((1, 64, 128), numpy.float32)
    elif case == "batched_by_matrix":
        b = b[0]
    elif case == "tiny":  # 65536 of (4, 4) @ (4, 4): NumPy's loop is faster
        a, b = numpy.ones((65536, 4, 4), numpy.float32), numpy.ones((65536, 4, 4),
                                                                    numpy.float32)
    else:
        b = numpy.ones((8, 127, 64), numpy.float32)
    assert not mkl_gemm.takes(a, b)


def test_attention_products_match_pytorch_with_mkl_and_without(monkeypatch):
    q, k, v = _heads(4, 64, 4, 48, 8)
    for off in (False, True):
        if off:
            monkeypatch.setattr(mkl_gemm, "_gemms", lambda: None)
        got = [retrograd.tensor(x, requires_grad=True) for x in (q, k, v)]
        want = [torch.tensor(x, requires_grad=True) for x in (q, k, v)]
        for lib, (tq, tk, tv) in ((retrograd, got), (torch, want)):
            (lib.softmax(tq @ tk.transpose(-1, -2), -1) @ tv).square().sum().backward()
        for g, w in zip(got, want, strict=True):
            numpy.testing.assert_allclose(g.grad.numpy(), w.grad.numpy(), rtol=1e-4, atol=1e-4)


@needs_mkl
def test_pytorch_imported_after_keeps_its_threads_and_mkl(python_run):
    """PyTorch installed but not imported at retrograd's first large product: MKL is not
    loaded (its global symbols would bind a later PyTorch to one thread and the wheel's
    sequential GEMMs), and the PyTorch imported afterwards runs on its threads."""
    code = """if True:
        import retrograd
        from retrograd.backend import mkl_gemm
        x = retrograd.ones(512, 784) @ retrograd.ones(784, 1024)
        import torch
        print(mkl_gemm.available(), bool((x == 784).all()), torch.get_num_threads())
    """
    run = python_run("-c", code, env={"OMP_NUM_THREADS": "2", "OPENBLAS_NUM_THREADS": "2",
                                      "MKL_NUM_THREADS": "2"})
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["False", "True", "2"]


@needs_mkl
@pytest.mark.parametrize("layer", ["ILP64", "GNU", "LP64,GNU"])
def test_an_mkl_interface_layer_in_the_environment_is_pinned_to_lp64(layer, python_run):
    """MKL_INTERFACE_LAYER would make MKL read 64-bit sizes (the job passes 32-bit ones) or
    load a GNU interface the wheel lacks (a fatal error inside a job): retrograd sets LP64
    first, and the products are right."""
    code = """if True:
        import torch, numpy
        from retrograd.backend import mkl_gemm
        a = numpy.arange(300 * 1000, dtype=numpy.float32).reshape(300, 1000) % 7
        b = numpy.ones((1000, 700), numpy.float32)
        print(mkl_gemm.available(), bool((mkl_gemm.matmul(a, b) == a @ b).all()))
    """
    run = python_run("-c", code, env={"MKL_INTERFACE_LAYER": layer, "OPENBLAS_NUM_THREADS": "2"},
                     timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["True", "True"]


@needs_mkl
def test_plans_of_many_gemms_are_not_kept():
    """A plan is kept by layout, but not one of more GEMMs than ``_KEPT_PRODUCTS`` (a batch
    of 2000 matrices here): it is built at each call, and its products are right."""
    rng = numpy.random.default_rng(7)
    few, many = (rng.standard_normal((n, 16, 16)).astype(numpy.float32) for n in (300, 2000))
    for x in (few, many):
        got = mkl_gemm.matmul(x, x)
        numpy.testing.assert_allclose(got, x @ x, rtol=1e-5, atol=1e-5)
        key = (x.shape, x.strides, x.shape, x.strides, 4, mkl_gemm._cores(),
               blas_threads.threads())
        assert (mkl_gemm._kept_plan(*key) is None) == (x is many)
