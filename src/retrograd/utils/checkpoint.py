"""Activation checkpointing (``torch.utils.checkpoint``): trade compute for memory by
keeping a region's inputs instead of what its ops save, and running it again in backward.

Two forms, as PyTorch's:

- ``use_reentrant=False`` (recommended): saved-tensor hooks (``_checkpoint_frame``).
  The region runs once, with a placeholder saved for each tensor; the first backward
  that needs one reruns the region up to the last tensor needed. Works with
  ``autograd.grad``, keyword arguments, inputs that do not require grad, nested
  checkpoints and ``save_on_cpu``/``save_on_disk``; ``context_fn`` takes selective
  checkpointing (``create_selective_checkpoint_contexts``).
- ``use_reentrant=True`` (PyTorch's default when ``use_reentrant`` is not given, with a
  warning): an ``autograd.Function`` whose backward reruns the region and runs a nested
  backward through it. It needs an input that requires grad and refuses
  ``autograd.grad`` and ``backward(inputs=...)``.

Either way the RNG state is restored for the rerun, so dropout draws the same mask.

>>> out = checkpoint(block, x, use_reentrant=False)
>>> out = checkpoint_sequential(model, 4, x, use_reentrant=False)
"""

import contextlib
import warnings

from .. import _random
from .._tensor import Tensor
from ..autograd import backward as _autograd_backward
from ..autograd import grad_mode
from ..autograd.engine import current_graph_task
from ..autograd.function import Function
from ..nn.modules.container import Sequential
from . import _checkpoint_sites as sites
from ._checkpoint_frame import DETERMINISM_CHECKS, CheckpointError, Frame, GraphExecGroup
from ._selective_checkpoint import (CheckpointPolicy, SelectiveCheckpointContext,
                                    create_selective_checkpoint_contexts)

__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointError", "CheckpointFunction",
           "check_backward_validity", "detach_variable", "noop_context_fn",
           "set_checkpoint_early_stop", "set_checkpoint_debug_enabled", "CheckpointPolicy",
           "SelectiveCheckpointContext", "create_selective_checkpoint_contexts",
           "GraphExecGroup"]

_checkpoint_debug_enabled = None
_enable_checkpoint_early_stop = None


@contextlib.contextmanager
def set_checkpoint_debug_enabled(enabled):
    """Override the ``debug`` argument of every checkpoint run inside (None: defer to
    it).

    >>> with set_checkpoint_debug_enabled(True):
    ...     out = checkpoint(fn, x, use_reentrant=False)
    """
    global _checkpoint_debug_enabled
    prev = _checkpoint_debug_enabled
    _checkpoint_debug_enabled = enabled
    try:
        yield
    finally:
        _checkpoint_debug_enabled = prev


@contextlib.contextmanager
def set_checkpoint_early_stop(enable):
    """Whether checkpoints whose forward runs inside stop recomputing once every needed
    tensor is back (the default) or rerun the whole region.

    >>> with set_checkpoint_early_stop(False):
    ...     out = checkpoint(fn, x, use_reentrant=False)
    """
    global _enable_checkpoint_early_stop
    prev = _enable_checkpoint_early_stop
    _enable_checkpoint_early_stop = enable
    try:
        yield
    finally:
        _enable_checkpoint_early_stop = prev


def noop_context_fn():
    """The default ``context_fn``: nothing around the forward or the recomputation."""
    return contextlib.nullcontext(), contextlib.nullcontext()


def detach_variable(inputs):
    """Each tensor of the tuple ``inputs`` detached, keeping its ``requires_grad``."""
    if not isinstance(inputs, tuple):
        raise RuntimeError("Only tuple of tensors is supported. Got Unsupported input type: "
                           f"{type(inputs).__name__}")
    out = []
    for inp in inputs:
        if isinstance(inp, Tensor):
            x = inp.detach()
            x.requires_grad = inp.requires_grad
            inp = x
        out.append(inp)
    return tuple(out)


def check_backward_validity(inputs):
    """Warn when no input requires grad: a reentrant checkpoint's output would not."""
    if not any(inp.requires_grad for inp in inputs if isinstance(inp, Tensor)):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None",
                      stacklevel=2)


class _RNGState:
    """The RNG state when a region first ran (when preserved), to replay it."""

    def __init__(self, preserve):
        self.state = _random.get_rng_state() if preserve else None

    @contextlib.contextmanager
    def replay(self):
        if self.state is None:
            yield
            return
        outer = _random.get_rng_state()
        _random.set_rng_state(self.state)
        try:
            yield
        finally:
            _random.set_rng_state(outer)


def _is_checkpoint_valid():
    """A plain ``backward()`` (not ``grad`` nor ``backward(inputs=...)``), which alone runs
    every node, as a reentrant checkpoint's nested backward needs."""
    task = current_graph_task()
    return task is None or task.run is None


class CheckpointFunction(Function):
    """The reentrant checkpoint: forward without a graph, backward reruns the region with
    one and backpropagates through it."""

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        check_backward_validity(args)
        ctx.run_function = run_function
        ctx.rng = _RNGState(preserve_rng_state)
        ctx.inputs, ctx.tensor_indices, tensors = [], [], []
        for i, arg in enumerate(args):
            if isinstance(arg, Tensor):
                tensors.append(arg)
                ctx.tensor_indices.append(i)
                ctx.inputs.append(None)
            else:
                ctx.inputs.append(arg)
        ctx.save_for_backward(*tensors)
        with grad_mode.no_grad():
            return run_function(*args)

    @staticmethod
    def backward(ctx, *grads):
        if not _is_checkpoint_valid():
            raise RuntimeError(
                "When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() "
                "or passing an `inputs` parameter to .backward(). To resolve this error, you "
                "can either set use_reentrant=False, or call .backward() without passing the "
                "`inputs` argument.")
        inputs = list(ctx.inputs)
        for i, t in zip(ctx.tensor_indices, ctx.saved_tensors, strict=True):
            inputs[i] = t
        with ctx.rng.replay():
            detached = detach_variable(tuple(inputs))
            with grad_mode.enable_grad():
                outputs = ctx.run_function(*detached)
        if isinstance(outputs, Tensor):
            outputs = (outputs,)
        pairs = [(o, g) for o, g in zip(outputs, grads, strict=False)
                 if isinstance(o, Tensor) and o.requires_grad]
        if not pairs:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not "
                               "necessary")
        _autograd_backward([o for o, _ in pairs], [g for _, g in pairs])
        return (None, None) + tuple(inp.grad if isinstance(inp, Tensor) else None
                                    for inp in detached)


def checkpoint(function, *args, use_reentrant=None, context_fn=noop_context_fn,
               determinism_check="default", debug=False, early_stop=True, **kwargs):
    """Run ``function(*args, **kwargs)`` keeping only its inputs for backward, which runs it
    again to get the tensors its ops saved.

    ``preserve_rng_state`` (keyword, default True): replay the RNG state in the rerun.
    ``use_reentrant``: see the module docstring; pass it (False is recommended).
    Non-reentrant only: ``context_fn`` (two context managers, around the forward and
    around the rerun), ``determinism_check`` ("default": shapes, dtypes and devices of
    the recomputed tensors must match; "none"; "values", retrograd's: their values too,
    keeping a copy of each), ``debug`` (errors list the ops of both runs),
    ``early_stop``.

    >>> y = checkpoint(lambda x: x.sin().exp(), x, use_reentrant=False)
    """
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. "
            "Starting in PyTorch 2.9, calling checkpoint without use_reentrant will raise an "
            "exception. use_reentrant=False is recommended, but if you need to preserve the "
            "current default behavior, you can pass use_reentrant=True. Refer to docs for "
            "more details on the differences between the two variants.", stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    if use_reentrant:
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError("Passing `context_fn` or `debug` is only supported when "
                             "use_reentrant=False.")
        return CheckpointFunction.apply(function, preserve, *args)
    return _checkpoint_without_reentrant(function, preserve, context_fn, determinism_check,
                                         debug, early_stop, args, kwargs)


_SUPPRESSED = ("torch.utils.checkpoint: the forward context provided by context_fn "
               "suppressed an exception raised during the checkpointed forward. This is not "
               "supported because checkpoint cannot return a value for a failed forward.")


def _checkpoint_without_reentrant(fn, preserve, context_fn, determinism_check, debug,
                                  early_stop, args, kwargs):
    unpack_error_cb = None
    if _checkpoint_debug_enabled if _checkpoint_debug_enabled is not None else debug:
        if context_fn is not noop_context_fn:
            raise ValueError("debug=True is incompatible with non-default context_fn")
        context_fn, unpack_error_cb = _debug_context_and_cb()
    if determinism_check not in DETERMINISM_CHECKS:
        raise ValueError(f"determinism_check should be one of {list(DETERMINISM_CHECKS)}, but "
                         f"got {determinism_check}")
    forward_context, recompute_context = context_fn()
    rng = _RNGState(preserve)

    def recompute_fn(*inputs):
        with rng.replay(), recompute_context:
            fn(*inputs, **kwargs)

    if _enable_checkpoint_early_stop is not None:
        early_stop = _enable_checkpoint_early_stop
    frame = Frame(recompute_fn, early_stop, unpack_error_cb, determinism_check)
    if not grad_mode.is_grad_enabled():
        return fn(*args, **kwargs)
    frame.save_inputs(args)
    ret = done = None
    with frame.hooks(), sites.region(frame.outside), forward_context:
        ret = fn(*args, **kwargs)
        done = True
    if done is None:
        raise RuntimeError(_SUPPRESSED)
    frame.forward_completed = True
    return ret


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Run ``functions`` (an ``nn.Sequential`` or a list of modules or functions) in order
    on ``input``, in ``segments`` chunks, each checkpointed but the last.

    With ``n`` equal layers, about ``sqrt(n)`` segments keep the fewest activations:
    ``segments`` inputs plus one segment's ``n / segments`` recomputed at a time.

    >>> out = checkpoint_sequential(model, 4, x, use_reentrant=False)
    """
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should "
            "be passed explicitly. In version 2.9 we will raise an exception if use_reentrant "
            "is not passed. use_reentrant=False is recommended, but if you need to preserve "
            "the current default behavior, you can pass use_reentrant=True. Refer to docs for "
            "more details on the differences between the two variants.", stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))

    def run_function(start, end, functions):
        def forward(input):
            for j in range(start, end + 1):
                input = functions[j](input)
            return input
        return forward

    if isinstance(functions, Sequential):
        functions = list(functions.children())
    segment_size = len(functions) // segments
    end = -1
    for start in range(0, segment_size * (segments - 1), segment_size):
        end = start + segment_size - 1
        input = checkpoint(run_function(start, end, functions), input,
                           use_reentrant=use_reentrant, preserve_rng_state=preserve)
    return run_function(end + 1, len(functions) - 1, functions)(input)


_DEBUG_REPORT = """ \
An error happened while unpacking tensors; dumping logs of latest computation
because you passed `debug=True` to `torch.utils.checkpoint.checkpoint()`.
Scroll all the way down for guidance on how to navigate these logs.

+~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~+
|        1. Stack traces of the operators that ran in the original forward     |
+------------------------------------------------------------------------------+

{forward_traces}
+~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~+
|        2. Stack traces of the operators that ran during recomputation        |
+------------------------------------------------------------------------------+

{recompute_traces}
+~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~+
|       3. Log of operators in the original forward and recomputation          |
+------------------------------------------------------------------------------+

Operations executed during the original forward:

{forward_ops}

Operations executed during recomputation:

{recompute_ops}

+------------------------------------------------------------------------------+
 ERROR: Detected non-determinism while running activation checkpointing

 You are seeing this error because you passed `debug=True` to checkpoint and
 tensors to be saved during the original forward and differ between those saved
 during recomputation. This can happen if different operators were ran in the
 original forward and in the recomputation.

 To identify where the mismatch may be coming from, you can do the following:

 1) Compare the operators ran during original forward and recomputation to
    see where they differ. These operators are printed above in the order they
    were executed.

 2) Review the stack trace for each operator to locate its invocation source.
    Each operator's stack trace is printed in their execution order.

 Note that the logs can be quite long. Here's how they are structured:
 (Tip: you can Ctrl-f for these headers)

 1. Stack traces of the operators that ran in the original forward
 2. Stack traces of the operators that ran during recomputation
 3. Log of operators in the original forward and recomputation
 4. Error message                                             <--- You are here
--------------------------------------------------------------------------------
"""


def _debug_context_and_cb():
    """``debug=True``: log the ops of the forward and of the recomputation; an unpack
    error is raised again with both logs (the op's caller line for a stack trace)."""
    forward_log, recompute_log = sites.OpLog(), sites.OpLog()

    def unpack_error_cb(e):
        raise CheckpointError(_DEBUG_REPORT.format(
            forward_traces=forward_log.format("original"),
            recompute_traces=recompute_log.format("recompute"),
            forward_ops="\n".join(name for name, _ in forward_log.entries),
            recompute_ops="\n".join(name for name, _ in recompute_log.entries))) from e

    def context_fn():
        return forward_log, recompute_log
    return context_fn, unpack_error_cb
