"""``retrograd.autograd``: reverse-mode differentiation of Tensor programs."""

from .._tensor import Tensor
from . import forward_ad, function, functional, graph
from . import _batched_rules  # noqa: F401 (the batching rules of reductions, joins, ...)
from . import _collector  # noqa: F401 (recording spaces out full cyclic collections)
from .function import Function
from . import anomaly_mode, profiler, profiler_util
from .anomaly_mode import (detect_anomaly, is_anomaly_check_nan_enabled, is_anomaly_enabled,
                           set_detect_anomaly)
from ._backward import backward, grad
from .engine import queue_callback as _queue_callback
from .gradcheck import gradcheck, gradgradcheck
from .grad_mode import (enable_grad, inference_mode, is_grad_enabled,
                        is_inference_mode_enabled, is_multithreading_enabled, no_grad,
                        set_grad_enabled, set_multithreading_enabled)

__all__ = ["Variable", "backward", "grad", "no_grad", "enable_grad", "set_grad_enabled",
           "is_grad_enabled", "inference_mode", "is_inference_mode_enabled", "graph", "gradcheck",
           "gradgradcheck", "Function", "forward_ad", "function", "functional",
           "anomaly_mode", "detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled",
           "is_anomaly_check_nan_enabled", "profiler", "profiler_util",
           "set_multithreading_enabled", "is_multithreading_enabled"]


class _VariableMeta(type):
    def __instancecheck__(cls, other):
        return isinstance(other, Tensor)


class Variable(metaclass=_VariableMeta):
    """Deprecated (see the autograd reference): ``Variable(tensor, requires_grad)`` returns a
    Tensor sharing ``tensor``'s data, and every Tensor is an instance of Variable."""

    def __new__(cls, data, requires_grad=False, volatile=False):
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        return data.detach().requires_grad_(requires_grad)


class _ExecutionEngine:
    """``Variable._execution_engine``: the engine's entry points hooks may call."""

    queue_callback = staticmethod(_queue_callback)


Variable._execution_engine = _ExecutionEngine()
