"""Op database entries for the activations of ``ops/activation.py``: each function of
``nn.functional`` with its options, its in-place form (on a clone, a non-leaf), the points
where PyTorch picks a side of a kink (compared with PyTorch only), and the names PyTorch
also exposes as ``torch.<name>`` / ``Tensor.<name>``."""

import numpy

import retrograd
import retrograd.nn.functional as F

from ._core import ErrorInput, OpInfo, SampleInput, make_tensor, torch_functional as _tf

_FLOAT = ("float32", "float64")
_WITH_INT = ("float32", "float64", "int64")


def _kinks(values, dtype, requires_grad):
    """A sample at the points where the op is not differentiable."""
    x = retrograd.from_numpy(numpy.array(values, dtype=dtype))
    if numpy.dtype(dtype).kind == "f":
        x.requires_grad_(requires_grad)
    return SampleInput(x, name="kinks", nondifferentiable=True)


def _act(*kinks, low=-3.0, high=3.0, kwargs=({},)):
    """A matrix and a strided vector per kwargs; a 0-d and an empty tensor for the first;
    the kink points (sampled with the first kwargs)."""
    def samples(dtype, requires_grad):
        kw = dict(dtype=dtype, low=low, high=high, requires_grad=requires_grad)
        for i, k in enumerate(kwargs):
            tag = "_".join(f"{a}={v}" for a, v in k.items())
            yield SampleInput(make_tensor(3, 4, **kw), kwargs=k, name=f"matrix{tag}")
            if i == 0:
                yield SampleInput(make_tensor(**kw), kwargs=k, name="0d")
                yield SampleInput(make_tensor(0, 2, **kw), kwargs=k, name="empty")
            yield SampleInput(make_tensor(5, noncontiguous=True, **kw), kwargs=k,
                              name=f"strided{tag}")
        if kinks:
            s = _kinks(kinks, dtype, requires_grad)
            s.kwargs = kwargs[0]
            yield s
    return samples


def _clone_then(fn):
    """``fn`` on a copy of the input: an in-place form on a non-leaf."""
    return lambda input, *args, **kwargs: fn(input.clone(), *args, **kwargs)


def _entries(name, samples, *, inplace=None, inplace_flag=True, dtypes=_FLOAT, **kw):
    """The F entry, its ``inplace=True`` variant and its ``name_`` function
    (``inplace``: the name of that function in both namespaces)."""
    out = [OpInfo(name, samples, op=getattr(F, name), torch_op=_tf(name), dtypes=dtypes,
                  **kw)]
    if inplace_flag:
        out.append(OpInfo(name, samples, variant="inplace", dtypes=dtypes,
                          op=_clone_then(lambda x, *a, **k: getattr(F, name)(x, *a, **k,
                                                                            inplace=True)),
                          torch_op=_clone_then(lambda x, *a, **k: _tf(name)(x, *a, **k,
                                                                            inplace=True))))
    if inplace:
        out.append(OpInfo(inplace, samples, dtypes=dtypes,
                          op=_clone_then(getattr(F, inplace)),
                          torch_op=_clone_then(_tf(inplace))))
    return out


def _torch_entries(name, samples, *, method=False, dtypes=_FLOAT, **kw):
    """``torch.<name>`` (on a clone for an in-place name), and ``Tensor.<name>``."""
    if name.endswith("_"):
        import_fn = getattr(retrograd, name)
        out = [OpInfo(name, samples, dtypes=dtypes, variant="torch",
                      op=_clone_then(import_fn), torch_op=_clone_then(_torch_fn(name)), **kw)]
    else:
        out = [OpInfo(name, samples, dtypes=dtypes, variant="torch", **kw)]
    if method:
        out.append(OpInfo(name, samples, dtypes=dtypes, variant="method", method=True, **kw))
    return out


def _torch_fn(name):
    def call(*args, **kwargs):
        import torch
        return getattr(torch, name)(*args, **kwargs)
    return call


# ---- samples with operands ----------------------------------------------------------------
def _prelu_samples(dtype, requires_grad):
    def t(*shape, **kw):
        return make_tensor(*shape, dtype=dtype, requires_grad=requires_grad, **kw)
    yield SampleInput(t(2, 3, 4), (t(3, low=0.0, high=0.5),), name="channels")
    yield SampleInput(t(2, 3, 2, 2), (t(1, low=0.0, high=0.5),), name="shared")
    yield SampleInput(t(5), (t(1, low=0.0, high=0.5),), name="vector")
    yield SampleInput(t(3, 2), (t(low=0.0, high=0.5),), name="0d_weight")
    yield SampleInput(t(), (t(1, low=0.0, high=0.5),), name="0d_input")


def _glu_samples(dtype, requires_grad):
    def t(*shape):
        return make_tensor(*shape, dtype=dtype, requires_grad=requires_grad)
    yield SampleInput(t(3, 4), name="last")
    yield SampleInput(t(4, 3), (0,), name="dim0")
    yield SampleInput(t(2, 4, 3), (-2,), name="middle")
    yield SampleInput(make_tensor(2, 6, dtype=dtype, requires_grad=requires_grad,
                                  noncontiguous=True), name="strided")


def _softmin_samples(dtype, requires_grad):
    def t(*shape):
        return make_tensor(*shape, dtype=dtype, requires_grad=requires_grad)
    yield SampleInput(t(3, 4), (1,), name="dim1")
    yield SampleInput(t(2, 3, 4), (0,), name="dim0")
    yield SampleInput(t(5), (0,), {"dtype": retrograd.float64}, name="dtype")


def _softmax_samples(dtype, requires_grad):
    def t(*shape):
        return make_tensor(*shape, dtype=dtype, requires_grad=requires_grad)
    yield SampleInput(t(3, 4), (1,), name="dim1")
    yield SampleInput(t(2, 3), (0,), {"dtype": retrograd.float64}, name="dtype")


def _threshold_samples(dtype, requires_grad):
    kw = dict(dtype=dtype, low=-3, high=3, requires_grad=requires_grad)
    yield SampleInput(make_tensor(3, 4, **kw), (0.5, 2.0), name="matrix")
    yield SampleInput(make_tensor(5, noncontiguous=True, **kw), (-1.5, -7.0), name="strided")
    yield SampleInput(make_tensor(**kw), (0.0, 1.0), name="0d")
    s = _kinks([-1.0, 0.5, 2.0], dtype, requires_grad)
    s.args = (0.5, 3.0)
    yield s


def _rrelu_train(dtype, requires_grad):
    kw = dict(dtype=dtype, low=-3, high=3, requires_grad=requires_grad)
    yield SampleInput(make_tensor(3, 4, **kw), name="matrix")
    yield SampleInput(make_tensor(5, **kw), (0.2, 0.6), name="bounds")


def _seeded(fn):
    """``fn`` after reseeding: the same noise on every call (for gradcheck)."""
    def call(*args, **kwargs):
        retrograd.manual_seed(0)
        return fn(*args, **kwargs)
    return call


# ---- error inputs -------------------------------------------------------------------------
def _int_error(*args):
    def errors():
        yield ErrorInput(SampleInput(make_tensor(3, dtype="int64"), args), NotImplementedError,
                         name="int")
    return errors


def _hardtanh_errors():
    yield ErrorInput(SampleInput(make_tensor(3), (2.0, 1.0)), ValueError, name="min_gt_max")
    yield ErrorInput(SampleInput(make_tensor(3, dtype="bool")), RuntimeError, name="bool")


def _softshrink_errors():
    yield ErrorInput(SampleInput(make_tensor(3), (-1.0,)), RuntimeError, name="float32")
    yield ErrorInput(SampleInput(make_tensor(3, dtype="float64"), (-0.25,)), RuntimeError,
                     name="float64")
    yield ErrorInput(SampleInput(make_tensor(3, dtype="int64")), NotImplementedError,
                     name="int")


def _prelu_errors():
    t = make_tensor
    yield ErrorInput(SampleInput(t(2, 4, 3), (t(3),)), RuntimeError, name="channels")
    yield ErrorInput(SampleInput(t(2, 4, 3), (t(1, 1),)), RuntimeError, name="weight_2d")
    yield ErrorInput(SampleInput(t(), (t(4),)), RuntimeError, name="0d_input")
    yield ErrorInput(SampleInput(t(3), (t(3),)), RuntimeError, name="vector_channels")
    yield ErrorInput(SampleInput(t(3), (t(1, dtype="float64"),)), RuntimeError,
                     name="dtypes")
    yield ErrorInput(SampleInput(t(3, dtype="int64"), (t(1, dtype="int64"),)),
                     NotImplementedError, name="int")


def _glu_errors():
    yield ErrorInput(SampleInput(make_tensor(2, 3)), RuntimeError, name="odd_last")
    yield ErrorInput(SampleInput(make_tensor(3, 2), (0,)), RuntimeError, name="odd_dim0")
    yield ErrorInput(SampleInput(make_tensor()), RuntimeError, name="0d")
    yield ErrorInput(SampleInput(make_tensor(2, 2), (2,)), IndexError, name="dim")
    yield ErrorInput(SampleInput(make_tensor(2, dtype="int64")), NotImplementedError,
                     name="int")


def _rrelu_errors():
    yield ErrorInput(SampleInput(make_tensor(3), (0.5, 0.1)), RuntimeError, name="bounds")
    yield ErrorInput(SampleInput(make_tensor(3), (0.5, 0.1, True)), RuntimeError,
                     name="bounds_training")
    yield ErrorInput(SampleInput(make_tensor(3, dtype="int64")), NotImplementedError,
                     name="int")


def _celu_errors():
    yield ErrorInput(SampleInput(make_tensor(3), (0.0,)), RuntimeError, name="alpha0")
    yield ErrorInput(SampleInput(make_tensor(3, dtype="int64")), NotImplementedError,
                     name="int")


_kink0 = (-1.0, 0.0, 1.0)

OPS = [
    *_entries("leaky_relu", _act(*_kink0, kwargs=({}, {"negative_slope": 0.2})),
              inplace="leaky_relu_", error_inputs=_int_error()),
    *_entries("elu", _act(*_kink0, kwargs=({}, {"alpha": 0.5})), inplace="elu_",
              error_inputs=_int_error()),
    *_entries("selu", _act(*_kink0), inplace="selu_"),
    *_entries("celu", _act(*_kink0, kwargs=({}, {"alpha": 2.0})), inplace="celu_",
              error_inputs=_celu_errors),
    *_entries("relu6", _act(0.0, 6.0, low=-2, high=8), dtypes=_WITH_INT),
    *_entries("hardtanh", _act(-1.0, 1.0, kwargs=({}, {"min_val": -0.5, "max_val": 2.0})),
              inplace="hardtanh_", dtypes=_WITH_INT, error_inputs=_hardtanh_errors),
    *_entries("softplus", _act(kwargs=({}, {"beta": 2.0, "threshold": 1.5})),
              inplace_flag=False, error_inputs=_int_error()),
    *_entries("mish", _act(), error_inputs=_int_error()),
    *_entries("hardswish", _act(-3.0, 3.0, low=-4, high=4), error_inputs=_int_error()),
    *_entries("hardsigmoid", _act(-3.0, 3.0, low=-4, high=4), error_inputs=_int_error()),
    *_entries("logsigmoid", _act(), inplace_flag=False, error_inputs=_int_error()),
    *_entries("softshrink", _act(-0.5, 0.5, kwargs=({}, {"lambd": 1.0})), inplace_flag=False,
              error_inputs=_softshrink_errors),
    *_entries("hardshrink", _act(-0.5, 0.5, kwargs=({}, {"lambd": 1.0})), inplace_flag=False,
              error_inputs=_int_error()),
    *_entries("softsign", _act(), inplace_flag=False, dtypes=_WITH_INT),
    *_entries("tanhshrink", _act(), inplace_flag=False, dtypes=_WITH_INT),
    *_entries("threshold", _threshold_samples, inplace="threshold_", dtypes=_WITH_INT),
    *_entries("prelu", _prelu_samples, inplace_flag=False, error_inputs=_prelu_errors),
    *_entries("glu", _glu_samples, inplace_flag=False, error_inputs=_glu_errors),
    *_entries("softmin", _softmin_samples, inplace_flag=False),
    *_entries("rrelu", _act(*_kink0, kwargs=({}, {"lower": 0.2, "upper": 0.5})),
              inplace="rrelu_", error_inputs=_rrelu_errors),
    # Training mode draws its noise from retrograd's generator (not PyTorch's stream):
    # checked by finite differences with the same noise on every call.
    OpInfo("rrelu", _rrelu_train, variant="training", skip_torch="random noise",
           op=_seeded(lambda x, *a: F.rrelu(x, *a, training=True))),
    OpInfo("rrelu_", _rrelu_train, variant="training", skip_torch="random noise",
           op=_seeded(_clone_then(lambda x, *a: F.rrelu_(x, *a, training=True)))),
    # F.silu's own entry is in nn.py; its inplace=True form is here
    _entries("silu", _act())[1],
    *_torch_entries("selu", _act()),
    *_torch_entries("selu_", _act()),
    *_torch_entries("celu", _act(kwargs=({"alpha": 0.5},))),
    *_torch_entries("celu_", _act(kwargs=({"alpha": 0.5},))),
    *_torch_entries("rrelu", _act()),
    *_torch_entries("rrelu_", _act()),
    *_torch_entries("threshold", _threshold_samples, dtypes=_WITH_INT),
    *_torch_entries("threshold_", _threshold_samples),
    *_torch_entries("relu_", _act()),
    *_torch_entries("hardshrink", _act(kwargs=({"lambd": 1.0},)), method=True),
    *_torch_entries("prelu", _prelu_samples, method=True),
    *_torch_entries("softmax", _softmax_samples, method=True),
    *_torch_entries("log_softmax", _softmax_samples, method=True),
]
