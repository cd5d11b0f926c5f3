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
  no cyclic garbage doubles that wait, up to ``RECORDING_YOUNG_MOST``: a chain of 1e4
  ops (some 50000 objects) is then recorded with none, where at 10000 its objects were
  all scanned once (0.18-0.22 us per op, 7% of its recording). One that finds garbage
  brings the wait back to ``RECORDING_YOUNG_EVERY``: a program that makes reference
  cycles has them collected as often as before, and one that makes none waits longer
  only for collections that would find nothing;
- a middle-generation collection waits for ``RECORDING_MIDDLE_EVERY`` young ones
  instead of ten: what a young collection promotes is mostly a graph still being
  recorded, and rescanning it there (cold in the cache, at two to three times a young
  scan's cost per object) made the collector's share of a chain's recording grow with
  the chain (0.3 us per op at 1e4 ops, 0.7-0.9 at 1e5); deferred, most of it is freed
  before the middle generation is scanned;
- a full collection waits for ``RECORDING_FULL_EVERY`` middle ones instead of ten.
Once a stretch between two older collections records no node, the thresholds found at
import come back. ``gc.collect()`` runs as always. If the program sets its own
thresholds, they stand: the spacer then leaves the collector alone for good.
"""

import gc

from . import node

__all__ = ["RECORDING_FULL_EVERY", "RECORDING_MIDDLE_EVERY", "RECORDING_YOUNG_EVERY",
           "RECORDING_YOUNG_MOST", "Spacer", "SPACER"]

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
        self.young = max(self.found[0], young)  # the young wait after garbage was found
        self.most = max(self.young, most)
        self.spaced = (self.young, max(self.found[1], middle), max(self.found[2], every))
        self.raised = False
        self.stopped = False
        self.seen = next(node._seq)  # a node sequence number taken here, not by a node

    def __call__(self, phase, info):
        if phase != "stop" or self.stopped:
            return
        if info["generation"] == 0:
            self._waited(info["collected"])
            return
        if self._tuned():
            return
        seq = next(node._seq)
        recording = seq > self.seen + 1  # nodes took sequence numbers in between
        self.seen = seq
        if recording != self.raised:
            gc.set_threshold(*(self.spaced if recording else self.found))
            self.raised = recording

    def _waited(self, collected):
        """After a young collection: the young wait while recording doubles if it found
        no garbage (up to ``most``), and falls back to ``young`` if it found some."""
        wait = self.young if collected else min(2 * self.spaced[0], self.most)
        if wait == self.spaced[0] or not collected and not self.raised:
            return  # (idle, a collection without garbage tells nothing of the recording)
        if self.raised and self._tuned():
            return
        self.spaced = (wait, *self.spaced[1:])
        if self.raised:
            gc.set_threshold(*self.spaced)

    def _tuned(self):
        """Whether the program has set thresholds of its own: the spacer then stops."""
        if gc.get_threshold() != (self.spaced if self.raised else self.found):
            self.stopped = True
        return self.stopped


SPACER = Spacer()
gc.callbacks.append(SPACER)
