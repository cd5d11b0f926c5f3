"""Fixtures of the memory tests."""

import gc

import pytest

from retrograd import memory


@pytest.fixture
def fresh_books():
    """Accounting starts with empty books and is stopped (history off) afterwards."""
    memory.stop_accounting()
    gc.collect()
    yield
    memory._record_memory_history(None)
    memory.stop_accounting()
