"""Compiled kernels split across OpenBLAS's threads (backend/blas_threads.py): ReLU, GELU,
softmax, log-softmax and layer norm, max pools and their gradient, in-place updates, the
convolutions' copies and padding. Each part on its thread gives the one-thread kernel's
result bit for bit (parts start on aligned elements, whole planes or rows), with NaN, odd
lengths, a forked child and the fallbacks (small work, strided or overlapping arrays, no
multithreaded OpenBLAS)."""

import array
import math
import os
import subprocess
import sys

import numpy
import pytest

import retrograd
from retrograd.backend import blas_threads, cpu_kernels

pytestmark = pytest.mark.skipif(not cpu_kernels.ready(), reason="numba is not installed")

needs_threads = pytest.mark.skipif(blas_threads.threads() < 2,
                                   reason="NumPy's BLAS is not a multithreaded OpenBLAS")


@pytest.fixture
def split(monkeypatch):
    """Every kernel splits, however small its work."""
    monkeypatch.setattr(cpu_kernels, "_SPLIT_MIN", dict.fromkeys(cpu_kernels._SPLIT_MIN, 0))


@pytest.fixture
def spy(monkeypatch):
    """The job tables ``run_jobs`` and ``run_flat`` are handed in more than one part (as
    NumPy arrays)."""
    seen = []
    run, run_flat = blas_threads.run_jobs, blas_threads.run_flat

    def record(address, jobs):
        if len(jobs) > 1:
            seen.append(jobs.copy())
        run(address, jobs)

    def record_flat(address, jobs, width):
        if len(jobs) > width:
            seen.append(numpy.array(jobs, numpy.int64).reshape(-1, width))
        run_flat(address, jobs, width)
    monkeypatch.setattr(blas_threads, "run_jobs", record)
    monkeypatch.setattr(blas_threads, "run_flat", record_flat)
    return seen


def _one_thread(monkeypatch, f):
    with monkeypatch.context() as m:
        m.setattr(cpu_kernels, "_SPLIT_MIN", dict.fromkeys(cpu_kernels._SPLIT_MIN, 1 << 62))
        return f()


def _values(shape, seed):
    rng = numpy.random.default_rng(seed)
    x = (rng.standard_normal(shape) * 3).astype(numpy.float32)
    x.reshape(-1)[::7] = numpy.nan
    x.reshape(-1)[3::11] = -0.0
    return x


@needs_threads
@pytest.mark.parametrize("n", [1025, 4099, 100_003])
@pytest.mark.parametrize("name", ["relu", "gelu"])
def test_split_elementwise_kernels_match_one_thread(name, n, monkeypatch, split, spy):
    x, g = _values(n, n), _values(n, n + 1)
    fwd, bwd = getattr(cpu_kernels, name), getattr(cpu_kernels, name + "_grad")
    want = _one_thread(monkeypatch, lambda: (fwd(x), bwd(g, x)))
    got = fwd(x), bwd(g, x)
    for a, b in zip(got, want, strict=True):
        assert numpy.array_equal(a.view(numpy.int32), b.view(numpy.int32))
    jobs = spy[0]
    assert len(jobs) == blas_threads.threads() and jobs[:, 2].sum() == n
    assert (numpy.diff(jobs[:, 0]) % cpu_kernels._ALIGN == 0).all()


@needs_threads
@pytest.mark.parametrize("shape", [(7, 33), (4, 5, 64), (3, 1000)])
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_split_row_kernels_match_one_thread(name, shape, monkeypatch, split, spy):
    """Softmax and log-softmax each way take whole rows in each part."""
    x, g = _values(shape, len(shape)), _values(shape, 7)
    fwd, bwd = getattr(cpu_kernels, name), getattr(cpu_kernels, name + "_grad")

    def run():
        y = fwd(x)
        return y, bwd(g, y)
    for a, b in zip(run(), _one_thread(monkeypatch, run), strict=True):
        assert numpy.array_equal(a.view(numpy.int32), b.view(numpy.int32))
    rows = math.prod(shape[:-1])
    for jobs in spy:  # (a row: its arrays, its number of rows, the row length, log)
        assert len(jobs) == min(blas_threads.threads(), rows)
        assert jobs[:, -3].sum() == rows and (jobs[:, -2] == shape[-1]).all()
        assert (jobs[:, -1] == name.startswith("log")).all()
    assert len(spy) == 2


def _rows_of_minus_infinity(rows, n):
    """Rows by index mod 6: -inf alone; -inf but one finite value; -inf with a NaN; with
    a NaN of the sign bit (which the bits' maximum passes over); finite with some -inf;
    finite."""
    rng = numpy.random.default_rng(rows)
    x = rng.standard_normal((rows, n)).astype(numpy.float32) * 3
    x[0::6] = x[1::6, 1:] = x[2::6] = x[3::6] = -numpy.inf
    x[2::6, n // 2] = numpy.nan
    x[3::6, n // 3] = -numpy.float32(numpy.nan)
    x[4::6, ::5] = -numpy.inf
    return x


@pytest.mark.parametrize("rows", [6, 5000])
@pytest.mark.parametrize("n", [1, 64, 333])
def test_safe_softmax_zeros_rows_of_minus_infinity_alone(rows, n, monkeypatch):
    """The safe softmax (sdpa's) gives zeros for a row of -inf alone (softmax: NaN),
    NaN for a row with a NaN of either sign, and softmax's bits for any other row, called
    directly or in parts (5000 rows: parts on OpenBLAS's threads)."""
    x = _rows_of_minus_infinity(rows, n)
    safe, plain = cpu_kernels.softmax(x, safe=True), cpu_kernels.softmax(x)
    direct = _one_thread(monkeypatch, lambda: cpu_kernels.softmax(x, safe=True))
    assert numpy.array_equal(direct.view(numpy.int32), safe.view(numpy.int32))
    alone, nan = numpy.isneginf(x).all(1), numpy.isnan(x).any(1)
    assert alone.any() and nan.any()
    assert (safe[alone].view(numpy.int32) == 0).all()  # (+0)
    assert numpy.isnan(plain[alone]).all() and numpy.isnan(safe[nan]).all()
    kept = ~alone
    assert numpy.array_equal(safe[kept].view(numpy.int32), plain[kept].view(numpy.int32))


@pytest.mark.parametrize("shape", [(3, 5, 7), (2, 6, 64, 64), (20, 64, 33)])
def test_causal_softmax_masks_the_later_keys_as_pytorchs_sdpa(shape, monkeypatch):
    """The causal softmax (and its gradient) gives the safe softmax of the scores with each
    query's later keys -inf, and no gradient there (PyTorch's masked_fill), with -inf, +inf
    and NaN among the scores, the same bits called directly or in parts (the larger
    shapes: parts on OpenBLAS's threads)."""
    x, g = _values(shape, 1), _values(shape, 2)
    x.reshape(-1, shape[-1])[1::5] = -numpy.inf
    x.reshape(-1)[4::13] = numpy.inf
    y = cpu_kernels.causal_softmax(x)
    dx = cpu_kernels.causal_softmax_grad(g, y)
    direct = _one_thread(monkeypatch, lambda: (cpu_kernels.causal_softmax(x),
                                               cpu_kernels.causal_softmax_grad(g, y)))
    for a, b in zip((y, dx), direct, strict=True):
        assert numpy.array_equal(a.view(numpy.int32), b.view(numpy.int32))
    hidden = numpy.triu(numpy.ones(shape[-2:], bool), 1)
    masked = numpy.where(hidden, -numpy.inf, x).reshape(-1, shape[-1])
    want = cpu_kernels.softmax(masked, safe=True).reshape(shape)
    numpy.testing.assert_allclose(y, want, rtol=1e-6, atol=1e-7)
    want_dx = numpy.where(hidden, 0, y * (g - (g * y).sum(-1, keepdims=True)))
    numpy.testing.assert_allclose(dx, want_dx, rtol=1e-5, atol=1e-6)
    assert not dx[..., hidden].view(numpy.int32).any()  # (+0, also where the row is NaN)


@pytest.mark.parametrize("shape", [(3, 5, 7), (2, 6, 64, 64), (20, 64, 33)])
def test_masked_softmax_is_the_safe_softmax_of_the_masked_scores(shape, monkeypatch):
    """sdpa's boolean mask in the kernel (and its gradient): the safe softmax of the scores
    with -inf where the mask is False, no gradient there, a query that keeps no key zeros,
    with -inf, +inf and NaN among the scores; the same bits called directly or in parts."""
    x, g = _values(shape, 3), _values(shape, 4)
    x.reshape(-1, shape[-1])[1::5] = -numpy.inf
    x.reshape(-1)[4::13] = numpy.inf
    keep = numpy.random.default_rng(5).random(shape[-2:]) > 0.3
    keep[2] = False
    y = cpu_kernels.masked_softmax(x, keep)
    dx = cpu_kernels.masked_softmax_grad(g, y, keep)
    direct = _one_thread(monkeypatch, lambda: (cpu_kernels.masked_softmax(x, keep),
                                               cpu_kernels.masked_softmax_grad(g, y, keep)))
    for a, b in zip((y, dx), direct, strict=True):
        assert numpy.array_equal(a.view(numpy.int32), b.view(numpy.int32))
    masked = numpy.where(keep, x, -numpy.inf).reshape(-1, shape[-1])
    want = cpu_kernels.softmax(masked, safe=True).reshape(shape)
    numpy.testing.assert_allclose(y, want, rtol=1e-6, atol=1e-7)
    want_dx = numpy.where(keep, y * (g - (g * y).sum(-1, keepdims=True)), 0)
    numpy.testing.assert_allclose(dx, want_dx, rtol=1e-5, atol=1e-6)
    assert not y[..., 2, :].any() and not dx[..., ~keep].view(numpy.int32).any()


def _row_kernels_that_round_by_call_size():
    """The row kernels (softmax and log-softmax each way, LayerNorm's input gradient) whose
    job entry (a large call) and kernel called from Python (a small one) give a row
    different bits, as (name, row length[, weighted])."""
    saved = dict(cpu_kernels._SPLIT_MIN)

    def each_way(f, *args):
        results = []
        try:
            for least in (0, 1 << 62):
                cpu_kernels._SPLIT_MIN.update(dict.fromkeys(saved, least))
                results.append(f(*args))
        finally:
            cpu_kernels._SPLIT_MIN.update(saved)
        return [r.view(numpy.int32) for r in results]

    found = []
    for n in (1, 2, 10, 16, 64, 100, 333, 1000):
        rng = numpy.random.default_rng(n)
        x, g = (rng.standard_normal((301, n)).astype(numpy.float32) * 3 for _ in range(2))
        for name in ("softmax", "log_softmax"):
            fwd, bwd = getattr(cpu_kernels, name), getattr(cpu_kernels, name + "_grad")
            y = fwd(x)
            (a, b), (c, d) = each_way(fwd, x), each_way(bwd, g, y)
            if not (numpy.array_equal(a, b) and numpy.array_equal(c, d)):
                found.append((name, n))
        causal = x.reshape(7, 43, n)  # (sdpa's with is_causal: each query its first keys)
        y = cpu_kernels.causal_softmax(causal)
        (a, b), (c, d) = (each_way(cpu_kernels.causal_softmax, causal),
                          each_way(cpu_kernels.causal_softmax_grad, g.reshape(7, 43, n), y))
        if not (numpy.array_equal(a, b) and numpy.array_equal(c, d)):
            found.append(("causal_softmax", n))
        keep = rng.random((43, n)) > 0.3
        y = cpu_kernels.masked_softmax(causal, keep)
        (a, b), (c, d) = (each_way(cpu_kernels.masked_softmax, causal, keep),
                          each_way(cpu_kernels.masked_softmax_grad, g.reshape(7, 43, n), y,
                                   keep))
        if not (numpy.array_equal(a, b) and numpy.array_equal(c, d)):
            found.append(("masked_softmax", n))
        for w in (None, rng.standard_normal(n).astype(numpy.float32)):
            _, mean, rstd = cpu_kernels.layer_norm(x, n, 1e-5, w, None)
            a, b = each_way(cpu_kernels.layer_norm_dx, g, x, w, mean, rstd, n)
            if not numpy.array_equal(a, b):
                found.append(("layer_norm_dx", n, w is not None))
    return found


@pytest.mark.parametrize("rows", [4, 301, 200_000])
def test_layer_norm_over_one_feature_has_no_input_gradient_as_pytorch(rows):
    """Each row's ``k`` and ``c`` round as written (``db * m - ds`` fused kept the
    product's rounding error: 1e-5 where PyTorch's gradient is exactly 0)."""
    rng = numpy.random.default_rng(rows)
    x = retrograd.tensor(rng.standard_normal((rows, 1)).astype(numpy.float32) * 3,
                         requires_grad=True)
    retrograd.nn.functional.layer_norm(x, (1,)).backward(
        retrograd.tensor(rng.standard_normal((rows, 1)).astype(numpy.float32)))
    assert not x.grad.numpy().any()


def test_a_rows_bits_do_not_depend_on_how_many_rows_its_call_has():
    """A row's sums (of softmax's exponentials, of LayerNorm's ``g w x`` and ``g w``) are
    functions of their own: written inside the kernels, the job entry and the kernel called
    from Python rounded 15-18% of softmax's rows and 8% of LayerNorm's gradient values
    apart."""
    assert _row_kernels_that_round_by_call_size() == []


def test_a_rows_bits_do_not_depend_on_its_calls_size_with_kernels_from_numbas_cache():
    """As above, in a process that loads the kernels from numba's disk cache (written here
    as this one compiled them): the differences showed only there (a process that compiles
    the kernels gave the same bits each way)."""
    _row_kernels_that_round_by_call_size()
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import test_blas_thread_jobs as t; "
            "print(t._row_kernels_that_round_by_call_size())")
    run = subprocess.run([sys.executable, "-c", code, os.path.dirname(__file__)],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip().splitlines()[-1] == "[]", run.stdout


@needs_threads
@pytest.mark.parametrize("shape", [(7, 33), (4, 5, 64)])
@pytest.mark.parametrize("affine", ["none", "weight", "bias", "both"])
def test_split_layer_norm_matches_one_thread(shape, affine, monkeypatch, split, spy):
    """Layer norm and its input gradient take whole rows (and their statistics) in each
    part, the weight and bias (each optional) whole."""
    n = shape[-1]
    x, g = _values(shape, 3), _values(shape, 4)
    w = _values(n, 5) if affine in ("weight", "both") else None
    b = _values(n, 6) if affine in ("bias", "both") else None

    def run():
        out, mean, rstd = cpu_kernels.layer_norm(x, n, 1e-5, w, b)
        return out, mean, rstd, cpu_kernels.layer_norm_dx(g, x, w, mean, rstd, n)
    for a, c in zip(run(), _one_thread(monkeypatch, run), strict=True):
        assert numpy.array_equal(a.view(numpy.int32), c.view(numpy.int32))
    assert len(spy) == 2
    for jobs in spy:
        assert jobs[:, 4 if len(jobs[0]) == 9 else 5].sum() == math.prod(shape[:-1])


@needs_threads
@pytest.mark.parametrize("shape", [(3, 4, 4), (2, 3, 6, 10), (5, 1, 2, 2), (1, 9, 8)])
def test_split_2x2_max_pool_and_its_gradient_match_one_thread(shape, monkeypatch, split, spy):
    x = _values(shape, sum(shape))
    args = ((2, 2), (2, 2), ((0, 0), (0, 0)), (1, 1))
    (out, idx), want = cpu_kernels.max_pool_2d(x, *args), _one_thread(
        monkeypatch, lambda: cpu_kernels.max_pool_2d(x, *args))
    assert numpy.array_equal(out, want[0], equal_nan=True)
    assert numpy.array_equal(idx, want[1])
    g = _values(out.shape, 3)
    plane = shape[-1] * shape[-2]
    dx = cpu_kernels.max_pool_grad(g, idx, x.shape, plane)
    assert numpy.array_equal(dx, _one_thread(
        monkeypatch, lambda: cpu_kernels.max_pool_grad(g, idx, x.shape, plane)), equal_nan=True)
    planes = x.size // plane
    if planes >= blas_threads.threads():
        assert [int(j[:, 3].sum()) for j in spy] == [planes, planes]  # (the pool, its grad)


@needs_threads
@pytest.mark.parametrize("args", [((3, 3), (2, 2), ((1, 1), (1, 1)), (1, 1)),
                                  ((2, 3), (1, 2), ((0, 1), (1, 0)), (2, 1)),
                                  ((3, 3), (3, 3), ((1, 2), (1, 2)), (1, 1))])
def test_split_max_pool_matches_one_thread(args, monkeypatch, split, spy):
    """Any kernel, stride, padding (a ceil mode's extra row and column) and dilation."""
    x = _values((3, 5, 9, 8), 4)
    got, want = cpu_kernels.max_pool_2d(x, *args), _one_thread(
        monkeypatch, lambda: cpu_kernels.max_pool_2d(x, *args))
    assert numpy.array_equal(got[0], want[0], equal_nan=True)
    assert numpy.array_equal(got[1], want[1])
    assert int(spy[0][:, 3].sum()) == 15  # planes


@needs_threads
def test_split_kernels_in_a_training_step_match_one_thread(monkeypatch, split):
    """conv -> relu -> 2x2 max pool, forward and backward, as w3 runs them."""
    def step():
        retrograd.manual_seed(0)
        nn = retrograd.nn
        model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                              nn.Flatten(), nn.Linear(8 * 4 * 4, 3), nn.GELU())
        x = retrograd.from_numpy(_values((4, 3, 8, 8), 0))
        model(x).sum().backward()
        return [p.grad.numpy() for p in model.parameters()]
    for a, b in zip(step(), _one_thread(monkeypatch, step), strict=True):
        assert numpy.array_equal(a, b, equal_nan=True)


@needs_threads
@pytest.mark.parametrize("shape", [(4, 5, 3, 7), (2, 9, 300), (7, 40), (5, 1, 1), (3, 2),
                                   (600, 20)])
@pytest.mark.parametrize("nan", [False, True])
def test_split_batch_norm_kernels_match_one_thread(shape, nan, monkeypatch, split, spy):
    """Batch norm's kernels (and evaluation's channel affine) take whole channels in each
    part: the same bits as one job. One value per channel and sample (BatchNorm1d's) takes
    the row kernels, in bands of rows: whole chunks of rows for the sums."""
    rng = numpy.random.default_rng(len(shape))
    x = _values(shape, 1) if nan else rng.standard_normal(shape).astype(numpy.float32)
    g = rng.standard_normal(shape).astype(numpy.float32)
    w, b = (rng.standard_normal(shape[1]).astype(numpy.float32) for _ in range(2))

    def run():
        out, mean, invstd = cpu_kernels.batch_norm(x, w, b, 1e-5)
        return (out, mean, invstd, cpu_kernels.channel_affine(x, w, b),
                *cpu_kernels.batch_norm_backward(g, x, w, mean, invstd, True, (True,) * 3),
                cpu_kernels.batch_norm_backward(g, x, None, mean, invstd, False,
                                                (True, False, False))[0],
                *cpu_kernels.batch_norm_backward(g, x, w, mean, invstd, True,
                                                 (False, True, True))[1:])
    got, want = run(), _one_thread(monkeypatch, run)
    for parts, whole in zip(got, want, strict=True):
        assert numpy.array_equal(parts.view(numpy.int32), whole.view(numpy.int32))
    from retrograd.backend._numba_kernels import _CHUNK  # (numba: installed here)
    n, c = shape[:2]
    if math.prod(shape[2:]) == 1:
        # BatchNorm1d's (N, C): with a chunk of rows per thread, each pass in bands of rows
        # (whole chunks for the five sums, the four elementwise passes anywhere); else a
        # band of columns (whole cache lines) per job for the four kernels with sums
        by_rows = [jobs for jobs in spy if jobs[-1, -1] == n]
        by_columns = [jobs for jobs in spy if jobs[-1, -1] == c]
        assert len(by_rows) + len(by_columns) == len(spy)
        for jobs in by_rows:  # (a row ends with its band's first and last row)
            r0, r1 = jobs[:, -2], jobs[:, -1]
            assert r0[0] == 0 and (r0[1:] == r1[:-1]).all()
        for jobs in by_columns:  # (... or column)
            c0, c1 = jobs[:, -2], jobs[:, -1]
            assert c0[0] == 0 and (c0[1:] == c1[:-1]).all() and (c0 % 16 == 0).all()
        chunked = sum((jobs[1:, -2] % _CHUNK == 0).all() for jobs in by_rows)
        if -(-n // _CHUNK) >= blas_threads.threads():
            assert (len(by_rows), chunked, len(by_columns)) == (9, 5, 0)
        else:
            assert (len(by_rows), chunked) == (2 if n > 1 else 0, 0)
            assert len(by_columns) == (4 if c > 16 else 0)
        return
    assert len(spy) == (0 if c == 1 else 5)
    for jobs in spy:  # (a row: its arrays, N, C, S, c0, c1, then eps or training in some)
        tail = 1 if jobs.shape[1] in (12, 14) else 0
        c0, c1 = jobs[:, -2 - tail], jobs[:, -1 - tail]
        assert c0[0] == 0 and (c0[1:] == c1[:-1]).all() and c1[-1] == c


def test_small_work_stays_on_this_thread(spy):
    """Below the kernel's size the job runs whole, on this thread."""
    x = _values(1000, 0)
    want = numpy.where((x > 0) | numpy.isnan(x), x, 0)  # a NaN passes
    assert numpy.array_equal(cpu_kernels.relu(x), want, equal_nan=True)
    assert spy == []


def test_strided_arrays_stay_on_this_thread(split, spy):
    """Arrays not C-contiguous (a job sees its parts as contiguous) take the plain kernel."""
    x = _values((4, 8, 8), 1)[:, ::2]
    out, idx = numpy.empty((4, 2, 4), numpy.float32), numpy.empty((4, 2, 4), numpy.int64)
    cpu_kernels._run("max_pool_2x2", (x, out, idx), 4, 8, 2, 4)
    assert spy == []
    assert numpy.array_equal(out, numpy.maximum.reduce(
        [x[:, i::2, j::2] for i in (0, 1) for j in (0, 1)]), equal_nan=True)


def test_threads_follow_set_num_threads():
    """The jobs run on as many threads as the BLAS has now (1 without OpenBLAS)."""
    if blas_threads._openblas() is None:
        assert blas_threads.threads() == 1
        return
    before = retrograd.get_num_threads()
    try:
        retrograd.set_num_threads(1)
        assert blas_threads.threads() == 1
    finally:
        retrograd.set_num_threads(before)
    assert blas_threads.threads() == before


def _at_threads(count, f):
    before = retrograd.get_num_threads()
    try:
        retrograd.set_num_threads(count)
        return f()
    finally:
        retrograd.set_num_threads(before)


@needs_threads
def test_an_attention_block_has_the_same_bits_on_one_thread_as_on_two():
    """Real sizes (each kernel large enough to split), the thread count changed through
    set_num_threads: one thread runs a large call's job entry whole, which rounds as its
    parts do (the kernel called from Python does not: softmax's differed in 16% of its
    values). Layer norm, attention (its batched products are MKL's grid or the compiled
    tiles, neither split by the thread count), GELU, log-softmax; no plain 2-D product,
    which NumPy's OpenBLAS rounds by its thread count (README, Benchmarks)."""
    rng = numpy.random.default_rng(0)
    b, t, c, heads = 32, 64, 192, 4
    arrays = [rng.standard_normal(s).astype(numpy.float32) * 0.5
              for s in [(b, t, c), (c,), (c,), (b, t, c), (b, t, c), (b, t, c)]]

    def step():
        x, w, bias, *qkv = (retrograd.from_numpy(a.copy()).requires_grad_() for a in arrays)
        F = retrograd.nn.functional
        h = F.layer_norm(x, (c,), w + 1, bias)
        q, k, v = ((h + u).view(b, t, heads, c // heads).transpose(1, 2) for u in qkv)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        y = x + y.transpose(1, 2).reshape(b, t, c)
        out = F.log_softmax(F.gelu(3 * y), -1)
        (out * out).sum().backward()
        return [out.detach().numpy()] + [a.grad.numpy() for a in (x, w, bias, *qkv)]
    for a, b_ in zip(_at_threads(1, step), _at_threads(2, step), strict=True):
        assert numpy.array_equal(a.view(numpy.int32), b_.view(numpy.int32))


@pytest.fixture
def copy_split(monkeypatch):
    """Every float32 copy runs as jobs, however small."""
    monkeypatch.setattr(cpu_kernels, "_COPY_MIN", 0)


@needs_threads
@pytest.mark.parametrize("case", ["windows", "windows_stride_2", "transpose", "crop", "merged",
                                  "one_row"])
def test_copy_into_matches_numpy(case, copy_split, spy):
    """The convolutions' copies: an im2col window view (at stride 1 and 2), a transpose, a
    crop into a wider buffer; axes that merge into one run, and a single row (each cut into
    parts)."""
    rng = numpy.random.default_rng(0)
    x = rng.standard_normal((5, 3, 9, 11)).astype(numpy.float32)
    if case.startswith("windows"):
        st = 2 if case.endswith("2") else 1
        src = numpy.lib.stride_tricks.as_strided(
            x, (3, 2, 2, 5, 8 // st, 10 // st), (x.strides[1], x.strides[2], 4, x.strides[0],
                                                 x.strides[2] * st, 4 * st))
        dst = numpy.empty(src.shape, numpy.float32)
    elif case == "transpose":
        src, dst = x.transpose(1, 0, 3, 2), numpy.empty((3, 5, 11, 9), numpy.float32)
    elif case == "crop":
        src, dst = x, numpy.full((5, 3, 10, 13), 7, numpy.float32)[:, :, 1:10, 1:12]
    elif case == "merged":
        src, dst = x, numpy.empty_like(x)
    else:
        src, dst = x[0, 0, 0], numpy.empty(11, numpy.float32)
    cpu_kernels.copy_into(dst, src)
    assert numpy.array_equal(dst, src)
    if case == "crop":
        assert (dst.base[:, :, 0] == 7).all() and (dst.base[:, :, :, 0] == 7).all()
    assert len(spy) == 1


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("shape, axes", [
    ((37, 21), (1, 0)), ((7, 3), (1, 0)), ((5, 16, 8), (2, 0, 1)), ((3, 4, 5, 6), (0, 3, 1, 2)),
    ((2, 9, 3, 17), (3, 1, 2, 0)), ((4, 6, 10), (0, 2, 1))])
def test_transposed_copies_match_numpy_bit_for_bit(shape, axes, threads, copy_split,
                                                     monkeypatch):
    """Transposes (dst's last axis a run, src's not) go in tiles of eight along dst's run
    with a remainder, from src's run on any axis: on one thread and in parts."""
    if threads > blas_threads.threads():
        pytest.skip("one OpenBLAS thread")
    monkeypatch.setattr(blas_threads, "threads", lambda: threads)
    src = _values(shape, 3).transpose(axes)
    dst = numpy.empty(src.shape, numpy.float32)
    cpu_kernels.copy_into(dst, src)
    assert numpy.array_equal(dst.view(numpy.int32), src.view(numpy.int32))


def test_contiguous_and_channels_last_copies_go_through_copy_into(copy_split, monkeypatch):
    """``contiguous()`` of a transposed float32 tensor and a channels-last clone take the
    tiled copy; their values, strides and gradients are PyTorch's."""
    torch = pytest.importorskip("torch")
    seen = []
    copy = cpu_kernels.copy_into
    monkeypatch.setattr(cpu_kernels, "copy_into", lambda d, s: (seen.append(s.shape),
                                                               copy(d, s)))
    a = _values((2, 3, 4, 5), 1)
    x = retrograd.from_numpy(a).requires_grad_()
    t = torch.from_numpy(a)
    for mine, theirs in [(x.permute(0, 3, 1, 2).contiguous(), t.permute(0, 3, 1, 2).contiguous()),
                         (x.contiguous(memory_format=retrograd.channels_last),
                          t.contiguous(memory_format=torch.channels_last)),
                         (x.clone(memory_format=retrograd.channels_last),
                          t.clone(memory_format=torch.channels_last))]:
        assert mine.stride() == theirs.stride()
        numpy.testing.assert_array_equal(mine.detach().numpy(), theirs.numpy())
        mine.sum().backward()
    assert len(seen) == 3
    numpy.testing.assert_array_equal(x.grad.numpy(), numpy.full(a.shape, 3, numpy.float32))


def test_copy_into_leaves_what_jobs_cannot_take_to_numpy(copy_split, spy):
    """Overlapping, reversed, other dtypes, numbers, a destination that steps 0: NumPy's
    copy, as before."""
    x = numpy.arange(40, dtype=numpy.float32).reshape(4, 10)
    cpu_kernels.copy_into(x[:, 1:], x[:, :-1])  # overlapping
    assert numpy.array_equal(x[0], [0, 0, 1, 2, 3, 4, 5, 6, 7, 8])
    y = numpy.empty((4, 10), numpy.float32)
    cpu_kernels.copy_into(y, x[::-1])
    assert numpy.array_equal(y, x[::-1])
    z = numpy.empty((4, 10))
    cpu_kernels.copy_into(z, x)
    assert numpy.array_equal(z, x)
    cpu_kernels.copy_into(y, numpy.float32(3))
    assert (y == 3).all()
    cpu_kernels.copy_into(y, 2.0)
    assert (y == 2).all()
    one = numpy.zeros(1, numpy.float32)  # (a writeable view stepping 0: one element, 4 times)
    cpu_kernels.copy_into(numpy.lib.stride_tricks.as_strided(one, (4,), (0,)), x[0, :4])
    assert one[0] == x[0, 3]
    assert spy == []


@pytest.mark.parametrize("shape, hb, r, top, left", [
    ((2, 3, 4, 5), 7, 8, 1, 2), ((1, 1, 3, 3), 3, 3, 0, 0), ((6, 2, 5), 9, 5, 4, 0)])
def test_pad_planes_places_each_plane_in_zeros(shape, hb, r, top, left, monkeypatch, split):
    x = _values(shape, 1)
    h, w = shape[-2:]
    want = numpy.zeros(shape[:-2] + (hb, r), numpy.float32)
    want[..., top:top + h, left:left + w] = x
    assert numpy.array_equal(cpu_kernels.pad_planes(x, hb, r, top, left), want, equal_nan=True)
    strided = numpy.repeat(x, 2, axis=-1)[..., ::2]  # (not C-contiguous: NumPy's path)
    assert numpy.array_equal(cpu_kernels.pad_planes(strided, hb, r, top, left), want,
                             equal_nan=True)
    with pytest.raises(ValueError, match="does not fit"):
        cpu_kernels.pad_planes(x, hb, r, top, r - w + 1)


@needs_threads
def test_convolution_with_its_copies_as_jobs_matches_numpy(monkeypatch, split, copy_split):
    """A convolution's forward and both gradients, every copy and padding as jobs."""
    def run():
        rng = numpy.random.default_rng(3)
        x = retrograd.from_numpy(rng.standard_normal((3, 4, 9, 7)).astype(numpy.float32))
        w = retrograd.from_numpy(rng.standard_normal((6, 4, 3, 3)).astype(numpy.float32))
        b = retrograd.from_numpy(rng.standard_normal(6).astype(numpy.float32))
        for t in (x, w, b):
            t.requires_grad_()
        out = retrograd.nn.functional.conv2d(x, w, b, padding=1)
        out.backward(retrograd.ones_like(out))
        return [out.detach().numpy()] + [t.grad.numpy() for t in (x, w, b)]
    with monkeypatch.context() as m:
        m.setattr(cpu_kernels, "_COPY_MIN", 1 << 62)
        m.setattr(cpu_kernels, "_SPLIT_MIN", dict.fromkeys(cpu_kernels._SPLIT_MIN, 1 << 62))
        want = run()
    for a, b in zip(run(), want, strict=True):
        assert numpy.array_equal(a, b)


@needs_threads
@pytest.mark.parametrize("alpha", [0.1, -3e-7, 1.0, 7])
def test_split_in_place_updates_match_one_thread(alpha, monkeypatch, split, spy):
    """An optimizer's ``p.add_(u, alpha=a)`` and ``buf.mul_(m)``, in parts and whole."""
    x, y = _values(5000, 1), _values(5000, 2)
    want = _one_thread(monkeypatch, lambda: (cpu_kernels.add_scaled(x.copy(), y, alpha),
                                            cpu_kernels.scale(x.copy(), alpha)))
    got = cpu_kernels.add_scaled(x.copy(), y, alpha), cpu_kernels.scale(x.copy(), alpha)
    for a, b in zip(got, want, strict=True):
        assert numpy.array_equal(a.view(numpy.int32), b.view(numpy.int32))
    assert numpy.array_equal(got[1], x * numpy.float32(alpha), equal_nan=True)
    assert len(spy) == 2


@needs_threads
@pytest.mark.parametrize("value", [0.1, -3e-7, 1.0, 7])
def test_split_adam_updates_match_one_thread(value, monkeypatch, split, spy):
    """Adam's ``v.addcmul_(g, g)``, ``p.addcdiv_(m, d)`` and ``d.sqrt_()``, in parts and
    whole, at odd lengths, with NaN, infinities and signed zeros."""
    x, a, b = _values(5001, 1), _values(5001, 2), _values(5001, 3)
    b[::13] = 0.0
    b[5::17] = numpy.inf

    def run():
        return (cpu_kernels.addcmul(x.copy(), a, b, value),
                cpu_kernels.addcdiv(x.copy(), a, b, value), cpu_kernels.sqrt_(x.copy()))
    want = _one_thread(monkeypatch, run)
    with numpy.errstate(all="ignore"):
        for got, w in zip(run(), want, strict=True):
            assert numpy.array_equal(got.view(numpy.int32), w.view(numpy.int32))
        assert numpy.array_equal(want[2], numpy.sqrt(x), equal_nan=True)
    assert len(spy) == 3


@pytest.mark.parametrize("n", [1, 31, 5000, 100003])
def test_adam_updates_through_tensors_round_as_pytorch(n, torch):
    """The in-place updates of a hand-written Adam (``no_grad``: the compiled kernels) give
    PyTorch's bits: ``value * t1`` first, then a fused multiply-add for addcmul_, a
    division then the sum for addcdiv_ (NumPy's chain rounds ``t1 * t2 * value``)."""
    rng = numpy.random.default_rng(n)
    p, m, g = (rng.standard_normal(n).astype(numpy.float32) for _ in range(3))
    v = rng.random(n).astype(numpy.float32)
    d = numpy.sqrt(v / numpy.float32(1 - 0.999 ** 3)) + numpy.float32(1e-8)
    got, want = [], []
    for lib, out in ((retrograd, got), (torch, want)):
        tp, tm, tv, tg, td = (lib.from_numpy(a.copy()) for a in (p, m, v, g, d))
        with lib.no_grad():
            tv.mul_(0.999).addcmul_(tg, tg, value=1 - 0.999)
            tp.addcdiv_(tm, td, value=-1e-3 / (1 - 0.9 ** 3))
            denom = (tv / (1 - 0.999 ** 3)).sqrt_()
        out += [tv.numpy(), tp.numpy(), denom.numpy()]
    assert numpy.array_equal(got[0], want[0])
    assert numpy.array_equal(got[1], want[1])
    # (PyTorch's vectorized sqrt is 1 ulp off the correctly rounded one, NumPy's, at times)
    numpy.testing.assert_array_max_ulp(got[2], want[2], maxulp=1)


@pytest.mark.parametrize("shape", [(2048, 768), (700, 100), (4096, 16)])
def test_bias_gradients_sum_columns_in_chunks_the_same_bits_however_cut(shape, monkeypatch):
    """A linear layer's bias gradient over many rows: float32 sums of chunks of rows added
    in float64 (closer to the float64 sum than NumPy's row after row), the same bits on
    one thread, in bands of rows and in bands of columns; NaN and infinities carried."""
    g = (numpy.random.default_rng(9).standard_normal(shape) * 3).astype(numpy.float32)
    g[5, 3], g[7, 4], g[9, 5] = numpy.inf, numpy.nan, -0.0
    got = [cpu_kernels.column_sums(g)]
    got.append(_one_thread(monkeypatch, lambda: cpu_kernels.column_sums(g)))
    monkeypatch.setattr(cpu_kernels, "_in_row_bands", lambda rows: False)
    got.append(cpu_kernels.column_sums(g))
    for other in got[1:]:
        assert numpy.array_equal(got[0].view(numpy.int32), other.view(numpy.int32))
    with numpy.errstate(invalid="ignore"):
        exact = g.astype(numpy.float64).sum(0)
    numpy.testing.assert_array_equal(numpy.isnan(got[0]), numpy.isnan(exact))
    finite = numpy.isfinite(exact)
    err = numpy.abs(got[0][finite] - exact[finite])
    assert err.max() <= numpy.abs(numpy.sum(g, 0)[finite] - exact[finite]).max()
    assert got[0][3] == numpy.inf


def test_a_linear_layers_bias_gradient_takes_the_column_sums_on_many_rows(torch, monkeypatch):
    """w4's (32, 64) rows: the compiled column sums, as PyTorch's to rounding; a batch of 128
    rows keeps NumPy's sum (its row-by-row adds are faster there)."""
    calls = []
    real = cpu_kernels.column_sums
    monkeypatch.setattr(cpu_kernels, "column_sums", lambda a: calls.append(a.shape) or real(a))
    rng = numpy.random.default_rng(3)
    for rows, taken in ((2048, True), (128, False)):
        x, w = rng.standard_normal((rows, 48)), rng.standard_normal((768, 48))
        b, g = rng.standard_normal(768), rng.standard_normal((rows, 768))
        grads = []
        for lib in (retrograd, torch):
            tb = lib.from_numpy(b.astype(numpy.float32)).requires_grad_()
            y = lib.nn.functional.linear(lib.from_numpy(x.astype(numpy.float32)),
                                         lib.from_numpy(w.astype(numpy.float32)), tb)
            y.backward(lib.from_numpy(g.astype(numpy.float32)))
            grads.append(tb.grad.numpy())
        numpy.testing.assert_allclose(grads[0], grads[1], rtol=1e-5, atol=1e-4)
        assert (calls == [(rows, 768)]) == taken
        calls.clear()


@pytest.mark.parametrize("path", ["in place", "function", "strided", "broadcast", "float16"])
def test_addcmul_and_addcdiv_round_as_pytorch_on_every_path(path, torch):
    """Not only the compiled in-place pass: the function, an in-place write of strided or
    broadcast operands (NumPy's arrays), float16 (computed in float32) give PyTorch's
    bits for float32 (a fused multiply-add rounded once) and float16."""
    rng = numpy.random.default_rng(11)
    dtype = numpy.float16 if path == "float16" else numpy.float32
    x, a, b = (rng.standard_normal((64, 64)).astype(dtype) for _ in range(3))
    b = numpy.abs(b) + dtype(0.5)
    got = []
    for lib in (retrograd, torch):
        tx, ta, tb = (lib.from_numpy(v.copy()) for v in (x, a, b))
        if path == "strided":
            tx, ta, tb = tx[:, ::2], ta[:, ::2], tb[:, ::2]
        elif path == "broadcast":
            ta = ta[:1]
        if path == "function":
            got.append([lib.addcmul(tx, ta, tb, value=0.3).numpy(),
                        lib.addcdiv(tx, ta, tb, value=-0.7).numpy()])
        else:
            got.append([tx.clone().addcmul_(ta, tb, value=0.3).numpy(),
                        tx.clone().addcdiv_(ta, tb, value=-0.7).numpy()])
    for mine, theirs in zip(*got, strict=True):
        assert numpy.array_equal(mine, theirs)


def test_addcmul_rounds_once_at_a_halfway_point(torch):
    """(1 + 2^-12)^2 + 1e-30: the float64 sum lands on a float32 halfway point; rounded
    once, as PyTorch's fused multiply-add, it rounds up (twice, to even: down)."""
    got = []
    for lib in (retrograd, torch):
        t, s = lib.full((64,), 1 + 2 ** -12), lib.full((64,), 1e-30)
        got.append([lib.addcmul(s, t, t).numpy(), s.clone()[::2].addcmul_(t[::2], t[::2])
                    .numpy(), s.clone().addcmul_(t, t).numpy()])
    for mine, theirs in zip(*got, strict=True):
        assert numpy.array_equal(mine, theirs)
    assert got[0][0][0] == float.fromhex("0x1.002002p+0")


def test_an_in_place_addcmul_refuses_what_its_dtype_cannot_hold():
    """An integer tensor and a fractional value, a float tensor and a complex value: an
    error, not a value silently cast into the tensor."""
    with pytest.raises(TypeError):
        retrograd.tensor([10, 20]).addcmul_(retrograd.tensor([3, 4]), retrograd.tensor([5, 6]),
                                            value=2.5)
    with pytest.raises(TypeError):
        retrograd.tensor([1., 2.]).addcmul_(retrograd.tensor([3., 4.]),
                                            retrograd.tensor([5., 6.]), value=1.5j)


def test_byte_swapped_float32_takes_no_compiled_kernel():
    """A big-endian float32 array (``retrograd.tensor`` keeps it) is not the kernels'
    native float32: each op gives NumPy's value, not its bytes read the other way."""
    be = numpy.full((2048, 64), 4.0, ">f4")
    x = retrograd.tensor(be)
    x.sqrt_()
    assert x[0, 0].item() == 2.0
    x = retrograd.tensor(be)
    x.addcmul_(retrograd.tensor(be), retrograd.tensor(be), value=0.5)
    assert x[0, 0].item() == 12.0
    x = retrograd.tensor(be)
    x.addcdiv_(retrograd.tensor(be), retrograd.tensor(be), value=0.5)
    assert x[0, 0].item() == 4.5
    x = retrograd.tensor(be)
    x.mul_(2.0)
    assert x[0, 0].item() == 8.0
    assert abs(retrograd.nn.functional.gelu(retrograd.tensor(be))[0, 0].item() - 4.0) < 1e-3
    assert retrograd.softmax(retrograd.tensor(be), -1)[0, 0].item() == 1 / 64
    assert not cpu_kernels.takes(be) and not cpu_kernels.sums_columns(be, 1)
    rng = numpy.random.default_rng(4)  # (the convolutions' kernels: NumPy's path instead)
    x, w = rng.standard_normal((8, 16, 32, 32)), rng.standard_normal((16, 16, 3, 3))
    for groups, wk in ((1, w), (16, w[:, :1])):
        got = [retrograd.nn.functional.conv2d(retrograd.tensor(x.astype(f)),
                                              retrograd.tensor(wk.astype(f)), padding=1,
                                              groups=groups).numpy() for f in (">f4", "<f4")]
        numpy.testing.assert_allclose(got[0], got[1], rtol=1e-5, atol=1e-4)


def test_in_place_add_of_an_overlapping_view_reads_the_values_before_the_write(split):
    """The kernel would read what it wrote (and its parts race): NumPy's buffered add."""
    a = numpy.arange(10, dtype=numpy.float32)
    cpu_kernels.add_scaled(a[1:], a[:-1], 2.0)
    assert numpy.array_equal(a, numpy.float32([0, 1, 4, 7, 10, 13, 16, 19, 22, 25]))
    cpu_kernels.add_scaled(a, a, 0.5)  # (the same array: each element reads itself)
    assert numpy.array_equal(a, 1.5 * numpy.float32([0, 1, 4, 7, 10, 13, 16, 19, 22, 25]))


def test_tensor_mul_by_a_number_takes_the_kernel_as_numpy_rounds(split, spy, torch):
    x = _values((70, 80), 5)
    t = retrograd.from_numpy(x.copy())
    t.mul_(0.9).add_(retrograd.from_numpy(x), alpha=-0.3)
    ref = torch.from_numpy(x.copy())
    ref.mul_(0.9).add_(torch.from_numpy(x), alpha=-0.3)
    assert numpy.array_equal(t.numpy(), ref.numpy(), equal_nan=True)
    assert len(spy) == (2 if blas_threads.threads() > 1 else 0)


@needs_threads
def test_split_kernels_run_in_a_forked_child(split):
    """A forked child (a DataLoader worker) has none of OpenBLAS's threads: its first job
    makes them again, and the results are the parent's."""
    x = _values(1 << 15, 6)
    want = cpu_kernels.gelu(x)
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os._exit(0 if numpy.array_equal(cpu_kernels.gelu(x), want, equal_nan=True) else 3)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


@pytest.mark.parametrize("shapes", [((5, 6, 7), (5, 8, 7)), ((2, 3, 4, 5), (2, 3, 9, 5)),
                                    ((3, 2, 4, 6), (2, 5, 6))])
def test_batches_times_transposed_batches_lay_them_out_first(shapes, copy_split, monkeypatch):
    """A batch of small transposed float32 matrices is copied row-major (the tiled
    transpose) before NumPy's matmul, a product NumPy's to rounding; a broadcast batch, a
    vector, a row-major batch and float64 go to NumPy's matmul as they are."""
    from retrograd.backend.functions import functions
    laid = []
    contiguous = cpu_kernels.contiguous
    monkeypatch.setattr(cpu_kernels, "contiguous", lambda x: laid.append(x.shape)
                        or contiguous(x))
    mm = functions(numpy).batched_matmul
    a, b = _values(shapes[0], 1), _values(shapes[1], 2).swapaxes(-1, -2)
    numpy.testing.assert_allclose(mm(a, b), numpy.matmul(a, b), rtol=1e-5, atol=1e-5,
                                  equal_nan=True)
    assert laid == [b.shape]
    for x, y in [(a, numpy.broadcast_to(b[:1], b.shape)), (a.reshape(-1)[:b.shape[-2]], b),
                 (a, numpy.ascontiguousarray(b)), (a.astype(numpy.float64), b.astype(float))]:
        numpy.testing.assert_array_equal(mm(x, y), numpy.matmul(x, y))
    assert laid == [b.shape]


def test_attention_products_with_laid_out_batches_match_pytorch(copy_split):
    """``q @ k.transpose(-2, -1)`` and ``p @ v`` (whose input gradient multiplies by v's
    transpose): values and every gradient as PyTorch's, to float32 rounding."""
    torch = pytest.importorskip("torch")
    q, k, v = (_values((2, 3, 8, 5), s) for s in (1, 2, 3))
    q, k, v = (numpy.nan_to_num(x, nan=0.5) for x in (q, k, v))
    got = {}
    for lib in (retrograd, torch):
        Q, K, V = (lib.from_numpy(x.copy()).requires_grad_() for x in (q, k, v))
        s = Q @ K.transpose(-2, -1)
        o = s.softmax(-1) @ V
        o.backward(lib.from_numpy(_values((2, 3, 8, 5), 4)).nan_to_num(0.25))
        got[lib] = [t.detach().numpy() for t in (s, o, Q.grad, K.grad, V.grad)]
    for a, b in zip(got[retrograd], got[torch], strict=True):
        numpy.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6 * numpy.abs(b).max())


@needs_threads
@pytest.mark.parametrize("n", [1, 7, 1023, 1025, 4097, 100_003])
def test_all_finite_finds_any_infinity_or_nan(split, spy, n):
    """Each part finds what is in it: an infinity or NaN first, last or in the middle,
    where the parts meet (the second starts at element 1024), and the largest finite
    float32 is finite."""
    a = numpy.random.default_rng(n).standard_normal(n).astype(numpy.float32)
    a[-1] = numpy.finfo(numpy.float32).max
    assert cpu_kernels.all_finite(a)
    for at in sorted({0, min(1023, n - 1), min(1024, n - 1), n // 2, n - 1}):
        for v in (numpy.inf, -numpy.inf, numpy.nan):
            b = a.copy()
            b[at] = v
            assert not cpu_kernels.all_finite(b), (at, v)
    if n > 1024:
        assert spy


@pytest.mark.parametrize("axis", [0, 1, -1, 2])
def test_concatenate_copies_each_piece_into_place_as_numpy(axis, copy_split, monkeypatch):
    """Pieces of one shape but along ``axis``, a transposed one among them (a key's
    gradient), each copied into its slice: NumPy's result bit for bit, NaN included."""
    copied = []
    copy_into = cpu_kernels.copy_into
    monkeypatch.setattr(cpu_kernels, "copy_into", lambda d, s: copied.append(s.shape)
                        or copy_into(d, s))
    shape = [4, 6, 10]
    pieces = []
    for i, n in enumerate((3, 1, 5)):
        s = list(shape)
        s[axis] = n
        x = _values(s[::-1], i).transpose() if i == 0 else _values(s, i)
        pieces.append(x)
    assert not pieces[0].flags.c_contiguous
    got, want = cpu_kernels.concatenate(pieces, axis), numpy.concatenate(pieces, axis)
    numpy.testing.assert_array_equal(got, want)
    assert got.strides == want.strides
    assert copied == [p.shape for p in pieces]


@pytest.mark.parametrize("case", ["small", "float64", "mixed dtypes", "byte-swapped",
                                  "a list", "transposed", "channels last", "shapes", "axis",
                                  "None"])
def test_concatenate_leaves_what_it_does_not_take_to_numpy(case):
    """Few elements, float64, mixed dtypes, float32 in the other byte order, a list among
    the pieces, pieces all transposed or all channels-last (NumPy's result is laid out as
    they are): NumPy's concatenate, its result and layout; pieces whose shapes differ off
    the axis, an axis out of range, or None: NumPy's error."""
    a, b = _values((300, 200), 1), _values((300, 100), 2)
    if case == "None":
        with pytest.raises(ValueError):
            cpu_kernels.concatenate([a, None], 1)
        return
    if case == "byte-swapped":
        a, b = a.astype(">f4"), b.astype(">f4")
    elif case == "a list":
        b = b.tolist()
    elif case == "small":
        a, b = a[:2], b[:2]
    elif case == "float64":
        a, b = a.astype(numpy.float64), b.astype(numpy.float64)
    elif case == "mixed dtypes":
        b = b.astype(numpy.float64)
    elif case == "transposed":
        a, b = _values((200, 300), 1).T, _values((100, 300), 2).T
    elif case == "channels last":
        a, b = (_values((8, 24, 24, c), s).transpose(0, 3, 1, 2) for s, c in ((1, 16), (2, 8)))
    if case in ("shapes", "axis"):
        with pytest.raises(ValueError):
            cpu_kernels.concatenate([a, b] if case == "shapes" else [a, a], 0 if case ==
                                    "shapes" else 2)
        return
    got = cpu_kernels.concatenate([a, b], 1)
    want = numpy.concatenate([a, b], 1)
    assert got.dtype == want.dtype and got.strides == want.strides
    numpy.testing.assert_array_equal(got, want)


def test_cat_and_the_gradient_of_split_concatenate_by_pieces(monkeypatch):
    """``torch.cat`` of float32 tensors and the gradient of ``chunk`` (an attention's q, k,
    v from one projection, the key's gradient transposed) go through
    ``cpu_kernels.concatenate``; values and gradients as PyTorch's."""
    torch = pytest.importorskip("torch")
    calls = []
    concatenate = cpu_kernels.concatenate
    monkeypatch.setattr(cpu_kernels, "concatenate", lambda arrays, axis: calls.append(axis)
                        or concatenate(arrays, axis))
    x = _values((8, 64, 96), 3)
    x[numpy.isnan(x)] = 0.5
    g = _values((8, 64, 64), 4)
    g[numpy.isnan(g)] = -1.0
    got = {}
    for lib in (retrograd, torch):
        t = lib.from_numpy(x.copy()).requires_grad_()
        q, k, v = t.chunk(3, -1)
        y = lib.cat([q @ k.transpose(-2, -1), v @ v.transpose(-2, -1)], -1)
        y.backward(lib.from_numpy(numpy.concatenate([g, g[..., ::-1]], -1).copy()))
        got[lib] = (y.detach().numpy(), t.grad.numpy())
    assert calls == [-1, 2]  # cat's forward, then chunk's gradient
    for a, b in zip(got[retrograd], got[torch], strict=True):
        numpy.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4 * numpy.abs(b).max())


@needs_threads
def test_more_jobs_than_openblas_threads_are_refused():
    """OpenBLAS would wait for a thread it does not have: refused, nothing run."""
    jobs = numpy.zeros((blas_threads.threads() + 1, 3), numpy.int64)
    scale = cpu_kernels._kernels()["jobs"]["scale"]
    with pytest.raises(ValueError, match="jobs for"):
        blas_threads.run_jobs(scale, jobs)
    with pytest.raises(ValueError, match="jobs for"):
        blas_threads.run_flat(scale, array.array("q", jobs.ravel()), 3)
