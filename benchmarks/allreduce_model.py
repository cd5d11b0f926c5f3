"""An alpha-beta model of DDP's ring all-reduce, fitted to this machine, projecting step
time and scaling efficiency for 8 to 64 nodes on a 25 Gb/s network.

    mpiexec -n 2 python benchmarks/allreduce_model.py

Measured here (2 ranks, shared memory): the all-reduce time t(n) = alpha + n * gamma of
n bytes (gamma is the per-byte copy-and-add cost, which a network all-reduce pays too),
and retrograd's matmul training throughput (a Linear layer's forward and backward) for
the compute side; the projection is also shown for nodes 100x faster than that.

Projected: a ring all-reduce of n bytes over p nodes costs
    2 (p - 1) (alpha_net + alpha) + 2 (p - 1) / p * n * (8 / 25e9 + gamma)
(alpha_net, the network's per-message latency, is assumed: 30 us for TCP on Ethernet).
Buckets of b bytes: backward produces gradients evenly, each bucket's all-reduce starts
when it is full and they run one at a time, so a step takes
    T_fwd + max(T_bwd + t(b), T_comm + T_bwd / k)    (k buckets, T_comm all of them),
and the efficiency is (T_fwd + T_bwd) / step. The suggested bucket size minimizes it.
"""

import time

import retrograd as torch
import retrograd.distributed as dist

NETWORK_BYTES_PER_S = 25e9 / 8
ALPHA_NET = 30e-6
MODELS = {  # parameters, forward GFLOPs per 224x224 image (torchvision's figures)
    "ResNet-50": (25.6e6, 4.09),
    "ViT-B/16": (86.6e6, 17.56),
}
BATCH = 32  # images per node and step
BUCKETS_MB = (1, 5, 10, 25, 50, 100)


def _allreduce_fit():
    """alpha from the smallest message, gamma from the slope between 1 and 16 MiB (a least
    squares fit over all sizes lets the large ones swallow alpha)."""
    best = {}
    for n in (4 << 10, 1 << 20, 16 << 20):
        t = torch.zeros(n // 4)
        best[n] = float("inf")
        for _ in range(20 if n < 1 << 20 else 5):
            dist.barrier()
            start = time.perf_counter()
            dist.all_reduce(t)
            best[n] = min(best[n], time.perf_counter() - start)
    gamma = (best[16 << 20] - best[1 << 20]) / (15 << 20)
    return max(best[4 << 10] - (4 << 10) * gamma, 0.0), gamma


def _flops_per_s():
    """Training throughput of a Linear layer (fwd 2mnk, bwd 4mnk flops)."""
    layer = torch.nn.Linear(1024, 1024)
    x = torch.randn(256, 1024)
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        layer(x).sum().backward()
        best = min(best, time.perf_counter() - start)
    return 6 * 256 * 1024 * 1024 / best


def _step(params, gflops, flops_rate, p, bucket_bytes, alpha, gamma):
    n = params * 4
    k = max(1, -(-n // bucket_bytes))
    per_msg, per_byte = ALPHA_NET + alpha, 1 / NETWORK_BYTES_PER_S + gamma
    t_bucket = 2 * (p - 1) * per_msg + 2 * (p - 1) / p * min(n, bucket_bytes) * per_byte
    t_comm = k * 2 * (p - 1) * per_msg + 2 * (p - 1) / p * n * per_byte
    t_fwd = BATCH * gflops * 1e9 / flops_rate
    t_bwd = 2 * t_fwd
    step = t_fwd + max(t_bwd + t_bucket, t_comm + t_bwd / k)
    return step, (t_fwd + t_bwd) / step


def main():
    dist.init_process_group("mpi")
    alpha, gamma = _allreduce_fit()
    rate = _flops_per_s()
    if dist.get_rank() == 0:
        print(f"fitted here: alpha {alpha * 1e6:.1f} us, gamma {gamma * 1e9:.3f} ns/B "
              f"({1 / gamma / 1e9:.2f} GB/s), training throughput {rate / 1e9:.1f} GFLOP/s; "
              f"batch {BATCH}/node, 25 Gb/s, alpha_net {ALPHA_NET * 1e6:.0f} us")
        print("| model | nodes | step (s) | efficiency | bucket (MB) "
              "| step, 100x compute (s) | efficiency | bucket (MB) |")
        print("|---|---|---|---|---|---|---|---|")
        for name, (params, gflops) in MODELS.items():
            for p in (8, 16, 32, 64):
                cells = []
                for r in (rate, 100 * rate):
                    best = min(BUCKETS_MB, key=lambda b, r=r: _step(
                        params, gflops, r, p, b << 20, alpha, gamma)[0])
                    step, eff = _step(params, gflops, r, p, best << 20, alpha, gamma)
                    cells.append(f"{step:.3g} | {eff:.1%} | {best}")
                print(f"| {name} | {p} | " + " | ".join(cells) + " |")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
