"""Every fast kernel declared with ``kernel()`` beside a rule is pinned to that rule: the
op-database entries of its op run with the kernel and with the rule alone, and forward
values and gradients agree (the kernel must also have run, so the pin is not vacuous)."""

import pytest

from retrograd.ops._registry import KERNELS
from _kernel_pins import check_kernel


@pytest.mark.parametrize("k", KERNELS, ids=repr)
def test_kernel_agrees_with_its_rule(k, monkeypatch):
    check_kernel(k, ("float16", "float32"), monkeypatch)
