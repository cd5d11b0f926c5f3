"""``load`` on hostile checkpoints: the corpus in _hostile_checkpoints.py, loaded in a
subprocess (a segfault fails the test instead of killing pytest), against PyTorch, and
the unpickler's rules one by one."""

import collections
import io
import json
import os
import pickle
import subprocess
import sys
import warnings

import pytest

import retrograd
from _hostile_checkpoints import (F4, archive, corpus, glob, num, pkl, snapshot, tensor,
                                  tup, uni)

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = corpus()


def _python(code, timeout=120):
    """Run ``code`` in a fresh interpreter that imports this retrograd and this folder."""
    src = os.path.dirname(os.path.dirname(os.path.abspath(retrograd.__file__)))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([src, HERE]))
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, timeout=timeout, cwd=HERE)


@pytest.fixture(scope="module")
def corpus_results():
    """Every case loaded by retrograd in one subprocess: {name: result}."""
    proc = _python("import _hostile_checkpoints; _hostile_checkpoints.main()")
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    started = [d["start"] for d in lines if "start" in d]
    assert proc.returncode == 0, (f"the corpus subprocess died (rc {proc.returncode}) in case "
                                  f"{started[-1] if started else None}:\n{proc.stderr[-3000:]}")
    return {d["name"]: d for d in lines if "name" in d}


def test_corpus_covers_every_kind():
    kinds = collections.Counter(c.kind for c in CORPUS)
    assert set(kinds) == {"bounds", "state", "alloc", "archive", "pickle"}
    assert min(kinds.values()) >= 8 and len({c.name for c in CORPUS}) == len(CORPUS)


@pytest.mark.parametrize("case", CORPUS, ids=[c.name for c in CORPUS])
def test_hostile_checkpoint(case, corpus_results):
    """The expected exception (naming the file), in-bounds views, no global changed."""
    got = corpus_results[case.name]
    assert got["raised"] == (case.expect.__name__ if case.expect else None), got["message"]
    if case.expect is not None:
        assert got["message"].startswith("<BytesIO>: ")
    assert got["in_bounds"]
    assert got["changed"] == []


@pytest.mark.torch
@pytest.mark.parametrize("case", [c for c in CORPUS if c.torch_expect != "skip"],
                         ids=[c.name for c in CORPUS if c.torch_expect != "skip"])
def test_torch_agrees_or_the_difference_is_declared(case, torch):
    """``torch.load(weights_only=True)`` raises the same type, or the case says why not."""
    want = case.expect if case.torch_expect == "same" else case.torch_expect
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            torch.load(io.BytesIO(case.data), weights_only=True)
            got = None
        except Exception as e:  # compared with the declared type below
            got = type(e)
    assert got is want, f"torch raised {got}; the case declares {want} ({case.why})"
    assert case.torch_expect == "same" or case.why


@pytest.mark.parametrize("name", ["1kb_file_declares_4gib", "deflated_entry_declares_4gib",
                                  "bytearray_of_2_33", "size_of_big_list_repeated",
                                  "unicode_declares_4gib"])
def test_small_files_cannot_take_big_memory(name, corpus_results):
    """Peak RSS growth while loading each allocation attack (in the corpus subprocess, so the
    high-water mark is its own): under 16 MiB, where the declared sizes are GiBs."""
    got = corpus_results[name]
    assert got["raised"] is not None and got["peak_rss_growth"] < 16 * 2 ** 20, got
    if name == "1kb_file_declares_4gib":
        assert got["size"] < 1024


def test_errors_name_the_file(tmp_path):
    path = tmp_path / "evil.pt"
    path.write_bytes(archive(pkl(tensor(size=(2 ** 20,)))))
    with pytest.raises(RuntimeError, match=r"evil\.pt: tensor in archive/data/0: .*out of "
                                           r"bounds for storage of size 16"):
        retrograd.load(path)
    path.write_bytes(b"")
    with pytest.raises(EOFError, match=r"evil\.pt: Ran out of input"):
        retrograd.load(path)
    with open(path, "wb") as f:
        f.write(b"PK\x03\x04garbage")
    with open(path, "rb") as f, pytest.raises(RuntimeError, match=r"evil\.pt: .*zip archive"):
        retrograd.load(f)


def test_hostile_builds_leave_globals_alone():
    """After the BUILD attacks, the allowlisted classes behave as before."""
    before = snapshot()
    for case in CORPUS:
        if case.kind == "state":
            with pytest.raises(case.expect):
                retrograd.load(io.BytesIO(case.data))
    assert snapshot() == before
    assert len(retrograd.Size([1, 2])) == 2
    assert retrograd.serialization._ALLOWED["torch.FloatStorage"].dtype.name == "float32"
    assert retrograd.float32.itemsize == 4 and repr(collections.OrderedDict()) == \
        "OrderedDict()"


# ---- the unpickler's rules ------------------------------------------------------------------

def _load_pickle(data, **kw):
    return retrograd.load(io.BytesIO(archive(data, {})), **kw)


def test_python_values_round_trip_through_the_weights_only_unpickler():
    big = bytes(range(256)) * 400  # 100 KB of bytes: two copies per byte, within budget
    value = {"bytes": big, "bytearray": bytearray(b"\x00\xff"), "set": {1, 2},
             "complex": 1 - 2j, "counter": collections.Counter("abca"),
             "ordered": collections.OrderedDict(b=1, a=2), "nested": [(1, 2.5), None, True],
             "long": 2 ** 100, "neg": -7, "text": "héllo ☃"}
    buf = io.BytesIO()
    retrograd.save(value, buf)
    assert retrograd.load(io.BytesIO(buf.getvalue())) == value


def test_build_allowed_on_ordered_dict_and_user_classes():
    """BUILD sets an OrderedDict's own attributes (as PyTorch's state dicts carry
    ``_metadata``) and an allowlisted class's state; nothing else."""
    data = pkl(glob("collections", "OrderedDict") + b")R" + b"}" + uni("_metadata") + num(3)
               + b"sb")
    assert _load_pickle(data)._metadata == 3
    buf = io.BytesIO()
    retrograd.save(Point(1, 2), buf)
    with pytest.raises(pickle.UnpicklingError, match="Point was not an allowed global"):
        retrograd.load(io.BytesIO(buf.getvalue()))
    with retrograd.serialization.safe_globals([Point]):
        p = retrograd.load(io.BytesIO(buf.getvalue()))
    assert type(p) is Point and (p.x, p.y) == (1, 2)


class Point:
    def __init__(self, x, y):
        self.x, self.y = x, y


@pytest.mark.torch
def test_state_dicts_with_metadata_from_torch(torch, tmp_path):
    """``module.state_dict()`` is an OrderedDict with ``_metadata`` set by BUILD."""
    model = torch.nn.Linear(2, 3)
    torch.save(model.state_dict(), tmp_path / "sd.pt")
    sd = retrograd.load(tmp_path / "sd.pt")
    assert sd._metadata == model.state_dict()._metadata
    assert sd["weight"].tolist() == model.weight.tolist()


@pytest.mark.parametrize("ops, match", [
    (b"]" + num(1) + num(2) + b"s", "Can only SETITEM for dict"),
    (b"}" + num(1) + b"a", "Can only append to lists"),
    (glob("torch", "Size") + tup(tup(num(1))) + b"R" + b"}b", "Can only build"),
    (b"}" + tup(num(1)) + b"R", "unrecognized function"),
    (glob("_codecs", "encode") + tup(uni("x"), uni("zlib")) + b"R", "_codecs.encode"),
])
def test_unpickler_refusals(ops, match):
    with pytest.raises(pickle.UnpicklingError, match=match):
        _load_pickle(pkl(ops))


def test_views_reaching_the_storage_end_load():
    """A view that exactly reaches the storage's end loads (sharing it); one element more
    does not."""
    data = pkl(b"(" + tensor(offset=2, size=(2,)) + tensor(size=(2, 2), stride=(2, 1))
               + tensor(size=(4, 3), stride=(1, 0)) + b"t")
    a, b, c = retrograd.load(io.BytesIO(archive(data)))
    assert a.tolist() == [3., 4.] and b.tolist() == [[1., 2.], [3., 4.]]
    assert c.stride() == (1, 0) and c[3].tolist() == [4., 4., 4.]
    a[0] = -1.
    assert b[1, 0].item() == -1.
    with pytest.raises(RuntimeError, match="requiring a storage size of 20"):
        retrograd.load(io.BytesIO(archive(pkl(tensor(offset=3, size=(2,))))))


def test_big_endian_checkpoints_are_read():
    data = archive(pkl(tensor()), {"data/0": F4[::-1], "byteorder": b"big"})
    assert retrograd.load(io.BytesIO(data)).tolist() == [4., 3., 2., 1.]


@pytest.mark.torch
def test_legacy_format_files_are_named_not_misread(torch, tmp_path):
    """A pre-1.6 file (torch still writes it on request) is recognised by its magic
    number and refused by name: retrograd reads only the zip format."""
    torch.save({"a": torch.ones(2)}, tmp_path / "old.pt", _use_new_zipfile_serialization=False)
    with pytest.raises(RuntimeError, match=r"old\.pt: .*legacy format"):
        retrograd.load(tmp_path / "old.pt")


def test_weights_only_false_still_checks_archives_and_views():
    """``weights_only=False`` trusts the pickle's code, not its numbers."""
    with pytest.raises(RuntimeError, match="out of bounds for storage of size 16"):
        retrograd.load(io.BytesIO(archive(pkl(tensor(size=(2 ** 20,))))), weights_only=False)
    case = {c.name: c for c in CORPUS}["1kb_file_declares_4gib"]
    with pytest.raises(RuntimeError, match="more than its 16 bytes in the file can hold"):
        retrograd.load(io.BytesIO(case.data), weights_only=False)
