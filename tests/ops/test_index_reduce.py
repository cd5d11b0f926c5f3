"""index_reduce / index_reduce_ against PyTorch: every reduction both ways of
include_self (values and gradients, ties included), PyTorch's checks and dtype refusals,
the beta warning; and scatter_reduce's complex mean (a true division)."""

import warnings

import numpy
import pytest

import retrograd

pytestmark = pytest.mark.torch

X = numpy.random.default_rng(0).standard_normal((4, 3))
S = numpy.random.default_rng(1).standard_normal((5, 3))
S[1] = S[0]  # a tie for amax and amin

CASES = [f"x.index_reduce(0, idx, s, '{r}', include_self={inc})"
         for r in ("prod", "mean", "amax", "amin") for inc in (True, False)] + [
    "x.clone().index_reduce_(0, idx, s, 'prod')",
    "T.index_reduce(x, 0, idx, s, 'amin', include_self=False)",
    "x.index_reduce(-1, T.tensor([2, 2, 0]), s[:4], 'mean')",
    "x.index_reduce(0, T.tensor([1, 2], dtype=T.int32), s[:2], 'amax')",
    "T.zeros(4, 3, dtype=T.int64).index_reduce(0, idx, T.ones(5, 3, dtype=T.int64) * 3, 'mean')",
    "x.index_reduce(0, idx, s, 'sum')", "x.index_reduce(0, idx.float(), s, 'prod')",
    "x.index_reduce(0, idx, s[:4], 'prod')",
    "x.index_reduce(0, T.tensor([0, 0, 2, 3, 9]), s, 'prod')",
    "x.index_reduce(0, T.tensor([0, 0, 2, 3, -1]), s, 'prod')",
    "x.index_reduce(0, idx, s.float(), 'prod')", "x.index_reduce(0, idx.view(5, 1), s, 'prod')",
    "x.index_reduce(2, idx, s, 'prod')", "x.index_reduce(0, idx, s[:, :2], 'prod')",
    "x.index_reduce_(0, idx, s, 'prod', include_self=2)",
    *(f"T.zeros(4, 3, dtype=T.{dt}).index_reduce(0, T.tensor([0, 1]), T.ones(2, 3, dtype=T.{dt}), "
      f"'{r}', include_self={inc})" for dt in ("bool", "complex64")
      for r in ("prod", "mean", "amax") for inc in (True, False)),
    "T.zeros(3, dtype=T.complex64).scatter_reduce(0, T.tensor([0, 0]), "
    "T.tensor([1 + 1j, 2 + 0j], dtype=T.complex64), 'mean')",
]


def _run(T, expr):
    x = T.from_numpy(X.copy()).requires_grad_()
    s = T.from_numpy(S.copy()).requires_grad_()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            y = eval(expr, {"T": T, "x": x, "s": s, "idx": T.tensor([0, 0, 2, 3, 0])})
    except (RuntimeError, TypeError, IndexError, NotImplementedError) as e:
        return type(e).__name__, str(e).split("\n")[0]
    if not y.requires_grad:
        v = y.numpy()
        return str(y.dtype).split(".")[-1], (v if v.dtype == bool else v.round(6)).tolist()
    cot = T.from_numpy(numpy.arange(y.numel(), dtype=numpy.float64).reshape(tuple(y.shape)))
    gx, gs = T.autograd.grad(y, (x, s), cot * 0.1 + 1, allow_unused=True)
    return (type(y.grad_fn).__name__, numpy.round(y.detach().numpy(), 10).tolist(),
            [None if g is None else numpy.round(g.numpy(), 10).tolist() for g in (gx, gs)])


@pytest.mark.parametrize("expr", CASES)
def test_matches_torch(torch, expr):
    assert _run(retrograd, expr) == _run(torch, expr)


def test_warns_that_it_is_in_beta(monkeypatch):
    from retrograd.ops import scatter
    monkeypatch.setattr(scatter, "_BETA", [])
    with pytest.warns(UserWarning, match="index_reduce\\(\\) is in beta"):
        retrograd.zeros(3).index_reduce(0, retrograd.tensor([0]), retrograd.ones(1), "amax")
