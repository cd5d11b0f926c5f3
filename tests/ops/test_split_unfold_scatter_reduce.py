"""tensor_split, unfold and scatter_reduce: behaviour beyond the op database.

The pieces of tensor_split and the windows of unfold are views (memory and
version shared with the input); scatter_reduce's prod with several zeros at one
target refuses double backward as PyTorch does, while its forward mode works.
"""

import numpy
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import retrograd
import retrograd.autograd.forward_ad as fwAD


@pytest.mark.torch
@settings(max_examples=60, deadline=None)
@given(n=st.integers(0, 9), cuts=st.one_of(st.integers(1, 11),
                                           st.lists(st.integers(-12, 12), max_size=5)))
def test_tensor_split_shapes_match_torch(n, cuts):
    torch = pytest.importorskip("torch")
    a = numpy.arange(2.0 * n).reshape(n, 2)
    ours = retrograd.tensor_split(retrograd.tensor(a), cuts)
    ref = torch.tensor_split(torch.tensor(a), cuts)
    assert len(ours) == len(ref)
    for o, r in zip(ours, ref, strict=True):
        numpy.testing.assert_array_equal(o.numpy(), r.numpy())


@pytest.mark.torch
def test_tensor_split_pieces_are_views_with_slice_nodes():
    torch = pytest.importorskip("torch")
    for T in (retrograd, torch):
        x = T.arange(7.0).requires_grad_(True)
        y = x * 1
        pieces = T.tensor_split(y, 3)
        assert all(p._base is y for p in pieces)
        assert [type(p.grad_fn).__name__ for p in pieces] == ["SliceBackward0"] * 3
        assert len({id(p.grad_fn) for p in pieces}) == 3
        pieces[1].mul_(2)  # written through to the base
        assert y.tolist() == [0, 1, 2, 6, 8, 5, 6]
        y.sum().backward()
        assert x.grad.tolist() == [1, 1, 1, 2, 2, 1, 1]


@pytest.mark.torch
def test_unfold_is_a_view_of_overlapping_windows():
    torch = pytest.importorskip("torch")
    for T in (retrograd, torch):
        x = T.arange(10.0).reshape(5, 2).clone()
        w = x.unfold(0, 3, 1)
        assert w._base is x and w.shape == (3, 2, 3) and w.stride() == (2, 1, 2)
        x[2, 0] = 100.0  # seen by every window holding it
        assert w[:, 0, :].tolist() == [[0, 2, 100], [2, 100, 6], [100, 6, 8]]
        leaf = T.ones(5, 2, requires_grad=True)
        (leaf * 1).unfold(0, 3, 1).sum().backward()
        assert leaf.grad[:, 0].tolist() == [1, 2, 3, 2, 1]


@pytest.mark.torch
def test_scatter_reduce_prod_double_backward_past_two_zeros_raises():
    torch = pytest.importorskip("torch")
    for T in (retrograd, torch):
        x = T.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
        s = T.tensor([[0.0, 0.0, 2.0]], requires_grad=True)
        y = x.scatter_reduce(1, T.tensor([[0, 0, 1]]), s, "prod")
        g, = T.autograd.grad(y.sum(), s, create_graph=True)
        assert g.tolist() == [[0.0, 0.0, 2.0]]
        with pytest.raises(RuntimeError, match="Double backward is unsupported"):
            g.sum().backward()


def test_scatter_reduce_prod_forward_mode_with_zeros():
    """Each tangent times the product of the other contributors, zeros included."""
    x = retrograd.tensor([[1.0, 2.0, 3.0]])
    index = retrograd.tensor([[0, 0, 1]])
    for src, expected in (([[0.0, 0.0, 2.0]], [[0.0, 8.0, 1.0]]),
                          ([[0.0, 5.0, 2.0]], [[5.0, 8.0, 1.0]])):
        with fwAD.dual_level():
            xd = fwAD.make_dual(x, retrograd.ones_like(x))
            sd = fwAD.make_dual(retrograd.tensor(src), retrograd.tensor([[1.0, 2.0, 3.0]]))
            y = xd.scatter_reduce(1, index, sd, "prod")
            assert fwAD.unpack_dual(y).tangent.tolist() == expected


@pytest.mark.torch
def test_scatter_reduce_inplace_records_its_node():
    torch = pytest.importorskip("torch")
    grads = []
    for T in (retrograd, torch):
        x = T.tensor([[1.0, 5.0, 3.0]], requires_grad=True)
        y = x * 1
        y.scatter_reduce_(1, T.tensor([[0, 0, 2]]), T.tensor([[4.0, 1.0, 3.0]]), "amax")
        assert type(y.grad_fn).__name__ == "ScatterReduceBackward0"
        y.sum().backward()
        grads.append(x.grad.tolist())
    assert grads[0] == grads[1]


@pytest.mark.torch
@pytest.mark.parametrize("reduce", ["add", "multiply"])
def test_scatter_of_a_number_with_reduce_stays_on_the_inputs_device(reduce):
    torch = pytest.importorskip("torch")
    ours = retrograd.zeros(3, 4, device="meta").scatter(
        0, retrograd.tensor([[0, 1, 2, 0]], device="meta"), 2.0, reduce=reduce)
    ref = torch.zeros(3, 4, device="meta").scatter(
        0, torch.tensor([[0, 1, 2, 0]], device="meta"), 2.0, reduce=reduce)
    assert str(ours.device) == str(ref.device) == "meta"
    assert tuple(ours.shape) == tuple(ref.shape) and str(ours.dtype) == str(ref.dtype)
