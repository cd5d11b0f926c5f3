"""Where a training step's GPU time goes: the kernels of one step of a workload of
``gpu.py`` (default the ViT-B/16), by total time, through PyTorch's profiler (its CUDA
activity records CuPy's kernels too), for retrograd and then PyTorch.

    python benchmarks/gpu_profile.py [vit|w2|w4] [--rows 30]
"""

import argparse

import torch
from torch.profiler import ProfilerActivity, profile

import retrograd
from gpu import WORKLOADS


def _table(name, T, make, rows):
    step = make(T)
    for _ in range(3):
        step()
    T.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        step()
        T.cuda.synchronize()
    events = [e for e in prof.key_averages() if e.self_device_time_total > 0]
    total = sum(e.self_device_time_total for e in events)
    print(f"== {name}: {sum(e.count for e in events)} launches, {total / 1e3:.1f} ms on the GPU")
    for e in sorted(events, key=lambda e: -e.self_device_time_total)[:rows]:
        print(f"{e.self_device_time_total / 1e3:8.2f} ms {e.count:5d}x  {e.key[:100]}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("workload", nargs="?", default="vit", choices=list(WORKLOADS))
    ap.add_argument("--rows", type=int, default=30)
    args = ap.parse_args(argv)
    make = WORKLOADS[args.workload][0]
    for name, T in (("retrograd", retrograd), ("torch", torch)):
        _table(name, T, make, args.rows)


if __name__ == "__main__":
    main()
