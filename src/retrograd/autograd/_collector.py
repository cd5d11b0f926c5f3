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
  times, and promoted, for nothing (5% of w1's time);
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
           "Spacer", "SPACER"]

# Young collections between two of the middle generation while recording: a chain of
# 1e5 of w1's ops (half a million objects) meets about 50 young ones and, at CPython's
# 10, four or five middle ones (benchmarks/deep_chain.py).
RECORDING_MIDDLE_EVERY = 100
# Middle-generation collections between two full ones while recording: a full collection
# still waits for about 1e8 new objects (100 * 100 young collections of 10000), as it did
# at 1000 middle ones of ten young each.
RECORDING_FULL_EVERY = 100
# New container objects between two youngest-generation collections while recording (w1:
# 7.1-7.2 us/op at CPython's 700, 6.7 at 10000 and above, where no collection falls
# inside a step).
RECORDING_YOUNG_EVERY = 10_000


class Spacer:
    """A ``gc.callbacks`` entry that raises the collector's thresholds while nodes are
    recorded and restores them when they are not."""

    def __init__(self, young=RECORDING_YOUNG_EVERY, middle=RECORDING_MIDDLE_EVERY,
                 every=RECORDING_FULL_EVERY):
        self.found = gc.get_threshold()  # the program's thresholds, restored when idle
        self.spaced = (max(self.found[0], young), max(self.found[1], middle),
                       max(self.found[2], every))
        self.raised = False
        self.stopped = False
        self.seen = next(node._seq)  # a node sequence number taken here, not by a node

    def __call__(self, phase, info):
        if phase != "stop" or info["generation"] == 0 or self.stopped:
            return
        if gc.get_threshold() != (self.spaced if self.raised else self.found):
            self.stopped = True  # the program tuned the collector itself
            return
        seq = next(node._seq)
        recording = seq > self.seen + 1  # nodes took sequence numbers in between
        self.seen = seq
        if recording != self.raised:
            gc.set_threshold(*(self.spaced if recording else self.found))
            self.raised = recording


SPACER = Spacer()
gc.callbacks.append(SPACER)
