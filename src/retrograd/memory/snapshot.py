"""The tracker's books as a snapshot in PyTorch's layout (``torch.cuda.memory._snapshot``).

``segments`` lists the storages alive now (one block each: there is no caching
allocator), ``device_traces`` the recorded history with PyTorch's actions (an ``alloc``;
a ``free_requested`` then ``free_completed`` when the storage is freed; addresses are
reused after a free). retrograd's own information rides in extra keys that PyTorch's
tools ignore: ``category`` on blocks and trace entries (the category at that moment),
``module`` beside it (the path of the ``nn.Module`` running when the storage was made,
``""`` outside any), ``internal`` on frames (whether the frame runs retrograd's code,
found by the name of the module the file was imported as), ``categories``,
``category_changes`` (per device, ``{trace_index, addr, size, category, time_us}``: a
live storage moving to ``category`` just before trace entry ``trace_index``),
``by_module`` (the tracker's ``by_module()`` table: per module path, bytes by category
at the peak and now, and its own peak) and ``device_names``. A free with no alloc before
it in the trace, or a segment never allocated in it, is a storage alive since before
recording began.
"""

import pickle
import sys

from .. import _observe
from .tracker import _PATH, ALLOC, CATEGORIES, CHANGE, FREE, _category

_LARGE = 1 << 20  # PyTorch's caching allocator serves blocks above 1 MB from large pools


class _Frames:
    """Turns recorded stacks (code objects and instruction offsets) into PyTorch's
    frame dicts, each distinct stack and line once."""

    def __init__(self):
        self.stacks = {}  # recorded stack -> its frame dicts (equal stacks share them)
        self.lines = {}   # (code, offset) -> frame dict
        self.files = None  # file name -> whether retrograd's modules were imported from it

    def __call__(self, rec):
        if not rec:
            return []
        frames = self.stacks.get(rec)
        if frames is not None:
            return frames
        if isinstance(rec[0], type):  # (node class, its forward stack): made in backward
            frames = [{"filename": "<backward>", "line": 0, "name": rec[0].__name__,
                       "internal": True}]
            frames += self(rec[1])
        else:
            frames = [self._frame(rec[i], rec[i + 1]) for i in range(0, len(rec), 2)]
        self.stacks[rec] = frames
        return frames

    def _frame(self, code, offset):
        key = (code, offset)
        f = self.lines.get(key)
        if f is None:
            line = None
            if offset >= 0:
                for i, pos in enumerate(code.co_positions()):
                    if i == offset // 2:
                        line = pos[0]
                        break
            f = self.lines[key] = {"filename": code.co_filename,
                                   "line": line if line is not None else code.co_firstlineno,
                                   "name": code.co_name,
                                   "internal": self._internal(code.co_filename)}
        return f

    def _internal(self, filename):
        """Whether the file holds one of retrograd's modules (by the name it was imported
        under, so no folder's name matters)."""
        if self.files is None:
            self.files = {}
            for name, m in list(sys.modules.items()):
                file = getattr(m, "__file__", None)
                if file and name != "__main__":
                    self.files[file] = (self.files.get(file, False)
                                        or _observe.is_library_module(name))
        return self.files.get(filename, False)


def snapshot(tracker):
    """The snapshot dict (see the module docstring)."""
    frames = _Frames()
    live = list(tracker.live.values())
    events = list(tracker.events or ())
    segments = []
    for b in live:
        if b() is None:
            continue
        name = CATEGORIES[_category(b.state)]
        module = b.books[_PATH]
        fr = frames(getattr(b, "frames", ()))
        segments.append({
            "device": 0, "address": b.key, "total_size": b.size, "allocated_size": b.size,
            "active_size": b.size, "requested_size": b.size, "stream": 0,
            "segment_type": "large" if b.size > _LARGE else "small",
            "segment_pool_id": (0, 0), "is_expandable": False, "frames": fr,
            "blocks": [{"address": b.key, "size": b.size, "requested_size": b.size,
                        "state": "active_allocated", "frames": fr, "category": name,
                        "module": module}],
            "category": name})
    segments.sort(key=lambda s: s["address"])
    trace, changes = [], []
    for action, key, size, t, cat, rec, module in events:
        name = CATEGORIES[cat]
        t //= 1000
        if action == ALLOC:
            trace.append({"action": "alloc", "addr": key, "size": size, "stream": 0,
                          "time_us": t, "frames": frames(rec), "category": name,
                          "module": module})
        elif action == FREE:
            fr = frames(rec)
            for act in ("free_requested", "free_completed"):
                trace.append({"action": act, "addr": key, "size": size, "stream": 0,
                              "time_us": t, "frames": fr, "category": name,
                              "module": module})
        elif action == CHANGE:
            changes.append({"trace_index": len(trace), "addr": key, "size": size,
                            "category": name, "time_us": t})
    return {
        "segments": segments,
        "device_traces": [trace],
        "allocator_settings": {"retrograd": "no caching: one segment per live storage"},
        "categories": list(CATEGORIES),
        "category_changes": [changes],
        "by_module": tracker.by_module(),
        "device_names": ["cpu"],
    }


def dump(tracker, filename):
    with open(filename, "wb") as f:
        pickle.dump(snapshot(tracker), f, protocol=pickle.HIGHEST_PROTOCOL)
