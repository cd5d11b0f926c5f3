"""The layers of ``retrograd.nn``: the public classes (``__all__``) of each module file
(``lazy``'s LazyModuleMixin stays at ``nn.modules.lazy``, as PyTorch's)."""

from . import (activation, container, conv, distance, dropout, flatten, fold, lazy,
               linear, loss, norm, padding, pixelshuffle, pooling, rnn, sparse, transformer,
               upsampling)
from .activation import *  # noqa: F403
from .container import *  # noqa: F403
from .conv import *  # noqa: F403
from .distance import *  # noqa: F403
from .dropout import *  # noqa: F403
from .flatten import *  # noqa: F403
from .fold import *  # noqa: F403
from .linear import *  # noqa: F403
from .loss import *  # noqa: F403
from .module import Module
from .norm import *  # noqa: F403
from .padding import *  # noqa: F403
from .pixelshuffle import *  # noqa: F403
from .pooling import *  # noqa: F403
from .rnn import *  # noqa: F403
from .sparse import *  # noqa: F403
from .transformer import *  # noqa: F403
from .upsampling import *  # noqa: F403

__all__ = sorted(["Module"] + [name for m in (
    activation, container, conv, distance, dropout, flatten, fold, linear, loss, norm,
    padding, pixelshuffle, pooling, rnn, sparse, transformer, upsampling)
    for name in m.__all__])
