"""``torch.backends.mps``: no Metal backend (this is not a PyTorch build for macOS)."""

__all__ = ["is_available", "is_built"]


def is_available():
    return False


def is_built():
    return False
