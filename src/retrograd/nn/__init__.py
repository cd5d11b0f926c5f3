"""``retrograd.nn``: Module, Parameter, Buffer, the layers, ``functional``, ``init`` and
``utils``.

>>> import retrograd as torch
>>> layer = torch.nn.Linear(4, 2)
>>> layer(torch.ones(3, 4)).shape
torch.Size([3, 2])
"""

from . import functional, init, parallel, utils  # noqa: F401
from .modules import *  # noqa: F401,F403
from .parameter import (Buffer, Parameter, UninitializedBuffer,  # noqa: F401
                        UninitializedParameter)
