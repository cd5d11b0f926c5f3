"""Op database entries for the distances and losses of ``ops/losses.py``: each reduction,
the options that change the formula (p, margin, swap, log_target, full, weights,
broadcast variances), unbatched inputs, and the errors PyTorch raises."""

import retrograd
import retrograd.nn.functional as F

from ._core import (ErrorInput, OpInfo, SampleInput, make_tensor, rng, maker as _maker,
                   torch_functional as _tf)

_FLOAT = ("float32", "float64")
_REDS = ("mean", "sum", "none")


def _const(*shape, dtype="float64", low=-2.0, high=2.0):
    return make_tensor(*shape, dtype=dtype, low=low, high=high)


def _signs(*shape, dtype="float64"):
    return retrograd.from_numpy(rng.choice([-1.0, 1.0], shape).astype(dtype))


def _labels(shape, classes):
    return retrograd.from_numpy(rng.integers(0, classes, shape))


# ---- distances ----------------------------------------------------------------------------
def _normalize_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    yield SampleInput(t(3, 4), name="default")
    yield SampleInput(t(2, 3, 4), (1.0, -1), name="p1_last")
    yield SampleInput(t(5), (3.0, 0), name="p3_vector")
    yield SampleInput(t(2, 3, low=-1e-13, high=1e-13), (2.0, 1), name="clamped",
                      nondifferentiable=True)


def _cosine_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    yield SampleInput(t(3, 4), (t(3, 4),), name="default")
    yield SampleInput(t(2, 3, 4), (t(4),), {"dim": -1}, name="broadcast")
    yield SampleInput(t(4, 2), (t(4, 2),), {"dim": 0, "eps": 1e-3}, name="dim0")


def _pairwise_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    yield SampleInput(t(3, 4), (t(3, 4),), name="default")
    yield SampleInput(t(2, 3, 4), (t(4),), {"p": 1.0, "keepdim": True}, name="p1_keepdim")
    yield SampleInput(t(5), (t(5),), {"p": 3.0, "eps": 1e-3}, name="p3_vector")
    yield SampleInput(t(3, 4), (t(1, 4),), {"p": float("inf")}, name="inf")


def _cdist_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    yield SampleInput(t(3, 4), (t(5, 4),), name="p2")
    for p in (0.5, 1.0, 1.5, 3.0, float("inf")):
        yield SampleInput(t(4, 3), (t(2, 3),), {"p": p}, name=f"p{p}")
    yield SampleInput(t(2, 1, 3, 2), (t(3, 4, 2),), name="batched")
    yield SampleInput(t(3, 0), (t(2, 0),), {"p": 1.0}, name="no_columns")


def _cdist_mm_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    yield SampleInput(t(3, 4), (t(5, 4),), {"compute_mode": "use_mm_for_euclid_dist"},
                      name="forced")
    yield SampleInput(t(27, 3), (t(4, 3),), name="rows_over_25")
    yield SampleInput(t(2, 26, 3), (t(1, 3, 3),), name="batched")


def _cdist_errors():
    t = make_tensor
    yield ErrorInput(SampleInput(t(3), (t(3, 3),)), RuntimeError, name="1d")
    yield ErrorInput(SampleInput(t(3, 2), (t(3, 3),)), RuntimeError, name="columns")
    yield ErrorInput(SampleInput(t(3, 2), (t(3, 2),), {"compute_mode": "foo"}), ValueError,
                     name="mode")
    yield ErrorInput(SampleInput(t(3, 2), (t(3, 2),), {"p": -1.0}), RuntimeError,
                     name="negative_p")
    yield ErrorInput(SampleInput(t(3, 2, dtype="int64"), (t(3, 2, dtype="int64"),)),
                     RuntimeError, name="int")


def _pdist_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    yield SampleInput(t(5, 3), name="p2")
    for p in (0.5, 1.0, 1.5, 3.0, float("inf")):
        yield SampleInput(t(4, 2), (p,), name=f"p{p}")
    yield SampleInput(t(1, 3), name="one_row")


def _pdist_errors():
    t = make_tensor
    yield ErrorInput(SampleInput(t(3)), RuntimeError, name="1d")
    yield ErrorInput(SampleInput(t(3, 2), (-1.0,)), RuntimeError, name="negative_p")
    yield ErrorInput(SampleInput(t(3, 2, dtype="int64")), RuntimeError, name="int")


def _dist_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    yield SampleInput(t(3, 4), (t(3, 4),), name="p2")
    yield SampleInput(t(2, 3), (t(3),), {"p": 1}, name="p1_broadcast")
    yield SampleInput(t(4), (t(4),), {"p": 3.5}, name="p3.5")
    yield SampleInput(t(2, 2), (t(2, 2),), {"p": float("inf")}, name="inf")
    yield SampleInput(t(3), (t(3),), {"p": 0.5}, name="p0.5")


# ---- losses -------------------------------------------------------------------------------
def _kl_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    for red in ("batchmean", "sum", "none"):
        yield SampleInput(t(3, 4), (t(3, 4, low=0.1, high=1.0),), {"reduction": red},
                          name=red)
    yield SampleInput(t(2, 3), (t(2, 3),), {"reduction": "sum", "log_target": True},
                      name="log_target")
    yield SampleInput(t(4), (t(4, low=0.1, high=1.0),), {"reduction": "batchmean"},
                      name="vector")


def _kl_errors():
    yield ErrorInput(SampleInput(make_tensor(3, 4), (make_tensor(3, 4),),
                                 {"reduction": "foo"}), ValueError, name="reduction")
    yield ErrorInput(SampleInput(make_tensor(3, dtype="int64"), (make_tensor(3),),
                                 {"reduction": "sum"}), RuntimeError, name="int")


def _huber_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    for red in _REDS:
        yield SampleInput(t(3, 4), (t(3, 4),), {"reduction": red}, name=red)
    yield SampleInput(t(5), (t(5),), {"delta": 0.5}, name="delta")
    yield SampleInput(t(2, 3), (t(2, 3),), {"weight": _const(2, 3, dtype=dtype, low=0.5),
                                            "reduction": "sum"}, name="weight")


def _red_error(*args, error=ValueError):
    yield ErrorInput(SampleInput(make_tensor(3, 4), args, {"reduction": "foo"}), error,
                     name="reduction")


def _huber_errors():
    yield from _red_error(make_tensor(3, 4))
    yield ErrorInput(SampleInput(make_tensor(3, 4), (make_tensor(3, 4),),
                                 {"weight": make_tensor(4)}), ValueError, name="weight")
    yield ErrorInput(SampleInput(make_tensor(3, 4), (make_tensor(2, 4),)), RuntimeError,
                     name="broadcast")


def _soft_margin_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    for red in _REDS:
        yield SampleInput(t(3, 4), (_signs(3, 4, dtype=dtype),), {"reduction": red}, name=red)


def _ranking_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    for red in _REDS:
        yield SampleInput(t(5), (t(5), _signs(5, dtype=dtype)), {"reduction": red}, name=red)
    yield SampleInput(t(4), (t(4), _signs(4, dtype=dtype)), {"margin": 0.5}, name="margin")


def _ranking_errors():
    t = make_tensor
    yield ErrorInput(SampleInput(t(3, 4), (t(4), t(3, 4))), RuntimeError, name="dims")


def _hinge_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    for red in _REDS:
        yield SampleInput(t(3, 4), (_signs(3, 4, dtype=dtype),), {"reduction": red}, name=red)
    yield SampleInput(t(6), (_signs(6, dtype=dtype),), {"margin": 0.5}, name="margin")


def _cos_emb_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    for red in _REDS:
        yield SampleInput(t(4, 3), (t(4, 3), _signs(4, dtype=dtype)), {"reduction": red},
                          name=red)
    yield SampleInput(t(5), (t(5), _signs(dtype=dtype)), {"margin": -0.5}, name="unbatched")


def _cos_emb_errors():
    t = make_tensor
    yield ErrorInput(SampleInput(t(3, 4), (t(3, 4), t(3, 4))), RuntimeError, name="2d_target")
    yield ErrorInput(SampleInput(t(4), (t(4), t(4))), RuntimeError, name="1d_inputs")


def _triplet_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    for red in _REDS:
        yield SampleInput(t(3, 4), (t(3, 4), t(3, 4)), {"reduction": red}, name=red)
    yield SampleInput(t(4, 3), (t(4, 3), t(4, 3)), {"p": 1, "margin": 2.0, "swap": True},
                      name="p1_swap")
    yield SampleInput(t(5), (t(5), t(5)), {"eps": 1e-3, "margin": 3.0}, name="unbatched")


def _triplet_distance_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    for red in _REDS:
        yield SampleInput(t(3, 4), (t(3, 4), t(3, 4)), {"reduction": red}, name=red)
    yield SampleInput(t(4, 3), (t(4, 3), t(4, 3)), {"margin": 2.0, "swap": True}, name="swap")
    yield SampleInput(t(5), (t(5), t(5)), {"margin": 3.0}, name="unbatched")


def _triplet_errors():
    t = make_tensor
    yield ErrorInput(SampleInput(t(3, 4), (t(3, 4), t(3, 4)), {"margin": 0.0}), ValueError,
                     name="margin")
    yield ErrorInput(SampleInput(t(3, 4), (t(3, 4), t(4))), RuntimeError, name="dims")
    yield from _red_error(t(3, 4), t(3, 4))


def _msm_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    for red in _REDS:
        yield SampleInput(t(3, 4), (_const(3, 4, dtype=dtype, low=0, high=1),),
                          {"reduction": red}, name=red)
    yield SampleInput(t(2, 3), (_const(2, 3, dtype=dtype, low=0, high=1),),
                      {"weight": _const(3, dtype=dtype, low=0.5)}, name="weight")


def _msm_errors():
    yield ErrorInput(SampleInput(make_tensor(3, 4), (make_tensor(3, 4),),
                                 {"reduction": "foo"}), ValueError, name="reduction")


def _multi_margin_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    for red in _REDS:
        yield SampleInput(t(4, 5), (_labels((4,), 5),), {"reduction": red}, name=red)
    yield SampleInput(t(3, 4), (_labels((3,), 4),),
                      {"p": 2, "margin": 0.5, "weight": _const(4, dtype=dtype, low=0.5)},
                      name="p2_weight")
    yield SampleInput(t(5), (_labels((), 5),), {"reduction": "none"}, name="unbatched")
    yield SampleInput(t(4), (_labels((1,), 4),), {"reduction": "none", "margin": 2.0},
                      name="unbatched_1d_target")


def _multi_margin_errors():
    t = make_tensor
    yield ErrorInput(SampleInput(t(3, 4), (_labels((3,), 4),), {"p": 3}), ValueError, name="p")
    yield ErrorInput(SampleInput(t(3, 4), (_labels((3,), 4),), {"weight": t(2, 2)}),
                     ValueError, name="weight_dims")
    yield ErrorInput(SampleInput(t(3, 4), (_labels((3,), 4),), {"weight": t(3)}),
                     RuntimeError, name="weight_size")
    yield ErrorInput(SampleInput(t(3, 4), (_labels((2,), 4),)), RuntimeError, name="target")
    yield ErrorInput(SampleInput(t(3, 4), (retrograd.tensor([0, 4, 1]),)), RuntimeError,
                     name="out_of_range")
    yield ErrorInput(SampleInput(t(2, 3, 4), (_labels((2,), 4),)), RuntimeError, name="3d")
    yield ErrorInput(SampleInput(t(3, 0), (_labels((3,), 1),)), RuntimeError, name="empty")


def _ml_margin_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    target = retrograd.tensor([[3, 0, -1, 1], [1, 2, 3, 0], [2, 2, -1, -1]])
    for red in _REDS:
        yield SampleInput(t(3, 4), (target,), {"reduction": red}, name=red)
    yield SampleInput(t(5), (retrograd.tensor([4, 1, -1, 0, 2]),), name="unbatched")


def _ml_margin_errors():
    t = make_tensor
    yield ErrorInput(SampleInput(t(3, 4), (retrograd.tensor([0, 1, 2]),)), RuntimeError,
                     name="target_size")
    yield ErrorInput(SampleInput(t(2, 4), (retrograd.tensor([[0, 4, -1, 1]] * 2),)),
                     RuntimeError, name="out_of_range")


def _poisson_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    for red in _REDS:
        yield SampleInput(t(3, 4), (t(3, 4, low=0, high=4),), {"reduction": red}, name=red)
    yield SampleInput(t(3, 4, low=0.2, high=3), (t(3, 4, low=0.1, high=4),),
                      {"log_input": False, "full": True}, name="full")


def _poisson_errors():
    yield from _red_error(make_tensor(3, 4))


def _gaussian_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    for red in _REDS:
        yield SampleInput(t(3, 4), (t(3, 4), t(3, 4, low=0.2, high=2)), {"reduction": red},
                          name=red)
    yield SampleInput(t(2, 3), (t(2, 3), t(2, low=0.2, high=2)), {"full": True},
                      name="one_dim_short")
    yield SampleInput(t(2, 3, 2), (t(2, 3, 2), t(2, 1, 2, low=0.2, high=2)),
                      name="broadcast")
    yield SampleInput(t(3), (t(3), 0.5), {"eps": 1e-3}, name="float_var")


def _gaussian_errors():
    t = make_tensor
    yield ErrorInput(SampleInput(t(3, 4), (t(3, 4), t(2))), ValueError, name="size")
    yield ErrorInput(SampleInput(t(3, 4), (t(3, 4), -t(3, 4, low=0.1))), ValueError,
                     name="negative")
    yield ErrorInput(SampleInput(t(3, 4), (t(3, 4), -1.0)), ValueError, name="negative_float")
    yield ErrorInput(SampleInput(t(3, 4), (t(3, 4), t(3, 4, low=0.1)), {"reduction": "x"}),
                     ValueError, name="reduction")


def _ctc_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    padded = retrograd.tensor([[1, 2, 2], [3, 1, 0], [4, 4, 4]])
    for red in _REDS:
        yield SampleInput(t(6, 3, 5), (padded, (6, 5, 6), (3, 2, 3)), {"reduction": red},
                          name=red)
    yield SampleInput(t(5, 2, 4), (retrograd.tensor([1, 3, 3, 0]), retrograd.tensor([5, 4]),
                                   retrograd.tensor([3, 1])), {"blank": 2},
                      name="concatenated_blank2")
    yield SampleInput(t(4, 2, 3), (retrograd.tensor([[1, 1, 1], [2, 1, 0]]), (4, 2), (3, 0)),
                      {"zero_infinity": True, "reduction": "none"}, name="zero_infinity")
    yield SampleInput(t(5, 4), (retrograd.tensor([2, 1, 3]), (5,), (3,)), name="unbatched")


def _ctc_errors():
    t = make_tensor
    lp, padded = t(5, 2, 4), retrograd.tensor([[1, 2], [3, 0]])
    for args, kw, name in (((padded, (5, 5), (2, 1)), {"blank": 4}, "blank"),
                           ((padded, (5,), (2, 1)), {}, "input_lengths_size"),
                           ((padded, (5, 5), (2,)), {}, "target_lengths_size"),
                           ((padded, (6, 5), (2, 1)), {}, "input_too_long"),
                           ((padded, (-1, 5), (2, 1)), {}, "input_negative"),
                           ((padded, (5, 5), (2, -1)), {}, "target_negative"),
                           ((padded, (5, 5), (3, 1)), {}, "padded_too_short"),
                           ((retrograd.tensor([1, 2, 3]), (5, 5), (2, 2)), {}, "concat_size")):
        yield ErrorInput(SampleInput(lp, args, kw), RuntimeError, name=name)
    yield ErrorInput(SampleInput(lp, (padded, (5, 5), (2, 1)), {"reduction": "foo"}),
                     ValueError, name="reduction")


def _log_softmaxed(ctc, log_softmax):
    """ctc_loss of log_softmax(input): PyTorch's gradient of ctc_loss folds in a log_softmax
    before it (it is the gradient of log probabilities that sum to 1)."""
    def call(input, *args, **kwargs):
        return ctc(log_softmax(input, input.ndim - 1), *args, **kwargs)
    return call


def _entry(name, samples, **kw):
    return OpInfo(name, samples, op=getattr(F, name), torch_op=_tf(name), dtypes=_FLOAT, **kw)


# PyTorch has no double backward for these kernels (its backward ops are not
# differentiable); retrograd's rules are, and are checked by gradgradcheck anyway.
OPS = [
    _entry("normalize", _normalize_samples),
    OpInfo("cosine_similarity", _cosine_samples, dtypes=_FLOAT),
    OpInfo("pairwise_distance", _pairwise_samples, dtypes=_FLOAT),
    OpInfo("cdist", _cdist_samples, dtypes=_FLOAT, error_inputs=_cdist_errors),
    OpInfo("cdist", _cdist_mm_samples, variant="mm", dtypes=_FLOAT, atol=1e-4, rtol=1e-4),
    OpInfo("pdist", _pdist_samples, dtypes=_FLOAT, error_inputs=_pdist_errors),
    OpInfo("dist", _dist_samples, dtypes=_FLOAT),
    OpInfo("dist", _dist_samples, variant="method", method=True, dtypes=_FLOAT),
    _entry("kl_div", _kl_samples, error_inputs=_kl_errors),
    _entry("huber_loss", _huber_samples, error_inputs=_huber_errors),
    _entry("soft_margin_loss", _soft_margin_samples,
           error_inputs=lambda: _red_error(make_tensor(3, 4))),
    _entry("margin_ranking_loss", _ranking_samples, error_inputs=_ranking_errors),
    _entry("hinge_embedding_loss", _hinge_samples,
           error_inputs=lambda: _red_error(make_tensor(3, 4))),
    _entry("cosine_embedding_loss", _cos_emb_samples, error_inputs=_cos_emb_errors),
    _entry("triplet_margin_loss", _triplet_samples, error_inputs=_triplet_errors),
    _entry("triplet_margin_with_distance_loss", _triplet_distance_samples,
           error_inputs=_triplet_errors),
    _entry("multilabel_soft_margin_loss", _msm_samples, error_inputs=_msm_errors),
    _entry("multi_margin_loss", _multi_margin_samples, error_inputs=_multi_margin_errors),
    _entry("multilabel_margin_loss", _ml_margin_samples, error_inputs=_ml_margin_errors),
    _entry("poisson_nll_loss", _poisson_samples, error_inputs=_poisson_errors),
    _entry("gaussian_nll_loss", _gaussian_samples, error_inputs=_gaussian_errors),
    OpInfo("ctc_loss", _ctc_samples, op=_log_softmaxed(F.ctc_loss, F.log_softmax),
           torch_op=_log_softmaxed(_tf("ctc_loss"), _tf("log_softmax")), dtypes=_FLOAT,
           supports_gradgrad=False, error_inputs=_ctc_errors),
]
