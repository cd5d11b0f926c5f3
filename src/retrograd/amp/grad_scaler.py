"""Gradient scaling: PyTorch's ``torch.amp.GradScaler``.

A float16 loss's small gradients underflow to zero; multiplying the loss by a large
scale keeps them representable, and the gradients are divided by it again before the
step. When a scaled gradient overflows (inf/NaN), the step is skipped and the scale
backs off; after ``growth_interval`` clean steps in a row it grows. The scale and the
growth tracker are 0-d tensors (float32 and int32) as in PyTorch, so ``state_dict`` and
the trajectory match it step for step.

With the optimizer fused into backward (:func:`retrograd.optim.fuse_into_backward`),
each parameter is updated inside backward, before the last gradient, and so the
inf/NaN verdict, exists. Fused with ``grad_scaler=scaler``, the handle runs a check pass
first (each gradient unscaled and tested) and then updates or skips every parameter;
:meth:`GradScaler.step` then records the step as taken and :meth:`update` reads the
verdict. An optimizer fused without the scaler is refused with a RuntimeError rather
than updated from overflowed gradients.
"""

import collections
import collections.abc
import enum
import warnings

from .. import _creation, cuda
from ..autograd import grad_mode
from .._tensor import Tensor
from .._dtype import float16, float32, int32
from ..optim.in_backward import active_handles

__all__ = ["GradScaler", "OptState"]


class OptState(enum.Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _refresh_per_optimizer_state():
    return {"stage": OptState.READY, "found_inf_per_device": {}}


class GradScaler:
    """Scale the loss, unscale and check the gradients, skip steps that overflowed.

    >>> scaler = GradScaler("cpu")
    >>> scaler.scale(loss).backward()      # doctest: +SKIP
    >>> scaler.step(optimizer)             # doctest: +SKIP
    >>> scaler.update()                    # doctest: +SKIP
    """

    def __init__(self, device="cuda", init_scale=2.0**16, growth_factor=2.0,
                 backoff_factor=0.5, growth_interval=2000, enabled=True):
        self._device = device
        self._enabled = enabled
        if device == "cuda" and enabled and not cuda.is_available():
            warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  "
                          "Disabling.", stacklevel=2)
            self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
            self._init_scale = init_scale
            self._scale = None
            self._growth_factor = growth_factor
            self._backoff_factor = backoff_factor
            self._growth_interval = growth_interval
            self._init_growth_tracker = 0
            self._growth_tracker = None
            self._per_optimizer_states = collections.defaultdict(_refresh_per_optimizer_state)

    def _check_scale_growth_tracker(self, funcname):
        fix = ("This may indicate your script did not use scaler.scale(loss or outputs) "
               "earlier in the iteration.")
        if self._scale is None:
            raise AssertionError(f"Attempted {funcname} but _scale is None.  " + fix)
        if self._growth_tracker is None:
            raise AssertionError(f"Attempted {funcname} but _growth_tracker is None.  " + fix)
        return self._scale, self._growth_tracker

    def _lazy_init_scale_growth_tracker(self, dev):
        self._scale = _creation.full((), self._init_scale, dtype=float32, device=dev)
        self._growth_tracker = _creation.full((), self._init_growth_tracker, dtype=int32,
                                              device=dev)

    def scale(self, outputs):
        """``outputs`` (a tensor, or an iterable of them, nested) times the scale."""
        if not self._enabled:
            return outputs

        def apply_scale(val):
            if isinstance(val, Tensor):
                if self._scale is None:
                    self._lazy_init_scale_growth_tracker(val.device)
                return val * self._scale.to(device=val.device)
            if isinstance(val, collections.abc.Iterable):
                scaled = map(apply_scale, val)
                return type(val)(scaled) if isinstance(val, (list, tuple)) else scaled
            raise ValueError("outputs must be a Tensor or an iterable of Tensors")
        return apply_scale(outputs)

    def _unscale_grads_(self, optimizer, inv_scale, allow_fp16):
        """Multiply each gradient by ``inv_scale`` in place; per device, a 0-d float32
        tensor that is 1.0 when some gradient there held an inf or NaN."""
        found = {}
        with grad_mode.no_grad():
            for group in optimizer.param_groups:
                for param in group["params"]:
                    if not isinstance(param, Tensor):
                        raise AssertionError("expected param to be torch.Tensor, got "
                                             f"{type(param).__name__}")
                    grad = param.grad
                    if grad is None:
                        continue
                    if not allow_fp16 and grad.dtype is float16:
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    dev = grad.device
                    if dev not in found:
                        found[dev] = _creation.full((), 0.0, dtype=float32, device=dev)
                    if not bool(grad.isfinite().all()):
                        found[dev].fill_(1.0)
                    grad.mul_(inv_scale.to(device=dev))
        return found

    def _fused(self, optimizer):
        """Whether ``optimizer`` is fused into backward with this scaler; one fused
        without it is refused (its updates ran before any inf/NaN check)."""
        for h in active_handles():
            if h.optimizer is optimizer:
                if h.grad_scaler is self:
                    return True
                raise RuntimeError(
                    "GradScaler cannot unscale or skip the step of an optimizer fused into "
                    "backward without it: its parameters were already updated during "
                    "backward, before the inf/NaN check could run. Fuse with "
                    "fuse_into_backward(optimizer, grad_scaler=scaler), or train in "
                    "bfloat16, which needs no gradient scaling.")
        return False

    def _fused_checked(self, optimizer, found_inf, device):
        """The fused handle's check pass is over: ``optimizer``'s gradients were unscaled
        and checked (``found_inf``), and its stepping pass updates or skips."""
        state = self._per_optimizer_states[id(optimizer)]
        state["found_inf_per_device"] = {
            device: _creation.full((), float(found_inf), dtype=float32, device=device)}
        state["stage"] = OptState.UNSCALED

    def unscale_(self, optimizer):
        """Divide ``optimizer``'s gradients by the scale in place and note infs/NaNs;
        once per optimizer per :meth:`update`."""
        if not self._enabled:
            return
        self._check_scale_growth_tracker("unscale_")
        if self._fused(optimizer):
            raise RuntimeError("unscale_() has nothing to unscale for an optimizer fused "
                               "into backward: its handle unscales each gradient in "
                               "backward (clip with fuse_into_backward(clip_grad_norm=...))")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since "
                               "the last update().")
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        inv_scale = self._scale.double().reciprocal().float()
        state["found_inf_per_device"] = self._unscale_grads_(optimizer, inv_scale, False)
        state["stage"] = OptState.UNSCALED

    def step(self, optimizer, *args, **kwargs):
        """Unscale (unless :meth:`unscale_` did) and run ``optimizer.step`` unless some
        gradient was inf/NaN; returns what that step returned (None when skipped)."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is "
                               "enabled.")
        self._check_scale_growth_tracker("step")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if self._fused(optimizer):  # updated, or skipped, in backward
            if state["stage"] is OptState.READY:
                raise RuntimeError("step() of an optimizer fused into backward came before "
                                   "the backward pass that steps it")
            state["stage"] = OptState.STEPPED
            return None
        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        if not state["found_inf_per_device"]:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        retval = None
        if not sum(v.item() for v in state["found_inf_per_device"].values()):
            retval = optimizer.step(*args, **kwargs)
        state["stage"] = OptState.STEPPED
        return retval

    def update(self, new_scale=None):
        """Back the scale off if any step this iteration was skipped, grow it after
        ``growth_interval`` clean steps in a row; or set it to ``new_scale``."""
        if not self._enabled:
            return
        scale, tracker = self._check_scale_growth_tracker("update")
        if new_scale is not None:
            if isinstance(new_scale, float):
                scale.fill_(new_scale)
            else:
                reason = ("new_scale should be a float or a 1-element torch.cuda.FloatTensor or "
                          "torch.FloatTensor with requires_grad=False.")
                if new_scale.device.type != self._device or new_scale.numel() != 1 or \
                        new_scale.requires_grad is True:
                    raise AssertionError(reason)
                scale.copy_(new_scale.reshape(()))
        else:
            found_infs = [f.to(device=scale.device)
                          for state in self._per_optimizer_states.values()
                          for f in state["found_inf_per_device"].values()]
            if not found_infs:
                raise AssertionError("No inf checks were recorded prior to update.")
            self._update_scale(scale, tracker, sum(f.item() for f in found_infs))
        self._per_optimizer_states = collections.defaultdict(_refresh_per_optimizer_state)

    def _update_scale(self, scale, tracker, found_inf):
        """PyTorch's ``_amp_update_scale_``: the scale stays float32, and grows only to a
        finite value."""
        with grad_mode.no_grad():
            if found_inf:
                scale.mul_(self._backoff_factor)
                tracker.fill_(0)
                return
            successful = int(tracker.item()) + 1
            if successful == self._growth_interval:
                grown = scale * self._growth_factor
                if bool(grown.isfinite()):
                    scale.copy_(grown)
                tracker.fill_(0)
            else:
                tracker.fill_(successful)

    def get_scale(self):
        """The current scale as a Python float (1.0 when disabled)."""
        if self._enabled:
            return self._init_scale if self._scale is None else self._scale.item()
        return 1.0

    def get_growth_factor(self):
        return self._growth_factor

    def set_growth_factor(self, new_factor):
        self._growth_factor = new_factor

    def get_backoff_factor(self):
        return self._backoff_factor

    def set_backoff_factor(self, new_factor):
        self._backoff_factor = new_factor

    def get_growth_interval(self):
        return self._growth_interval

    def set_growth_interval(self, new_interval):
        self._growth_interval = new_interval

    def _get_growth_tracker(self):
        if self._enabled:
            return (self._init_growth_tracker if self._growth_tracker is None
                    else int(self._growth_tracker.item()))
        return 0

    def is_enabled(self):
        return self._enabled

    def state_dict(self):
        """scale, growth_factor, backoff_factor, growth_interval, _growth_tracker ({} when
        disabled)."""
        if self._enabled:
            return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                    "backoff_factor": self._backoff_factor,
                    "growth_interval": self._growth_interval,
                    "_growth_tracker": self._get_growth_tracker()}
        return {}

    def load_state_dict(self, state_dict):
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        self._init_scale = state_dict["scale"]
        if self._scale is not None:
            self._scale.fill_(state_dict["scale"])
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._init_growth_tracker = state_dict["_growth_tracker"]
        if self._growth_tracker is not None:
            self._growth_tracker.fill_(state_dict["_growth_tracker"])

    def __getstate__(self):
        state = self.__dict__.copy()
        if self._enabled:
            if len(self._per_optimizer_states) != 0:
                raise AssertionError("A GradScaler instance may only be pickled at the "
                                     "beginning of an iteration, or at the end after "
                                     "scaler.update().")
            state["_init_scale"] = self.get_scale()
            state["_init_growth_tracker"] = self._get_growth_tracker()
            state["_scale"] = None
            state["_growth_tracker"] = None
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
