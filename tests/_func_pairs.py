"""The same random inputs in retrograd and PyTorch, and a deep comparison of the two
libraries' results (tuples, lists, dicts of tensors), for the torch.func tests."""

import numpy
import pytest

import retrograd

torch = pytest.importorskip("torch")


def pair(*shape, seed=0):
    a = numpy.random.default_rng(seed).standard_normal(shape)
    return retrograd.from_numpy(a.copy()), torch.from_numpy(a.copy())




def close(r, t, atol=1e-10):
    """``r`` (retrograd's) has ``t``'s structure, container types, shapes and values."""
    if isinstance(t, (tuple, list)):
        assert type(r) is type(t) and len(r) == len(t), (type(r), type(t))
        for a, b in zip(r, t, strict=True):
            close(a, b, atol)
    elif isinstance(t, dict):
        assert list(r) == list(t)
        for k in t:
            close(r[k], t[k], atol)
    else:
        assert isinstance(r, retrograd.Tensor)
        assert tuple(r.shape) == tuple(t.shape), (tuple(r.shape), tuple(t.shape))
        numpy.testing.assert_allclose(r.detach().numpy(), t.detach().numpy(), atol=atol)
