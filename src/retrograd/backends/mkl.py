"""``torch.backends.mkl``: retrograd's kernels are NumPy's, not MKL's."""

__all__ = ["is_available"]


def is_available():
    return False
