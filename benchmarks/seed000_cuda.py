"""Seed 000 (PyTorch's optimizer-in-backward tutorial) on a GPU, as its blocks are written:
``import torch`` is retrograd, ``.cuda()`` stays, and torchvision's ViT-L/16 is
retrograd's with random weights (no download). Prints each block's GPU memory and the
peak breakdown of both snapshots, which it writes to ``--out`` for PyTorch's memory_viz.

    python benchmarks/seed000_cuda.py [--seed-file shared/seeds/000_....txt] [--out DIR]
"""

import argparse
import os
import pathlib
import pickle
import sys
import time

import retrograd
from retrograd.memory import viz

_REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(_REPO / "tests" / "tutorials"))
from _seeds import code_blocks, seed_path  # noqa: E402 (the tests' reader of seed files)


def _mib(n):
    return f"{n / 2**20:.0f} MiB"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed-file", default=None, help="the seed (default: shared/seeds/)")
    ap.add_argument("--out", default="seed000-cuda", help="folder for the snapshots")
    args = ap.parse_args(argv)
    if not retrograd.cuda.is_available():
        ap.error(f"needs a GPU through CuPy ({retrograd.backend.gpu.absent()})")
    path = args.seed_file or seed_path("000_038e2e05220164a4.txt")
    if path is None:
        ap.error("seed 000 not found: give --seed-file")
    blocks = [code for _, code, _ in code_blocks(pathlib.Path(path).read_text())]
    os.makedirs(args.out, exist_ok=True)
    os.chdir(args.out)
    mem = retrograd.cuda.memory
    ns = {}
    for i, code in enumerate(blocks):
        code = code.replace("import torch\n", "import retrograd as torch\n")
        code = code.replace("from torchvision import models", "from retrograd import models")
        code = code.replace("weights='DEFAULT'", "weights=None")
        t = time.perf_counter()
        exec(compile(code, f"seed000:block{i}", "exec"), ns)
        print(f"block {i}: {time.perf_counter() - t:.1f} s; allocated "
              f"{_mib(mem.memory_allocated('cuda'))}, peak {_mib(mem.max_memory_allocated('cuda'))}"
              f", reserved {_mib(mem.memory_reserved('cuda'))}", flush=True)
        if i == 2:  # the second recording's peak is its own
            mem.reset_peak_memory_stats()
    for name in ("snapshot.pickle", "snapshot-opt-in-bwd.pickle"):
        with open(name, "rb") as f:
            peak = viz.timeline(pickle.load(f))["peak"]
        print(f"{name}: peak by category (MiB)",
              {k: v // 2**20 for k, v in peak["breakdown"].items() if v})
    return 0


if __name__ == "__main__":
    sys.exit(main())
