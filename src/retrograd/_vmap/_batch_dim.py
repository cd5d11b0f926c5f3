"""Entering and leaving a vmap level: two ops, each the other's vjp, so that gradients
flow through ``vmap`` in both directions (``grad(vmap(f))`` and ``vmap(grad(f))``)."""

from ..autograd._batched import Batched
from ..backend import get_array_module
from ..backend.functions import functions
from ..ops._registry import apply, defop

__all__ = ["add_batch_dim", "remove_batch_dim"]


def _into(xp, self, in_dim, level, batch):
    """``self``'s dim ``in_dim`` as the batch of ``level`` (a value of lower levels stays
    the data of the new batch)."""
    return Batched(xp.moveaxis(self, in_dim, 0), level)


def _out_of(xp, self, level, batch, out_dim):
    """The batch of ``level`` as dim ``out_dim``; a value not batched at ``level`` (it
    did not depend on the mapped inputs) is repeated ``batch`` times, as PyTorch expands
    it."""
    if type(self) is Batched and self.level == level:
        data = self.data
        xp = get_array_module(data)  # (a lower level's batch, or the device's array)
    else:
        data = xp.copy(xp.broadcast_to(xp.expand_dims(self, 0), (batch,) + tuple(self.shape)))
    return xp.moveaxis(data, 0, out_dim)


_add = defop("_add_batch_dim", _into,
             vjp={"self": lambda grad, xp, in_dim, level, batch:
                  functions(xp).call(_remove, (grad,), (level, batch, in_dim))},
             jvp="linear", upcast=False)
_remove = defop("_remove_batch_dim", _out_of,
                vjp={"self": lambda grad, xp, level, batch, out_dim:
                     functions(xp).call(_add, (grad,), (out_dim, level, batch))},
                jvp="linear", upcast=False)


def add_batch_dim(tensor, in_dim, level):
    """``tensor`` mapped over its dim ``in_dim`` at vmap level ``level``."""
    return apply(_add, (tensor,), (in_dim, level, tensor.shape[in_dim]))


def remove_batch_dim(tensor, level, batch, out_dim):
    """A result of vmap level ``level`` with its batch as dim ``out_dim``."""
    return apply(_remove, (tensor,), (level, batch, out_dim))
