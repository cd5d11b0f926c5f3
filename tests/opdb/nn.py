"""Op database entries for ``nn.functional`` (the kernels of ``ops/nn_ops.py``,
``ops/convolution.py`` and ``ops/pooling.py``): small shapes covering each op's options
(strides, padding, groups, reductions, weights, ignored targets), so gradcheck stays quick."""

import numpy

import retrograd
import retrograd.nn.functional as F
from retrograd.ops import nn_ops as _nn_ops

from ._core import (ErrorInput, OpInfo, SampleInput, make_tensor, rng, maker as _maker,
                   torch_functional as _tf)

_FLOAT = ("float32", "float64")


def _fixed(*shape, low=0.5, high=2.0, dtype="float64"):
    return make_tensor(*shape, dtype=dtype, low=low, high=high)


def _targets(shape, classes, ignore=False):
    t = rng.integers(0, classes, shape)
    if ignore and t.size:
        t.flat[::3] = -100
    return retrograd.from_numpy(t)


def _softmax_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    for dim in (0, 1, -1):
        yield SampleInput(t(2, 3, 4), (dim,), name=f"dim{dim}")
    yield SampleInput(t(5), (0,), name="vector")
    yield SampleInput(t(3, 4, noncontiguous=True), (1,), name="strided")


def _safe_softmax_samples(dtype, requires_grad):
    yield from _softmax_samples(dtype, requires_grad)
    inf, nan = numpy.inf, numpy.nan
    rows = numpy.array([[-inf, -inf, -inf, -inf], [0.5, -inf, 2.0, -inf],
                        [-inf, nan, -inf, -inf], [1.0, -1.0, 0.25, 3.0]], dtype)
    # (-inf inputs: gradients compared with PyTorch's, not with finite differences)
    for dim in (-1, 0):
        yield SampleInput(retrograd.tensor(rows, requires_grad=requires_grad), (dim,),
                          name=f"infinite_dim{dim}", nondifferentiable=True)


def _causal_softmax_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    yield SampleInput(t(2, 3, 4, 5), name="wide")
    yield SampleInput(t(3, 3), name="square")
    yield SampleInput(t(2, 6, 2), name="tall")
    yield SampleInput(t(2, 4, 6, noncontiguous=True), name="strided")
    rows = numpy.full((2, 4, 4), 0.5, dtype)
    rows[0, 0, 0] = rows[1, 2, :2] = -numpy.inf  # (queries whose seen keys are all -inf)
    rows[1, 3, 1] = numpy.nan
    rows[0, 2, 1] = numpy.inf  # (NaN rows: the later keys NaN too)
    yield SampleInput(retrograd.tensor(rows, requires_grad=requires_grad), name="infinite",
                      nondifferentiable=True)


def _masked_softmax_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    keep = numpy.random.default_rng(3).random((4, 5)) > 0.4
    keep[1] = False  # (a query that sees no key)
    yield SampleInput(t(2, 3, 4, 5), (retrograd.from_numpy(keep),), name="matrix_mask")
    yield SampleInput(t(2, 4, 6, noncontiguous=True), (retrograd.from_numpy(keep[:, :1]),),
                      name="strided_column_mask")
    yield SampleInput(t(4, 5), (retrograd.from_numpy(keep[2]),), name="row_mask")
    rows = numpy.full((2, 4, 5), 0.5, dtype)
    rows[0, 0, keep[0]] = -numpy.inf  # (a query whose kept keys are all -inf)
    rows[1, 2, 1] = numpy.nan
    rows[0, 3, 4] = numpy.inf
    yield SampleInput(retrograd.tensor(rows, requires_grad=requires_grad),
                      (retrograd.from_numpy(keep),), name="infinite", nondifferentiable=True)


def _torch_masked_softmax(x, keep):
    """PyTorch's sdpa with a boolean mask: -inf where it is False, the safe softmax."""
    return __import__("torch")._safe_softmax(x.masked_fill(~keep, -numpy.inf), -1)


def _torch_causal_softmax(x):
    """PyTorch's sdpa with ``is_causal``: the later keys filled with -inf, the safe
    softmax."""
    torch = __import__("torch")
    hidden = torch.ones(x.shape[-2:], dtype=torch.bool).triu(1)
    return torch._safe_softmax(x.masked_fill(hidden, -numpy.inf), -1)


def _conv2d_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    yield SampleInput(t(2, 2, 5, 5), (t(3, 2, 3, 3), t(3)), name="basic")
    yield SampleInput(t(1, 2, 6, 5), (t(2, 2, 3, 2),), {"stride": 2, "padding": 1},
                      name="stride_pad")
    yield SampleInput(t(1, 2, 6, 6), (t(2, 2, 2, 2), t(2)), {"dilation": 2}, name="dilation")
    yield SampleInput(t(1, 4, 4, 4), (t(4, 2, 3, 3), t(4)), {"groups": 2, "padding": 1},
                      name="groups")
    yield SampleInput(t(2, 4, 4), (t(2, 2, 3, 3),), name="unbatched")


def _conv1d_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    yield SampleInput(t(2, 2, 7), (t(3, 2, 3), t(3)), name="basic")
    yield SampleInput(t(1, 4, 8), (t(4, 2, 3),), {"stride": 2, "padding": 2, "dilation": 2,
                                                  "groups": 2}, name="options")


def _conv_t_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    yield SampleInput(t(1, 2, 3, 4), (t(2, 3, 3, 3), t(3)), name="basic")
    yield SampleInput(t(2, 2, 3, 3), (t(2, 2, 3, 3),), {"stride": 2, "padding": 1,
                                                        "output_padding": 1}, name="stride")
    yield SampleInput(t(1, 4, 3, 3), (t(4, 1, 2, 2), t(2)), {"groups": 2, "dilation": 2},
                      name="groups")


def _convolution_samples(dtype, requires_grad):
    """``torch.convolution``'s own arguments (stride, padding, dilation, transposed,
    output_padding, groups): each layout the NumPy kernels take, and a 3-D one they do not."""
    t = _maker(dtype, requires_grad)
    one, zero = (1, 1), (0, 0)
    yield SampleInput(t(2, 2, 5, 5), (t(3, 2, 3, 3), t(3), one, one, one, False, zero, 1),
                      name="2d")
    yield SampleInput(t(2, 4, 6, 6), (t(4, 1, 3, 3), None, (2, 2), one, one, False, zero, 4),
                      name="depthwise")
    yield SampleInput(t(1, 2, 3, 4), (t(2, 3, 3, 3), t(3), (2, 2), one, one, True, one, 1),
                      name="transposed")
    yield SampleInput(t(2, 4, 7), (t(4, 2, 3), t(4), (2,), (1,), (2,), False, (0,), 2),
                      name="1d_groups")
    yield SampleInput(t(1, 2, 3, 3, 3), (t(2, 2, 2, 2, 2), None, (1, 1, 1), (0, 0, 0),
                                         (1, 1, 1), False, (0, 0, 0), 1), name="3d")


def _pool_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    yield SampleInput(t(2, 2, 4, 4), (2,), name="k2")
    yield SampleInput(t(1, 2, 5, 6), (3, 2, 1), name="overlap_pad")
    yield SampleInput(t(2, 5, 5), (2,), {"ceil_mode": True}, name="ceil_unbatched")


def _max_pool_samples(dtype, requires_grad):
    yield from _pool_samples(dtype, requires_grad)
    t = _maker(dtype, requires_grad)
    yield SampleInput(t(1, 1, 6, 6), (2, 1, 0, 2), name="dilation")
    yield SampleInput(t(2, 3, 5, 7), (2,), name="k2_odd")  # floor mode crops a row, a column


def _avg_pool_samples(dtype, requires_grad):
    yield from _pool_samples(dtype, requires_grad)
    t = _maker(dtype, requires_grad)
    yield SampleInput(t(1, 2, 5, 5), (3, 2, 1), {"count_include_pad": False}, name="no_pad")


def _adaptive_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    yield SampleInput(t(2, 2, 5, 7), ((2, 3),), name="uneven")
    yield SampleInput(t(1, 2, 4, 4), (2,), name="even")
    yield SampleInput(t(2, 3, 3), (1,), name="global")


def _layer_norm_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    yield SampleInput(t(3, 4), ((4,), t(4), t(4)), name="affine")
    yield SampleInput(t(2, 3, 4), ((3, 4),), name="plain")


def _group_norm_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    yield SampleInput(t(2, 4, 3), (2, t(4), t(4)), name="affine")
    yield SampleInput(t(2, 6, 2, 2), (3,), name="plain")


def _batch_norm_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    yield SampleInput(t(4, 3), (None, None, t(3), t(3), True), name="train_2d")
    yield SampleInput(t(3, 2, 4), (None, None), {"training": True}, name="train_3d")
    rm = make_tensor(2, dtype=dtype)
    rv = make_tensor(2, dtype=dtype, low=0.5, high=2.0)
    yield SampleInput(t(2, 2, 2, 3), (rm, rv, t(2), t(2)), name="eval")
    yield SampleInput(t(5, 2), (rm, rv, t(2), t(2)), name="eval_2d")


def _instance_norm_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    yield SampleInput(t(2, 3, 4), name="plain")
    yield SampleInput(t(2, 2, 3, 2), (None, None, t(2), t(2)), name="affine")


def _rms_norm_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    yield SampleInput(t(3, 4), ((4,), t(4)), name="affine")
    yield SampleInput(t(2, 3, 4), ((3, 4),), {"eps": 1e-3}, name="plain")


def _lrn_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    yield SampleInput(t(2, 5, 3), (3,), name="1d")
    yield SampleInput(t(1, 4, 2, 3), (2,), {"alpha": 0.5, "beta": 0.7, "k": 2.0}, name="2d")


def _act_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    yield SampleInput(t(3, 4, low=-4, high=4), name="matrix")
    yield SampleInput(t(4, noncontiguous=True), name="strided")


def _gelu_samples(dtype, requires_grad):
    yield from _act_samples(dtype, requires_grad)
    yield SampleInput(_maker(dtype, requires_grad)(5), (), {"approximate": "tanh"}, name="tanh")


def _embedding_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    yield SampleInput(_targets((2, 3), 4), (t(4, 3),), name="basic")
    yield SampleInput(_targets((5,), 4), (t(4, 2),), {"padding_idx": 1}, name="padding")


def _embedding_bag_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    offsets = retrograd.tensor([0, 2, 2])  # (an empty bag in the middle)
    for mode in ("mean", "sum", "max"):
        yield SampleInput(_targets((6,), 5), (t(5, 3), offsets), {"mode": mode}, name=mode)
    yield SampleInput(_targets((2, 4), 5), (t(5, 3),), {"mode": "max"}, name="fixed_bags")
    yield SampleInput(_targets((5,), 4), (t(4, 2), retrograd.tensor([0, 3])),
                      {"mode": "sum", "per_sample_weights": t(5)}, name="per_sample_weights")
    yield SampleInput(_targets((6,), 4), (t(4, 2), retrograd.tensor([0, 1, 6])),
                      {"padding_idx": 1, "include_last_offset": True}, name="padding_last")


def _linear_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    yield SampleInput(t(3, 4), (t(2, 4), t(2)), name="addmm")
    yield SampleInput(t(2, 3, 4), (t(2, 4), t(2)), name="batched")
    yield SampleInput(t(3, 4), (t(2, 4),), name="no_bias")
    if dtype == "float32":  # few rows, many columns: too many elements for gradcheck
        yield SampleInput(t(2, 32), (t(512, 32), t(512)), name="wide")
    yield SampleInput(t(1, 8), (t(5, 8), t(5)), name="one_row")  # an outer product back
    yield SampleInput(t(0, 4), (t(3, 4), t(3)), name="no_rows")  # (the bias outnumbers)


def _nll_samples(dtype, requires_grad, log_probs=True):
    t = _maker(dtype, requires_grad)
    for red in ("mean", "sum", "none"):
        yield SampleInput(t(4, 3), (_targets((4,), 3),), {"reduction": red}, name=red)
    yield SampleInput(t(2, 3, 2, 2), (_targets((2, 2, 2), 3, ignore=True),),
                      {"weight": _fixed(3, dtype=dtype)}, name="2d_weight_ignore")
    yield SampleInput(t(3), (_targets((), 3),), name="one_sample")


def _ce_samples(dtype, requires_grad):
    yield from _nll_samples(dtype, requires_grad)
    t = _maker(dtype, requires_grad)
    yield SampleInput(t(4, 3), (_targets((4,), 3, ignore=True),), {"label_smoothing": 0.2},
                      name="smoothing")


def _ce_prob_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    for smoothing in (0.0, 0.3):
        p = numpy.random.default_rng(1).dirichlet(numpy.ones(3), 4).astype(dtype)
        yield SampleInput(t(4, 3), (retrograd.from_numpy(p),),
                          {"label_smoothing": smoothing}, name=f"smoothing{smoothing}")


def _pair_samples(dtype, requires_grad, low=-2.0, high=2.0):
    t = _maker(dtype, requires_grad)
    for red in ("mean", "sum", "none"):
        yield SampleInput(t(3, 4, low=low, high=high), (t(3, 4, low=low, high=high),),
                          {"reduction": red}, name=red)


def _smooth_l1_samples(dtype, requires_grad):
    yield from _pair_samples(dtype, requires_grad)
    t = _maker(dtype, requires_grad)
    yield SampleInput(t(5), (t(5),), {"beta": 0.5}, name="beta")


def _bce_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    for red in ("mean", "sum", "none"):
        yield SampleInput(t(3, 4, low=0.1, high=0.9), (t(3, 4, low=0.1, high=0.9),),
                          {"reduction": red}, name=red)
    yield SampleInput(t(4, low=0.1, high=0.9), (t(4, low=0.0, high=1.0),),
                      {"weight": _fixed(4, dtype=dtype)}, name="weight")


def _bce_logits_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    for red in ("mean", "sum", "none"):
        yield SampleInput(t(3, 4), (t(3, 4, low=0.0, high=1.0),), {"reduction": red},
                          name=red)
    yield SampleInput(t(2, 3), (t(2, 3, low=0.0, high=1.0),),
                      {"weight": _fixed(2, 3, dtype=dtype),
                       "pos_weight": _fixed(3, dtype=dtype)}, name="weights")


def _sdpa_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    yield SampleInput(t(2, 3, 4), (t(2, 5, 4), t(2, 5, 4)), name="cross")
    yield SampleInput(t(1, 2, 3, 4), (t(1, 2, 3, 4), t(1, 2, 3, 4)), {"is_causal": True},
                      name="causal")
    yield SampleInput(t(1, 4, 3, 4), (t(1, 2, 5, 4), t(1, 1, 5, 4)), {"enable_gqa": True},
                      name="gqa")
    mask = numpy.ones((3, 5), bool)
    mask[1] = False  # a query that sees no key: zeros, as PyTorch's safe softmax
    mask[2, ::2] = False
    yield SampleInput(t(1, 2, 3, 4), (t(1, 2, 5, 4), t(1, 2, 5, 4)),
                      {"attn_mask": retrograd.from_numpy(mask)}, name="masked_query")
    additive = numpy.where(numpy.arange(15).reshape(3, 5) % 4 == 1, -numpy.inf, 0.5)
    additive[0] = -numpy.inf
    yield SampleInput(t(2, 3, 4), (t(2, 5, 4), t(2, 5, 4)),
                      {"attn_mask": retrograd.from_numpy(additive.astype(dtype))},
                      name="additive_mask")


def _sdpa_errors():
    t = make_tensor
    qkv = (t(1, 2, 3, 4), t(1, 2, 3, 4))
    yield ErrorInput(SampleInput(t(1, 3, 2, 4), (t(1, 2, 2, 4), t(1, 2, 2, 4)),
                                 {"enable_gqa": True}), name="gqa_heads")
    yield ErrorInput(SampleInput(t(4), (t(4), t(4))), name="vectors")
    yield ErrorInput(SampleInput(t(1, 2, 3, 4), (t(1, 2, 3, 4, dtype="float64"), t(1, 2, 3, 4))),
                     name="dtypes")
    yield ErrorInput(SampleInput(t(1, 2, 3, 4), qkv,
                                 {"attn_mask": retrograd.ones(3, 3, dtype=retrograd.int64)}),
                     name="integer_mask")
    yield ErrorInput(SampleInput(t(1, 2, 3, 4), qkv, {"attn_mask": t(3, 3, dtype="float64")}),
                     name="mask_dtype")
    yield ErrorInput(SampleInput(t(1, 2, 3, 4), qkv, {"dropout_p": 1.5}), name="dropout")


def _pad_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    yield SampleInput(t(2, 3), ((1, 2),), name="last")
    yield SampleInput(t(2, 3, 4), ((1, 0, -1, 2),), {"value": 1.5}, name="crop_value")


def _mode_pad_samples(mode):
    """Each padded rank, batched and not, with asymmetric, zero and negative pads."""
    def samples(dtype, requires_grad):
        t = _maker(dtype, requires_grad)
        kw = {"mode": mode}
        yield SampleInput(t(2, 5), ((2, 1),), kw, name="1d_unbatched")
        yield SampleInput(t(2, 3, 4), ((0, 3),), kw, name="1d")
        yield SampleInput(t(2, 3, 4), ((-1, 2),), kw, name="1d_crop")
        yield SampleInput(t(1, 2, 5, noncontiguous=True), ((2, -2),), kw, name="1d_strided")
        yield SampleInput(t(2, 3, 4), ((1, 2, 2, 0),), kw, name="2d_unbatched")
        yield SampleInput(t(2, 2, 3, 4), ((2, 1, 0, 2),), kw, name="2d")
        yield SampleInput(t(1, 2, 4, 3), ((-1, 1, 2, -1),), kw, name="2d_crop")
        yield SampleInput(t(1, 3, 3, 4), ((1, 0, 1, 2, 0, 1),), kw, name="3d_unbatched")
        yield SampleInput(t(2, 1, 3, 2, 4), ((1, 2, 1, 0, 2, 1),), kw, name="3d")
        yield SampleInput(t(1, 1, 3, 3, 4), ((-1, 2, 0, -1, 1, 1),), kw, name="3d_crop")
        yield SampleInput(t(0, 2, 3), ((1, 1),), kw, name="empty_batch")
    return samples


def _mode_pad_errors(mode):
    def errors():
        t = make_tensor
        kw = {"mode": mode}
        yield ErrorInput(SampleInput(t(1, 2, 3), ((1,),), kw), RuntimeError, name="odd")
        yield ErrorInput(SampleInput(t(3), ((1, 1, 1, 1),), kw), RuntimeError, name="long")
        yield ErrorInput(SampleInput(t(3), ((1, 1),), kw), NotImplementedError, name="rank1")
        yield ErrorInput(SampleInput(t(1, 1, 3, 3), ((1, 1),), kw), NotImplementedError,
                         name="rank4_1d")
        yield ErrorInput(SampleInput(t(1, 1, 1, 2, 3, 3), ((1,) * 6,), kw),
                         NotImplementedError, name="rank6_3d")
        yield ErrorInput(SampleInput(t(1, 2, 3), ((1, 1),), {**kw, "value": 1.0}),
                         RuntimeError, name="value")
        if mode == "circular":
            yield ErrorInput(SampleInput(t(1, 2, 3), ((4, 0),), kw), RuntimeError,
                             name="wrap_twice")
            yield ErrorInput(SampleInput(t(1, 1, 3, 3), ((-1, 1, -4, -1),), kw),
                             RuntimeError, name="negative")
            yield ErrorInput(SampleInput(t(1, 3), ((-2, 3),), kw), RuntimeError,
                             name="overlap")
            return
        yield ErrorInput(SampleInput(t(1, 2, 0), ((1, 1),), kw), RuntimeError,
                         name="empty_dim")
        yield ErrorInput(SampleInput(t(0, 3, 3), ((1, 1, 1, 1),), kw), RuntimeError,
                         name="empty_unbatched")
        yield ErrorInput(SampleInput(t(1, 2, 3), ((-4, 1),), kw), RuntimeError,
                         name="too_small_1d")
        yield ErrorInput(SampleInput(t(1, 1, 3, 3), ((-3, 0, -3, 0),), kw), RuntimeError,
                         name="too_small_2d")
        yield ErrorInput(SampleInput(t(1, 1, 2, 3, 3), ((-4, 0, -4, 0, 0, -2),), kw),
                         RuntimeError, name="too_small_3d")
        yield ErrorInput(SampleInput(t(1, 1, 3, 3), ((-4, 0, 1, 0),), kw), RuntimeError,
                         name="negative_2d")
        yield ErrorInput(SampleInput(t(1, 1, 2, 3, 3), ((0, 0, 1, 0, -3, 0),), kw),
                         RuntimeError, name="negative_3d")
        yield ErrorInput(SampleInput(t(1, 2, 3, dtype="bool"), ((1, 1),), kw),
                         NotImplementedError, name="bool")
        if mode == "reflect":
            yield ErrorInput(SampleInput(t(1, 1, 3), ((3, 3),), kw), RuntimeError,
                             name="too_wide_1d")
            yield ErrorInput(SampleInput(t(1, 1, 3, 3), ((1, 1, 3, 5),), kw), RuntimeError,
                             name="too_wide_2d")
            yield ErrorInput(SampleInput(t(1, 1, 3, 3), ((1, 1, 1, 1, 1, 1),), kw),
                             RuntimeError, name="too_wide_3d")
    return errors


def _pad_errors():
    yield ErrorInput(SampleInput(make_tensor(1, 3), ((1, 1),), {"mode": "foo"}),
                     NotImplementedError, name="mode")


def _conv_errors():
    yield ErrorInput(SampleInput(make_tensor(1, 3, 5, 5), (make_tensor(2, 2, 3, 3),)),
                     RuntimeError, name="channels")


def _nll_errors():
    yield ErrorInput(SampleInput(make_tensor(3, 4), (_targets((3,), 4),),
                                 {"reduction": "bad"}), ValueError, name="reduction")


def _entry(name, samples, **kw):
    return OpInfo(name, samples, op=getattr(F, name), torch_op=_tf(name), **kw)


OPS = [
    _entry("softmax", _softmax_samples, dtypes=_FLOAT),
    _entry("log_softmax", _softmax_samples, dtypes=_FLOAT),
    # sdpa's softmax: a slice of -inf alone gives zeros (and no gradient), not NaN
    OpInfo("_safe_softmax", _safe_softmax_samples, dtypes=_FLOAT),
    # sdpa's with is_causal (internal): query i sees keys 0 to i
    OpInfo("_causal_softmax", _causal_softmax_samples, op=_nn_ops.causal_softmax,
           torch_op=_torch_causal_softmax, dtypes=_FLOAT),
    # sdpa's with a boolean mask (internal): -inf where it is False
    OpInfo("_masked_softmax", _masked_softmax_samples, op=_nn_ops.masked_softmax,
           torch_op=_torch_masked_softmax, dtypes=_FLOAT),
    _entry("conv2d", _conv2d_samples, dtypes=_FLOAT, atol=1e-5, rtol=1e-5,
           error_inputs=_conv_errors),
    _entry("conv1d", _conv1d_samples, dtypes=_FLOAT, atol=1e-5, rtol=1e-5),
    _entry("conv_transpose2d", _conv_t_samples, dtypes=_FLOAT, atol=1e-5, rtol=1e-5),
    OpInfo("convolution", _convolution_samples, dtypes=_FLOAT, atol=1e-5, rtol=1e-5),
    _entry("max_pool2d", _max_pool_samples, dtypes=_FLOAT),
    _entry("avg_pool2d", _avg_pool_samples, dtypes=_FLOAT),
    _entry("adaptive_avg_pool2d", _adaptive_samples, dtypes=_FLOAT),
    _entry("layer_norm", _layer_norm_samples, dtypes=_FLOAT, atol=1e-5, rtol=1e-5),
    _entry("group_norm", _group_norm_samples, dtypes=_FLOAT, atol=1e-5, rtol=1e-5),
    _entry("batch_norm", _batch_norm_samples, dtypes=_FLOAT, atol=1e-5, rtol=1e-5),
    _entry("instance_norm", _instance_norm_samples, dtypes=_FLOAT, atol=1e-5, rtol=1e-5),
    _entry("rms_norm", _rms_norm_samples, dtypes=_FLOAT, atol=1e-5, rtol=1e-5),
    _entry("local_response_norm", _lrn_samples, dtypes=_FLOAT, atol=1e-5, rtol=1e-5),
    _entry("gelu", _gelu_samples, dtypes=_FLOAT),
    _entry("silu", _act_samples, dtypes=_FLOAT),
    _entry("embedding", _embedding_samples, dtypes=_FLOAT),
    _entry("embedding_bag", _embedding_bag_samples, dtypes=_FLOAT),
    _entry("linear", _linear_samples, dtypes=_FLOAT, atol=1e-5, rtol=1e-5),
    _entry("nll_loss", _nll_samples, dtypes=_FLOAT, error_inputs=_nll_errors),
    _entry("cross_entropy", _ce_samples, dtypes=_FLOAT, atol=1e-5, rtol=1e-5),
    # PyTorch divides by the batch size with div(Tensor, Scalar): DivBackward1, a node name
    # retrograd's div does not tell apart; values and gradients are still compared.
    _entry("cross_entropy", _ce_prob_samples, dtypes=_FLOAT, variant="probabilities",
           compare_grad_with_torch=False),
    _entry("mse_loss", _pair_samples, dtypes=_FLOAT),
    _entry("l1_loss", _pair_samples, dtypes=_FLOAT),
    _entry("smooth_l1_loss", _smooth_l1_samples, dtypes=_FLOAT),
    _entry("binary_cross_entropy", _bce_samples, dtypes=_FLOAT, atol=1e-5, rtol=1e-5),
    _entry("binary_cross_entropy_with_logits", _bce_logits_samples, dtypes=_FLOAT),
    # PyTorch runs a fused CPU kernel (one node); retrograd composes matmul and softmax.
    _entry("scaled_dot_product_attention", _sdpa_samples, dtypes=_FLOAT, atol=1e-5,
           rtol=1e-5, compare_grad_with_torch=False, error_inputs=_sdpa_errors),
    _entry("pad", _pad_samples, dtypes=_FLOAT, error_inputs=_pad_errors),
    *(_entry("pad", _mode_pad_samples(mode), variant=mode, error_inputs=_mode_pad_errors(mode),
             dtypes=("float32", "float64", "int64"))
      for mode in ("reflect", "replicate", "circular")),
]
