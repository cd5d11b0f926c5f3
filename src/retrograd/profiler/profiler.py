"""``torch.profiler.profile``: the autograd profiler driven by a schedule of steps.

A training loop calls :meth:`profile.step` once per iteration; the :func:`schedule`
says what each step does (:class:`ProfilerAction`): nothing, warm up (the next cycle's
recorder is made but records nothing), record, or record and then hand the cycle's
events to ``on_trace_ready``. Each cycle is recorded by its own
``retrograd.autograd.profiler.profile`` (one kept and restarted when ``acc_events``
accumulates events across cycles), whose events, tables and Chrome trace these methods
return. The transitions between actions are PyTorch's, table for table.
"""

import gzip
import os
import shutil
import socket
import tempfile
import time
import uuid
import warnings
from enum import Enum
from functools import partial

from ..autograd import profiler as prof
from ._activity import ProfilerActivity

__all__ = ["supported_activities", "ProfilerAction", "schedule", "tensorboard_trace_handler",
           "profile"]

PROFILER_STEP_NAME = "ProfilerStep"
_WARNINGS_SHOWN = set()


def _warn_once(msg):
    if msg not in _WARNINGS_SHOWN:
        _WARNINGS_SHOWN.add(msg)
        warnings.warn(msg, stacklevel=3)


def supported_activities():
    """The activities this profiler records: the CPU's.

    >>> supported_activities()
    {<ProfilerActivity.CPU: 0>}
    """
    return {ProfilerActivity.CPU}


def _parse_activities(activities):
    """The set of activity groups asked for; each may be named once."""
    parsed = set()
    for item in activities:
        if isinstance(item, dict):
            raise NotImplementedError(
                "retrograd's profiler records whole activity groups: pass ProfilerActivity "
                "values, not a dict of activity types")
        if not isinstance(item, ProfilerActivity):
            raise TypeError(f"Expected ProfilerActivity or dict, got {type(item)}")
        if item in parsed:
            raise ValueError(f"Activity {item} specified more than once")
        parsed.add(item)
    return parsed


_DEVICES = ((ProfilerActivity.CUDA, "cuda"), (ProfilerActivity.XPU, "xpu"),
            (ProfilerActivity.MTIA, "mtia"), (ProfilerActivity.HPU, "hpu"),
            (ProfilerActivity.PrivateUse1, "privateuseone"))


class _KinetoProfile:
    """The recorder under :class:`profile` (PyTorch's name): prepares, starts and stops
    one autograd profile per cycle and answers for the last one. The arguments are
    :class:`profile`'s."""

    def __init__(self, *, activities=None, record_shapes=False, profile_memory=False,
                 with_stack=False, with_flops=False, with_modules=False,
                 experimental_config=None, execution_trace_observer=None, acc_events=False,
                 custom_trace_id_callback=None, post_processing_timeout_s=None):
        self.activities = (supported_activities() if activities is None
                           else _parse_activities(activities))
        self.record_shapes = record_shapes
        self.with_flops = with_flops
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_modules = with_modules
        self.experimental_config = experimental_config
        self.execution_trace_observer = execution_trace_observer
        self.acc_events = acc_events
        self.custom_trace_id_callback = custom_trace_id_callback
        self.post_processing_timeout_s = post_processing_timeout_s
        self.profiler = None
        self.trace_id = None
        # the first device asked for, in PyTorch's order; the autograd profile checks it
        self.use_device = next((d for a, d in _DEVICES if a in self.activities), None)

    def start(self):
        self.prepare_trace()
        self.start_trace()

    def stop(self):
        self.stop_trace()

    def prepare_trace(self):
        """Make the next cycle's recorder (checking the devices asked for, as PyTorch
        does when its profiler is made), unless the events accumulate in the last one."""
        if self.profiler is not None and not self.acc_events:
            _warn_once("Warning: Profiler clears events at the end of each cycle. Only events "
                       "from the current cycle will be reported. To keep events across "
                       "cycles, set acc_events=True.")
        if self.profiler is None or not self.acc_events:
            if self.post_processing_timeout_s is not None and self.post_processing_timeout_s < 0:
                raise ValueError("post_processing_timeout_s must be non-negative")
            self.profiler = prof.profile(
                use_cpu=ProfilerActivity.CPU in self.activities, use_device=self.use_device,
                record_shapes=self.record_shapes, with_flops=self.with_flops,
                profile_memory=self.profile_memory, with_stack=self.with_stack,
                with_modules=self.with_modules, use_kineto=True,
                experimental_config=self.experimental_config, acc_events=self.acc_events,
                custom_trace_id_callback=self.custom_trace_id_callback)
        callback = self.custom_trace_id_callback
        self.trace_id = callback() if callback else f"{uuid.uuid4().int:032X}"

    def start_trace(self):
        if self.execution_trace_observer:
            self.execution_trace_observer.start()
        self.profiler._start_trace()

    def stop_trace(self):
        if self.execution_trace_observer:
            self.execution_trace_observer.stop()
        self.profiler.__exit__(None, None, None)

    def _ready(self, what):
        if self.profiler is None:
            raise AssertionError(f"Profiler must be initialized before {what}")
        return self.profiler

    def export_chrome_trace(self, path, use_python_export=False):
        """Write the last cycle's events as a Chrome trace (gzipped when ``path`` ends
        in ``.gz``). Every export here is the Python one ``use_python_export`` asks for."""
        profiler = self._ready("exporting chrome trace")
        if not path.endswith(".gz"):
            return profiler.export_chrome_trace(path)
        with tempfile.TemporaryDirectory() as tmp:
            plain = os.path.join(tmp, "trace.json")
            profiler.export_chrome_trace(plain)
            with open(plain, "rb") as fin, gzip.open(path, "wb") as fout:
                shutil.copyfileobj(fin, fout)

    def export_stacks(self, path, metric="self_cpu_time_total"):
        """Save the recorded stacks (``with_stack=True``) in the folded format flame graph
        tools read, weighted by ``metric``."""
        return self._ready("exporting stacks").export_stacks(path, metric)

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0,
                     group_by_overload_name=False):
        """The last cycle's events averaged by name (and input shapes, stack), an
        ``EventList`` whose ``table()`` prints PyTorch's summary."""
        return self._ready("getting key averages").key_averages(
            group_by_input_shape, group_by_stack_n, group_by_overload_name)

    def events(self):
        """The last cycle's events, unaggregated (an ``EventList``)."""
        return self._ready("accessing events").function_events

    def set_custom_trace_id_callback(self, callback):
        """Make each later cycle's trace id with ``callback()``."""
        self.custom_trace_id_callback = callback

    def get_trace_id(self):
        """The current cycle's trace id (a random UUID's hex digits by default)."""
        return self.trace_id


class ProfilerAction(Enum):
    """What a step does. A schedule returns one of the first four; ``DEVICE_STOPPED`` is
    the profiler's own state (in PyTorch, when device collection stops early)."""

    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3
    DEVICE_STOPPED = 4


def schedule(*, wait, warmup, active, repeat=0, skip_first=0, skip_first_wait=0):
    """A profiler ``schedule``: after ``skip_first`` steps, cycles of ``wait`` idle steps,
    ``warmup`` steps and ``active`` recorded steps, the last of each cycle handing its
    trace to ``on_trace_ready``; ``repeat`` cycles (0: until profiling ends).
    ``skip_first_wait`` drops the first cycle's wait.

    >>> s = schedule(wait=1, warmup=1, active=2)
    >>> [s(i).name for i in range(5)]
    ['NONE', 'WARMUP', 'RECORD', 'RECORD_AND_SAVE', 'NONE']
    """
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise AssertionError(
            f"Invalid profiler schedule arguments. Got wait={wait} (need >= 0), warmup={warmup} "
            f"(need >= 0), active={active} (need > 0), repeat={repeat} (need >= 0), "
            f"skip_first={skip_first} (need >= 0).")
    if warmup == 0:
        warnings.warn("Profiler won't be using warmup, this can skew profiler results",
                      stacklevel=2)
    cycle = wait + warmup + active

    def schedule_fn(step):
        if step < 0:
            raise AssertionError(f"Step must be non-negative. Got {step}.")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait:
            step += wait
        if repeat > 0 and step >= repeat * cycle:
            return ProfilerAction.NONE
        pos = step % cycle
        if pos < wait:
            return ProfilerAction.NONE
        if pos < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if pos < cycle - 1 else ProfilerAction.RECORD_AND_SAVE

    return schedule_fn


def _default_schedule_fn(_):
    """Without a schedule every step records."""
    return ProfilerAction.RECORD


def tensorboard_trace_handler(dir_name, worker_name=None, use_gzip=False,
                              use_python_export=False):
    """An ``on_trace_ready`` that writes each cycle's Chrome trace into ``dir_name`` (a
    TensorBoard logdir) as ``<worker_name>.<time_ns>.pt.trace.json[.gz]``;
    ``worker_name`` defaults to ``<hostname>_<pid>``.

    >>> with profile(schedule=schedule(wait=0, warmup=1, active=1),
    ...              on_trace_ready=tensorboard_trace_handler("./log")) as p:
    ...     for batch in loader:
    ...         train_step(batch)
    ...         p.step()
    """

    def handler_fn(prof):
        nonlocal worker_name
        if not os.path.isdir(dir_name):
            try:
                os.makedirs(dir_name, exist_ok=True)
            except Exception as e:
                raise RuntimeError("Can't create directory: " + dir_name) from e
        if not worker_name:
            worker_name = f"{socket.gethostname()}_{os.getpid()}"
        file_name = f"{worker_name}.{time.time_ns()}.pt.trace.json" + (
            ".gz" if use_gzip else "")
        prof.export_chrome_trace(os.path.join(dir_name, file_name),
                                 use_python_export=use_python_export)

    return handler_fn


class profile(_KinetoProfile):
    """Profiler context manager: records the CPU ops, backward nodes and
    ``record_function`` ranges run inside it, on the steps its ``schedule`` records
    (every step without one), calling ``on_trace_ready(self)`` at the end of each cycle.
    ``use_cuda`` is deprecated: pass ``activities``.

    >>> with profile(schedule=schedule(wait=1, warmup=1, active=2),
    ...              on_trace_ready=lambda p: print(p.key_averages().table())) as p:
    ...     for batch in loader:
    ...         train_step(batch)
    ...         p.step()
    """

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None,
                 record_shapes=False, profile_memory=False, with_stack=False,
                 with_flops=False, with_modules=False, experimental_config=None,
                 execution_trace_observer=None, acc_events=False, use_cuda=None,
                 custom_trace_id_callback=None, post_processing_timeout_s=None):
        asked = supported_activities() if activities is None else {
            a for item in activities for a in (item if isinstance(item, dict) else (item,))}
        if use_cuda is not None:
            warnings.warn("`use_cuda` is deprecated, use `activities` argument instead",
                          FutureWarning, stacklevel=2)
            (asked.add if use_cuda else asked.discard)(ProfilerActivity.CUDA)
        if not asked:
            raise AssertionError("No valid profiler activities found")
        super().__init__(
            activities=activities, record_shapes=record_shapes, profile_memory=profile_memory,
            with_stack=with_stack, with_flops=with_flops, with_modules=with_modules,
            experimental_config=experimental_config,
            execution_trace_observer=execution_trace_observer, acc_events=acc_events,
            custom_trace_id_callback=custom_trace_id_callback,
            post_processing_timeout_s=post_processing_timeout_s)
        # with a schedule each step is a "ProfilerStep#<n>" range in the trace and table
        self.schedule = schedule or _default_schedule_fn
        self.record_steps = bool(schedule)
        self.on_trace_ready = on_trace_ready
        self.step_num = 0
        self.step_rec_fn = None
        self.current_action = self._scheduled(self.step_num)
        A = ProfilerAction
        prepare, start, stop, ready = (self.prepare_trace, self.start_trace, self.stop_trace,
                                       self._trace_ready)
        self.action_map = {  # (previous action, this step's; None: stop) -> what to do
            (A.NONE, A.WARMUP): [prepare],
            (A.NONE, A.RECORD): [prepare, start],
            (A.NONE, A.RECORD_AND_SAVE): [prepare, start],
            (A.WARMUP, A.NONE): [partial(warnings.warn,
                                         "Incorrect schedule: WARMUP followed by NONE"),
                                 start, stop],
            (A.WARMUP, A.RECORD): [start],
            (A.WARMUP, A.RECORD_AND_SAVE): [start],
            (A.RECORD, A.NONE): [partial(warnings.warn,
                                         "Incorrect schedule: RECORD followed by NONE"), stop],
            (A.RECORD, A.WARMUP): [partial(warnings.warn,
                                           "Incorrect schedule: RECORD followed by WARMUP"),
                                   stop],
            (A.RECORD_AND_SAVE, A.NONE): [stop, ready],
            (A.RECORD_AND_SAVE, A.WARMUP): [stop, ready, prepare],
            (A.RECORD_AND_SAVE, A.RECORD): [stop, ready, prepare, start],
            (A.RECORD_AND_SAVE, A.RECORD_AND_SAVE): [stop, ready, prepare, start],
            (A.WARMUP, None): [start, stop],
            (A.RECORD, None): [stop, ready],
            (A.RECORD_AND_SAVE, None): [stop, ready],
        }

    def _scheduled(self, step):
        action = self.schedule(step)
        if action == ProfilerAction.DEVICE_STOPPED:
            raise ValueError("ProfilerAction.DEVICE_STOPPED is set internally by the profiler "
                             "and must not be returned by a user-provided schedule")
        return action

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        self.stop()
        if self.execution_trace_observer:
            self.execution_trace_observer.cleanup()

    def start(self):
        self._transit_action(ProfilerAction.NONE, self.current_action)
        self._enter_step()

    def stop(self):
        self._exit_step()
        self._transit_action(self.current_action, None)

    def step(self):
        """Signal that the next step (training iteration) has started."""
        self._exit_step()
        prev = self.current_action
        action = self._scheduled(self.step_num + 1)
        self.step_num += 1
        self.current_action = action
        self._transit_action(prev, action)
        self._enter_step()

    def _enter_step(self):
        if self.record_steps:
            self.step_rec_fn = prof.record_function(f"{PROFILER_STEP_NAME}#{self.step_num}")
            self.step_rec_fn.__enter__()

    def _exit_step(self):
        if self.record_steps and self.step_rec_fn:
            self.step_rec_fn.__exit__(None, None, None)
            self.step_rec_fn = None

    def _trace_ready(self):
        if self.on_trace_ready:
            self.on_trace_ready(self)

    def _transit_action(self, prev_action, current_action):
        for action in self.action_map.get((prev_action, current_action), ()):
            action()
