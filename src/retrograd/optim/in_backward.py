"""Fusing an ordinary optimizer's step into backward.

PyTorch's recipe (the optimizer-in-backward tutorial, ``_apply_optimizer_in_backward``)
makes one optimizer per parameter and steps it from a post-accumulate-grad hook, which
breaks LR schedulers, ``state_dict`` and gradient accumulation. :func:`fuse_into_backward`
keeps the one optimizer: each parameter's hook runs that optimizer's own per-parameter
update (:meth:`Optimizer._step_param`, the unit ``step()`` runs, so results are
bit-identical) with the group's current options, then frees the gradient. Schedulers keep
writing ``param_groups[i]["lr"]``, which the next in-backward updates read, and
``state_dict``/``load_state_dict`` see the same state ``step()`` would have built.
"""

import math
import types
import weakref

from ..autograd import grad_mode
from ..backend import get_array_module
from ..autograd.engine import current_graph_task
from .optimizer import Optimizer

__all__ = ["fuse_into_backward"]

_active = weakref.WeakSet()  # the handles not removed (DDP takes over their hooks)


def active_handles():
    """The :class:`FusedBackwardHandle` objects whose optimizers are fused now."""
    return [h for h in list(_active) if h.active]


def _fused_step(self, closure=None):
    """``step`` while fused: the parameters were already updated in backward, so this
    only evaluates ``closure`` (whose backward then updates them) and returns its loss."""
    self._opt_called = True
    if closure is not None:
        with grad_mode.enable_grad():
            return closure()
    return None


# It notes the call as an LR scheduler's wrapper would, so schedulers do not re-wrap it
# nor warn that ``step`` was overridden.
_fused_step._wrapped_by_lr_sched = True


def _fused_zero_grad(self, set_to_none=True):
    """``zero_grad`` while fused: gradients are freed by the in-backward updates, and a
    reset between micro-batches would lose the accumulation, so this does nothing."""


class FusedBackwardHandle:
    """What :func:`fuse_into_backward` returns: ``remove()`` undoes the fusing;
    ``backward(loss)`` runs the backward pass(es) one micro-batch needs. A caller that
    knows better when a gradient is final (DDP: once averaged over the ranks) takes
    parameters over with ``hand_over(params)`` and calls ``grad_ready(p)`` itself."""

    def __init__(self, optimizer, accumulate_steps, clip_grad_norm, grad_scaler):
        self.optimizer = optimizer
        self.accumulate_steps = accumulate_steps
        self.clip_grad_norm = clip_grad_norm
        self.grad_scaler = grad_scaler if grad_scaler is not None and \
            grad_scaler.is_enabled() else None
        # Backward passes of one optimizer step: the micro-batches, and with clipping or
        # a scaler one more pass (the last micro-batch's check pass, then its stepping
        # pass).
        self._checks = clip_grad_norm is not None or self.grad_scaler is not None
        self._cycle = accumulate_steps + self._checks
        self._pass = 0        # passes seen in the current cycle
        self._task_id = None  # the backward those passes were last counted in
        self._sq_norms = []   # squared norms of the (unscaled) gradients of the check pass
        self._found_inf = False  # the check pass met an inf or NaN gradient
        self._inv_scale = None   # the scaler's 1/scale (float32 0-d array) for this step
        self._grad_device = None
        self._clip_coef = 1.0
        self._stash = {}      # param -> gradient accumulated before the check pass
        d = optimizer.__dict__
        self._saved = {name: d[name] for name in ("step", "zero_grad") if name in d}
        self._group_of = {p: i for i, g in enumerate(optimizer.param_groups)
                          for p in g["params"]}
        self._handles = []
        self._post_handles = {}  # param -> its post-accumulate hook, until handed over
        for p in self._group_of:
            if self._checks:
                self._handles.append(p.register_hook(self._pre_hook(p)))
            h = self._post_handles[p] = p.register_post_accumulate_grad_hook(self.grad_ready)
            self._handles.append(h)
        optimizer.step = types.MethodType(_fused_step, optimizer)
        optimizer.zero_grad = types.MethodType(_fused_zero_grad, optimizer)
        optimizer._fused_into_backward = self
        _active.add(self)

    @property
    def active(self):
        """Whether the optimizer is still fused (``remove()`` not called)."""
        return self.optimizer.__dict__.get("_fused_into_backward") is self

    def hand_over(self, params):
        """Of ``params``, those this handle updates and still hooks itself: their hooks
        are removed and returned, and the caller calls :meth:`grad_ready` for each
        instead, once that gradient is final (DDP: once its bucket is averaged)."""
        taken = [p for p in params if p in self._post_handles]
        for p in taken:
            self._post_handles.pop(p).remove()
        return taken

    # ---- which pass is this -----------------------------------------------------------
    def _phase(self):
        """``"accumulate"``, ``"check"`` or ``"step"`` for the running backward (the first
        hook of a new backward advances the count)."""
        task = current_graph_task()
        if task is None:
            raise RuntimeError("grad_ready() must be called during the backward pass that "
                               "produced the gradient (from a hook or an engine callback)")
        tid = task.id
        if tid != self._task_id:
            self._task_id = tid
            self._pass = self._pass % self._cycle + 1
            if self._pass == self._cycle - 1 and self._checks:
                self._begin_checks()
            elif self._pass == self._cycle and self._checks:
                self._end_checks()
        if self._pass == self._cycle:
            return "step"
        if self._pass == self._cycle - 1 and self._checks:
            return "check"
        return "accumulate"

    def _begin_checks(self):
        self._sq_norms = []
        self._found_inf = False
        self._grad_device = None
        if self.grad_scaler is not None:
            scale, _ = self.grad_scaler._check_scale_growth_tracker("step")
            self._inv_scale = scale.double().reciprocal().float()._data

    def _end_checks(self):
        """The check pass is over: the clip coefficient, and the scaler's inf verdict
        (the optimizer counts as unscaled, so ``scaler.step`` and ``update`` read it)."""
        if self.clip_grad_norm is not None:
            total = math.sqrt(math.fsum(self._sq_norms))
            self._clip_coef = min(self.clip_grad_norm / (total + 1e-6), 1.0)
        if self.grad_scaler is not None:
            self.grad_scaler._fused_checked(self.optimizer, self._found_inf,
                                            self._grad_device)

    def _pre_hook(self, p):
        def hook(grad):
            if self._phase() == "check":  # check this pass's sum apart from the earlier ones
                self._stash[p] = p._grad
                p._grad = None
        return hook

    def grad_ready(self, p):
        """``p``'s gradient for this backward is in ``.grad``: update ``p`` now (in the
        pass that steps), or note it (accumulation, the check pass). Called inside that
        backward (a hook, or an engine callback at its end)."""
        phase = self._phase()
        if phase == "accumulate":
            return
        g = p._grad
        if phase == "check":
            earlier = self._stash.pop(p, None)
            parts = [t for t in (earlier, g) if t is not None]  # none: no gradient reached p
            if parts:
                self._check(parts[0]._data if len(parts) == 1 else
                            parts[0]._data + parts[1]._data, parts[0].device)
            p._grad = earlier
            return
        if g is None:  # no gradient reached p (step() too skips it)
            return
        if self._found_inf:  # the scaler skips this step: the gradient is dropped
            p._grad = None
            return
        a = g._data
        if self._inv_scale is not None:  # unscale, as GradScaler.unscale_ (its dtype)
            a *= self._inv_scale.astype(a.dtype)
            g._vc[0] += 1
        if self._clip_coef < 1.0:
            a *= a.dtype.type(self._clip_coef)
            g._vc[0] += 1
        opt = self.optimizer
        group = opt.param_groups[self._group_of[p]]
        opt._check_group(group)
        gm = grad_mode.state
        prev, gm.enabled = gm.enabled, False
        try:
            opt._step_param(p, group)
        finally:
            gm.enabled = prev
        opt._opt_called = True
        p._grad = None

    def _check(self, a, device):
        """One parameter's full gradient in the check pass: unscaled (a copy), tested for
        infs and NaNs, and its squared norm kept for clipping."""
        self._grad_device = self._grad_device or device
        xp = get_array_module(a)
        if self._inv_scale is not None:
            a = a * self._inv_scale.astype(a.dtype)
            if not bool(xp.isfinite(a).all()):
                self._found_inf = True
        if self.clip_grad_norm is not None and not self._found_inf:
            n = float(xp.linalg.norm(a.ravel()))
            self._sq_norms.append(n * n)

    # ---- the user's side ----------------------------------------------------------------
    def backward(self, loss, gradient=None, inputs=None):
        """``loss.backward()`` for one micro-batch: with clipping or a scaler, the
        micro-batch that ends an accumulation runs it twice (a check pass keeping the
        graph, then the stepping pass)."""
        if self._checks and self._pass % self._cycle == self._cycle - 2:
            loss.backward(gradient, retain_graph=True, inputs=inputs)
        loss.backward(gradient, inputs=inputs)

    def remove(self):
        """Restore the optimizer's own ``step`` and ``zero_grad`` and drop the hooks.
        Gradients of an unfinished accumulation stay in ``.grad`` for ``step()``."""
        opt = self.optimizer
        if opt.__dict__.get("_fused_into_backward") is not self:
            return
        for h in self._handles:
            h.remove()
        self._handles = []
        self._post_handles = {}
        _active.discard(self)
        for name in ("step", "zero_grad"):
            if name in self._saved:
                setattr(opt, name, self._saved[name])
            else:
                del opt.__dict__[name]
        del opt._fused_into_backward


def fuse_into_backward(optimizer, *, accumulate_steps=1, clip_grad_norm=None,
                       grad_scaler=None):
    r"""Make ``optimizer``'s step run inside backward, one parameter at a time, as soon as
    that parameter's gradient is accumulated; the gradient is then freed (``.grad`` is
    None), so gradients of the whole model are never held at once.

    While fused, ``optimizer.step()`` and ``optimizer.zero_grad()`` are harmless no-ops
    (``step(closure)`` evaluates the closure, whose backward does the update), so an
    existing training loop keeps working. LR schedulers attached to the optimizer work
    unchanged: they write ``param_groups[i]["lr"]``, which the next in-backward updates
    read. ``state_dict()``/``load_state_dict()`` work as usual. Step hooks of the
    optimizer do not run for in-backward updates, and groups added after fusing are not
    fused.

    ``accumulate_steps=k``: gradients accumulate over k backward passes (micro-batches;
    scale each loss by 1/k as in the usual loop) and the update runs in the k-th, where
    each gradient is freed after its update. A pass counts when it reaches any of the
    optimizer's parameters.

    ``clip_grad_norm=max_norm``: global-norm clipping as ``clip_grad_norm_`` before
    ``step()``. The global norm is only known once every gradient exists, which a fused
    step cannot wait for, so it takes two passes over the last micro-batch: a first
    backward (``retain_graph=True``) only adds up the squared norms (each new gradient is
    dropped as it arrives), a second one updates with the gradients scaled by
    ``max_norm / (norm + 1e-6)`` (when below 1). Cost: one extra backward pass per
    optimizer step. :meth:`FusedBackwardHandle.backward` runs the right passes; by hand,
    the micro-batch ending an accumulation needs ``loss.backward(retain_graph=True)`` then
    ``loss.backward()`` on the same loss (passes are counted, so a lone backward there is
    taken as the norm pass and the next micro-batch's as the stepping pass).

    ``grad_scaler=scaler`` (an ``amp.GradScaler``): mixed-precision loss scaling. Whether
    a step must be skipped (an inf or NaN gradient) is only known once every gradient
    exists, so it takes the same two passes: the first unscales a copy of each gradient
    and checks it (and measures the norm, with clipping), the second updates with the
    unscaled gradients, or, when the first met an inf or NaN, drops every gradient and
    updates nothing. ``scaler.step(optimizer)`` and ``scaler.update()`` then work as in
    the usual loop (the step has happened, or been skipped, in backward).

    Returns a handle whose ``remove()`` restores normal behaviour.

    >>> opt = retrograd.optim.AdamW(model.parameters(), lr=1e-3)
    >>> sched = retrograd.optim.lr_scheduler.StepLR(opt, step_size=10)
    >>> handle = retrograd.optim.fuse_into_backward(opt)
    >>> for x, y in data:
    ...     loss_fn(model(x), y).backward()  # parameters updated here
    ...     sched.step()
    >>> handle.remove()
    """
    if not isinstance(optimizer, Optimizer):
        raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
    reason = getattr(optimizer, "_not_fusable", None)
    if reason is not None:
        raise NotImplementedError(f"{type(optimizer).__name__} cannot be fused into backward: "
                                  f"{reason}")
    if getattr(optimizer, "_update", None) is None \
            and type(optimizer)._step_param is Optimizer._step_param:
        raise NotImplementedError(f"{type(optimizer).__name__} has no per-parameter update "
                                  f"(Optimizer._step_param) to run inside backward")
    if "_fused_into_backward" in optimizer.__dict__:
        raise RuntimeError("this optimizer is already fused into backward; remove() the "
                           "handle first")
    if not isinstance(accumulate_steps, int) or accumulate_steps < 1:
        raise ValueError(f"accumulate_steps must be a positive integer, got "
                         f"{accumulate_steps!r}")
    if clip_grad_norm is not None and not clip_grad_norm > 0:
        raise ValueError(f"clip_grad_norm must be positive, got {clip_grad_norm!r}")
    for group in optimizer.param_groups:
        optimizer._check_group(group)
    if grad_scaler is not None and not hasattr(grad_scaler, "_fused_checked"):
        raise TypeError(f"grad_scaler must be an amp.GradScaler, got "
                        f"{type(grad_scaler).__name__}")
    return FusedBackwardHandle(optimizer, accumulate_steps, clip_grad_norm, grad_scaler)
