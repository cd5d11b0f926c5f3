"""``weights=`` handling shared by the model builders: local checkpoints only."""

import enum
import os


class WeightsEnum(enum.Enum):
    """torchvision-style weight names; they exist so code naming them runs up to the load,
    which then explains that only local checkpoint files can be used."""

    def __repr__(self):
        return f"{type(self).__name__}.{self.name}"


def load_weights(model, weights):
    """Load ``weights`` (None, or a path to a checkpoint saved by ``torch.save`` or
    ``retrograd.save``) into ``model``; a weights name or enum raises ValueError."""
    if weights is None:
        return model
    if isinstance(weights, (str, os.PathLike)) and (not isinstance(weights, str)
                                                     or os.path.exists(weights)):
        from .. import serialization
        model.load_state_dict(serialization.load(weights))
        return model
    name = f"{type(weights).__name__}.{weights.name}" if isinstance(weights, WeightsEnum) \
        else repr(weights)
    raise ValueError(
        f"weights={name} is not a local checkpoint file, and retrograd cannot download "
        "pretrained weights. Save a "
        "state_dict with torch.save(model.state_dict(), path) and pass that local file "
        "path as weights=path, or use weights=None for random initialisation.")
