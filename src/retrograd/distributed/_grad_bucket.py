"""``torch.distributed.GradBucket``: what a DDP communication hook is given."""

__all__ = ["GradBucket"]


class GradBucket:
    """One bucket of DDP's gradients, flattened into one 1-D tensor (not divided by the
    world size: averaging is the hook's job).

    >>> def hook(state, bucket):  # hook(state, GradBucket) -> Future of a tensor
    ...     t = bucket.buffer().div_(dist.get_world_size())
    ...     return dist.all_reduce(t, async_op=True).get_future().then(lambda f: f.value()[0])
    """

    def __init__(self, index, bucket_count, buffer, offsets, parameters):
        self._index, self._count = index, bucket_count
        self._buffer, self._offsets, self._params = buffer, offsets, parameters

    def index(self):
        """The bucket's position in the order buckets are reduced (0 is reduced first:
        it holds the gradients backward produces first)."""
        return self._index

    def buffer(self):
        """The flattened gradients, one parameter after another."""
        return self._buffer

    def gradients(self):
        """Each parameter's gradient: a view of :meth:`buffer` in the parameter's shape."""
        return [self._buffer[a:b].view(p.shape) for a, b, p in
                zip(self._offsets, self._offsets[1:], self._params, strict=False)]

    def is_last(self):
        """Whether this is the last bucket of the iteration to be reduced."""
        return self._index == self._count - 1

    def set_buffer(self, buffer):
        """Replace the tensor :meth:`buffer` and :meth:`gradients` read."""
        self._buffer = buffer

    def parameters(self):
        """The model parameters whose gradients the bucket holds, in buffer order."""
        return list(self._params)
