"""Fixtures for the autograd tests; the helpers live in _compare.py."""

import pytest

import retrograd
from _compare import same


@pytest.fixture
def both(torch):
    """``both(scenario)``: run with retrograd and PyTorch, assert equal, return ours."""
    def run(scenario):
        ours, ref = scenario(retrograd), scenario(torch)
        assert same(ours, ref), f"\nretrograd: {ours!r}\npytorch:   {ref!r}"
        return ours
    return run
