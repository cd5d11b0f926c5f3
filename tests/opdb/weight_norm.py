"""Op database entries for ``_weight_norm`` (fused for dim 0 and the last dim, composite
otherwise) and ``norm_except_dim``."""

from ._core import ErrorInput, OpInfo, SampleInput, make_tensor

_FLOAT = ("float32", "float64")


def _weight_norm_samples(dtype, requires_grad):
    def t(*shape):
        return make_tensor(*shape, dtype=dtype, requires_grad=requires_grad, low=0.5,
                           high=2.0)
    yield SampleInput(t(3, 4), (t(3, 1), 0), name="linear_dim0")
    yield SampleInput(t(3, 2, 2), (t(1, 1, 2), 2), name="last_dim")
    yield SampleInput(t(3, 4, 2), (t(1, 4, 1), 1), name="middle_dim_composite")
    yield SampleInput(t(3, 4), (t(), -1), name="whole_tensor")
    yield SampleInput(t(4), (t(4), 0), name="vector")


def _weight_norm_errors():
    v = make_tensor(3, 4, dtype="float64")
    yield ErrorInput(SampleInput(v, (make_tensor(3, 1), 0)), RuntimeError, "dtype_mismatch")


def _norm_except_dim_samples(dtype, requires_grad):
    def t(*shape):
        return make_tensor(*shape, dtype=dtype, requires_grad=requires_grad, low=0.5,
                           high=2.0)
    yield SampleInput(t(3, 4, 2), (2, 0), name="dim0")
    yield SampleInput(t(3, 4, 2), (2, 1), name="dim1")
    yield SampleInput(t(3, 4), (2, -1), name="whole")
    yield SampleInput(t(3, 4), (3, 1), name="pow3")
    yield SampleInput(t(4), (2, 0), name="vector")


OPS = [
    OpInfo("_weight_norm", _weight_norm_samples, dtypes=_FLOAT, atol=1e-5, rtol=1e-5,
           error_inputs=_weight_norm_errors),
    # torch reshapes around its norm (ViewBackward0); retrograd takes the norm over the
    # other dims directly (NormBackward1): values and gradients match, node names differ.
    OpInfo("norm_except_dim", _norm_except_dim_samples, dtypes=_FLOAT, atol=1e-5, rtol=1e-5,
           compare_grad_with_torch=False),
]
