"""Every fused CuPy kernel declared with ``kernel(..., "cupy")`` beside a rule is pinned
to that rule on the GPU: the op-database entries of its op run with the kernel and with
the rule alone, and forward values and gradients agree to the entry's tolerance (the
kernel must have run, so the pin is not vacuous)."""

import pytest

from retrograd.ops._registry import GPU_KERNELS
from _kernel_pins import check_kernel

pytestmark = pytest.mark.cuda


def _to_gpu(t):
    return t.detach().to("cuda").requires_grad_(t.requires_grad)


@pytest.mark.parametrize("k", GPU_KERNELS, ids=repr)
def test_gpu_kernel_agrees_with_its_rule(k, monkeypatch):
    check_kernel(k, ("float32", "float64"), monkeypatch, _to_gpu)
