"""How much of DDP's all-reduce time backward hides, for a ViT-Ti/16 (12 layers, width
192, 3 heads, MLP 768: 5.7M parameters) on the ranks ``mpiexec`` starts.

    mpiexec -n 2 python benchmarks/ddp_overlap.py --image-size 64 --batch 4

Per step (medians over ``--steps``, after a warm-up; the slowest rank's times):
  local     backward of the bare module (no communication)
  ddp       backward under DistributedDataParallel
  exposed   of which the end-of-backward callback: waiting for the reductions still
            running, and writing the averages back (counted as exposed)
  comm      the same buckets all-reduced alone, one after another, blocking
  hidden    1 - exposed / comm: the share of communication overlapped with backward
(``ddp - local`` would say the same, but on shared cores it is buried in noise.)
"""

import argparse
import statistics
import time

import retrograd as torch
import retrograd.distributed as dist
from retrograd.models.vision_transformer import VisionTransformer
from retrograd.nn.parallel import DistributedDataParallel
from retrograd.nn.parallel.distributed import _Reducer

_finalize = _Reducer.finalize
exposed = []


def _timed_finalize(self):
    start = time.perf_counter()
    _finalize(self)
    exposed.append(time.perf_counter() - start)


def _slowest(seconds):
    """The slowest rank's time: a synchronized step waits for it."""
    t = torch.tensor([seconds], dtype=torch.float64)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return t.item()


def _backward_time(model, x, y):
    loss = torch.nn.functional.cross_entropy(model(x), y)
    dist.barrier()
    start = time.perf_counter()
    loss.backward()
    return _slowest(time.perf_counter() - start)


def _comm_time(buckets):
    flats = [torch.zeros(b.offsets[-1]) for b in buckets]
    dist.barrier()
    start = time.perf_counter()
    for f in flats:
        dist.all_reduce(f, op=dist.ReduceOp.AVG)
    return _slowest(time.perf_counter() - start)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--image-size", type=int, default=64)
    p.add_argument("--batch", type=int, default=4, help="per rank")
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--bucket-cap-mb", type=float, default=None)
    args = p.parse_args()
    _Reducer.finalize = _timed_finalize
    dist.init_process_group("mpi")
    torch.manual_seed(0)
    net = VisionTransformer(args.image_size, 16, 12, 3, 192, 768, num_classes=100)
    ddp = DistributedDataParallel(net, bucket_cap_mb=args.bucket_cap_mb)
    x = torch.randn(args.batch, 3, args.image_size, args.image_size)
    y = torch.randint(0, 100, (args.batch,))
    runs = {"local": [], "ddp": [], "exposed": [], "comm": []}
    for step in range(args.steps + 1):
        net.zero_grad()
        local = _backward_time(net, x, y)
        net.zero_grad()
        synced = _backward_time(ddp, x, y)
        comm = _comm_time(ddp.reducer.buckets)
        if step:  # the first is a warm-up
            for k, v in zip(runs, (local, synced, _slowest(exposed[-1]), comm), strict=True):
                runs[k].append(v)
    if dist.get_rank() == 0:
        med = {k: statistics.median(v) for k, v in runs.items()}
        hidden = 1 - med["exposed"] / med["comm"]
        n_params = sum(p.numel() for p in net.parameters())
        print(f"ViT-Ti/16 at {args.image_size}px, batch {args.batch}/rank, "
              f"{dist.get_world_size()} ranks, {n_params / 1e6:.1f}M parameters, "
              f"{len(ddp.reducer.buckets)} buckets")
        print("  ".join(f"{k} {v * 1e3:.1f} ms" for k, v in med.items())
              + f"  hidden {max(0.0, min(1.0, hidden)):.0%}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
