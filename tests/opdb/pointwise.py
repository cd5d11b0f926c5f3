"""Op database entries for the unary elementwise ops of ``ops/pointwise.py``.

Each op is sampled inside its domain (log and sqrt on positive values, asin
in (-1, 1), ...) on a matrix, a 0-d tensor, an empty tensor and a strided
(non-contiguous) one; in-place forms run on a clone (a non-leaf).
"""

import math

import numpy

import retrograd

from ._core import ErrorInput, OpInfo, SampleInput, make_tensor

_FLOAT = ("float32", "float64")
_WITH_INT = ("float32", "float64", "int64")
_ALL = ("float32", "float64", "int64", "bool")


def _unary_samples(low=-2.0, high=2.0, exclude_zero=False, int_low=None, int_high=None):
    """Samples on [low, high): integer dtypes use [int_low, int_high] (default the same)."""
    def samples(dtype, requires_grad):
        lo, hi = low, high
        if numpy.dtype(dtype).kind in "biu":
            lo = math.ceil(low) if int_low is None else int_low
            hi = math.floor(high) if int_high is None else int_high
        kw = dict(dtype=dtype, low=lo, high=hi, requires_grad=requires_grad,
                  exclude_zero=exclude_zero)
        yield SampleInput(make_tensor(2, 3, **kw), name="matrix")
        yield SampleInput(make_tensor(**kw), name="0d")
        yield SampleInput(make_tensor(0, 2, **kw), name="empty")
        yield SampleInput(make_tensor(3, 2, noncontiguous=True, **kw), name="strided")
    return samples


def _inplace(name):
    """``name_`` applied to a copy of the input: same op for retrograd and PyTorch."""
    fn = lambda input, *args, **kwargs: getattr(input.clone(), name)(*args, **kwargs)  # noqa: E731
    return dict(op=fn, torch_op=fn, method=True)


def _unary(name, dtypes=_WITH_INT, inplace=True, aliases=(), inplace_dtypes=None,
           error_inputs=None, inplace_grad=True, **domain):
    """The function entry, alias entries, and the in-place method entry of one op
    (``inplace_grad=False`` where PyTorch defines no derivative of the in-place form)."""
    samples = _unary_samples(**domain)
    entries = [OpInfo(name, samples, dtypes=dtypes, error_inputs=error_inputs)]
    entries += [OpInfo(a, samples, dtypes=_FLOAT) for a in aliases]
    if inplace:
        entries.append(OpInfo(name + "_", samples, dtypes=inplace_dtypes or _FLOAT,
                              supports_grad=inplace_grad, **_inplace(name + "_")))
    return entries


def _round_samples(dtype, requires_grad):
    yield from _unary_samples(-20.0, 20.0)(dtype, requires_grad)
    if numpy.dtype(dtype).kind != "f":
        return
    x = make_tensor(2, 3, dtype=dtype, low=-20, high=20, requires_grad=requires_grad)
    yield SampleInput(x, kwargs={"decimals": 1}, name="decimals=1")
    yield SampleInput(x, kwargs={"decimals": -1}, name="decimals=-1")


def _logit_samples(dtype, requires_grad):
    yield from _unary_samples(0.05, 0.95)(dtype, requires_grad)
    x = make_tensor(2, 3, dtype=dtype, low=0.0, high=1.0, requires_grad=requires_grad)
    yield SampleInput(x, args=(0.2,), name="eps")


def _nan_to_num_samples(dtype, requires_grad):
    yield from _unary_samples()(dtype, requires_grad)
    if numpy.dtype(dtype).kind != "f":
        return
    a = numpy.array([[1.5, numpy.nan, -numpy.inf], [numpy.inf, -0.5, 2.0]], dtype=dtype)
    x = retrograd.from_numpy(a).requires_grad_(requires_grad)
    yield SampleInput(x, name="nonfinite")
    yield SampleInput(x, args=(0.5, 10.0, -10.0), name="replacements")
    yield SampleInput(x, kwargs={"posinf": 3.0}, name="posinf")


def _imag_errors():
    yield ErrorInput(SampleInput(make_tensor(2, 3)), RuntimeError, name="real_input")


def _round_errors():
    yield ErrorInput(SampleInput(make_tensor(2, 3, dtype="int64"), kwargs={"decimals": 1}),
                     NotImplementedError, name="int_decimals")


def _neg_errors():
    yield ErrorInput(SampleInput(make_tensor(2, 3, dtype="bool")), RuntimeError,
                     name="bool_input")


def _frac_errors():
    yield ErrorInput(SampleInput(make_tensor(2, 3, dtype="int64")), NotImplementedError,
                     name="int_input")


_POS = dict(low=0.1, high=2.0, int_low=1, int_high=3)

OPS = [
    *_unary("neg", aliases=("negative",), inplace_dtypes=_WITH_INT, error_inputs=_neg_errors),
    *_unary("abs", aliases=("absolute",), inplace_dtypes=_WITH_INT, exclude_zero=True),
    *_unary("reciprocal", low=0.2, high=2.0, int_low=1),
    *_unary("exp"),
    *_unary("exp2"),
    *_unary("log", **_POS),
    *_unary("log2", **_POS),
    *_unary("log10", **_POS),
    *_unary("log1p", low=-0.9, high=2.0, int_low=0, int_high=3),
    *_unary("expm1"),
    *_unary("sqrt", **_POS),
    *_unary("rsqrt", **_POS),
    *_unary("square", inplace_dtypes=_WITH_INT),
    *_unary("sin"),
    *_unary("cos"),
    *_unary("tan", low=-1.2, high=1.2),
    *_unary("asin", aliases=("arcsin",), low=-0.9, high=0.9, int_low=0, int_high=0),
    *_unary("acos", aliases=("arccos",), low=-0.9, high=0.9, int_low=0, int_high=0),
    *_unary("atan", aliases=("arctan",)),
    *_unary("sinh"),
    *_unary("cosh"),
    *_unary("tanh"),
    *_unary("asinh", aliases=("arcsinh",), inplace_grad=False),
    *_unary("acosh", aliases=("arccosh",), inplace_grad=False, low=1.1, high=3.0, int_low=1,
            int_high=3),
    *_unary("atanh", aliases=("arctanh",), inplace_grad=False, low=-0.9, high=0.9, int_low=0,
            int_high=0),
    *_unary("sigmoid"),
    *_unary("relu", inplace_dtypes=_WITH_INT, exclude_zero=True),
    *_unary("erf"),
    *_unary("sign", inplace_dtypes=_WITH_INT),
    *_unary("floor", low=-5.0, high=5.0, inplace_dtypes=_WITH_INT),
    *_unary("ceil", low=-5.0, high=5.0, inplace_dtypes=_WITH_INT),
    *_unary("trunc", aliases=("fix",), low=-5.0, high=5.0, inplace_dtypes=_WITH_INT),
    *_unary("frac", dtypes=_FLOAT, low=-5.0, high=5.0, error_inputs=_frac_errors),
    OpInfo("round", _round_samples, dtypes=_WITH_INT, error_inputs=_round_errors),
    OpInfo("round_", _round_samples, **_inplace("round_")),
    OpInfo("logit", _logit_samples, dtypes=_WITH_INT),
    OpInfo("logit_", _logit_samples, **_inplace("logit_")),
    OpInfo("nan_to_num", _nan_to_num_samples, dtypes=_WITH_INT),
    OpInfo("sgn", _unary_samples(), dtypes=_WITH_INT),
    OpInfo("positive", _unary_samples(), dtypes=_WITH_INT),
    OpInfo("signbit", _unary_samples(), dtypes=_ALL, supports_grad=False),
    OpInfo("conj", _unary_samples(), dtypes=_ALL),
    OpInfo("real", _unary_samples(), dtypes=_FLOAT),
    OpInfo("angle", _unary_samples(exclude_zero=True), dtypes=_WITH_INT),
    OpInfo("imag", _unary_samples(), dtypes=(), supports_grad=False,
           error_inputs=_imag_errors),
    OpInfo("__neg__", _unary_samples(), dtypes=_WITH_INT,
           op=lambda x: -x, torch_op=lambda x: -x),
    OpInfo("__abs__", _unary_samples(exclude_zero=True), dtypes=_WITH_INT,
           op=lambda x: abs(x), torch_op=lambda x: abs(x)),
    OpInfo("__pos__", _unary_samples(), dtypes=_WITH_INT,
           op=lambda x: +x, torch_op=lambda x: +x),
]
