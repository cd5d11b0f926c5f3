"""retrograd.stft and retrograd.istft against PyTorch's: values, shapes, dtypes and
gradients (for the signal and the window) over a grid of arguments, the round trip,
gradcheck, and the errors and warnings of bad arguments (type and message)."""

import collections
import itertools
import warnings

import numpy
import pytest

import retrograd

pytestmark = pytest.mark.torch

_G = numpy.random.default_rng(11)
_X = _G.standard_normal((3, 23))
_XC = _G.standard_normal((2, 23, 2))  # complex signals as (real, imag) pairs
_TOL = {"float64": 1e-10, "float32": 2e-4}
Raised = collections.namedtuple("Raised", "type message")


def _outcome(T, fn):
    """``fn(T)``'s result, or the type and message of what it raised (warnings ignored)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return fn(T)
        except Exception as e:  # noqa: BLE001 (compared against PyTorch's)
            return Raised(type(e), str(e))


def _same(torch, fn, tol=1e-10):
    """``fn`` gives what it gives under PyTorch: equal arrays, or the same exception."""
    theirs, ours = _outcome(torch, fn), _outcome(retrograd, fn)
    if isinstance(theirs, Raised):
        assert ours == theirs
        return
    assert not isinstance(ours, Raised), ours
    for a, b in zip(ours, theirs, strict=True):
        assert a.dtype == b.dtype and a.shape == b.shape
        numpy.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def _window(T, kind, n, dtype, grad=True):
    if kind is None:
        return None
    w = numpy.hanning(n + 2)[1:-1] if kind == "hann" else numpy.linspace(0.5, 1.5, n)
    return T.from_numpy(w.astype(dtype)).requires_grad_(grad)


def _weighted_grads(T, y, leaves):
    """The output as a real array and the gradients of a fixed weighting of it."""
    r = T.view_as_real(y) if y.is_complex() else y
    w = T.from_numpy(numpy.random.default_rng(3).standard_normal(tuple(r.shape)).astype(
        str(r.dtype).split(".")[-1]))
    grads = T.autograd.grad((r * w).sum(), leaves)
    return (r.detach().numpy(),) + tuple(g.numpy() for g in grads)


_STFT_GRID = list(itertools.product(
    (8, 7),  # n_fft
    (None, 3),  # hop_length
    (None, 5),  # win_length
    (None, "hann"),  # window
    ("reflect", "constant", "replicate", "circular", None),  # pad_mode, None: center=False
    ({}, {"normalized": True}, {"onesided": False}),
    (False, True)))  # batched


def _stft_run(n_fft, hop, win, window, pad_mode, flags, batched, dtype):
    def run(T):
        leaf = T.from_numpy((_X if batched else _X[0]).astype(dtype)).requires_grad_()
        w = _window(T, window, win or n_fft, dtype)
        kw = dict(hop_length=hop, win_length=win, window=w, return_complex=True, **flags)
        kw.update(center=False) if pad_mode is None else kw.update(pad_mode=pad_mode)
        y = T.stft(leaf, n_fft, **kw)
        return _weighted_grads(T, y, (leaf,) if w is None else (leaf, w))
    return run


@pytest.mark.parametrize("n_fft, hop, win, window, pad_mode, flags, batched", _STFT_GRID)
def test_stft_values_and_gradients_match_torch(torch, n_fft, hop, win, window, pad_mode, flags,
                                               batched):
    for dtype, tol in _TOL.items():
        _same(torch, _stft_run(n_fft, hop, win, window, pad_mode, flags, batched, dtype), tol)


@pytest.mark.parametrize("kw", [dict(win_length=4, hop_length=2), dict(win_length=5, hop_length=2),
                                dict(win_length=6, hop_length=4), dict(win_length=5, hop_length=3),
                                dict(win_length=3, hop_length=1)], ids=str)
def test_align_to_window_matches_torch(torch, kw):
    """Frames start at each window position; an odd ``n_fft - win_length`` whose last frame
    overruns fails as PyTorch's as_strided does."""
    def run(T):
        leaf = T.from_numpy(_X[:2, :20].copy()).requires_grad_()
        y = T.stft(leaf, 8, center=False, align_to_window=True, return_complex=True, **kw)
        return _weighted_grads(T, y, (leaf,))
    _same(torch, run)


@pytest.mark.parametrize("dtype, expect", [("float32", "complex64"), ("float64", "complex128"),
                                           ("complex64", "complex64")])
def test_stft_dtypes_and_shapes(dtype, expect):
    x = retrograd.from_numpy(_X[0].astype(dtype))
    y = retrograd.stft(x, 8, window=retrograd.hann_window(8), return_complex=True)
    assert y.dtype is getattr(retrograd, expect)
    assert tuple(y.shape) == ((8 if x.is_complex() else 5), 1 + 23 // 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # return_complex=False is deprecated
        real = retrograd.stft(x.real if x.is_complex() else x, 8,
                              window=retrograd.hann_window(8), return_complex=False)
    assert tuple(real.shape) == (5, 12, 2)


@pytest.mark.parametrize("complex_input, window_dtype", [(False, "float64"), (True, "float32"),
                                                         (False, "float16"), (False, "int64"),
                                                         (False, "complex64")])
def test_stft_promotes_input_and_window_as_torch(torch, complex_input, window_dtype):
    def run(T):
        x = T.from_numpy(_X[0].astype("float32"))
        x = x.to(T.complex64) if complex_input else x
        w = T.ones(8, dtype=getattr(T, window_dtype))
        return (T.view_as_real(T.stft(x, 8, window=w, return_complex=True)).numpy(),)
    _same(torch, run, 1e-5)


_ISTFT_GRID = list(itertools.product(
    (8, 7),  # n_fft
    (None, 3),  # hop_length
    (None, 5),  # win_length
    (None, "hann", "ramp"),  # window
    (True, False),  # center
    ({}, {"normalized": True}, {"onesided": False}, {"return_complex": True,
                                                     "onesided": False}),
    (None, 14, 40),  # length
    (False, True)))  # batched


def _spectrum(n_fft, hop, onesided, batched, dtype):
    x = _X if batched else _X[0]
    full = numpy.fft.fft(numpy.stack([x[..., i:i + n_fft] for i in range(0, 23 - n_fft, hop)],
                                     axis=-1), axis=-2)
    s = full[..., :n_fft // 2 + 1, :] if onesided else full
    return numpy.stack([s.real, s.imag], axis=-1).astype(dtype)


@pytest.mark.parametrize("n_fft, hop, win, window, center, flags, length, batched", _ISTFT_GRID)
def test_istft_values_and_gradients_match_torch(torch, n_fft, hop, win, window, center, flags,
                                                length, batched):
    """(Where PyTorch's NOLA check or an argument check refuses, with its error.)"""
    for dtype, tol in _TOL.items():
        _same(torch, _istft_run(n_fft, hop, win, window, center, flags, length, batched, dtype),
              tol)


def _istft_run(n_fft, hop, win, window, center, flags, length, batched, dtype):
    spectrum = _spectrum(n_fft, hop or n_fft // 4, flags.get("onesided", True), batched, dtype)

    def run(T):
        leaf = T.from_numpy(spectrum.copy()).requires_grad_()
        # (a window's gradient through complex frames is refused: docs/deviations.md)
        w = _window(T, window, win or n_fft, dtype, not flags.get("return_complex"))
        y = T.istft(T.view_as_complex(leaf), n_fft, hop_length=hop, win_length=win, window=w,
                    center=center, length=length, **flags)
        return _weighted_grads(T, y, (leaf,) if w is None or not w.requires_grad else (leaf, w))
    return run


@pytest.mark.parametrize("onesided", [None, False])
@pytest.mark.parametrize("center", [True, False])
def test_stft_of_complex_input_matches_torch(torch, center, onesided):
    """(Padded with zeros: reflect/replicate/circular pads of a complex tensor that requires
    grad are refused, docs/deviations.md.)"""
    def run(T):
        leaf = T.from_numpy(_XC.copy())
        leaf.requires_grad_()
        w = _window(T, "hann", 6, "float64", grad=False)
        y = T.stft(T.view_as_complex(leaf), 8, 3, 6, w, center=center, pad_mode="constant",
                   onesided=onesided)
        return _weighted_grads(T, y, (leaf,))
    _same(torch, run)


@pytest.mark.parametrize("n_fft, hop, window, center, batched", [
    (16, 4, "hann", True, False), (16, None, "hann", True, True), (10, 3, "ramp", False, True),
    (9, 2, None, True, False), (8, 8, None, False, True)])
def test_round_trip(n_fft, hop, window, center, batched):
    x = retrograd.from_numpy(_X if batched else _X[0])
    w = _window(retrograd, window, n_fft, "float64")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = retrograd.stft(x, n_fft, hop, window=w, center=center, return_complex=True)
        y = s.istft(n_fft, hop, window=w, center=center, length=x.shape[-1])
    end = x.shape[-1] if center else (x.shape[-1] - n_fft) // (hop or n_fft // 4) * (
        hop or n_fft // 4) + n_fft
    numpy.testing.assert_allclose(y.detach().numpy()[..., :end], x.numpy()[..., :end],
                                  atol=1e-12)


def test_method_forms_match_functions():
    x = retrograd.from_numpy(_X[0])
    w = retrograd.hann_window(8, dtype=retrograd.float64)
    s = x.stft(8, 3, window=w, return_complex=True)
    assert retrograd.equal(s, retrograd.stft(x, 8, 3, window=w, return_complex=True))
    assert retrograd.equal(s.istft(8, 3, window=w), retrograd.istft(s, 8, 3, window=w))


def test_gradcheck():
    from retrograd.autograd import gradcheck
    x = retrograd.from_numpy(_X[:2, :12].copy()).requires_grad_()
    w = retrograd.from_numpy(numpy.linspace(0.5, 1.5, 6)).requires_grad_()
    assert gradcheck(lambda x, w: retrograd.view_as_real(
        retrograd.stft(x, 8, 2, 6, w, normalized=True, return_complex=True)), (x, w))
    s = retrograd.stft(x.detach(), 8, 2, 6, w.detach(), return_complex=True)
    sr = retrograd.view_as_real(s).detach().requires_grad_()
    assert gradcheck(lambda sr, w: retrograd.istft(retrograd.view_as_complex(sr), 8, 2, 6, w,
                                                   length=14), (sr, w))


def test_grad_fn_names_match_torch(torch):
    """(PyTorch transposes and squeezes its result in place.)"""
    def names(T):
        x, w = T.ones(12, requires_grad=True), T.ones(4)
        return [type(T.stft(x, 4, window=w, return_complex=True).grad_fn).__name__,
                type(T.stft(x.view(2, 6), 4, window=w, return_complex=True).grad_fn).__name__]
    assert names(retrograd) == names(torch)


_H = numpy.hanning(10)[1:-1]
_ERRORS = {
    "return_complex missing": lambda T: T.stft(T.ones(20), 8),
    "align with center": lambda T: T.stft(T.ones(20), 8, align_to_window=True,
                                         return_complex=True),
    "pad_mode": lambda T: T.stft(T.ones(20), 8, pad_mode="foo", return_complex=True),
    "reflect too short": lambda T: T.stft(T.ones(3), 8, return_complex=True),
    "0-d": lambda T: T.stft(T.tensor(1.), 4, return_complex=True, pad_mode="constant"),
    "3-d": lambda T: T.stft(T.ones(2, 2, 5), 4, return_complex=True),
    "empty batch": lambda T: T.stft(T.ones(0, 20), 4, return_complex=True),
    "n_fft too long": lambda T: T.stft(T.ones(3), 8, 2, 4, return_complex=True, center=False),
    "n_fft zero": lambda T: T.stft(T.ones(20, dtype=T.float64), 0, return_complex=True),
    "hop": lambda T: T.stft(T.ones(20).to(T.complex64), 8, hop_length=0),
    "win_length": lambda T: T.stft(T.ones(20), 8, win_length=9, return_complex=False),
    "window size": lambda T: T.stft(T.ones(20), 8, window=T.ones(7), return_complex=True,
                                    normalized=True, onesided=True),
    "window 2-d": lambda T: T.stft(T.ones(20), 8, window=T.ones(8, 1).to(T.complex128)),
    "int input": lambda T: T.stft(T.ones(20, dtype=T.int32), 8, center=False,
                                  return_complex=True),
    "half input": lambda T: T.stft(T.ones(20, dtype=T.float16), 8, return_complex=True),
    "onesided complex": lambda T: T.stft(T.ones(20), 8, onesided=True,
                                         window=T.ones(8, dtype=T.complex64)),
    "istft real input": lambda T: T.istft(T.ones(5, 11), 8),
    "istft 0-d": lambda T: T.istft(T.ones((), dtype=T.complex64), 8),
    "istft 1-d": lambda T: T.istft(T.ones(5, dtype=T.complex64), 8),
    "istft 4-d": lambda T: T.istft(T.ones(1, 1, 5, 11, dtype=T.complex64), 8),
    "istft empty": lambda T: T.istft(T.ones(5, 0, dtype=T.complex128), 8),
    "istft onesided size": lambda T: T.istft(T.ones(5, 11, dtype=T.complex64), 10),
    "istft full size": lambda T: T.istft(T.ones(5, 11, dtype=T.complex64), 8, onesided=False),
    "istft hop": lambda T: T.istft(T.ones(5, 11, dtype=T.complex64), 8, hop_length=9),
    "istft win_length": lambda T: T.istft(T.ones(5, 11, dtype=T.complex64), 8, win_length=9,
                                          length=3),
    "istft window size": lambda T: T.istft(T.ones(5, 11, dtype=T.complex64), 8,
                                           window=T.ones(7)),
    "istft onesided complex": lambda T: T.istft(T.ones(5, 11, dtype=T.complex64), 8,
                                                return_complex=True),
    "istft complex window": lambda T: T.istft(T.ones(8, 11, dtype=T.complex64), 8,
                                              window=T.ones(8, dtype=T.complex64)),
    "istft NOLA": lambda T: T.istft(T.ones(5, 11, dtype=T.complex128), 8, hop_length=8,
                                    window=T.from_numpy(numpy.hanning(9)[:8].copy()),
                                    center=False),
    "istft zero window": lambda T: T.istft(T.ones(2, 5, 11, dtype=T.complex64), 8,
                                           window=T.zeros(8), length=5),
    "istft empty slice": lambda T: T.istft(T.ones(5, 11, dtype=T.complex64), 8, length=-3),
}


@pytest.mark.parametrize("name", _ERRORS)
def test_errors_match_torch(torch, name):
    theirs = _outcome(torch, _ERRORS[name])
    assert isinstance(theirs, Raised), "PyTorch accepts this: not an error case"
    assert _outcome(retrograd, _ERRORS[name]) == theirs


_WARNINGS = {
    "stft no window": lambda T: T.stft(T.ones(20), 8, return_complex=True),
    "real output": lambda T: T.stft(T.ones(20), 8, window=T.ones(8), return_complex=False),
    "istft no window": lambda T: T.istft(T.ones(5, 11, dtype=T.complex64), 8),
    "istft length": lambda T: T.istft(T.ones(5, 11, dtype=T.complex64), 8, window=T.ones(8),
                                      length=40),
}


def _warned(T, fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn(T)
    return [(w.category, str(w.message).split(" (Triggered internally")[0]) for w in caught]


@pytest.mark.parametrize("name", _WARNINGS)
def test_warnings_match_torch(torch, monkeypatch, name):
    """Each is PyTorch's TORCH_WARN_ONCE (once a process; warn-always shows it each time)."""
    monkeypatch.setattr(retrograd._tensor, "_warned", set())
    always = torch.is_warn_always_enabled()
    torch.set_warn_always(True)
    try:
        theirs = _warned(torch, _WARNINGS[name])
    finally:
        torch.set_warn_always(always)
    assert theirs
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _WARNINGS[name](retrograd)  # the user's line, as PyTorch's C++ warnings
    assert [(w.category, str(w.message)) for w in caught] == theirs
    assert [w.filename for w in caught] == [__file__] * len(caught)
    assert _warned(retrograd, _WARNINGS[name]) == []  # once
