"""Deterministic-algorithms mode, as ``torch.use_deterministic_algorithms``.

Every retrograd kernel is deterministic already (NumPy on one thread order), so the
mode has one visible effect, PyTorch's on the CPU: ``empty`` and its forms fill the
memory they return (NaN for floating types, the largest value for integers, True for
bool) instead of leaving it uninitialized, so results never depend on stale memory.
"""

import math

from ._dtype import kind_of, np_iinfo

__all__ = ["use_deterministic_algorithms", "are_deterministic_algorithms_enabled",
           "is_deterministic_algorithms_warn_only_enabled", "set_deterministic_debug_mode",
           "get_deterministic_debug_mode"]

_enabled = False
_warn_only = False


def use_deterministic_algorithms(mode, *, warn_only=False):
    """Turn deterministic mode on or off.

    >>> use_deterministic_algorithms(True); are_deterministic_algorithms_enabled()
    True
    """
    global _enabled, _warn_only
    for name, v in (("mode", mode), ("warn_only", warn_only)):
        if not isinstance(v, bool):
            pos = " (position 1)" if name == "mode" else ""
            raise TypeError(f"_set_deterministic_algorithms(): argument '{name}'{pos} must be "
                            f"bool, not {type(v).__name__}")
    _enabled, _warn_only = mode, warn_only


def are_deterministic_algorithms_enabled():
    return _enabled


def is_deterministic_algorithms_warn_only_enabled():
    return _warn_only


def set_deterministic_debug_mode(debug_mode):
    """0 / ``"default"``: off; 1 / ``"warn"``: on, warn only; 2 / ``"error"``: on."""
    if isinstance(debug_mode, str):
        names = ("default", "warn", "error")
        if debug_mode not in names:
            raise RuntimeError(f"invalid value of debug_mode, expected one of `default`, "
                               f"`warn`, `error`, but got {debug_mode}")
        debug_mode = names.index(debug_mode)
    elif not isinstance(debug_mode, int):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got "
                           f"{debug_mode}")
    use_deterministic_algorithms(debug_mode > 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode():
    return 0 if not _enabled else 1 if _warn_only else 2


def fill_uninitialized(array):
    """Fill a new ``empty`` array as PyTorch does in deterministic mode (else leave it)."""
    if _enabled:
        kind = kind_of(array.dtype)
        array.fill(math.nan if kind in "fc" else True if kind == "b"
                   else np_iinfo(array.dtype).max)
    return array
