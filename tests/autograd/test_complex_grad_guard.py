"""Complex values that require grad: the ops whose rules hold for them record (and match
PyTorch's gradients); every other op refuses instead of giving a wrong gradient."""

import numpy as np
import pytest

import retrograd

torch = pytest.importorskip("torch")


def _leaf(lib):
    return lib.tensor([[1.0, 2.0], [3.0, -1.0], [0.5, 0.25]], dtype=lib.float64,
                      requires_grad=True)


def test_linear_paths_match_pytorch():
    grads = []
    for lib in (torch, retrograd):
        x = _leaf(lib)
        z = lib.view_as_complex(x)
        w = lib.tensor([2.0, -3.0, 0.5], dtype=lib.float64)
        y = z * w / 4.0 + z.conj() - lib.fft.fft(z, n=4)[:3] * 2.0
        loss = lib.view_as_real(y).pow(2).sum() + y.real.sum() * y.imag.sum()
        loss.backward()
        grads.append(np.asarray(x.grad))
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-12)


@pytest.mark.parametrize("op", [
    lambda z, x: z * z, lambda z, x: 2.0 / z, lambda z, x: z * (1 + 2j), lambda z, x: z.abs(),
    lambda z, x: z.exp(), lambda z, x: z * x[:, 0], lambda z, x: z.pow(2),
], ids=["mul", "rdiv", "mul_complex_number", "abs", "exp", "mul_real_that_requires_grad",
        "pow"])
def test_other_ops_refuse(op):
    x = _leaf(retrograd)
    z = retrograd.view_as_complex(x)
    with pytest.raises(NotImplementedError, match="autograd of complex tensors is not "
                                                  "supported yet: .* has no complex gradient"):
        op(z, x)
    with retrograd.no_grad():  # without recording, the values are computed
        assert op(z, x) is not None
    assert op(z.detach(), x.detach()) is not None
