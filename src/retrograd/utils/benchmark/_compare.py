"""``Compare``: many Measurements as PyTorch's table: one table per label, a row per
(threads, env, sub_label), a column per description, medians in one unit."""

import enum
import math

from ._measurement import Measurement, ordered_unique, select_unit, trim_sigfig, \
    unit_to_english

__all__ = ["Colorize", "Compare"]

BEST = "\033[92m"
GOOD = "\033[34m"
BAD = "\033[2m\033[91m"
VERY_BAD = "\033[31m"
BOLD = "\033[1m"
TERMINATE = "\033[0m"


class Colorize(enum.Enum):
    NONE = "none"
    COLUMNWISE = "columnwise"
    ROWWISE = "rowwise"


class Compare:
    """Print ``results`` (Measurements) as tables.

    >>> Compare([Timer("x + 1", globals={"x": 1}, label="add").timeit(10)]).print()
    """

    def __init__(self, results):
        self._results = []
        self.extend_results(results)
        self._trim_significant_figures = False
        self._colorize = Colorize.NONE
        self._highlight_warnings = False

    def __str__(self):
        return "\n".join(self._render())

    def extend_results(self, results):
        for r in results:
            if not isinstance(r, Measurement):
                raise ValueError(f"Expected an instance of `Measurement`, got {type(r)} "
                                 f"instead.")
        self._results.extend(results)

    def trim_significant_figures(self):
        self._trim_significant_figures = True

    def colorize(self, rowwise=False):
        self._colorize = Colorize.ROWWISE if rowwise else Colorize.COLUMNWISE

    def highlight_warnings(self):
        self._highlight_warnings = True

    def print(self):
        print(str(self))

    def _render(self):
        by_label = {}
        for r in Measurement.merge(self._results):
            by_label.setdefault(r.label, []).append(r)
        return [_Table(group, self._colorize, self._trim_significant_figures,
                       self._highlight_warnings).render() for group in by_label.values()]


def _row_key(m):
    return m.num_threads, m.env, m.as_row_name


class _Table:
    """One label's results laid out: ``cells[row][column]`` is a Measurement or None."""

    def __init__(self, results, colorize, trim, highlight):
        self.results, self.colorize, self.trim = results, colorize, trim
        self.highlight = highlight and any(r.has_warnings for r in results)
        self.label = results[0].label
        self.unit, self.scale = select_unit(min(r.median for r in results))
        self.rows = sorted(ordered_unique(_row_key(r) for r in results),
                           key=lambda k: k[:2])  # stable: keeps the statements' order
        self.cols = ordered_unique(r.description for r in results)
        self.cells = [[None] * len(self.cols) for _ in self.rows]
        for r in results:
            self.cells[self.rows.index(_row_key(r))][self.cols.index(r.description)] = r
        self.formats = [self._format(j) for j in range(len(self.cols))]

    def _format(self, j):
        """The column's number format: width for its largest value, decimals its least
        precise value supports (when trimming) or one."""
        col = [row[j] for row in self.cells if row[j] is not None]
        digits = [math.ceil(math.log10(m.median / self.scale)) for m in col]
        decimals = (min(max(m.significant_figures - d, 0) for m, d in zip(col, digits,
                                                                           strict=True))
                    if self.trim else 1)
        width = max(digits) + decimals + (1 if decimals else 0)
        return f"{{:>{width}.{decimals}f}}{{:>{7 if self.highlight else 0}}}"

    def _cell(self, m, j):
        if m is None:
            return " " * len(self.formats[j].format(1, ""))
        value = m.median / self.scale
        if self.trim:
            value = trim_sigfig(value, m.significant_figures)
        spread = f" (! {m.iqr / m.median * 100:.0f}%)" if self.highlight and m.has_warnings \
            else ""
        return self.formats[j].format(value, spread)

    def _best(self, i, j):
        """The median a cell is colored against: its row's or its thread group's column."""
        if self.colorize == Colorize.ROWWISE:
            return min(m.median for m in self.cells[i] if m is not None)
        group = [m for k, row in enumerate(self.cells) if self.rows[k][0] == self.rows[i][0]
                 for m in (row[j],) if m is not None]
        return min(m.median for m in group)

    def render(self):
        envs = {r.env for r in self.results}
        render_env = len(envs) > 1
        env_len = max(len(e) for e in envs) if render_env else 0
        text = [["", *[c if c is not None else "" for c in self.cols]]]
        prior_threads = prior_env = None
        for i, (threads, env, name) in enumerate(self.rows):
            if threads != prior_threads:  # each thread group names its envs again
                prior_threads, prior_env = threads, None
            shown = f"({env})" if render_env and env != prior_env else ""
            text.append(["  " + shown.ljust(env_len + 4) + name,
                         *[self._cell(m, j) for j, m in enumerate(self.cells[i])]])
            prior_env = env
        widths = [max(len(row[k]) for row in text) for k in range(len(text[0]))]
        header = "  |  ".join(s.center(w) for s, w in zip(text[0], widths, strict=True))
        lines, prior_threads = [header], None
        for i, row in enumerate(text[1:]):
            threads = self.rows[i][0]
            if threads != prior_threads:
                lines.append(f"{threads} threads: ".ljust(len(header), "-"))
                prior_threads = threads
            cells = [row[0].ljust(widths[0])]
            for j, (s, w) in enumerate(zip(row[1:], widths[1:], strict=True)):
                s, m = s.center(w), self.cells[i][j]
                if self.colorize != Colorize.NONE and m is not None:
                    s = _color(s, m.median, self._best(i, j))
                cells.append(s)
            lines.append("  |  ".join(cells))
        title = f" {self.label or ''} ".center(len(header) - 2, "-")
        warn = ("(! XX%) Measurement has high variance, where XX is the IQR / median * 100.\n"
                if self.highlight else "")
        return (f"[{title}]\n" + "\n".join(lines) + "\n\nTimes are in "
                f"{unit_to_english(self.unit)}s ({self.unit}).\n{warn}")


def _color(segment, value, best):
    if value <= best * 1.01 or value <= best + 100e-9:
        return BEST + BOLD + segment + TERMINATE * 2
    if value <= best * 1.1:
        return GOOD + BOLD + segment + TERMINATE * 2
    if value >= best * 5:
        return VERY_BAD + BOLD + segment + TERMINATE * 2
    if value >= best * 2:
        return BAD + segment + TERMINATE * 2
    return segment
