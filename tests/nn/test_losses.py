"""The distance and loss modules against PyTorch's (values, gradients, printed form,
state_dict), the deprecated size_average/reduce arguments, warnings, and the nodes the
composite losses record. The functional forms are covered by the op database
(``testing/_db_loss.py``)."""

import re
import warnings

import numpy
import pytest

import retrograd
import retrograd.nn as nn
import retrograd.nn.functional as F

from _nn_util import assert_close, compare_backward, pair

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch


def _labels(shape, classes, seed=3):
    a = numpy.random.default_rng(seed).integers(0, classes, shape)
    return retrograd.from_numpy(a.copy()), torch.from_numpy(a.copy())


def _signs(*shape, seed=4):
    a = numpy.random.default_rng(seed).choice([-1.0, 1.0], shape)
    return retrograd.from_numpy(a.copy()), torch.from_numpy(a.copy())


def _inputs(name):
    """(retrograd args, torch args, indices of the args that require grad)."""
    x, tx = pair(4, 5, seed=0)
    y, ty = pair(4, 5, seed=1)
    z, tz = pair(4, 5, seed=2)
    if name in ("SoftMarginLoss", "HingeEmbeddingLoss"):
        s, ts = _signs(4, 5)
        return (x, s), (tx, ts), (0,)
    if name in ("MarginRankingLoss", "CosineEmbeddingLoss"):
        s, ts = _signs(4)
        if name == "MarginRankingLoss":
            a, ta = pair(4, seed=6)
            b, tb = pair(4, seed=7)
            return (a, b, s), (ta, tb, ts), (0, 1)
        return (x, y, s), (tx, ty, ts), (0, 1)
    if name.startswith("Triplet"):
        return (x, y, z), (tx, ty, tz), (0, 1, 2)
    if name in ("MultiMarginLoss",):
        t, tt = _labels((4,), 5)
        return (x, t), (tx, tt), (0,)
    if name == "MultiLabelMarginLoss":
        a = numpy.array([[3, 0, -1, 1, 2], [1, 2, 3, 0, 4], [2, -1, 0, 0, 0], [4, 4, 1, -1, 3]])
        return (x, retrograd.from_numpy(a.copy())), (tx, torch.from_numpy(a.copy())), (0,)
    if name == "MultiLabelSoftMarginLoss":
        p, tp = pair(4, 5, low=0, high=1, requires_grad=False, seed=5)
        return (x, p), (tx, tp), (0,)
    if name == "KLDivLoss":
        p, tp = pair(4, 5, low=0.1, high=1, seed=5)
        return (x, p), (tx, tp), (0, 1)
    if name == "PoissonNLLLoss":
        p, tp = pair(4, 5, low=0.1, high=4, seed=5)
        return (x, p), (tx, tp), (0, 1)
    if name == "GaussianNLLLoss":
        v, tv = pair(4, 1, low=0.2, high=2, seed=5)
        return (x, y, v), (tx, ty, tv), (0, 1, 2)
    return (x, y), (tx, ty), (0, 1)


_MODULES = [
    ("CosineSimilarity", {}), ("CosineSimilarity", {"dim": 0, "eps": 1e-3}),
    ("PairwiseDistance", {}), ("PairwiseDistance", {"p": 1.0, "keepdim": True}),
    ("KLDivLoss", {"reduction": "batchmean"}), ("KLDivLoss", {"reduction": "sum"}),
    ("HuberLoss", {}), ("HuberLoss", {"delta": 0.3, "reduction": "none"}),
    ("SoftMarginLoss", {}), ("MarginRankingLoss", {"margin": 0.5}),
    ("HingeEmbeddingLoss", {"margin": 2.0, "reduction": "sum"}),
    ("CosineEmbeddingLoss", {"margin": 0.2}),
    ("TripletMarginLoss", {"margin": 2.0, "p": 1.0, "swap": True}),
    ("TripletMarginWithDistanceLoss", {"swap": True, "reduction": "none"}),
    ("MultiLabelSoftMarginLoss", {}), ("MultiMarginLoss", {"p": 2, "margin": 0.7}),
    ("MultiLabelMarginLoss", {}), ("PoissonNLLLoss", {"log_input": False, "full": True}),
    ("PoissonNLLLoss", {}), ("GaussianNLLLoss", {"full": True}),
]


@pytest.mark.parametrize("name, kwargs", _MODULES,
                         ids=[f"{n}-{i}" for i, (n, _) in enumerate(_MODULES)])
def test_module_matches_torch(name, kwargs):
    args, t_args, diff = _inputs(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m, tm = getattr(nn, name)(**kwargs), getattr(torch.nn, name)(**kwargs)
        out, t_out = m(*args), tm(*t_args)
    assert repr(m) == repr(tm)
    assert list(m.state_dict()) == list(tm.state_dict())
    assert out.grad_fn.name() == t_out.grad_fn.name()
    assert_close(out, t_out)
    compare_backward(out, t_out, [args[i] for i in diff], [t_args[i] for i in diff])


def test_weighted_modules_match_torch():
    w = numpy.random.default_rng(7).uniform(0.5, 2, 5)
    for name, extra in (("MultiMarginLoss", {}), ("MultiLabelSoftMarginLoss", {})):
        m = getattr(nn, name)(weight=retrograd.from_numpy(w.copy()), **extra)
        tm = getattr(torch.nn, name)(weight=torch.from_numpy(w.copy()), **extra)
        assert list(m.state_dict()) == list(tm.state_dict()) == ["weight"]
        args, t_args, _ = _inputs(name)
        out, t_out = m(*args), tm(*t_args)
        assert_close(out, t_out)
        compare_backward(out, t_out, [args[0]], [t_args[0]])


@pytest.mark.parametrize("size_average, reduce", [(False, None), (None, False), (True, True),
                                                  (False, True)])
def test_legacy_reduction_arguments(size_average, reduce):
    """size_average/reduce override reduction, with PyTorch's warning, in the modules and
    the functional forms."""
    x, tx = pair(3, 4)
    s, ts = _signs(3, 4)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for name in ("SoftMarginLoss", "HingeEmbeddingLoss", "MSELoss", "L1Loss"):
            m = getattr(nn, name)(size_average=size_average, reduce=reduce)
            tm = getattr(torch.nn, name)(size_average=size_average, reduce=reduce)
            assert m.reduction == tm.reduction
            assert_close(m(x, s), tm(tx, ts))
        for name in ("soft_margin_loss", "l1_loss"):
            out = getattr(F, name)(x, s, size_average=size_average, reduce=reduce)
            t_out = getattr(torch.nn.functional, name)(tx, ts, size_average=size_average,
                                                       reduce=reduce)
            assert_close(out, t_out)
        c, tc = _labels((3,), 4)
        for name in ("nll_loss", "cross_entropy"):
            out = getattr(F, name)(x, c, size_average=size_average, reduce=reduce)
            t_out = getattr(torch.nn.functional, name)(tx, tc, size_average=size_average,
                                                       reduce=reduce)
            assert_close(out, t_out)
    ours = [str(w.message) for w in caught if "size_average" in str(w.message)]
    assert ours and all(msg == ours[0] for msg in ours)
    assert "please use reduction=" in ours[0]


def test_kl_div_mean_warns_and_matches_torch():
    x, tx = pair(3, 4)
    p, tp = pair(3, 4, low=0.1, high=1, seed=2)
    with pytest.warns(UserWarning, match="'batchmean' divides only by the batch size"):
        out = F.kl_div(x, p)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t_out = torch.nn.functional.kl_div(tx, tp)
    assert out.grad_fn.name() == t_out.grad_fn.name() == "MeanBackward0"
    assert_close(out, t_out)
    compare_backward(out, t_out, [x, p], [tx, tp])


def test_huber_loss_broadcast_warns():
    x, tx = pair(3, 4)
    y, ty = pair(4, seed=1)
    with pytest.warns(UserWarning, match="different to the input size"):
        out = F.huber_loss(x, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t_out = torch.nn.functional.huber_loss(tx, ty)
    assert_close(out, t_out)
    compare_backward(out, t_out, [x, y], [tx, ty])


def test_triplet_with_custom_distance():
    args, t_args, diff = _inputs("TripletMarginWithDistanceLoss")

    def dist(a, b):
        return 1 - F.cosine_similarity(a, b)

    def t_dist(a, b):
        return 1 - torch.nn.functional.cosine_similarity(a, b)

    out = F.triplet_margin_with_distance_loss(*args, distance_function=dist, swap=True)
    t_out = torch.nn.functional.triplet_margin_with_distance_loss(
        *t_args, distance_function=t_dist, swap=True)
    assert_close(out, t_out)
    compare_backward(out, t_out, list(args), list(t_args))


def _graph(fn):
    """Node names of a graph, depth first (leaves' accumulators included)."""
    names, seen, stack = [], set(), [fn]
    while stack:
        f = stack.pop()
        if f is None or id(f) in seen:
            continue
        seen.add(id(f))
        names.append(f.name())
        stack.extend(n for n, _ in reversed(f.next_functions))
    return names


@pytest.mark.parametrize("call", [
    lambda F, x, y, s: F.normalize(x),
    lambda F, x, y, s: F.cosine_similarity(x, y),
    lambda F, x, y, s: F.cosine_embedding_loss(x, y, s[:, 0]),
    lambda F, x, y, s: F.hinge_embedding_loss(x, s, reduction="none"),
    lambda F, x, y, s: F.triplet_margin_loss(x, y, y * 2, swap=True),
    lambda F, x, y, s: F.kl_div(x, y, reduction="batchmean", log_target=True),
    lambda F, x, y, s: F.multilabel_soft_margin_loss(x, s.abs()),
    lambda F, x, y, s: F.gaussian_nll_loss(x, y, y.abs(), full=True),
    lambda F, x, y, s: F.poisson_nll_loss(x, y.abs() * 3, full=True, reduction="sum"),
], ids=["normalize", "cosine_similarity", "cosine_embedding", "hinge", "triplet_swap",
        "kl_log_target", "multilabel_soft_margin", "gaussian_nll", "poisson_full"])
def test_composite_graphs_match_torch(call):
    """The composites record PyTorch's nodes, in its order."""
    x, tx = pair(3, 4)
    y, ty = pair(3, 4, seed=1)
    s, ts = _signs(3, 4)
    out = call(F, x, y, s)
    t_out = call(torch.nn.functional, tx, ty, ts)
    # retrograd names a Tensor-Scalar add/sub/mul like the Tensor-Tensor one (Backward0)
    expected = [re.sub(r"^(Add|Sub|Mul|Div)Backward1$", r"\1Backward0", n)
                for n in _graph(t_out.grad_fn)]
    assert _graph(out.grad_fn) == expected
    assert_close(out, t_out)


def test_cdist_matmul_path_matches_torch_graph():
    for shapes in (((30, 3), (4, 3)), ((2, 27, 3), (3, 3))):
        x, tx = pair(*shapes[0])
        y, ty = pair(*shapes[1], seed=1)
        out, t_out = retrograd.cdist(x, y), torch.cdist(tx, ty)
        assert _graph(out.grad_fn) == _graph(t_out.grad_fn)
        assert_close(out, t_out)
        compare_backward(out, t_out, [x, y], [tx, ty])


def test_module_argument_errors():
    for make in (lambda m: m.MultiMarginLoss(p=3),
                 lambda m: m.TripletMarginLoss(margin=0),
                 lambda m: m.TripletMarginWithDistanceLoss(margin=-1.0)):
        with pytest.raises(ValueError) as expected:
            make(torch.nn)
        with pytest.raises(ValueError) as actual:
            make(nn)
        assert str(actual.value) == str(expected.value)
    with pytest.raises(ValueError) as expected:
        torch.nn.MultiMarginLoss(weight=torch.ones(2, 2))
    with pytest.raises(ValueError) as actual:
        nn.MultiMarginLoss(weight=retrograd.ones(2, 2))
    assert str(actual.value) == str(expected.value)


def test_dist_zero_norm_has_no_gradient():
    """PyTorch's DistBackward0 fails on p=0 (an undefined gradient); retrograd's gives
    none: the count of nonzeros is piecewise constant."""
    x, tx = pair(3, 2)
    y, ty = pair(3, 2, seed=1)
    out, t_out = retrograd.dist(x, y, 0), torch.dist(tx, ty, 0)
    assert out.grad_fn.name() == t_out.grad_fn.name()
    assert_close(out, t_out)
    out.backward()
    assert x.grad is None and y.grad is None


def _ctc_inputs():
    lp, t_lp = pair(6, 2, 5, seed=9)
    tg = numpy.array([[1, 4, 4], [2, 3, 0]])
    return lp, t_lp, retrograd.from_numpy(tg.copy()), torch.from_numpy(tg.copy())


@pytest.mark.parametrize("kwargs", [{}, {"blank": 4, "reduction": "sum"},
                                    {"zero_infinity": True, "reduction": "none"}])
def test_ctc_module_matches_torch(kwargs):
    lp, t_lp, tg, t_tg = _ctc_inputs()
    if kwargs.get("blank") == 4:
        tg, t_tg = tg.clamp(0, 3), t_tg.clamp(0, 3)
    m, tm = nn.CTCLoss(**kwargs), torch.nn.CTCLoss(**kwargs)
    assert repr(m) == repr(tm)
    out = m(F.log_softmax(lp, 2), tg, retrograd.tensor([6, 4]), retrograd.tensor([3, 2]))
    t_out = tm(torch.nn.functional.log_softmax(t_lp, 2), t_tg, torch.tensor([6, 4]),
               torch.tensor([3, 2]))
    assert out.grad_fn.name() == t_out.grad_fn.name()
    assert_close(out, t_out)
    compare_backward(out, t_out, [lp], [t_lp])


def test_ctc_double_backward_raises_like_torch():
    lp, t_lp, tg, t_tg = _ctc_inputs()
    out = F.ctc_loss(lp, tg, (6, 6), (3, 2))
    t_out = torch.nn.functional.ctc_loss(t_lp, t_tg, (6, 6), (3, 2))
    g, = retrograd.autograd.grad(out, lp, create_graph=True)
    t_g, = torch.autograd.grad(t_out, t_lp, create_graph=True)
    assert_close(g, t_g)
    with pytest.raises(RuntimeError, match="_ctc_loss_backward is not implemented"):
        t_g.sum().backward()
    with pytest.raises(RuntimeError, match="_ctc_loss_backward is not implemented"):
        g.sum().backward()


@pytest.mark.parametrize("beta", [1.0, 0.5, 0.0])
@pytest.mark.parametrize("create_graph", [False, True])
def test_smooth_l1_gradient_at_nan_and_edges_as_pytorch(beta, create_graph):
    """NaN passes to the gradient on both paths (the facade's sign is PyTorch's, 0 at
    NaN, so the rule writes the sides out); at |d| = beta the clipped side is taken."""
    vals = [float("nan"), 0.5, 2.0, -1.0, 1.0, 0.0, float("inf"), float("-inf"), -0.5]
    out = []
    for T in (torch, retrograd):
        x = T.tensor(vals, dtype=T.float64, requires_grad=True)
        t = T.zeros(9, dtype=T.float64, requires_grad=True)
        loss = T.nn.functional.smooth_l1_loss(x, t, beta=beta)
        out.append([g.detach().numpy() for g in
                    T.autograd.grad(loss, (x, t), create_graph=create_graph)])
    for a, b in zip(*out, strict=True):
        numpy.testing.assert_array_equal(b, a)
