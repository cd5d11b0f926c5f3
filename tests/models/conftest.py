"""Single-threaded BLAS for the model tests: their matrices are small, and BLAS threads
only add synchronisation that makes them 2-10x slower under ``pytest -n 2`` on 2 cores."""

import contextlib

import pytest

try:
    from threadpoolctl import threadpool_limits
except ImportError:  # threadpoolctl comes with scikit-learn (the test extra)
    threadpool_limits = None


@pytest.fixture(autouse=True)
def _one_blas_thread():
    with (threadpool_limits(limits=1, user_api="blas") if threadpool_limits
          else contextlib.nullcontext()):
        yield
