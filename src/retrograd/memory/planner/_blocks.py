"""The units a plan checkpoints: a model's repeated blocks (a transformer's layers, a
ResNet's bottlenecks), found from the module tree alone.

A block is a submodule with children whose class occurs at least twice, and that sits
inside no other such module; modules of the plain containers (``Sequential``,
``ModuleList``, ``ModuleDict``) count only when no other class repeats, so a ResNet's
stages give way to their bottlenecks, and an MLP of ``Sequential`` layers still has
blocks."""

from collections import Counter

from ...nn.modules.container import ModuleDict, ModuleList, Sequential

__all__ = ["find_blocks"]

_CONTAINERS = (Sequential, ModuleList, ModuleDict)


def _outermost(model, allowed):
    named = [(p, m) for p, m in model.named_modules() if p and next(m.children(), None)
             is not None and type(m) not in (ModuleList, ModuleDict)]
    counts = Counter(type(m) for _, m in named)
    chosen = []
    for path, m in named:
        if counts[type(m)] < 2 or not allowed(m):
            continue
        if not any(path.startswith(c + ".") for c in chosen):
            chosen.append(path)
    return chosen


def find_blocks(model):
    """Paths of ``model``'s blocks, in ``named_modules`` order."""
    return (_outermost(model, lambda m: type(m) not in _CONTAINERS)
            or _outermost(model, lambda m: True))
