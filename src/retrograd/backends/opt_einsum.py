"""``torch.backends.opt_einsum``: whether the opt_einsum package is installed, as PyTorch
asks. retrograd's ``einsum`` orders its contractions with NumPy's optimizer (derived from
opt_einsum) either way, so ``enabled`` and ``strategy`` (plain attributes, as in PyTorch)
change no result."""

import importlib
import importlib.util

__all__ = ["is_available", "get_opt_einsum", "enabled", "strategy"]


def is_available():
    return importlib.util.find_spec("opt_einsum") is not None


def get_opt_einsum():
    """The opt_einsum module, or None when it is not installed."""
    return importlib.import_module("opt_einsum") if is_available() else None


enabled = is_available()
strategy = "auto" if enabled else None
