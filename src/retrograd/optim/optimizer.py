"""The Optimizer base: PyTorch's param groups, per-parameter state, state_dict layout, hooks.

Updates are elementwise and bandwidth-bound, so each optimizer writes them as one function
per parameter, ``update(param, grad, state, group)``, that works on the backend arrays in
place (``out=``, no graph) and bumps the version counters an in-place op would. ``step``
runs it for every parameter with a gradient; the same function is the unit that fusing the
update into backward calls per parameter (:meth:`Optimizer._step_param`).

``foreach`` (PyTorch: one multi-tensor kernel per operation for the whole group) is, on
NumPy, the group's per-parameter updates run concurrently on a thread pool: NumPy releases
the GIL inside its loops, and an operation-major order (each operation over every tensor
before the next) streams the whole group through memory once per operation, which measured
2.5x slower than updating one parameter at a time while its arrays are in cache. Both paths
run the same arithmetic, so their results are identical. ``foreach=None`` (the default) and
``True`` use threads for groups of at least ``_MIN_PARALLEL`` elements; ``False`` and
``fused=True`` always run the plain per-parameter loop.
"""

import concurrent.futures
import os
import threading
import warnings
from collections import OrderedDict, defaultdict
from collections.abc import Iterable
from copy import deepcopy
from itertools import chain

import numpy

from .. import _dtype, _observe
from .._tensor import Tensor, wrap
from ..autograd import grad_mode
from ..autograd.node import RemovableHandle
from ..backend import (check_writeable, device_guard, get_array_module, host_array_module,
                       to_device)
from ..backend.functions import functions

__all__ = ["Optimizer", "register_optimizer_step_pre_hook", "register_optimizer_step_post_hook"]

_global_optimizer_pre_hooks = OrderedDict()
_global_optimizer_post_hooks = OrderedDict()


class _RequiredParameter:
    """Marks a default that every parameter group must give."""

    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()


def register_optimizer_step_pre_hook(hook):
    """``hook(optimizer, args, kwargs)`` runs before every optimizer's ``step``; it may
    return new ``(args, kwargs)``. Returns a handle with ``remove()``."""
    handle = RemovableHandle(_global_optimizer_pre_hooks)
    _global_optimizer_pre_hooks[handle.id] = hook
    return handle


def register_optimizer_step_post_hook(hook):
    """``hook(optimizer, args, kwargs)`` runs after every optimizer's ``step``."""
    handle = RemovableHandle(_global_optimizer_post_hooks)
    _global_optimizer_post_hooks[handle.id] = hook
    return handle


# ---- helpers shared by the optimizers ---------------------------------------------------

def _scalar(x):
    """A hyperparameter as a Python number (PyTorch accepts 1-element tensors)."""
    return float(x) if isinstance(x, Tensor) else x


def _scalar_keep_dtype(x):
    """A hyperparameter for coefficients PyTorch computes with it as a 0-d tensor: a
    tensor's value stays in its dtype (a NumPy scalar), so arithmetic with Python numbers
    rounds as PyTorch's does (float32 for a float32 tensor)."""
    return x._data[()] if isinstance(x, Tensor) else x


def _update_param(optimizer, args, kwargs):
    """``Optimizer._step_param``'s work, for an observer's ``run_step`` to wrap."""
    optimizer._update_one(*args, **kwargs)


def _new_state(arr):
    """A Tensor of new optimizer state: memory accounting books it so from the start."""
    if _observe.alloc is not None:
        _observe.alloc.made(arr, _observe.OPTIMIZER_STATE)
    return wrap(arr)


def _zeros_like(p):
    """Optimizer state: zeros with the parameter's dtype and memory layout."""
    d = p._data
    xp = get_array_module(d)
    return _new_state(xp.zeros_like(d))


def _step_tensor(value=0.0, fused=False, device=None):
    """The ``step`` counter as PyTorch keeps it: a 0-d float tensor (float32, or float64
    when that is the default dtype; float32 always for fused), on the CPU unless
    ``device`` is given (ASGD keeps its counters with the parameter)."""
    dt = _dtype.float32 if fused or _dtype.get_default_dtype() is not _dtype.float64 \
        else _dtype.float64
    a = host_array_module().array(value, dtype=dt.np)
    return _new_state(a if device is None else to_device(a, device))


def _steps_as_tensors(optimizer, group, fused=False):
    """A ``step`` unpickled from an old checkpoint as a number becomes PyTorch's tensor."""
    for p in group["params"]:
        p_state = optimizer.state.get(p, [])
        if len(p_state) != 0 and not isinstance(p_state["step"], Tensor):
            p_state["step"] = _step_tensor(float(p_state["step"]), fused)


def _count_step(state):
    """``state["step"] += 1`` in place, recorded like an in-place op; returns the tensor."""
    step_t = state["step"]
    step_t._data += 1
    _bump(step_t)
    return step_t


def _directed_grad(p, g, maximize, weight_decay):
    """The gradient every update starts from: negated for ``maximize``, then plus
    ``weight_decay * p`` (L2: ``grad.add(param, alpha=weight_decay)``, an fma, as PyTorch's
    add with an alpha). A new array when either applies, else ``g`` itself."""
    xp = get_array_module(g)  # (out=: a 0-d array stays an array, not a NumPy scalar)
    if maximize:
        g = xp.negative(g, out=xp.empty_like(g))
    if weight_decay != 0:
        g = functions(xp).fused_mul_add(p, weight_decay, g, out=xp.empty_like(p))
    return g


def _bump(*tensors):
    """Record an in-place write, as an in-place op would (saved-tensor checks see it)."""
    for t in tensors:
        t._vc[0] += 1


def _real(a):
    """A complex array viewed as its real and imaginary parts (PyTorch's
    ``view_as_real``): the optimizers treat the two parts as independent numbers. (The
    array module's view: every array of one step is of one module, so all views are laid
    out alike.)"""
    if a.dtype.kind != "c":
        return a
    return functions(get_array_module(a)).real_pairs(a)


def _check_lr(lr):
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    if lr < 0.0:
        raise ValueError(f"Invalid learning rate: {lr}")


def _check_adam_args(betas, eps, weight_decay):
    """The checks PyTorch's Adam family makes of ``eps``, ``betas`` and ``weight_decay``."""
    if not 0.0 <= eps:
        raise ValueError(f"Invalid epsilon value: {eps}")
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
    if not 0.0 <= weight_decay:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")


def _check_fused(fused, foreach, differentiable):
    if fused:
        if differentiable:
            raise RuntimeError("`fused` does not support `differentiable`")
        if foreach:
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")


# ---- the thread pool of the foreach path ------------------------------------------------

_MIN_PARALLEL = 1 << 18  # elements in a group below which threads cost more than they save
_pool = None
_pool_pid = None
_pool_lock = threading.Lock()


def _get_pool():
    """The shared pool, made on first use (and again in a forked child, whose copy of the
    parent's pool has no threads)."""
    global _pool, _pool_pid
    with _pool_lock:
        if _pool is None or _pool_pid != os.getpid():
            # (concurrent.futures loads its thread module here, on first use)
            _pool = concurrent.futures.ThreadPoolExecutor(min(8, os.cpu_count() or 1),
                                                          thread_name_prefix="retrograd-optim")
            _pool_pid = os.getpid()
        return _pool


def _use_threads(params):
    """Whether the group is big enough to gain from threads (and has no parameter twice:
    PyTorch then updates it twice, one update after the other)."""
    if len(params) < 2 or (os.cpu_count() or 1) < 2 or _observe.alloc is not None:
        return False  # (an allocation observer keeps its books without locks: one thread)
    if get_array_module(params[0]._data) is not host_array_module():
        return False  # a device's kernels run asynchronously: threads only add contention
    n = 0
    for p in params:
        n += p._data.size
    return n >= _MIN_PARALLEL and len(set(map(id, params))) == len(params)


def _check_parameters_writeable(params):
    """Refuse parameters over read-only memory before any update changes anything."""
    for p in params:
        check_writeable(p._data, "a parameter")


class Optimizer:
    r"""Base class of all optimizers.

    ``params`` is an iterable of tensors, of ``(name, tensor)`` pairs, or of dicts
    defining parameter groups; ``defaults`` holds the options a group does not give.

    >>> opt = retrograd.optim.SGD([w], lr=0.1)
    >>> loss(w).backward(); opt.step(); opt.zero_grad()
    """

    # Group options an unpickled optimizer of an older version may lack, set on
    # unpickling, and whether its state keeps a ``step`` (old pickles: a number).
    _group_defaults = ()
    _has_step = False

    # The per-parameter update ``update(param, grad, state, group)``; set by subclasses
    # that use :meth:`_run_step`.
    _update = None

    def __init__(self, params, defaults):
        self.defaults = defaults
        self._optimizer_step_pre_hooks = OrderedDict()
        self._optimizer_step_post_hooks = OrderedDict()
        self._optimizer_state_dict_pre_hooks = OrderedDict()
        self._optimizer_state_dict_post_hooks = OrderedDict()
        self._optimizer_load_state_dict_pre_hooks = OrderedDict()
        self._optimizer_load_state_dict_post_hooks = OrderedDict()
        self._patch_step_function()
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            "Tensors or dicts, but got " + _typename(params))
        self.state = defaultdict(dict)
        self.param_groups = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for param_group in param_groups:
            self.add_param_group(param_group)
        self._warned_capturable_if_run_uncaptured = True

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state,
                "param_groups": self.param_groups}

    def __setstate__(self, state):
        self.__dict__.update(state)
        for name in ("_optimizer_step_pre_hooks", "_optimizer_step_post_hooks",
                     "_optimizer_state_dict_pre_hooks", "_optimizer_state_dict_post_hooks",
                     "_optimizer_load_state_dict_pre_hooks",
                     "_optimizer_load_state_dict_post_hooks"):
            if name not in self.__dict__:
                setattr(self, name, OrderedDict())
        self._patch_step_function()
        self.defaults.setdefault("differentiable", False)
        for group in self.param_groups:  # what pickles of older versions lack
            for k, v in self._group_defaults:
                group.setdefault(k, v)
            if self._has_step:
                _steps_as_tensors(self, group, group.get("fused"))

    def __repr__(self):
        s = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            s += f"\nParameter Group {i}\n"
            for key in sorted(group.keys()):
                if key != "params":
                    s += f"    {key}: {group[key]}\n"
        return s + ")"

    # ---- step and its hooks -----------------------------------------------------------
    @staticmethod
    def profile_hook_step(func):
        """Wrap a ``step`` so the global and per-optimizer step hooks run around it."""
        def wrapper(*args, **kwargs):
            self = args[0]
            for pre_hook in chain(_global_optimizer_pre_hooks.values(),
                                  self._optimizer_step_pre_hooks.values()):
                result = pre_hook(self, args, kwargs)
                if result is not None:
                    if isinstance(result, tuple) and len(result) == 2:
                        args, kwargs = result
                    else:
                        raise RuntimeError(f"{func} must return None or a tuple of (new_args, "
                                           f"new_kwargs), but got {result}.")
            obs = _observe.engine
            if obs is not None and obs.modules:  # memory accounting: the step's allocations
                out = obs.run_step(lambda _, a, k: func(*a, **k), self, args, kwargs)
            else:
                out = func(*args, **kwargs)
            for post_hook in chain(self._optimizer_step_post_hooks.values(),
                                   _global_optimizer_post_hooks.values()):
                post_hook(self, args, kwargs)
            return out
        wrapper.__name__, wrapper.__qualname__ = func.__name__, func.__qualname__
        wrapper.__doc__, wrapper.__wrapped__ = func.__doc__, func
        return wrapper

    def _patch_step_function(self):
        """Wrap the class's ``step`` with the hook runner once (as PyTorch does on the
        first instance, so user subclasses get hooks too)."""
        cls = self.__class__
        if not getattr(cls.step, "hooked", False):
            cls.step = self.profile_hook_step(cls.step)
            cls.step.hooked = True

    def register_step_pre_hook(self, hook):
        """``hook(optimizer, args, kwargs)`` runs before ``step``; it may return new
        ``(args, kwargs)``. Returns a handle with ``remove()``."""
        handle = RemovableHandle(self._optimizer_step_pre_hooks)
        self._optimizer_step_pre_hooks[handle.id] = hook
        return handle

    def register_step_post_hook(self, hook):
        """``hook(optimizer, args, kwargs)`` runs after ``step``."""
        handle = RemovableHandle(self._optimizer_step_post_hooks)
        self._optimizer_step_post_hooks[handle.id] = hook
        return handle

    def register_state_dict_pre_hook(self, hook, prepend=False):
        """``hook(optimizer)`` runs before ``state_dict`` builds the dict."""
        return _register(self._optimizer_state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(self, hook, prepend=False):
        """``hook(optimizer, state_dict)`` runs on the built dict; it may return another."""
        return _register(self._optimizer_state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(self, hook, prepend=False):
        """``hook(optimizer, state_dict)`` runs before loading; it may return another dict."""
        return _register(self._optimizer_load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(self, hook, prepend=False):
        """``hook(optimizer)`` runs after loading."""
        return _register(self._optimizer_load_state_dict_post_hooks, hook, prepend)

    # ---- state_dict -------------------------------------------------------------------
    def state_dict(self):
        """``{"state": {index: {...}}, "param_groups": [{..., "params": [indices]}]}``:
        parameters are replaced by their index in group order; state values are the live
        state tensors (not copies), as in PyTorch."""
        for pre_hook in self._optimizer_state_dict_pre_hooks.values():
            pre_hook(self)
        param_mappings = {}
        start_index = 0

        def pack_group(group):
            nonlocal start_index
            packed = {k: v for k, v in group.items() if k != "params"}
            param_mappings.update({id(p): i for i, p in enumerate(group["params"], start_index)
                                   if id(p) not in param_mappings})
            packed["params"] = [param_mappings[id(p)] for p in group["params"]]
            start_index += len(packed["params"])
            return packed

        param_groups = [pack_group(g) for g in self.param_groups]
        packed_state = {(param_mappings[id(k)] if isinstance(k, Tensor) else k): v
                        for k, v in self.state.items()}
        state_dict = {"state": packed_state, "param_groups": param_groups}
        for post_hook in self._optimizer_state_dict_post_hooks.values():
            result = post_hook(self, state_dict)
            if result is not None:
                state_dict = result
        return state_dict

    def load_state_dict(self, state_dict):
        """Load a dict from :meth:`state_dict` (this optimizer's, or PyTorch's with its
        tensors given as retrograd tensors, NumPy arrays or anything NumPy can read).

        State tensors are cast to their parameter's dtype, except ``step``; retrograd
        tensors of the right dtype are taken as they are (shared, as PyTorch shares),
        other arrays are copied into new tensors.
        """
        state_dict = state_dict.copy()
        for pre_hook in self._optimizer_load_state_dict_pre_hooks.values():
            result = pre_hook(self, state_dict)
            if result is not None:
                state_dict = result
        groups = self.param_groups
        saved_groups = deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"])
               for g, s in zip(groups, saved_groups, strict=True)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match "
                             "the size of optimizer's group")
        id_map = dict(zip(chain.from_iterable(g["params"] for g in saved_groups),
                          chain.from_iterable(g["params"] for g in groups), strict=True))
        state = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                state[param] = _cast(param, v)
            else:
                state[k] = v

        def update_group(group, new_group):
            new_group["params"] = group["params"]
            if "param_names" in group and "param_names" not in new_group:
                new_group["param_names"] = group["param_names"]
            return new_group

        param_groups = [update_group(g, ng) for g, ng in zip(groups, saved_groups, strict=True)]
        self.__setstate__({"state": state, "param_groups": param_groups})
        for post_hook in self._optimizer_load_state_dict_post_hooks.values():
            post_hook(self)

    # ---- gradients and groups ---------------------------------------------------------
    def zero_grad(self, set_to_none=True):
        """Reset the gradients: to None (the default), or to zeros in place."""
        for group in self.param_groups:
            for p in group["params"]:
                g = p._grad
                if g is None:
                    continue
                if set_to_none:
                    p._grad = None
                else:
                    if g._grad_fn is not None:
                        g.detach_()
                    else:
                        g._requires_grad = False
                    g._data.fill(0)
                    g._vc[0] += 1

    def step(self, closure=None):
        """Perform one optimization step; ``closure`` re-evaluates the loss."""
        raise NotImplementedError

    def add_param_group(self, param_group):
        """Add a group of parameters with its own options (the others from defaults)."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, "
                            "but the ordering of tensors in sets will change between runs. "
                            "Please use a list instead.")
        else:
            param_group["params"] = list(params)
        tensors, names = [], []
        for param in param_group["params"]:
            if isinstance(param, tuple):
                names.append(param[0])
                tensors.append(param[1])
            else:
                tensors.append(param)
        param_group["params"] = tensors
        if names:
            if len(names) != len(tensors):
                raise ValueError("all optimizer params should be with/without names. Some "
                                 "param names are missing")
            param_group["param_names"] = names
        for param in tensors:
            if not isinstance(param, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                + _typename(param))
            if not self.defaults.get("differentiable", None) and not (
                    param.is_leaf or param.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(f"parameter group didn't specify a value of required "
                                 f"optimization parameter {name}")
            param_group.setdefault(name, default)
        if len(tensors) != len(set(tensors)):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in "
                          "future, this will cause an error; see "
                          "github.com/pytorch/pytorch/issues/40967 for more information",
                          stacklevel=3)
        param_set = set()
        for group in self.param_groups:
            param_set.update(group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                which = "with names" if "param_names" in param_group else "without names"
                raise ValueError(f"all optimizer param groups should be with/without names. "
                                 f"cannot add param group {which} to the optimizer")
        if not param_set.isdisjoint(tensors):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    # ---- the update machinery of the built-in optimizers --------------------------------
    def _init_state(self, p, group):
        """The state of ``p``, made on its first update."""
        return self.state[p]

    def _step_param(self, p, group):
        """Update one parameter from its ``.grad``: what ``step`` does for each parameter
        of ``group`` with a gradient, callable alone (fusing the update into backward)."""
        obs = _observe.engine
        if obs is not None and obs.modules:  # memory accounting: the update's allocations
            obs.run_step(_update_param, self, (p, group), {})
        else:
            self._update_one(p, group)

    def _update_one(self, p, group):
        """``_step_param`` as nothing watches it."""
        _check_parameters_writeable((p,))
        state = self._init_state(p, group)
        _on_its_device(self._update, p, p._grad, state, group)
        if _observe.alloc is not None:  # state loaded, or made outside _new_state
            _observe.alloc.optimizer_state((state,))

    def _run_step(self, closure):
        """``step`` of the built-in optimizers: the per-parameter update, without
        recording a graph, for each parameter with a gradient."""
        loss = None
        if closure is not None:
            with grad_mode.enable_grad():
                loss = closure()
        gm = grad_mode.state
        prev, gm.enabled = gm.enabled, False
        try:
            update = self._update
            groups = [(group, params) for group in self.param_groups
                      if (params := [p for p in group["params"] if p._grad is not None])]
            for group, params in groups:  # (no parameter changes before all are checked)
                self._check_group(group)
                _check_parameters_writeable(params)
            for group, params in groups:
                states = [self._init_state(p, group) for p in params]
                if group.get("foreach") is not False and not group.get("fused") \
                        and _use_threads(params):
                    futures = [_get_pool().submit(_on_its_device, update, p, p._grad, s, group)
                               for p, s in zip(params, states, strict=True)]
                    for f in futures:
                        f.result()
                else:
                    for p, s in zip(params, states, strict=True):
                        _on_its_device(update, p, p._grad, s, group)
                if _observe.alloc is not None:  # state loaded, or made outside _new_state
                    _observe.alloc.optimizer_state(states)
        finally:
            gm.enabled = prev
        return loss

    def _check_group(self, group):
        """Reject options retrograd does not implement, before any parameter changes."""
        if group.get("differentiable"):
            raise NotImplementedError(f"{type(self).__name__}: differentiable=True (autograd "
                                      f"through the step) is not supported by retrograd")
        if group.get("capturable"):
            raise AssertionError("If capturable=True, params and state_steps must be on "
                                 "supported devices: ['cuda', 'xpu', 'hpu', 'privateuseone', "
                                 "'xla'].")


def _on_its_device(update, p, grad, state, group):
    """``update`` of parameter ``p`` with ``p``'s device current, so its kernels (a fused
    one too) launch and allocate there, as PyTorch's per-device kernels do."""
    guard = device_guard(p._data)
    if guard is None:
        return update(p, grad, state, group)
    with guard:
        return update(p, grad, state, group)


def _register(hooks, hook, prepend):
    handle = RemovableHandle(hooks)
    hooks[handle.id] = hook
    if prepend:
        hooks.move_to_end(handle.id, last=False)
    return handle


def _typename(obj):
    if isinstance(obj, Tensor):
        return {"float32": "torch.FloatTensor", "float64": "torch.DoubleTensor"}.get(
            obj._data.dtype.name, "torch.Tensor")
    t = type(obj)
    return t.__qualname__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"


def _cast(param, value, key=None):
    """A loaded state value for ``param``: tensors and arrays become tensors on the
    parameter's device, of its dtype (``step`` keeps its own dtype and device, as in
    PyTorch), containers are converted through."""
    if isinstance(value, Tensor) or _is_array(value):
        t = value if isinstance(value, Tensor) else wrap(numpy.array(value))  # (interop)
        if key == "step":
            return t
        if t.device != param.device:
            t = t.to(param.device)
        if not param.is_floating_point():
            return t
        dt = param._data.dtype
        return t if t._data.dtype == dt else wrap(t._data.astype(dt))
    if isinstance(value, dict):
        return {k: _cast(param, v, k) for k, v in value.items()}
    if isinstance(value, Iterable) and not isinstance(value, str):
        return type(value)(_cast(param, v) for v in value)
    return value


def _is_array(value):
    """A foreign array (NumPy's, PyTorch's, ...): readable through ``__array__``."""
    return hasattr(value, "__array__") and hasattr(value, "shape") and hasattr(value, "dtype")
