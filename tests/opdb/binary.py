"""Op database entries for the binary ops and operators of ``ops/binary.py``.

Samples broadcast both ways, mix tensors with 0-d tensors and Python scalars,
and mix dtypes (int with float, float32 with float64) so type promotion is
compared with PyTorch; in-place forms run on a clone (a non-leaf), with the
operand shapes an in-place write allows.
"""

import operator

import numpy

import retrograd

from ._core import ErrorInput, OpInfo, SampleInput, make_tensor

_FLOAT = ("float32", "float64")
_WITH_INT = ("float32", "float64", "int64")
_ALL = ("float32", "float64", "int64", "bool")


def _is_int(dtype):
    return numpy.dtype(dtype).kind in "biu"


def _other_dtype(dtype):
    """A dtype of another category (int beside float, float beside int)."""
    return "float32" if _is_int(dtype) else "int64"


def _binary_samples(low=-2.0, high=2.0, other_low=None, other_high=None, nonzero_other=False,
                    scalars=(1.5, 2), inplace=False):
    """``op(self, other)`` samples; ``inplace`` keeps only those an in-place write allows
    (``self`` has the broadcast shape and the higher dtype)."""
    olow = low if other_low is None else other_low
    ohigh = high if other_high is None else other_high

    def samples(dtype, requires_grad):
        def a(*shape, **kw):
            return make_tensor(*shape, dtype=dtype, low=low, high=high,
                               requires_grad=requires_grad, **kw)

        def b(*shape, dtype=dtype):
            return make_tensor(*shape, dtype=dtype, low=olow, high=ohigh,
                               requires_grad=requires_grad, exclude_zero=nonzero_other)

        yield SampleInput(a(2, 3), args=(b(2, 3),), name="same_shape")
        yield SampleInput(a(2, 3), args=(b(3),), name="broadcast_other")
        yield SampleInput(a(2, 3), args=(b(),), name="0d_other")
        yield SampleInput(a(3, 2, noncontiguous=True), args=(b(3, 2),), name="strided")
        for s in scalars:
            if inplace and _is_int(dtype) and not isinstance(s, int):
                continue  # a float result cannot be written into an integer tensor
            yield SampleInput(a(2, 3), args=(s,), name=f"scalar_{type(s).__name__}")
        if not _is_int(dtype):
            yield SampleInput(a(2, 3), args=(b(3, dtype=_other_dtype(dtype)),),
                              name="int_other")
        if inplace:
            return
        yield SampleInput(a(3), args=(b(2, 3),), name="broadcast_self")
        yield SampleInput(a(3, 1), args=(b(1, 2),), name="broadcast_both")
        yield SampleInput(a(), args=(b(2, 3),), name="0d_self")
        if _is_int(dtype):
            yield SampleInput(a(2, 3), args=(b(3, dtype="float32"),), name="float_other")
            yield SampleInput(a(2, 3), args=(b(dtype="float64"),), name="float_0d_other")
        else:
            wider = "float32" if dtype == "float64" else "float64"
            yield SampleInput(a(2, 3), args=(b(2, 3, dtype=wider),), name=f"{wider}_other")
            yield SampleInput(a(2, 3), args=(b(dtype=wider),), name=f"{wider}_0d_other")
    return samples


def _inplace(name):
    fn = lambda input, *args, **kwargs: getattr(input.clone(), name)(*args, **kwargs)  # noqa: E731
    return dict(op=fn, torch_op=fn, method=True)


def _same(fn):
    """An entry whose call is written with operators: identical for both libraries."""
    return dict(op=fn, torch_op=fn)


def _binary(name, dtypes=_WITH_INT, aliases=(), inplace=True, inplace_aliases=(),
            inplace_dtypes=None, error_inputs=None, **domain):
    samples = _binary_samples(**domain)
    entries = [OpInfo(name, samples, dtypes=dtypes, error_inputs=error_inputs)]
    entries += [OpInfo(a, samples, dtypes=_FLOAT) for a in aliases]
    if inplace:
        ip = _binary_samples(inplace=True, **domain)
        entries += [OpInfo(n + "_", ip, dtypes=inplace_dtypes or dtypes, **_inplace(n + "_"))
                    for n in (name, *inplace_aliases)]
    return entries


def _with_kwargs(base, **kwargs):
    """``base``'s samples with extra keyword arguments."""
    def samples(dtype, requires_grad):
        for s in base(dtype, requires_grad):
            yield SampleInput(s.input, s.args, {**s.kwargs, **kwargs},
                              name=f"{s.name}-" + ",".join(f"{k}={v}" for k, v in kwargs.items()))
    return samples


def _alpha_samples(inplace=False):
    base = _binary_samples(inplace=inplace)

    def samples(dtype, requires_grad):
        yield from base(dtype, requires_grad)
        if dtype != "bool":
            yield from _with_kwargs(base, alpha=2)(dtype, requires_grad)
        if not _is_int(dtype):
            yield from _with_kwargs(base, alpha=0.5)(dtype, requires_grad)
    return samples


def _broadcast_error(op_args=1):
    """Operands whose shapes do not broadcast: PyTorch's RuntimeError."""
    def errors():
        others = tuple(make_tensor(4) for _ in range(op_args))
        yield ErrorInput(SampleInput(make_tensor(2, 3), args=others), name="no_broadcast")
    return errors


def _add_errors():
    yield from _broadcast_error()()
    x = make_tensor(2, dtype="int64")
    yield ErrorInput(SampleInput(x, args=(x,), kwargs={"alpha": 0.5}),
                     name="float_alpha_int_tensor")
    y = make_tensor(2)
    yield ErrorInput(SampleInput(y, args=(y,), kwargs={"alpha": True}), name="bool_alpha")
    yield ErrorInput(SampleInput(y, args=(y,), kwargs={"alpha": 1j}), name="complex_alpha")
    yield ErrorInput(SampleInput(x, args=(x,), kwargs={"alpha": 1j}),
                     name="complex_alpha_int_tensor")


def _sub_errors():
    yield from _add_errors()
    x = make_tensor(2, dtype="bool")
    yield ErrorInput(SampleInput(x, args=(x,)), name="bool")


def _inplace_errors():
    yield ErrorInput(SampleInput(make_tensor(3), args=(make_tensor(2, 3),)),
                     name="output_shape")
    yield ErrorInput(SampleInput(make_tensor(3, dtype="int64"), args=(make_tensor(3),)),
                     name="cannot_cast")


def _add_inplace_errors():
    yield from _inplace_errors()
    y = make_tensor(2)
    yield ErrorInput(SampleInput(y, args=(y,), kwargs={"alpha": 1j}), name="complex_alpha")


def _div_errors():
    yield ErrorInput(SampleInput(make_tensor(3), args=(make_tensor(3),),
                                 kwargs={"rounding_mode": "round"}), name="rounding_mode")


def _int_zero_division():
    x = make_tensor(3, dtype="int64")
    yield ErrorInput(SampleInput(x, args=(retrograd.zeros(3, dtype=retrograd.int64),)),
                     name="zero_division")


# ---- pow ----------------------------------------------------------------------------------

def _pow_samples(dtype, requires_grad):
    kw = dict(dtype=dtype, requires_grad=requires_grad)
    pos = make_tensor(2, 3, low=0.5, high=2.0, **kw)
    if _is_int(dtype):
        yield SampleInput(make_tensor(2, 3, low=-3, high=3, **kw), args=(2,), name="int_square")
        yield SampleInput(make_tensor(2, 3, low=0, high=3, **kw),
                          args=(make_tensor(3, low=0, high=3, **kw),), name="int_tensor")
        yield SampleInput(pos, args=(0.5,), name="float_exponent")
        return
    for e in (2, 3, 0.5, -1.5, 0, 1):
        yield SampleInput(pos, args=(e,), name=f"exponent_{e}")
    yield SampleInput(make_tensor(2, 3, **kw), args=(3,), name="negative_base_cube")
    yield SampleInput(pos, args=(make_tensor(2, 3, low=-2, high=2, **kw),), name="tensor")
    yield SampleInput(pos, args=(make_tensor(3, low=-2, high=2, **kw),), name="broadcast")
    yield SampleInput(make_tensor(3, low=0.5, high=2.0, **kw),
                      args=(make_tensor(2, 1, low=-2, high=2, **kw),), name="broadcast_self")
    yield SampleInput(pos, args=(make_tensor(low=-2, high=2, **kw),), name="0d_exponent")
    yield SampleInput(pos, args=(make_tensor(3, dtype="int64", low=0, high=3),),
                      name="int_exponent_tensor")


def _pow_inplace_samples(dtype, requires_grad):
    for s in _pow_samples(dtype, requires_grad):
        if s.name not in ("broadcast_self",) and not (
                _is_int(dtype) and isinstance(s.args[0], float)):
            yield s


def _scalar_base_samples(dtype, requires_grad):
    """``pow(base, exponent)`` with a Python number base: the tensor is the exponent."""
    low = 0 if _is_int(dtype) else -2  # PyTorch gives 0 for int ** negative int; NumPy raises
    x = make_tensor(2, 3, dtype=dtype, low=low, high=2, requires_grad=requires_grad)
    yield SampleInput(x, args=(2.0,), name="float_base")
    yield SampleInput(x, args=(3,), name="int_base")


def _pow_errors():
    x = make_tensor(3, dtype="int64", low=1, high=3)
    yield ErrorInput(SampleInput(x, args=(-1,)), name="int_negative_power")


def _float_power_samples(dtype, requires_grad):
    kw = dict(dtype=dtype, requires_grad=requires_grad)
    pos = make_tensor(2, 3, low=0.5, high=2.0, **kw)
    yield SampleInput(pos, args=(2,), name="int_exponent")
    yield SampleInput(pos, args=(0.5,), name="float_exponent")
    yield SampleInput(pos, args=(make_tensor(3, low=-2, high=2, **kw),), name="tensor")


# ---- comparisons of values: maximum, minimum, fmax, fmin ----------------------------------

def _tensor_only_errors(name):
    """Overloads without a Python number operand: PyTorch's TypeError."""
    def errors():
        yield ErrorInput(SampleInput(make_tensor(2, 3), args=(1.5,)), TypeError,
                         name="scalar_other")
    return errors


def _extremum_samples(nan=False):
    base = _binary_samples(scalars=())

    def samples(dtype, requires_grad):
        yield from base(dtype, requires_grad)
        if _is_int(dtype):
            return
        x = make_tensor(2, 3, dtype=dtype)
        y = make_tensor(2, 3, dtype=dtype)
        y._data[0] = x._data[0]  # ties: gradient split evenly, as PyTorch
        yield SampleInput(x.requires_grad_(requires_grad), args=(y.requires_grad_(requires_grad),),
                          name="ties", nondifferentiable=True)
        if nan:
            x = make_tensor(2, 3, dtype=dtype)
            y = make_tensor(2, 3, dtype=dtype)
            x._data[0, 0] = y._data[1, 1] = numpy.nan
            yield SampleInput(x.requires_grad_(requires_grad),
                              args=(y.requires_grad_(requires_grad),), name="nan",
                              nondifferentiable=True)
    return samples


# ---- where, clamp, lerp, addcmul, addcdiv -------------------------------------------------

def _where_samples(dtype, requires_grad):
    kw = dict(dtype=dtype, requires_grad=requires_grad)

    def cond(*shape):
        return make_tensor(*shape, dtype="bool")
    yield SampleInput(cond(2, 3), args=(make_tensor(2, 3, **kw), make_tensor(2, 3, **kw)),
                      name="same_shape")
    yield SampleInput(cond(3), args=(make_tensor(2, 1, **kw), make_tensor(**kw)),
                      name="broadcast")
    yield SampleInput(cond(2, 3), args=(make_tensor(3, **kw), 0.5), name="scalar_other")
    yield SampleInput(cond(2, 3), args=(2, make_tensor(2, 3, **kw)), name="scalar_self")
    other = "int64" if not _is_int(dtype) else "float32"
    yield SampleInput(cond(2, 3), args=(make_tensor(2, 3, **kw),
                                        make_tensor(3, dtype=other, requires_grad=requires_grad)),
                      name=f"{other}_other")


def _where_errors():
    yield ErrorInput(SampleInput(make_tensor(2, 3, dtype="bool"),
                                 args=(make_tensor(3), make_tensor(4))), name="no_broadcast")


def _clamp_samples(inplace=False):
    def samples(dtype, requires_grad):
        kw = dict(dtype=dtype, requires_grad=requires_grad)
        x = make_tensor(2, 3, low=-3, high=3, **kw)
        lo, hi = (-1, 1) if _is_int(dtype) else (-1.0, 1.5)
        yield SampleInput(x, args=(lo, hi), name="scalars")
        yield SampleInput(x, args=(lo,), name="min_only")
        yield SampleInput(x, kwargs={"max": hi}, name="max_only")
        yield SampleInput(x, args=(hi, lo), name="min_above_max")
        yield SampleInput(make_tensor(low=-3, high=3, **kw), args=(lo, hi), name="0d")
        yield SampleInput(x, args=(make_tensor(3, low=-2, high=0, **kw),
                                   make_tensor(2, 1, low=0, high=2, **kw)), name="tensors")
        yield SampleInput(x, args=(make_tensor(3, low=-2, high=0, **kw),), name="tensor_min")
        yield SampleInput(x, kwargs={"max": make_tensor(3, low=-1, high=1, **kw)},
                          name="tensor_max")
        yield SampleInput(x, args=(make_tensor(3, low=0, high=2, **kw),
                                   make_tensor(3, low=-2, high=0, **kw)),
                          name="tensor_min_above_max")
        if not _is_int(dtype) and not inplace:
            yield SampleInput(make_tensor(2, 3, dtype="int64", low=-3, high=3),
                              args=(-1.5, 1.5), name="int_tensor_float_bounds")
    return samples


def _clamp_errors():
    yield ErrorInput(SampleInput(make_tensor(3)), name="no_bounds")


def _clamp_one_samples(bound):
    def samples(dtype, requires_grad):
        kw = dict(dtype=dtype, requires_grad=requires_grad)
        x = make_tensor(2, 3, low=-3, high=3, **kw)
        yield SampleInput(x, args=(1 if _is_int(dtype) else 0.5,), name="scalar")
        yield SampleInput(x, args=(make_tensor(3, low=-2, high=2, **kw),), name="tensor")
    return samples


def _lerp_samples(inplace=False):
    def samples(dtype, requires_grad):
        kw = dict(dtype=dtype, requires_grad=requires_grad)
        x = make_tensor(2, 3, **kw)
        yield SampleInput(x, args=(make_tensor(2, 3, **kw), 0.3), name="scalar_weight")
        yield SampleInput(x, args=(make_tensor(3, **kw), make_tensor(2, 3, low=0, high=1, **kw)),
                          name="tensor_weight")
        yield SampleInput(x, args=(make_tensor(**kw), make_tensor(3, low=0, high=1, **kw)),
                          name="broadcast")
        if not inplace:
            yield SampleInput(make_tensor(3, **kw), args=(make_tensor(2, 1, **kw), 0.7),
                              name="broadcast_self")
    return samples


def _addc_samples(nonzero=False, inplace=False):
    def samples(dtype, requires_grad):
        kw = dict(dtype=dtype, requires_grad=requires_grad)
        t2 = dict(kw, exclude_zero=nonzero, low=0.5 if nonzero else -2.0)
        x = make_tensor(2, 3, **kw)
        yield SampleInput(x, args=(make_tensor(2, 3, **kw), make_tensor(2, 3, **t2)),
                          name="same_shape")
        yield SampleInput(x, args=(make_tensor(3, **kw), make_tensor(2, 1, **t2)),
                          kwargs={"value": 3 if _is_int(dtype) else 0.5}, name="broadcast_value")
        yield SampleInput(x, args=(make_tensor(**kw), make_tensor(3, **t2)),
                          kwargs={"value": 2}, name="0d")
        if not inplace:
            yield SampleInput(make_tensor(3, **kw),
                              args=(make_tensor(2, 1, **kw), make_tensor(3, **t2)),
                              name="broadcast_self")
    return samples


# ---- atan2, hypot, xlogy ------------------------------------------------------------------

def _xlogy_samples(dtype, requires_grad):
    kw = dict(dtype=dtype, requires_grad=requires_grad)
    x = make_tensor(2, 3, **kw)
    yield SampleInput(x, args=(make_tensor(2, 3, low=0.2, high=2, **kw),), name="same_shape")
    yield SampleInput(x, args=(make_tensor(3, low=0.2, high=2, **kw),), name="broadcast")
    yield SampleInput(x, args=(1.5,), name="scalar_other")
    z = make_tensor(2, 3, **kw)
    z._data[0, :2] = 0  # 0 * log(y) is 0
    yield SampleInput(z, args=(make_tensor(2, 3, low=0.2, high=2, **kw),), name="zeros")


def _swapped(name):
    """``name(scalar, tensor)``: the sample's tensor is the second operand."""
    def torch_fn(x, s, **kwargs):
        import torch
        return getattr(torch, name)(s, x, **kwargs)
    return dict(op=lambda x, s, **kwargs: getattr(retrograd, name)(s, x, **kwargs),
                torch_op=torch_fn)


def _scalar_samples(*values, low=-2.0, high=2.0, exclude_zero=False):
    def samples(dtype, requires_grad):
        x = make_tensor(2, 3, dtype=dtype, low=low, high=high, requires_grad=requires_grad,
                        exclude_zero=exclude_zero)
        for v in values:
            yield SampleInput(x, args=(v,), name=f"scalar_{type(v).__name__}")
    return samples


def _operator_entries(name, fn, ifn, samples, reflected_samples, inplace_samples,
                      grad=(True, True, True)):
    """``x <op> y``, ``scalar <op> x`` and ``x <op>= y``, written with Python operators;
    ``grad`` says which of the three PyTorch differentiates."""
    def inplace(x, y):
        x = x.clone()
        x = ifn(x, y)
        return x
    return [OpInfo(f"__{name}__", samples, dtypes=_WITH_INT, supports_grad=grad[0], **_same(fn)),
            OpInfo(f"__r{name}__", reflected_samples, dtypes=_WITH_INT, supports_grad=grad[1],
                   **_same(lambda x, s: fn(s, x))),
            OpInfo(f"__i{name}__", inplace_samples, dtypes=_FLOAT, supports_grad=grad[2],
                   **_same(inplace))]


_NONZERO = dict(nonzero_other=True)
_DIVISOR = dict(other_low=0.5, other_high=2.0, nonzero_other=True, scalars=(1.5, 2))
_DIVISOR_SCALARS = _scalar_samples(1.5, 2, low=0.5, exclude_zero=True)  # number / tensor

OPS = [
    OpInfo("add", _alpha_samples(), dtypes=_ALL, error_inputs=_add_errors),
    OpInfo("add_", _alpha_samples(inplace=True), dtypes=_WITH_INT,
           error_inputs=_add_inplace_errors,
           **_inplace("add_")),
    OpInfo("sub", _alpha_samples(), dtypes=_WITH_INT, error_inputs=_sub_errors),
    OpInfo("subtract", _binary_samples(), dtypes=_FLOAT),
    OpInfo("sub_", _alpha_samples(inplace=True), dtypes=_WITH_INT, **_inplace("sub_")),
    OpInfo("rsub", _alpha_samples(), dtypes=_WITH_INT),
    *_binary("mul", dtypes=_ALL, aliases=("multiply",), inplace_aliases=("multiply",),
             inplace_dtypes=_WITH_INT),
    *_binary("div", aliases=("divide", "true_divide"), error_inputs=_div_errors,
             inplace_aliases=("divide", "true_divide"), inplace_dtypes=_FLOAT, **_DIVISOR),
    OpInfo("div", _with_kwargs(_binary_samples(**_DIVISOR), rounding_mode="trunc"),
           variant="trunc", dtypes=_WITH_INT),
    OpInfo("div", _with_kwargs(_binary_samples(**_DIVISOR), rounding_mode="floor"),
           variant="floor", dtypes=_WITH_INT),
    OpInfo("div_", _with_kwargs(_binary_samples(inplace=True, **_DIVISOR),
                                rounding_mode="floor"),
           variant="floor", dtypes=_WITH_INT, **_inplace("div_")),
    # PyTorch defines no derivative of floor_divide (nor of number % tensor).
    OpInfo("floor_divide", _binary_samples(**_DIVISOR), supports_grad=False,
           error_inputs=_int_zero_division),
    OpInfo("floor_divide_", _binary_samples(inplace=True, **_DIVISOR), supports_grad=False,
           **_inplace("floor_divide_")),
    *_binary("remainder", error_inputs=_int_zero_division, **_DIVISOR),
    *_binary("fmod", **_DIVISOR),
    OpInfo("pow", _pow_samples, dtypes=_WITH_INT, error_inputs=_pow_errors),
    OpInfo("pow", _scalar_base_samples, variant="scalar_base", dtypes=_WITH_INT,
           **_swapped("pow")),
    OpInfo("pow_", _pow_inplace_samples, dtypes=_WITH_INT, **_inplace("pow_")),
    OpInfo("float_power", _float_power_samples, dtypes=_WITH_INT),
    *(OpInfo(n, _extremum_samples(nan=True), dtypes=_WITH_INT,
             error_inputs=_tensor_only_errors(n)) for n in ("maximum", "minimum", "fmax", "fmin")),
    OpInfo("where", _where_samples, dtypes=_ALL, error_inputs=_where_errors),
    OpInfo("clamp", _clamp_samples(), dtypes=_WITH_INT, error_inputs=_clamp_errors),
    OpInfo("clip", _clamp_samples(), dtypes=_FLOAT),
    OpInfo("clamp_", _clamp_samples(inplace=True), dtypes=_WITH_INT, **_inplace("clamp_")),
    OpInfo("clip_", _clamp_samples(inplace=True), dtypes=_FLOAT, **_inplace("clip_")),
    OpInfo("clamp_min", _clamp_one_samples("min"), dtypes=_WITH_INT),
    OpInfo("clamp_max", _clamp_one_samples("max"), dtypes=_WITH_INT),
    OpInfo("clamp_min_", _clamp_one_samples("min"), dtypes=_FLOAT, **_inplace("clamp_min_")),
    OpInfo("clamp_max_", _clamp_one_samples("max"), dtypes=_FLOAT, **_inplace("clamp_max_")),
    OpInfo("lerp", _lerp_samples(), dtypes=_FLOAT),
    OpInfo("lerp_", _lerp_samples(inplace=True), dtypes=_FLOAT, **_inplace("lerp_")),
    OpInfo("addcmul", _addc_samples(), dtypes=_WITH_INT),
    OpInfo("addcmul_", _addc_samples(inplace=True), dtypes=_FLOAT, **_inplace("addcmul_")),
    OpInfo("addcdiv", _addc_samples(nonzero=True), dtypes=_FLOAT),
    OpInfo("addcdiv_", _addc_samples(nonzero=True, inplace=True), dtypes=_FLOAT,
           **_inplace("addcdiv_")),
    *_binary("atan2", aliases=("arctan2",), inplace=False, scalars=(),
             error_inputs=_tensor_only_errors("atan2"), **_NONZERO),
    *_binary("hypot", dtypes=_FLOAT, inplace=False, scalars=(),
             error_inputs=_tensor_only_errors("hypot"), **_NONZERO),
    OpInfo("xlogy", _xlogy_samples, dtypes=_WITH_INT),
    OpInfo("xlogy", _scalar_samples(2.0, 0.0, low=0.2), variant="scalar_self", dtypes=_WITH_INT,
           **_swapped("xlogy")),
    *_operator_entries("add", operator.add, operator.iadd, _binary_samples(),
                       _scalar_samples(1.5, 2), _binary_samples(inplace=True)),
    *_operator_entries("sub", operator.sub, operator.isub, _binary_samples(),
                       _scalar_samples(1.5, 2), _binary_samples(inplace=True)),
    *_operator_entries("mul", operator.mul, operator.imul, _binary_samples(),
                       _scalar_samples(1.5, 2), _binary_samples(inplace=True)),
    *_operator_entries("truediv", operator.truediv, operator.itruediv,
                       _binary_samples(**_DIVISOR), _DIVISOR_SCALARS,
                       _binary_samples(inplace=True, **_DIVISOR)),
    *_operator_entries("floordiv", operator.floordiv, operator.ifloordiv,
                       _binary_samples(**_DIVISOR), _DIVISOR_SCALARS,
                       _binary_samples(inplace=True, **_DIVISOR), grad=(False, False, False)),
    *_operator_entries("mod", operator.mod, operator.imod, _binary_samples(**_DIVISOR),
                       _DIVISOR_SCALARS, _binary_samples(inplace=True, **_DIVISOR),
                       grad=(True, False, True)),
    *_operator_entries("pow", operator.pow, operator.ipow, _scalar_samples(2, 0.5, low=0.5),
                       _scalar_samples(2.0, 3, low=0),
                       _binary_samples(inplace=True, low=0.5, high=2.0, scalars=(2, 0.5))),
]
