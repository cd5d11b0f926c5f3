"""The model, optimizer and batch a dry run steps: copies, so the user's own are never
touched. On ``meta`` (the default) they have shapes and no data, so a step of a model
too big for this machine costs no memory; ``real`` clones them on their device, for
models with ops that need values (boolean masks, ``nonzero``)."""

import copy
import inspect

from ... import _observe
from ...nn.parameter import Parameter
from ...optim.optimizer import Optimizer
from ..._tensor import Tensor
from ..._vmap._pytree import tree_flatten, tree_unflatten

__all__ = ["shadow", "map_tensors"]


def map_tensors(tree, fn):
    """``tree`` (a pytree, as vmap's) with ``fn`` applied to each tensor."""
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([fn(x) if isinstance(x, Tensor) else x for x in leaves], spec)


def _converter(where):
    if where == "meta":
        return lambda t: t.detach().to("meta")
    return lambda t: t.detach().clone()


def _copy_optimizer(optimizer, memo, convert):
    """The optimizer over the copied parameters, with the same options and its state."""
    groups = [{**{k: v for k, v in g.items() if k != "params"},
               "params": [memo[id(p)] for p in g["params"]]} for g in optimizer.param_groups]
    accepted = inspect.signature(type(optimizer)).parameters
    defaults = {k: v for k, v in optimizer.defaults.items() if k in accepted}
    try:
        twin = type(optimizer)(groups, **defaults)
    except TypeError as e:
        raise TypeError(f"the memory planner copies the optimizer as "
                        f"{type(optimizer).__name__}(param_groups, **defaults), which "
                        f"failed: {e}") from None
    for p, state in optimizer.state.items():  # "step" stays where it is, as PyTorch's
        twin.state[memo[id(p)]] = {   # load_state_dict keeps it (on the host)
            k: convert(v) if isinstance(v, Tensor) and k != "step" else copy.deepcopy(v)
            for k, v in state.items()}
    if _observe.alloc is not None and twin.state:  # booked as the original's: its state
        _observe.alloc.optimizer_state(twin.state.values())
    return twin


def shadow(model, optimizer, inputs, where):
    """``(model, optimizer, inputs)`` copied for a dry run ``where`` ("meta" or "real"):
    the same modules, hooks, options, optimizer state and training mode, with the
    tensors on meta or cloned (a meta tensor is not copied: it holds nothing)."""
    if not isinstance(optimizer, Optimizer):
        raise TypeError(f"optimizer must be an Optimizer, got {type(optimizer).__name__}")
    convert = _converter(where)
    memo = {}
    for t in (*model.parameters(), *model.buffers()):
        if id(t) not in memo:
            c = convert(t)
            memo[id(t)] = Parameter(c, t.requires_grad) if isinstance(t, Parameter) else c
    for g in optimizer.param_groups:
        for p in g["params"]:
            if id(p) not in memo:
                raise ValueError("the optimizer holds a parameter that is not the model's: "
                                 "plan the model whose parameters it updates")
    twin = copy.deepcopy(model, memo)
    return twin, _copy_optimizer(optimizer, memo, convert), map_tensors(inputs, convert)
