"""Optimizers and learning-rate schedulers, as ``torch.optim``.

>>> opt = retrograd.optim.Adam(model.parameters(), lr=1e-3)
>>> sched = retrograd.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=100)
"""

from . import lr_scheduler
from .adagrad import Adagrad
from .adam import Adam
from .adamw import AdamW
from .in_backward import fuse_into_backward
from .optimizer import Optimizer
from .rmsprop import RMSprop
from .sgd import SGD

__all__ = ["Adagrad", "Adam", "AdamW", "Optimizer", "RMSprop", "SGD", "fuse_into_backward",
           "lr_scheduler"]
