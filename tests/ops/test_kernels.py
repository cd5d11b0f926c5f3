"""Every fast kernel declared with ``kernel()`` beside a rule is pinned to that rule: the
op-database entries of its op run with the kernel and with the rule alone, and forward
values and gradients agree (the kernel must also have run, so the pin is not vacuous).
The compiled kernels need numba compiling: without it (not installed, or
``NUMBA_DISABLE_JIT=1``) they never run and their pins are skipped."""

import pytest

from retrograd.backend import cpu_kernels
from retrograd.ops._registry import KERNELS
from _kernel_pins import check_kernel


def _compiled(k):
    """Whether ``k`` computes with the compiled kernels (its fast path calls them)."""
    return "cpu_kernels" in k.fast.__code__.co_names


@pytest.mark.parametrize("k", KERNELS, ids=repr)
def test_kernel_agrees_with_its_rule(k, monkeypatch):
    if _compiled(k) and not cpu_kernels.ready():
        pytest.skip("numba is not compiling: the compiled kernels are off")
    check_kernel(k, ("float16", "float32"), monkeypatch)
