"""The plan's objects: the candidates' table, the chosen plan, its installation and its
verification against a real step."""

import contextlib

from ..._tensor import Tensor
from ...backend import Device
from .._bytes import format_bytes
from ._install import Choice, install, is_installed
from ._shadow import shadow
from ._step import measure, on_device, train_step

__all__ = ["Candidate", "MemoryPlan", "PlanReport", "inputs_tuple", "dry_run"]


def dry_run(choice, model, optimizer, inputs, loss_fn, where, offload_dir, warm=False):
    """The :class:`Measured` step of ``choice`` on a copy; after a first step that makes
    the optimizer's state unless ``warm`` (the optimizer has it)."""
    twin, opt, xs = shadow(model, optimizer, inputs, where)
    installed = install(choice, twin, opt, offload_dir=offload_dir)
    try:
        if not warm:
            with on_device(where):
                train_step(twin, xs, loss_fn, opt)
        return measure(twin, xs, loss_fn, opt, record=True, where=where, collect=False)
    finally:
        installed.remove()


class Candidate:
    """One row of the plan table: a :class:`Choice`, its predicted ``peak`` and
    ``at_peak`` (bytes per category), its estimated ``seconds`` per step, and whether
    it ``fits`` the budget."""

    def __init__(self, choice, measured, seconds, budget):
        self.choice = choice
        self.peak = measured.peak
        self.at_peak = measured.at_peak
        self.seconds = seconds
        self.fits = measured.peak <= budget
        self.timeline = measured.timeline


class PlanReport:
    """What :meth:`MemoryPlan.verify` measured: ``measured_peak`` and ``predicted_peak``
    (bytes), per category ``measured_at_peak``/``predicted_at_peak``, the measured step's
    ``seconds`` and both ``timelines``."""

    def __init__(self, plan, measured):
        self.plan = plan
        self.measured_peak = measured.peak
        self.predicted_peak = plan.predicted_peak
        self.measured_at_peak = measured.at_peak
        self.predicted_at_peak = plan.chosen.at_peak
        self.seconds = measured.seconds
        self.budget = plan.budget
        self.timelines = {"predicted": plan.chosen.timeline, "measured": measured.timeline}

    @property
    def error(self):
        """(measured - predicted) / predicted."""
        return (self.measured_peak - self.predicted_peak) / self.predicted_peak

    def __str__(self):
        rows = [f"plan: {self.plan.describe()}",
                f"budget {format_bytes(self.budget)}; predicted peak "
                f"{format_bytes(self.predicted_peak)}; measured peak "
                f"{format_bytes(self.measured_peak)} ({self.error:+.2%}); step "
                f"{self.seconds:.3g} s"]
        rows += [f"  {c:<16} predicted {format_bytes(p):>10}   measured "
                 f"{format_bytes(self.measured_at_peak[c]):>10}"
                 for c, p in self.predicted_at_peak.items() if p or self.measured_at_peak[c]]
        return "\n".join(rows)


class MemoryPlan:
    """The planner's answer: ``chosen`` (the fastest :class:`Candidate` predicted to fit),
    ``candidates`` (all of them), ``predicted_peak`` (bytes), ``blocks`` (the module
    paths it may checkpoint). ``apply`` installs the choice, ``remove`` takes it off,
    ``verify`` runs real steps and measures."""

    def __init__(self, budget, candidates, chosen, blocks, step, trace, offload_dir):
        self.budget = budget
        self.candidates = candidates
        self.chosen = chosen
        self.blocks = blocks
        self._step = step  # (model, inputs, loss_fn, optimizer) planned for
        self._trace = trace
        self._offload_dir = offload_dir
        self._installed = None
        self._on = None

    @property
    def predicted_peak(self):
        return self.chosen.peak

    @property
    def choice(self):
        return self.chosen.choice

    @property
    def baseline(self):
        """The candidate that changes nothing ("as is")."""
        return next(c for c in self.candidates if c.choice == Choice())

    def describe(self, candidate=None):
        """The chosen plan (or ``candidate``) in words."""
        return (candidate or self.chosen).choice.describe(len(self.blocks))

    def apply(self, model, optimizer):
        """Install the chosen plan on ``model`` and ``optimizer`` (the planned ones, or
        copies of them); returns this plan."""
        if self._installed is not None:
            raise RuntimeError("this plan is installed already: remove() it first")
        if is_installed(model):
            raise RuntimeError("a memory plan is installed on this model already: "
                               "remove() it first")
        self._installed = install(self.choice, model, optimizer,
                                  offload_dir=self._offload_dir)
        self._on = (model, optimizer)
        return self

    def remove(self):
        """Take the installed plan off (nothing when it is not installed)."""
        if self._installed is not None:
            self._installed.remove()
            self._installed = self._on = None

    def verify(self):
        """Run two real training steps with the plan (installing it on the planned model
        and optimizer if it is not installed) and measure the second, as predicted:
        this trains the model. Returns a :class:`PlanReport`."""
        if self._installed is None:
            self.apply(self._step[0], self._step[3])
        model, optimizer = self._on
        _, inputs, loss_fn, _ = self._step
        train_step(model, inputs, loss_fn, optimizer)
        return PlanReport(self, measure(model, inputs, loss_fn, optimizer, record=True))

    def largest_batch(self, make_batch, *, limit=1 << 20):
        """The largest batch size whose step, with the chosen plan, is predicted to fit
        the budget, and that step's predicted peak: ``make_batch(n)`` returns
        ``(example_inputs, loss_fn)`` for a batch of ``n`` (it runs with the meta device
        as the default, so its tensors cost nothing when planning on meta). A doubling
        then a bisection of dry runs, up to ``limit``; ``(0, None)`` when no batch fits."""
        model, _, _, optimizer = self._step

        def peak(n):
            with Device("meta") if self._trace == "meta" else contextlib.nullcontext():
                inputs, loss_fn = make_batch(n)
            return dry_run(self.choice, model, optimizer, inputs_tuple(inputs), loss_fn,
                           self._trace, self._offload_dir).peak

        best, best_peak, n = 0, None, 1
        while n <= limit:
            p = peak(n)
            if p > self.budget:
                break
            best, best_peak, n = n, p, 2 * n
        low, high = best, min(n, limit + 1)  # best fits; high does not (or is past limit)
        while high - low > 1:
            mid = (low + high) // 2
            p = peak(mid)
            if p <= self.budget:
                low, best_peak = mid, p
            else:
                high = mid
        return low, best_peak

    def table(self):
        """The candidates as text rows, fastest first; ``*`` marks the chosen one."""
        width = max(len(self.describe(c)) for c in self.candidates)
        head = f" {'plan':<{width}} {'peak':>10} {'fits':>5} {'time':>8} {'vs as is':>9}"
        rows = [head, "-" * len(head)]
        base = self.baseline.seconds
        for c in sorted(self.candidates, key=lambda c: (c.seconds, c.peak)):
            rows.append(f"{'*' if c is self.chosen else ' '}{self.describe(c):<{width}} "
                        f"{format_bytes(c.peak):>10} {'yes' if c.fits else 'no':>5} "
                        f"{c.seconds:>7.3g}s {c.seconds / base:>8.2f}x")
        return "\n".join(rows)

    def __str__(self):
        return (f"budget {format_bytes(self.budget)}: {self.describe()}, predicted peak "
                f"{format_bytes(self.predicted_peak)}\n{self.table()}")


def inputs_tuple(example_inputs):
    if isinstance(example_inputs, Tensor):
        return (example_inputs,)
    if isinstance(example_inputs, (tuple, list)):
        return tuple(example_inputs)
    raise TypeError(f"example_inputs must be a Tensor or a tuple of the model's positional "
                    f"arguments, got {type(example_inputs).__name__}")



