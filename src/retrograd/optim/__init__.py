"""Optimizers and learning-rate schedulers, as ``torch.optim``.

>>> opt = retrograd.optim.Adam(model.parameters(), lr=1e-3)
>>> sched = retrograd.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=100)
"""

from . import lr_scheduler, swa_utils
from .adadelta import Adadelta
from .adafactor import Adafactor
from .adagrad import Adagrad
from .adam import Adam
from .adamax import Adamax
from .adamw import AdamW
from .asgd import ASGD
from .in_backward import fuse_into_backward
from .lbfgs import LBFGS
from .muon import Muon
from .nadam import NAdam
from .optimizer import Optimizer
from .radam import RAdam
from .rmsprop import RMSprop
from .rprop import Rprop
from .sgd import SGD
from .sparse_adam import SparseAdam

__all__ = ["ASGD", "Adadelta", "Adafactor", "Adagrad", "Adam", "AdamW", "Adamax", "LBFGS",
           "Muon", "NAdam", "Optimizer", "RAdam", "RMSprop", "Rprop", "SGD", "SparseAdam",
           "fuse_into_backward", "lr_scheduler", "swa_utils"]
