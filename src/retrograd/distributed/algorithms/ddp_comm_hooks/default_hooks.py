"""PyTorch's default DDP communication hooks: the plain average, and the average sent in
float16 or bfloat16 (half the bytes on the wire).

``state`` is the process group to reduce over (None: the world).

>>> ddp.register_comm_hook(None, fp16_compress_hook)
"""

from ...._dtype import bfloat16, float16
from ... import _collectives as c
from ...distributed_c10d import GroupMember

__all__ = ["allreduce_hook", "bf16_compress_hook", "fp16_compress_hook"]


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


def _compressed(process_group, bucket, dtype):
    """The bucket cast to ``dtype`` and divided by the group's size, all-reduced, then cast
    back into the bucket's dtype (in the bucket's own buffer)."""
    group = process_group if process_group is not None else GroupMember.WORLD
    buffer = bucket.buffer()
    compressed = buffer.to(dtype).div_(group.size())

    def decompress(fut):
        buffer.copy_(fut.value()[0])
        return buffer

    return c.all_reduce(compressed, group=group, async_op=True).get_future().then(decompress)


def fp16_compress_hook(process_group, bucket):
    """The average of the bucket's gradients, sent in float16.

    >>> ddp.register_comm_hook(process_group, fp16_compress_hook)
    """
    return _compressed(process_group, bucket, float16)


def bf16_compress_hook(process_group, bucket):
    """The average of the bucket's gradients, sent in bfloat16 (float16's bytes with
    float32's range: no overflow to fear).

    >>> ddp.register_comm_hook(process_group, bf16_compress_hook)
    """
    return _compressed(process_group, bucket, bfloat16)
