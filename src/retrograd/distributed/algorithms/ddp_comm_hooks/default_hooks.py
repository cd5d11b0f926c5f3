"""PyTorch's default DDP communication hooks: the plain average, and the average sent in
float16 (half the bytes on the wire).

``state`` is the process group to reduce over (None: the world).

>>> ddp.register_comm_hook(None, fp16_compress_hook)
"""

from ...._dtype import float16
from ... import _collectives as c
from ...distributed_c10d import GroupMember

__all__ = ["allreduce_hook", "fp16_compress_hook"]


def _allreduce_fut(process_group, tensor):
    """``tensor`` averaged over the group, in place: divided first (so float16 sums do
    not overflow), then all-reduced; a future of ``tensor``."""
    group = process_group if process_group is not None else GroupMember.WORLD
    tensor.div_(group.size())
    work = c.all_reduce(tensor, group=group, async_op=True)
    return work.get_future().then(lambda fut: fut.value()[0])


def allreduce_hook(process_group, bucket):
    """The average of the bucket's gradients: what DDP does without a hook.

    >>> ddp.register_comm_hook(process_group, allreduce_hook)
    """
    return _allreduce_fut(process_group, bucket.buffer())


def fp16_compress_hook(process_group, bucket):
    """The bucket cast to float16 and divided by the group's size, all-reduced, then cast
    back into the bucket's dtype (in the bucket's own buffer).

    >>> ddp.register_comm_hook(process_group, fp16_compress_hook)
    """
    group = process_group if process_group is not None else GroupMember.WORLD
    buffer = bucket.buffer()
    compressed = buffer.to(float16).div_(group.size())

    def decompress(fut):
        buffer.copy_(fut.value()[0])
        return buffer

    return c.all_reduce(compressed, group=group, async_op=True).get_future().then(decompress)
