"""Every op-database entry under retrograd.vmap against torch.vmap (three placements,
nested once; values, then gradients): it must batch without a loop over the batch, or
be listed in ``not_batched.py`` with why (a listed entry that starts to pass fails, so
the list only shrinks)."""

import pytest

from opdb import op_db
from vmap.not_batched import NOT_BATCHED, TORCH_VMAP_DIFFERS

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

from vmap.vmap_run import DIFFERS, outcome  # noqa: E402 (needs torch)


def test_the_list_names_only_entries_of_the_database():
    assert set(NOT_BATCHED) | set(TORCH_VMAP_DIFFERS) <= {op.id for op in op_db}


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("op", op_db, ids=lambda op: op.id)
def test_op_under_vmap_matches_torch_vmap(op):
    result = outcome(op)
    if result == "skip":
        pytest.skip("torch.vmap runs none of its samples")
    if op.id in NOT_BATCHED:
        assert result is not None and not result.startswith(DIFFERS), \
            f"{op.id} now batches: remove it from not_batched.py"
    elif op.id in TORCH_VMAP_DIFFERS:
        assert result is not None and result.startswith(DIFFERS), \
            f"{op.id}: {result} (not as listed in TORCH_VMAP_DIFFERS, not_batched.py)"
    else:
        assert result is None, result
