"""``retrograd.utils``: ``data`` (datasets, samplers, DataLoader), as ``torch.utils``.

Not imported by ``import retrograd``; ``retrograd.utils`` is loaded on first attribute
access, so the package costs nothing to programs that do not load data.
"""

from . import data  # noqa: F401

__all__ = ["data"]
