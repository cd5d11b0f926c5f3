"""Byte sizes as users write them: ``1.5GiB``, ``800MB``, ``2e9``."""

import math
import re

__all__ = ["parse_bytes"]

_UNITS = {"": 1, "B": 1, "KB": 10 ** 3, "MB": 10 ** 6, "GB": 10 ** 9, "TB": 10 ** 12,
          "KIB": 2 ** 10, "MIB": 2 ** 20, "GIB": 2 ** 30, "TIB": 2 ** 40}
_SIZE = re.compile(r"\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([A-Za-z]*)\s*\Z")


def parse_bytes(size):
    """``size`` (an int, a float, or a string with a unit: B, KB/MB/GB/TB powers of 1000,
    KiB/MiB/GiB/TiB powers of 1024) in bytes, rounded down."""
    if isinstance(size, bool) or not isinstance(size, (int, float, str)):
        raise TypeError(f"a memory size must be a number of bytes or a string such as "
                        f"'1.5GiB', got {type(size).__name__}")
    if isinstance(size, str):
        m = _SIZE.match(size)
        unit = m and _UNITS.get(m.group(2).upper())
        if unit is None:
            raise ValueError(f"cannot read {size!r} as a memory size: write a number with "
                             f"one of the units B, KB, MB, GB, TB, KiB, MiB, GiB, TiB")
        size = float(m.group(1)) * unit
    if not math.isfinite(size) or size <= 0:
        raise ValueError(f"a memory size must be positive and finite, got {size!r}")
    return int(size)
