"""The registry's lean path (``_registry._record`` for ops whose saving ``_opdef._lean``
reads ahead) builds the graph its full path builds: every float32 sample of the op
database recorded both ways, node by node."""

import gc
import zlib

import numpy
import pytest

import retrograd
from retrograd.autograd.node import SavedTensor
from retrograd.ops import _opdef
from opdb import op_db, reseed

_OPS = [op for op in op_db if op.supports_grad and "float32" in op.dtypes]


@pytest.fixture(scope="module")
def opdefs():
    """Every declared op, with its lean value."""
    return [(o, o.lean) for o in gc.get_objects() if type(o) is _opdef.OpDef]


def _saved(s):
    if type(s) is SavedTensor:
        t = s._tensor
        return ("saved", s._is_output, s._output_nr, s._version,
                (t._data if t is not None else s._data).tobytes())
    if isinstance(s, numpy.ndarray):
        return ("array", s.dtype.str, s.shape, s.tobytes())
    return ("value", repr(s))


def _graph(out):
    """Each node reached from ``out``'s grad_fns, in visiting order, as comparable data."""
    seen, order, stack = set(), [], [getattr(o, "grad_fn", None) for o in _outputs(out)]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        desc = [node.name(),
                tuple((None if fn is None else fn.name(), nr) for fn, nr in node.next_functions)]
        for name in ("_attrs", "_shapes", "_dtypes", "_out_meta"):
            desc.append(repr(getattr(node, name, None)))
        saved = getattr(node, "_saved", None)
        desc.append(None if saved is None else (type(saved).__name__,
                                                tuple(_saved(s) for s in saved)))
        order.append(desc)
        stack.extend(fn for fn, _ in node.next_functions)
    return order


def _outputs(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _record(op, lean_on, opdefs):
    for o, lean in opdefs:
        o.lean = lean if lean_on else None
    try:
        reseed(zlib.crc32(op.id.encode()))
        graphs = []
        for k, s in enumerate(op.sample_inputs("float32", True)):
            retrograd.manual_seed(k)
            try:
                out = op.op(s.input, *s.args, **s.kwargs)
            except Exception as e:  # (the same error both ways is what counts)
                graphs.append(("raised", type(e).__name__, str(e)))
                continue
            graphs.append(_graph(out))
        return graphs
    finally:
        for o, lean in opdefs:
            o.lean = lean


def test_some_ops_take_the_lean_path(opdefs):
    kinds = {str(lean) for _, lean in opdefs}
    assert {"None", _opdef.LEAN_NOTHING, _opdef.LEAN_INPUT, _opdef.LEAN_OUTPUT, "0"} <= kinds


@pytest.mark.parametrize("op", _OPS, ids=lambda op: op.id)
def test_lean_path_records_the_full_paths_graph(op, opdefs):
    assert _record(op, True, opdefs) == _record(op, False, opdefs)
