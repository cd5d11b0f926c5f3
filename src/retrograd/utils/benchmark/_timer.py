"""``Timer``: time a Python statement as ``torch.utils.benchmark.Timer`` does (timeit
underneath; blocks sized so the timer's own overhead is negligible)."""

import enum
import statistics
import textwrap
import timeit

import retrograd

from ._measurement import Measurement, TaskSpec, set_torch_threads

__all__ = ["Timer", "timer", "Language"]

timer = timeit.default_timer  # no device to synchronize with on the CPU


class Language(enum.Enum):
    PYTHON = 0
    CPP = 1


class Timer:
    """Time ``stmt`` after running ``setup``, with ``globals`` (and ``torch``, bound to
    retrograd) in scope.

    >>> m = Timer("x + 1", globals={"x": retrograd.ones(8)}).timeit(100)
    >>> m.number_per_run
    100
    """

    def __init__(self, stmt="pass", setup="pass", global_setup="", timer=timer,
                 globals=None, label=None, sub_label=None, description=None, env=None,
                 num_threads=1, language=Language.PYTHON):
        if not isinstance(stmt, str):
            raise ValueError("Currently only a `str` stmt is supported.")
        if language in (Language.CPP, "cpp", "c++"):
            raise NotImplementedError("retrograd has no C++ API: only Python statements can "
                                      "be timed")
        if language not in (Language.PYTHON, "py", "python"):
            raise ValueError(f"Invalid language `{language}`.")
        if global_setup:
            raise ValueError(f"global_setup is C++ only, got `{global_setup}`. Most likely "
                             f"this code can simply be moved to `setup`.")
        self._globals = dict(globals or {})
        self._globals.setdefault("torch", retrograd)
        stmt, setup = _clean(stmt), _clean(setup)
        self._timer = timeit.Timer(stmt=stmt, setup=setup, timer=timer, globals=self._globals)
        self._task_spec = TaskSpec(stmt=stmt, setup=setup, global_setup=global_setup,
                                   label=label, sub_label=sub_label, description=description,
                                   env=env, num_threads=num_threads)

    def _timeit(self, number):
        return max(self._timer.timeit(number), 1e-9)

    def timeit(self, number=1000000):
        """One block of ``number`` runs, after a warm-up of ``number // 100``."""
        with set_torch_threads(self._task_spec.num_threads):
            self._timeit(max(int(number // 100), 2))
            return Measurement(number, [self._timeit(number)], self._task_spec)

    def repeat(self, repeat=-1, number=-1):
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def autorange(self, callback=None):
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def _measurement_loop(self, number, stop, min_run_time, max_run_time=None,
                          callback=None):
        """Time blocks until ``min_run_time`` has passed and ``stop(times)`` agrees (or
        ``max_run_time`` has passed)."""
        total, times = 0.0, []
        with set_torch_threads(self._task_spec.num_threads):
            while True:
                t = self._timeit(number)
                times.append(t)
                total += t
                if callback:
                    callback(number, t)
                if (total >= min_run_time and stop(times)) or \
                        (max_run_time and total > max_run_time):
                    return times

    def _estimate_block_size(self, min_run_time):
        """Runs per block: grown tenfold until the timer's overhead is under 0.01% of a
        block and a block takes a thousandth of ``min_run_time``."""
        with set_torch_threads(self._task_spec.num_threads):
            overhead = statistics.median(self._timeit(0) for _ in range(5))
            number = 1
            while True:
                taken = self._timeit(number)
                if overhead / taken <= 1e-4 and taken >= min_run_time / 1000:
                    break
                if taken > min_run_time or number * 10 > 2147483647:
                    break
                number *= 10
        return number

    def blocked_autorange(self, callback=None, min_run_time=0.2):
        """Blocks of a measured size, for at least ``min_run_time`` seconds."""
        number = self._estimate_block_size(min_run_time)
        times = self._measurement_loop(number, lambda times: True, min_run_time,
                                       callback=callback)
        return Measurement(number, times, self._task_spec)

    def adaptive_autorange(self, threshold=0.1, *, min_run_time=0.01, max_run_time=10.0,
                           callback=None):
        """Blocks until the interquartile range is under ``threshold`` of the median (or
        ``max_run_time`` has passed)."""
        number = self._estimate_block_size(min_run_time=0.05)

        def stop(times):
            return len(times) > 3 and Measurement(number, times, self._task_spec) \
                .meets_confidence(threshold=threshold)
        times = self._measurement_loop(number, stop, min_run_time, max_run_time,
                                       callback=callback)
        return Measurement(number, times, self._task_spec)


def _clean(code):
    """Dedented, without a leading newline or trailing space, as PyTorch stores it."""
    code = textwrap.dedent(code)
    return (code[1:] if code.startswith("\n") else code).rstrip()
