"""The DataLoader's internals, laid out as ``torch.utils.data._utils``."""

from . import collate, worker  # noqa: F401
