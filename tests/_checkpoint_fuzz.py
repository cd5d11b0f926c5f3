"""Mutation fuzzing of valid checkpoints with hypothesis, run as a script so that a crash
fails the calling test instead of killing pytest:

    python _checkpoint_fuzz.py EXAMPLES [--random]

Each example mutates one valid checkpoint (retrograd's own, and torch-written ones when
PyTorch is installed): raw bytes of the whole file (the zip layer), bytes or integer operands of its
pickle re-zipped intact (the unpickler and the tensor checks), or a storage entry (size
checks). ``load`` must
then either return objects whose tensors view only their storages' memory, or raise one of
the exception types PyTorch raises for bad files; no global may change. Exits non-zero
with hypothesis's falsifying example otherwise. ``--random``: a fresh random run (the
default is derandomized, the same examples every time).
"""

import collections
import io
import pickle
import sys
import warnings
import zipfile

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import retrograd
from _hostile_checkpoints import _in_bounds, snapshot

ALLOWED = (pickle.UnpicklingError, EOFError, RuntimeError, TypeError, ValueError)
INTERESTING = (0x00, 0x01, 0x7f, 0x80, 0xff, ord("K"), ord("J"), ord("("), ord("t"),
               ord("R"), ord("b"), ord("Q"), ord("c"), ord("h"), ord("q"), ord("."))


def own_seed():
    """A checkpoint with every kind of content: dtypes, views sharing a storage (offsets,
    transposes, broadcast strides), a Parameter, and Python values."""
    base = retrograd.arange(12.).reshape(3, 4)
    state = collections.OrderedDict(
        w=base, row=base[1], col=base[:, 2], t=base.t(), wide=base[0].expand(3, 4),
        long=retrograd.tensor([1, -2], dtype=retrograd.int64),
        flags=retrograd.tensor([True, False]),
        half=retrograd.tensor([1.5], dtype=retrograd.float16),
        p=retrograd.nn.Parameter(retrograd.ones(2)), scalar=retrograd.tensor(2.),
        extra={"n": 3, "s": "x", "b": b"\x00\x01", "c": collections.Counter("aab"),
               "set": {1, 2}, "z": 1 + 2j, "size": retrograd.Size([2, 3])})
    buf = io.BytesIO()
    retrograd.save(state, buf)
    return buf.getvalue()


def torch_seeds():
    """Checkpoints torch.save wrote (a module state dict with BUILD-set ``_metadata``,
    bfloat16, a strided view, a Parameter, complex), or none without PyTorch."""
    try:
        import torch
    except ImportError:
        return []
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4))
    sd = model.state_dict()
    sd["bf"] = torch.ones(2, dtype=torch.bfloat16)
    sd["view"] = model[0].weight.data[1:, ::2]
    out = []
    for obj in (sd, {"p": torch.nn.Parameter(torch.ones(3)), "dev": torch.device("cpu"),
                     "c": torch.tensor([1 + 2j])}):
        buf = io.BytesIO()
        torch.save(obj, buf)
        out.append(buf.getvalue())
    return out


def _entries(data):
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        return [(i.filename, zf.read(i)) for i in zf.infolist()]


def _rezip(entries):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, body in entries:
            zf.writestr(name, body)
    return buf.getvalue()


@st.composite
def _edits(draw, data):
    """``data`` with 1-4 edits: a byte set (often to an interesting value), a span deleted,
    bytes inserted, or the end cut off."""
    data = bytearray(data)
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, max(len(data) - 1, 0)))
        kind = draw(st.sampled_from(["set", "set", "delete", "insert", "truncate"]))
        if kind == "set" and data:
            data[at] = draw(st.sampled_from(INTERESTING) | st.integers(0, 255))
        elif kind == "delete":
            del data[at:at + draw(st.integers(1, 8))]
        elif kind == "insert":
            data[at:at] = draw(st.binary(min_size=1, max_size=8))
        else:
            del data[at:]
    return bytes(data)


@st.composite
def _numbers(draw, pkl):
    """``pkl`` with 1-3 small-int operands (``K n``: sizes, strides, offsets, element
    counts) replaced by edge values, some as 4-byte ``J`` ints (negative, huge)."""
    spots = [i for i in range(len(pkl) - 1) if pkl[i] == ord("K")]
    if not spots:
        return pkl
    pkl = bytearray(pkl)
    for at in sorted(draw(st.sets(st.sampled_from(spots), min_size=1, max_size=3)),
                     reverse=True):
        value = draw(st.sampled_from([0, 1, 2, 3, 5, 255, -1, -2 ** 31, 2 ** 31 - 1])
                     | st.integers(-2 ** 31, 2 ** 31 - 1))
        pkl[at:at + 2] = b"K" + bytes([value]) if 0 <= value < 256 else \
            b"J" + value.to_bytes(4, "little", signed=True)
    return bytes(pkl)


@st.composite
def mutated(draw, seeds):
    seed = draw(st.sampled_from(seeds))
    layer = draw(st.sampled_from(["file", "pickle", "pickle", "pickle", "storage"]))
    if layer == "file":
        return draw(_edits(seed))
    entries = _entries(seed)
    if layer == "storage":
        i = draw(st.sampled_from([i for i, (n, _) in enumerate(entries) if "/data/" in n]))
        edit = _edits
    else:
        i = next(i for i, (n, _) in enumerate(entries) if n.endswith("/data.pkl"))
        edit = draw(st.sampled_from([_edits, _numbers]))
    entries[i] = (entries[i][0], draw(edit(entries[i][1])))
    return _rezip(entries)


def check(data):
    """One mutated file: loads within bounds, or raises an allowed type; no global changes."""
    before = snapshot()
    try:
        obj = retrograd.load(io.BytesIO(data))
    except ALLOWED:
        pass
    else:
        assert _in_bounds(obj), "a loaded tensor views memory outside its storage"
    assert snapshot() == before, "a load changed an allowlisted global"


def run(examples, seeds, derandomize):
    @settings(max_examples=examples, derandomize=derandomize, database=None, deadline=None,
              suppress_health_check=list(HealthCheck), print_blob=True)
    @given(st.data())
    def fuzz(data):
        check(data.draw(mutated(seeds)))

    fuzz()


if __name__ == "__main__":
    warnings.simplefilter("ignore")
    seeds = [own_seed(), *torch_seeds()]
    run(int(sys.argv[1]), seeds, derandomize="--random" not in sys.argv)
    print(f"{sys.argv[1]} examples over {len(seeds)} seed checkpoints: no crash, no global "
          f"changed")
