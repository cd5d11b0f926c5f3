"""retrograd beside PyTorch on the same workloads, in one process.

    python benchmarks/run.py            # all workloads
    python benchmarks/run.py w1 --repeat 7

Each workload is written once against a module ``T`` (retrograd or torch) so
both libraries run the same code. Times are the median of ``--repeat`` runs
after a warm-up; ratios are retrograd / PyTorch from the same run.
"""

import argparse
import statistics
import sys
import time

import numpy as np

import retrograd

try:
    import torch
except ImportError:  # pragma: no cover - the table then shows retrograd alone
    torch = None


def _median_time(fn, repeat):
    fn()  # warm-up
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


# ---- w1: a chain of 1000 elementwise ops on a 16-element tensor, forward + backward ----
W1_OPS = 1000


def w1(T):
    x0 = T.from_numpy(np.linspace(-1, 1, 16).astype(np.float32)).requires_grad_()

    def step():
        x = x0
        for _ in range(W1_OPS // 4):
            x = x * 0.99
            x = x + 0.01
            x = x.sin()
            x = x.tanh()
        x.sum().backward()
        x0.grad = None
    return step


# ---- w2: one SGD-momentum step of an MLP 784-1024-1024-10, batch 128, cross-entropy ------
def _mlp_params(T, sizes, rng):
    params = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:], strict=True):
        bound = 1 / np.sqrt(fan_in)
        w = rng.uniform(-bound, bound, (fan_out, fan_in)).astype(np.float32)
        b = rng.uniform(-bound, bound, (fan_out,)).astype(np.float32)
        params += [T.from_numpy(w).requires_grad_(), T.from_numpy(b).requires_grad_()]
    return params


def _cross_entropy(T, logits, target):
    logp = logits - T.logsumexp(logits, 1, keepdim=True)
    return -logp.gather(1, target.unsqueeze(1)).mean()


def w2(T):
    rng = np.random.default_rng(0)
    params = _mlp_params(T, (784, 1024, 1024, 10), rng)
    bufs = [None] * len(params)
    x = T.from_numpy(rng.standard_normal((128, 784)).astype(np.float32))
    y = T.from_numpy(rng.integers(0, 10, 128))
    lr, momentum = 0.01, 0.9

    def step():
        h = x
        for i in range(0, len(params), 2):
            h = h @ params[i].t() + params[i + 1]
            if i + 2 < len(params):
                h = T.relu(h)
        loss = _cross_entropy(T, h, y)
        loss.backward()
        with T.no_grad():
            for k, p in enumerate(params):
                if bufs[k] is None:
                    bufs[k] = p.grad.clone()
                else:
                    bufs[k].mul_(momentum).add_(p.grad)
                p.add_(bufs[k], alpha=-lr)
                p.grad = None
    return step


WORKLOADS = {
    "w1": (w1, "1000-op elementwise chain, 16 elements, fwd+bwd", "us/op", 1e6 / W1_OPS),
    "w2": (w2, "MLP 784-1024-1024-10 b128 CE + SGD momentum step", "ms/step", 1e3),
}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("workloads", nargs="*", default=list(WORKLOADS))
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    libs = [("retrograd", retrograd)] + ([("torch", torch)] if torch is not None else [])
    print(f"{'workload':<9}{'unit':<9}{'retrograd':>11}{'torch':>11}{'ratio':>8}  description")
    for name in args.workloads:
        make, desc, unit, scale = WORKLOADS[name]
        res = {lib: _median_time(make(mod), args.repeat) * scale for lib, mod in libs}
        t = res.get("torch")
        ratio = f"{res['retrograd'] / t:7.2f}x" if t else "      -"
        print(f"{name:<9}{unit:<9}{res['retrograd']:>11.2f}"
              f"{(f'{t:.2f}' if t else '-'):>11}{ratio}  {desc}")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
