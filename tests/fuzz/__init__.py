"""Differential fuzzing against PyTorch: op specs, random cases, mismatch classes.

``specs.py`` is the table of ops, ``cases.py`` draws inputs, ``compare.py`` runs a
case in both libraries and names each disagreement, ``deviations.py`` and
``known_bugs.py`` are the registries a mismatch must be covered by, ``report.py``
prints mismatch counts per op and class.
"""
