"""nn's initializers, nn.utils.rnn's packing and padding, gradient clipping, a state_dict
loaded from the CPU and the recurrent modules' default hidden state, on device "cuda"
(the CuPy-shaped emulator, whose arrays refuse implicit conversion to NumPy): results on
the device, equal to the CPU's (float64)."""

import numpy
import pytest
from device.emulated_run import emulating

import retrograd
import retrograd.nn as nn
from retrograd.nn.utils import rnn

INITS = [("uniform_", ()), ("normal_", ()), ("eye_", ()), ("xavier_uniform_", ()),
         ("xavier_normal_", ()), ("kaiming_uniform_", ()), ("kaiming_normal_", ()),
         ("trunc_normal_", ()), ("orthogonal_", ()), ("orthogonal_", (0.5,)),
         ("constant_", (2.5,)), ("zeros_", ()), ("ones_", ())]


def _host(t):
    return t.detach().cpu().numpy()


def _equal(dev, cpu):
    assert dev.device.type == "cuda"
    numpy.testing.assert_allclose(_host(dev), _host(cpu), rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize(("name", "args"), INITS, ids=[f"{n}{a}" for n, a in INITS])
@pytest.mark.parametrize("shape", [(4, 3), (3, 5)])
def test_initializers_fill_device_tensors_as_cpu_ones(name, args, shape):
    """The same generator state draws the same values on either device."""
    def run(device):
        t = retrograd.empty(*shape, dtype=retrograd.float64, device=device)
        getattr(nn.init, name)(t, *args, **({} if name in ("constant_", "zeros_", "ones_",
                                                           "eye_")
                                            else {"generator": retrograd.Generator()
                                                  .manual_seed(3)}))
        return t
    cpu = run("cpu")
    with emulating():
        _equal(run("cuda"), cpu)


def _sequences(device, lengths=(2, 4, 1)):
    rng = numpy.random.default_rng(5)
    return [retrograd.tensor(rng.standard_normal((n, 3)), device=device, requires_grad=True)
            for n in lengths]


def _grads(seqs):
    return [s.grad for s in seqs]


def _pad_and_pack(device, batch_first, padding_side):
    """Every function of nn.utils.rnn once, with the gradients of a weighted sum of
    what they return."""
    seqs = _sequences(device)
    padded = rnn.pad_sequence(seqs, batch_first=batch_first, padding_value=-1.0,
                              padding_side=padding_side)
    packed = rnn.pack_sequence(seqs, enforce_sorted=False)
    unpacked, lengths = rnn.pad_packed_sequence(packed, batch_first=batch_first,
                                                total_length=5)
    lens = [len(s) for s in seqs]
    repacked = rnn.pack_padded_sequence(unpacked, lens, batch_first=batch_first,
                                        enforce_sorted=False)
    tensor_lens = rnn.pack_padded_sequence(
        unpacked, retrograd.tensor(lens), batch_first=batch_first, enforce_sorted=False)
    out = [padded, packed.data, unpacked, repacked.data, tensor_lens.data,
           packed.sorted_indices, packed.unsorted_indices,
           rnn.invert_permutation(packed.sorted_indices)]
    out += rnn.unpack_sequence(repacked)
    if padding_side == "right":
        out += rnn.unpad_sequence(padded, lengths, batch_first=batch_first)
    loss = sum(((o * (k + 1)).sum() for k, o in enumerate(out) if o.is_floating_point()),
               start=0.0)
    loss.backward()
    return out, (packed.batch_sizes, lengths), _grads(seqs)


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("padding_side", ["right", "left"])
def test_rnn_utils_on_device_equal_the_cpus(batch_first, padding_side):
    cpu, cpu_sizes, cpu_grads = _pad_and_pack("cpu", batch_first, padding_side)
    with emulating():
        dev, dev_sizes, dev_grads = _pad_and_pack("cuda", batch_first, padding_side)
        assert len(dev) == len(cpu)
        for d, c in zip(dev, cpu, strict=True):
            assert d.dtype == c.dtype
            _equal(d, c)
        for d, c in zip(dev_sizes, cpu_sizes, strict=True):
            assert d.device.type == "cpu"  # (PyTorch's: batch sizes and lengths there)
            assert d.tolist() == c.tolist()
        for d, c in zip(dev_grads, cpu_grads, strict=True):
            _equal(d, c)


def _clipped(device, norm_type):
    params = _sequences(device, lengths=(3, 1, 4))
    for k, p in enumerate(params):
        p.grad = p.detach() * (k - 1.5)
    total = nn.utils.get_total_norm([p.grad for p in params], norm_type)
    nn.utils.clip_grads_with_norm_(params, 0.5, total)
    norm = nn.utils.clip_grad_norm_(params, 0.25, norm_type)
    nn.utils.clip_grad_value_(params, 0.05)
    return [total, norm] + _grads(params)


@pytest.mark.parametrize("norm_type", [2.0, 1.0, float("inf"), 3.0])
def test_gradient_clipping_on_device_equals_the_cpus(norm_type):
    cpu = _clipped("cpu", norm_type)
    with emulating():
        for d, c in zip(_clipped("cuda", norm_type), cpu, strict=True):
            _equal(d, c)


@pytest.mark.parametrize("assign", [False, True])
def test_cpu_state_dict_loads_into_a_device_module(assign):
    retrograd.manual_seed(0)
    source = nn.Linear(3, 2).double()
    with emulating():
        model = nn.Linear(3, 2).double().to("cuda")
        model.load_state_dict(source.state_dict(), assign=assign)
        expected = "cpu" if assign else "cuda"  # (assign: the given tensors' device)
        for (_, d), (_, c) in zip(model.state_dict().items(), source.state_dict().items(),
                                  strict=True):
            assert d.device.type == expected
            numpy.testing.assert_array_equal(_host(d), _host(c))


@pytest.mark.parametrize("name", ["RNN", "LSTM", "GRU", "RNNCell", "LSTMCell", "GRUCell"])
def test_recurrent_modules_start_from_zeros_on_the_inputs_device(name):
    def run(device):
        retrograd.manual_seed(1)
        module = getattr(nn, name)(3, 4).double().to(device)
        x = retrograd.tensor(numpy.random.default_rng(2).standard_normal((5, 2, 3)),
                             device=device)
        if name.endswith("Cell"):
            out = module(x[0])
            return list(out) if isinstance(out, tuple) else [out]
        packed = rnn.pack_sequence([x[:, 0], x[:3, 1]])
        return [module(x)[0], module(packed)[0].data]
    cpu = run("cpu")
    with emulating():
        for d, c in zip(run("cuda"), cpu, strict=True):
            _equal(d, c)


MODULES = {
    "Linear": lambda **kw: nn.Linear(3, 4, **kw),
    "Bilinear": lambda **kw: nn.Bilinear(3, 2, 4, **kw),
    "Conv2d": lambda **kw: nn.Conv2d(3, 4, 3, **kw),
    "ConvTranspose1d": lambda **kw: nn.ConvTranspose1d(3, 4, 3, **kw),
    "BatchNorm1d": lambda **kw: nn.BatchNorm1d(3, **kw),
    "InstanceNorm2d": lambda **kw: nn.InstanceNorm2d(3, affine=True, track_running_stats=True,
                                                     **kw),
    "LayerNorm": lambda **kw: nn.LayerNorm((2, 3), **kw),
    "GroupNorm": lambda **kw: nn.GroupNorm(1, 3, **kw),
    "RMSNorm": lambda **kw: nn.RMSNorm(3, **kw),
    "PReLU": lambda **kw: nn.PReLU(3, **kw),
    "Embedding": lambda **kw: nn.Embedding(5, 3, **kw),
    "MultiheadAttention": lambda **kw: nn.MultiheadAttention(4, 2, kdim=3, vdim=5,
                                                             add_bias_kv=True, **kw),
    "LSTM": lambda **kw: nn.LSTM(3, 4, num_layers=2, **kw),
    "GRUCell": lambda **kw: nn.GRUCell(3, 4, **kw),
    "Transformer": lambda **kw: nn.Transformer(4, 2, 1, 1, 8, **kw),
}


@pytest.mark.parametrize("name", MODULES)
def test_module_constructors_honour_device(name):
    """``device=`` places every parameter and buffer on that device, as PyTorch's factory
    kwargs do, with the values the same seed gives on the CPU (drawn on the host)."""
    def build(**kw):
        retrograd.manual_seed(0)
        return dict(MODULES[name](dtype=retrograd.float64, **kw).state_dict())
    cpu = build()
    with emulating():
        dev = build(device="cuda")
        assert dev.keys() == cpu.keys()
        for k, t in dev.items():
            if t.dtype.is_floating_point:
                _equal(t, cpu[k])
            else:
                assert t.device.type == "cuda", k
                assert t.item() == cpu[k].item(), k


def test_square_subsequent_mask_on_device():
    with emulating():
        m = nn.Transformer.generate_square_subsequent_mask(3, device="cuda")
        assert m.device.type == "cuda"
        numpy.testing.assert_array_equal(
            _host(m), _host(nn.Transformer.generate_square_subsequent_mask(3)))
