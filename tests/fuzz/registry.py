"""The two registries a mismatch can be covered by, and the lookup.

``deviations.DEVIATIONS``: deliberate differences from PyTorch, each naming the
section of ``docs/deviations.md`` that gives its reason. ``known_bugs.KNOWN_BUGS``:
open bugs, listed so the suite is green while fixes land; delete an entry when its
fix merges, and the suite guards the fix. Entries are narrow: one op (or a few
named ops), one mismatch class, and a predicate on the case's inputs.
"""

import dataclasses


def _always(case):
    return True


@dataclasses.dataclass(frozen=True)
class Deviation:
    section: str        # a "## " heading of docs/deviations.md
    ops: tuple          # op names from specs.SPECS
    cls: str            # the mismatch class (compare.Mismatch.cls)
    when: object = _always  # case -> bool

    def covers(self, case, mismatch):
        return case.op in self.ops and mismatch.cls == self.cls and self.when(case)


@dataclasses.dataclass(frozen=True)
class KnownBug:
    op: str
    cls: str
    when: object        # case -> bool
    count: int          # mismatches in the "before" report (300 cases per op, seed 0)

    def covers(self, case, mismatch):
        return case.op == self.op and mismatch.cls == self.cls and self.when(case)


def covering(case, mismatch):
    """The first registry entry that covers ``mismatch`` on ``case``, or None."""
    from .deviations import DEVIATIONS
    from .known_bugs import KNOWN_BUGS
    return next((e for e in DEVIATIONS + KNOWN_BUGS if e.covers(case, mismatch)), None)
