"""The offline memory timeline (retrograd.memory.viz): timeline maths, page, CLI, PNG."""

import base64
import json
import pickle
import re
import subprocess
import sys
import time

import numpy as np
import pytest

from retrograd.memory import viz

CATS = ["parameter", "gradient", "comm_bucket", "optimizer_state", "activation", "temporary",
        "other"]
SRC = "/work/main/src/retrograd"


def frame(filename, line, name):
    return {"filename": filename, "line": line, "name": name}


class Recorder:
    """Builds a snapshot in retrograd's layout, the way the tracker would."""

    def __init__(self, categories=True):
        self.trace, self.changes, self.live = [], [], {}
        self.categories = categories
        self.t = 0
        self.free_addrs = {}  # size -> freed addresses, so addresses get reused
        self.next_addr = 0x7F0000000000

    def _entry(self, action, addr, size, cat, frames):
        self.t += 7
        e = {"action": action, "addr": addr, "size": size, "stream": 0, "time_us": self.t,
             "frames": frames}
        if self.categories:
            e["category"] = cat
        self.trace.append(e)

    def alloc(self, size, cat="other", frames=()):
        pool = self.free_addrs.get(size)
        if pool:
            addr = pool.pop()
        else:
            addr = self.next_addr
            self.next_addr += (size + 511) // 512 * 512
        self._entry("alloc", addr, size, cat, list(frames))
        self.live[addr] = [size, cat, list(frames)]
        return addr

    def free(self, addr, frames=()):
        size, cat, _ = self.live.pop(addr)
        self._entry("free_requested", addr, size, cat, list(frames))
        self._entry("free_completed", addr, size, cat, list(frames))
        self.free_addrs.setdefault(size, []).append(addr)

    def change(self, addr, cat):
        self.live[addr][1] = cat
        self.changes.append({"trace_index": len(self.trace), "addr": addr,
                             "size": self.live[addr][0], "category": cat, "time_us": self.t})

    def snapshot(self, preexisting=()):
        """``preexisting``: (addr, size, category, frames) alive before recording began."""
        blocks = [(a, s, c, f) for a, (s, c, f) in self.live.items()] + list(preexisting)
        segments = []
        for addr, size, cat, frames in sorted(blocks):
            block = {"address": addr, "size": size, "requested_size": size,
                     "state": "active_allocated", "frames": frames}
            seg = {"device": 0, "address": addr, "total_size": size, "allocated_size": size,
                   "active_size": size, "requested_size": size, "stream": 0,
                   "segment_type": "large", "segment_pool_id": (0, 0),
                   "is_expandable": False, "frames": frames, "blocks": [block]}
            if self.categories:
                block["category"] = seg["category"] = cat
            segments.append(seg)
        snap = {"segments": segments, "device_traces": [self.trace],
                "allocator_settings": {}}
        if self.categories:
            snap.update(categories=list(CATS), category_changes=[self.changes],
                        device_names=["cpu"])
        return snap


def training_snapshot(steps=3, layers=4, hidden=1024, batch=256, fused=False,
                      categories=True):
    """A realistic MLP training trace (Adam), optionally with the optimizer fused into
    backward (each gradient is applied and freed as soon as it is produced)."""
    r = Recorder(categories)
    user = lambda line, name: frame("/home/me/train.py", line, name)
    op = lambda name: [frame(f"{SRC}/ops/_registry.py", 212, "apply"),
                       frame(f"{SRC}/ops/{name}.py", 40, name)]
    model = lambda line: frame("/home/me/model.py", line, "forward")
    wsize, bsize, act = hidden * hidden * 4, hidden * 4, batch * hidden * 4
    params = []
    pre = []
    for i in range(layers):
        for size, nm in ((wsize, "weight"), (bsize, "bias")):
            addr = 0x100000000 + 2 * i * wsize + (wsize if nm == "bias" else 0)
            params.append((addr, size))
            pre.append((addr, size, "parameter",
                        [frame(f"{SRC}/nn/modules/linear.py", 51, "__init__"),
                         frame("/home/me/model.py", 12, "__init__"), user(80, "main")]))
    state = {}
    grads = {}
    for _ in range(steps):
        step_frame = user(31, "train_step")
        x = r.alloc(batch * hidden * 4, "other", [user(28, "train_step"), user(90, "main")])
        saved = [x]
        r.change(x, "activation")
        for i in range(layers):
            fr = op("matmul") + [model(20 + i), step_frame]
            out = r.alloc(act, "other", fr)
            tmp = r.alloc(act // 2, "temporary", op("addmm") + [model(20 + i), step_frame])
            r.free(tmp, fr)
            r.change(out, "activation")
            relu = r.alloc(act, "other", op("relu") + [model(21 + i), step_frame])
            r.change(relu, "activation")
            saved += [out, relu]
        loss = r.alloc(4, "other", op("mean") + [user(32, "train_step")])
        bw = [frame(f"{SRC}/autograd/engine.py", 120, "run_backward"), user(33, "train_step")]
        g = r.alloc(4, "other", bw)
        for i in reversed(range(layers)):
            gi = r.alloc(act, "other", op("relu_backward") + bw)
            r.free(g, bw)
            g = gi
            for k in (2 * i, 2 * i + 1):
                addr, size = params[k]
                grads[addr] = r.alloc(size, "gradient", op("mm") + bw)
                if fused:
                    if addr not in state:
                        state[addr] = [r.alloc(size, "optimizer_state",
                                               [frame(f"{SRC}/optim/adam.py", 88, "_init_state"),
                                                frame(f"{SRC}/optim/in_backward.py", 30, "hook")]
                                               + bw) for _ in range(2)]
                    t = r.alloc(size, "temporary", op("mul") + bw)
                    r.free(t)
                    r.free(grads.pop(addr), bw)
            for s in saved[-2:]:
                r.change(s, "other")
                r.free(s, bw)
            del saved[-2:]
        r.free(g, bw)
        r.change(saved[0], "other")
        r.free(saved.pop(), bw)
        r.free(loss)
        if not fused:
            opt = [frame(f"{SRC}/optim/adam.py", 120, "step"), user(34, "train_step")]
            for addr, size in params:
                if addr not in state:
                    state[addr] = [r.alloc(size, "optimizer_state",
                                           [frame(f"{SRC}/optim/adam.py", 88, "_init_state")]
                                           + opt) for _ in range(2)]
                t = r.alloc(size, "temporary", op("mul") + opt)
                r.free(t, opt)
            zero = [frame(f"{SRC}/optim/optimizer.py", 60, "zero_grad"), user(30, "train_step")]
            for addr in list(grads):
                r.free(grads.pop(addr), zero)
    return r.snapshot(pre)


def torch_like_snapshot():
    """A snapshot shaped like ``torch.cuda.memory._snapshot()`` output (no extras): one
    2 MiB segment holding three blocks (one inactive), a trace with segment actions."""
    f = [frame("/usr/lib/python3/site-packages/torch/nn/modules/linear.py", 125, "forward"),
         frame("train.py", 10, "<module>"), frame("??", 0, "c10::cuda::alloc")]
    base_addr = 139_800_000_000_000
    blocks = [
        {"address": base_addr, "size": 1024, "requested_size": 1000,
         "state": "active_allocated", "frames": f},          # before recording, still alive
        {"address": base_addr + 1024, "size": 4096, "requested_size": 4096,
         "state": "active_allocated", "frames": f},          # allocated in the trace
        {"address": base_addr + 5120, "size": 2 * 2**20 - 5120, "requested_size": 0,
         "state": "inactive", "frames": []},                 # cached free memory
    ]
    segment = {"device": 0, "address": base_addr, "total_size": 2 * 2**20,
               "allocated_size": 5120, "active_size": 5120, "requested_size": 5096,
               "stream": 0, "segment_type": "small", "segment_pool_id": (0, 0),
               "is_expandable": False, "frames": f, "blocks": blocks}
    e = lambda action, addr, size, t: {"action": action, "addr": addr, "size": size,
                                       "stream": 0, "time_us": t, "frames": f}
    trace = [
        e("segment_alloc", base_addr, 2 * 2**20, 1),
        e("alloc", base_addr + 8192, 512, 2),
        e("free_requested", base_addr + 8192, 512, 3),
        e("free_completed", base_addr + 8192, 512, 4),
        e("free_requested", base_addr + 20000, 2048, 5),   # freed, allocated before
        e("free_completed", base_addr + 20000, 2048, 6),
        e("alloc", base_addr + 1024, 4096, 7),
        e("snapshot", 0, 0, 8),
    ]
    return {"segments": [segment], "device_traces": [trace],
            "allocator_settings": {"PYTORCH_CUDA_ALLOC_CONF": ""}}


# ---------------------------------------------------------------- timeline maths


def brute_force(snapshot):
    """Per-position per-category bytes by direct simulation (the reference)."""
    trace = snapshot["device_traces"][0]
    n = len(trace)
    changes = snapshot.get("category_changes", [[]])[0]
    # block intervals
    live, blocks = {}, []
    for i, e in enumerate(trace):
        if e["action"] == "alloc":
            live[e["addr"]] = len(blocks)
            blocks.append([e["addr"], e["size"], e.get("category", "other"), i + 1, n + 1])
        elif e["action"] == "free_completed":
            if e["addr"] in live:
                blocks[live.pop(e["addr"])][4] = i + 1
            else:
                blocks.append([e["addr"], e["size"], e.get("category", "other"), 0, i + 1])
    for seg in snapshot["segments"]:
        for b in seg["blocks"]:
            if b["state"] == "active_allocated" and b["address"] not in live:
                blocks.append([b["address"], b["size"], b.get("category", "other"), 0, n + 1])
    out = {}
    for p in range(n + 1):
        state = {}
        for addr, size, cat, s, t in blocks:
            if s <= p < t:
                for c in changes:
                    if c["addr"] == addr and s <= c["trace_index"] <= p:
                        cat = c["category"]
                state[cat] = state.get(cat, 0) + size
        out[p] = state
    return out


def check_against_brute_force(snapshot):
    tl = viz.timeline(snapshot)
    ref = brute_force(snapshot)
    cats = tl["categories"]
    for p, state in ref.items():
        got = {c: int(tl["bytes"][i, p]) for i, c in enumerate(cats) if tl["bytes"][i, p]}
        assert got == state, f"position {p}"
    np.testing.assert_array_equal(tl["total"], tl["bytes"].sum(axis=0))
    return tl


def test_hand_made_trace_positions_and_categories():
    r = Recorder()
    a = r.alloc(100, "other")               # event 0
    b = r.alloc(50, "temporary")            # event 1
    r.change(a, "activation")               # just before event 2
    r.free(b)                               # events 2, 3
    r.change(a, "other")                    # just before event 4
    r.free(a)                               # events 4, 5
    c = r.alloc(100, "gradient")            # event 6: reuses a's address
    assert c == a
    snap = r.snapshot()
    tl = check_against_brute_force(snap)
    assert tl["n_events"] == 7
    by = dict(zip(tl["categories"], tl["bytes"], strict=True))
    np.testing.assert_array_equal(by["other"], [0, 100, 0, 0, 100, 100, 0, 0])
    np.testing.assert_array_equal(by["activation"], [0, 0, 100, 100, 0, 0, 0, 0])
    np.testing.assert_array_equal(by["temporary"], [0, 0, 50, 50, 0, 0, 0, 0])
    np.testing.assert_array_equal(by["gradient"], [0, 0, 0, 0, 0, 0, 0, 100])
    assert tl["peak"] == {"index": 2, "bytes": 150, "time_us": 14.0,
                          "breakdown": {"parameter": 0, "gradient": 0, "comm_bucket": 0,
                                        "optimizer_state": 0, "activation": 100,
                                        "temporary": 50, "other": 0}}
    assert [b["category"] for b in tl["largest"]] == ["activation", "temporary"]
    # the reused address is a new block, with its own category
    assert viz.timeline(snap, device=0)["bytes"][CATS.index("gradient"), -1] == 100
    np.testing.assert_array_equal(tl["time_us"], [7, 7, 14, 21, 28, 35, 42, 49])


def test_blocks_alive_before_recording():
    r = Recorder()
    x = r.alloc(10, "other")
    r.free(x)
    trace = r.trace
    # a free with no alloc: alive from the start, with the free entry's category
    trace.append({"action": "free_requested", "addr": 999, "size": 1000, "stream": 0,
                  "time_us": 50, "frames": [], "category": "activation"})
    trace.append({"action": "free_completed", "addr": 999, "size": 1000, "stream": 0,
                  "time_us": 51, "frames": [], "category": "activation"})
    # alive all along (in segments, never allocated in the trace)
    snap = r.snapshot(preexisting=[(5000, 7, "parameter", [frame("m.py", 3, "init")])])
    tl = check_against_brute_force(snap)
    by = dict(zip(tl["categories"], tl["bytes"], strict=True))
    np.testing.assert_array_equal(by["activation"], [1000, 1000, 1000, 1000, 1000, 0])
    np.testing.assert_array_equal(by["parameter"], [7] * 6)
    assert tl["peak"]["index"] == 1 and tl["peak"]["bytes"] == 1017
    big = tl["largest"][0]
    assert (big["size"], big["start"], big["end"], big["category"]) == (1000, 0, 5, "activation")
    assert tl["largest"][-1]["frames"] == [frame("m.py", 3, "init")]
    assert tl["largest"][-1]["end"] is None
    # the free_requested of a block allocated before recording points at that block
    assert tl["events"]["block"][3] == tl["events"]["block"][4] >= 0


def test_change_to_block_allocated_before_recording():
    r = Recorder()
    y = r.alloc(5, "other")                 # event 0
    for index, cat in ((1, "activation"), (2, "other")):
        r.changes.append({"trace_index": index, "addr": 777, "size": 64, "category": cat,
                          "time_us": 0})
    r.free(y)                               # events 1, 2
    r.trace.append({"action": "free_completed", "addr": 777, "size": 64, "stream": 0,
                    "time_us": 99, "frames": [], "category": "other"})
    # a segment block (alive all along) that the graph released mid-trace
    r.changes.append({"trace_index": 2, "addr": 555, "size": 8, "category": "other",
                      "time_us": 0})
    snap = r.snapshot(preexisting=[(555, 8, "activation", [])])
    tl = check_against_brute_force(snap)
    by = dict(zip(tl["categories"], tl["bytes"], strict=True))
    # blocks allocated before recording start as their recorded category, then move
    np.testing.assert_array_equal(by["activation"], [8, 72, 0, 0, 0])
    np.testing.assert_array_equal(by["other"], [64, 5, 77, 72, 8])


def test_peak_breakdown_and_largest_at_peak():
    snap = training_snapshot(steps=2, layers=3, hidden=64, batch=8)
    tl = check_against_brute_force(snap)
    p = tl["peak"]["index"]
    assert tl["peak"]["bytes"] == tl["total"].max() == sum(tl["peak"]["breakdown"].values())
    assert p == int(np.argmax(tl["total"]))
    for i, c in enumerate(tl["categories"]):
        assert tl["peak"]["breakdown"][c] == tl["bytes"][i, p]
    # largest: sorted by size, all alive at the peak, categories as at the peak
    big = viz.timeline(snap, top=10_000)["largest"]
    sizes = [b["size"] for b in big]
    assert sizes == sorted(sizes, reverse=True)
    assert sum(sizes) == tl["peak"]["bytes"]
    by_cat = {}
    for b in big:
        assert b["start"] <= p and (b["end"] is None or b["end"] > p)
        by_cat[b["category"]] = by_cat.get(b["category"], 0) + b["size"]
    assert by_cat == {c: v for c, v in tl["peak"]["breakdown"].items() if v}
    assert len(tl["largest"]) == 20 and tl["largest"] == big[:20]
    assert all(b["frames"] for b in big)


def test_fused_optimizer_lowers_the_peak():
    usual = viz.timeline(training_snapshot(steps=2, layers=3, hidden=64, batch=8))
    fused = viz.timeline(training_snapshot(steps=2, layers=3, hidden=64, batch=8, fused=True))
    assert fused["peak"]["bytes"] < usual["peak"]["bytes"]
    assert usual["peak"]["breakdown"]["gradient"] > 0


def test_history_off_shows_segments_flat():
    r = Recorder()
    r.alloc(300, "parameter")
    snap = r.snapshot()
    snap["device_traces"] = [[]]
    snap["category_changes"] = [[]]
    tl = viz.timeline(snap)
    assert tl["n_events"] == 0 and tl["time_us"] is None
    assert tl["bytes"].shape == (len(CATS), 1)
    assert tl["peak"] == {"index": 0, "bytes": 300, "time_us": None,
                          "breakdown": dict.fromkeys(CATS, 0) | {"parameter": 300}}
    page = viz.render_html([("off", snap)])
    assert page_data(page)["panels"][0]["history"] is False
    empty = viz.timeline({"segments": [], "device_traces": [[]]})
    assert empty["peak"]["bytes"] == 0 and empty["largest"] == []


def test_torch_written_snapshot():
    snap = torch_like_snapshot()
    tl = viz.timeline(snap)
    assert tl["categories"] == ["other"]
    # 1024 alive all along, 2048 alive until its free, 512 transiently, 4096 from event 6
    np.testing.assert_array_equal(tl["total"], [3072, 3072, 3584, 3584, 3072, 3072, 1024,
                                                5120, 5120])
    assert tl["peak"]["bytes"] == 5120 and tl["peak"]["index"] == 7
    assert [b["size"] for b in tl["largest"]] == [4096, 1024]
    assert tl["largest"][0]["frames"][0]["name"] == "forward"
    # without "address" on blocks (older torch) they are laid out from the segment's start
    for b in snap["segments"][0]["blocks"]:
        del b["address"]
    np.testing.assert_array_equal(viz.timeline(snap)["total"], tl["total"])
    page = page_data(viz.render_html([("torch", snap)]))
    assert page["categories"] == list(CATS)  # the usual legend order; only "other" is used
    assert page["panels"][0]["maxByCat"] == [0, 0, 0, 0, 0, 0, 5120]


def test_device_selection():
    r = Recorder()
    r.alloc(64)
    snap = r.snapshot()
    snap["device_traces"] = [[], snap["device_traces"][0]]
    for s in snap["segments"]:
        s["device"] = 1
    assert viz.timeline(snap)["device"] == 1
    assert viz.timeline(snap)["peak"]["bytes"] == 64
    assert viz.timeline(snap, device=0)["peak"]["bytes"] == 0


def test_format_bytes():
    assert viz.format_bytes(0) == "0 B"
    assert viz.format_bytes(1023) == "1023 B"
    assert viz.format_bytes(1024) == "1.00 KiB"
    assert viz.format_bytes(1536) == "1.50 KiB"
    assert viz.format_bytes(int(1.23 * 2**30)) == "1.23 GiB"
    assert viz.format_bytes(150 * 2**20) == "150 MiB"
    assert viz.format_bytes(int(12.34 * 2**20)) == "12.3 MiB"
    assert viz.format_bytes(1152 * 2**20) == "1.13 GiB"  # 1.125 exactly: half-up, as JS
    assert viz.format_bytes(-2048) == "-2.00 KiB"


# ---------------------------------------------------------------- page


def page_data(page):
    m = re.search(r'<script type="application/json" id="data">(.*?)</script>', page, re.S)
    return json.loads(m.group(1))


def decode(b64, dtype):
    return np.frombuffer(base64.b64decode(b64), dtype=dtype)


def test_page_is_self_contained_and_carries_the_timeline():
    snaps = [("usual loop", training_snapshot(steps=2, layers=3, hidden=64, batch=8)),
             ("optimizer fused </script> & <b>", training_snapshot(steps=2, layers=3,
                                                                    hidden=64, batch=8,
                                                                    fused=True))]
    page = viz.render_html(snaps)
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)
    assert "http://" not in page and "https://" not in page
    assert "<title>Memory timeline: usual loop vs optimizer fused &lt;/script&gt; &amp; " \
           "&lt;b&gt;</title>" in page
    data = page_data(page)
    assert data["categories"] == CATS
    assert [p["title"] for p in data["panels"]] == [t for t, _ in snaps]
    for (_, snap), panel in zip(snaps, data["panels"], strict=True):
        tl = viz.timeline(snap)
        assert panel["peak"]["bytes"] == tl["peak"]["bytes"]
        assert panel["peak"]["label"] == viz.format_bytes(tl["peak"]["bytes"])
        # the page's cumulative sum of the shipped deltas gives the same series
        a = panel["arrays"]
        n = panel["n"]
        dense = np.zeros((len(CATS), n + 2))
        np.add.at(dense, (decode(a["dCat"], np.uint8), decode(a["dPos"], np.int32)),
                  decode(a["dVal"], np.float64))
        np.testing.assert_array_equal(np.cumsum(dense, axis=1)[:, :n + 1], tl["bytes"])
        assert len(panel["largest"]) == 20
        assert panel["stacks"][0]["frames"][0][:3] == list(
            snap["device_traces"][0][0]["frames"][0].values())
    # the "where" of an op allocation skips the engine's own frames
    stacks = data["panels"][0]["stacks"]
    assert any(s["frames"][0][3] and not s["frames"][s["where"]][3] for s in stacks)


def test_where_skips_engine_frames_and_tags_backward_nodes():
    r = Recorder()
    r.alloc(8, "gradient", [frame("<backward>", 0, "AddmmBackward0"),
                            frame(f"{SRC}/_tensor.py", 479, "wrap"),
                            frame("/usr/lib/python3/site-packages/torch/autograd/graph.py",
                                  744, "_engine_run_backward"),
                            frame("/home/me/train.py", 12, "<module>")])
    r.alloc(4, "other", [frame(f"{SRC}/models/resnet.py", 80, "forward")])
    r.alloc(2, "other", [frame("??", 0, "c10::alloc"), frame(f"{SRC}/ops/x.py", 1, "f")])
    stacks = page_data(viz.render_html([("t", r.snapshot())]))["panels"][0]["stacks"]
    assert [(s["where"], s["tag"]) for s in stacks] == [(3, "AddmmBackward0"), (0, None),
                                                        (0, None)]
    assert [f[3] for f in stacks[0]["frames"]] == [False, True, True, False]
    assert [f[3] for f in stacks[2]["frames"]] == [True, True]


def test_write_html_and_timings(tmp_path):
    t0 = time.perf_counter()
    snap = training_snapshot(steps=500, layers=8, hidden=64, batch=8)
    t1 = time.perf_counter()
    n = len(snap["device_traces"][0])
    assert n > 100_000
    out = tmp_path / "big.html"
    viz.write_html(out, [("big", snap)])
    t2 = time.perf_counter()
    size = out.stat().st_size
    print(f"\n{n} events: generated in {t1 - t0:.2f} s, HTML in {t2 - t1:.2f} s, "
          f"{size / 2**20:.1f} MiB", file=sys.stderr)
    assert page_data(out.read_text())["panels"][0]["n"] == n


# ---------------------------------------------------------------- CLI and PNG


def run_cli(*argv):
    from retrograd.__main__ import main
    return main(["memory-viz", *map(str, argv)])


def test_cli_html_and_png(tmp_path, capsys):
    a, b = tmp_path / "usual.pickle", tmp_path / "fused.pickle"
    a.write_bytes(pickle.dumps(training_snapshot(steps=2, layers=2, hidden=64, batch=8)))
    b.write_bytes(pickle.dumps(training_snapshot(steps=2, layers=2, hidden=64, batch=8,
                                                 fused=True)))
    html_path, png = tmp_path / "t.html", tmp_path / "t.png"
    assert run_cli(a, b, "-o", html_path) == 0
    assert [p["title"] for p in page_data(html_path.read_text())["panels"]] == ["usual",
                                                                                  "fused"]
    assert run_cli(a, b, "-o", html_path, "--title", "usual loop", "--title", "fused",
                   "--png", png) == 0
    assert [p["title"] for p in page_data(html_path.read_text())["panels"]] == [
        "usual loop", "fused"]
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "wrote" in capsys.readouterr().out


def test_cli_subprocess(tmp_path):
    snap = tmp_path / "s.pickle"
    snap.write_bytes(pickle.dumps(training_snapshot(steps=1, layers=2, hidden=32, batch=4)))
    out = subprocess.run([sys.executable, "-m", "retrograd", "memory-viz", str(snap), "-o",
                          str(tmp_path / "s.html")], capture_output=True, text=True,
                         check=True).stdout
    peak = viz.timeline(viz.load(snap))["peak"]
    assert f"s: peak {viz.format_bytes(peak['bytes'])} ({peak['bytes']} bytes)" in out
    assert page_data((tmp_path / "s.html").read_text())["panels"][0]["title"] == "s"


def test_cli_png_only_and_errors(tmp_path, capsys, monkeypatch):
    a = tmp_path / "s.pickle"
    a.write_bytes(pickle.dumps(torch_like_snapshot()))
    monkeypatch.chdir(tmp_path)
    assert run_cli(a, "--png", "only.png") == 0
    assert (tmp_path / "only.png").stat().st_size > 0
    assert not (tmp_path / "memory_timeline.html").exists()
    assert run_cli(a) == 0
    assert (tmp_path / "memory_timeline.html").exists()
    capsys.readouterr()
    assert run_cli(tmp_path / "missing.pickle", "-o", "x.html") == 1
    assert "missing.pickle" in capsys.readouterr().err
    bad = tmp_path / "bad.pickle"
    bad.write_bytes(pickle.dumps([1, 2]))
    assert run_cli(bad, "-o", "x.html") == 1
    assert "not a memory snapshot" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        run_cli(a, "--title", "one", "--title", "two")
    assert e.value.code == 2
    assert "--title given 2 times for 1 snapshots" in capsys.readouterr().err



class _RunsCode:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (open, (str(self.marker), "w"))


def test_cli_refuses_code_and_garbage(tmp_path, capsys):
    """A snapshot from someone else is data only: a pickle naming any callable is refused
    before it runs, and a file that is no pickle says so, naming the file."""
    marker = tmp_path / "ran"
    evil = tmp_path / "evil.pickle"
    evil.write_bytes(pickle.dumps({"segments": [_RunsCode(marker)], "device_traces": []}))
    assert run_cli(evil, "-o", str(tmp_path / "x.html")) == 1
    err = capsys.readouterr().err
    assert "evil.pickle: not a memory snapshot" in err and "is not allowed" in err
    assert not marker.exists()
    for name, data in [("text.pickle", b"hello\n"), ("empty.pickle", b""),
                       ("cut.pickle", pickle.dumps(torch_like_snapshot())[:50])]:
        (tmp_path / name).write_bytes(data)
        assert run_cli(tmp_path / name, "-o", str(tmp_path / "x.html")) == 1
        assert f"{name}: not a memory snapshot" in capsys.readouterr().err

def test_png_without_matplotlib(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(ImportError, match=r"pip install 'retrograd\[viz\]'"):
        viz.write_png(tmp_path / "x.png", [("t", torch_like_snapshot())])
    a = tmp_path / "s.pickle"
    a.write_bytes(pickle.dumps(torch_like_snapshot()))
    assert run_cli(a, "--png", tmp_path / "x.png") == 1
    assert "needs matplotlib" in capsys.readouterr().err


def test_python_api_accepts_bare_snapshot(tmp_path):
    viz.write_html(tmp_path / "one.html", [torch_like_snapshot()])
    assert page_data((tmp_path / "one.html").read_text())["panels"][0]["title"] == "memory"


def test_every_category_has_its_colour_on_the_page_and_in_the_png():
    """The tracker's categories are the page's legend, each with the same fixed colour in
    the HTML page and the PNG (a new category must not fall back to a shared one)."""
    from importlib import resources

    from retrograd.memory import CATEGORIES
    assert list(viz.DEFAULT_CATEGORIES) == list(CATEGORIES) == CATS
    page = resources.files("retrograd.memory").joinpath("viewer/timeline.html").read_text()
    palette = dict(re.findall(r'(\w+): "(#[0-9a-f]{6})"',
                              page[page.index("const PALETTE"):page.index("const EXTRA")]))
    assert palette == viz._COLORS
    assert set(palette) == set(CATS) and len(set(palette.values())) == len(CATS)
