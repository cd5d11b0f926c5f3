"""nn.Linear / F.linear and F.embedding at their edges, each case run under PyTorch and
retrograd and compared: wrong feature counts, bias shapes and dtypes, the nodes of ATen's
two linear paths, out-of-range indices (negative included), max_norm, padding_idx and
scale_grad_by_freq."""

import numpy
import pytest

import retrograd

from _nn_util import assert_same_outcome

pytestmark = pytest.mark.torch


def _linear(xshape, wshape=(5, 4), bshape=(5,), xdtype="float64", wdtype="float64",
            bdtype="float64", module=False):
    def run(T):
        r = numpy.random.default_rng(0)
        x = T.from_numpy(r.standard_normal(xshape)).to(getattr(T, xdtype))
        w = T.from_numpy(r.standard_normal(wshape)).to(getattr(T, wdtype))
        b = None if bshape is None else T.from_numpy(r.standard_normal(bshape)).to(
            getattr(T, bdtype))
        if module:
            m = T.nn.Linear(wshape[1], wshape[0], bias=b is not None, dtype=T.float64)
            with T.no_grad():
                m.weight.copy_(w)
                if b is not None:
                    m.bias.copy_(b)
            return [m(x)]
        for t in (x, w, b):
            if t is not None and t.is_floating_point():
                t.requires_grad_()
        out = T.nn.functional.linear(x, w, b)
        grads = T.autograd.grad(out.sum(), [t for t in (x, w, b) if t is not None])
        return [out, *grads]
    return run


@pytest.mark.parametrize("xshape", [(2, 3), (3,), (2, 6, 3), (0, 3), (2, 0, 3), (2, 3, 2, 3)])
@pytest.mark.parametrize("bshape", [(5,), None])
@pytest.mark.parametrize("module", [False, True])
def test_wrong_in_features(xshape, bshape, module):
    """RuntimeError 'mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)' (the rows
    of a batched input folded), not the bias broadcast error."""
    assert_same_outcome(_linear(xshape, bshape=bshape, module=module))


@pytest.mark.parametrize("xshape", [(2, 4), (4,), (2, 6, 4), (0, 4), (2, 0, 4), (2, 3, 2, 4)])
@pytest.mark.parametrize("bshape", [(5,), None, (), (1,), (1, 5), (2, 5), (6, 1, 5)])
def test_linear_shapes(xshape, bshape):
    assert_same_outcome(_linear(xshape, bshape=bshape))


@pytest.mark.parametrize("case", [
    {"xshape": (), "bshape": None}, {"xshape": (2, 4), "wshape": ()},
    {"xshape": (2, 4), "wshape": (4,), "bshape": ()}, {"xshape": (2, 4), "wshape": (4,),
                                                       "bshape": None},
    {"xshape": (2, 4), "wshape": (5, 4, 1)}, {"xshape": (2, 4), "bshape": (3,)},
    {"xshape": (2, 4), "bshape": (3, 2, 5)}, {"xshape": (3, 2, 4), "bshape": (2, 1)},
    {"xshape": (3, 2, 4), "bshape": (3,)},
])
def test_linear_argument_shapes(case):
    assert_same_outcome(_linear(**case))


@pytest.mark.parametrize("dtypes", [("float32", "float64", "float64"),
                                    ("float64", "float32", "float64"),
                                    ("float64", "float64", "float32"),
                                    ("float32", "float32", "float64"),
                                    ("int64", "int64", "int64"), ("bool", "bool", "bool")])
@pytest.mark.parametrize("xshape", [(2, 4), (3, 2, 4), (4,)])
def test_linear_dtypes(dtypes, xshape):
    def run(T):
        x, w, b = (T.ones(s, dtype=getattr(T, d)) for s, d in
                   zip((xshape, (5, 4), (5,)), dtypes, strict=True))
        return [T.nn.functional.linear(x, w, b), T.nn.functional.linear(x, w)]
    assert_same_outcome(run)


def _node_names(T, xshape, bshape, transpose=False):
    x = T.ones(xshape, dtype=T.float64)
    if transpose:
        x = x.transpose(0, 1)
    w = T.ones(5, 4, dtype=T.float64, requires_grad=True)
    b = T.ones(bshape, dtype=T.float64, requires_grad=True)
    fn = T.nn.functional.linear(x, w, b).grad_fn
    return type(fn).__name__, type(fn.next_functions[0][0]).__name__


@pytest.mark.parametrize("case", [((2, 4), (5,)), ((3, 2, 4), (5,)), ((4,), (5,)),
                                  ((2, 3, 2, 4), (1, 5)), ((3, 2, 4), (2, 5)),
                                  ((3, 2, 4), ()), ((2, 4), (2, 5)), ((2, 3, 4), (5,), True)])
def test_linear_takes_atens_path(case, torch):
    """One addmm on the rows (AddmmBackward0 under ViewBackward0) when the bias squeezes
    to a vector and the input is contiguous; matmul and add_ otherwise."""
    assert _node_names(retrograd, *case) == _node_names(torch, *case)


# ---- embedding ----------------------------------------------------------------------------
_W = numpy.random.default_rng(1).standard_normal((5, 3)) * 2


def _embedding(idx, idtype="int64", wdtype="float64", wshape=None, **kw):
    """The lookup, the weight's gradient and the weight afterwards (renormed in place)."""
    def run(T):
        w = T.from_numpy(_W.copy() if wshape is None else numpy.ones(wshape)).to(
            getattr(T, wdtype))
        if w.is_floating_point():
            w.requires_grad_()
        out = T.nn.functional.embedding(T.from_numpy(numpy.array(idx, dtype=idtype)), w,
                                        **kw)
        if not w.requires_grad:
            return [out, w]
        return [out, *T.autograd.grad(out.sum(), [w]), w]
    return run


_INDICES = [[0, 1, 1, 2], [[0, 4], [4, 4]], 3, [], [0, -1], [0, 5], [-6, 1], [7, -1]]


@pytest.mark.parametrize("idx", _INDICES)
@pytest.mark.parametrize("kw", [{}, {"padding_idx": 2}, {"padding_idx": -1},
                                {"max_norm": 1.0}, {"max_norm": 1.0, "norm_type": 1.0},
                                {"max_norm": 0.5, "norm_type": float("inf")},
                                {"scale_grad_by_freq": True},
                                {"scale_grad_by_freq": True, "padding_idx": 1}])
def test_embedding_indices(idx, kw):
    """IndexError 'index out of range in self' for any index outside [0, n) (-1 does not
    wrap); with max_norm, torch's select() message for one outside [-n, n)."""
    assert_same_outcome(_embedding(idx, **kw))


@pytest.mark.parametrize("case", [
    {"idtype": "int32"}, {"idtype": "int16"}, {"idtype": "uint8"}, {"idtype": "float32"},
    {"idtype": "float32", "max_norm": 1.0}, {"idtype": "int32", "max_norm": 1.0},
    {"wdtype": "float16"}, {"wdtype": "float16", "max_norm": 1.0}, {"wdtype": "float32"},
    {"wdtype": "int64"}, {"wdtype": "int64", "max_norm": 1.0}, {"wshape": (0, 3)},
    {"wshape": (5, 0)}, {"wshape": (5,)}, {"wshape": (5,), "max_norm": 1.0},
    {"wshape": (5, 2, 2)}, {"padding_idx": 5}, {"padding_idx": -6}, {"max_norm": -1.0},
    {"max_norm": 0.0},
])
def test_embedding_arguments(case):
    assert_same_outcome(_embedding([0, 1, 1], **case), atol=1e-3)


def test_embedding_bad_index_leaves_the_weight_alone():
    """Checked before the renorm (torch renorms the rows sorted before the bad index)."""
    w = retrograd.from_numpy(_W.copy())
    with pytest.raises(IndexError, match="index out of range in self"):
        retrograd.nn.functional.embedding(retrograd.tensor([0, 1, -1]), w, max_norm=0.1)
    numpy.testing.assert_array_equal(w.numpy(), _W)
    assert w._version == 0


def test_embedding_module_max_norm_and_version(torch):
    """nn.Embedding with max_norm renorms its weight in place (one version bump)."""
    r = retrograd.nn.Embedding(5, 3, max_norm=1.0)
    t = torch.nn.Embedding(5, 3, max_norm=1.0)
    with torch.no_grad():
        t.weight.copy_(torch.from_numpy(r.weight.detach().numpy() * 3))
    with retrograd.no_grad():
        r.weight.copy_(retrograd.from_numpy(t.weight.detach().numpy()))
    idx = [[0, 2], [2, 4]]
    before = r.weight._version, t.weight._version
    out_r, out_t = r(retrograd.tensor(idx)), t(torch.tensor(idx))
    numpy.testing.assert_allclose(out_r.detach().numpy(), out_t.detach().numpy(), atol=1e-6)
    numpy.testing.assert_allclose(r.weight.detach().numpy(), t.weight.detach().numpy(),
                                  atol=1e-6)
    assert r.weight._version - before[0] == t.weight._version - before[1] == 1
