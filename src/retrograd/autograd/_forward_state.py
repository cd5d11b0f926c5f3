"""Forward AD's per-thread state (the active dual level, and the tangents of saved
outputs), below autograd.node, which reads it when it unpacks a saved output."""

import threading

__all__ = ["state"]


class _State(threading.local):
    level = None  # the active level's token (an object), None outside dual_level
    # (node, output_nr) -> the _fw of that op output, for saved outputs rebuilt in a
    # create_graph backward (forward-over-reverse); emptied when the level exits
    output_tangents = None
    batch = None  # functional.jacobian's forward mode: tangents carry a leading batch dim


state = _State()
