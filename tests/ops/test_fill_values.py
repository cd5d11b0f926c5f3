"""Numbers written by fill_, fill_diagonal_, full and index_fill_ against PyTorch: c10's
checked conversion (an overflow is a RuntimeError, an integer -1 wraps into uint8, a float
does not, a Python int past 64 bits is an OverflowError before any dtype; a single element
of float16 or bfloat16 takes an overflow as inf, as PyTorch's one-element fill) and the
refusal of what is not a number."""

import pytest

import retrograd

pytestmark = pytest.mark.torch

CASES = [
    "T.zeros(2, dtype=T.uint8).fill_(300)", "T.zeros(2, dtype=T.uint8).fill_(-1)",
    "T.zeros(2, dtype=T.uint8).fill_(-129)", "T.zeros(2, dtype=T.uint8).fill_(-256)",
    "T.zeros(2, dtype=T.uint8).fill_(255)", "T.zeros(2, dtype=T.int8).fill_(128)",
    "T.zeros(2, dtype=T.int8).fill_(-128)", "T.zeros(2, dtype=T.uint8).fill_(-1.0)",
    "T.zeros(2, dtype=T.uint8).fill_(-0.5)", "T.zeros(2, dtype=T.uint8).fill_(255.5)",
    "T.zeros(2, dtype=T.int64).fill_(255.9)", "T.zeros(2, dtype=T.int64).fill_(-0.5)",
    "T.zeros(2, dtype=T.int64).fill_(float('nan'))", "T.zeros(2, dtype=T.int32).fill_(2**31)",
    "T.zeros(2, dtype=T.int64).fill_(2**63)", "T.zeros(2, dtype=T.int64).fill_(2**64)",
    "T.zeros(2, dtype=T.int64).fill_(-2**63 - 1)", "T.zeros(2).fill_(2**64)",
    "T.zeros(2, dtype=T.float16).fill_(1e6)", "T.zeros(2, dtype=T.float16).fill_(65520.0)",
    "T.zeros(2).fill_(1e39)", "T.zeros(2, dtype=T.bfloat16).fill_(1e39)",
    "T.zeros(1, dtype=T.float16).fill_(70000)", "T.zeros((), dtype=T.bfloat16).fill_(1e39)",
    "T.full((), 2 ** 63, dtype=T.float16)", "T.full((1,), 1e39, dtype=T.float32)",
    "T.zeros(2).fill_(1 + 2j)", "T.zeros(2).fill_(1 + 0j)", "T.zeros(2, dtype=T.bool).fill_(5)",
    "T.zeros(2, dtype=T.uint8).fill_(T.tensor(300))", "T.zeros(2).fill_('a')",
    "T.zeros(2).fill_(None)", "T.zeros(2, 2, dtype=T.uint8).fill_diagonal_(300)",
    "T.zeros(2, 2, dtype=T.uint8).fill_diagonal_(-1)", "T.full((2,), 300, dtype=T.uint8)",
    "T.full((2,), -1, dtype=T.uint8)", "T.full((2,), 1e39)", "T.full((2,), 2**64)",
    "T.full((2,), float('nan'), dtype=T.int64)", "T.full((2,), 1.5, dtype=T.int64)",
    "T.full((2,), 'a')", "T.full((2,), None)",
    "T.zeros(2, dtype=T.uint8).index_fill_(0, T.tensor([0]), 300)",
    "T.zeros(2, dtype=T.uint8).index_fill(0, T.tensor([1]), -1)",
    "T.zeros(2).index_fill_(0, T.tensor([1]), 'a')",
    "T.zeros(2, dtype=T.uint8).masked_fill_(T.tensor([True, False]), -1.0)",
]


@pytest.mark.parametrize("expr", CASES)
def test_filled_numbers_match_torch(torch, expr):
    try:
        want = eval(expr, {"T": torch})
    except (RuntimeError, TypeError, OverflowError) as e:
        with pytest.raises(type(e)) as info:
            eval(expr, {"T": retrograd})
        assert str(info.value).split("\n")[0] == str(e).split("\n")[0]
        return
    got = eval(expr, {"T": retrograd})
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    assert got.tolist() == want.tolist() or str(got.tolist()) == str(want.tolist())
