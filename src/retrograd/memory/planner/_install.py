"""Putting a plan's choices on a model and its optimizer, and taking them off: the same
code for the dry runs that predict a plan and for the user's model, so what was
predicted is what runs.

Each choice wraps a module's ``forward`` in an instance attribute, so the module's
parameters, ``state_dict`` keys and hooks stay as they were (PyTorch's
``checkpoint_wrapper`` adds a wrapper module instead); removing restores the attribute."""

import dataclasses

from ...autograd.graph import save_on_disk
from ...optim.in_backward import fuse_into_backward
from ...utils.checkpoint import checkpoint

__all__ = ["Choice", "install", "is_installed"]

_MISSING = object()


@dataclasses.dataclass(frozen=True)
class Choice:
    """One candidate plan: ``fuse`` the optimizer into backward; ``checkpoint`` these
    modules (paths), recomputing their activations in backward; ``offload`` the
    activations saved outside them (``"disk"``, or None)."""

    fuse: bool = False
    checkpoint: tuple = ()
    offload: str = None

    def describe(self, blocks=None):
        parts = ["optimizer in backward"] if self.fuse else []
        if self.checkpoint:
            n = "" if blocks is None else f"/{blocks}"
            parts.append(f"checkpoint {len(self.checkpoint)}{n} blocks")
        if self.offload:
            parts.append(f"offload to {self.offload}")
        return " + ".join(parts) or "as is"


class Installed:
    """A :class:`Choice` put on a model; ``remove()`` takes it off (once)."""

    def __init__(self):
        self._undo = []

    def remove(self):
        while self._undo:
            self._undo.pop()()


def _wrap_forward(module, make, installed):
    previous = module.__dict__.get("forward", _MISSING)
    module.forward = make(module.forward)
    module.forward.installed_by_planner = True

    def undo():
        if previous is _MISSING:
            del module.forward
        else:
            module.forward = previous
    installed._undo.append(undo)


def _checkpointed(forward):
    def run(*args, **kwargs):
        return checkpoint(forward, *args, use_reentrant=False, **kwargs)
    return run


def _offloaded(directory, min_bytes):
    def make(forward):
        def run(*args, **kwargs):
            with save_on_disk(directory, min_bytes):
                return forward(*args, **kwargs)
        return run
    return make


def is_installed(model):
    """Whether a plan's wrappers are on ``model`` or one of its modules."""
    return any(getattr(m.__dict__.get("forward"), "installed_by_planner", False)
               for m in model.modules())


def install(choice, model, optimizer, *, offload_dir=None, offload_min_bytes=4096):
    """Put ``choice`` on ``model`` and ``optimizer``; returns the :class:`Installed`."""
    installed = Installed()
    try:
        for path in choice.checkpoint:
            _wrap_forward(model.get_submodule(path), _checkpointed, installed)
        if choice.offload == "disk":
            _wrap_forward(model, _offloaded(offload_dir, offload_min_bytes), installed)
        elif choice.offload is not None:
            raise ValueError(f"offload must be 'disk' or None, got {choice.offload!r}")
        if choice.fuse:
            installed._undo.append(fuse_into_backward(optimizer).remove)
    except BaseException:
        installed.remove()
        raise
    return installed
