"""retrograd beside PyTorch on the same workloads, in one process.

    python benchmarks/run.py            # all workloads
    python benchmarks/run.py w1 --repeat 7

Each workload is written once against a module ``T`` (retrograd or torch) so
both libraries run the same code. Times are the median of ``--repeat`` runs
after a warm-up; ratios are retrograd / PyTorch from the same run.
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


def w2(T, batch=128):
    rng = np.random.default_rng(0)
    params = _mlp_params(T, (784, 1024, 1024, 10), rng)
    bufs = [None] * len(params)
    x = T.from_numpy(rng.standard_normal((batch, 784)).astype(np.float32))
    y = T.from_numpy(rng.integers(0, 10, batch))
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


# ---- adam: one Adam step on ~10M float32 parameters in 20 tensors ------------------------
def _adam(T, foreach):
    rng = np.random.default_rng(0)
    params = [T.from_numpy(rng.standard_normal(s).astype(np.float32)).requires_grad_()
              for s in [(1024, 960), (1024,)] * 10]
    for p in params:
        p.grad = T.from_numpy(rng.standard_normal(tuple(p.shape)).astype(np.float32))
    opt = T.optim.Adam(params, lr=1e-3, foreach=foreach)
    return opt.step


# ---- w3: CNN training step: batch 64 of 3x32x32, two conv3x3+ReLU+maxpool, linear, SGD ----
def _sgd_step(T, params, lr=0.01):
    with T.no_grad():
        for p in params:
            p.add_(p.grad, alpha=-lr)
            p.grad = None


def w3(T):
    T.manual_seed(0)
    nn = T.nn
    model = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Flatten(), nn.Linear(64 * 8 * 8, 10))
    rng = np.random.default_rng(0)
    x = T.from_numpy(rng.standard_normal((64, 3, 32, 32)).astype(np.float32))
    y = T.from_numpy(rng.integers(0, 10, 64))
    params = list(model.parameters())

    def step():
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        _sgd_step(T, params)
    return step


# ---- rn18: ResNet-18 (torchvision's layout, written here for both), batch 8 of 224x224 ----
def _resnet18(T, classes=10):
    nn = T.nn

    class Block(nn.Module):
        def __init__(self, c_in, c_out, stride):
            super().__init__()
            self.conv1 = nn.Conv2d(c_in, c_out, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(c_out)
            self.conv2 = nn.Conv2d(c_out, c_out, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(c_out)
            self.down = None if stride == 1 and c_in == c_out else nn.Sequential(
                nn.Conv2d(c_in, c_out, 1, stride, bias=False), nn.BatchNorm2d(c_out))

        def forward(self, x):
            out = T.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            return T.relu(out + (x if self.down is None else self.down(x)))

    layers = [nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(),
              nn.MaxPool2d(3, 2, 1)]
    c = 64
    for width, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
        layers += [Block(c, width, stride), Block(width, width, 1)]
        c = width
    return nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(512, classes))


def rn18(T):
    T.manual_seed(0)
    model = _resnet18(T)
    rng = np.random.default_rng(0)
    x = T.from_numpy(rng.standard_normal((8, 3, 224, 224)).astype(np.float32))
    y = T.from_numpy(rng.integers(0, 10, 8))
    params = list(model.parameters())

    def step():
        T.nn.functional.cross_entropy(model(x), y).backward()
        _sgd_step(T, params)
    return step


# ---- w4: pre-LN transformer, 4 blocks, batch 32, seq 64, dim 192, Adam (hand-written) -----
def w4(T, dtype="float32", amp=False):
    T.manual_seed(0)
    nn = T.nn
    layer = nn.TransformerEncoderLayer(192, 4, 4 * 192, dropout=0.0, batch_first=True,
                                       norm_first=True, activation="gelu")
    model = nn.Sequential(nn.TransformerEncoder(layer, 4, enable_nested_tensor=False),
                          nn.LayerNorm(192), nn.Linear(192, 10)).to(getattr(T, dtype))
    rng = np.random.default_rng(0)
    x = T.from_numpy(rng.standard_normal((32, 64, 192)).astype(np.float32)).to(getattr(T, dtype))
    y = T.from_numpy(rng.integers(0, 10, (32, 64)))
    params = list(model.parameters())
    m = [T.zeros_like(p) for p in params]
    v = [T.zeros_like(p) for p in params]
    state = {"t": 0}
    lr, b1, b2, eps = 1e-3, 0.9, 0.999, 1e-8

    def step():
        with T.autocast("cpu", dtype=T.bfloat16) if amp else contextlib.nullcontext():
            out = model(x)
            loss = nn.functional.cross_entropy(out.reshape(-1, 10), y.reshape(-1))
        loss.backward()
        state["t"] += 1
        t = state["t"]
        with T.no_grad():
            for p, mi, vi in zip(params, m, v, strict=True):
                g = p.grad
                mi.mul_(b1).add_(g, alpha=1 - b1)
                vi.mul_(b2).addcmul_(g, g, value=1 - b2)
                denom = (vi / (1 - b2 ** t)).sqrt_().add_(eps)
                p.addcdiv_(mi, denom, value=-lr / (1 - b1 ** t))
                p.grad = None
    return step


# ---- w5: the Jacobian (vectorized) of a 256->256 tanh MLP -------------------------------
def w5(T):
    rng = np.random.default_rng(0)
    w1, b1, w2, b2 = (p.detach() for p in _mlp_params(T, (256, 256, 256), rng))
    x = T.from_numpy(rng.standard_normal(256).astype(np.float32))

    def net(v):
        return T.tanh(T.tanh(v @ w1.t() + b1) @ w2.t() + b2)

    def step():
        return T.autograd.functional.jacobian(net, x, vectorize=True)
    return step


WORKLOADS = {
    "w1": (w1, "1000-op elementwise chain, 16 elements, fwd+bwd", "us/op", 1e6 / W1_OPS),
    "w2": (w2, "MLP 784-1024-1024-10 b128 CE + SGD momentum step", "ms/step", 1e3),
    # batch 1: the weight gradients are outer products
    "w2b1": (lambda T: w2(T, 1), "w2 at batch 1", "ms/step", 1e3),
    "w5": (w5, "jacobian(vectorize=True) of a 256-256-256 tanh MLP", "ms", 1e3),
    "adam": (lambda T: _adam(T, False), "Adam step, 10M float32 params in 20 tensors, "
             "foreach=False", "ms/step", 1e3),
    "adam-fe": (lambda T: _adam(T, True), "Adam step, 10M float32 params in 20 tensors, "
                "foreach=True", "ms/step", 1e3),
    "w3": (w3, "CNN b64 3x32x32, 2x(conv3x3+ReLU+maxpool), linear, SGD", "ms/step", 1e3),
    "w4": (w4, "pre-LN transformer 4 blocks b32 seq64 d192, Adam", "ms/step", 1e3),
    "rn18": (rn18, "ResNet-18 b8 3x224x224, SGD", "ms/step", 1e3),
    # parameters, activations, gradients and Adam's moments all in bfloat16
    "w4-bf16": (lambda T: w4(T, "bfloat16"), "w4 in bfloat16", "ms/step", 1e3),
    # float32 parameters and Adam, the forward under CPU autocast to bfloat16
    "w4-amp": (lambda T: w4(T, amp=True), "w4 under bfloat16 autocast", "ms/step", 1e3),
}


# ---- w1-prof: w1 inside autograd.profiler.profile (its overhead: compare with w1) --------
def w1_prof(T):
    step = w1(T)

    def profiled():
        with T.autograd.profiler.profile():
            step()
    return profiled


WORKLOADS["w1-prof"] = (w1_prof, "w1 under autograd.profiler.profile()", "us/op", 1e6 / W1_OPS)


# ---- w1-mem, w4-mem: with memory history recorded (stacks and all); torch runs plain -----
def _with_memory_history(make):
    def workload(T):
        step = make(T)
        if T is not retrograd:
            return step

        def cleanup():
            T.memory._record_memory_history(None)
            T.memory.stop_accounting()
        T.memory._record_memory_history()
        step.cleanup = cleanup
        return step
    return workload


WORKLOADS["w1-mem"] = (_with_memory_history(w1), "w1 with retrograd.memory history on",
                       "us/op", 1e6 / W1_OPS)
WORKLOADS["w4-mem"] = (_with_memory_history(w4), "w4 with retrograd.memory history on",
                       "ms/step", 1e3)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("workloads", nargs="*", default=list(WORKLOADS))
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    libs = [("retrograd", retrograd)] + ([("torch", torch)] if torch is not None else [])
    print(f"{'workload':<9}{'unit':<9}{'retrograd':>11}{'torch':>11}{'ratio':>8}  description")
    times = {}
    for name in args.workloads:
        make, desc, unit, scale = WORKLOADS[name]
        res = {}
        for lib, mod in libs:
            fn = make(mod)
            res[lib] = _median_time(fn, args.repeat) * scale
            getattr(fn, "cleanup", lambda: None)()
            del fn
            gc.collect()  # no workload pays for the garbage cycles of the one before
        t = res.get("torch")
        ratio = f"{res['retrograd'] / t:7.2f}x" if t else "      -"
        base = name.split("-")[0]
        if base != name and base in times:  # an instrumented run: its cost over the plain one
            desc += f" ({res['retrograd'] / times[base]:.2f}x {base})"
        times[name] = res["retrograd"]
        print(f"{name:<9}{unit:<9}{res['retrograd']:>11.2f}"
              f"{(f'{t:.2f}' if t else '-'):>11}{ratio}  {desc}")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
