"""Optimizers and learning-rate schedulers, as ``torch.optim``.

>>> opt = retrograd.optim.Adam(model.parameters(), lr=1e-3)
>>> sched = retrograd.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=100)
"""

from . import lr_scheduler
from .adadelta import Adadelta
from .adagrad import Adagrad
from .adam import Adam
from .adamax import Adamax
from .adamw import AdamW
from .in_backward import fuse_into_backward
from .nadam import NAdam
from .optimizer import Optimizer
from .radam import RAdam
from .rmsprop import RMSprop
from .sgd import SGD
from .adafactor import Adafactor  # noqa: I001 (appended, not sorted in, to merge easily)
from .asgd import ASGD
from .lbfgs import LBFGS
from .rprop import Rprop
from .sparse_adam import SparseAdam

__all__ = ["Adadelta", "Adagrad", "Adam", "AdamW", "Adamax", "NAdam", "Optimizer", "RAdam",
           "RMSprop", "SGD", "fuse_into_backward", "lr_scheduler"]
__all__ += ["ASGD", "Adafactor", "LBFGS", "Rprop", "SparseAdam"]
from . import swa_utils  # noqa: E402 (appended, to merge easily)

__all__ += ["swa_utils"]
from .muon import Muon  # noqa: E402

__all__ += ["Muon"]
