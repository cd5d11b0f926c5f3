"""``functorch``: the function transforms under their pre-2.0 names, and its deprecated
``make_functional`` family, for older code (``import functorch`` under
``python -m retrograd run``, or ``import retrograd._functorch as functorch``).

>>> fmodel, params = make_functional(nn.Linear(3, 2))
>>> fmodel(params, x)
"""

import copy
import warnings

from . import nn
from .func import (functional_call, grad, grad_and_value, hessian, jacfwd, jacrev, jvp,
                   stack_module_state, vjp, vmap)

__all__ = ["vmap", "grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian",
           "make_functional", "make_functional_with_buffers", "combine_state_for_ensemble",
           "FunctionalModule", "FunctionalModuleWithBuffers"]


def _deprecated(name):
    warnings.warn(f"We've integrated functorch into PyTorch. As the final step of the "
                  f"integration, `functorch.{name}` is deprecated as of PyTorch 2.0 and will be "
                  f"deleted in a future version of PyTorch >= 2.3. Please use "
                  f"`torch.func.functional_call` instead; see the PyTorch 2.0 release notes "
                  f"and/or the `torch.func` migration guide for more details "
                  f"https://pytorch.org/docs/main/func.migrating.html", FutureWarning,
                  stacklevel=3)


class FunctionalModule(nn.Module):
    """A copy of a module called with its parameters given: ``fmodel(params, *args)``."""

    def __init__(self, stateless_model, param_names):
        super().__init__()
        self.stateless_model = stateless_model
        self.param_names = param_names

    def forward(self, params, *args, **kwargs):
        return functional_call(self.stateless_model, dict(zip(self.param_names, params,
                                                             strict=True)), args, kwargs)


class FunctionalModuleWithBuffers(nn.Module):
    """``fmodel(params, buffers, *args)``: parameters and buffers given."""

    def __init__(self, stateless_model, param_names, buffer_names):
        super().__init__()
        self.stateless_model = stateless_model
        self.param_names = param_names
        self.buffer_names = buffer_names

    def forward(self, params, buffers, *args, **kwargs):
        values = dict(zip(self.param_names, params, strict=True))
        values.update(zip(self.buffer_names, buffers, strict=True))
        return functional_call(self.stateless_model, values, args, kwargs)


def _state(model, disable_autograd_tracking):
    copied = copy.deepcopy(model)
    named = list(copied.named_parameters())
    params = tuple(p.detach() if disable_autograd_tracking else p for _, p in named)
    return copied, tuple(n for n, _ in named), params


def make_functional(model, disable_autograd_tracking=False):
    """``(fmodel, params)``: a copy of ``model`` as a function of its parameters."""
    _deprecated("make_functional")
    if list(model.buffers()):
        raise RuntimeError("make_functional(model): `model` has buffers. Please use "
                           "make_functional_with_buffers(model) instead.")
    copied, names, params = _state(model, disable_autograd_tracking)
    return FunctionalModule(copied, names), params


def make_functional_with_buffers(model, disable_autograd_tracking=False):
    """``(fmodel, params, buffers)``: a copy of ``model`` as a function of its state."""
    _deprecated("make_functional_with_buffers")
    copied, names, params = _state(model, disable_autograd_tracking)
    named = list(copied.named_buffers())
    return (FunctionalModuleWithBuffers(copied, names, tuple(n for n, _ in named)), params,
            tuple(b for _, b in named))


def combine_state_for_ensemble(models):
    """``(fmodel, params, buffers)`` of models of one class, stacked for ``vmap``."""
    _deprecated("combine_state_for_ensemble")
    if len(models) == 0:
        raise RuntimeError("combine_state_for_ensemble: Expected at least one model, got 0.")
    params, buffers = stack_module_state(models)
    copied = copy.deepcopy(models[0])
    fmodel = FunctionalModuleWithBuffers(copied, tuple(params), tuple(buffers))
    return (fmodel, tuple(p.detach() for p in params.values()), tuple(buffers.values()))
