"""Warnings point at the user's line, as PyTorch's C++ warnings do, whichever wrapper
(``out=``, method or function form) the call went through."""

import warnings

import pytest

import retrograd
import retrograd.nn.functional as F

CALLS = {
    "var_method": lambda: retrograd.ones(1, 3).var(0),
    "var_function": lambda: retrograd.var(retrograd.ones(1, 3), 0),
    "std_function": lambda: retrograd.std(retrograd.ones(1, 3), 0),
    "new_tensor": lambda: retrograd.ones(2).new_tensor(retrograd.ones(2)),
    "out_resized": lambda: retrograd.add(retrograd.ones(3), 1, out=retrograd.empty(2)),
    "uint8_index": lambda: retrograd.ones(3)[retrograd.tensor([1, 0, 1], dtype=retrograd.uint8)],
    "scatter_reduce_arg": lambda: retrograd.zeros(3).scatter(
        0, retrograd.tensor([0]), retrograd.ones(1), reduce="add"),
    "cov": lambda: retrograd.cov(retrograd.ones(2, 1)),
    "cross_without_dim": lambda: retrograd.cross(retrograd.ones(3, 3), retrograd.ones(3, 3)),
    "nonleaf_grad": lambda: (retrograd.ones(2, requires_grad=True) * 2).grad,
    "size_average": lambda: F.mse_loss(retrograd.ones(2), retrograd.ones(2), size_average=True),
    "huber_broadcast": lambda: F.huber_loss(retrograd.ones(2, 2), retrograd.ones(2)),
    "mse_broadcast": lambda: F.mse_loss(retrograd.ones(2, 2), retrograd.ones(2)),
    "random_inexact": lambda: retrograd.zeros(2).random_(2 ** 30, 2 ** 30 + 9),
    "non_full_backward_hook": lambda: _non_full_hooked()(retrograd.ones(2, requires_grad=True)),
}


def _non_full_hooked():
    m = retrograd.nn.Sigmoid()
    m.register_backward_hook(lambda *grads: None)
    return m


@pytest.mark.parametrize("name", CALLS)
def test_warning_points_at_the_callers_line(name):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        CALLS[name]()
    assert caught, f"{name} gave no warning"
    assert {(w.filename, w.lineno) for w in caught} == {(__file__, _line_of(name))}


def _line_of(name):
    return CALLS[name].__code__.co_firstlineno
