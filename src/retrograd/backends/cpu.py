"""``torch.backends.cpu``: the SIMD level NumPy's kernels were dispatched to."""

from numpy._core._multiarray_umath import __cpu_features__

__all__ = ["get_cpu_capability"]


def get_cpu_capability():
    """``"AVX512"``, ``"AVX2"`` or ``"DEFAULT"`` on x86 (``"SVE256"``... on ARM is not
    told apart: ``"DEFAULT"``), read from NumPy's runtime CPU dispatch as PyTorch reads its
    own.

    >>> get_cpu_capability() in ("DEFAULT", "AVX2", "AVX512")
    True
    """
    f = __cpu_features__
    if all(f.get(k) for k in ("AVX512F", "AVX512BW", "AVX512VL", "AVX512DQ")):
        return "AVX512"
    if f.get("AVX2") and f.get("FMA3"):
        return "AVX2"
    return "DEFAULT"
