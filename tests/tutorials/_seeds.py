"""Reading the seed tutorials: their path and their sphinx-gallery code blocks."""

from pathlib import Path

_REPO = Path(__file__).resolve().parents[2]


def seed_path(name):
    """``shared/seeds/<name>`` inside the checkout or beside it (as CI lays it out); None
    when absent."""
    return next((d / "shared" / "seeds" / name for d in (_REPO, _REPO.parent)
                 if (d / "shared" / "seeds" / name).exists()), None)


def code_blocks(text):
    """[(line, code, expected output or None)] for each ``code-block:: default``: the
    dedented code, and the output the seed shows after it (if any)."""
    lines = text.splitlines()
    blocks, i = [], 0
    while i < len(lines):
        if lines[i].strip() != ".. code-block:: default":
            i += 1
            continue
        start = i + 1
        code, i = _indented(lines, i + 1)
        expected, j = None, i
        while j < len(lines) and not lines[j].strip().startswith(".. code-block::") \
                and not lines[j].startswith(".. GENERATED FROM"):
            j += 1
        if j < len(lines) and lines[j].strip() == ".. code-block:: none" and \
                any(".. rst-class:: sphx-glr-script-out" in x for x in lines[i:j]):
            expected, i = _indented(lines, j + 1)
        blocks.append((start, code, expected))
    return blocks


def _indented(lines, i):
    """The dedented lines indented under a directive, and the index after them."""
    body = []
    while i < len(lines) and (not lines[i].strip() or lines[i].startswith(" ")):
        body.append(lines[i])
        i += 1
    while body and not body[-1].strip():
        body.pop()
    while body and not body[0].strip():
        body.pop(0)
    indent = min(len(x) - len(x.lstrip()) for x in body if x.strip())
    return "\n".join(x[indent:] for x in body) + "\n", i
