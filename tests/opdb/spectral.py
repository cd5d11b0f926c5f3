"""Op database entries for ``retrograd.fft`` (``ops/spectral.py``).

The generated suites take real outputs, so a complex result is compared as
``view_as_real`` of it, and complex input enters as ``view_as_complex`` of a real tensor
with a last dim of 2 (variant "complex"): gradients then follow PyTorch's conjugate
Wirtinger convention end to end. PyTorch's CPU FFTs refuse half precision, as retrograd's
do (tests/_low_precision.py lists them).
"""

import retrograd

from ._core import OpInfo, SampleInput, maker as _maker

_ONE = ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft")
_ND = ("fft2", "ifft2", "fftn", "ifftn", "rfft2", "irfft2", "rfftn", "irfftn", "hfft2",
       "ihfft2", "hfftn", "ihfftn")
_REAL_ONLY = ("rfft", "ihfft", "rfft2", "ihfft2", "rfftn", "ihfftn")
NAMES = _ONE + _ND


def _samples(name, complex_input):
    one = name in _ONE
    pair = (2,) if complex_input else ()

    def samples(dtype, requires_grad):
        t = _maker(dtype, requires_grad)
        yield SampleInput(t(4, 6, *pair), name="default")
        yield SampleInput(t(3, 4, 5, *pair), kwargs={"norm": "ortho"}, name="ortho")
        yield SampleInput(t(3, 5, *pair), kwargs={"norm": "forward"}, name="forward")
        if one:
            yield SampleInput(t(4, 5, *pair), kwargs={"n": 8, "dim": 0}, name="pad")
            yield SampleInput(t(4, 7, *pair), kwargs={"n": 3}, name="crop")
        else:
            yield SampleInput(t(4, 5, *pair), kwargs={"s": (6, 3)}, name="pad_crop")
            yield SampleInput(t(2, 3, 4, *pair), kwargs={"s": (-1, 5), "dim": (2, 0)},
                              name="dims")
        if not complex_input:
            yield SampleInput(t(3, 6, noncontiguous=True), name="noncontiguous")
            if not name.endswith("2"):
                yield SampleInput(t(5), name="1-d")
    return samples


def _call(T, name, complex_input):
    def call(x, *args, **kwargs):
        y = getattr(T.fft, name)(T.view_as_complex(x) if complex_input else x, *args,
                                 **kwargs)
        return T.view_as_real(y.resolve_conj()) if y.is_complex() else y
    return call


def _torch_call(name, complex_input):
    """``_call`` on torch, looked up at call time (torch stays optional)."""
    def call(*args, **kwargs):
        import torch
        return _call(torch, name, complex_input)(*args, **kwargs)
    return call


OPS = [
    *(OpInfo(f"fft.{name}", _samples(name, False), op=_call(retrograd, name, False),
             torch_op=_torch_call(name, False), dtypes=("float32", "float64", "int64"))
      for name in NAMES),
    *(OpInfo(f"fft.{name}", _samples(name, True), variant="complex",
             op=_call(retrograd, name, True), torch_op=_torch_call(name, True))
      for name in NAMES if name not in _REAL_ONLY),
]
