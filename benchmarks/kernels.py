"""The hot kernels of w2's, w4's, w3's and ResNet-18's steps, per call, retrograd beside
PyTorch.

    python benchmarks/kernels.py --repeat 3
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/kernels.py --threads 1

At w4's shapes (a 4-layer, 192-wide transformer encoder on a (32, 64) batch, float32):
GELU on the (32, 64, 768) feed-forward activations, LayerNorm over 192 features, softmax
over the (32, 4, 64, 64) attention scores, the 192 -> 768 linear layer with its bias, the
scores' batched product ``q @ k.transpose(-2, -1)``, and ``sdpa`` over its heads (plain,
causal, and with a boolean mask).
At w3's (a two-layer CNN on a (64, 3, 32, 32) batch): each 3x3, padding-1 convolution
with its bias (3 -> 32 channels at 32x32, 32 -> 64 at 16x16) and the 2x2 max pool after
it. ResNet-18's (``rn_*``, batch 8 of 224x224 images, no bias): the 7x7 stride-2 stem,
the 3x3 stride-2 padded pool, a 3x3 convolution of each stage, the stride-2 downsampling
one and a 1x1 stride-2 shortcut, and the training batch norm after the stem, in stage 2
and in stage 4. ``dw_*``: depthwise convolutions at batch 8, MobileNetV2's 3x3 on
(144, 56x56) at stride 1 and 2 and ConvNeXt's 7x7 on (384, 14x14). ``bn1d_*``: training
BatchNorm1d on (256, 1024) and (4096, 512).
``mlp_*``: w2's products ``x @ w.t()`` on a batch of 128 (784 -> 1024, 1024 -> 1024,
1024 -> 10); their backward is an untransposed product for ``x``'s gradient and a
transposed-A one for ``w``'s.
``t_*``: ``w.t().contiguous()`` of a (1024, 1024) and a (1024, 128) matrix; ``nhwc``: a
(64, 32, 32, 32) batch copied to channels-last. The reductions: w2's logsumexp over
(128, 10) logits, a mean of everything and row sums of a (512, 1024) activation, row
maxima (``amax`` and ``max(-1).values``) and logsumexp of (8192, 64) scores. Each figure
is the median of ``--repeat`` blocks of calls of one library (blocks, not alternating
calls: the two libraries' thread pools slow each other when interleaved);
"fwd+bwd" is one forward and one backward with a gradient of ones, to every input
(conv1's input gradient too, which w3's step does not take). ``--threads`` sets
PyTorch's intra-op threads (its default: the machine's cores); retrograd's large
compiled kernels run in parts on NumPy's OpenBLAS threads.
"""

import argparse
import time

import numpy as np

import retrograd
from run import _median_time  # benchmarks/run.py: warm-up, then the median

try:
    import torch
except ImportError:  # pragma: no cover - the table then shows retrograd alone
    torch = None

CALLS = 20


def _inputs(T, shape, seed):
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return T.from_numpy(x)


def _gelu(T):
    return [_inputs(T, (32, 64, 768), 0)], T.nn.functional.gelu


def _layer_norm(T):
    x = _inputs(T, (32, 64, 192), 1)
    w, b = _inputs(T, (192,), 2), _inputs(T, (192,), 3)
    return [x, w, b], lambda x, w, b: T.nn.functional.layer_norm(x, (192,), w, b)


def _softmax(T):
    return [_inputs(T, (32, 4, 64, 64), 4)], lambda x: T.softmax(x, -1)


def _linear(T):
    """The first feed-forward layer, 192 -> 768 with its bias, on the (32, 64) rows."""
    x, w, b = _inputs(T, (32, 64, 192), 6), _inputs(T, (768, 192), 7), _inputs(T, (768,), 8)
    return [x, w, b], T.nn.functional.linear


def _attention_scores(T):
    """The attention scores ``q @ k.transpose(-2, -1)`` over w4's (32, 4, 64, 48) heads."""
    return [_inputs(T, (32, 4, 64, 48), 10), _inputs(T, (32, 4, 64, 48), 11)], \
        lambda q, k: q @ k.transpose(-2, -1)


def _sdpa(seed, **kw):
    """``scaled_dot_product_attention`` over w4's (32, 4, 64, 48) heads: plain, causal, or
    with a boolean mask that hides a fifth of the keys (each query sees at least one)."""
    masked = kw.pop("masked", False)

    def make(T):
        mask = np.random.default_rng(seed).random((64, 64)) > 0.2
        mask[:, 0] = True
        extra = {"attn_mask": T.from_numpy(mask)} if masked else {}
        return ([_inputs(T, (32, 4, 64, 48), seed + k) for k in range(3)],
                lambda q, k, v: T.nn.functional.scaled_dot_product_attention(
                    q, k, v, **kw, **extra))
    return make


def _matmul_nt(n_in, n_out, seed, rows=128):
    def make(T):
        return ([_inputs(T, (rows, n_in), seed), _inputs(T, (n_out, n_in), seed + 1)],
                lambda x, w: x @ w.t())
    return make


def _conv(c_in, c_out, size, seed, k=3, stride=1, batch=64, bias=True):
    def make(T):
        x = _inputs(T, (batch, c_in, size, size), seed)
        w = _inputs(T, (c_out, c_in, k, k), seed + 1)
        if not bias:
            return [x, w], lambda x, w: T.nn.functional.conv2d(x, w, None, stride, k // 2)
        b = _inputs(T, (c_out,), seed + 2)
        return [x, w, b], lambda x, w, b: T.nn.functional.conv2d(x, w, b, stride, k // 2)
    return make


def _depthwise(channels, size, seed, k, stride=1, batch=8):
    """A depthwise convolution (a group per channel), as MobileNet's and ConvNeXt's."""
    def make(T):
        x = _inputs(T, (batch, channels, size, size), seed)
        w = _inputs(T, (channels, 1, k, k), seed + 1)
        return [x, w], lambda x, w: T.nn.functional.conv2d(x, w, None, stride, k // 2, 1,
                                                           channels)
    return make


def _max_pool(channels, size, seed, k=2, stride=None, padding=0, batch=64):
    def make(T):
        return [_inputs(T, (batch, channels, size, size), seed)], \
            lambda x: T.nn.functional.max_pool2d(x, k, stride, padding)
    return make


def _transpose(shape, seed):
    """A row-major copy of a transposed matrix (``w.t().contiguous()``)."""
    return lambda T: ([_inputs(T, shape, seed)], lambda x: x.t().contiguous())


def _channels_last(T):
    """w3's first convolution's output (64, 32, 32, 32), NCHW, copied to channels-last."""
    return [_inputs(T, (64, 32, 32, 32), 62)], \
        lambda x: x.contiguous(memory_format=T.channels_last)


def _reduction(f, shape, seed):
    """A reduction over the last dim (or of everything) of a float32 tensor."""
    def make(T):
        return [_inputs(T, shape, seed)], lambda x: f(T, x)
    return make


def _batch_norm(channels, size, seed, batch=8):
    """Training batch norm (batch statistics, running ones updated), as ResNet's; with no
    ``size``, BatchNorm1d's on (batch, channels)."""
    def make(T):
        x = _inputs(T, (batch, channels) + ((size, size) if size else ()), seed)
        w, b = _inputs(T, (channels,), seed + 1), _inputs(T, (channels,), seed + 2)
        stats = T.zeros(channels), T.ones(channels)
        return [x, w, b], lambda x, w, b: T.nn.functional.batch_norm(x, *stats, w, b, True)
    return make


KERNELS = {"gelu": _gelu, "layer_norm": _layer_norm, "softmax": _softmax, "linear": _linear,
           "attn_scores": _attention_scores, "sdpa": _sdpa(76),
           "sdpa_causal": _sdpa(79, is_causal=True), "sdpa_masked": _sdpa(82, masked=True),
           "mlp_784": _matmul_nt(784, 1024, 70),
           "mlp_1024": _matmul_nt(1024, 1024, 72), "mlp_out": _matmul_nt(1024, 10, 74),
           "conv1": _conv(3, 32, 32, 5), "max_pool1": _max_pool(32, 32, 8),
           "conv2": _conv(32, 64, 16, 9), "max_pool2": _max_pool(64, 16, 12),
           # ResNet-18's layers at batch 8 and 224x224 inputs (no bias: batch norm follows)
           "rn_stem": _conv(3, 64, 224, 20, k=7, stride=2, batch=8, bias=False),
           "rn_pool": _max_pool(64, 112, 23, k=3, stride=2, padding=1, batch=8),
           "rn_layer1": _conv(64, 64, 56, 26, batch=8, bias=False),
           "rn_down2": _conv(64, 128, 56, 29, stride=2, batch=8, bias=False),
           "rn_layer2": _conv(128, 128, 28, 32, batch=8, bias=False),
           "rn_layer3": _conv(256, 256, 14, 35, batch=8, bias=False),
           "rn_layer4": _conv(512, 512, 7, 38, batch=8, bias=False),
           "rn_short3": _conv(128, 256, 28, 41, k=1, stride=2, batch=8, bias=False),
           "rn_bn1": _batch_norm(64, 112, 44), "rn_bn2": _batch_norm(128, 28, 47),
           "rn_bn4": _batch_norm(512, 7, 50),
           # depthwise: MobileNetV2's 3x3 on 56x56 maps (at stride 1 and 2), ConvNeXt's 7x7
           "dw_mbv2": _depthwise(144, 56, 63, 3), "dw_mbv2_s2": _depthwise(144, 56, 65, 3, 2),
           "dw_convnext": _depthwise(384, 14, 67, 7),
           # BatchNorm1d after an MLP's linear layer (a channel's values a row apart)
           "bn1d_256": _batch_norm(1024, None, 53, batch=256),
           "bn1d_4096": _batch_norm(512, None, 56, batch=4096),
           # layout copies: a transposed square matrix and NCHW -> NHWC
           "t_1024": _transpose((1024, 1024), 59), "t_1024x128": _transpose((1024, 128), 60),
           "nhwc": _channels_last,
           # reductions: w2's hand-written cross-entropy's logsumexp over 10 logits, a
           # loss's mean, rows of w4's scores and of a (512, 1024) activation
           "lse_w2": _reduction(lambda T, x: T.logsumexp(x, 1, keepdim=True), (128, 10), 85),
           "mean_all": _reduction(lambda T, x: x.mean(), (512, 1024), 86),
           "sum_rows": _reduction(lambda T, x: x.sum(-1), (512, 1024), 87),
           "amax_rows": _reduction(lambda T, x: x.amax(-1), (8192, 64), 88),
           "max_dim": _reduction(lambda T, x: x.max(-1).values, (8192, 64), 89),
           "lse_rows": _reduction(lambda T, x: T.logsumexp(x, -1), (8192, 64), 90)}


def _block_ms(fn, repeat):
    """Milliseconds per call: the median of ``repeat`` blocks of CALLS calls."""
    return _median_time(lambda: [fn() for _ in range(CALLS)], repeat) / CALLS * 1e3


def _timed(T, make, repeat):
    args, f = make(T)
    fwd = _block_ms(lambda: f(*args), repeat)
    leaves = [a.requires_grad_() for a in args]
    ones = T.ones_like(f(*leaves))

    def both():
        T.autograd.grad(f(*leaves), leaves, ones)
    return fwd, _block_ms(both, repeat)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("kernels", nargs="*", default=list(KERNELS))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--threads", type=int, help="PyTorch's intra-op threads")
    args = ap.parse_args(argv)
    if args.threads and torch is not None:
        torch.set_num_threads(args.threads)
    libs = [("retrograd", retrograd)] + ([("torch", torch)] if torch is not None else [])
    print(f"{'kernel':<12}{'pass':<9}{'retrograd ms':>13}{'torch ms':>10}{'ratio':>8}")
    for name in args.kernels:
        res = {}
        for lib, mod in libs:
            time.sleep(0.3)  # (OpenBLAS's workers spin 0.1 s after a job: not into the next)
            res[lib] = _timed(mod, KERNELS[name], args.repeat)
        for i, part in enumerate(("fwd", "fwd+bwd")):
            r = res["retrograd"][i]
            t = res["torch"][i] if torch is not None else None
            ratio = f"{r / t:7.2f}x" if t else "      -"
            print(f"{name:<12}{part:<9}{r:>13.3f}{(f'{t:.3f}' if t else '-'):>10}{ratio}",
                  flush=True)


if __name__ == "__main__":
    main()
