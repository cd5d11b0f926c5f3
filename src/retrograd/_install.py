"""``torch`` as a name for retrograd: the import hook behind ``python -m retrograd run``.

``import retrograd as torch`` renames one module only: a later ``from torch import nn``
or ``import torch.nn`` asks Python for the real PyTorch, and its tensors and
retrograd's do not mix ("must be Tensor, not Tensor"). :func:`install_as_torch` puts a
finder first on ``sys.meta_path`` that answers every ``torch`` name with retrograd's
module of that name, the same module object (``sys.modules["torch"] is retrograd``), so
isinstance checks, module state and pickles agree whichever name the code used;
``torchvision.models`` is :mod:`retrograd.models`, ``functorch`` :mod:`retrograd._functorch`.
A name retrograd lacks raises ModuleNotFoundError naming it (``No module named
'torch.foo'``): the finder has no spec for it, and the path other finders search for
``torch.*`` is retrograd's own, so it never falls through to the installed PyTorch.
"""

import importlib
import importlib.abc
import importlib.util
import sys

from .backend import set_device_map

# alias prefix -> retrograd module, longest first
_ALIASES = (("torchvision.models", "retrograd.models"),
            ("torchvision", "retrograd._torchvision"),
            ("functorch", "retrograd._functorch"),
            ("torch", "retrograd"))


def _target(fullname):
    """The retrograd module name that ``fullname`` stands for, or None."""
    for alias, real in _ALIASES:
        if fullname == alias or fullname.startswith(alias + "."):
            return real + fullname[len(alias):]
    return None


class _AliasFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds ``torch.X`` by importing ``retrograd.X``, and loads it as that same module."""

    def find_spec(self, fullname, path=None, target=None):
        real = _target(fullname)
        if real is None:
            return None
        try:
            module = importlib.import_module(real)
        except ModuleNotFoundError as e:
            if e.name != real:  # the module exists but something it imports does not
                raise
            return None  # the import fails, naming fullname: its parent's path is ours
        spec = importlib.util.spec_from_loader(fullname, self,
                                               is_package=hasattr(module, "__path__"))
        spec.loader_state = (module, module.__spec__)
        return spec

    def create_module(self, spec):
        return spec.loader_state[0]

    def exec_module(self, module):
        """Nothing to run: the module ran under its own name. Importing it under the alias
        set its ``__spec__`` to the alias's; it gets its own back."""
        module.__spec__ = module.__spec__.loader_state[1]


_FINDER = _AliasFinder()


def install_as_torch(*, device_map=None, random_weights=False):
    """Make ``import torch``, every ``torch.*`` submodule and ``torchvision.models``
    resolve to retrograd, for code (a notebook, a script) written for PyTorch; call it
    before anything imports torch. ``device_map={"cuda": "cpu"}`` runs what asks for a
    GPU on the CPU; ``random_weights=True`` gives models asked for pretrained weights
    their random initialisation (nothing is downloaded). Each says so once on stderr.

    >>> import retrograd
    >>> retrograd.install_as_torch()
    >>> import torch, torch.nn as nn
    >>> torch is retrograd and nn is retrograd.nn
    True
    """
    for name in ("torch", "torchvision"):
        module = sys.modules.get(name)
        if module is not None and not module.__name__.startswith("retrograd"):
            raise RuntimeError(
                f"install_as_torch(): the real {name} is already imported; its tensors and "
                f"retrograd's cannot mix. Call retrograd.install_as_torch() before anything "
                f"imports {name} (first in the notebook or script, or restart the kernel).")
    if device_map:
        set_device_map(device_map, on_first_use=_note_device)
    if random_weights:
        from .models import _weights
        _weights.use_random_weights(_note_weights)
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)
    importlib.import_module("torch")


def _note_device(source, target):
    print(f"retrograd: device {source.type!r} runs on {target.type!r} (device map "
          f"{source.type}={target.type}); this machine has no {source.type} backend",
          file=sys.stderr)


def _note_weights(model, name):
    print(f"retrograd: {type(model).__name__} asked for pretrained weights={name}: keeping "
          "its random initialisation instead (random weights; nothing is downloaded)",
          file=sys.stderr)
