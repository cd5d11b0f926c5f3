"""``torch.backends.mkldnn``: retrograd has no oneDNN kernels; the flags are kept."""

import sys

from ._flags import Flag, FlagModule

__all__ = ["is_available", "flags"]


def is_available():
    return False


class MkldnnModule(FlagModule):
    enabled = Flag(True, "set_enabled_mkldnn")
    deterministic = Flag(False, "set_deterministic_mkldnn")
    allow_tf32 = Flag(True, "set_allow_tf32_onednn")


def flags(enabled=False, deterministic=False, allow_tf32=True):
    """Set the flags for a ``with`` block, as ``torch.backends.mkldnn.flags``."""
    return sys.modules[__name__]._set(enabled=enabled, deterministic=deterministic,
                                      allow_tf32=allow_tf32)


sys.modules[__name__].__class__ = MkldnnModule
