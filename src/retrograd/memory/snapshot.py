"""The tracker's books as a snapshot in PyTorch's layout (``torch.cuda.memory._snapshot``).

``segments`` lists the storages alive now (one block each: there is no caching
allocator), ``device_traces`` the recorded history with PyTorch's actions (an ``alloc``;
a ``free_requested`` then ``free_completed`` when the storage is freed; addresses are
reused after a free). retrograd's own information rides in extra keys that PyTorch's
tools ignore: ``category`` on blocks and trace entries (the category at that moment),
``categories``, ``category_changes`` (per device, ``{trace_index, addr, size, category,
time_us}``: a live storage moving to ``category`` just before trace entry
``trace_index``) and ``device_names``. A free with no alloc before it in the trace, or a
segment never allocated in it, is a storage alive since before recording began.
"""

import pickle

from .tracker import ALLOC, CATEGORIES, CHANGE, FREE, _category

_LARGE = 1 << 20  # PyTorch's caching allocator serves blocks above 1 MB from large pools


class _Frames:
    """Turns recorded stacks (code objects and instruction offsets) into PyTorch's
    frame dicts, each distinct stack and line once."""

    def __init__(self):
        self.stacks = {}  # recorded stack -> its frame dicts (equal stacks share them)
        self.lines = {}   # (code, offset) -> frame dict

    def __call__(self, rec):
        if not rec:
            return []
        frames = self.stacks.get(rec)
        if frames is not None:
            return frames
        if isinstance(rec[0], type):  # (node class, its forward stack): made in backward
            frames = [{"filename": "<backward>", "line": 0, "name": rec[0].__name__}]
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
                                   "name": code.co_name}
        return f


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
        fr = frames(getattr(b, "frames", ()))
        segments.append({
            "device": 0, "address": b.key, "total_size": b.size, "allocated_size": b.size,
            "active_size": b.size, "requested_size": b.size, "stream": 0,
            "segment_type": "large" if b.size > _LARGE else "small",
            "segment_pool_id": (0, 0), "is_expandable": False, "frames": fr,
            "blocks": [{"address": b.key, "size": b.size, "requested_size": b.size,
                        "state": "active_allocated", "frames": fr, "category": name}],
            "category": name})
    segments.sort(key=lambda s: s["address"])
    trace, changes = [], []
    for action, key, size, t, cat, rec in events:
        name = CATEGORIES[cat]
        t //= 1000
        if action == ALLOC:
            trace.append({"action": "alloc", "addr": key, "size": size, "stream": 0,
                          "time_us": t, "frames": frames(rec), "category": name})
        elif action == FREE:
            fr = frames(rec)
            for act in ("free_requested", "free_completed"):
                trace.append({"action": act, "addr": key, "size": size, "stream": 0,
                              "time_us": t, "frames": fr, "category": name})
        elif action == CHANGE:
            changes.append({"trace_index": len(trace), "addr": key, "size": size,
                            "category": name, "time_us": t})
    return {
        "segments": segments,
        "device_traces": [trace],
        "allocator_settings": {"retrograd": "no caching: one segment per live storage"},
        "categories": list(CATEGORIES),
        "category_changes": [changes],
        "device_names": ["cpu"],
    }


def dump(tracker, filename):
    with open(filename, "wb") as f:
        pickle.dump(snapshot(tracker), f, protocol=pickle.HIGHEST_PROTOCOL)
