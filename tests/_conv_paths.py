"""What the tests of the convolutions' compiled paths share (``ops/test_conv_winograd.py``,
``ops/test_conv_direct.py``): their tolerance, a count of a path's calls, and a run beside
PyTorch."""

import numpy
import pytest

import retrograd


def close(got, want):
    """Within float32 rounding of the largest term (any order of the sums rounds so)."""
    for a, b in zip(got, want, strict=True):
        assert a.dtype == numpy.float32 and a.shape == b.shape
        assert numpy.abs(a - b).max() <= 2e-6 * numpy.abs(b).max() + 1e-30


def counting(monkeypatch, module, *names):
    """How many times each of these functions of ``module`` returned a result (not None),
    counted in the returned dict from now on."""
    calls = dict.fromkeys(names, 0)
    for name in names:
        real = getattr(module, name)

        def counted(*args, _real=real, _name=name):
            out = _real(*args)
            calls[_name] += out is not None
            return out
        monkeypatch.setattr(module, name, counted)
    return calls


def beside_pytorch(x, w, b, padding):
    """``conv2d(x, w, b, padding=padding)`` and its input and weight gradients (of a
    fixed output gradient) in retrograd and in PyTorch, float32: two lists of arrays. (Not
    the bias's gradient: a sum of the output's, whose cancellations make its rounding no
    test.)"""
    torch = pytest.importorskip("torch")
    res = []
    for T in (retrograd, torch):
        xt, wt, bt = (T.from_numpy(a.copy()).requires_grad_() for a in (x, w, b))
        out = T.nn.functional.conv2d(xt, wt, bt, padding=padding)
        out.backward(T.from_numpy(numpy.cos(numpy.arange(out.numel(), dtype=numpy.float32))
                                  .reshape(tuple(out.shape))))
        res.append([a.detach().numpy() for a in (out, xt.grad, wt.grad)])
    return res
