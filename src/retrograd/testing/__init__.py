"""``retrograd.testing``: ``assert_close`` and ``make_tensor`` (``torch.testing``), and
the op database the test suite is generated from (PyTorch's OpInfo idea)."""

from ._comparison import assert_close
from ._creation import make_tensor

__all__ = ["assert_close", "make_tensor"]
