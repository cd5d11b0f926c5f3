"""Recording cost per op of deep graphs: w1's op chain at 1e3, 1e4 and 1e5 ops.

    python benchmarks/deep_chain.py            # retrograd beside PyTorch
    python benchmarks/deep_chain.py --repeat 5

Times only the forward (the recording) of one chain, median of ``--repeat`` chains of
each library in turn, and counts the cyclic collector's collections by generation during
retrograd's chains, with the time they took per op: a flat cost per op means no older
collection rescans the growing graph.
"""

import argparse
import gc
import statistics
import time

import numpy as np

import retrograd

try:
    import torch
except ImportError:  # pragma: no cover - the table then shows retrograd alone
    torch = None

SIZES = (1_000, 10_000, 100_000)


def record(T, n_ops):
    """Seconds to record a chain of ``n_ops`` ops (w1's x*0.99, x+0.01, sin, tanh)."""
    x = T.from_numpy(np.linspace(-1, 1, 16).astype(np.float32)).requires_grad_()
    t0 = time.perf_counter()
    for _ in range(n_ops // 4):
        x = x * 0.99
        x = x + 0.01
        x = x.sin()
        x = x.tanh()
    elapsed = time.perf_counter() - t0
    del x  # the graph is freed outside the timed region
    return elapsed


class _Collections:
    """Counts the cyclic collector's collections by generation, and times them, while
    installed (first among the callbacks: the time includes the others)."""

    def __init__(self):
        self.counts = [0, 0, 0]
        self.seconds = 0.0
        self.started = 0.0

    def __call__(self, phase, info):
        if phase == "start":
            self.started = time.perf_counter()
        else:
            self.seconds += time.perf_counter() - self.started
            self.counts[info["generation"]] += 1


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    libs = [("retrograd", retrograd)] + ([("torch", torch)] if torch is not None else [])
    print(f"{'ops':>8}{'retrograd':>12}{'torch':>10}{'ratio':>8}  "
          "  us/op; retrograd's collections per chain (gen 0/1/2), their us/op")
    for _, mod in libs:
        record(mod, 2_000)  # warm-up
    for n in SIZES:
        res, seen = {}, None
        for lib, mod in libs:
            counter = _Collections()
            gc.callbacks.insert(0, counter)
            try:
                res[lib] = statistics.median(record(mod, n) for _ in range(args.repeat)) / n
            finally:
                gc.callbacks.remove(counter)
            if lib == "retrograd":
                seen = ("/".join(f"{c / args.repeat:g}" for c in counter.counts)
                        + f"  {counter.seconds / args.repeat / n * 1e6:.2f}")
        t = res.get("torch")
        ratio = f"{res['retrograd'] / t:7.2f}x" if t else "      -"
        print(f"{n:>8}{res['retrograd'] * 1e6:>12.2f}{(f'{t * 1e6:.2f}' if t else '-'):>10}"
              f"{ratio}  {seen}", flush=True)


if __name__ == "__main__":
    main()
