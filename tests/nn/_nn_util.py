"""Helpers for comparing retrograd's nn with PyTorch's on the same values."""

import numpy

import retrograd


def pair(*shape, low=-2.0, high=2.0, dtype="float64", requires_grad=True, seed=0):
    """The same random values as a retrograd tensor and a torch tensor."""
    import torch
    a = numpy.random.default_rng(seed).uniform(low, high, shape).astype(dtype)
    r = retrograd.from_numpy(a.copy()).requires_grad_(requires_grad)
    t = torch.from_numpy(a.copy()).requires_grad_(requires_grad)
    return r, t


def to_numpy(x):
    if isinstance(x, retrograd.Tensor):
        return x.detach().numpy()
    return x.detach().numpy()


def assert_close(r, t, atol=1e-6, rtol=1e-5):
    numpy.testing.assert_allclose(to_numpy(r), to_numpy(t), atol=atol, rtol=rtol)


def copy_weights(torch_module, module):
    """Load a torch module's state_dict, as NumPy arrays, into a retrograd module."""
    module.load_state_dict({k: v.detach().numpy() for k, v in
                            torch_module.state_dict().items()})


def compare_backward(r_out, t_out, r_inputs, t_inputs, atol=1e-6, rtol=1e-5, seed=1):
    """Backpropagate the same random cotangent through both; compare input gradients."""
    import torch
    g = numpy.random.default_rng(seed).standard_normal(tuple(t_out.shape)).astype(
        to_numpy(t_out).dtype)
    r_out.backward(retrograd.from_numpy(g.copy()))
    t_out.backward(torch.from_numpy(g.copy()))
    for ri, ti in zip(r_inputs, t_inputs, strict=True):
        if ti.grad is None:
            assert ri.grad is None
            continue
        assert_close(ri.grad, ti.grad, atol, rtol)


def _outcome(mod, fn):
    """``fn(mod)``'s tensors as (dtype name, shape, float64 array), or the exception it
    raised as (type name, message); with the warnings it gave as (category, message)."""
    import warnings
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out = fn(mod)
        except Exception as e:  # noqa: BLE001 (the exception is what is compared)
            out = (type(e).__name__, str(e))
        else:
            out = [(str(x.dtype).split(".")[-1], tuple(x.shape),
                    x.detach().numpy().astype("float64")) for x in out]
    return out, [(w.category.__name__, str(w.message)) for w in caught]


def assert_same_outcome(fn, atol=1e-6, rtol=1e-5):
    """``fn(torch)`` and ``fn(retrograd)`` (each returning a list of tensors) agree: the
    same exception type and message, or the same dtypes, shapes and values (NaN where
    torch has NaN); and the same warnings."""
    import torch
    t, tw = _outcome(torch, fn)
    r, rw = _outcome(retrograd, fn)
    assert rw == tw
    if isinstance(t, tuple):
        assert r == t
        return
    assert not isinstance(r, tuple), r
    assert [x[:2] for x in r] == [x[:2] for x in t]
    for (_, _, a), (_, _, b) in zip(r, t, strict=True):
        numpy.testing.assert_allclose(a, b, atol=atol, rtol=rtol)
