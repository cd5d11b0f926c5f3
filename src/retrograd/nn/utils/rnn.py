"""``torch.nn.utils.rnn``: packed and padded batches of variable-length sequences.

A packed sequence stores the steps time-major, each step holding only the sequences
still running (``batch_sizes[t]`` rows, longest sequences first). The index bookkeeping
is done on host integers once per call (the host's array module: PyTorch keeps lengths
and batch sizes on the CPU; under vmap, lengths that vary over the batch are a batch of
host integers, worked on at once by the batched namespace); the tensor data moves
through one gather on its device, so gradients flow back through a single node.

>>> from retrograd.nn.utils.rnn import pack_sequence
>>> pack_sequence([retrograd.ones(3), retrograd.ones(2)]).batch_sizes
tensor([2, 2, 1])
"""

from collections.abc import Iterable
from typing import NamedTuple

from ... import _creation
from ... import _dtype as _dt
from ..._tensor import Tensor, wrap
from ...backend import get_array_module, host_array_module
from ...backend.functions import functions
from ...ops._registry import _pretty, apply, defop
from ...ops.indexing import _index_select_backward
from ...ops.joining import cat
from ...ops.shape import call

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence",
           "pad_packed_sequence", "pad_sequence", "unpad_sequence", "pack_sequence",
           "unpack_sequence"]


def _pack_grad(xp, grad, index, input_shape):
    rows = (input_shape[0] * input_shape[1],) + tuple(input_shape[2:])
    return xp.reshape(call(xp, _index_select_backward, grad, index, attrs=(rows, 0)),
                      input_shape)


# The rows ``index`` names of the input with its two leading (time, batch) dims merged:
# PyTorch's _pack_padded_sequence, whose node is PackPaddedSequenceBackward0.
_pack_padded = defop(
    "_pack_padded_sequence",
    lambda xp, input, index: xp.take(xp.reshape(input, (-1,) + input.shape[2:]), index, 0),
    inputs=("input", "index"), vjp={"input": _pack_grad}, jvp="linear")


class PackedSequence_(NamedTuple):
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None
    unsorted_indices: Tensor | None


class PackedSequence(PackedSequence_):
    """The packed steps (``data``), the rows per step (``batch_sizes``) and the
    permutation that sorted the batch by length (``sorted_indices``) with its inverse.
    Make it with :func:`pack_padded_sequence` or :func:`pack_sequence`."""

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:
            if not (isinstance(data, (list, tuple)) and len(data) == 2):
                raise AssertionError("Expected data to be a list or tuple of length 2")
            data, batch_sizes = data
        elif batch_sizes.device.type != "cpu":
            raise ValueError("batch_sizes should always be on CPU. Instances of "
                             "PackedSequence should never be created manually. They should "
                             "be instantiated by functions like pack_sequence and "
                             "pack_padded_sequences in nn.utils.rnn. https://pytorch.org/docs/"
                             "stable/nn.html#torch.nn.utils.rnn.pack_sequence")
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs):
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        move = (lambda t: None if t is None else t.to(data.device))
        return type(self)(data, self.batch_sizes, move(self.sorted_indices),
                          move(self.unsorted_indices))

    def cuda(self, *args, **kwargs):
        return self.to("cuda", *args, **kwargs)

    def cpu(self, *args, **kwargs):
        return self.to("cpu", *args, **kwargs)

    def double(self):
        return self.to(dtype=_dt.float64)

    def float(self):
        return self.to(dtype=_dt.float32)

    def half(self):
        return self.to(dtype=_dt.float16)

    def long(self):
        return self.to(dtype=_dt.int64)

    def int(self):
        return self.to(dtype=_dt.int32)

    def short(self):
        return self.to(dtype=_dt.int16)

    def char(self):
        return self.to(dtype=_dt.int8)

    def byte(self):
        return self.to(dtype=_dt.uint8)

    @property
    def is_cuda(self):
        return self.data.is_cuda

    def is_pinned(self):
        return self.data.is_pinned()


def _long(values, device=None):
    """Host indices (a batch of them under vmap) as an int64 tensor on ``device`` (the
    CPU by default)."""
    t = wrap(values.astype(_dt.int64.np))
    return t if device is None else t.to(device)


def _same_in_batch(values, shape):
    """One value for every batch element of a vmap (``values``: each one's, from
    ``checked_values``), as PyTorch's stack of the elements' results needs:
    ``shape(value)`` is one element's result shape."""
    odd = next((j for j, v in enumerate(values) if v != values[0]), None)
    if odd is not None:
        raise RuntimeError(f"stack expects each tensor to be equal size, but got "
                           f"{shape(values[0])} at entry 0 and {shape(values[odd])} at "
                           f"entry {odd}")
    return values[0]


def invert_permutation(permutation):
    """The inverse of a permutation (None stays None), on its device."""
    if permutation is None:
        return None
    return permutation.argsort()


def _sorted_desc(lengths):
    """Indices sorting ``lengths`` in decreasing order, ties in their given order
    (PyTorch's stable CPU sort)."""
    return host_array_module().argsort(-lengths, kind="stable")


def _packed_rows(batch_sizes, stride_t, stride_b):
    """For each packed row, the flat (t * stride_t + b * stride_b) position it comes from
    (host integers; under vmap, a batch of them: the batched namespace's ``repeat``)."""
    xp = get_array_module(batch_sizes)
    steps = xp.repeat(xp.arange(len(batch_sizes)), batch_sizes)
    starts = xp.repeat(xp.cumsum(batch_sizes) - batch_sizes, batch_sizes)
    return steps * stride_t + (xp.arange(len(steps)) - starts) * stride_b


def _type_name(t):
    return _pretty(t._data.dtype)


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Pack a padded batch (T, B, *) ((B, T, *) with ``batch_first``) of sequences
    of the given lengths.

    >>> pack_padded_sequence(retrograd.ones(3, 2), [3, 1]).batch_sizes
    tensor([2, 1, 1])
    """
    if isinstance(lengths, Tensor) and (lengths.ndim != 1 or lengths.device.type != "cpu"):
        raise RuntimeError(f"'lengths' argument should be a 1D CPU int64 tensor, but got "
                           f"{lengths.ndim}D {lengths.device} {_type_name(lengths)} tensor")
    xp = host_array_module()
    # a tensor's values stay its array: under vmap, a batch of lengths (each element's)
    lens = lengths._data if isinstance(lengths, Tensor) else xp.asarray(lengths)
    lens = lens.astype(_dt.int64.np).reshape(-1)
    check = functions(get_array_module(lens))
    batch_dim = 0 if batch_first else 1
    sorted_indices = None
    if not enforce_sorted:
        order = _sorted_desc(lens)
        lens = lens[order]
        sorted_indices = _long(order, input.device)
        input = input.index_select(batch_dim, sorted_indices)
    if input.numel() == 0:
        raise RuntimeError("Cannot pack empty tensors.")
    batch = input.size(batch_dim)
    if lens.shape[0] != batch:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got "
                           f"{lens.shape[0]} (batch_size={batch})")
    if check.any_true(lens[-1] <= 0):
        raise RuntimeError("Length of all samples has to be greater than 0, but found an "
                           "element in 'lengths' that is <= 0")
    if check.any_true(lens[1:] > lens[:-1]):
        raise RuntimeError("`lengths` array must be sorted in decreasing order when "
                           "`enforce_sorted` is True. You can pass `enforce_sorted=False` to "
                           "pack_padded_sequence and/or pack_sequence to sidestep this "
                           "requirement if you do not need ONNX exportability.")
    steps = input.size(1 - batch_dim)
    longest = check.checked_values(lens[0])
    too_long = next((n for n in longest if n > steps), None)
    if too_long is not None:
        raise RuntimeError(f"Expected the longest length to be at most the padded length "
                           f"{steps}, but got {too_long}")
    _same_in_batch(check.checked_values(lens.sum()),
                   lambda n: [n, *input.shape[2:]])  # the packed data's rows
    longest = _same_in_batch(longest, lambda n: [n])  # batch_sizes' steps
    batch_sizes = (lens[None, :] > xp.arange(longest)[:, None]).sum(1)
    index = _packed_rows(batch_sizes, *((1, steps) if batch_first else (batch, 1)))
    data = apply(_pack_padded, (input, _long(index, input.device)))
    return PackedSequence(data, _long(batch_sizes), sorted_indices, None)


def _gather_padded(data, padding_value, index, shape):
    """Rows ``index`` of ``data`` with one row of ``padding_value`` appended (index
    ``len(data)``), reshaped to ``shape``: the padded layout in one gather."""
    pad = _creation.full((1,) + tuple(data.shape[1:]), padding_value, dtype=data.dtype,
                         device=data.device)
    return cat([data, pad]).index_select(0, _long(index, data.device)).reshape(shape)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """Inverse of :func:`pack_padded_sequence`: (padded batch, lengths), the batch in
    its original order.

    >>> from retrograd.nn.utils.rnn import pack_sequence
    >>> pad_packed_sequence(pack_sequence([retrograd.ones(2), retrograd.ones(1)]))[1]
    tensor([2, 1])
    """
    data, batch_sizes, _, unsorted_indices = sequence
    sizes = batch_sizes._data.astype(_dt.int64.np)  # (under vmap, each element's)
    xp = get_array_module(sizes)  # the host's, or its batched namespace
    max_len = len(sizes)
    if total_length is not None:
        if total_length < max_len:
            raise ValueError("Expected total_length to be at least the length of the "
                             "longest sequence in input, but got "
                             f"total_length={total_length} and max sequence length being "
                             f"{max_len}")
        max_len = total_length
    batch = functions(xp).checked_values(sizes[0])[0]  # (every element packed as many)
    rows = _packed_rows(sizes, *((1, max_len) if batch_first else (batch, 1)))
    index = xp.full(max_len * batch, data.shape[0], dtype=_dt.int64.np)
    index[rows] = xp.arange(len(rows))
    shape = ((batch, max_len) if batch_first else (max_len, batch)) + tuple(data.shape[1:])
    padded = _gather_padded(data, padding_value, index, shape)
    lengths = (sizes[None, :] > xp.arange(batch)[:, None]).sum(1)
    if unsorted_indices is not None:
        padded = padded.index_select(0 if batch_first else 1, unsorted_indices)
        lengths = lengths[unsorted_indices.cpu()._data]
    return padded, _long(lengths)


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stack sequences of shapes (L_i, *) into (max L, B, *) ((B, max L, *) with
    ``batch_first``), filling with ``padding_value`` on ``padding_side``.

    >>> pad_sequence([retrograd.ones(2), retrograd.ones(1)], batch_first=True)
    tensor([[1., 1.],
            [1., 0.]])
    """
    if not isinstance(sequences, Iterable):
        raise RuntimeError("pad_sequence: Expected iterable for input sequences, but got arg "
                           f"of type: {type(sequences)}")
    sequences = tuple(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    if padding_side not in ("left", "right"):
        raise RuntimeError("Expected padding_side to be one of left or right, but got "
                           f"{padding_side}.")
    trailing = tuple(sequences[0].shape[1:])
    for s in sequences[1:]:
        if tuple(s.shape[1:]) != trailing:
            if s.dim() != sequences[0].dim():
                raise RuntimeError(f"pad_sequence: every sequence must have the trailing "
                                   f"dimensions {list(trailing)}, got {list(s.shape)}")
            dim = next(k for k in range(len(trailing)) if s.shape[k + 1] != trailing[k])
            raise RuntimeError(f"The size of tensor a ({trailing[dim]}) must match the size "
                               f"of tensor b ({s.shape[dim + 1]}) at non-singleton dimension "
                               f"{dim + 1}")
    xp = host_array_module()
    lens = xp.array([s.shape[0] for s in sequences], dtype=_dt.int64.np)
    batch, max_len = len(sequences), int(lens.max())
    starts = xp.cumsum(lens) - lens
    total = int(lens.sum())
    step = xp.arange(max_len)[None, :]
    offset = step if padding_side == "right" else step - (max_len - lens)[:, None]
    valid = (offset >= 0) & (offset < lens[:, None])
    index = xp.where(valid, starts[:, None] + offset, total)  # (B, max L)
    if not batch_first:
        index = index.T
    shape = ((batch, max_len) if batch_first else (max_len, batch)) + trailing
    dt = sequences[0].dtype  # the first sequence's, as PyTorch's (no promotion)
    return _gather_padded(cat([q if q.dtype == dt else q.to(dt) for q in sequences]),
                          padding_value, index.reshape(-1), shape)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """Split a padded batch back into its sequences (a list of (L_i, *) tensors).

    Unlike PyTorch, the input is not transposed in place when ``batch_first`` is false.
    """
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    lens = lengths.tolist() if isinstance(lengths, Tensor) else list(lengths)
    # indexed, not sliced: copies (IndexBackward0), so writes stay out of the padded batch
    return [seq[_creation.arange(n, device=seq.device)]
            for seq, n in zip(padded_sequences.unbind(0), lens, strict=True)]


def pack_sequence(sequences, enforce_sorted=True):
    """Pack a list of sequences of shapes (L_i, *) (longest first unless
    ``enforce_sorted`` is false).

    >>> pack_sequence([retrograd.ones(1), retrograd.ones(2)], enforce_sorted=False).data
    tensor([1., 1., 1.])
    """
    lengths = [v.size(0) for v in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths,
                                enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    """Inverse of :func:`pack_sequence`: the list of sequences in their original order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
