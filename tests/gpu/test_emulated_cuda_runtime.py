"""``retrograd.cuda``'s runtime calls on the emulated devices (two GPUs that run each kernel
when it is queued): streams and events, ``synchronize``, device properties, free memory
and the generator's state answer as ``torch.cuda`` does on a machine with two GPUs, with
PyTorch's names, signatures, return types, printed forms and errors."""

import inspect
import re

import pytest

import retrograd

cuda = retrograd.cuda


pytestmark = pytest.mark.usefixtures("emulated_cuda")


@pytest.mark.parametrize("name", ["synchronize", "get_device_properties", "mem_get_info",
                                  "initial_seed", "get_rng_state", "set_rng_state",
                                  "get_rng_state_all", "set_rng_state_all", "current_stream",
                                  "default_stream", "set_stream", "stream", "ipc_collect"])
def test_signatures_are_torchs(torch, name):
    def params(f):
        return [(p.name, p.default) for p in inspect.signature(f).parameters.values()]
    assert params(getattr(cuda, name)) == params(getattr(torch.cuda, name))


def test_stream_and_event_signatures_are_torchs(torch):
    def params(f, skip):
        return [p.name for p in inspect.signature(f).parameters.values()
                if p.name not in skip and p.kind is not p.VAR_KEYWORD]
    assert params(cuda.Stream, ("_stream",)) == params(torch.cuda.Stream.__new__, ("cls",))
    assert params(cuda.Event, ()) == params(torch.cuda.Event.__new__, ("cls",))


def test_streams_belong_to_a_device_and_print_as_torchs():
    s = cuda.Stream()
    assert s.device == retrograd.device("cuda", 0) and s.device_index == 0
    assert cuda.Stream(device=-1).device_index == 0
    s1 = cuda.Stream(device="cuda:1", priority=-1)
    assert s1.device == retrograd.device("cuda", 1) and s1.priority == -1
    assert re.fullmatch(r"<torch\.cuda\.Stream device=cuda:1 cuda_stream=0x[0-9a-f]+>", repr(s1))
    assert s != s1 and s1 == s1 and len({s, s1, s}) == 2 and s1.cuda_stream != 0
    assert s1.query() is True
    s1.synchronize()
    d = cuda.default_stream(1)
    assert d.cuda_stream == 0 and d.device_index == 1
    assert cuda.current_stream() == cuda.default_stream() and cuda.current_stream(1) == d


def test_stream_context_on_either_device_restores_both():
    s0, s1 = cuda.Stream(0), cuda.Stream(1)
    with cuda.stream(s0) as entered:
        assert entered is None  # (PyTorch's __enter__ returns nothing)
        assert cuda.current_stream() == s0 and cuda.current_stream(1) == cuda.default_stream(1)
        with cuda.stream(s1):  # another device's stream: current there, device unchanged
            assert cuda.current_device() == 0
            assert cuda.current_stream(1) == s1 and cuda.current_stream(0) == s0
            x = retrograd.ones(3, device="cuda:1") * 2  # queued on s1, done when queued
        assert cuda.current_stream(1) == cuda.default_stream(1)
    assert cuda.current_stream() == cuda.default_stream()
    assert x.cpu().tolist() == [2.0, 2.0, 2.0]
    with cuda.stream(None):
        assert cuda.current_stream() == cuda.default_stream()
    cuda.set_stream(s1)
    assert cuda.current_stream(1) == s1 and cuda.current_device() == 0
    cuda.set_stream(cuda.default_stream(1))
    retrograd.accelerator.set_stream(s0)
    assert retrograd.accelerator.current_stream() == s0
    cuda.set_stream(cuda.default_stream(0))


def test_streams_wait_for_each_other_and_events():
    s0, s1 = cuda.Stream(0), cuda.Stream(1)
    e = s0.record_event()
    assert isinstance(e, cuda.Event) and e.query()
    s1.wait_event(e)  # (across devices, as CUDA allows)
    s0.wait_stream(s1)
    cuda.Event().wait(s1)  # never recorded: nothing to wait for
    e.wait()
    e.synchronize()


def test_events_are_made_on_the_recording_streams_device():
    e = cuda.Event()
    assert repr(e) == "<torch.cuda.Event uninitialized>" and e.query() and e.cuda_event == 0
    e.synchronize()
    e.record(cuda.Stream(1))
    assert re.fullmatch(r"<torch\.cuda\.Event 0x[0-9a-f]+>", repr(e)) and e.cuda_event != 0
    e.record(cuda.default_stream(1))
    with pytest.raises(RuntimeError, match=r"^Event device 1 does not match recording "
                                           r"stream's device 0\.$"):
        e.record()


def test_event_timing_and_its_errors():
    start, end = cuda.Event(enable_timing=True), cuda.Event(enable_timing=True)
    with pytest.raises(ValueError, match="Both events must be recorded before calculating"):
        start.elapsed_time(end)
    start.record()
    (retrograd.ones(64, 64, device="cuda") @ retrograd.ones(64, 64, device="cuda")).sum()
    end.record()
    ms = start.elapsed_time(end)
    assert isinstance(ms, float) and ms >= 0
    plain = cuda.Event()
    plain.record()
    with pytest.raises(ValueError, match=r"^Both events must be created with argument "
                                         r"'enable_timing=True'\.$"):
        start.elapsed_time(plain)


def test_synchronize_each_device():
    assert cuda.synchronize() is None and cuda.synchronize(1) is None
    cuda.synchronize("cuda:1")
    assert cuda.current_device() == 0
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        cuda.synchronize(2)
    retrograd.accelerator.synchronize()


def test_device_properties_have_torchs_fields_and_printed_form():
    p = cuda.get_device_properties(1)
    assert type(p).__name__ == "_CudaDeviceProperties"
    for field in ("name", "major", "minor", "multi_processor_count", "total_memory",
                  "is_integrated", "is_multi_gpu_board", "max_threads_per_multi_processor",
                  "gcnArchName", "warp_size", "uuid", "L2_cache_size", "clock_rate",
                  "memory_clock_rate", "memory_bus_width", "shared_memory_per_block",
                  "shared_memory_per_multiprocessor", "regs_per_multiprocessor",
                  "pci_bus_id", "pci_device_id", "pci_domain_id"):
        assert hasattr(p, field), field
    assert isinstance(p.name, str) and isinstance(p.total_memory, int)
    assert re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
                        str(p.uuid)) and len(p.uuid.bytes) == 16
    assert str(p.uuid) != str(cuda.get_device_properties(0).uuid)  # two devices
    assert repr(p) == (
        f"_CudaDeviceProperties(name='{p.name}', major={p.major}, minor={p.minor}, "
        f"total_memory={p.total_memory // 2**20}MB, multi_processor_count="
        f"{p.multi_processor_count}, uuid={p.uuid}, pci_bus_id={p.pci_bus_id}, "
        f"pci_device_id={p.pci_device_id}, pci_domain_id={p.pci_domain_id}, "
        f"L2_cache_size={p.L2_cache_size // 2**20}MB)")
    assert cuda.get_device_name(1) == p.name
    assert cuda.get_device_capability("cuda:1") == (p.major, p.minor)
    assert cuda.get_device_properties() .name == p.name  # the current device's
    with pytest.raises(AssertionError, match="^Invalid device id$"):
        cuda.get_device_properties(2)
    assert cuda.is_bf16_supported() and cuda.get_arch_list() == [f"sm_{p.major}{p.minor}"]


def test_mem_get_info_reads_the_named_devices_pool():
    total = cuda.get_device_properties(1).total_memory
    cuda.empty_cache()
    free1, total1 = cuda.mem_get_info(1)
    free0 = cuda.mem_get_info(0)[0]
    assert isinstance(free1, int) and total1 == total and 0 < free1 <= total
    x = retrograd.empty(2**18, device="cuda:1")  # 1 MiB on device 1
    assert cuda.mem_get_info("cuda:1")[0] <= free1 - 2**20
    assert cuda.mem_get_info(0)[0] == free0 and cuda.mem_get_info()[0] == free0
    del x
    assert cuda.mem_get_info(1)[0] <= free1 - 2**20  # the pool keeps the freed block
    cuda.empty_cache()  # hands every device's cached blocks back
    assert cuda.mem_get_info(1)[0] == free1
    assert retrograd.accelerator.get_memory_info(1) == cuda.mem_get_info(1)


def test_generator_state_round_trips():
    assert cuda.initial_seed() == retrograd.initial_seed()
    state = cuda.get_rng_state()
    assert state.dtype == retrograd.uint8 and state.device == retrograd.device("cpu")
    a = retrograd.rand(4, device="cuda")
    cuda.set_rng_state(state)
    assert retrograd.equal(retrograd.rand(4, device="cuda"), a)
    states = cuda.get_rng_state_all()
    assert len(states) == 2
    cuda.set_rng_state_all(states)
    cuda.manual_seed(3)
    assert cuda.initial_seed() == 3
    cuda.ipc_collect()
