"""retrograd on a GPU (CuPy) beside PyTorch CUDA eager, in one process.

    python benchmarks/gpu.py                 # all workloads
    python benchmarks/gpu.py vit --steps 5

Each workload is one training step written once against a module ``T`` (retrograd or
torch), on device ``cuda``. A library's steps run in blocks (``--steps`` steps, then
``cuda.synchronize()``), never alternated with the other library's; the time per step is
the median of ``--repeat`` blocks after two warm-up steps. Ratios are retrograd / PyTorch.
"""

import argparse
import contextlib
import gc
import statistics
import sys
import time

import numpy as np

import retrograd

try:
    import torch
except ImportError:  # pragma: no cover - the table then shows retrograd alone
    torch = None


def _block_time(T, step, steps, repeat):
    for _ in range(2):
        step()
    T.cuda.synchronize()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(steps):
            step()
        T.cuda.synchronize()
        times.append((time.perf_counter() - t0) / steps)
    return statistics.median(times)


def _on_gpu(T, array):
    return T.from_numpy(array).cuda()


# ---- w2: an SGD-momentum step of an MLP 784-1024-1024-10, batch 128 (run.py's w2) -------
def w2(T):
    rng = np.random.default_rng(0)
    T.manual_seed(0)
    model = T.nn.Sequential(T.nn.Linear(784, 1024), T.nn.ReLU(), T.nn.Linear(1024, 1024),
                            T.nn.ReLU(), T.nn.Linear(1024, 10)).cuda()
    opt = T.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = _on_gpu(T, rng.standard_normal((128, 784)).astype(np.float32))
    y = _on_gpu(T, rng.integers(0, 10, 128))

    def step():
        opt.zero_grad(set_to_none=True)
        T.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
    return step


# ---- w4: pre-LN transformer, 4 blocks, batch 32, seq 64, dim 192, Adam (run.py's w4) ---
def w4(T):
    T.manual_seed(0)
    nn = T.nn
    layer = nn.TransformerEncoderLayer(192, 4, 4 * 192, dropout=0.0, batch_first=True,
                                       norm_first=True, activation="gelu")
    model = nn.Sequential(nn.TransformerEncoder(layer, 4, enable_nested_tensor=False),
                          nn.LayerNorm(192), nn.Linear(192, 10)).cuda()
    rng = np.random.default_rng(0)
    x = _on_gpu(T, rng.standard_normal((32, 64, 192)).astype(np.float32))
    y = _on_gpu(T, rng.integers(0, 10, (32 * 64,)))
    opt = T.optim.Adam(model.parameters(), lr=1e-3)

    def step():
        opt.zero_grad(set_to_none=True)
        nn.functional.cross_entropy(model(x).reshape(-1, 10), y).backward()
        opt.step()
    return step


# ---- vit: torchvision's ViT-B/16 training step, batch 32 of 224x224, Adam ---------------
def vit(T, batch=32, offload=False):
    T.manual_seed(0)
    if T is retrograd:
        model = retrograd.models.vit_b_16()
    else:
        import torchvision
        model = torchvision.models.vit_b_16()
    model = model.cuda()
    opt = T.optim.Adam(model.parameters(), lr=1e-4)
    rng = np.random.default_rng(0)
    x = _on_gpu(T, rng.standard_normal((batch, 3, 224, 224)).astype(np.float32))
    y = _on_gpu(T, rng.integers(0, 1000, batch))

    def step():
        opt.zero_grad(set_to_none=True)
        with T.autograd.graph.save_on_cpu(pin_memory=True) if offload else \
                contextlib.nullcontext():
            loss = T.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
    return step


WORKLOADS = {"w2": (w2, "MLP 784-1024-1024-10, batch 128, SGD momentum"),
             "w4": (w4, "pre-LN transformer 4x192, batch 32x64, Adam"),
             "vit": (vit, "ViT-B/16, batch 32 of 224x224, Adam"),
             "vit-offload": (lambda T: vit(T, offload=True),
                             "vit, activations saved on the CPU (save_on_cpu, pinned)")}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("workloads", nargs="*", default=list(WORKLOADS))
    ap.add_argument("--steps", type=int, default=5, help="steps per timed block")
    ap.add_argument("--repeat", type=int, default=3, help="timed blocks (median)")
    args = ap.parse_args(argv)
    libs = [("retrograd", retrograd)] + ([("torch", torch)] if torch is not None else [])
    print(f"{'workload':<12}{'retrograd ms':>13}{'torch ms':>10}{'ratio':>8}  description")
    times = {}
    for name in args.workloads:
        make, desc = WORKLOADS[name]
        res = {}
        for lib, mod in libs:
            step = make(mod)
            res[lib] = _block_time(mod, step, args.steps, args.repeat) * 1e3
            del step
            gc.collect()
            if lib == "retrograd":
                retrograd.cuda.empty_cache()
            else:
                torch.cuda.empty_cache()
        t = res.get("torch")
        ratio = f"{res['retrograd'] / t:7.2f}x" if t else "      -"
        base = name.split("-")[0]
        if base != name and base in times:  # a variant: each library's time over the plain one
            desc += " (" + ", ".join(f"{lib} {res[lib] / times[base][lib]:.2f}x {base}"
                                     for lib in res) + ")"
        times[name] = res
        print(f"{name:<12}{res['retrograd']:>13.2f}{(f'{t:.2f}' if t else '-'):>10}{ratio}  "
              f"{desc}")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
