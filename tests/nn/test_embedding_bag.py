"""F.embedding_bag and nn.EmbeddingBag against PyTorch: every mode, offsets and fixed-length
bags, empty bags, padding, per-sample weights, include_last_offset, gradients of the weight
and of the per-sample weights, and PyTorch's refusals; where PyTorch 2.13 is wrong
(docs/deviations.md), the right answer."""

import numpy
import pytest

import retrograd

W = numpy.random.default_rng(0).standard_normal((10, 3))

CASES = [
    ([1, 2, 3, 4], [0, 2], {}), ([1, 2, 3, 4], [0, 2], {"mode": "sum"}),
    ([1, 2, 3, 4], [0, 2], {"mode": "max"}), ([[1, 2], [3, 3]], None, {}),
    ([[1, 2], [3, 3]], None, {"mode": "max"}), ([1, 2, 3], [0, 1, 1], {"mode": "mean"}),
    ([1, 2, 3], [0, 1, 1], {"mode": "max"}),
    ([1, 2, 3, 2], [0, 2], {"mode": "sum", "psw": [0.5, 2.0, -1.0, 3.0]}),
    ([1, 2, 3, 2], [0, 3], {"mode": "mean", "padding_idx": 2}),
    ([1, 2, 3, 2], [0, 3], {"mode": "max", "padding_idx": 2}),
    ([1, 2, 3, 2], [0, 3], {"mode": "sum", "padding_idx": 2, "psw": [1.0, 2.0, 3.0, 4.0]}),
    ([1, 2, 3], [0, 1, 3], {"include_last_offset": True}), ([], [0, 0], {}),
    ([], [0, 0], {"mode": "max"}), ([[1, 2, 2], [3, 4, 2]], None, {"padding_idx": -8}),
    ([5, 5, 5], [0], {"mode": "max"}),
    ([1, 3, 3, 3], [0, 1], {"scale_grad_by_freq": True, "mode": "sum"}),
    # refusals
    ([1, 1, 3], [0, 2], {"scale_grad_by_freq": True, "mode": "max"}), ([1, 2, 3], [1], {}),
    ([1, 2, 3], [0, 4], {}), ([1, 2, 13], [0, 2], {}),
    ([1, 2, 3], [0, 2], {"mode": "mean", "psw": [1.0, 1.0, 1.0]}),
    ([1, 2, 3], [0, 2], {"padding_idx": 12}), ([[1, 2], [3, 4]], [0], {}),
    ([1, 2, 3], None, {}), ([1, 2, 3], [0, 2], {"mode": "foo"}),
    ([1, 2, 3], [0, 2], {"mode": "sum", "psw": [1.0, 2.0]}),
]


def _run(T, inp, off, **kw):
    """(node, values, gradients) of a bag sum against a fixed cotangent, or the error."""
    w = T.from_numpy(W.copy()).requires_grad_()
    x = T.tensor(inp, dtype=T.int64)
    o = None if off is None else T.tensor(off)
    psw = kw.pop("psw", None)
    p = None if psw is None else T.tensor(psw, dtype=T.float64).requires_grad_()
    try:
        y = T.nn.functional.embedding_bag(x, w, o, per_sample_weights=p, **kw)
    except (RuntimeError, ValueError, NotImplementedError) as e:
        return type(e).__name__, str(e).split("\n")[0]
    cot = T.from_numpy(numpy.arange(y.numel(), dtype=numpy.float64).reshape(tuple(y.shape)))
    grads = T.autograd.grad(y, [w] + ([p] if p is not None else []), cot * 0.1 + 1)
    return (type(y.grad_fn).__name__, y.detach().numpy().round(10).tolist(),
            [g.numpy().round(10).tolist() for g in grads])


@pytest.mark.torch
@pytest.mark.parametrize("case", CASES, ids=str)
def test_matches_torch(torch, case):
    inp, off, kw = case
    assert _run(retrograd, inp, off, **dict(kw)) == _run(torch, inp, off, **dict(kw))


def test_scale_grad_by_freq_divides_each_row_by_its_own_count():
    """PyTorch halves row 3's gradient here (the row after a repeated index)."""
    w = retrograd.ones(10, 1, requires_grad=True)
    y = retrograd.nn.functional.embedding_bag(retrograd.tensor([1, 1, 3]), w,
                                              retrograd.tensor([0, 2]), mode="sum",
                                              scale_grad_by_freq=True)
    (g,) = retrograd.autograd.grad(y.sum(), w)
    assert g[:, 0].tolist() == [0, 1, 0, 1, 0, 0, 0, 0, 0, 0]


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_the_last_bag_ends_at_the_last_offset(mode):
    """include_last_offset with a last offset short of the input: bag 1 is index 2 alone
    in every mode (PyTorch's max runs on to the end, its mean divides wrongly)."""
    w = retrograd.arange(10.0).unsqueeze(1)
    y = retrograd.nn.functional.embedding_bag(retrograd.tensor([1, 2, 3]), w,
                                              retrograd.tensor([0, 1, 2]),
                                              include_last_offset=True, mode=mode)
    assert y[:, 0].tolist() == [1.0, 2.0]


def test_decreasing_offsets_are_refused():
    with pytest.raises(RuntimeError, match="offsets must be non-decreasing"):
        retrograd.nn.functional.embedding_bag(retrograd.tensor([1, 2, 3]), retrograd.ones(10, 2),
                                              retrograd.tensor([0, 2, 1]))


@pytest.mark.torch
def test_module_matches_torch(torch):
    out = []
    for T in (torch, retrograd):
        T.manual_seed(0)
        m = T.nn.EmbeddingBag(10, 3, mode="sum", padding_idx=2)
        pre = T.nn.EmbeddingBag.from_pretrained(T.ones(4, 2), mode="max")
        m.weight.data = T.from_numpy(W.copy()).to(m.weight.dtype)
        y = m(T.tensor([1, 2, 3, 4]), T.tensor([0, 2]))
        out.append((repr(m), repr(pre), pre.weight.requires_grad, y.detach().numpy().round(6)
                    .tolist(), pre(T.tensor([[1, 3]])).tolist()))
    assert out[0] == out[1]
