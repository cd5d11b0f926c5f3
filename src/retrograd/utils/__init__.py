"""``retrograd.utils``: ``data`` (datasets, samplers, DataLoader) and ``checkpoint``
(activation checkpointing), as ``torch.utils``.

Not imported by ``import retrograd``; ``retrograd.utils`` is loaded on first attribute
access, so the package costs nothing to programs that do not load data.
"""

from . import checkpoint, data  # noqa: F401

__all__ = ["checkpoint", "data"]
