"""torchvision-style models (``retrograd.models.resnet18`` ...) with torchvision's
state-dict keys, so checkpoints saved by ``torch.save`` load with ``weights=path``."""

from .resnet import *  # noqa: F401,F403
from .vision_transformer import *  # noqa: F401,F403
