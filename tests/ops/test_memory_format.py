"""torch.memory_format against PyTorch: channels_last (and channels_last_3d) copies through
contiguous, clone and to (strides, nodes, values, gradients), is_contiguous in each
format, layouts kept by elementwise ops, Module.to, and PyTorch's refusals."""

import numpy
import pytest

import retrograd

pytestmark = pytest.mark.torch

A = numpy.random.default_rng(0).standard_normal((2, 3, 4, 5))
CL = "x.contiguous(memory_format=T.channels_last)"
CASES = [
    CL, f"{CL}.is_contiguous()",
    f"{CL}.is_contiguous(memory_format=T.channels_last)", f"{CL}.contiguous()",
    "x.clone(memory_format=T.channels_last)", f"{CL}.clone()",
    f"{CL}.clone(memory_format=T.contiguous_format)", "x.to(memory_format=T.channels_last)",
    "x.to(T.float32, memory_format=T.channels_last)",
    f"{CL}.to(memory_format=T.contiguous_format)", "x[0].contiguous(memory_format=T.channels_last)",
    "x.is_contiguous(memory_format=T.preserve_format)",
    "x.contiguous(memory_format=T.preserve_format)",
    "x.contiguous(memory_format='a')", "x[0].to(memory_format=T.channels_last)",
    "x[0].clone(memory_format=T.channels_last_3d)",
    "T.ones(1, 3, 1, 1).is_contiguous(memory_format=T.channels_last)",
    "repr(T.channels_last)", "repr(T.contiguous_format)", "repr(T.preserve_format)",
    "T.ones(2, 3, 4, 5, 6).contiguous(memory_format=T.channels_last_3d).stride()",
    f"{CL}.relu().stride()", f"({CL} * 2 + 1).stride()",
]


def _run(T, expr):
    x = T.from_numpy(A.copy()).requires_grad_()
    try:
        y = eval(expr, {"T": T, "x": x})
    except (RuntimeError, TypeError) as e:
        return type(e).__name__, str(e).split("\n")[0]
    if not hasattr(y, "stride"):
        return y
    weights = T.arange(y.numel(), dtype=y.dtype).reshape(y.shape)
    (g,) = T.autograd.grad((y * weights).sum(), x)
    return (tuple(y.stride()), type(y.grad_fn).__name__ if y.grad_fn else None,
            y.detach().numpy().tolist(), g.numpy().tolist())


@pytest.mark.parametrize("expr", CASES)
def test_matches_torch(torch, expr):
    assert _run(retrograd, expr) == _run(torch, expr)


def test_a_channels_last_copy_is_returned_as_is():
    x = retrograd.ones(2, 3, 4, 5).contiguous(memory_format=retrograd.channels_last)
    assert x.contiguous(memory_format=retrograd.channels_last) is x
    assert x.to(memory_format=retrograd.channels_last) is x


@pytest.mark.parametrize("fmt", ["channels_last", "contiguous_format"])
def test_module_to_lays_out_its_4d_tensors(torch, fmt):
    strides = []
    for T in (torch, retrograd):
        m = T.nn.Sequential(T.nn.Conv2d(3, 4, 3), T.nn.BatchNorm2d(4)).to(
            memory_format=getattr(T, fmt))
        strides.append([tuple(t.stride()) for t in m.state_dict().values()])
    assert strides[0] == strides[1]
