"""``torch.backends.openmp``: retrograd's kernels do not use OpenMP."""

__all__ = ["is_available"]


def is_available():
    return False
