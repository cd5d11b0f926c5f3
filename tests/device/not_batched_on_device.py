"""Op-database entries that do not batch under vmap on the emulated device as on
the CPU, each with why (regenerate with ``PYTHONPATH=src:tests python
tests/device/emulated_vmap_run.py --write``; a test fails when a listed entry
starts to pass, so the list only shrinks)."""

NOT_BATCHED_ON_DEVICE = {
    'pack_padded_sequence':
        "nn/utils/rnn.py pack_padded_sequence: RuntimeError: 'lengths' argument should be a 1D ",
    'to': 'by design: a sample moves to the CPU (to("cpu", float64)), as on the CPU without vmap',
    'pad_packed_sequence': 'AssertionError: sample 0 dim 0 output 1 is on cpu, not on the device',
}
