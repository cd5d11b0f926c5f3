"""Byte counts as people read them: the one formatter of the memory summary, the planner
and the timeline page."""

__all__ = ["format_bytes"]


def format_bytes(n):
    """``n`` bytes in binary units with three significant digits: ``"1.23 GiB"``.

    Rounding is half-up on the exact value, as JavaScript's ``toFixed`` does, so the
    page (which formats the same numbers in JS) always agrees with Python; integer
    arithmetic keeps the value exact.
    """
    n = int(n)
    if abs(n) < 1024:
        return f"{n} B"
    for power, unit in enumerate(("KiB", "MiB", "GiB", "TiB", "PiB"), 1):
        base = 1024 ** power
        if abs(n) < 1024 * base or unit == "PiB":
            break
    digits = 0 if abs(n) >= 100 * base else 1 if abs(n) >= 10 * base else 2
    scaled = (2 * abs(n) * 10 ** digits + base) // (2 * base)
    whole, frac = divmod(scaled, 10 ** digits)
    text = f"{whole}.{frac:0{digits}d}" if digits else str(whole)
    return f"{'-' if n < 0 else ''}{text} {unit}"
