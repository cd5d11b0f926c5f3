"""Default gradient layouts (PyTorch's autograd docs) and AccumulateGrad stealing."""

import warnings
import weakref

import numpy
import pytest

import retrograd
from _compare import values
from retrograd import _observe


def _leaf(T, arr):
    return T.from_numpy(arr).requires_grad_()


LAYOUTS = {
    "rowmajor": lambda: numpy.arange(6, dtype=numpy.float32).reshape(2, 3),
    "transposed": lambda: numpy.arange(6, dtype=numpy.float32).reshape(3, 2).T,
    "permuted": lambda: numpy.zeros((2, 3, 4), numpy.float32).transpose(1, 2, 0),
    "strided": lambda: numpy.arange(12, dtype=numpy.float32).reshape(3, 4)[:, ::2],
    "transposed_strided": lambda: numpy.arange(24, dtype=numpy.float32).reshape(4, 6)[::2].T,
    "expanded": lambda: numpy.broadcast_to(numpy.ones(3, numpy.float32), (2, 3)),
}


@pytest.mark.torch
def test_grad_of_a_transposed_leaf_view(both):
    def scenario(T):
        p = T.ones(3, 2).t().requires_grad_()  # a leaf that is a view of a row-major base
        (p * 2).backward(T.ones(2, 3))
        q = T.ones(2, 3, 4).permute(2, 0, 1).requires_grad_()
        (q * 2).backward(T.ones(4, 2, 3))
        return [p.is_leaf, p.stride(), p.grad.stride(), q.stride(), q.grad.stride()]
    both(scenario)


@pytest.mark.torch
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_new_grad_matches_dense_param_strides(both, layout):
    def scenario(T):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # PyTorch warns about non-writable arrays
            p = _leaf(T, LAYOUTS[layout]())
        (p * 2).backward(T.ones(*p.shape))
        return [p.stride(), p.grad.stride(), values(p.grad)]
    both(scenario)


@pytest.mark.torch
def test_existing_grad_accumulates_in_place(both):
    def scenario(T):
        p = _leaf(T, LAYOUTS["transposed"]())
        (p * 2).backward(T.ones(2, 3))
        g = p.grad
        v = g._version
        (p * 3).backward(T.ones(2, 3))
        res = [p.grad is g, p.grad.stride(), values(p.grad), g._version - v]
        # a manually laid-out .grad keeps its layout
        q = T.ones(2, 3, requires_grad=True)
        q.grad = T.from_numpy(numpy.zeros((3, 2), numpy.float32).T)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # PyTorch: "do not obey the layout contract"
            (q * 2).backward(T.ones(2, 3))
        return res + [q.grad.stride(), values(q.grad)]
    both(scenario)


@pytest.mark.torch
def test_create_graph_replaces_grad(both):
    def scenario(T):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # backward(create_graph=True) reference cycle
            t = T.tensor([1., 2.], requires_grad=True)
            (t * t).backward(T.ones(2), create_graph=True)
            g1 = t.grad
            res = [values(g1), g1.requires_grad, g1.grad_fn.name()]
            (t * t).backward(T.ones(2), create_graph=True)
            g2 = t.grad
            res += [g2 is g1, values(g2), g2.grad_fn.name(), values(g1)]
            (t * t).backward(T.ones(2))  # plain backward: in place, even with a graph
            res += [t.grad is g2, values(t.grad), t.grad.grad_fn.name()]
            t.grad = None
            (t * t).backward(T.ones(2))
            g3 = t.grad
            (t * t).backward(T.ones(2), create_graph=True)
            res += [t.grad is g3, values(t.grad), values(g3)]
            p = _leaf(T, LAYOUTS["transposed"]())
            (p * p).backward(T.ones(2, 3), create_graph=True)
            return res + [p.grad.stride(), p.grad.grad_fn.name()]
    both(scenario)


@pytest.mark.torch
def test_grad_never_aliases_a_users_gradient(both):
    def scenario(T):
        res = []
        for create_graph in (False, True):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                x = T.tensor([1., 2.], requires_grad=True)
                g = T.tensor([5., 6.])
                (x + 0).backward(g, create_graph=create_graph)
                x.backward(g)
                kept = []
                x.register_hook(kept.append)
                (x * 1).backward(g)
                res += [values(g), values(x.grad), values(kept[0])]
        return res
    both(scenario)


class _Produced(_observe.EngineObserver):
    """Weak references to the gradients each node returns, by node name: an engine
    observer, which keeps no gradient (a hook would, for all the engine knows)."""

    def __init__(self):
        self.grads = {}

    def run_node(self, call, node, buf, create_graph):
        outs = call(node, buf, create_graph)
        self.grads.setdefault(node.name(), []).append(
            [None if g is None else weakref.ref(g) for g in outs])
        return outs

    def __getitem__(self, name):  # the first input gradient of the first such node
        return self.grads[name][0][0]()


@pytest.fixture
def produced():
    obs = _Produced()
    _observe.attach("engine", obs)
    yield obs
    _observe.detach("engine", obs)


def test_accumulate_grad_steals_an_unshared_gradient(produced):
    x = retrograd.ones(2, 3, requires_grad=True)
    w = retrograd.ones(3, 4)
    (x @ w).backward(retrograd.ones(2, 4))
    assert produced["MmBackward0"] is x.grad._data  # no copy
    x.grad = None
    x.exp().backward(retrograd.ones(2, 3))
    assert produced["ExpBackward0"] is x.grad._data


def test_transposed_weight_gradient_is_stolen_through_its_view(produced):
    """``x @ w.t()``: the matmul computes w.t()'s gradient in w's layout and TBackward0
    passes on a view of it; the view covers all of a gradient only the engine holds."""
    w = retrograd.ones(4, 3, requires_grad=True)
    (retrograd.ones(2, 3) @ w.t()).backward(retrograd.ones(2, 4))
    assert w.grad._data.base is produced["TBackward0"].base
    assert w.grad.stride() == (3, 1)


def test_gradient_shared_by_two_leaves_is_not_stolen_twice(produced):
    a = retrograd.tensor([1., 2.], requires_grad=True)
    b = retrograd.tensor([3., 4.], requires_grad=True)
    ((a + b) * 2).backward(retrograd.ones(2))
    g = produced["AddBackward0"]
    assert a.grad._data is not b.grad._data
    assert (a.grad._data is g) + (b.grad._data is g) == 1  # the last to run steals it
    (a * 3).backward(retrograd.ones(2))  # in place into a.grad only
    assert a.grad.tolist() == [5., 5.] and b.grad.tolist() == [2., 2.]
    (b * 5).backward(retrograd.ones(2))
    assert a.grad.tolist() == [5., 5.] and b.grad.tolist() == [7., 7.]


def test_gradient_a_node_hook_saw_is_not_stolen():
    x = retrograd.ones(2, 3, requires_grad=True)
    y = x * 2
    kept = []
    y.grad_fn.register_hook(lambda gi, go: kept.append(gi[0]))
    y.backward(retrograd.ones(2, 3))
    assert x.grad._data is not kept[0]._data
    (x * 2).backward(retrograd.ones(2, 3))  # in place into x.grad, not into what was kept
    assert kept[0].tolist() == [[2.] * 3] * 2 and x.grad.tolist() == [[4.] * 3] * 2


def test_gradient_a_tensor_hook_saw_is_not_stolen_by_another_leaf():
    """``a + v``: one gradient for both; v's hook keeps it, so a's .grad is a copy."""
    a = retrograd.ones(3, requires_grad=True)
    b = retrograd.ones(3, requires_grad=True)
    v = b * 1
    kept = []
    v.register_hook(kept.append)
    ((a + v) * 2).backward(retrograd.ones(3))
    assert a.grad._data is not kept[0]._data
    a.grad.add_(1)
    assert kept[0].tolist() == [2.] * 3


def test_gradient_a_hook_saw_is_not_stolen_through_a_view_run_later():
    """v's hook runs first and keeps the gradient both inputs of the add share; the view's
    node then passes a view of it on to a's AccumulateGrad, which must copy it."""
    a = retrograd.ones(3, requires_grad=True)
    b = retrograd.ones(3, requires_grad=True)
    av = a.view(3)
    v = b * 1
    kept = []
    v.register_hook(kept.append)
    ((av + v) * 2).backward(retrograd.ones(3))
    assert not numpy.shares_memory(a.grad._data, kept[0]._data)
    a.grad.add_(1)
    assert kept[0].tolist() == [2.] * 3


def test_gradient_a_custom_function_returns_is_not_stolen():
    """A user's backward may keep what it returns: its gradient is copied."""
    kept = []

    class Keep(retrograd.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            kept.append(g * 3)
            return kept[-1]

    x = retrograd.ones(2, requires_grad=True)
    Keep.apply(x).backward(retrograd.ones(2))
    assert x.grad._data is not kept[0]._data
    x.grad.add_(1)
    assert kept[0].tolist() == [3., 3.]


def test_leaf_hook_sees_a_gradient_that_is_then_copied():
    x = retrograd.ones(2, requires_grad=True)
    kept = []
    x.register_hook(kept.append)
    (x * 2).backward(retrograd.ones(2))
    assert x.grad._data is not kept[0]._data


def test_gradient_of_a_view_is_not_stolen():
    x = retrograd.ones(2, 3, requires_grad=True)
    (x * 2).backward(retrograd.ones(3, 2).t())  # a non-contiguous user gradient
    assert x.grad.stride() == (3, 1) and x.grad._data.base is None
