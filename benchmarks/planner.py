"""The memory planner's acceptance run: for each model, the unplanned step, then three
budgets (fractions of the unplanned peak); at each, the plan chosen, its predicted and
measured peak (two real steps, the second measured) and its step time (median of three
more steps) beside the unplanned one's.

    python benchmarks/planner.py                      # vit_b_16, resnet50, gpt; batch 8
    python benchmarks/planner.py --models gpt --fractions 0.8 0.4
"""

import argparse
import statistics
import time

import retrograd
from retrograd import memory, optim
from retrograd.memory.planner._catalog import build
from retrograd.memory.planner._step import measure, train_step
from retrograd.memory.viz import format_bytes


def _fresh(name, batch):
    retrograd.manual_seed(0)
    model, inputs, loss_fn = build(name, batch)
    return model, inputs, loss_fn, optim.Adam(model.parameters(), lr=1e-4)


def _seconds(model, inputs, loss_fn, opt, steps=3):
    """The median time of ``steps`` more training steps (one step is too noisy here)."""
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        train_step(model, inputs, loss_fn, opt)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _unplanned(name, batch):
    model, inputs, loss_fn, opt = _fresh(name, batch)
    train_step(model, inputs, loss_fn, opt)
    return measure(model, inputs, loss_fn, opt), _seconds(model, inputs, loss_fn, opt)


def run(name, batch, fractions):
    base, base_s = _unplanned(name, batch)
    print(f"\n{name}, batch {batch}, Adam: unplanned step peak {format_bytes(base.peak)}, "
          f"{base_s:.2f} s (median of 3 steps)")
    print(f"{'budget':>10} {'plan':<52} {'predicted':>10} {'measured':>10} {'error':>7} "
          f"{'plan s':>7} {'time':>6} {'planning':>8}")
    rows = []
    for f in fractions:
        budget = int(base.peak * f)
        model, inputs, loss_fn, opt = _fresh(name, batch)
        t0 = time.perf_counter()
        p = memory.plan(model, inputs, loss_fn, opt, budget=budget)
        planning = time.perf_counter() - t0
        p.apply(model, opt)
        r = p.verify()
        seconds = _seconds(model, inputs, loss_fn, opt)
        p.remove()
        rows.append((budget, r))
        print(f"{format_bytes(budget):>10} {p.describe():<52} "
              f"{format_bytes(r.predicted_peak):>10} {format_bytes(r.measured_peak):>10} "
              f"{r.error:>+7.2%} {seconds:>7.2f} {seconds / base_s:>5.2f}x "
              f"{planning:>7.1f}s", flush=True)
        del model, opt, p, r
    peaks = [r.measured_peak for _, r in rows]
    print(f"within 5%: {all(abs(r.error) <= 0.05 for _, r in rows)}; never above the "
          f"budget: {all(r.measured_peak <= b for b, r in rows)}; non-increasing as the "
          f"budget falls: {all(a >= b for a, b in zip(peaks, peaks[1:], strict=False))}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", nargs="+", default=["vit_b_16", "resnet50", "gpt"])
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--fractions", nargs="+", type=float, default=[0.9, 0.7, 0.5])
    args = ap.parse_args()
    for name in args.models:
        run(name, args.batch, sorted(args.fractions, reverse=True))


if __name__ == "__main__":
    main()
