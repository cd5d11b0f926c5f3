"""The memory planner: the peak a training step will have, and the fastest way to make
it fit a budget, answered before the run and checked against it.

>>> p = retrograd.memory.plan(model, (x,), lambda out: F.cross_entropy(out, y), opt,
...                           budget="1.5GiB")
>>> print(p)              # the candidate plans: predicted peak and time of each
>>> p.apply(model, opt)   # installs the chosen one
>>> print(p.verify())     # two real steps: measured against predicted peak

How a plan is predicted: every candidate (the optimizer fused into backward or not;
none to all of the model's repeated blocks checkpointed, those whose activations weigh
most per second of recompute first; the other saved activations offloaded to disk or
not) is installed on a copy, on the ``meta`` device, of the model and optimizer after
one step (so the optimizer's state exists), which steps once more; that step's peak,
booked by the memory tracker from shapes and dtypes, is the prediction, since the real
step allocates the same storages. Step times are estimated from one traced forward
(``_cost``): they rank the plans.

The peak counted is the training state's (parameters, buffers, gradients, optimizer
state), the batch's and what the step allocates; storages held for other reasons are
left out, in the prediction and in the measurement alike. ``plan`` and ``verify`` reset
the tracker's peak statistics.
"""

import gc
import math

from ... import _random
from ...nn.modules.module import Module
from ...optim.optimizer import Optimizer
from ..tracker import TRACKER
from .._bytes import format_bytes
from ._budget import parse_bytes
from ._cost import machine
from ._install import Choice, is_installed
from ._plan import Candidate, MemoryPlan, PlanReport, dry_run, inputs_tuple
from ._trace import Trace

__all__ = ["plan", "MemoryPlan", "PlanReport", "Candidate", "Choice", "parse_bytes"]

_FRACTIONS = (0.25, 0.5, 0.75)  # of the blocks checkpointed, besides none and all


def _seconds(choice, trace, mach):
    """Estimated seconds of a step with ``choice``: forward, backward (twice the
    forward), the checkpointed blocks' second forward, and writing then reading back
    the offloaded activations."""
    recomputed = sum(trace.time[p] for p in choice.checkpoint)
    seconds = 3 * trace.forward + recomputed
    if choice.offload:
        kept = sum(max(trace.saved[p] - trace.inputs[p], 0) for p in choice.checkpoint)
        seconds += 2 * max(trace.activations - kept, 0) / mach.disk
    return seconds


def _choices(trace):
    ranked, n = trace.ranked(), len(trace.blocks)
    counts = sorted({0, n, *(math.ceil(n * f) for f in _FRACTIONS)})
    order = {p: i for i, p in enumerate(trace.blocks)}
    for fuse in (False, True):
        for k in counts:
            blocks = tuple(sorted(ranked[:k], key=order.get))
            for offload in (None, "disk"):
                yield Choice(fuse, blocks, offload)


def plan(model, example_inputs, loss_fn, optimizer, *, budget, trace="meta",
         offload_dir=None):
    """The fastest plan whose predicted peak fits ``budget`` (bytes, or a string such as
    ``"1.5GiB"``) for the step ``loss_fn(model(*example_inputs)).backward();
    optimizer.step(); optimizer.zero_grad()``, as a :class:`MemoryPlan` (``print`` it
    for the table of every candidate). ``trace``: "meta" (shapes only, no memory) or
    "real" (copies of the tensors, for models whose ops need values). ``offload_dir``:
    where disk offload writes (the system's temporary directory by default). Raises
    RuntimeError, with the table, when no candidate fits."""
    if not isinstance(model, Module):
        raise TypeError(f"model must be an nn.Module, got {type(model).__name__}")
    if not isinstance(optimizer, Optimizer):
        raise TypeError(f"optimizer must be an Optimizer, got {type(optimizer).__name__}")
    if not callable(loss_fn):
        raise TypeError(f"loss_fn must be callable (output -> scalar loss), got "
                        f"{type(loss_fn).__name__}")
    if trace not in ("meta", "real"):
        raise ValueError(f"trace must be 'meta' or 'real', got {trace!r}")
    if is_installed(model):
        raise RuntimeError("a memory plan is installed on this model: remove() it before "
                           "planning again")
    budget = parse_bytes(budget)
    inputs = inputs_tuple(example_inputs)
    started = TRACKER.started
    rng = _random.get_rng_state()
    try:
        TRACKER.start()
        mach = machine(offload_dir)
        traced = Trace(model, optimizer, inputs, loss_fn, trace, mach)
        twin, opt, xs = traced.warm
        gc.collect()  # once: each dry run frees what it made by reference counting
        candidates = [Candidate(c, dry_run(c, twin, opt, xs, loss_fn, trace, offload_dir,
                                           warm=True), _seconds(c, traced, mach), budget)
                      for c in _choices(traced)]
    finally:
        _random.set_rng_state(rng)
        if not started:
            TRACKER.stop()
    fitting = [c for c in candidates if c.fits]
    chosen = min(fitting, key=lambda c: (c.seconds, c.peak)) if fitting else None
    result = MemoryPlan(budget, candidates, chosen, traced.blocks,
                        (model, inputs, loss_fn, optimizer), trace, offload_dir)
    if chosen is None:
        lowest = min(candidates, key=lambda c: c.peak)
        raise RuntimeError(f"no plan fits a budget of {format_bytes(budget)}: the lowest "
                           f"predicted peak is {format_bytes(lowest.peak)} "
                           f"({lowest.choice.describe(len(traced.blocks))})\n"
                           f"{result.table()}")
    return result
