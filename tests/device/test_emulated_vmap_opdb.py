"""Every op-database entry under vmap on device "cuda" (the emulator) against vmap on the
CPU (``emulated_vmap_run``: three placements, nested once; values, then gradients): the
same results, on the device, with no loop over the batch that the CPU does not take; or
listed in ``not_batched_on_device.py`` with why (a listed entry that starts to pass
fails, so the list only shrinks). The batches are ``tests/vmap``'s, which need torch."""

import pytest

from device.not_batched_on_device import NOT_BATCHED_ON_DEVICE
from opdb import op_db

pytest.importorskip("torch")
pytestmark = pytest.mark.torch

from device.emulated_vmap_run import outcome  # noqa: E402 (vmap_run imports torch)


def test_the_list_names_only_entries_of_the_database():
    assert set(NOT_BATCHED_ON_DEVICE) <= {op.id for op in op_db}


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("op", op_db, ids=lambda op: op.id)
def test_op_under_vmap_on_the_device_matches_the_cpu(op):
    got = outcome(op)
    if op.id in NOT_BATCHED_ON_DEVICE:
        assert got is not None, (f"{op.id} now batches on the device: delete its entry from "
                                 f"tests/device/not_batched_on_device.py")
        return
    assert got is None, got
