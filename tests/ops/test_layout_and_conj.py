"""What scripts ask of a tensor's form, against PyTorch: ``layout`` (every retrograd
tensor is strided; factories parse ``layout=`` and refuse the sparse ones), the flags
library code checks before a sparse or quantized path, ``conj`` (materialized) and its
companions, and ``sum_to_size``."""

import pickle

import numpy
import pytest

import retrograd

pytestmark = pytest.mark.torch

LAYOUT_CASES = [
    "T.zeros(2, layout=T.strided).layout", "T.ones(2).layout", "repr(T.strided)",
    "repr(T.sparse_coo)", "T.zeros(2, layout='a')", "T.ones_like(T.ones(2), layout=5)",
    "T.randn(2).new_zeros(3, layout='x')", "T.tril_indices(3, 3, layout='z')",
    "T.full((2,), 1.0, layout=None).layout", "T.arange(3, layout=T.strided).tolist()",
    "[T.ones(2).is_sparse, T.ones(2).is_sparse_csr, T.ones(2).is_quantized, "
    "T.ones(2).is_nested, T.ones(2).is_mkldnn]",
    "T.tensor([1 + 2j, 3 - 1j]).conj().tolist()", "T.conj(T.tensor([1 + 2j])).tolist()",
    "T.tensor([1.0]).conj().tolist()", "T.tensor([1.0]).is_conj()", "T.is_neg(T.ones(2))",
    "T.tensor([1 + 2j]).conj().resolve_conj().tolist()", "T.resolve_neg(T.ones(2)).tolist()",
]


def _outcome(expr, T):
    try:
        return "ok", str(eval(expr, {"T": T})).replace("torch.", "T.")
    except (TypeError, RuntimeError) as e:
        return type(e).__name__, str(e).split("\n")[0]


@pytest.mark.parametrize("expr", LAYOUT_CASES)
def test_layout_flags_and_conj_match_torch(torch, expr):
    assert _outcome(expr, retrograd) == _outcome(expr, torch)


def test_a_sparse_layout_is_refused_not_made_dense():
    with pytest.raises(NotImplementedError, match="layout=torch.sparse_coo"):
        retrograd.zeros(2, layout=retrograd.sparse_coo)
    assert pickle.loads(pickle.dumps(retrograd.strided)) is retrograd.strided


def test_conj_of_a_real_tensor_is_itself():
    x = retrograd.ones(2)
    assert x.conj() is x and x.resolve_conj() is x


@pytest.mark.parametrize("size", [(2, 1), ((1, 3),), (4, 2, 3), (3,), (1, 1, 1), (2, 3),
                                  (2, 1, 3), ("a",), (5,), (1, 4, 2, 3)])
def test_sum_to_size_matches_torch(torch, size):
    a = numpy.random.default_rng(0).standard_normal((4, 2, 3))
    outs = []
    for T in (torch, retrograd):
        x = T.from_numpy(a.copy()).requires_grad_()
        try:
            y = x.sum_to_size(*size)
        except (TypeError, RuntimeError) as e:
            outs.append((type(e).__name__, str(e)))
            continue
        node = type(y.grad_fn).__name__ if y.grad_fn is not None else None
        (g,) = T.autograd.grad(y, x, T.ones_like(y)) if y is not x else (None,)
        outs.append((tuple(y.shape), node, y.detach().numpy().round(12).tolist(),
                     None if g is None else g.numpy().tolist()))
    assert outs[0] == outs[1]
