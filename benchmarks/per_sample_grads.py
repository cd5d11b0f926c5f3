"""Per-sample gradients over a batch of 64: ``vmap(grad(loss))`` beside the Python loop of
one ``grad`` per sample, in retrograd and in PyTorch (torch.func), in one process.

    python benchmarks/per_sample_grads.py [--repeat 5] [--clock cpu]

Both libraries run single-threaded unless OPENBLAS_NUM_THREADS / OMP_NUM_THREADS say
otherwise (a shared machine makes multi-threaded BLAS calls wait for their threads).

Each model is written once against a module ``T`` (retrograd or torch). Times are the
median of ``--repeat`` runs after a warm-up, on the wall clock or (``--clock cpu``) this
process's CPU time, which on a shared machine leaves out the time spent waiting for a
core; "loop/vmap" is how much faster vmap is than the loop in the same library. Each
model then states its floor: the per-sample gradients' size and how long a fresh array of
that size takes to be allocated, written once and freed, which any vmap that returns them
pays. Both libraries run in this process, where ``import retrograd`` has glibc keep freed
blocks up to 256 MiB (``docs/deviations.md``): the large buffer reuses freed memory, as
the loop's 64 small ones do, instead of faulting in fresh pages on every call (2-3x the
write). Its last line is retrograd's vmap time over torch.func's.
"""

import argparse
import os
import statistics
import time

# One BLAS thread for both libraries unless the caller says otherwise: on a shared machine
# a multi-threaded GEMM waits for its threads to be scheduled (tens of ms per call).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402 (after the thread settings, which BLAS reads at load)

import retrograd  # noqa: E402

try:
    import torch
except ImportError:  # pragma: no cover - the table then shows retrograd alone
    torch = None

BATCH = 64


def _param(T, rng, *shape):
    bound = 1 / np.sqrt(np.prod(shape[1:]))
    return T.from_numpy(rng.uniform(-bound, bound, shape).astype(np.float32))


def mlp(T):
    """784-256-10 ReLU MLP, cross-entropy."""
    rng = np.random.default_rng(0)
    params = {"w1": _param(T, rng, 256, 784), "b1": _param(T, rng, 256),
              "w2": _param(T, rng, 10, 256), "b2": _param(T, rng, 10)}
    x = T.from_numpy(rng.standard_normal((BATCH, 784)).astype(np.float32))
    y = T.from_numpy(rng.integers(0, 10, BATCH))

    def loss(p, xi, yi):
        h = T.relu(xi @ p["w1"].T + p["b1"])
        logits = h @ p["w2"].T + p["b2"]
        return T.nn.functional.cross_entropy(logits[None], yi[None])
    return loss, params, x, y


def cnn(T):
    """1x28x28 -> conv3x3(8) ReLU maxpool2 -> conv3x3(16) ReLU maxpool2 -> linear 10."""
    rng = np.random.default_rng(0)
    params = {"c1": _param(T, rng, 8, 1, 3, 3), "c2": _param(T, rng, 16, 8, 3, 3),
              "w": _param(T, rng, 10, 16 * 7 * 7), "b": _param(T, rng, 10)}
    x = T.from_numpy(rng.standard_normal((BATCH, 1, 28, 28)).astype(np.float32))
    y = T.from_numpy(rng.integers(0, 10, BATCH))
    F = T.nn.functional

    def loss(p, xi, yi):
        h = F.max_pool2d(F.relu(F.conv2d(xi[None], p["c1"], padding=1)), 2)
        h = F.max_pool2d(F.relu(F.conv2d(h, p["c2"], padding=1)), 2)
        logits = h.reshape(1, -1) @ p["w"].T + p["b"]
        return F.cross_entropy(logits, yi[None])
    return loss, params, x, y


def _median_time(fn, repeat, clock):
    """The median of ``repeat`` runs of ``fn`` after a warm-up, in seconds of ``clock``."""
    fn()
    times = []
    for _ in range(repeat):
        t0 = clock()
        fn()
        times.append(clock() - t0)
    return statistics.median(times)


def _nbytes(grads):
    """The bytes of a (nested) dict or sequence of tensors."""
    if isinstance(grads, dict):
        return sum(_nbytes(g) for g in grads.values())
    if isinstance(grads, (tuple, list)):
        return sum(_nbytes(g) for g in grads)
    return grads.numel() * grads.element_size()


def _fresh_write(nbytes):
    """A fresh float32 array of ``nbytes``, written once (and freed)."""
    return lambda: np.full(nbytes // 4, 1.0, np.float32)


def _runs(T, model):
    loss, params, x, y = model(T)
    g = T.func.grad(loss)
    batched = T.func.vmap(g, in_dims=(None, 0, 0))

    def loop():
        return [g(params, x[i], y[i]) for i in range(BATCH)]
    return (lambda: batched(params, x, y)), loop


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--torch-threads", type=int, default=int(os.environ["OMP_NUM_THREADS"]),
                    help="torch.set_num_threads (default: OMP_NUM_THREADS, 1 if unset, as "
                         "retrograd's BLAS)")
    ap.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                    help="wall: perf_counter; cpu: this process's CPU time (process_time), "
                         "steadier on a shared machine while both libraries run one thread")
    args = ap.parse_args(argv)
    clock = time.perf_counter if args.clock == "wall" else time.process_time
    if torch is not None:
        torch.set_num_threads(args.torch_threads)
    libs = [("retrograd", retrograd)] + ([("torch", torch)] if torch is not None else [])
    print(f"{'model':<6}{'library':<11}{'vmap ms':>9}{'loop ms':>9}{'loop/vmap':>11}"
          f"   ({args.clock} clock)")
    for name, model in (("mlp", mlp), ("cnn", cnn)):
        vmapped = {}
        for lib, T in libs:
            fast, loop = _runs(T, model)
            v = _median_time(fast, args.repeat, clock) * 1e3
            lp = _median_time(loop, args.repeat, clock) * 1e3
            vmapped[lib] = v
            print(f"{name:<6}{lib:<11}{v:>9.2f}{lp:>9.2f}{lp / v:>10.1f}x")
            if lib == "retrograd":
                nbytes = _nbytes(fast())
                floor = _median_time(_fresh_write(nbytes), args.repeat, clock) * 1e3
        print(f"{name:<6}floor: per-sample gradients {nbytes / 1e6:.1f} MB, a fresh array "
              f"of that size written once {floor:.2f} ms")
        if "torch" in vmapped:
            print(f"{name:<6}retrograd vmap / torch.func vmap: "
                  f"{vmapped['retrograd'] / vmapped['torch']:.2f}x")

if __name__ == "__main__":
    main()
