"""One traced step of a copy of the model: which blocks it has, what each saves for
backward and what its forward costs, to rank blocks for checkpointing and to price a
plan."""

from ... import _observe
from ..tracker import TRACKER
from ..tracker import ACTIVATION
from ._blocks import find_blocks
from ._cost import ForwardCost
from ._shadow import shadow
from ._step import on_device, train_step

__all__ = ["Trace"]


class _SavedPerModule(_observe.EngineObserver):
    """Bytes that became activations (saved for backward) while each module ran, its
    children's included."""

    modules = True
    rank = 1

    def __init__(self):
        self.saved = {}  # id(module) -> bytes

    def run_module(self, call, module, args, kwargs):
        start = TRACKER.current[ACTIVATION]
        try:
            return call(module, args, kwargs)
        finally:
            key = id(module)
            self.saved[key] = self.saved.get(key, 0) + TRACKER.current[ACTIVATION] - start


class Trace:
    """A copy of the model (on ``where``) stepped once, so that the optimizer's state
    exists (``warm``: the copy, model, optimizer and inputs, to copy again for each
    candidate), then run forward once under the observers. ``blocks``: the
    checkpointable blocks the forward called, in call order; per block ``saved`` (bytes
    it saved for backward), ``inputs`` (bytes of its tensor arguments, what a checkpoint
    keeps) and ``time`` (estimated forward seconds); ``forward`` (the whole forward's
    seconds) and ``activations`` (bytes saved)."""

    def __init__(self, model, optimizer, inputs, loss_fn, where, machine):
        twin, opt, xs = self.warm = shadow(model, optimizer, inputs, where)
        with on_device(where):
            train_step(twin, xs, loss_fn, opt)  # the optimizer's state appears
        cost, saved = ForwardCost(machine), _SavedPerModule()
        _observe.attach("engine", cost)
        _observe.attach("engine", saved)
        try:
            start = TRACKER.current[ACTIVATION]
            with on_device(where):
                out = twin(*xs)
            self.activations = TRACKER.current[ACTIVATION] - start
        finally:
            _observe.detach("engine", cost)
            _observe.detach("engine", saved)
        del out
        self.forward = cost.total
        mods = {p: twin.get_submodule(p) for p in find_blocks(twin)}
        order = {id(m): i for i, m in enumerate(cost.order)}
        self.blocks = sorted((p for p, m in mods.items() if id(m) in order),
                             key=lambda p: order[id(mods[p])])
        self.time = {p: cost.time[id(mods[p])] for p in self.blocks}
        self.inputs = {p: cost.inputs[id(mods[p])] for p in self.blocks}
        self.saved = {p: saved.saved.get(id(mods[p]), 0) for p in self.blocks}

    def ranked(self):
        """The blocks, those that free the most bytes per second of recompute first
        (earlier ones first on ties: their activations are held longest)."""
        gain = {p: max(self.saved[p] - self.inputs[p], 0) / max(self.time[p], 1e-12)
                for p in self.blocks}
        return sorted(self.blocks, key=lambda p: -gain[p])
