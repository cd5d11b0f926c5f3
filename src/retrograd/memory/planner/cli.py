"""``python -m retrograd plan``: plan a catalog model's training step for a memory
budget, print the candidates, verify the chosen plan on real steps and write the HTML
report (predicted beside measured)."""

import argparse
import sys
import time

from ... import _dtype, optim
from ..._random import manual_seed
from ...backend import Device
from .._bytes import format_bytes
from . import plan
from ._budget import parse_bytes
from ._catalog import MODELS, build
from ._report import render
from ._step import measure, train_step

_OPTIMIZERS = {"adam": optim.Adam, "adamw": optim.AdamW, "sgd": optim.SGD}


def _model(args, device):
    with Device(device):
        manual_seed(args.seed)
        model, inputs, loss_fn = build(args.model, args.batch)
    if args.dtype != "float32":
        dtype = getattr(_dtype, args.dtype)
        model.to(dtype)
        inputs = tuple(x.to(dtype) if x.is_floating_point() else x for x in inputs)
    opt = _OPTIMIZERS[args.optimizer](model.parameters(), lr=1e-4)
    return model, inputs, loss_fn, opt


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="python -m retrograd plan",
        description="The fastest way to fit a training step into a memory budget: every "
                    "candidate plan (optimizer fused into backward, checkpointed blocks, "
                    "activations offloaded to disk) is dry-run on the meta device; the "
                    "chosen one is then measured on real steps.")
    ap.add_argument("--model", required=True, choices=sorted(MODELS))
    ap.add_argument("--batch", type=int, default=8, help="batch size (default 8)")
    ap.add_argument("--budget", required=True, type=_size,
                    help="memory budget, e.g. 1.5GiB or 800MB")
    ap.add_argument("--optimizer", default="adam", choices=sorted(_OPTIMIZERS))
    ap.add_argument("--dtype", default="float32", choices=("float32", "bfloat16"))
    ap.add_argument("--max-batch", action="store_true",
                    help="also find the largest batch the chosen plan fits in the budget")
    ap.add_argument("--compare", action="store_true",
                    help="also measure the unplanned step first (it may not fit the budget)")
    ap.add_argument("--no-verify", action="store_true",
                    help="only plan: build the model on meta, run nothing real")
    ap.add_argument("--offload-dir", default=None, help="where disk offload writes")
    ap.add_argument("--out", default="retrograd-plan.html", help="the HTML report")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    if args.batch < 1:
        ap.error("--batch must be at least 1")
    model, inputs, loss_fn, opt = _model(args, "meta" if args.no_verify else "cpu")
    t0 = time.perf_counter()
    try:
        p = plan(model, inputs, loss_fn, opt, budget=args.budget, offload_dir=args.offload_dir)
    except RuntimeError as e:
        print(e, file=sys.stderr)
        return 1
    print(f"{args.model}, batch {args.batch}, {args.optimizer}, {args.dtype}: planned in "
          f"{time.perf_counter() - t0:.1f} s")
    print(p)
    if args.max_batch:
        n, peak = p.largest_batch(MODELS[args.model][1])
        print(f"\nlargest batch with this plan: {n}"
              + (f" (predicted peak {format_bytes(peak)})" if n else ""))
    report = None
    if not args.no_verify:
        if args.compare:
            train_step(model, inputs, loss_fn, opt)
            base = measure(model, inputs, loss_fn, opt)
            print(f"\nunplanned step: peak {format_bytes(base.peak)}, {base.seconds:.3g} s")
        p.apply(model, opt)
        report = p.verify()
        print()
        print(report)
        if args.compare:
            print(f"step time: {report.seconds:.3g} s planned, {base.seconds:.3g} s unplanned "
                  f"({report.seconds / base.seconds:.2f}x)")
    with open(args.out, "w", encoding="utf-8") as f:
        f.write(render(p, report, title=f"retrograd memory plan: {args.model}, batch "
                                        f"{args.batch}, budget {format_bytes(p.budget)}"))
    print(f"report: {args.out}")
    return 0


def _size(text):
    try:
        return parse_bytes(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
