"""``torch.compile`` and ``torch.compiler``: retrograd runs every model eagerly.

``compile`` checks its arguments as PyTorch does and returns the model or function
itself, so a program written for ``torch.compile`` runs unchanged, op by op, with the
same results and without the speed-up: there is no graph capture, and a custom
``backend`` callable is accepted but never called.
"""

import functools

__all__ = ["compile", "disable", "is_compiling", "is_dynamo_compiling", "is_exporting",
           "reset", "list_backends", "allow_in_graph", "assume_constant_result"]

_MODES = ("default", "lite", "reduce-overhead", "max-autotune-no-cudagraphs", "max-autotune")

# PyTorch's registered backend names (``list_backends(exclude_tags=None)``); the ones
# ``list_backends()`` shows are those not tagged debug or experimental.
_BACKENDS = ("aot_eager", "aot_eager_decomp_partition", "aot_eager_default_partitioner",
             "aot_ts", "cudagraphs", "eager", "eager_debug", "eager_noexcept", "inductor",
             "openxla", "openxla_eval", "pre_dispatch_eager", "ts", "tvm")
_LISTED = ("cudagraphs", "inductor", "openxla", "tvm")


class InvalidBackend(RuntimeError):
    """``torch._dynamo.exc.InvalidBackend``."""

    def __init__(self, name):
        super().__init__(f"Invalid backend: {name!r}, see `torch._dynamo.list_backends()` for "
                         f"available backends.")


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None,
            options=None, name=None, disable=False, **kwargs):
    """``model`` itself (or, without one, a decorator returning its function): retrograd
    runs it eagerly. The arguments are checked as ``torch.compile`` checks them.

    >>> @compile(mode="max-autotune")
    ... def f(x):
    ...     return x + 1
    >>> f(retrograd.ones(1))
    tensor([2.])
    """
    _check_options(backend, mode, options)
    if model is None:
        return functools.partial(compile, fullgraph=fullgraph, dynamic=dynamic,
                                 backend=backend, mode=mode, options=options, name=name,
                                 disable=disable, **kwargs)
    if not callable(model):
        raise AssertionError(f"A callable function is expected, but {type(model)} is "
                             f"provided.")
    return model


def _check_options(backend, mode, options):
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be "
                           "specified at the same time.")
    if mode is not None and mode not in _MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: {', '.join(_MODES)}")
    if not callable(backend) and backend not in _BACKENDS:
        raise InvalidBackend(backend)


def list_backends(exclude_tags=("debug", "experimental")):
    """The backend names ``compile`` accepts (all run eagerly here)."""
    return sorted(_LISTED if exclude_tags else _BACKENDS)


class _Disabled:
    """``disable()`` without a function: a decorator and a no-op context manager."""

    def __call__(self, fn):
        return fn

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def disable(fn=None, recursive=True, *, reason=None):
    """Exclude ``fn`` from compilation: it runs eagerly, as everything does."""
    return _Disabled() if fn is None else fn


def is_compiling():
    """False: nothing is ever being traced."""
    return False


is_dynamo_compiling = is_compiling


def is_exporting():
    return False


def reset():
    """Clear compilation caches: there are none."""


def allow_in_graph(fn):
    return fn


def assume_constant_result(fn):
    return fn
