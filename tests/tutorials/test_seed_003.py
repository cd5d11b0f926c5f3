"""Seed 003, PyTorch's "A Gentle Introduction to torch.autograd", run with retrograd.

The code blocks are parsed from the seed file itself (its ``.. code-block:: default``
sections) and run in order in one namespace with ``import torch`` meaning
``import retrograd as torch``; what they print must equal the output the seed
shows after them. Blocks that need torchvision, a model, ``nn`` or ``optim`` are
skipped (their tests say which).
"""

import ast
import contextlib
import io
import re
from pathlib import Path

import pytest

SEED_NAME = "003_741c487edf251890.txt"
_REPO = Path(__file__).resolve().parents[2]
SEED = next((d / "shared" / "seeds" / SEED_NAME for d in (_REPO, _REPO.parent)
             if (d / "shared" / "seeds" / SEED_NAME).exists()), None)

# Names whose use means a block needs what this tutorial test does not cover.
_NEEDS = {"torchvision": "torchvision", "resnet18": "a torchvision model",
          "model": "a torchvision model", "prediction": "a torchvision model",
          "nn": "torch.nn", "optim": "torch.optim"}


def _blocks(text):
    """[(line, code, expected output or None)] for each ``code-block:: default``."""
    lines = text.splitlines()
    blocks = []
    i = 0
    while i < len(lines):
        if lines[i].strip() == ".. code-block:: default":
            start = i + 1
            code, i = _indented(lines, i + 1)
            expected = None
            j = i
            while j < len(lines) and not lines[j].strip().startswith(".. code-block::") \
                    and not lines[j].startswith(".. GENERATED FROM"):
                j += 1
            if j < len(lines) and lines[j].strip() == ".. code-block:: none" and \
                    any(".. rst-class:: sphx-glr-script-out" in x for x in lines[i:j]):
                expected, i = _indented(lines, j + 1)
            blocks.append((start, code, expected))
        else:
            i += 1
    return blocks


def _indented(lines, i):
    """The dedented block of lines indented under a directive, and the index after it."""
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


def _needs(code):
    """What a block needs that is out of scope, or None."""
    names = set()
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.ImportFrom):
            names.add(node.module.split(".")[0])
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.Attribute):
            names.add(node.attr)
    for name, what in _NEEDS.items():
        if name in names:
            return what
    return None


def _as_retrograd(code):
    return re.sub(r"^import torch$", "import retrograd as torch", code, flags=re.M)


BLOCKS = _blocks(SEED.read_text()) if SEED is not None else []


def test_seed_has_the_expected_blocks():
    if SEED is None:
        pytest.skip(f"seed {SEED_NAME} not found")
    runnable = [b for b in BLOCKS if _needs(b[1]) is None]
    assert len(BLOCKS) == 13 and len(runnable) == 5
    assert sum(b[2] is not None for b in runnable) == 2


@pytest.mark.parametrize("line", [b[0] for b in BLOCKS if _needs(b[1]) is not None])
def test_skipped_blocks(line):
    code = next(b[1] for b in BLOCKS if b[0] == line)
    pytest.skip(f"seed block at line {line} needs {_needs(code)}: {code.splitlines()[0]!r}")


def test_autograd_blocks_print_what_the_seed_shows():
    if SEED is None:
        pytest.skip(f"seed {SEED_NAME} not found")
    namespace = {}
    checked = 0
    for line, code, expected in BLOCKS:
        if _needs(code) is not None:
            continue
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(_as_retrograd(code), f"{SEED_NAME}:{line}", "exec"), namespace)
        if expected is not None:
            assert out.getvalue().strip().splitlines() == expected.strip().splitlines(), \
                f"block at line {line}"
            checked += 1
    assert checked == 2
    assert namespace["torch"].__name__ == "retrograd"
    assert namespace["a"].requires_grad is False and namespace["b"].requires_grad is True
