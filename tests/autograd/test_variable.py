"""The deprecated Variable API of the autograd reference: it returns Tensors."""

import pytest

import retrograd
from retrograd.autograd import Variable


@pytest.mark.torch
@pytest.mark.parametrize("requires_grad", [False, True])
def test_variable_returns_an_aliasing_tensor_like_torch(requires_grad):
    torch = pytest.importorskip("torch")
    for lib, var in ((retrograd, Variable), (torch, torch.autograd.Variable)):
        t = lib.ones(2)
        v = var(t, requires_grad=requires_grad)
        assert v is not t and isinstance(v, var) and isinstance(v, lib.Tensor)
        assert v.requires_grad is requires_grad and not t.requires_grad
        assert v.data_ptr() == t.data_ptr()


def test_variable_rejects_non_tensors():
    with pytest.raises(TypeError, match="Variable data has to be a tensor"):
        Variable([1.0, 2.0])
