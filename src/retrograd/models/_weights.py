"""``weights=`` handling shared by the model builders: local checkpoints only, torchvision's
legacy ``pretrained=`` and, when asked for, random weights in place of pretrained ones."""

import enum
import os
import warnings

from .. import serialization


class WeightsEnum(enum.Enum):
    """torchvision-style weight names; they exist so code naming them runs up to the load,
    which then explains that only local checkpoint files can be used."""

    def __repr__(self):
        return f"{type(self).__name__}.{self.name}"


_random_weights = False  # use_random_weights: pretrained names keep the random weights
_random_weights_note = None


def use_random_weights(note=None):
    """From now on a model asked for pretrained weights by name keeps its random
    initialisation (``python -m retrograd run --random-weights``: nothing can be
    downloaded); ``note(model, name)`` is called the first time."""
    global _random_weights, _random_weights_note
    _random_weights, _random_weights_note = True, note


def legacy_pretrained(weights, kwargs, weights_enum):
    """torchvision's ``pretrained=True/False`` (deprecated since its 0.13, still in many
    scripts), popped from ``kwargs`` with torchvision's warnings: the weights it means."""
    if "pretrained" not in kwargs:
        return weights
    pretrained = kwargs.pop("pretrained")
    warnings.warn("The parameter 'pretrained' is deprecated since 0.13 and may be removed in "
                  "the future, please use 'weights' instead.", UserWarning, stacklevel=4)
    weights = weights_enum.IMAGENET1K_V1 if pretrained else None
    msg = ("Arguments other than a weight enum or `None` for 'weights' are deprecated since "
           f"0.13 and may be removed in the future. The current behavior is equivalent to "
           f"passing `weights={weights}`.")
    if pretrained:
        msg += (f" You can also use `weights={weights_enum.__name__}.DEFAULT` to get the most "
                "up-to-date weights.")
    warnings.warn(msg, UserWarning, stacklevel=4)
    return weights


def load_weights(model, weights, weights_enum=None):
    """Load ``weights`` (None, or a path to a checkpoint saved by ``torch.save`` or
    ``retrograd.save``) into ``model``; a weights name (a ``weights_enum`` member or its
    name) raises ValueError, or keeps the random weights after :func:`use_random_weights`."""
    global _random_weights_note
    if weights is None:
        return model
    if isinstance(weights, (str, os.PathLike)) and (not isinstance(weights, str)
                                                     or os.path.exists(weights)):
        model.load_state_dict(serialization.load(weights))
        return model
    if _member(weights, weights_enum) is not None and _random_weights:
        if _random_weights_note is not None:
            note, _random_weights_note = _random_weights_note, None
            note(model, repr(weights))
        return model
    raise ValueError(
        f"weights={weights!r} is not a local checkpoint file, and retrograd cannot download "
        "pretrained weights. Save a "
        "state_dict with torch.save(model.state_dict(), path) and pass that local file "
        "path as weights=path, or use weights=None for random initialisation "
        "(python -m retrograd run --random-weights does that for a whole script).")


def _member(weights, weights_enum):
    """The weights enum member ``weights`` names (torchvision's ``Weights.verify``), or None
    for anything else."""
    if isinstance(weights, WeightsEnum):
        if weights_enum is not None and not isinstance(weights, weights_enum):
            raise TypeError(f"Invalid Weight class provided; expected {weights_enum.__name__} "
                            f"but received {type(weights).__name__}.")
        return weights
    if isinstance(weights, str) and weights_enum is not None:
        return weights_enum.__members__.get(weights.removeprefix(weights_enum.__name__ + "."))
    return None
