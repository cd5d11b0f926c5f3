"""Binary ops and matrix products at the edges the differential fuzz found, against
PyTorch: bool products with an empty result or inner size 0, check order of shape,
dtype and bool errors, and backward errors and gradients at special values."""

import numpy
import pytest

import retrograd


def _outcome(lib, fn):
    """The result (as NumPy, with its dtype name) or the exception type and message."""
    try:
        out = fn(lib)
    except (RuntimeError, NotImplementedError, TypeError, ValueError) as e:
        return type(e).__name__, str(e)
    return str(out.dtype).removeprefix("torch."), out.detach().numpy()


def _same(torch, fn):
    want, got = _outcome(torch, fn), _outcome(retrograd, fn)
    assert got[0] == want[0]
    if isinstance(want[1], str):
        assert got[1] == want[1]
    else:
        numpy.testing.assert_array_equal(got[1], want[1])


def _bools(lib, *shapes):
    return [lib.ones(s, dtype=lib.bool) for s in shapes]


@pytest.mark.torch
@pytest.mark.parametrize("name, shapes", [
    ("mm", [(0, 3), (3, 2)]), ("mm", [(2, 0), (0, 2)]), ("mm", [(2, 3), (3, 2)]),
    ("mm", [(3, 0), (4, 2)]), ("bmm", [(0, 2, 3), (0, 3, 2)]), ("bmm", [(1, 2, 0), (1, 0, 2)]),
    ("bmm", [(1, 2, 3), (1, 3, 2)]), ("bmm", [(1, 2, 3), (1, 4, 2)]), ("mv", [(0, 3), (3,)]),
    ("mv", [(2, 0), (0,)]), ("mv", [(2, 3), (4,)]), ("dot", [(0,), (0,)]), ("dot", [(2,), (3,)]),
    ("matmul", [(0,), (0, 2)]), ("matmul", [(0, 2, 3), (3, 2)]), ("matmul", [(2, 2, 0), (0,)]),
    ("matmul", [(2, 3), (0, 3, 2)]), ("matmul", [(0,), (2, 0, 2)]), ("matmul", [(3,), (2, 3, 2)]),
    ("matmul", [(2, 2, 3), (4, 2)]), ("matmul", [(2, 1, 0), (2, 0, 2)]),
    ("matmul", [(2, 1, 2, 3), (2, 4, 2)]),
])
def test_bool_products_with_nothing_to_sum(torch, name, shapes):
    """PyTorch refuses bool products only when there is something to multiply."""
    _same(torch, lambda lib: getattr(lib, name)(*_bools(lib, *shapes)))


@pytest.mark.torch
def test_bmm_refuses_bool_batch1_before_a_dtype_mismatch(torch):
    _same(torch, lambda lib: lib.bmm(lib.ones(1, 2, 3, dtype=lib.bool), lib.ones(1, 3, 2)))
    _same(torch, lambda lib: lib.bmm(lib.ones(1, 2, 3), lib.ones(1, 3, 2, dtype=lib.bool)))
    _same(torch, lambda lib: lib.matmul(lib.ones(2, 2, 3, dtype=lib.bool), lib.ones(2, 3, 2)))
