"""``retrograd.utils``: ``data`` (datasets, samplers, DataLoader), ``checkpoint``
(activation checkpointing) and ``hooks`` (hook handles), as ``torch.utils``.

Not imported by ``import retrograd``; ``retrograd.utils`` is loaded on first attribute
access, so the package costs nothing to programs that do not load data.
"""

from . import checkpoint, data, hooks  # noqa: F401

__all__ = ["checkpoint", "data", "hooks"]
