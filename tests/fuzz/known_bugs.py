"""Known open bugs: mismatches with PyTorch that are to be fixed, not kept.

Each entry is a ``registry.KnownBug``: one op, one mismatch class and a predicate on the
case's inputs, with the count measured by ``report.py --cases 180`` over seeds 0-2 (0:
found by the hypothesis run only). The "before" report (main at 66506e9) had 2,136
mismatching cases in 30,420 and 181 entries here; every class since is fixed or a stated
deviation (``deviations.py``). A newly found bug is listed here while its fix is made;
**delete the entry when the fix merges**, and the suite guards it.
"""

KNOWN_BUGS = []
