"""The set-up every DDP rank script of these tests shares (the ``mpirun`` fixture puts this
folder on the ranks' path): the process group, float64 by default, the model and data the
scripts train, and helpers to compare and to report success.

    from ddp_prelude import DDP, close, done, dist, make, n, nn, r, torch
"""

import sys

import numpy

import retrograd as torch
import retrograd.distributed as dist
from retrograd import nn
from retrograd.nn.parallel import DistributedDataParallel as DDP

__all__ = ["DDP", "close", "dist", "done", "make", "mine", "n", "nn", "numpy", "r",
           "raises", "same_everywhere", "torch"]

dist.init_process_group("gloo")
r, n = dist.get_rank(), dist.get_world_size()
torch.set_default_dtype(torch.float64)
mine = slice(r * 8 // n, (r + 1) * 8 // n)  # this rank's rows of a batch of 8


def make(seed=0, hidden=16):
    """The small MLP the scripts train (5 inputs, 3 outputs), seeded."""
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(5, hidden), nn.Tanh(), nn.Linear(hidden, 3))


def close(a, b):
    """Tensors equal to float64 rounding (rtol 1e-6)."""
    numpy.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-6,
                                  atol=1e-12)


def same_everywhere(t):
    """``t`` is bit-identical on every rank."""
    everyone = [torch.zeros_like(t) for _ in range(n)]
    dist.all_gather(everyone, t)
    assert all(torch.equal(e, t) for e in everyone), "ranks differ"


def raises(words, f, exc=RuntimeError):
    """``f()`` raises ``exc`` with ``words`` in its message."""
    try:
        f()
    except exc as e:
        assert words in str(e), e
    else:
        raise AssertionError(f"no {exc.__name__}")


def done():
    """The line the fixture looks for, in one write (the ranks' output interleaves)."""
    sys.stdout.write(f"ok {r}\n")
