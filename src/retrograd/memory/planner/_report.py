"""The planner's HTML report: the candidates' table and the chosen plan's predicted
timeline beside the measured one (bytes through the step, with the budget), as one
self-contained page."""

import html

from ..viz import _byte_step, _tick_label, format_bytes

__all__ = ["render"]

_W, _H, _PAD = 900, 320, 70
_STYLE = """body{font:14px system-ui,sans-serif;margin:24px;color:#1d2330;background:#f4f5f7}
table{border-collapse:collapse;background:#fff}td,th{padding:3px 10px;text-align:right;
border-bottom:1px solid #e3e6ec}td:first-child,th:first-child{text-align:left}
tr.chosen{font-weight:600;background:#eaf1fd}tr.over{color:#9aa0ad}svg{background:#fff}
.k{display:inline-block;width:18px;height:3px;vertical-align:middle;margin:0 6px 0 14px}"""
_COLORS = {"predicted": "#2f6fdf", "measured": "#1d9a5b"}


def _path(points, top):
    n = max(len(points) - 1, 1)
    xs = (_PAD + (_W - _PAD - 10) * i / n for i in range(len(points)))
    ys = (_H - 30 - (_H - 50) * v / top for v in points)
    return " ".join(f"{x:.1f},{y:.1f}" for x, y in zip(xs, ys, strict=True))


def _chart(timelines, budget):
    top = max([budget, *(max(t) for t in timelines.values() if t)]) * 1.05
    step, unit = _byte_step(top)
    parts = [f'<svg width="{_W}" height="{_H}" role="img">']
    v = 0
    while v <= top:
        y = _H - 30 - (_H - 50) * v / top
        parts.append(f'<line x1="{_PAD}" x2="{_W - 10}" y1="{y:.1f}" y2="{y:.1f}" '
                     f'stroke="#e3e6ec"/><text x="{_PAD - 6}" y="{y + 4:.1f}" '
                     f'text-anchor="end" font-size="11">{_tick_label(v, unit)}</text>')
        v += step
    y = _H - 30 - (_H - 50) * budget / top
    parts.append(f'<line x1="{_PAD}" x2="{_W - 10}" y1="{y:.1f}" y2="{y:.1f}" stroke="#c2283b" '
                 f'stroke-dasharray="6 4"/><text x="{_W - 12}" y="{y - 5:.1f}" '
                 f'text-anchor="end" font-size="11" fill="#c2283b">budget</text>')
    for name, points in timelines.items():  # predicted wide and pale, measured on top
        if points:
            width, alpha = (4, 0.45) if name == "predicted" else (1.5, 1)
            parts.append(f'<polyline fill="none" stroke="{_COLORS[name]}" stroke-width='
                         f'"{width}" stroke-opacity="{alpha}" points="{_path(points, top)}"/>')
    parts.append(f'<text x="{(_W + _PAD) / 2}" y="{_H - 8}" text-anchor="middle" '
                 f'font-size="11">through the step (allocations and frees) &#8594;</text>')
    return "".join(parts) + "</svg>"


def render(plan, report=None, title="retrograd memory plan"):
    """The page for ``plan`` (a MemoryPlan) and, when given, its verification."""
    rows = []
    base = plan.baseline.seconds
    for c in sorted(plan.candidates, key=lambda c: (c.seconds, c.peak)):
        cls = "chosen" if c is plan.chosen else "" if c.fits else "over"
        rows.append(f'<tr class="{cls}"><td>{html.escape(plan.describe(c))}</td>'
                    f'<td>{format_bytes(c.peak)}</td><td>{"yes" if c.fits else "no"}</td>'
                    f'<td>{c.seconds:.3g} s</td><td>{c.seconds / base:.2f}x</td></tr>')
    timelines = {"predicted": plan.chosen.timeline}
    lines = [f"<p>Budget <b>{format_bytes(plan.budget)}</b>. Chosen: "
             f"<b>{html.escape(plan.describe())}</b>, predicted peak "
             f"<b>{format_bytes(plan.predicted_peak)}</b>.</p>"]
    if report is not None:
        timelines["measured"] = report.timelines["measured"]
        lines.append(f"<p>Measured peak <b>{format_bytes(report.measured_peak)}</b> "
                     f"({report.error:+.2%} from predicted); measured step "
                     f"{report.seconds:.3g} s.</p>")
    keys = "".join(f'<span class="k" style="background:{_COLORS[k]}"></span>{k}'
                   for k in timelines)  # (where the two agree, one line shows)
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>'
            f'{html.escape(title)}</title><style>{_STYLE}</style></head><body>'
            f'<h1>{html.escape(title)}</h1>{"".join(lines)}<p>{keys}</p>'
            f'{_chart(timelines, plan.budget)}<h2>Candidates</h2><table><tr><th>plan</th>'
            f'<th>predicted peak</th><th>fits</th><th>estimated step</th><th>vs as is</th>'
            f'</tr>{"".join(rows)}</table><p>Peaks: parameters, buffers, gradients, '
            f'optimizer state, the batch and what the step allocates, from a dry run on '
            f'the meta device. Step times: estimated from the traced forward, to rank the '
            f'plans.</p></body></html>')
