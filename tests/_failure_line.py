"""One line per failing op-database entry, for the generated lists of entries that do
not run somewhere (meta, the emulated device, vmap)."""

import traceback


def failure_line(e, internal, short=None):
    """``e`` in one line of at most 86 characters: the last retrograd frame whose file path
    does not contain ``internal`` (the backend under test), the exception's type and the
    first line of its message (replaced by ``short[fragment]`` when it contains one)."""
    frames = [f for f in traceback.extract_tb(e.__traceback__)
              if "/retrograd/" in f.filename and internal not in f.filename]
    where = ""
    if frames:
        f = frames[-1]
        where = f"{f.filename.split('/retrograd/')[-1]} {f.name}: "
    msg = str(e).splitlines()[0] if str(e) else ""
    for long, brief in (short or {}).items():
        if long in msg:
            msg = brief
    return f"{where}{type(e).__name__}: {msg}"[:86]
