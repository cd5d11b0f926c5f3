"""``torch.profiler``: PyTorch's profiler API on retrograd's autograd profiler.

:class:`profile` records CPU ops, backward nodes and :func:`record_function` ranges,
optionally on a :func:`schedule` of training steps, and hands each cycle to
``on_trace_ready`` (:func:`tensorboard_trace_handler` writes it for TensorBoard). Its
events, ``key_averages().table()`` and Chrome traces are the autograd profiler's
(``retrograd.autograd.profiler_util``). Only CPU activity is recorded.

>>> import retrograd as torch
>>> with torch.profiler.profile(record_shapes=True) as p:
...     torch.ones(2, 3).sin().sum()
>>> print(p.key_averages().table(sort_by="self_cpu_time_total"))
"""

from ..autograd.profiler import record_function
from . import itt  # noqa: F401 (torch.profiler.itt)
from ._activity import DeviceType, ProfilerActivity, kineto_available
from .profiler import (_KinetoProfile, ProfilerAction, profile, schedule,  # noqa: F401
                       supported_activities, tensorboard_trace_handler)

__all__ = ["profile", "schedule", "supported_activities", "tensorboard_trace_handler",
           "ProfilerAction", "ProfilerActivity", "kineto_available", "DeviceType",
           "record_function"]
