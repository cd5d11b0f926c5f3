"""retrograd.fft and the window functions against torch.fft and PyTorch's windows: values,
result dtypes, gradients (complex inputs through view_as_complex, complex outputs through
view_as_real, so that PyTorch's conjugate Wirtinger convention is what is compared), and
errors (the op database runs the generated suites: tests/opdb/spectral.py)."""

import numpy
import pytest

import retrograd

pytestmark = pytest.mark.torch

_G = numpy.random.default_rng(7)
_X = _G.standard_normal((4, 6))
_XC = _G.standard_normal((4, 6, 2))  # complex input as (real, imag) pairs
_ONE = ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft")
_ND = ("fft2", "ifft2", "fftn", "ifftn", "rfft2", "irfft2", "rfftn", "irfftn", "hfft2",
       "ihfft2", "hfftn", "ihfftn")
_REAL_ONLY = ("rfft", "ihfft", "rfft2", "ihfft2", "rfftn", "ihfftn")
_KWARGS_1D = ({}, {"norm": "ortho"}, {"norm": "forward"}, {"norm": "backward"}, {"n": 9},
              {"n": 3}, {"dim": 0}, {"n": 5, "dim": -2, "norm": "ortho"})
_KWARGS_ND = ({}, {"norm": "ortho"}, {"norm": "forward"}, {"s": (3, 7)}, {"s": (5, -1)},
              {"dim": (0,)}, {"dim": (1, 0)}, {"s": (8,), "norm": "ortho"},
              {"s": (2, 4), "dim": (-1, 0)})


def _cases():
    for name in _ONE + _ND:
        for kw in _KWARGS_1D if name in _ONE else _KWARGS_ND:
            for cplx in (False, True):
                if not (cplx and name in _REAL_ONLY):
                    yield pytest.param(name, kw, cplx, id=f"{name}-{kw}-{cplx}")


def _run(T, name, kw, cplx, dtype="float64"):
    """Output (real: complex ones as view_as_real) and the gradient of a fixed weighting."""
    leaf = T.from_numpy((_XC if cplx else _X).astype(dtype)).requires_grad_()
    y = getattr(T.fft, name)(T.view_as_complex(leaf) if cplx else leaf, **kw)
    if y.is_complex():
        y = T.view_as_real(y.resolve_conj())
    w = T.from_numpy(numpy.random.default_rng(5).standard_normal(tuple(y.shape)).astype(dtype))
    (g,) = T.autograd.grad((y * w).sum(), leaf)
    return y.detach().numpy(), g.numpy()


@pytest.mark.parametrize("name, kw, cplx", _cases())
def test_values_and_gradients_match_torch(torch, name, kw, cplx):
    """(Where PyTorch refuses the arguments, with its error.)"""
    for dtype, tol in (("float64", 1e-10), ("float32", 2e-5)):
        try:
            theirs = _run(torch, name, kw, cplx, dtype)
        except RuntimeError as e:
            with pytest.raises(RuntimeError, match=f"^{e}$"):
                _run(retrograd, name, kw, cplx, dtype)
            return
        ours = _run(retrograd, name, kw, cplx, dtype)
        for a, b in zip(ours, theirs, strict=True):
            assert a.dtype == b.dtype and a.shape == b.shape
            numpy.testing.assert_allclose(a, b, atol=tol, rtol=tol)


@pytest.mark.parametrize("name, kw, cplx", [c for c in _cases() if "n" not in c.values[1]
                                            and "s" not in c.values[1]][::3])
def test_second_order_and_forward_mode(name, kw, cplx):
    def f(leaf):
        y = getattr(retrograd.fft, name)(retrograd.view_as_complex(leaf) if cplx else leaf,
                                         **kw)
        return retrograd.view_as_real(y) if y.is_complex() else y
    leaf = retrograd.from_numpy(_XC if cplx else _X).requires_grad_()
    assert retrograd.autograd.gradcheck(f, (leaf,), check_forward_ad=True)
    assert retrograd.autograd.gradgradcheck(f, (leaf,))


@pytest.mark.parametrize("dtype", ["int64", "bool", "float32", "float64", "complex64",
                                   "complex128"])
@pytest.mark.parametrize("name", _ONE + _ND)
def test_result_dtype_matches_torch(torch, name, dtype):
    if dtype.startswith("complex") and name in _REAL_ONLY:
        pytest.skip("real input only")
    x = (numpy.arange(12).reshape(3, 4) % 3).astype(dtype)
    ours = getattr(retrograd.fft, name)(retrograd.from_numpy(x))
    theirs = getattr(torch.fft, name)(torch.from_numpy(x)).resolve_conj()
    assert str(ours.dtype) == str(theirs.dtype)
    numpy.testing.assert_allclose(ours.numpy(), theirs.numpy(), atol=1e-5)


_ERRORS = [
    ("fft", lambda T: T.fft.fft(T.ones(4), n=0)),
    ("fft n<0", lambda T: T.fft.fft(T.ones(4), n=-1)),
    ("fft dim", lambda T: T.fft.fft(T.ones(4), dim=2)),
    ("fft 0-d", lambda T: T.fft.fft(T.ones(()))),
    ("fft empty", lambda T: T.fft.fft(T.ones(0))),
    ("fft norm", lambda T: T.fft.fft(T.ones(4), norm="bad")),
    ("ifft norm", lambda T: T.fft.ifft(T.ones(4), norm="Forward")),
    ("fft n float", lambda T: T.fft.fft(T.ones(4), n=2.5)),
    ("fft half", lambda T: T.fft.fft(T.ones(4, dtype=T.float16))),
    ("rfft bfloat16", lambda T: T.fft.rfft(T.ones(4, dtype=T.bfloat16))),
    ("fftn half", lambda T: T.fft.fftn(T.ones(4, dtype=T.float16))),
    ("irfft half", lambda T: T.fft.irfft(T.ones(4, dtype=T.float16))),
    ("rfft complex", lambda T: T.fft.rfft(T.ones(4, dtype=T.complex64))),
    ("ihfft complex", lambda T: T.fft.ihfft(T.ones(4, dtype=T.complex64))),
    ("rfftn complex", lambda T: T.fft.rfftn(T.ones(4, dtype=T.complex64))),
    ("irfft one point", lambda T: T.fft.irfft(T.ones(1))),
    ("fft2 1-d", lambda T: T.fft.fft2(T.ones(4))),
    ("fftn s too long", lambda T: T.fft.fftn(T.ones(4, 4), s=(2, 2, 2))),
    ("fftn s and dim", lambda T: T.fft.fftn(T.ones(4, 4), s=(2, 2), dim=(0,))),
    ("fftn duplicate dims", lambda T: T.fft.fftn(T.ones(4, 4), dim=(0, -2))),
    ("fftn s=0", lambda T: T.fft.fftn(T.ones(4, 4), s=(0, 2))),
    ("rfftn 0-d", lambda T: T.fft.rfftn(T.ones(()))),
    ("irfftn 0-d", lambda T: T.fft.irfftn(T.ones(()))),
    ("hfftn 0-d", lambda T: T.fft.hfftn(T.ones(()))),
    ("ihfftn 0-d", lambda T: T.fft.ihfftn(T.ones(()))),
    ("irfft out", lambda T: T.fft.irfft(T.ones(4), out=T.empty(6, dtype=T.complex64))),
    ("rfft out", lambda T: T.fft.rfft(T.ones(4), out=T.empty(3))),
    ("fft out", lambda T: T.fft.fft(T.ones(4), out=T.empty(4))),
    ("fft2 out", lambda T: T.fft.fft2(T.ones(4, 4), out=T.empty(3))),
    ("rfft2 out", lambda T: T.fft.rfft2(T.ones(4, 4), out=T.empty(3))),
    ("irfft2 out", lambda T: T.fft.irfft2(T.ones(4, 4), out=T.empty(3, dtype=T.complex64))),
    ("hfft out", lambda T: T.fft.hfft(T.ones(4), out=T.empty(3, dtype=T.complex64))),
    ("ihfft out", lambda T: T.fft.ihfft(T.ones(4), out=T.empty(3))),
    ("out with grad", lambda T: T.fft.fft(T.ones(4, requires_grad=True),
                                          out=T.empty(4, dtype=T.complex64))),
    ("fftfreq n<0", lambda T: T.fft.fftfreq(-1)),
    ("rfftfreq n<0", lambda T: T.fft.rfftfreq(-4)),
    ("fftfreq int", lambda T: T.fft.fftfreq(4, dtype=T.int64)),
    ("fftfreq n float", lambda T: T.fft.fftfreq(3.5)),
    ("fftshift dim", lambda T: T.fft.fftshift(T.ones(4), dim=3)),
    ("view_as_real", lambda T: T.view_as_real(T.ones(2))),
    ("view_as_complex shape", lambda T: T.view_as_complex(T.ones(2, 3))),
    ("view_as_complex dtype", lambda T: T.view_as_complex(T.ones(2, 2, dtype=T.int64))),
    ("imag of real", lambda T: T.imag(T.ones(2))),
] + [(f"{w} {what}", call) for w in ("hann_window", "hamming_window", "blackman_window",
                                     "bartlett_window", "kaiser_window")
     for what, call in (
         ("negative", lambda T, w=w: getattr(T, w)(-1)),
         ("int dtype", lambda T, w=w: getattr(T, w)(3, dtype=T.int64)),
         ("uint8 requires_grad", lambda T, w=w: getattr(T, w)(3, dtype=T.uint8,
                                                             requires_grad=True)),
         ("bool layout", lambda T, w=w: getattr(T, w)(3, dtype=T.bool, layout=T.strided)),
         ("float length", lambda T, w=w: getattr(T, w)(2.5)))]


@pytest.mark.parametrize("call", [pytest.param(c, id=i) for i, c in _ERRORS])
def test_errors_match_torch(torch, call):
    with pytest.raises(Exception) as expected:
        call(torch)
    with pytest.raises(expected.type) as actual:
        call(retrograd)
    assert str(actual.value) == str(expected.value)


@pytest.mark.parametrize("n", [0, 1, 2, 5, 8, -1, -3])
@pytest.mark.parametrize("d", [1.0, 0.5, -2.0, 0.0])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_frequencies_match_torch(torch, n, d, dtype):
    for name in ("fftfreq", "rfftfreq"):
        if name == "fftfreq" and n < 0:
            continue
        ours = getattr(retrograd.fft, name)(n, d, dtype=getattr(retrograd, dtype))
        theirs = getattr(torch.fft, name)(n, d, dtype=getattr(torch, dtype))
        assert str(ours.dtype) == str(theirs.dtype)
        numpy.testing.assert_array_equal(ours.float().numpy(), theirs.float().numpy())
    x = retrograd.fft.fftfreq(4, requires_grad=True)
    assert x.requires_grad and x.is_leaf
    out = retrograd.empty(4, dtype=retrograd.float64)
    assert retrograd.fft.fftfreq(4, out=out) is out and out.dtype is retrograd.float64


@pytest.mark.parametrize("dim", [None, 0, 1, (1, 0), -1, (0, 0)])
def test_shifts_match_torch(torch, dim):
    x = numpy.arange(30).reshape(5, 6)
    for name in ("fftshift", "ifftshift"):
        ours = getattr(retrograd.fft, name)(retrograd.from_numpy(x), dim)
        numpy.testing.assert_array_equal(
            ours.numpy(), getattr(torch.fft, name)(torch.from_numpy(x), dim).numpy())


def test_out_is_written(torch):
    out = retrograd.empty(3, dtype=retrograd.complex128)
    x = retrograd.tensor([1.0, 2.0, 3.0, 4.0], dtype=retrograd.float64)
    assert retrograd.fft.rfft(x, out=out) is out
    numpy.testing.assert_allclose(out.numpy(), torch.fft.rfft(torch.tensor(x.numpy())).numpy())


def test_real_and_imag_are_parts_with_gradients(torch):
    for T in (torch, retrograd):
        leaf = T.tensor([[1.0, 2.0], [3.0, -1.0]], dtype=T.float64, requires_grad=True)
        z = T.view_as_complex(leaf)
        assert z.real.grad_fn.name() == "SelectBackward0"
        assert T.real(z).tolist() == [1.0, 3.0] and z.imag.tolist() == [2.0, -1.0]
        (g,) = T.autograd.grad((z.real * 3 + z.imag * 5).sum(), leaf)
        assert g.tolist() == [[3.0, 5.0], [3.0, 5.0]]


_WINDOWS = ("hann_window", "hamming_window", "blackman_window", "bartlett_window",
            "kaiser_window")
_PARAMS = {"hamming_window": ((), (0.5, 0.3)), "kaiser_window": ((), (3.0,))}


@pytest.mark.parametrize("dtype, tol", [("float32", 1e-6), ("float64", 1e-13),
                                        ("float16", 0), ("bfloat16", 0)])
@pytest.mark.parametrize("name", _WINDOWS)
def test_windows_match_torch(torch, name, dtype, tol):
    """Half precision bit for bit: the steps round where PyTorch's do; Kaiser's within an
    ulp (its float32 Bessel function and PyTorch's differ in the last bit, which can round
    a half result the other way)."""
    if name == "kaiser_window" and dtype in ("float16", "bfloat16"):
        tol = 2.0 ** -10 if dtype == "float16" else 2.0 ** -7
    for n in (*range(0, 20), 64, 257):
        for periodic in (True, False):
            for extra in _PARAMS.get(name, ((),)):
                ours = getattr(retrograd, name)(n, periodic, *extra,
                                                dtype=getattr(retrograd, dtype))
                theirs = getattr(torch, name)(n, periodic, *extra, dtype=getattr(torch, dtype))
                assert str(ours.dtype) == str(theirs.dtype)
                numpy.testing.assert_allclose(ours.float().numpy(), theirs.float().numpy(),
                                              atol=tol, rtol=tol)
    w = getattr(retrograd, name)(5, requires_grad=True)
    assert w.requires_grad and w.is_leaf and w.dtype is retrograd.float32
