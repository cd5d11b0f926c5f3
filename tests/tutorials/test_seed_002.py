"""Seed 002, PyTorch's "Hooks for autograd saved tensors" tutorial, run with retrograd.

The code blocks are parsed from the seed file itself (its ``.. code-block:: default``
sections) and run in order in one namespace, with ``import torch`` meaning ``import
retrograd as torch`` (and ``torch.nn`` meaning ``retrograd.nn``). What a block prints
must equal the output the seed shows after it; as in sphinx-gallery, a block ending in
an expression also shows that expression's repr. Numbers printed with four decimals
(drawn by ``randn``) are compared by format only.
"""

import ast
import contextlib
import gc
import io
import os
import re

import pytest

import retrograd
from _seeds import code_blocks, seed_path

SEED_NAME = "002_7ce47280e1645c68.txt"
SEED = seed_path(SEED_NAME)
_NN = ("Module", "Parameter", "Linear", "Sequential", "DataParallel")


def _as_retrograd(code):
    code = re.sub(r"^import torch$", "import retrograd as torch", code, flags=re.M)
    return re.sub(r"^import torch\.nn as nn$", "import retrograd.nn as nn", code, flags=re.M)


def _needs_nn(code):
    return "nn." in code or "torch.nn" in code


def _nn_missing():
    """Why retrograd.nn cannot run the seed's nn blocks, or None."""
    try:
        import retrograd.nn as nn
    except ImportError as e:
        return f"retrograd.nn is not importable ({e})"
    missing = [n for n in _NN if not hasattr(nn, n)]
    return f"retrograd.nn lacks {missing}" if missing else None


def _run(code, namespace, name):
    """Exec ``code``; what it printed, plus the repr of a final expression (sphinx-gallery)."""
    tree = ast.parse(code)
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(tree, name, "exec"), namespace)
        if last is not None:
            value = eval(compile(ast.Expression(last.value), name, "eval"), namespace)
            if value is not None and not (isinstance(last.value, ast.Call) and
                                          getattr(last.value.func, "id", "") == "print"):
                print(repr(value))
    return out.getvalue()


def _masked(text):
    return re.sub(r" *-?\d+\.\d{4}", "N", text)


BLOCKS = code_blocks(SEED.read_text()) if SEED is not None else []


@pytest.fixture(scope="module")
def tutorial():
    """Run every block in order in one namespace: (namespace, {line: namespace snapshot})."""
    if SEED is None:
        pytest.skip(f"seed {SEED_NAME} not found")
    skip_nn = _nn_missing()
    namespace, snapshots, results = {}, {}, []
    for line, code, expected in BLOCKS:
        if skip_nn and _needs_nn(code):
            results.append((line, code, expected, None, skip_nn))
            continue
        printed = _run(_as_retrograd(code), namespace, f"{SEED_NAME}:{line}")
        results.append((line, code, expected, printed, None))
        snapshots[line] = dict(namespace)
    return namespace, snapshots, results


def test_seed_has_the_expected_blocks():
    if SEED is None:
        pytest.skip(f"seed {SEED_NAME} not found")
    assert len(BLOCKS) == 18
    assert sum(b[2] is not None for b in BLOCKS) == 6


def test_blocks_print_what_the_seed_shows(tutorial):
    namespace, _, results = tutorial
    assert namespace["torch"] is retrograd
    checked = 0
    for line, _code, expected, printed, skipped in results:
        if skipped is not None or expected is None:
            continue
        got = [_masked(x) for x in printed.strip().splitlines()]
        want = [_masked(x) for x in expected.strip().splitlines()]
        assert got == want, f"block at line {line}"
        checked += 1
    assert checked == 6


def test_nn_blocks_ran(tutorial):
    skipped = [(line, why) for line, _, _, _, why in tutorial[2] if why is not None]
    if skipped:
        pytest.skip(f"seed blocks at lines {[x[0] for x in skipped]} need nn: {skipped[0][1]}")
    namespace = tutorial[0]
    assert namespace["model"] is not None and namespace["net"] is not None


def _block_defining(snapshots, text):
    """The namespace right after the block whose code contains ``text``."""
    line = next(b[0] for b in BLOCKS if text in b[1])
    return snapshots[line]


def test_self_deleting_temp_files_are_deleted_by_backward(tutorial):
    """The seed's SelfDeletingTempFile hooks: one file per saved tensor during the
    forward, none left once backward has freed the saved tensors."""
    ns = _block_defining(tutorial[1], "class SelfDeletingTempFile")
    tmp_dir, pack, unpack = ns["tmp_dir"], ns["pack_hook"], ns["unpack_hook"]
    gc.collect()
    before = set(os.listdir(tmp_dir))
    x = retrograd.tensor([1., 2., 3.], requires_grad=True)
    with retrograd.autograd.graph.saved_tensors_hooks(pack, unpack):
        y = x.pow(2)      # saves x
        z = y.exp()       # saves its result
        w = (z * y).sum()  # saves z and y
    assert len(set(os.listdir(tmp_dir)) - before) == 4
    w.backward()
    assert set(os.listdir(tmp_dir)) == before
    expected = (2 * x * (retrograd.exp(x ** 2) * (x ** 2 + 1))).detach()
    assert retrograd.allclose(x.grad, expected)


def test_self_deleting_temp_files_are_deleted_with_the_graph(tutorial):
    ns = _block_defining(tutorial[1], "class SelfDeletingTempFile")
    tmp_dir = ns["tmp_dir"]
    before = set(os.listdir(tmp_dir))
    x = retrograd.ones(4, requires_grad=True)
    with retrograd.autograd.graph.saved_tensors_hooks(ns["pack_hook"], ns["unpack_hook"]):
        y = x.exp().sin()
    assert len(set(os.listdir(tmp_dir)) - before) == 2
    del y  # no backward: the graph dies, and its files with it
    assert set(os.listdir(tmp_dir)) == before


def test_threshold_hooks_keep_small_tensors_in_memory(tutorial):
    """The seed's last hooks (save to disk only from 1000 elements) under its SaveToDisk
    module; small tensors never touch the disk."""
    if _nn_missing():
        pytest.skip(_nn_missing())
    ns = tutorial[0]
    before = set(os.listdir(ns["tmp_dir"]))
    x = retrograd.randn(5)
    loss = ns["net"](x).sum()
    loss.backward()
    w = ns["net"].module.module.w
    assert retrograd.allclose(w.grad, x)
    assert set(os.listdir(ns["tmp_dir"])) == before
