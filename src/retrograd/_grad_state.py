"""The thread-local grad-mode flags, below the Tensor so that ``wrap`` can mark the
tensors made under ``inference_mode`` (``autograd.grad_mode`` holds the API)."""

import threading


class _State(threading.local):
    enabled = True
    inference = False
    multithreading = True  # set_multithreading_enabled: CPU backward uses the caller's thread


state = _State()

# How many threads are inside inference_mode: ``wrap`` reads this plain global, and the
# slower thread-local flag only when it is nonzero.
inference_threads = 0
_lock = threading.Lock()


def set_inference(flag):
    """Set this thread's inference flag (and the count of threads that have it)."""
    global inference_threads
    if flag != state.inference:
        with _lock:
            inference_threads += 1 if flag else -1
        state.inference = flag
