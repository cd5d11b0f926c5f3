"""The thread-local grad-mode flags, below the Tensor so that ``wrap`` can mark the
tensors made under ``inference_mode`` (``autograd.grad_mode`` holds the API)."""

import threading


class _State(threading.local):
    enabled = True
    inference = False
    multithreading = True  # set_multithreading_enabled: CPU backward uses the caller's thread


state = _State()
