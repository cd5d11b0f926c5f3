"""One training step, and its peak in the planner's terms: the bytes of the training
state (parameters, buffers, gradients, optimizer state) and the batch, plus everything
the step allocates, at the step's highest point. Storages alive for other reasons (other
models, the user's tensors) are left out, so a prediction made beside the real model
compares with a measurement made beside nothing else."""

import contextlib
import gc
import time

from ..._tensor import Tensor
from ..._vmap._pytree import tree_flatten
from ...backend import host_joins_meta
from ..tracker import ALLOC, CATEGORIES, FREE, TRACKER, _category

__all__ = ["train_step", "measure", "on_device"]


def on_device(where):
    """The context a step on a ``where`` copy runs in: on meta, host tensors the loss
    closes over (its targets) join the meta device."""
    return host_joins_meta() if where == "meta" else contextlib.nullcontext()


def train_step(model, inputs, loss_fn, optimizer):
    """The step a plan is made for: forward, ``loss_fn(output)``, backward, ``step()``,
    ``zero_grad()`` (both no-ops when the optimizer is fused into backward)."""
    loss = loss_fn(model(*inputs))
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()


def _resident(model, optimizer, inputs):
    """Bytes per category of the training state and the batch, one count per storage,
    as the books have them."""
    arrays = [t._data for t in (*model.parameters(), *model.buffers())]
    arrays += [p.grad._data for p in model.parameters() if p.grad is not None]
    for state in optimizer.state.values():
        arrays += [v._data for v in state.values() if hasattr(v, "_data")]
    arrays += [x._data for x in tree_flatten(inputs)[0] if isinstance(x, Tensor)]
    blocks = {b.key: b for b in map(TRACKER.see, arrays)}
    per = [0] * len(CATEGORIES)
    for b in blocks.values():
        per[_category(b.state)] += b.size
    return per


class Measured:
    """A step's ``peak`` (bytes), ``at_peak`` (bytes per category at that moment),
    ``seconds`` and, when recorded, ``timeline``: the step's bytes after each allocation
    and free, starting from the resident state."""

    def __init__(self, peak, at_peak, seconds, timeline):
        self.peak, self.at_peak, self.seconds, self.timeline = peak, at_peak, seconds, timeline


def _timeline(start, events):
    total, points = start, [start]
    for action, _key, size, *_ in events:
        if action == ALLOC:
            total += size
        elif action == FREE:
            total -= size
        else:
            continue
        points.append(total)
    return points


def measure(model, inputs, loss_fn, optimizer, *, record=False, where="real", collect=True):
    """Run one :func:`train_step` on ``where`` ("meta" or "real") and return its
    :class:`Measured` peak. ``record``: keep its timeline (from the history, which is
    turned on for the step when it is off). ``collect``: collect garbage first (cycles
    freed at random would move the books); the collector is off during the step, so
    that no cycle is freed in one run and kept in another."""
    books = TRACKER
    books.start()
    if collect:
        gc.collect()
    resident = _resident(model, optimizer, inputs)
    before = books.current[:]
    outside = books.total - sum(resident)
    books.reset_peak()
    recording = books.record
    if record and not recording:
        books.record_history("all", None, "all", None, True)
    mark = len(books.events) if record else 0
    collecting = gc.isenabled()
    gc.disable()
    try:
        t0 = time.perf_counter()
        with on_device(where):
            train_step(model, inputs, loss_fn, optimizer)
        seconds = time.perf_counter() - t0
    finally:
        if collecting:
            gc.enable()
        events = list(books.events)[mark:] if record else None
        if record and not recording:
            books.record_history(None, None, "all", None, False)
    peak = books.peak - outside
    at_peak = {c: books.peak_breakdown[i] - before[i] + resident[i]
               for i, c in enumerate(CATEGORIES)}
    timeline = None if events is None else _timeline(sum(resident), events)
    return Measured(peak, at_peak, seconds, timeline)
