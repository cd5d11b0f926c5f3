"""Mismatch report: N random cases per op against PyTorch, counted per op and per class.

    PYTHONPATH=src python tests/fuzz/report.py --cases 300 [--ops cross_entropy std]
        [--seed 0] [--out report.md] [--uncovered]

Prints a Markdown table of mismatching cases per op, then one row per mismatch class
(its count, the ops it occurs in, and whether a registry covers it), then one
reproducible example per class: the inputs as torch code, and what each library did.
``--uncovered`` counts only mismatches that neither registry covers (what the fuzz
tests would fail on).
"""

import argparse
import collections
import pathlib
import sys
import time
import zlib

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from fuzz import cases, compare, registry, specs  # noqa: E402


def case_for(name, k, seed=0):
    """The ``k``-th random case of op ``name`` (the same on every run with ``seed``)."""
    s = zlib.crc32(f"{name}/{k}/{seed}".encode())
    return cases.Case(name, *specs.SPECS[name].make(cases.RandomDraw(s)), s)


def collect(ops, n, seed=0, uncovered=False):
    """{(op, class): [count, first (case, mismatch)]} and {op: mismatching cases}."""
    found, per_op = {}, collections.Counter()
    for name in ops:
        for k in range(n):
            case = case_for(name, k, seed)
            ms = compare.compare(specs.SPECS[name], case, torch)
            if uncovered:
                ms = [m for m in ms if registry.covering(case, m) is None]
            per_op[name] += bool(ms)
            for m in ms:
                entry = found.setdefault((name, m.cls), [0, (case, m)])
                entry[0] += 1
    return found, per_op


def render(found, per_op, ops, n, seconds):
    total = sum(v[0] for v in found.values())
    out = [f"# Differential fuzz report: {len(ops)} ops x {n} cases = {len(ops) * n} cases "
           f"({seconds:.0f} s)", "",
           f"Mismatching cases: {sum(per_op.values())}; mismatches (case, class): {total}; "
           f"classes: {len({c for _, c in found})}", "", "## Per op", "",
           "| op | mismatching cases | classes |", "|---|---|---|"]
    for name in sorted(per_op, key=lambda o: -per_op[o]):
        if per_op[name]:
            classes = sorted(c for o, c in found if o == name)
            out.append(f"| {name} | {per_op[name]} | {'; '.join(classes)} |")
    by_class = collections.defaultdict(list)
    for (name, cls), (count, example) in found.items():
        by_class[cls].append((count, name, example))
    out += ["", "## Per class", "", "| class | mismatches | ops (count) | covered by |",
            "|---|---|---|---|"]
    order = sorted(by_class, key=lambda c: -sum(x[0] for x in by_class[c]))
    for cls in order:
        rows = sorted(by_class[cls], key=lambda x: (-x[0], x[1]))
        cover = sorted({_cover(ex) for _, _, ex in rows})
        out.append(f"| {cls} | {sum(x[0] for x in rows)} | "
                   f"{', '.join(f'{o} ({k})' for k, o, _ in rows)} | {', '.join(cover)} |")
    out += ["", "## One example per class", ""]
    for cls in order:
        count, name, (case, m) = max(by_class[cls], key=lambda x: x[0])
        out += [f"### {cls}", "", f"`{case!r}`: {m.detail[:400]}", "", "```python",
                specs.reproducer(case), "```", ""]
    return "\n".join(out)


def _cover(example):
    entry = registry.covering(*example)
    return "-" if entry is None else type(entry).__name__


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cases", type=int, default=100, help="random cases per op")
    p.add_argument("--ops", nargs="*", default=sorted(specs.SPECS), help="ops (default: all)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", help="also write the report to this file")
    p.add_argument("--uncovered", action="store_true",
                   help="only mismatches that no registry entry covers")
    a = p.parse_args(argv)
    unknown = set(a.ops) - set(specs.SPECS)
    if unknown:
        p.error(f"unknown ops: {sorted(unknown)}")
    t0 = time.perf_counter()
    found, per_op = collect(a.ops, a.cases, a.seed, a.uncovered)
    text = render(found, per_op, a.ops, a.cases, time.perf_counter() - t0)
    print(text)
    if a.out:
        pathlib.Path(a.out).write_text(text + "\n")


if __name__ == "__main__":
    main()
