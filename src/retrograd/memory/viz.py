"""Offline memory timeline viewer for retrograd (and PyTorch) memory snapshots.

``python -m retrograd memory-viz A.pickle [B.pickle ...] -o timeline.html [--png out.png]``

The snapshot layout is PyTorch's (``torch.cuda.memory._snapshot()``) plus retrograd's
extra keys (``categories``, ``category_changes``, a ``category`` and ``module`` on blocks
and trace entries, ``internal`` on frames, ``by_module``; see
:mod:`retrograd.memory.snapshot`). A pickle written by PyTorch itself has none of the
extras: every block is then category ``"other"``, there is no module tree, and a frame
counts as the library's by its file's path (a ``torch`` folder).

Everything heavy happens here, once, in NumPy: the per-category byte counts at every
trace position, the peak and what is alive at it. The page (``viewer/timeline.html``,
one self-contained file with inline JS/CSS, no network) only receives compact typed
arrays, rebuilds the stacked series with one cumulative sum and reduces them to one
column per pixel (keeping each column's maximum, so no peak can vanish).

State positions: position ``p`` is the state after the first ``p`` trace entries
(``0`` = before recording; ``len(trace)`` = at snapshot time). A block is alive on the
half-open position range ``[start, end)``.
"""

import argparse
import base64
import html
import json
import pickle
import re
import sys
from importlib import resources
from pathlib import Path

import numpy as np

from ._bytes import format_bytes

__all__ = ["format_bytes", "load", "main", "render_html", "timeline", "write_html",
           "write_png"]

DEFAULT_CATEGORIES = ("parameter", "gradient", "comm_bucket", "optimizer_state", "activation",
                      "temporary", "other")
# Block states PyTorch reports for memory a tensor still holds.
_LIVE_STATES = ("active_allocated", "active_pending_free")
# Action codes shipped to the page.
_ACTIONS = {"alloc": 0, "free_requested": 1, "free_completed": 2}
_MAX_FRAMES = 48
# Frames of the engine itself (retrograd or torch internals, C++ frames) are shown dimmed,
# and the first other frame names an allocation in the tables ("where"). retrograd marks
# its frames (``internal``, by module name); for frames without the mark (PyTorch's
# snapshots) the file's path decides.
_INTERNAL = re.compile(r"[\\/](?:retrograd|torch)[\\/](?!models[\\/]|demo)|^\?\?$|\.(?:cpp|h|cu)$")


class _SnapshotUnpickler(pickle.Unpickler):
    """A snapshot holds only dicts, lists, strings and numbers (retrograd's and PyTorch's
    alike): a pickle naming any class or function is refused, so a snapshot received
    from someone else cannot run code when it is opened."""

    def find_class(self, module, name):
        raise pickle.UnpicklingError(f"'{module}.{name}' is not allowed in a memory "
                                     f"snapshot")


def load(path):
    """The snapshot dict pickled at ``path`` (by retrograd or by PyTorch)."""
    with open(path, "rb") as f:
        try:
            snapshot = _SnapshotUnpickler(f).load()
        except (pickle.UnpicklingError, EOFError, ValueError, TypeError, KeyError,
                IndexError, AttributeError, OverflowError, MemoryError,
                RecursionError) as e:  # what a truncated or foreign file raises in pickle
            raise ValueError(f"{path}: not a memory snapshot (not a readable pickle of "
                             f"plain data: {type(e).__name__}: {e})") from None
    if not isinstance(snapshot, dict) or not ("segments" in snapshot
                                              or "device_traces" in snapshot):
        raise ValueError(f"{path}: not a memory snapshot (expected a dict with 'segments' "
                         "and 'device_traces', as torch.cuda.memory._snapshot() returns)")
    return snapshot


def _default_device(snapshot):
    """The first device whose trace has entries, else the first device with segments."""
    for d, trace in enumerate(snapshot.get("device_traces") or ()):
        if trace:
            return d
    devices = [s.get("device", 0) for s in snapshot.get("segments") or ()]
    return min(devices) if devices else 0


class _Stacks:
    """Interns Python stacks: many trace entries share a handful of distinct stacks."""

    def __init__(self):
        self.ids = {}
        self.by_object = {}  # id(frames list) -> stack id; the snapshot keeps them alive
        self.stacks = []

    def __call__(self, frames):
        sid = self.by_object.get(id(frames))
        if sid is None:
            key = tuple((str(f.get("filename", "??")), int(f.get("line", 0) or 0),
                         str(f.get("name", "??")), _is_internal(f))
                        for f in frames[:_MAX_FRAMES])
            sid = self.ids.get(key)
            if sid is None:
                sid = self.ids[key] = len(self.stacks)
                self.stacks.append(key)
            self.by_object[id(frames)] = sid
        return sid


def _is_internal(frame):
    mark = frame.get("internal")
    if mark is not None:
        return bool(mark)
    return bool(_INTERNAL.search(str(frame.get("filename", "??"))))


def timeline(snapshot, device=None, top=20):
    """Per-category allocated bytes at every trace position of one device of ``snapshot``.

    Returns a dict of NumPy arrays and peak information:

    - ``categories``: names, indexing the rows of ``bytes``;
    - ``bytes``: int64 ``(len(categories), n_events + 1)``, ``total``: its column sums;
    - ``time_us``: float64 ``(n_events + 1,)`` or None when the trace has no times;
    - ``peak``: ``{"index", "bytes", "time_us", "breakdown": {category: bytes}}`` (the
      first position of the maximum total);
    - ``largest``: the ``top`` largest blocks alive at the peak, each ``{"addr", "size",
      "category" (at the peak), "start", "end" (positions; end is None if alive at the
      snapshot), "frames"}``;
    - ``modules``: ``{module path: {category: bytes}}`` of the blocks alive at the peak
      (None when the snapshot names no modules), and ``module_peaks``: each module's own
      peak from the snapshot's ``by_module`` table (empty without one);
    - ``blocks`` / ``changes`` / ``events`` / ``stacks`` / ``deltas``: the compact form
      the page is built from.
    """
    traces = snapshot.get("device_traces") or [[]]
    if device is None:
        device = _default_device(snapshot)
    trace = traces[device] if device < len(traces) else []
    all_changes = snapshot.get("category_changes") or []
    changes = all_changes[device] if device < len(all_changes) else []
    changes = sorted(changes, key=lambda c: c["trace_index"])
    n = len(trace)

    categories = list(snapshot.get("categories") or ["other"])
    cat_ids = {c: i for i, c in enumerate(categories)}

    def cat_id(name):
        i = cat_ids.get(name)
        if i is None:
            i = cat_ids[name] = len(categories)
            categories.append(name)
        return i

    stack_of = _Stacks()
    b_addr, b_size, b_cat, b_start, b_end, b_stack, b_module = [], [], [], [], [], [], []
    ch_block, ch_pos, ch_cat = [], [], []
    live = {}       # addr -> block alive there now
    pending = {}    # addr -> [(pos, cat)]: changes to a block allocated before recording
    requested = {}  # addr -> index of a free_requested whose block is not known yet
    ev_action = np.full(n, 3, np.uint8)
    ev_block = np.full(n, -1, np.int32)
    times = np.full(n, np.nan)

    def new_block(addr, size, cat, frames, start, end, module):
        b_module.append(module)
        b_addr.append(addr)
        b_size.append(size)
        b_cat.append(cat)
        b_start.append(start)
        b_end.append(end)
        b_stack.append(stack_of(frames))
        blk = len(b_addr) - 1
        for pos, c in pending.pop(addr, ()):
            ch_block.append(blk)
            ch_pos.append(pos)
            ch_cat.append(c)
        return blk

    def change(c):
        pos = min(max(int(c["trace_index"]), 0), n)
        cat = cat_id(c.get("category", "other"))
        blk = live.get(c["addr"])
        if blk is None:
            pending.setdefault(c["addr"], []).append((pos, cat))
        else:
            ch_block.append(blk)
            ch_pos.append(pos)
            ch_cat.append(cat)

    j, n_changes = 0, len(changes)
    for i, e in enumerate(trace):
        while j < n_changes and changes[j]["trace_index"] <= i:
            change(changes[j])
            j += 1
        t = e.get("time_us")
        if t is not None:
            times[i] = t
        action = e.get("action")
        addr = e.get("addr")
        if action == "alloc":
            old = live.get(addr)
            if old is not None:  # inconsistent trace: the old block must be gone by now
                b_end[old] = i + 1
            pending.pop(addr, None)
            blk = live[addr] = new_block(addr, int(e.get("size", 0)),
                                         cat_id(e.get("category", "other")),
                                         e.get("frames", ()), i + 1, n + 1, e.get("module"))
        elif action == "free_completed":
            blk = live.pop(addr, None)
            if blk is None:  # allocated before recording began: alive from the start
                blk = new_block(addr, int(e.get("size", 0)), cat_id(e.get("category", "other")),
                                e.get("frames", ()), 0, i + 1, e.get("module"))
            else:
                b_end[blk] = i + 1
            r = requested.pop(addr, None)
            if r is not None:
                ev_block[r] = blk
        elif action == "free_requested":
            blk = live.get(addr, -1)
            if blk < 0:
                requested[addr] = i
        else:
            continue
        ev_action[i] = _ACTIONS[action]
        ev_block[i] = blk
    for c in changes[j:]:
        change(c)

    # Blocks alive at the snapshot that the trace never allocated: alive all along.
    for seg in snapshot.get("segments") or ():
        if seg.get("device", 0) != device:
            continue
        offset = seg.get("address", 0)
        for b in seg.get("blocks") or ():
            addr = b.get("address", offset)
            offset = addr + b.get("size", 0)
            if b.get("state", "active_allocated") in _LIVE_STATES and addr not in live:
                cat = cat_id(b.get("category", seg.get("category", "other")))
                new_block(addr, int(b.get("size", 0)), cat, b.get("frames", ()), 0, n + 1,
                          b.get("module"))

    C = len(categories)
    start = np.array(b_start, np.int64)
    end = np.array(b_end, np.int64)
    size = np.array(b_size, np.int64)
    cat0 = np.array(b_cat, np.int64)

    # Category changes as moves of bytes; drop the ones that change nothing.
    cur = list(b_cat)
    keep_b, keep_p, keep_c, prev_c = [], [], [], []
    for blk, pos, c in zip(ch_block, ch_pos, ch_cat, strict=True):
        if c != cur[blk]:
            keep_b.append(blk)
            keep_p.append(max(pos, b_start[blk]))
            keep_c.append(c)
            prev_c.append(cur[blk])
            cur[blk] = c
    ch_b = np.array(keep_b, np.int64)
    ch_p = np.array(keep_p, np.int64)
    ch_c = np.array(keep_c, np.int64)
    final = np.array(cur, np.int64)

    ends = end <= n
    ch_size = size[ch_b]
    d_pos = np.concatenate([start, end[ends], ch_p, ch_p])
    d_cat = np.concatenate([cat0, final[ends], np.array(prev_c, np.int64), ch_c])
    d_val = np.concatenate([size, -size[ends], -ch_size, ch_size])
    dense = np.zeros((C, n + 2), np.int64)
    np.add.at(dense, (d_cat, d_pos), d_val)
    per_cat = np.cumsum(dense[:, :n + 1], axis=1)
    total = per_cat.sum(axis=0)

    if n and not np.isnan(times).any():
        time_us = np.concatenate([times[:1], times])
    else:
        time_us = None

    p = int(np.argmax(total))
    alive = np.nonzero((start <= p) & (end > p))[0]
    alive = alive[np.lexsort((start[alive], -size[alive]))][:top]
    by_block = {}
    for blk, pos, c in zip(keep_b, keep_p, keep_c, strict=True):
        by_block.setdefault(blk, []).append((pos, c))
    modules = _modules_at(p, start, end, b_size, b_module, b_cat, by_block, categories)
    largest = []
    for blk in alive.tolist():
        c = b_cat[blk]
        for pos, new in by_block.get(blk, ()):
            if pos <= p:
                c = new
        largest.append({
            "block": blk, "addr": b_addr[blk], "size": b_size[blk], "category": categories[c],
            "start": b_start[blk], "end": b_end[blk] if b_end[blk] <= n else None,
            "frames": [{"filename": f, "line": ln, "name": nm}
                       for f, ln, nm, _ in stack_of.stacks[b_stack[blk]]],
        })

    return {
        "device": device,
        "n_events": n,
        "categories": categories,
        "bytes": per_cat,
        "total": total,
        "time_us": time_us,
        "peak": {"index": p, "bytes": int(total[p]),
                 "time_us": None if time_us is None else float(time_us[p]),
                 "breakdown": {c: int(per_cat[i, p]) for i, c in enumerate(categories)}},
        "max_by_category": {c: int(per_cat[i].max()) for i, c in enumerate(categories)},
        "largest": largest,
        "modules": modules,
        "module_peaks": {path: int(m.get("peak", 0)) for path, m in
                         (snapshot.get("by_module") or {}).items() if isinstance(m, dict)},
        "blocks": {"addr": np.array(b_addr, np.float64), "size": size, "category": cat0,
                   "start": start, "end": end, "stack": np.array(b_stack, np.int64)},
        "changes": {"block": ch_b, "pos": ch_p, "category": ch_c},
        "events": {"action": ev_action, "block": ev_block},
        "deltas": {"pos": d_pos, "category": d_cat, "value": d_val},
        "stacks": stack_of.stacks,
    }


def _modules_at(p, start, end, b_size, b_module, b_cat, by_block, categories):
    """Bytes per module path and category of the blocks alive at position ``p``; None
    when no block names its module."""
    if all(m is None for m in b_module):
        return None
    table = {}
    for blk in np.nonzero((start <= p) & (end > p))[0].tolist():
        c = b_cat[blk]
        for pos, new in by_block.get(blk, ()):
            if pos <= p:
                c = new
        row = table.setdefault(b_module[blk] or "", {})
        name = categories[c]
        row[name] = row.get(name, 0) + b_size[blk]
    return table


def _b64(a, dtype):
    return base64.b64encode(np.ascontiguousarray(a, dtype=dtype).tobytes()).decode("ascii")


def _panel_data(title, tl, categories):
    """The JSON for one panel; category indices remapped to the page's ``categories``."""
    remap = np.array([categories.index(c) for c in tl["categories"]], np.int64)
    blocks, changes, events, deltas = tl["blocks"], tl["changes"], tl["events"], tl["deltas"]
    # Changes grouped by block (then position) so the page finds a block's own quickly.
    order = np.lexsort((changes["pos"], changes["block"]))
    stacks = []
    for frames in tl["stacks"]:
        # "where": the first frame of user code; a pseudo-frame before it (PyTorch's and
        # retrograd's "<backward>" frame naming the graph node) is shown as its tag.
        where = next((k for k, (f, _, _, x) in enumerate(frames)
                      if not x and not f.startswith("<")), 0)
        tag = next((nm for f, _, nm, _ in frames[:where] if f.startswith("<")), None)
        stacks.append({"frames": [list(f) for f in frames], "where": where, "tag": tag})
    peak = tl["peak"]
    bytes_by_cat = [0] * len(categories)
    max_by_cat = [0] * len(categories)
    for c, i in zip(tl["categories"], remap.tolist(), strict=True):
        bytes_by_cat[i] = peak["breakdown"][c]
        max_by_cat[i] = tl["max_by_category"][c]
    n = tl["n_events"]
    time_us = tl["time_us"]
    return {
        "title": title,
        "device": tl["device"],
        "n": n,
        "history": n > 0,
        "final": int(tl["total"][-1]),
        "nBlocks": int(len(blocks["size"])),
        "peak": {"index": peak["index"], "bytes": peak["bytes"], "time": peak["time_us"],
                 "breakdown": bytes_by_cat, "label": format_bytes(peak["bytes"])},
        "maxByCat": max_by_cat,
        "largest": [{"block": b["block"], "size": b["size"], "addr": b["addr"],
                     "cat": categories.index(b["category"]), "start": b["start"],
                     "end": b["end"]} for b in tl["largest"]],
        "stacks": stacks,
        "modules": None if tl["modules"] is None else [
            [path, [row.get(c, 0) for c in categories], tl["module_peaks"].get(path)]
            for path, row in sorted(tl["modules"].items())],
        "arrays": {
            "dPos": _b64(deltas["pos"], np.int32),
            "dCat": _b64(remap[deltas["category"]], np.uint8),
            "dVal": _b64(deltas["value"], np.float64),
            "time": None if time_us is None else _b64(time_us, np.float64),
            "evAction": _b64(events["action"], np.uint8),
            "evBlock": _b64(events["block"], np.int32),
            "bStart": _b64(blocks["start"], np.int32),
            "bEnd": _b64(blocks["end"], np.int32),
            "bSize": _b64(blocks["size"], np.float64),
            "bCat": _b64(remap[blocks["category"]], np.uint8),
            "bAddr": _b64(blocks["addr"], np.float64),
            "bStack": _b64(blocks["stack"], np.int32),
            "chBlock": _b64(changes["block"][order], np.int32),
            "chPos": _b64(changes["pos"][order], np.int32),
            "chCat": _b64(remap[changes["category"][order]], np.uint8),
        },
    }


def _timelines(snapshots, device, top):
    out = []
    for item in snapshots:
        title, snap = item if isinstance(item, tuple) else ("memory", item)
        out.append((title, timeline(snap, device=device, top=top)))
    return out


def _page_categories(tls):
    """The usual categories in their usual (stacking) order, then any others seen."""
    categories = list(DEFAULT_CATEGORIES)
    for _, tl in tls:
        categories += [c for c in tl["categories"] if c not in categories]
    return categories


def _byte_step(top, count=5):
    """A round tick step for a byte axis up to ``top`` and the unit (a power of 1024) all
    its ticks are labelled in: the step is 1, 2, 2.5 or 5 x 10^k of that unit."""
    unit = 1024 ** min(max(int(np.log(max(top, 1)) / np.log(1024)), 0), 5)
    raw = top / unit / count
    mag = 10 ** np.floor(np.log10(raw))
    step = next(s for s in (1, 2, 2.5, 5, 10) if raw / mag <= s) * mag
    return max(step, 1 if unit == 1 else 0) * unit, unit


_UNIT_NAMES = {1024 ** k: name for k, name in enumerate(("B", "KiB", "MiB", "GiB", "TiB",
                                                         "PiB"))}


def _tick_label(v, unit):
    """Tick value ``v`` in ``unit`` (every tick of an axis in one unit): ``"1.5 GiB"``,
    ``"0.25 GiB"``, ``"0"``."""
    if not v:
        return "0"
    return f"{round(v / unit, 3):g} {_UNIT_NAMES[unit]}"


def render_html(snapshots, device=None, top=20, page_title=None):
    """The page for ``[(title, snapshot_dict), ...]`` as one self-contained HTML string."""
    return _html(_timelines(snapshots, device, top), page_title)


def _html(tls, page_title):
    categories = _page_categories(tls)
    data = {"categories": categories,
            "panels": [_panel_data(title, tl, categories) for title, tl in tls]}
    if page_title is None:
        page_title = "Memory timeline: " + " vs ".join(t for t, _ in tls)
    template = resources.files("retrograd.memory").joinpath("viewer/timeline.html").read_text(
        encoding="utf-8")
    payload = json.dumps(data, separators=(",", ":"), allow_nan=False).replace("</", "<\\/")
    fill = {"__PAGE_TITLE__": html.escape(page_title), "__DATA_JSON__": payload}
    return re.sub("__PAGE_TITLE__|__DATA_JSON__", lambda m: fill[m.group()], template)


def write_html(path, snapshots, device=None, top=20, page_title=None):
    """Write the timeline page for ``[(title, snapshot_dict), ...]`` to ``path``."""
    _write_html(path, _timelines(snapshots, device, top), page_title)


def _write_html(path, tls, page_title=None):
    Path(path).write_text(_html(tls, page_title), encoding="utf-8")


def _downsample(total, columns):
    """Per bucket of positions, the position of the largest total (so peaks survive)."""
    m = len(total)
    if m <= columns:
        return np.arange(m)
    edges = np.linspace(0, m, columns + 1).astype(np.int64)[:-1]
    edges = np.unique(edges)
    bucket_max = np.maximum.reduceat(total, edges)
    bucket = np.repeat(np.arange(len(edges)), np.diff(np.append(edges, m)))
    idx = np.where(total == bucket_max[bucket], np.arange(m), m)
    return np.minimum.reduceat(idx, edges)


_COLORS = {"parameter": "#4e79a7", "gradient": "#f28e2b", "comm_bucket": "#17becf",
           "optimizer_state": "#59a14f", "activation": "#e15759", "temporary": "#b07aa1",
           "other": "#a0a4aa"}
_EXTRA_COLORS = ("#76b7b2", "#edc948", "#ff9da7", "#9c755f", "#bab0ac")  # as the page's


def write_png(path, snapshots, device=None, top=20, width=1400, columns=1600):
    """A static picture (matplotlib) of ``[(title, snapshot_dict), ...]``, one above another.

    Needs matplotlib (``pip install 'retrograd[viz]'``).
    """
    _write_png(path, _timelines(snapshots, device, top), width, columns)


def _write_png(path, tls, width=1400, columns=1600):
    try:
        import matplotlib
    except ImportError:
        raise ImportError("memory-viz --png needs matplotlib: pip install 'retrograd[viz]' "
                          "(or pip install matplotlib)") from None
    matplotlib.use("Agg", force=False)
    from matplotlib import pyplot as plt
    from matplotlib.ticker import FuncFormatter, MultipleLocator

    categories = _page_categories(tls)
    colors = [_COLORS.get(c) or _EXTRA_COLORS[i % len(_EXTRA_COLORS)]
              for i, c in enumerate(categories)]
    top_bytes = max(int(tl["total"].max()) for _, tl in tls) * 1.12 or 1
    step, unit = _byte_step(top_bytes)
    fig, axes = plt.subplots(len(tls), 1, figsize=(width / 100, 3.6 * len(tls)), dpi=100,
                             squeeze=False, sharey=True)
    for ax, (title, tl) in zip(axes[:, 0], tls, strict=True):
        n = tl["n_events"]
        keep = _downsample(tl["total"], columns)
        # position p spans [p, p + 1), as on the page
        x = np.append(keep, n + 1)
        ys = tl["bytes"][:, np.append(keep, keep[-1])]
        order = sorted((categories.index(c), i) for i, c in enumerate(tl["categories"])
                       if tl["max_by_category"][c])
        peak = tl["peak"]
        if order:
            ax.stackplot(x, ys[[i for _, i in order]], colors=[colors[k] for k, _ in order],
                         step="post", linewidth=0, labels=[
                             f"{categories[k]}  {format_bytes(peak['breakdown'][categories[k]])}"
                             for k, _ in order])
        if n:
            ax.axvline(peak["index"] + 0.5, color="#c2283b", lw=1, ls="--")
            ax.annotate(f"Peak {format_bytes(peak['bytes'])}",
                        (peak["index"] + 0.5, peak["bytes"]),
                        xytext=(6, 4), textcoords="offset points", fontsize=10,
                        weight="bold", color="#c2283b")
        ax.set_title(f"{title}: peak {format_bytes(peak['bytes'])}", loc="left", fontsize=12)
        ax.set_xlim(0, n + 1)
        ax.set_ylim(0, np.ceil(top_bytes / step) * step)
        ax.yaxis.set_major_locator(MultipleLocator(step))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: _tick_label(v, unit)))
        if n:
            ax.set_xlabel("trace events")
        else:
            ax.set_xticks([])
            ax.set_xlabel("allocation history not recorded: the blocks alive at the snapshot")
        ax.grid(axis="y", color="#ddd", lw=0.6)
        ax.set_axisbelow(True)
        ax.spines[["top", "right"]].set_visible(False)
        if order:
            ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False,
                      title="at the peak", fontsize=9)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def main(argv=None):
    """``memory-viz`` command line; returns the exit code."""
    parser = argparse.ArgumentParser(
        prog="python -m retrograd memory-viz",
        description="Offline memory timeline (self-contained HTML, optional PNG) of one or "
                    "more memory snapshots (retrograd.memory._snapshot() or "
                    "torch.cuda.memory._snapshot() pickles), shown one above the other.")
    parser.add_argument("snapshots", nargs="+", metavar="SNAPSHOT.pickle")
    parser.add_argument("-o", "--output", metavar="timeline.html",
                        help="HTML page to write (default: memory_timeline.html unless --png "
                             "is given)")
    parser.add_argument("--png", metavar="out.png", help="also write a static picture "
                        "(needs matplotlib: pip install 'retrograd[viz]')")
    parser.add_argument("--title", action="append", metavar="TITLE",
                        help="title of each snapshot, once per file in order (default: the "
                             "file names)")
    parser.add_argument("--device", type=int, default=None,
                        help="device index (default: the first with a trace)")
    parser.add_argument("--top", type=int, default=20,
                        help="how many of the largest allocations alive at the peak to list")
    args = parser.parse_args(argv)
    if args.title and len(args.title) != len(args.snapshots):
        parser.error(f"--title given {len(args.title)} times for {len(args.snapshots)} "
                     "snapshots: give it once per snapshot, or not at all")
    titles = args.title or [Path(p).stem for p in args.snapshots]
    output = args.output or (None if args.png else "memory_timeline.html")
    try:
        snaps = [(t, load(p)) for t, p in zip(titles, args.snapshots, strict=True)]
        tls = _timelines(snaps, args.device, args.top)
        if output:
            _write_html(output, tls)
            print(f"wrote {output}")
        if args.png:
            _write_png(args.png, tls)
            print(f"wrote {args.png}")
        for title, tl in tls:
            print(f"{title}: peak {format_bytes(tl['peak']['bytes'])} "
                  f"({tl['peak']['bytes']} bytes) after event {tl['peak']['index']}")
    except (OSError, ValueError, ImportError, KeyError) as e:
        print(f"memory-viz: error: {e}", file=sys.stderr)
        return 1
    return 0
