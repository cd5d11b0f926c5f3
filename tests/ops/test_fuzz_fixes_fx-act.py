"""Differential-fuzz mismatches on activations, softmax, round and a few unary ops,
checked against PyTorch: dtype errors, empty inputs, special-value gradients."""

import numpy
import pytest

import retrograd

pytestmark = pytest.mark.torch

_INTS = ("bool", "uint8", "int8", "int32", "int64")


def _outcome(lib, fn):
    """``fn(lib)``'s result as (dtype name, values), or its exception's (type, message)."""
    try:
        out = fn(lib)
    except Exception as e:  # noqa: BLE001 - the exception is the outcome compared
        return type(e).__name__, str(e)
    return str(out.dtype).split(".")[-1], out.detach().numpy().tolist()


def _same(torch, fn):
    ours, theirs = _outcome(retrograd, fn), _outcome(torch, fn)
    assert ours == theirs


@pytest.mark.parametrize("dtype", _INTS)
@pytest.mark.parametrize("call", [
    lambda lib, x: lib.nn.functional.silu(x),
    lambda lib, x: lib.nn.functional.silu(x, inplace=True),
    lambda lib, x: lib.nn.functional.gelu(x),
    lambda lib, x: lib.nn.functional.gelu(x, approximate="tanh"),
    lambda lib, x: lib.nn.functional.gelu(x, approximate="bad"),
], ids=["silu", "silu_", "gelu", "gelu_tanh", "gelu_bad"])
def test_silu_gelu_refuse_integer_and_bool(torch, dtype, call):
    _same(torch, lambda lib: call(lib, lib.tensor([[1, 0], [2, 3]]).to(getattr(lib, dtype))))


@pytest.mark.parametrize("dtype", _INTS + ("float32",))
@pytest.mark.parametrize("shape,dim", [((0,), 0), ((0, 3), 1), ((3, 0), 0), ((2, 0, 3), -1)])
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_of_empty_input_any_dtype(torch, dtype, shape, dim, name):
    """An empty input never reaches PyTorch's kernel: any dtype gives an empty copy."""
    _same(torch, lambda lib: getattr(lib.nn.functional, name)(
        lib.zeros(shape, dtype=getattr(lib, dtype)), dim))
    _same(torch, lambda lib: getattr(lib, name)(lib.zeros(shape, dtype=getattr(lib, dtype)),
                                                dim))


@pytest.mark.parametrize("dim", [0, 1])
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_of_nonempty_integer_input_still_refused(torch, dim, name):
    _same(torch, lambda lib: getattr(lib.nn.functional, name)(
        lib.ones((2, 3), dtype=lib.int64), dim))


@pytest.mark.parametrize("dtype", _INTS + ("float32", "float16"))
@pytest.mark.parametrize("kw", [{}, {"decimals": 0}, {"decimals": 1}, {"decimals": -1}],
                         ids=["plain", "d0", "d1", "d-1"])
@pytest.mark.parametrize("shape", [(2, 3), (0,)])
def test_round_overloads(torch, dtype, kw, shape):
    """``decimals``, even 0, picks PyTorch's decimals overload: floating kernels only."""
    def run(lib):
        x = lib.arange(6).reshape(2, 3) * 7 - 20 if shape == (2, 3) else lib.zeros(0)
        return lib.round(x.to(getattr(lib, dtype)), **kw)
    _same(torch, run)

    def run_(lib):
        x = lib.arange(6).reshape(2, 3) * 7 - 20 if shape == (2, 3) else lib.zeros(0)
        return x.to(getattr(lib, dtype)).round_(**kw)
    _same(torch, run_)


@pytest.mark.parametrize("kw", [{}, {"decimals": 0}, {"decimals": 2}])
def test_round_node(torch, kw):
    def node(lib):
        x = lib.tensor([0.25, -1.5], requires_grad=True)
        return type(lib.round(x, **kw).grad_fn).__name__
    assert node(retrograd) == node(torch)

