"""What checkpointing saves, as retrograd's memory tracker measures it.

The model: a deep MLP of ``n`` layers (Linear then ReLU, width ``w``, frozen weights) on a
batch of ``b`` rows that requires grad. Let ``a`` be one activation, ``b * w`` float32.
Each layer saves one activation (ReLU's output; the Linear's input is that same array,
and with frozen weights the Linear needs only its weight), so a plain run peaks at
``n + 2`` activations above what was allocated before it (the last two: the gradient
flowing back and the one being computed).

``checkpoint_sequential`` with ``s`` segments of ``k = n / s`` layers keeps ``s - 1``
segment inputs (the first is the model's input, allocated before) plus the last
segment's ``k`` activations; backward then recomputes one segment at a time, ``k``
activations, while the boundaries not yet used are held. The peak is

    peak(s) = (s - 1) + n / s + c   activations,   c = 2 (non-reentrant), 3 (reentrant:
                                                      its nested backward holds one more)

smallest at ``s = sqrt(n)``: ``2 sqrt(n) - 1 + c`` instead of ``n + 2``. The tracker's
"activation" category at that peak (tensors held for the graph, recomputed ones
included) is ``(s - 1) + n / s`` for the non-reentrant form.

Measured (n = 16, 36, 64; w = 64, b = 256; units of a, to 0.05): peaks 18, 38, 66
plain; with sqrt(n) segments 9, 13, 17 non-reentrant and 10, 14, 18 reentrant.

Selective checkpointing that keeps every Linear's output (n more activations, one per
layer) holds, when backward recomputes the first segment, those of the other ``n - k``
layers too: 9 + 12 = 21 for n = 16 in 4 checkpointed segments. Kept on disk instead,
they cost no memory until read back: 9, as without them.
"""

import functools
import math

import pytest

import retrograd
from retrograd import memory
from retrograd.utils.checkpoint import (CheckpointPolicy, checkpoint, checkpoint_sequential,
                                        create_selective_checkpoint_contexts)

W, B = 64, 256
A = W * B * 4  # bytes of one activation


@pytest.fixture(autouse=True)
def _accounting():
    memory.stop_accounting()
    yield
    memory.stop_accounting()


def _peak(n, segments, use_reentrant=False):
    """(peak above the start, activation category at the peak), in activations."""
    nn = retrograd.nn
    model = nn.Sequential(*[nn.Sequential(nn.Linear(W, W), nn.ReLU()) for _ in range(n)])
    model.requires_grad_(False)
    x = retrograd.randn(B, W, requires_grad=True)
    memory.reset_peak_memory_stats()
    start = memory.memory_allocated()
    if segments is None:
        out = model(x)
    else:
        out = checkpoint_sequential(model, segments, x, use_reentrant=use_reentrant)
    out.sum().backward()
    stats = memory.memory_stats()
    return ((stats["allocated_bytes.all.peak"] - start) / A,
            stats["allocated_bytes.activation.at_peak"] / A)


@pytest.mark.parametrize("n", [16, 36, 64])
def test_sqrt_n_segments_peak_as_the_model_says(n):
    s = math.isqrt(n)
    plain, _ = _peak(n, None)
    assert plain == pytest.approx(n + 2, abs=0.05)
    peak, activation = _peak(n, s)
    assert peak == pytest.approx(s - 1 + n / s + 2, abs=0.05)
    assert activation == pytest.approx(s - 1 + n / s, abs=0.05)
    reentrant, _ = _peak(n, s, use_reentrant=True)
    assert reentrant == pytest.approx(s - 1 + n / s + 3, abs=0.05)


def test_peak_over_segment_counts_is_lowest_near_sqrt_n():
    n = 16
    peaks = {s: _peak(n, s)[0] for s in (2, 4, 8, 16)}
    for s, p in peaks.items():
        assert p == pytest.approx(s - 1 + n / s + 2, abs=0.05), (s, p)
    assert min(peaks, key=peaks.get) == 4


def _segments_peak(n, s, policy):
    """Every one of ``s`` segments checkpointed, keeping the Linears' outputs by
    ``policy`` (None: no selective checkpointing); the peak above the start."""
    nn = retrograd.nn
    layers = [nn.Sequential(nn.Linear(W, W), nn.ReLU()) for _ in range(n)]
    nn.Sequential(*layers).requires_grad_(False)
    h = x = retrograd.randn(B, W, requires_grad=True)
    kwargs = {} if policy is None else {"context_fn": functools.partial(
        create_selective_checkpoint_contexts,
        lambda ctx, op, *a, **k: policy if op.name == "linear" else
        CheckpointPolicy.PREFER_RECOMPUTE)}
    memory.reset_peak_memory_stats()
    start = memory.memory_allocated()
    k = n // s
    for i in range(s):
        h = checkpoint(nn.Sequential(*layers[i * k:(i + 1) * k]), h, use_reentrant=False,
                       **kwargs)
    h.sum().backward()
    assert x.grad is not None
    return (memory.max_memory_allocated() - start) / A


def test_kept_outputs_cost_memory_unless_on_disk():
    n, s = 16, 4
    base = _segments_peak(n, s, None)
    assert base == pytest.approx(9, abs=0.05)
    kept = _segments_peak(n, s, CheckpointPolicy.MUST_SAVE)
    assert kept == pytest.approx(base + n - n // s, abs=0.05)
    # on a CPU machine, CPU memory is where they were: offloading there changes nothing
    assert _segments_peak(n, s, CheckpointPolicy.MUST_CPU_OFFLOAD) == pytest.approx(kept,
                                                                                    abs=0.05)
    assert _segments_peak(n, s, CheckpointPolicy.MUST_DISK_OFFLOAD) == pytest.approx(base,
                                                                                     abs=0.05)
