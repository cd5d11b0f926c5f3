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

While nodes are being recorded, a full collection therefore waits for
``RECORDING_FULL_EVERY`` younger collections instead of ten, and a youngest-generation
collection for ``RECORDING_YOUNG_EVERY`` new container objects instead of 700: a step's
graph is then recorded and freed between two of them (w1's 1000-op step is some 4500
objects), where at 700 each step's graph was scanned about six times, and promoted, for
nothing (5% of w1's time). Once a stretch between two older collections records no
node, the thresholds found at import come back. ``gc.collect()`` runs as always. If the
program sets its own thresholds, they stand: the spacer then leaves the collector alone
for good.
"""

import gc

from . import node

__all__ = ["RECORDING_FULL_EVERY", "RECORDING_YOUNG_EVERY", "Spacer", "SPACER"]

# Younger (generation-1) collections between two full ones while recording. A chain of
# 1e5 of w1's ops takes about 95 of them (benchmarks/deep_chain.py), so at CPython's 10
# it met several full collections and at 100 still one.
RECORDING_FULL_EVERY = 1000
# New container objects between two youngest-generation collections while recording (w1:
# 7.1-7.2 us/op at CPython's 700, 6.7 at 10000 and above, where no collection falls
# inside a step).
RECORDING_YOUNG_EVERY = 10_000


class Spacer:
    """A ``gc.callbacks`` entry that raises the collector's first and third thresholds
    while nodes are recorded and restores them when they are not."""

    def __init__(self, every=RECORDING_FULL_EVERY, young=RECORDING_YOUNG_EVERY):
        self.found = gc.get_threshold()  # the program's thresholds, restored when idle
        self.spaced = (max(self.found[0], young), self.found[1], max(self.found[2], every))
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
