"""A timing result (``Measurement``) and the statement it timed (``TaskSpec``), with
PyTorch's statistics, warnings and printed form."""

import collections
import contextlib
import dataclasses
import math
import textwrap

import numpy

from ...ops.threads import get_num_threads, set_num_threads

__all__ = ["TaskSpec", "Measurement", "select_unit", "unit_to_english", "trim_sigfig",
           "ordered_unique", "set_torch_threads"]

_MAX_SIGNIFICANT_FIGURES = 4
_MIN_CONFIDENCE_INTERVAL = 25e-9  # 25 ns
_IQR_WARN_THRESHOLD = 0.1
_IQR_GROSS_WARN_THRESHOLD = 0.25


@dataclasses.dataclass(frozen=True, repr=False)
class TaskSpec:
    """What a Timer times, and the labels ``Compare`` sorts it by."""

    stmt: str
    setup: str
    global_setup: str = ""
    label: str | None = None
    sub_label: str | None = None
    description: str | None = None
    env: str | None = None
    num_threads: int = 1

    @property
    def title(self):
        sub = f": {self.sub_label}" if self.sub_label else ""
        if self.label is not None:
            return self.label + sub
        if "\n" not in self.stmt:
            return self.stmt + sub
        return (f"stmt:{f' ({self.sub_label})' if self.sub_label else ''}\n"
                f"{textwrap.indent(self.stmt, '  ')}")

    def setup_str(self):
        if self.setup in ("pass", ""):
            return ""
        if "\n" in self.setup:
            return f"setup:\n{textwrap.indent(self.setup, '  ')}"
        return f"setup: {self.setup}"

    def summarize(self):
        sections = [self.title, self.description or "", self.setup_str()]
        return "\n".join(f"{s}\n" if "\n" in s else s for s in sections if s)


_TASKSPEC_FIELDS = tuple(f.name for f in dataclasses.fields(TaskSpec))


@dataclasses.dataclass(repr=False)
class Measurement:
    """``raw_times`` of blocks of ``number_per_run`` runs each; statistics per run.

    >>> m = Measurement(10, [1e-5, 2e-5], TaskSpec("x + 1", "pass"))
    >>> m.median
    1.5e-06
    """

    number_per_run: int
    raw_times: list
    task_spec: TaskSpec
    metadata: dict | None = None  # the user's payload

    def __getattr__(self, name):
        if name in _TASKSPEC_FIELDS:
            return getattr(self.task_spec, name)
        raise AttributeError(f"'Measurement' object has no attribute '{name}'")

    @property
    def times(self):
        return [t / self.number_per_run for t in self.raw_times]

    @property
    def _stats(self):
        """Sorted times, median, mean, 25th and 75th percentiles (linear interpolation,
        as torch.quantile), recomputed only when ``raw_times`` changed."""
        key = (self.number_per_run, tuple(self.raw_times))
        cached = self.__dict__.get("_cache")
        if cached is None or cached[0] != key:
            times = numpy.sort(numpy.array(self.times, dtype=numpy.float64))
            q25, median, q75 = numpy.quantile(times, [0.25, 0.5, 0.75])
            cached = (key, (tuple(times.tolist()), float(median), float(times.mean()),
                            float(q25), float(q75)))
            self.__dict__["_cache"] = cached
        return cached[1]

    @property
    def median(self):
        return self._stats[1]

    @property
    def mean(self):
        return self._stats[2]

    @property
    def iqr(self):
        return self._stats[4] - self._stats[3]

    @property
    def significant_figures(self):
        """Digits the interquartile spread supports (1 to 4), from a 90% confidence
        interval of the median; ``Compare`` trims to it."""
        times = self._stats[0]
        n = len(times)
        middle = times[n // 4:math.ceil(3 * n / 4)]
        ci = max(1.645 * float(numpy.std(middle)) / math.sqrt(len(middle)),
                 _MIN_CONFIDENCE_INTERVAL)
        return min(max(math.floor(math.log10(self.median / ci)), 1), _MAX_SIGNIFICANT_FIGURES)

    @property
    def _warnings(self):
        if not self.raw_times:
            return ()
        for threshold, why in ((_IQR_GROSS_WARN_THRESHOLD,
                                "This suggests significant environmental influence."),
                               (_IQR_WARN_THRESHOLD, "This could indicate system fluctuation.")):
            if not self.meets_confidence(threshold):
                return (f"  WARNING: Interquartile range is {self.iqr / self.median * 100:.1f}% "
                        f"of the median measurement.\n           {why}",)
        return ()

    @property
    def has_warnings(self):
        return bool(self._warnings)

    def meets_confidence(self, threshold=_IQR_WARN_THRESHOLD):
        return self.iqr / self.median < threshold

    @property
    def title(self):
        return self.task_spec.title

    @property
    def as_row_name(self):
        return self.sub_label or self.stmt or "[Unknown]"

    def __repr__(self):
        n = len(self._stats[0])
        unit, scale = select_unit(self.median)
        _, _, _, p25, p75 = self._stats
        threads = f"{self.num_threads} thread{'s' if self.num_threads > 1 else ''}"
        lines = [object.__repr__(self), self.task_spec.summarize(),
                 f"  {'Median: ' if n > 1 else ''}{self.median / scale:.2f} {unit}"]
        if n >= 4:
            lines.append(f"  IQR:    {self.iqr / scale:.2f} {unit} ({p25 / scale:.2f} to "
                         f"{p75 / scale:.2f})")
        lines.append(f"  {n} measurement{'s' if n > 1 else ''}, {self.number_per_run} runs "
                     f"{'per measurement,' if n > 1 else ','} {threads}")
        lines.extend(self._warnings)
        return "\n".join(lines).strip()

    @staticmethod
    def merge(measurements):
        """One Measurement per TaskSpec, holding all its per-run times."""
        grouped = collections.defaultdict(list)
        for m in measurements:
            grouped[m.task_spec].extend(m.times)
        return [Measurement(1, times, spec) for spec, times in grouped.items()]


def select_unit(t):
    """The unit that puts ``t`` seconds in [1, 1000): (name, seconds per unit)."""
    unit = {-3: "ns", -2: "us", -1: "ms"}.get(int(math.log10(t) // 3), "s")
    return unit, {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1}[unit]


def unit_to_english(u):
    return {"ns": "nanosecond", "us": "microsecond", "ms": "millisecond", "s": "second"}[u]


def trim_sigfig(x, n):
    """``x`` rounded to ``n`` significant figures (3.14159, 2 -> 3.1)."""
    if n != int(n):
        raise AssertionError("Number of significant figures must be an integer")
    scale = 10 ** (math.ceil(math.log10(abs(x))) - n)
    return float(numpy.round(x / scale) * scale)


def ordered_unique(elements):
    return list(dict.fromkeys(elements))


@contextlib.contextmanager
def set_torch_threads(n):
    """Run the block with ``n`` intra-op threads (NumPy's BLAS pool)."""
    prior = get_num_threads()
    if n == prior:
        yield
        return
    try:
        set_num_threads(n)
        yield
    finally:
        set_num_threads(prior)
