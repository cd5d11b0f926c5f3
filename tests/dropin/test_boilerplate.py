"""The boilerplate of PyTorch programs (torch.backends, torch.cuda, torch.accelerator,
torch.compile, default device, deterministic mode, matmul precision, legacy typed
constructors, Module.cuda/half/type/to_empty) answers as PyTorch's CPU-only build does.

Each scenario runs under retrograd and under PyTorch (``both``) and logs values and the
exceptions raised (type and message); the logs must be equal.
"""

import sqlite3
import warnings

import numpy
import pytest

import retrograd
from retrograd.autograd.profiler import load_nvprof

pytestmark = pytest.mark.torch


def _outcome(fn):
    """What ``fn()`` gives, comparable across libraries: a plain value, a tensor's
    (dtype, shape, values), or the exception's (type name, message)."""
    try:
        r = fn()
    except Exception as e:  # noqa: BLE001 (the exception is the outcome)
        return type(e).__name__, str(e)
    if hasattr(r, "detach") and hasattr(r, "dtype"):
        return str(r.dtype), tuple(r.shape), r.detach().numpy().tolist()
    return r


@pytest.fixture
def both(torch):
    """``both(scenario)``: run ``scenario(T)`` with retrograd and PyTorch; equal logs."""
    def run(scenario):
        ours, ref = scenario(retrograd), scenario(torch)
        assert repr(ours) == repr(ref), f"\nretrograd: {ours!r}\npytorch:   {ref!r}"
        return ours
    return run


def _defaults(torch):
    for T in (retrograd, torch):
        T.backends.cudnn.benchmark = T.backends.cudnn.deterministic = False
        T.backends.cudnn.enabled = True
        T.set_float32_matmul_precision("highest")
        T.set_default_device(None)
        if T.are_deterministic_algorithms_enabled():  # PyTorch's first call takes seconds
            T.use_deterministic_algorithms(False)


@pytest.fixture(autouse=True)
def _restore_flags(torch):
    """Scenarios set global flags in both libraries: each starts from the defaults (a test
    elsewhere in the process may have set PyTorch's) and puts them back."""
    _defaults(torch)
    yield
    _defaults(torch)


def test_backends_flags(both):
    def scenario(T):
        b = T.backends
        log = [b.cuda.is_built(), b.cudnn.is_available(), b.cudnn.version(),
               b.mps.is_available(), b.mps.is_built(), b.opt_einsum.is_available(),
               b.opt_einsum.enabled, b.opt_einsum.strategy, b.cudnn.enabled,
               b.cudnn.benchmark, b.cudnn.deterministic, b.cudnn.allow_tf32,
               b.cudnn.benchmark_limit, b.cuda.matmul.allow_tf32,
               b.cuda.matmul.allow_fp16_reduced_precision_reduction,
               b.cuda.matmul.allow_bf16_reduced_precision_reduction,
               b.cuda.flash_sdp_enabled(), b.cuda.math_sdp_enabled()]
        b.cudnn.benchmark = True
        b.cudnn.deterministic = True
        log += [b.cudnn.benchmark, b.cudnn.deterministic]
        with b.cudnn.flags(enabled=False, benchmark=False):
            log += [b.cudnn.enabled, b.cudnn.benchmark]
        log += [b.cudnn.enabled, b.cudnn.benchmark]
        for name, value in (("benchmark", "yes"), ("enabled", 1)):
            log.append(_outcome(lambda n=name, v=value: setattr(b.cudnn, n, v)))
        b.cuda.enable_flash_sdp(False)
        log += [b.cuda.flash_sdp_enabled(), _outcome(lambda: b.cuda.enable_math_sdp(1))]
        b.cuda.enable_flash_sdp(True)
        log.append(_outcome(lambda: setattr(b.cuda.matmul, "allow_tf32", 1)))
        log.append(_outcome(lambda: setattr(b.cuda.matmul, "allow_tf33", True)))
        log.append(_outcome(lambda: b.cuda.matmul.allow_tf33))
        log.append(_outcome(lambda: setattr(
            b.cuda.matmul, "allow_fp16_reduced_precision_reduction", "x")))
        b.cuda.matmul.allow_bf16_reduced_precision_reduction = (False, False)
        log += [b.cuda.matmul.allow_bf16_reduced_precision_reduction,
                b.cuda.matmul.allow_bf16_reduced_precision_reduction_split_k]
        b.cuda.matmul.allow_bf16_reduced_precision_reduction = True
        b.cuda.matmul.allow_tf32 = True
        log += [T.get_float32_matmul_precision(), b.cuda.matmul.allow_tf32]
        b.cuda.matmul.allow_tf32 = False
        log.append(T.get_float32_matmul_precision())
        return log
    both(scenario)


def test_cpu_capability(torch):
    """NumPy's SIMD dispatch level, named as PyTorch names its own (equal on x86)."""
    ours = retrograd.backends.cpu.get_cpu_capability()
    assert ours in ("DEFAULT", "AVX2", "AVX512")
    if torch.backends.cpu.get_cpu_capability() in ("DEFAULT", "AVX2", "AVX512"):
        assert ours == torch.backends.cpu.get_cpu_capability()


def test_cpu_build_libraries_are_not_claimed():
    """Deliberately not PyTorch's answers: retrograd's kernels are NumPy's or its own,
    without oneDNN or OpenMP, so it does not say it has them (their flags still work);
    MKL only where its matrix products are MKL's."""
    from retrograd.backend import mkl_gemm
    b = retrograd.backends
    assert (b.mkldnn.is_available(), b.mkl.is_available(), b.openmp.is_available()) == \
        (False, mkl_gemm.available(), False)
    with b.mkldnn.flags(enabled=False):
        assert b.mkldnn.enabled is False
    assert b.mkldnn.enabled is True


@pytest.mark.cpu_build
def test_cuda_on_a_cpu_only_build(both):
    def scenario(T):
        c = T.cuda
        log = [c.is_available(), c.device_count(), c.is_initialized(), c.get_arch_list(),
               c.get_gencode_flags(), c.is_bf16_supported(), c.is_tf32_supported(),
               c.get_rng_state_all(), c.manual_seed(0), c.manual_seed_all(1), c.seed(),
               c.seed_all(), c.set_rng_state_all([]), c.set_device(-1)]
        for fn in (c.current_device, c.get_device_name, c.synchronize, c.init,
                   c.get_device_properties, c.get_device_capability, c.initial_seed,
                   c.get_rng_state, c.ipc_collect, c.current_stream, c.default_stream,
                   c.mem_get_info, c.Stream, c.Event, lambda: c.get_device_name(0),
                   lambda: c.set_device("cpu"), lambda: c.manual_seed("a"),
                   lambda: c.device(0).__enter__(), lambda: c.device(-1).__enter__(),
                   lambda: c.FloatTensor(2), lambda: isinstance(T.ones(1), c.FloatTensor),
                   lambda: T.ones(2).cuda(), lambda: T.ones(2).cuda(0),
                   lambda: T.ones(2).to("cuda:0"), lambda: T.zeros(2, device="cuda"),
                   lambda: T.ones(2).cpu().shape, lambda: T.device("cuda:x"),
                   lambda: T.device("foo"), lambda: T.device("meta")):
            log.append(_outcome(fn))
        return log
    both(scenario)


@pytest.mark.cpu_build
def test_cuda_memory_is_the_memory_accounting():
    """``retrograd.cuda.memory`` stays retrograd.memory (the device the tensors are on)."""
    assert retrograd.cuda.memory.memory_allocated is retrograd.memory.memory_allocated
    retrograd.cuda.empty_cache()


@pytest.mark.cpu_build
def test_accelerator_absent(both):
    def scenario(T):
        a = T.accelerator
        log = [a.is_available(), a.current_accelerator(), a.device_count(),
               a.current_accelerator(check_available=True)]
        for fn in (a.current_device_index, a.synchronize, a.empty_cache, a.memory_allocated,
                   a.memory_stats, lambda: a.set_device_index(0),
                   lambda: a.device_index(0).__enter__(),
                   lambda: a.device_index(None).__enter__()):
            log.append(_outcome(fn))
        return log
    both(scenario)


def test_default_device(both):
    def scenario(T):
        log = [T.get_default_device()]
        T.set_default_device("cpu")
        log += [T.get_default_device(), T.zeros(2).device]
        x = T.ones(2)
        T.set_default_device("cuda")
        log += [_outcome(T.get_default_device), _outcome(lambda: T.zeros(2)),
                _outcome(lambda: T.tensor([1.])), _outcome(lambda: T.ones(2, device="cpu"))]
        # the *_like and new_* forms follow their input, legacy constructors the CPU
        for fn in (lambda: T.zeros_like(x), lambda: T.full_like(x, 2.),
                   lambda: T.randint_like(x, 3).shape, lambda: T.empty_like(x).shape,
                   lambda: x.new_zeros(2), lambda: x.new_full((2,), 3.),
                   lambda: x.new_tensor([1.]), lambda: T.Tensor(2).shape,
                   lambda: T.FloatTensor(2).shape, lambda: T.LongTensor([1]),
                   lambda: T.randperm(3).shape, lambda: T.scalar_tensor(1.),
                   lambda: T.arange(3), lambda: T.as_tensor(x), lambda: T.as_tensor([1.])):
            log.append(_outcome(fn))
        T.set_default_device(None)
        log += [T.get_default_device(), _outcome(lambda: T.set_default_device("foo")),
                _outcome(lambda: T.set_default_device(3)), T.get_default_device()]
        return log
    both(scenario)


def test_default_device_meta_and_mps():
    """The default device becomes meta (shape-only tensors); MPS parses but is refused."""
    retrograd.set_default_device("meta")
    try:
        assert retrograd.get_default_device() == retrograd.device("meta")
        assert retrograd.zeros(2).is_meta
        with pytest.raises(NotImplementedError, match="'MPS' backend"):
            retrograd.zeros(2, device="mps")
    finally:
        retrograd.set_default_device(None)
    assert not retrograd.zeros(2).is_meta


def test_deterministic_mode_fills_empty():
    """What PyTorch gives (its comparison below is slow: PyTorch's first
    use_deterministic_algorithms call imports its compiler)."""
    T = retrograd
    T.use_deterministic_algorithms(True)
    assert numpy.isnan(T.empty(2).numpy()).all()
    assert numpy.isnan(T.ones(1).new_empty(2).numpy()).all()
    assert T.empty(2, dtype=T.int64).tolist() == [2 ** 63 - 1] * 2
    assert T.empty(1, dtype=T.uint8).tolist() == [255]
    assert T.empty(2, dtype=T.bool).tolist() == [True, True]
    assert T.get_deterministic_debug_mode() == 2
    with pytest.raises(TypeError, match="argument 'mode' .position 1. must be bool, not str"):
        T.use_deterministic_algorithms("x")
    T.set_deterministic_debug_mode("warn")
    assert T.is_deterministic_algorithms_warn_only_enabled()
    T.use_deterministic_algorithms(False)
    assert T.empty(0).shape == (0,)


@pytest.mark.slow
def test_deterministic_algorithms(both):
    def scenario(T):
        log = [T.are_deterministic_algorithms_enabled(),
               T.is_deterministic_algorithms_warn_only_enabled(),
               T.get_deterministic_debug_mode(), T.empty(0).shape]
        T.use_deterministic_algorithms(True)
        log += [T.are_deterministic_algorithms_enabled(), T.get_deterministic_debug_mode()]
        for dt in (T.float32, T.float16, T.float64, T.int64, T.uint8, T.int32, T.bool,
                   T.complex64):
            log.append(_outcome(lambda dt=dt: T.empty(2, dtype=dt)))
        log += [_outcome(lambda: T.empty_like(T.ones(2))),
                _outcome(lambda: T.ones(2).new_empty(3)), _outcome(lambda: T.FloatTensor(2))]
        T.use_deterministic_algorithms(True, warn_only=True)
        log += [T.is_deterministic_algorithms_warn_only_enabled(),
                T.get_deterministic_debug_mode()]
        for fn in (lambda: T.use_deterministic_algorithms("x"),
                   lambda: T.use_deterministic_algorithms(1),
                   lambda: T.set_deterministic_debug_mode("x"),
                   lambda: T.set_deterministic_debug_mode(3),
                   lambda: T.set_deterministic_debug_mode(1.0)):
            log.append(_outcome(fn))
        T.set_deterministic_debug_mode("error")
        log += [T.are_deterministic_algorithms_enabled(),
                T.is_deterministic_algorithms_warn_only_enabled()]
        T.set_deterministic_debug_mode(0)
        log.append(T.are_deterministic_algorithms_enabled())
        return log
    both(scenario)


def test_float32_matmul_precision(both):
    def scenario(T):
        log = [T.get_float32_matmul_precision()]
        for p in ("medium", "high", "highest"):
            T.set_float32_matmul_precision(p)
            log += [T.get_float32_matmul_precision(), T.backends.cuda.matmul.allow_tf32]
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            T.set_float32_matmul_precision("bad")
        log += [[str(x.message).split(" (Triggered")[0] for x in w],
                T.get_float32_matmul_precision(),
                _outcome(lambda: T.set_float32_matmul_precision(1))]
        return log
    both(scenario)


def test_legacy_typed_constructors(both):
    def scenario(T):
        F = T.FloatTensor
        calls = [lambda: F(), lambda: F(2, 3).shape, lambda: F([1, 2]), lambda: F((2, 3)),
                 lambda: F(T.Size([2])).shape, lambda: F(numpy.array([1, 2])),
                 lambda: F(2, 3, device="cpu").shape, lambda: T.LongTensor([1.5, 2]),
                 lambda: T.IntTensor([1]), lambda: T.BoolTensor([1, 0]),
                 lambda: T.ByteTensor([1, 2]), lambda: T.HalfTensor([1, 2]),
                 lambda: T.DoubleTensor(2).dtype, lambda: T.CharTensor([1]),
                 lambda: T.ShortTensor([1]), lambda: F(T.tensor([1., 2.])),
                 lambda: F(T.tensor([1, 2])), lambda: F(2, dtype=T.float64),
                 lambda: F(-1), lambda: F("a"), lambda: F(2.5), lambda: F([[1], [2, 3]]),
                 lambda: F(2, device="cuda"), lambda: (F.dtype, F.is_cuda, F.__name__),
                 lambda: (isinstance(T.ones(2), F), isinstance(T.ones(2).double(), F),
                          isinstance(T.ones(2, dtype=T.long), T.LongTensor),
                          isinstance(F(2), T.Tensor), issubclass(F, T.Tensor)),
                 lambda: T.ones(2).type(), lambda: T.ones(2, dtype=T.long).type(F),
                 lambda: T.ones(2).type("torch.DoubleTensor"),
                 lambda: T.ones(2).type(T.float64)]
        log = [_outcome(c) for c in calls]
        t = T.ones(2)
        log.append(F(t).data_ptr() == t.data_ptr())
        return log
    both(scenario)


def test_module_device_and_dtype_moves(both):
    def scenario(T):
        nn = T.nn
        T.manual_seed(0)
        m = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2))
        log = [m.half() is m, m[0].weight.dtype, m[1].running_mean.dtype,
               m[1].num_batches_tracked.dtype, m.float()[0].weight.dtype,
               m.double()[1].running_var.dtype, m.cpu() is m, repr(nn.ReLU().cuda()),
               _outcome(m.cuda), _outcome(lambda: m.to("cuda")),
               _outcome(lambda: m.to_empty("cpu"))]
        weight = m[0].weight
        m.type(T.FloatTensor)
        log += [m[0].weight is weight, m[0].weight.dtype, m[1].num_batches_tracked.dtype]
        m.to_empty(device="cpu")
        log += [m[0].weight is weight, m[0].weight.shape, m[0].weight.requires_grad]
        m.to_empty(device="cpu", recurse=False)
        return log
    both(scenario)


def test_compile_runs_eagerly():
    model = retrograd.nn.Linear(2, 2)
    assert retrograd.compile(model) is model
    assert retrograd.compile(model, fullgraph=True, dynamic=False, backend="eager",
                             mode="max-autotune", disable=False) is model
    assert retrograd.compile(model, backend=lambda gm, inputs: gm, options={"a": 1}) is model

    @retrograd.compile
    def f(x):
        return x * 2

    @retrograd.compile(mode="reduce-overhead")
    def g(x):
        return x + 1

    x = retrograd.ones(2)
    assert f(x).tolist() == [2., 2.] and g(x).tolist() == [2., 2.]
    assert retrograd.compiler.is_compiling() is False
    assert retrograd._dynamo.is_compiling() is False
    assert retrograd.compiler.disable(f) is f
    with retrograd.compiler.disable():
        assert f(x).tolist() == [2., 2.]
    assert retrograd.compiler.reset() is None
    assert model.compile(mode="max-autotune") is None
    with pytest.raises(RuntimeError, match="Unrecognized mode=fast"):
        model.compile(mode="fast")


def test_compile_checks_its_arguments():
    """PyTorch's errors (the comparison below is slow: it imports PyTorch's compiler)."""
    def f(x):
        return x
    with pytest.raises(RuntimeError, match="Unrecognized mode=fast, should be one of: "
                                           "default, lite, reduce-overhead"):
        retrograd.compile(f, mode="fast")
    with pytest.raises(RuntimeError, match="Either mode or options can be specified"):
        retrograd.compile(f, mode="default", options={})
    with pytest.raises(AssertionError, match="A callable function is expected, but "
                                             "<class 'int'> is provided."):
        retrograd.compile(1)
    with pytest.raises(RuntimeError, match="Invalid backend: 'nonexistent', see"):
        retrograd.compile(f, backend="nonexistent")
    assert retrograd.compiler.list_backends() == ["cudagraphs", "inductor", "openxla", "tvm"]


@pytest.mark.slow
def test_compile_argument_errors(both):
    def scenario(T):
        def f(x):
            return x
        return [_outcome(lambda: T.compile(f, mode="fast")),
                _outcome(lambda: T.compile(f, mode="default", options={})),
                _outcome(lambda: T.compile(1)),
                _outcome(lambda: T.compile(f, backend="nonexistent")),
                T.compiler.list_backends(), T.compiler.is_compiling(),
                T.compiler.is_dynamo_compiling(), T.compiler.is_exporting()]
    both(scenario)


def test_inference_tensors_and_views(both):
    def scenario(T):
        with T.inference_mode():
            x = T.ones(2)
            y = x * 2
            with T.inference_mode(False):
                z = T.ones(2)
        with T.no_grad():
            w = T.ones(2)
        a = T.ones(2, 2)
        return [x.is_inference(), y.is_inference(), z.is_inference(), w.is_inference(),
                (x + 1).is_inference(), x[0].is_inference(), T.ones(1).is_inference(),
                a._is_view(), a[0]._is_view(), a.t()._is_view(), a.view(4)._is_view(),
                a.clone()._is_view(), a.detach()._is_view()]
    both(scenario)


def test_set_multithreading_enabled(both):
    def scenario(T):
        from importlib import import_module
        gm = import_module(T.__name__ + ".autograd.grad_mode")
        log = [T.autograd.is_multithreading_enabled()]
        gm.set_multithreading_enabled(False)
        log.append(T.autograd.is_multithreading_enabled())
        with gm.set_multithreading_enabled(True):
            log.append(T.autograd.is_multithreading_enabled())
        log.append(T.autograd.is_multithreading_enabled())
        gm.set_multithreading_enabled(True)
        x = T.ones(2, requires_grad=True)
        with gm.set_multithreading_enabled(False):
            (x * 3).sum().backward()
        log.append(x.grad.tolist())
        return log
    both(scenario)


def test_gradcheck_error_type(both):
    def scenario(T):
        from importlib import import_module
        GradcheckError = import_module(T.__name__ + ".autograd.gradcheck").GradcheckError

        class Wrong(T.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g * 3
        x = T.tensor([1., 2.], dtype=T.float64, requires_grad=True)
        try:
            T.autograd.gradcheck(Wrong.apply, (x,))
        except GradcheckError as e:
            return issubclass(GradcheckError, RuntimeError), str(e).splitlines()[0]
        return "no error"
    both(scenario)


def _write_nvprof(path):
    """A trace in nvprof's SQLite schema: two ranges (string ids 1, 2), the second
    launching two kernels (runtime calls inside it, correlated to kernels)."""
    db = sqlite3.connect(path)
    db.executescript("""
        CREATE TABLE StringTable (_id_ INTEGER PRIMARY KEY, value TEXT);
        CREATE TABLE CUPTI_ACTIVITY_KIND_MARKER (_id_ INTEGER PRIMARY KEY, flags INT,
            timestamp INT, id INT, objectKind INT, objectId BLOB, name INT, domain INT);
        CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (_id_ INTEGER PRIMARY KEY, cbid INT,
            start INT, end INT, processId INT, threadId INT, correlationId INT,
            returnValue INT);
        CREATE TABLE CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL (_id_ INTEGER PRIMARY KEY,
            start INT, end INT, correlationId INT, name INT);
        INSERT INTO StringTable VALUES (1, 'aten::mm'), (2, 'aten::relu'),
            (3, 'gemm_kernel'), (4, 'relu_kernel');
        INSERT INTO CUPTI_ACTIVITY_KIND_MARKER (timestamp, id, name) VALUES
            (2000, 7, 2), (2600, 7, 0), (1000, 5, 1), (1900, 5, 0);
        INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (_id_, cbid, start, end, correlationId)
            VALUES (1, 211, 1100, 1200, 40), (2, 211, 1300, 1400, 41),
                   (3, 211, 2100, 2200, 42);
        INSERT INTO CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL (start, end, correlationId, name)
            VALUES (1150, 1650, 40, 3), (1700, 1750, 41, 3), (2150, 2400, 42, 4);
    """)
    db.commit()
    db.close()


def test_load_nvprof_matches_pytorch(tmp_path, torch):
    path = str(tmp_path / "trace.nvvp")
    _write_nvprof(path)

    def summary(events):
        return [(e.id, e.name, e.thread, e.time_range.start, e.time_range.end,
                 e.cpu_time_total, [tuple(k) for k in e.kernels]) for e in events]
    ours, ref = load_nvprof(path), torch.autograd.profiler.load_nvprof(path)
    assert summary(ours) == summary(ref)
    assert summary(ours)[0][:2] == (5, "aten::mm") and len(ours[0].kernels) == 2
    assert type(ours).__name__ == "EventList"
    assert [e.key for e in ours.key_averages()] == ["aten::mm", "aten::relu"]


def test_load_nvprof_refuses_a_non_launch_call(tmp_path):
    path = str(tmp_path / "trace.nvvp")
    _write_nvprof(path)
    db = sqlite3.connect(path)
    db.execute("UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET cbid = 13 WHERE _id_ = 3")
    db.commit()
    db.close()
    with pytest.raises(AssertionError, match="Expected cbid to be 211, but got 13"):
        load_nvprof(path)


def test_function_event_lives_in_profiler_util():
    from retrograd.autograd.profiler_util import EventList, FunctionEvent
    assert retrograd.autograd.profiler.FunctionEvent is FunctionEvent
    with retrograd.autograd.profiler.profile() as prof:
        retrograd.ones(2).sum()
    assert isinstance(prof.function_events, EventList)
    assert all(isinstance(e, FunctionEvent) and e.kernels == [] for e in prof.function_events)


def test_inference_marks_are_per_thread():
    """A thread inside inference_mode marks only its own tensors."""
    import threading
    inside, entered, release = [], threading.Event(), threading.Event()

    def worker():
        with retrograd.inference_mode():
            entered.set()
            release.wait(5)
            inside.append(retrograd.ones(1).is_inference())
    th = threading.Thread(target=worker)
    th.start()
    entered.wait(5)
    outside = retrograd.ones(1).is_inference()
    release.set()
    th.join()
    assert (inside, outside) == ([True], False)
