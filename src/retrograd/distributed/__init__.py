"""``torch.distributed``'s single-process pieces: ``retrograd.distributed.optim``.

Nothing here needs MPI or any other transport; the package imports on any machine.
"""

from . import optim

__all__ = ["optim"]
