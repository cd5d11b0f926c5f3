"""The CuPy-shaped emulator and device "cuda" on it: CuPy's refusals, PyTorch's device
semantics (moves, errors, printing), and the op database run on the device.
"""

import operator

import numpy
import pytest

import retrograd
from retrograd import backend
from retrograd.backend import emulated
from device.emulated_run import HOST_BY_DESIGN, _twice, emulating, low_precision, outcome
from device.not_on_device import NOT_ON_DEVICE, NOT_TWICE_ON_DEVICE
from opdb import op_db

xp = emulated.namespace


@pytest.fixture
def cuda():
    with emulating():
        yield


def test_arrays_refuse_implicit_conversion_to_numpy():
    a = xp.arange(3.0)
    with pytest.raises(TypeError, match=r"Implicit conversion to a NumPy array is not "
                                        r"allowed\. Please use `\.get\(\)`"):
        numpy.asarray(a)
    assert isinstance(a.get(), numpy.ndarray) and a.get().tolist() == [0.0, 1.0, 2.0]


def test_functions_refuse_host_arrays_and_other_devices():
    a = xp.ones(2)
    with pytest.raises(TypeError, match="Unsupported type <class 'numpy.ndarray'>"):
        xp.add(a, numpy.ones(2))
    with emulated.Device(1):
        b = xp.ones(2)
    assert b.device.id == 1 and a.device.id == 0
    with pytest.raises(ValueError, match=r"resides \(1\) is different from the current "
                                         r"device \(0\)"):
        xp.add(a, b)


def test_host_arrays_enter_only_through_explicit_copies_and_indices():
    a = xp.asarray(numpy.arange(4.0))
    assert type(a) is emulated.ndarray
    assert a[numpy.array([3, 1])].tolist() == [3.0, 1.0]


def test_reductions_return_0d_arrays_and_numpy_calls_dispatch():
    a = xp.arange(4.0)
    s = xp.sum(a)
    assert type(s) is emulated.ndarray and s.shape == ()
    r = numpy.sum(a)  # __array_function__, as on CuPy
    assert type(r) is emulated.ndarray and float(r) == 6.0
    e = numpy.exp(a)  # __array_ufunc__
    assert type(e) is emulated.ndarray


def test_namespace_has_only_cupy_names():
    from retrograd.backend import _cupy_names
    names = {n for n in vars(xp) if not n.startswith("_")}
    assert names <= _cupy_names.MODULE | {"ndarray", "asnumpy", "linalg", "fft", "cuda", "lib",
                                          "get_default_memory_pool"}
    for missing in _cupy_names.NOT_PROVIDED & set(dir(numpy)):
        assert not hasattr(xp, missing), missing
    with pytest.raises(TypeError, match="no implementation found for 'numpy.insert'"):
        numpy.insert(xp.arange(3), 0, 1)  # a NumPy function CuPy lacks


def test_cupys_limits_on_ufunc_methods_and_keywords():
    a = xp.zeros(3)
    xp.add.at(a, numpy.array([0, 0, 2]), xp.ones(3))
    assert a.tolist() == [2.0, 0.0, 1.0]
    with pytest.raises(NotImplementedError, match="cupy_multiply.at"):
        xp.multiply.at(a, numpy.array([0]), xp.ones(1))
    with pytest.raises(NotImplementedError, match="cupy_maximum.reduce"):
        xp.maximum.reduce(a)
    with pytest.raises(TypeError, match="where"):
        xp.add(a, a, where=a > 0)
    with pytest.raises(TypeError, match="unexpected keyword argument 'initial'"):
        xp.sum(a, initial=1.0)


def test_arrays_have_cupys_flags_method_keywords_and_protocols_only():
    a = xp.zeros((2, 3)) + xp.arange(3)
    assert a.flags.c_contiguous and a.flags.owndata and not a.T.flags.c_contiguous
    for flag in ("writeable", "contiguous"):  # NumPy's, not CuPy's
        with pytest.raises(AttributeError, match=flag):
            getattr(a.flags, flag)
    with pytest.raises(TypeError, match="unexpected keyword argument 'initial'"):
        a.max(initial=0)
    with pytest.raises(TypeError, match="unexpected keyword argument 'where'"):
        a.sum(where=a > 1)
    assert int(a.sum(axis=None, keepdims=False)) == 6
    with pytest.raises(TypeError):
        operator.index(xp.asarray(2))


def test_tensors_move_between_devices_with_gradients(cuda):
    w = retrograd.randn(3, 4, requires_grad=True)
    wc = w.to("cuda")
    assert wc.device == retrograd.device("cuda", 0) and wc.is_cuda
    assert wc.grad_fn.name() == "ToCopyBackward0"
    out = (wc @ retrograd.ones(4, 2, device="cuda")).relu().sum()
    assert out.device.type == "cuda"
    out.backward()
    assert w.grad.device.type == "cpu"
    w2 = w.detach().clone().requires_grad_(True)  # the same step on the CPU
    (w2 @ retrograd.ones(4, 2)).relu().sum().backward()
    assert numpy.array_equal(w.grad.numpy(), w2.grad.numpy())


def test_device_errors_are_pytorchs(cuda):
    x = retrograd.ones(3, device="cuda")
    with pytest.raises(RuntimeError, match=r"^Expected all tensors to be on the same device, "
                                           r"but found at least two devices, cuda:0 and cpu!$"):
        x + retrograd.ones(3)
    with pytest.raises(RuntimeError, match="cuda:1 and cuda:0!"):
        retrograd.ones(2, device="cuda:1") + retrograd.ones(2, device="cuda:0")
    with pytest.raises(TypeError, match=r"^can't convert cuda:0 device type tensor to numpy\. "
                                        r"Use Tensor\.cpu\(\) to copy the tensor to host "
                                        r"memory first\.$"):
        x.numpy()
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        retrograd.ones(1, device="cuda:2")


def test_cpu_scalars_join_the_device(cuda):
    x = retrograd.ones(3, device="cuda")
    assert (x + retrograd.tensor(2.0)).device.type == "cuda"
    assert (retrograd.tensor(2.0) * x).device.type == "cuda"


def test_printing_and_host_copies(cuda):
    x = retrograd.tensor([1.0, 2.0], device="cuda", requires_grad=True)
    assert repr(x) == "tensor([1., 2.], device='cuda:0', requires_grad=True)"
    assert x.tolist() == [1.0, 2.0] and x[1].item() == 2.0
    assert x.cpu().device.type == "cpu" and x.cpu().cpu() is not None
    assert x.detach().numpy(force=True).tolist() == [1.0, 2.0]


@pytest.mark.skipif(retrograd.cuda.is_available(), reason="a GPU is present")
def test_without_emulation_cuda_is_absent():
    assert not backend.emulating_cuda()
    with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
        retrograd.ones(1, device="cuda")


@pytest.mark.parametrize("op", [pytest.param(op, id=op.id) for op in op_db])
def test_op_database_on_the_device(op):
    """Every entry runs alike on the CPU and the emulated device (values, devices and
    gradients), except the listed ones, which must still fail (so the list shrinks)."""
    if op.id in HOST_BY_DESIGN:
        pytest.skip(HOST_BY_DESIGN[op.id])
    got = outcome(op)
    if op.id in NOT_ON_DEVICE:
        assert got is not None, (f"{op.id} now runs on the device: delete its entry from "
                                 f"tests/device/not_on_device.py")
        return
    assert got is None, got


@pytest.mark.parametrize("op", [pytest.param(op, id=op.id) for op in op_db
                                if op.supports_grad and op.supports_gradgrad])
def test_op_database_second_order_on_the_device(op):
    """Gradients taken with create_graph=True (the rules on the facade's device Tensors)
    and differentiated again agree on the two devices, except the listed entries."""
    if op.id in HOST_BY_DESIGN or op.id in NOT_ON_DEVICE:
        pytest.skip("runs on the host, or not yet on the device")
    got = outcome(op, 2)
    if op.id in NOT_TWICE_ON_DEVICE:
        assert got is not None, (f"{op.id} now runs twice on the device: delete its entry "
                                 f"from tests/device/not_on_device.py")
        return
    assert got is None, got


@pytest.mark.parametrize("fn", [lambda x: retrograd.nn.functional.dropout(x, 0.3),
                                lambda x: retrograd.nn.functional.dropout2d(x, 0.3),
                                lambda x: retrograd.nn.functional.alpha_dropout(x, 0.3, True)])
def test_dropout_masks_the_device_tensor_as_the_host_one(cuda, fn):
    """The mask is drawn on the host from the same generator, then moved: the same seed
    drops the same elements on both devices, and the gradient stays on the device."""
    x = retrograd.randn(2, 3, 4, 4)
    retrograd.manual_seed(5)
    host = fn(x)
    retrograd.manual_seed(5)
    xd = x.cuda().requires_grad_()
    dev = fn(xd)
    dev.sum().backward()
    assert dev.device.type == "cuda" and xd.grad.device.type == "cuda"
    numpy.testing.assert_array_equal(dev.detach().cpu().numpy(), host.numpy())


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("op", [pytest.param(op, id=op.id) for op in op_db if low_precision(op)])
def test_op_database_in_half_precision_on_the_device(op, dtype):
    """The entries PyTorch runs in float32, on half-precision samples: forward, gradients
    and (twice-differentiable entries) second order alike on the CPU and the device, the
    float32 compute and the rounding included. None is listed as failing."""
    if op.id in HOST_BY_DESIGN:
        pytest.skip(HOST_BY_DESIGN[op.id])
    assert outcome(op, 1, dtype) is None
    if _twice(op):
        assert outcome(op, 2, dtype) is None
