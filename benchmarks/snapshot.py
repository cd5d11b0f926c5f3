"""How long a memory snapshot of ~100k history events takes to dump and to render.

    python benchmarks/snapshot.py [--events 100000]

Records the history of a 50-op elementwise chain (forward and backward) until the
history holds ``--events`` events, then times ``_dump_snapshot`` (the snapshot built in
PyTorch's layout and pickled) and the viewer's page (``memory.viz.write_html``).
PyTorch has no CPU snapshot to compare with.
"""

import argparse
import os
import tempfile
import time

import retrograd
from retrograd.memory import tracker, viz


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, default=100_000)
    args = ap.parse_args(argv)
    memory = retrograd.memory
    memory._record_memory_history()
    x = retrograd.rand(64, requires_grad=True)
    while len(tracker.TRACKER.events) < args.events:
        y = x
        for _ in range(50):
            y = (y * 1.01).sin()
        y.sum().backward()
    n = len(tracker.TRACKER.events)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "snapshot.pickle")
        t0 = time.perf_counter()
        memory._dump_snapshot(path)
        dump = time.perf_counter() - t0
        snap = viz.load(path)
        t0 = time.perf_counter()
        viz.write_html(os.path.join(d, "timeline.html"), [("chain", snap)])
        page = time.perf_counter() - t0
    memory._record_memory_history(None)
    memory.stop_accounting()
    print(f"{n} history events ({len(snap['device_traces'][0])} trace entries): "
          f"_dump_snapshot {dump:.2f} s, memory-viz page {page:.2f} s")


if __name__ == "__main__":
    main()
