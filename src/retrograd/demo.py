"""``python -m retrograd demo``: PyTorch's "optimizer step in backward" tutorial, on the
CPU or (``--device cuda``) a GPU.

Trains a ViT on fake images for a few steps the usual way (``step()`` after backward)
and as many with the same optimizer fused into backward (``optim.fuse_into_backward``),
records both memory histories, writes both snapshots and one HTML report, and prints the
peak memory by category for both runs and what fusing saved.

What to expect (P: parameter bytes; Adam keeps 2P of state): the usual peak comes at the
end of backward or in the step, with every gradient alive: about P + G + 2P. Fused, no
gradient outlives its update, and the peak moves to the start of backward, where the
activations A are alive: about P + 2P + A. The saving is G less what the activations
add at the new peak (the tutorial's observation too).

With ``--dtype bfloat16`` the model, the images and so the activations, gradients and
Adam's state are bfloat16 (half of every category's bytes), and a usual-loop run in
float32 beside them shows what the lower precision saves. With ``--device cuda`` the
model and the images live on the GPU and the peaks are the GPU's.
"""

import argparse
import gc
import os
import pickle
import sys
import time

from . import _dtype, backend, memory, models, optim
from .backend import gpu
from ._creation import rand
from ._random import manual_seed
from .memory import viz

_MODELS = ("vit_b_16", "vit_l_16", "vit_tiny")
_ROWS = ("parameter", "gradient", "optimizer_state", "activation", "other")
_DTYPES = ("float32", "bfloat16")


class _Progress:
    """A one-line progress bar on stderr, ticked by the model's encoder blocks in forward
    and in backward (so the long steps show where they are)."""

    def __init__(self, label, total, stream=sys.stderr, width=30):
        self.label, self.total, self.stream, self.width = label, total, stream, width
        self.done = 0
        self.start = time.perf_counter()
        self.tty = stream.isatty()
        self._draw()

    def tick(self, n=1):
        self.done = min(self.total, self.done + n)
        if self.tty or self.done == self.total:
            self._draw()

    def _draw(self):
        filled = self.width * self.done // max(self.total, 1)
        bar = "#" * filled + "-" * (self.width - filled)
        secs = time.perf_counter() - self.start
        end = "\n" if self.done == self.total else ""
        if self.tty or end:
            self.stream.write(f"\r  {self.label:<34} [{bar}] {self.done:>3}/{self.total} "
                              f"{secs:6.1f}s{end}")
            self.stream.flush()


def _blocks(model):
    return list(model.encoder.layers) if hasattr(model, "encoder") else [model]


def _train_step(model, optimizer, image_size, progress, dtype, device):
    """The tutorial's ``train``: a fake image, forward, ``.sum().backward()``, step."""
    handles = []

    def forward_tick(module, args, out):
        progress.tick()
        if out.requires_grad:  # ticks again when backward reaches this block
            out.register_hook(lambda g: progress.tick())

    for block in _blocks(model):
        handles.append(block.register_forward_hook(forward_tick))
    try:
        fake_image = rand(1, 3, image_size, image_size, dtype=dtype, device=device)
        loss = model.forward(fake_image)
        loss.sum().backward()
        optimizer.step()
        optimizer.zero_grad()
    finally:
        for h in handles:
            h.remove()
    progress.tick()


def _run(label, model, optimizer, steps, image_size, exact):
    """``steps`` training steps with memory history recorded, in the model's dtype; the
    snapshot and stats."""
    first = next(model.parameters())
    dtype, device = first.dtype, first.device
    gc.collect()
    memory._record_memory_history(clear_history=True, exact=exact)
    memory.reset_peak_memory_stats()
    per_step = 2 * len(_blocks(model)) + 1
    for i in range(steps):
        progress = _Progress(f"{label}, step {i + 1}/{steps}", per_step)
        _train_step(model, optimizer, image_size, progress, dtype, device)
    snapshot = memory._snapshot()
    stats = memory.memory_stats(device)
    memory._record_memory_history(None)
    return snapshot, stats


def _fmt(n):
    return viz.format_bytes(n)


def _table(results, grad_bytes, exact):
    names = [name for name, _, _ in results]
    lines = [f"{'peak memory by category':<26}" + "".join(f"{n:>22}" for n in names)]
    for row in _ROWS + (("temporary",) if exact else ()):
        cells = [s[f"allocated_bytes.{row}.at_peak"] for _, _, s in results]
        lines.append(f"  {row:<24}" + "".join(f"{_fmt(c):>22}" for c in cells))
    peaks = [s["allocated_bytes.all.peak"] for _, _, s in results]
    lines.append(f"  {'total (peak)':<24}" + "".join(f"{_fmt(p):>22}" for p in peaks))
    saved = peaks[0] - peaks[1]
    lines.append("")
    lines.append(f"  fusing saved {_fmt(saved)} of peak memory ({100 * saved / peaks[0]:.1f}%); "
                 f"the gradients are {_fmt(grad_bytes)}")
    act = results[1][2]["allocated_bytes.activation.at_peak"]
    lines.append(f"  the fused peak holds {_fmt(act)} of activations: saving = gradients "
                 f"- what the activations add at the new peak")
    if len(results) > 2:  # a lower-precision run beside float32's usual loop
        saved = peaks[2] - peaks[0]
        lines.append(f"  {names[0].split(', ')[1]} saved {_fmt(saved)} of the usual loop's "
                     f"float32 peak ({100 * saved / peaks[2]:.1f}%)")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="python -m retrograd demo",
        description="PyTorch's 'optimizer step in backward' tutorial on the CPU: the peak "
                    "memory by category with the usual loop and with the optimizer fused "
                    "into backward, snapshots and an HTML report.")
    ap.add_argument("--model", default="vit_b_16", choices=_MODELS,
                    help="the ViT to train (default: vit_b_16, under a minute; vit_l_16 is "
                         "the tutorial's own)")
    ap.add_argument("--steps", type=int, default=3, help="steps per run (default 3)")
    ap.add_argument("--image-size", type=int, default=None,
                    help="image side (default: the model's, 224; 32 for vit_tiny)")
    ap.add_argument("--out", default="retrograd-demo",
                    help="folder for the snapshots and the report (default retrograd-demo)")
    ap.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    ap.add_argument("--exact", action="store_true",
                    help="also book kernel temporaries (the optimizer's intermediates); "
                         "slower")
    ap.add_argument("--device", default="cpu", choices=("cpu", "cuda"),
                    help="where the model and the images live (default cpu; cuda: a GPU "
                         "through CuPy)")
    ap.add_argument("--dtype", default="float32", choices=_DTYPES,
                    help="the model's and the images' dtype (default float32); bfloat16 "
                         "also runs the usual loop in float32, to show what it saves")
    args = ap.parse_args(argv)
    if args.steps < 1:
        ap.error("--steps must be at least 1")
    if args.device == "cuda" and not (gpu.cupy() is not None or backend.emulating_cuda()):
        ap.error(f"--device cuda needs a GPU through CuPy ({gpu.absent()})")
    os.makedirs(args.out, exist_ok=True)
    manual_seed(args.seed)
    t0 = time.perf_counter()
    kwargs = {} if args.image_size is None else {"image_size": args.image_size}
    memory._record_memory_history(enabled="state")  # the parameters' stacks, for the report
    model = getattr(models, args.model)(weights=None, **kwargs).to(args.device)
    image_size = model.image_size
    dtype = getattr(_dtype, args.dtype)
    params = list(model.parameters())
    P = sum(p.numel() for p in params) * dtype.itemsize
    low = f" in {args.dtype}" if dtype is not _dtype.float32 else ""
    print(f"{args.model}: {sum(p.numel() for p in params) / 1e6:.1f}M parameters "
          f"({_fmt(P)}{low}), Adam, fake {image_size}x{image_size} images, batch 1; "
          f"{args.steps} steps each way, on {model.parameters().__next__().device}")

    runs = []  # (column, page title, (snapshot, stats))
    if low:
        optimizer = optim.Adam(model.parameters())
        runs.append(("usual, float32", "usual loop in float32",
                     _run("usual loop, float32", model, optimizer, args.steps, image_size,
                          args.exact)))
        del optimizer
        model.to(dtype)
    usual, fused = (f"usual, {args.dtype}", f"fused, {args.dtype}") if low else \
        ("usual loop", "fused into backward")
    optimizer = optim.Adam(model.parameters())
    runs.insert(0, (usual, f"usual loop{low}: step() after backward",
                    _run(f"usual loop{low}", model, optimizer, args.steps, image_size,
                         args.exact)))
    del optimizer  # as the tutorial: a clean slate for the second run
    optimizer = optim.Adam(model.parameters())
    handle = optim.fuse_into_backward(optimizer)
    runs.insert(1, (fused, f"optimizer fused into backward{low}",
                    _run(f"fused into backward, {args.dtype}" if low else
                         "optimizer fused into backward", model, optimizer, args.steps,
                         image_size, args.exact)))
    handle.remove()

    paths = []
    names = ("snapshot.pickle", "snapshot-opt-in-bwd.pickle", "snapshot-float32.pickle")
    for name, (_, _, (snap, _)) in zip(names, runs, strict=False):
        path = os.path.join(args.out, name)
        with open(path, "wb") as f:
            pickle.dump(snap, f, protocol=pickle.HIGHEST_PROTOCOL)
        paths.append(path)
    report = os.path.join(args.out, "memory-report.html")
    viz.write_html(report, [(title, snap) for _, title, (snap, _) in runs],
                   page_title=f"retrograd demo: {args.model} + Adam{low}, memory by category")
    print()
    print(_table([(column, *run) for column, _, run in runs], P, args.exact))
    print()
    print(f"snapshots: {', '.join(paths)} (PyTorch's snapshot layout)")
    print(f"report:    {report}")
    print(f"done in {time.perf_counter() - t0:.0f}s")
    memory.stop_accounting()
    return 0
