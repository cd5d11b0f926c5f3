"""Op database entries for ``nn.utils.rnn``: the packing primitive
(PackPaddedSequenceBackward0), sampled through its public function, and the padding
composites.

Lengths are arguments (a list or an int64 tensor), never differentiable inputs.
"""

import retrograd

from ._core import ErrorInput, OpInfo, SampleInput, make_tensor

_DTYPES = ("float32", "float64", "int64")


def _pack(rnn):
    return lambda input, *args, **kwargs: rnn.pack_padded_sequence(input, *args, **kwargs).data


def _torch_rnn():
    import torch
    return torch.nn.utils.rnn


def _pack_samples(dtype, requires_grad):
    t = lambda *s: make_tensor(*s, dtype=dtype, requires_grad=requires_grad)  # noqa: E731
    yield SampleInput(t(4, 3, 2), args=([4, 2, 1],), name="sorted")
    yield SampleInput(t(4, 3), args=([3, 3, 1],), name="no_features")
    yield SampleInput(t(3, 5, 2, 2), args=([3, 2, 1],), kwargs={"batch_first": True},
                      name="batch_first_padded_longer")
    yield SampleInput(t(4, 4, 2), args=(retrograd.tensor([1, 4, 2, 4]),),
                      kwargs={"enforce_sorted": False}, name="unsorted_ties")
    yield SampleInput(t(2, 1, 3), args=([2],), name="one_sequence")


def _pack_errors():
    x = make_tensor(4, 3, 2)
    yield ErrorInput(SampleInput(x, args=([4, 5, 1],)), name="unsorted")
    yield ErrorInput(SampleInput(x, args=([4, 2, 0],)), name="zero_length")
    yield ErrorInput(SampleInput(x, args=([4, 2],)), name="count")
    yield ErrorInput(SampleInput(make_tensor(0, 3, 2), args=([4, 2, 1],)), name="empty")


def _pad_sequence_samples(dtype, requires_grad):
    t = lambda *s: make_tensor(*s, dtype=dtype, requires_grad=requires_grad)  # noqa: E731
    yield SampleInput([t(3, 2), t(1, 2), t(4, 2)], name="time_major")
    yield SampleInput([t(2), t(3)], kwargs={"batch_first": True, "padding_value": -1},
                      name="batch_first")
    yield SampleInput([t(2, 2, 1), t(3, 2, 1)], kwargs={"padding_side": "left"}, name="left")


def _pad_sequence_errors():
    yield ErrorInput(SampleInput([make_tensor(2, 3), make_tensor(3, 2)]), name="trailing")
    yield ErrorInput(SampleInput([make_tensor(2)], kwargs={"padding_side": "up"}),
                     name="side")
    yield ErrorInput(SampleInput([]), name="empty")


def _pad_packed(rnn):
    def f(input, lengths, batch_first=False, enforce_sorted=True, **kwargs):
        packed = rnn.pack_padded_sequence(input, lengths, batch_first, enforce_sorted)
        return rnn.pad_packed_sequence(packed, batch_first, **kwargs)
    return f


def _pad_packed_samples(dtype, requires_grad):
    t = lambda *s: make_tensor(*s, dtype=dtype, requires_grad=requires_grad)  # noqa: E731
    yield SampleInput(t(4, 3, 2), args=([4, 2, 1],), name="time_major")
    yield SampleInput(t(3, 4), args=([1, 3, 2],), kwargs={"batch_first": True,
                      "enforce_sorted": False, "padding_value": 2.0, "total_length": 5},
                      name="batch_first_unsorted_total_length")


OPS = [
    OpInfo("pack_padded_sequence", _pack_samples, op=_pack(retrograd.nn.utils.rnn),
           torch_op=lambda *a, **k: _pack(_torch_rnn())(*a, **k), dtypes=_DTYPES,
           error_inputs=_pack_errors),
    OpInfo("pad_sequence", _pad_sequence_samples, op=retrograd.nn.utils.rnn.pad_sequence,
           torch_op=lambda *a, **k: _torch_rnn().pad_sequence(*a, **k), dtypes=_DTYPES,
           compare_grad_with_torch=False, error_inputs=_pad_sequence_errors),
    OpInfo("pad_packed_sequence", _pad_packed_samples, op=_pad_packed(retrograd.nn.utils.rnn),
           torch_op=lambda *a, **k: _pad_packed(_torch_rnn())(*a, **k), dtypes=_DTYPES,
           compare_grad_with_torch=False),
]
