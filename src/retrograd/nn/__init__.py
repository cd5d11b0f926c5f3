"""``retrograd.nn``: Module, Parameter, the layers, ``functional`` and ``init``.

>>> import retrograd as torch
>>> layer = torch.nn.Linear(4, 2)
>>> layer(torch.ones(3, 4)).shape
torch.Size([3, 2])
"""

from . import functional, init  # noqa: F401
from .modules import *  # noqa: F401,F403
from .parameter import Parameter  # noqa: F401
from . import utils  # noqa: F401,E402 (retrograd.nn.utils)
from .parameter import Buffer  # noqa: F401,E402 (nn.Buffer, torch 2.5+)
