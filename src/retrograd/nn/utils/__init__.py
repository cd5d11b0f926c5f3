"""``retrograd.nn.utils``."""

from . import rnn  # noqa: F401
