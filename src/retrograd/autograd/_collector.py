"""Recording a graph spaces out CPython's full cyclic collections.

A recorded graph is a few long-lived Python objects per op (the node, its edges, its
saved tensors), and reference counting alone frees them: a training step leaves no
cyclic garbage (tests/autograd/test_collector.py checks this). CPython's collector
nonetheless promotes them into its oldest generation and, every ten younger collections
once that generation has grown by a quarter, runs a full collection that scans every
long-lived object, the imported modules included. So a chain of 1e4 ops recorded at
about 1.6x the per-op cost of 1e3 ops (4-5x with PyTorch's modules imported too), and a
training loop paid a whole-heap scan every few dozen steps. PyTorch's graph lives in
C++, where the collector never looks.

While nodes are being recorded, each generation's collection is therefore spaced out:
- a young collection waits for ``RECORDING_YOUNG_EVERY`` new container objects instead
  of 700: a step's graph is then recorded and freed between two of them (w1's 1000-op
  step is some 4500 objects), where at 700 each step's graph was scanned about six
  times, and promoted, for nothing (5% of w1's time). Each young collection that finds
  no cyclic garbage while nodes are recorded doubles that wait, up to
  ``RECORDING_YOUNG_MOST``: a chain of 1e4 ops (some 50000 objects) is then recorded
  with none, where at 10000 its objects were all scanned once (0.18-0.22 us per op, 7%
  of its recording). One that finds garbage, and each backward pass, bring the wait
  back to ``RECORDING_YOUNG_EVERY``: a training loop's steps, and a program that makes
  reference cycles, have its garbage collected as often as before (a doubled wait kept
  across a loop's steps let cycles that each held a 256 KiB array pile up 11x higher);
- a middle-generation collection waits for ``RECORDING_MIDDLE_EVERY`` young ones
  instead of ten: what a young collection promotes is mostly a graph still being
  recorded, and rescanning it there (cold in the cache, at two to three times a young
  scan's cost per object) made the collector's share of a chain's recording grow with
  the chain (0.3 us per op at 1e4 ops, 0.7-0.9 at 1e5); deferred, most of it is freed
  before the middle generation is scanned;
- a full collection waits for ``RECORDING_FULL_EVERY`` middle ones instead of ten.
Once a stretch between two collections records no node, the thresholds found at import
come back. ``gc.collect()`` runs as always. If the program sets its own
thresholds, they stand: the spacer then leaves the collector alone for good.
"""

import gc

from . import node

__all__ = ["RECORDING_FULL_EVERY", "RECORDING_MIDDLE_EVERY", "RECORDING_YOUNG_EVERY",
           "RECORDING_YOUNG_MOST", "Spacer", "SPACER", "backward_ran"]

# Young collections between two of the middle generation while recording: a chain of
# 1e5 of w1's ops (half a million objects) meets about 50 young ones and, at CPython's
# 10, four or five middle ones (benchmarks/deep_chain.py).
RECORDING_MIDDLE_EVERY = 100
# Middle-generation collections between two full ones while recording: a full collection
# still waits for at least 1e8 new objects (100 * 100 young collections of 10000 or
# more), as it did at 1000 middle ones of ten young each.
RECORDING_FULL_EVERY = 100
# New container objects between two youngest-generation collections while recording (w1:
# 7.1-7.2 us/op at CPython's 700, 6.7 at 10000 and above, where no collection falls
# inside a step).
RECORDING_YOUNG_EVERY = 10_000
# The most new container objects a young collection waits for while recording, after
# young collections that found no cyclic garbage: above a 1e4-op chain's (some 50000
# objects: w1's ops make 3 to 7 each), and a bound on how much garbage a program that
# starts making cycles can leave for the one that finds it.
RECORDING_YOUNG_MOST = 1 << 17


class Spacer:
    """A ``gc.callbacks`` entry that raises the collector's thresholds while nodes are
    recorded and restores them when they are not."""

    def __init__(self, young=RECORDING_YOUNG_EVERY, middle=RECORDING_MIDDLE_EVERY,
                 every=RECORDING_FULL_EVERY, most=RECORDING_YOUNG_MOST):
        self.found = gc.get_threshold()  # the program's thresholds, restored when idle
        self.young = max(self.found[0], young)  # the young wait a recording starts from
        self.most = max(self.young, most)
        self.spaced = (self.young, max(self.found[1], middle), max(self.found[2], every))
        self.raised = False
        self.stopped = False
        self.seen = next(node._seq)  # a node sequence number taken here, not by a node

    def __call__(self, phase, info):
        if phase != "stop" or self.stopped or self._tuned():
            return
        seq = next(node._seq)
        recording = seq > self.seen + 1  # nodes took sequence numbers in between
        self.seen = seq
        if not recording:
            if self.raised:  # idle since the last collection: the program's thresholds
                self.spaced = (self.young, *self.spaced[1:])
                gc.set_threshold(*self.found)
                self.raised = False
        elif info["generation"] != 0:
            if not self.raised:
                gc.set_threshold(*self.spaced)
                self.raised = True
        elif self.raised:  # twice the wait after a young collection that found no garbage
            self._wait(self.young if info["collected"] else min(2 * self.spaced[0],
                                                                 self.most))

    def backward_ran(self):
        """After a backward pass (which frees a training step's graph): the young wait
        back to ``young``, so that a training loop's garbage waits no longer than before."""
        if self.raised and self.spaced[0] != self.young and not self.stopped \
                and not self._tuned():
            self._wait(self.young)

    def _wait(self, young):
        if young != self.spaced[0]:
            self.spaced = (young, *self.spaced[1:])
            gc.set_threshold(*self.spaced)

    def _tuned(self):
        """Whether the program has set thresholds of its own: the spacer then stops. One
        that puts back thresholds it read from the spacer (a young wait of its doubling)
        leaves it running, raised."""
        now = gc.get_threshold()
        if now[1:] == self.spaced[1:] and now[0] in self._waits():
            self.spaced, self.raised = now, True
        elif now != (self.spaced if self.raised else self.found):
            self.stopped = True
        return self.stopped

    def _waits(self):
        wait = self.young
        while wait < self.most:
            yield wait
            wait *= 2
        yield self.most


def backward_ran():
    """The engine's call after each backward pass (:meth:`Spacer.backward_ran`)."""
    SPACER.backward_ran()


SPACER = Spacer()
gc.callbacks.append(SPACER)
