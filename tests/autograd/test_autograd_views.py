"""Views in the graph: in-place writes through views (CopySlices) and views whose base was
written after they were taken (AsStridedBackward0), against PyTorch."""

import pytest

from _compare import values

pytestmark = pytest.mark.torch


def test_in_place_on_a_view_rewrites_the_base_history(both):
    def scenario(T):
        x = T.tensor([[1., 2., 3.], [4., 5., 6.]], requires_grad=True)
        y = x * 1
        v = y[:, 1:]
        v.mul_(T.tensor([2., 3.]))
        names = [y.grad_fn.name(), v.grad_fn.name(),
                 [n.name() if n else None for n, _ in y.grad_fn.next_functions]]
        y.backward(T.ones(2, 3))
        return [names, values(x.grad)]
    both(scenario)


def test_in_place_on_a_view_of_a_transposed_base(both):
    def scenario(T):
        x = T.tensor([[1., 2., 3.], [4., 5., 6.]], dtype=T.float64, requires_grad=True)
        y = (x * 1).t()
        y[1].add_(1)
        (y * y).backward(T.ones(3, 2, dtype=T.float64))
        return values(x.grad)
    both(scenario)


def test_views_taken_before_an_in_place_write_of_their_base(both):
    def scenario(T):
        x = T.tensor([[1., 2., 3.], [4., 5., 6.]], requires_grad=True)
        y = x * 1
        column = y[:, 1]
        y.mul_(2)
        (column * T.tensor([1., 2.])).backward(T.ones(2))
        res = [column.grad_fn.name(), values(x.grad)]
        z = T.tensor([1., 2., 3.], requires_grad=True)
        w = z * 1
        expanded = w.expand(2, 3)  # overlapping: gradients of repeated elements add up
        w.mul_(2)
        (expanded * T.tensor([[1., 2., 3.], [4., 5., 6.]])).backward(T.ones(2, 3))
        return res + [expanded.grad_fn.name(), values(z.grad)]
    both(scenario)


def test_retain_grad_of_a_base_written_through_a_view(both):
    def scenario(T):
        x = T.tensor([1., 2., 3.], requires_grad=True)
        b = x * 1
        b.retain_grad()
        b[:1].mul_(3)
        (b * 5).backward(T.ones(3))
        return [values(b.grad), values(x.grad), b.grad_fn.name()]
    both(scenario)


def test_leaf_view_and_in_place_errors(both):
    def scenario(T):
        from _compare import error
        x = T.tensor([1., 2., 3.], requires_grad=True)
        return [error(lambda: x[:2].mul_(2)), error(lambda: x.view(3).add_(1))]
    both(scenario)
