"""``torch.memory_format``: the order a dense tensor's elements lie in. ``channels_last``
(and ``channels_last_3d``) keep each position's channels together, the layout NHWC
kernels read: the array's axes permuted (N, H, W, C), laid out C-contiguous, and
permuted back, so the tensor's shape is unchanged and only its strides differ.
``preserve_format`` keeps a tensor's own layout; ``contiguous_format`` is row-major."""

from ._named import Named

__all__ = ["memory_format", "contiguous_format", "channels_last", "channels_last_3d",
           "preserve_format", "legacy_contiguous_format", "check_memory_format", "axes_order",
           "is_laid_out", "is_dense"]


class memory_format(Named):
    __slots__ = ()


(contiguous_format, channels_last, channels_last_3d, preserve_format,
 legacy_contiguous_format) = (memory_format(n) for n in (
     "contiguous_format", "channels_last", "channels_last_3d", "preserve_format",
     "legacy_contiguous_format"))
_AXES = {"channels_last": (0, 2, 3, 1), "channels_last_3d": (0, 2, 3, 4, 1)}


def check_memory_format(value, fn):
    """``memory_format=`` as PyTorch parses it: None or a ``torch.memory_format``."""
    if value is not None and not isinstance(value, memory_format):
        raise TypeError(f"{fn}(): argument 'memory_format' must be torch.memory_format, not "
                        f"{type(value).__name__}")
    return value


def axes_order(fmt, ndim):
    """The axes, in the order a tensor of ``ndim`` dims in ``fmt`` lays them out (None: its
    own order, row-major); PyTorch's error for a rank the format does not take."""
    axes = _AXES.get(fmt.name) if fmt is not None else None
    if axes is not None and ndim != len(axes):
        raise RuntimeError(f"required rank {len(axes)} tensor to use {fmt.name} format")
    return axes


def is_laid_out(a, axes):
    """Whether array ``a`` lies in the order ``axes`` (None: row-major); a dim of size 1
    may have any stride, as in PyTorch's check."""
    return (a if axes is None else a.transpose(axes)).flags.c_contiguous


def is_dense(a):
    """Non-overlapping and dense (PyTorch's ``is_non_overlapping_and_dense``): some
    permutation of the axes is contiguous."""
    if a.size <= 1:
        return True
    dims = sorted((abs(s), n) for s, n in zip(a.strides, a.shape, strict=True) if n != 1)
    expected = a.itemsize
    for s, n in dims:
        if s != expected:
            return False
        expected *= n
    return True
