"""Op database entries for the shape, view and conversion ops (``ops/shape.py``,
``ops/conversion.py``).

Samples cover negative dims, 0-d and empty tensors, and transposed inputs (where
a view becomes a copy: ``reshape`` of a transposed tensor records
``UnsafeViewBackward0``). In-place forms run on a clone of the input.
"""

import numpy

import retrograd

from ._core import ErrorInput, OpInfo, SampleInput, make_tensor

_FLOAT = ("float32", "float64")
_ALL = ("float32", "float64", "int64", "bool")


def _on_clone(name):
    """``name`` applied to a clone of the input (for in-place methods)."""
    fn = lambda input, *args, **kwargs: getattr(input.clone(), name)(*args, **kwargs)  # noqa: E731
    return dict(op=fn, torch_op=fn)


def _transposed(*shape, dtype, requires_grad):
    """A tensor laid out transposed (``x.t()`` of a leaf): not viewable as flat."""
    x = make_tensor(*reversed(shape), dtype=dtype)
    return retrograd.from_numpy(x.numpy().T).requires_grad_(
        requires_grad and dtype.startswith("float"))


def _reshape_samples(dtype, requires_grad):
    t = lambda *s, **kw: make_tensor(*s, dtype=dtype, requires_grad=requires_grad, **kw)  # noqa: E731
    yield SampleInput(t(2, 3, 4), args=((6, 4),), name="merge")
    yield SampleInput(t(2, 3, 4), args=((-1,),), name="flat")
    yield SampleInput(t(2, 3, 4), args=((4, -1, 3),), name="infer")
    yield SampleInput(t(), args=((1, 1),), name="0d")
    yield SampleInput(t(0, 3), args=((3, 0),), name="empty")
    yield SampleInput(_transposed(3, 4, dtype=dtype, requires_grad=requires_grad),
                      args=((2, 6),), name="transposed_copy")


def _view_samples(dtype, requires_grad):
    t = lambda *s, **kw: make_tensor(*s, dtype=dtype, requires_grad=requires_grad, **kw)  # noqa: E731
    yield SampleInput(t(2, 3, 4), args=(6, 4), name="varargs")
    yield SampleInput(t(2, 3, 4), args=((4, -1),), name="tuple")
    yield SampleInput(t(), args=((),), name="0d")
    yield SampleInput(_transposed(3, 4, dtype=dtype, requires_grad=requires_grad),
                      args=(3, 2, 2), name="transposed_split")


def _view_errors():
    x = _transposed(3, 4, dtype="float32", requires_grad=False)
    yield ErrorInput(SampleInput(x, args=(12,)), RuntimeError, name="needs_copy")
    yield ErrorInput(SampleInput(make_tensor(3, 4), args=(5,)), RuntimeError, name="bad_size")
    yield ErrorInput(SampleInput(make_tensor(3, 4), args=(-1, -1)), RuntimeError,
                     name="two_inferred")
    yield ErrorInput(SampleInput(make_tensor(0, 3), args=(0, -1)), RuntimeError,
                     name="ambiguous")


def _as_samples(dtype, requires_grad):
    yield SampleInput(make_tensor(2, 6, dtype=dtype, requires_grad=requires_grad),
                      args=(make_tensor(3, 4),))


def _flatten_samples(dtype, requires_grad):
    t = lambda *s, **kw: make_tensor(*s, dtype=dtype, requires_grad=requires_grad, **kw)  # noqa: E731
    yield SampleInput(t(2, 3, 4), name="all")
    yield SampleInput(t(2, 3, 4), args=(1,), name="from1")
    yield SampleInput(t(2, 3, 4, 5), args=(-3, -2), name="negative")
    yield SampleInput(t(), name="0d")
    yield SampleInput(_transposed(3, 4, dtype=dtype, requires_grad=requires_grad),
                      name="transposed")


def _unflatten_samples(dtype, requires_grad):
    t = lambda *s: make_tensor(*s, dtype=dtype, requires_grad=requires_grad)  # noqa: E731
    yield SampleInput(t(2, 12), args=(1, (3, 4)))
    yield SampleInput(t(2, 12), args=(-1, (2, -1, 3)), name="infer")
    yield SampleInput(t(6, 0), args=(0, (2, 3)), name="empty")


def _squeeze_samples(dtype, requires_grad):
    t = lambda *s: make_tensor(*s, dtype=dtype, requires_grad=requires_grad)  # noqa: E731
    yield SampleInput(t(1, 3, 1, 2), name="all")
    yield SampleInput(t(1, 3, 1, 2), args=(-2,), name="dim")
    yield SampleInput(t(1, 3, 1, 2), args=(1,), name="not_one")
    yield SampleInput(t(1, 3, 1, 2), args=((0, 2),), name="dims")
    yield SampleInput(t(), args=(0,), name="0d")


def _unsqueeze_samples(dtype, requires_grad):
    t = lambda *s: make_tensor(*s, dtype=dtype, requires_grad=requires_grad)  # noqa: E731
    yield SampleInput(t(2, 3), args=(0,))
    yield SampleInput(t(2, 3), args=(-1,), name="last")
    yield SampleInput(t(2, 3), args=(1,), name="middle")
    yield SampleInput(t(), args=(0,), name="0d")


def _permute_samples(dtype, requires_grad):
    t = lambda *s: make_tensor(*s, dtype=dtype, requires_grad=requires_grad)  # noqa: E731
    yield SampleInput(t(2, 3, 4), args=((2, 0, 1),))
    yield SampleInput(t(2, 3, 4), args=((-1, 0, -2),), name="negative")
    yield SampleInput(t(), args=((),), name="0d")


def _permute_method_samples(dtype, requires_grad):
    t = lambda *s: make_tensor(*s, dtype=dtype, requires_grad=requires_grad)  # noqa: E731
    yield SampleInput(t(2, 3, 4), args=(2, 0, 1), name="varargs")
    yield SampleInput(t(2, 3, 4), args=([1, 2, 0],), name="list")


def _permute_errors():
    yield ErrorInput(SampleInput(make_tensor(2, 3), args=((0,),)), RuntimeError, name="count")
    yield ErrorInput(SampleInput(make_tensor(2, 3), args=((0, 0),)), RuntimeError,
                     name="repeat")


def _transpose_samples(dtype, requires_grad):
    t = lambda *s: make_tensor(*s, dtype=dtype, requires_grad=requires_grad)  # noqa: E731
    yield SampleInput(t(2, 3, 4), args=(0, 2))
    yield SampleInput(t(2, 3, 4), args=(-1, 1), name="negative")
    yield SampleInput(t(), args=(0, -1), name="0d")


def _t_samples(dtype, requires_grad):
    t = lambda *s: make_tensor(*s, dtype=dtype, requires_grad=requires_grad)  # noqa: E731
    yield SampleInput(t(2, 3))
    yield SampleInput(t(3), name="1d")
    yield SampleInput(t(), name="0d")


def _movedim_samples(dtype, requires_grad):
    t = lambda *s: make_tensor(*s, dtype=dtype, requires_grad=requires_grad)  # noqa: E731
    yield SampleInput(t(2, 3, 4, 5), args=(0, -1))
    yield SampleInput(t(2, 3, 4, 5), args=((0, 1), (3, 0)), name="tuples")
    yield SampleInput(t(2, 3, 4), args=(1, 1), name="same")


def _expand_samples(dtype, requires_grad):
    t = lambda *s: make_tensor(*s, dtype=dtype, requires_grad=requires_grad)  # noqa: E731
    yield SampleInput(t(3, 1), args=(3, 4))
    yield SampleInput(t(3, 1), args=(2, -1, 4), name="new_dims")
    yield SampleInput(t(1, 2), args=((0, 2),), name="to_empty")
    yield SampleInput(t(), args=(3,), name="0d")
    yield SampleInput(t(2, 3), args=(1, 2, 3), name="unit_lead")


def _expand_errors():
    yield ErrorInput(SampleInput(make_tensor(3, 4), args=(3, 5)), RuntimeError,
                     name="mismatch")
    yield ErrorInput(SampleInput(make_tensor(3, 4), args=(4,)), RuntimeError, name="fewer")
    yield ErrorInput(SampleInput(make_tensor(3, 4), args=(-1, 3, 4)), RuntimeError,
                     name="lead_minus_one")


def _expand_as_samples(dtype, requires_grad):
    yield SampleInput(make_tensor(3, 1, dtype=dtype, requires_grad=requires_grad),
                      args=(make_tensor(2, 3, 4),))


def _broadcast_to_samples(dtype, requires_grad):
    yield SampleInput(make_tensor(3, 1, dtype=dtype, requires_grad=requires_grad),
                      args=((2, 3, 5),))


def _broadcast_tensors_samples(dtype, requires_grad):
    t = lambda *s: make_tensor(*s, dtype=dtype, requires_grad=requires_grad)  # noqa: E731
    yield SampleInput(t(3, 1), args=(t(2, 1, 4), t()))


def _repeat_samples(dtype, requires_grad):
    t = lambda *s: make_tensor(*s, dtype=dtype, requires_grad=requires_grad)  # noqa: E731
    yield SampleInput(t(2, 3), args=(2, 3))
    yield SampleInput(t(2, 3), args=(2, 1, 2), name="new_dims")
    yield SampleInput(t(2, 3), args=((1, 1),), name="ones")
    yield SampleInput(t(), args=(3,), name="0d")
    yield SampleInput(t(2, 0), args=(2, 2), name="empty")


def _tile_samples(dtype, requires_grad):
    t = lambda *s: make_tensor(*s, dtype=dtype, requires_grad=requires_grad)  # noqa: E731
    yield SampleInput(t(2, 3), args=((2,),), name="fewer")
    yield SampleInput(t(2, 3), args=((2, 1, 2),), name="more")


def _cat_samples(dtype, requires_grad):
    t = lambda *s: make_tensor(*s, dtype=dtype, requires_grad=requires_grad)  # noqa: E731
    yield SampleInput([t(2, 3), t(4, 3)], name="dim0")
    yield SampleInput([t(2, 3), t(2, 1), t(2, 0)], args=(-1,), name="last_with_empty")
    yield SampleInput([t(2, 3)], args=(1,), name="single")
    yield SampleInput([t(2, 3), t(0)], name="legacy_empty")
    if dtype.startswith("float"):
        other = "float32" if dtype == "float64" else "float64"
        yield SampleInput([t(2, 3), make_tensor(1, 3, dtype=other, requires_grad=requires_grad)],
                          name="promote")


def _cat_errors():
    yield ErrorInput(SampleInput([make_tensor(2, 3), make_tensor(2, 4)]), RuntimeError,
                     name="sizes")
    yield ErrorInput(SampleInput([make_tensor(2, 3), make_tensor(3)]), RuntimeError,
                     name="ndims")
    x = make_tensor(dtype="float32", requires_grad=False)
    yield ErrorInput(SampleInput([x, x]), RuntimeError, name="0d")


def _stack_samples(dtype, requires_grad):
    t = lambda *s: make_tensor(*s, dtype=dtype, requires_grad=requires_grad)  # noqa: E731
    yield SampleInput([t(2, 3), t(2, 3), t(2, 3)], name="dim0")
    yield SampleInput([t(2, 3), t(2, 3)], args=(-1,), name="last")
    yield SampleInput([t(), t()], name="0d")


def _stack_errors():
    yield ErrorInput(SampleInput([make_tensor(2, 3), make_tensor(3, 2)]), RuntimeError,
                     name="sizes")


def _hstack_samples(dtype, requires_grad):
    t = lambda *s: make_tensor(*s, dtype=dtype, requires_grad=requires_grad)  # noqa: E731
    yield SampleInput([t(2, 3), t(2, 1)], name="2d")
    yield SampleInput([t(3), t(2), t()], name="1d")


def _vstack_samples(dtype, requires_grad):
    t = lambda *s: make_tensor(*s, dtype=dtype, requires_grad=requires_grad)  # noqa: E731
    yield SampleInput([t(2, 3), t(1, 3)], name="2d")
    yield SampleInput([t(3), t(3)], name="1d")


def _split_samples(dtype, requires_grad):
    t = lambda *s: make_tensor(*s, dtype=dtype, requires_grad=requires_grad)  # noqa: E731
    yield SampleInput(t(5, 3), args=(2,), name="size")
    yield SampleInput(t(3, 5), args=(2, -1), name="size_last")
    yield SampleInput(t(5, 3), args=([1, 0, 4],), name="sizes")
    yield SampleInput(t(3, 6), args=((3, 3), 1), name="sizes_dim")
    yield SampleInput(t(0, 3), args=(2,), name="empty")


def _split_errors():
    yield ErrorInput(SampleInput(make_tensor(3, 2), args=([1, 1],)), RuntimeError, name="sum")
    yield ErrorInput(SampleInput(make_tensor(3, 2), args=(0,)), RuntimeError, name="zero")


def _chunk_samples(dtype, requires_grad):
    t = lambda *s: make_tensor(*s, dtype=dtype, requires_grad=requires_grad)  # noqa: E731
    yield SampleInput(t(5, 3), args=(2,))
    yield SampleInput(t(3, 6), args=(4, -1), name="fewer_chunks")
    yield SampleInput(t(0, 2), args=(3,), name="empty")


def _unbind_samples(dtype, requires_grad):
    t = lambda *s: make_tensor(*s, dtype=dtype, requires_grad=requires_grad)  # noqa: E731
    yield SampleInput(t(3, 2))
    yield SampleInput(t(2, 3, 2), args=(-2,), name="dim")


def _tensor_split_samples(dtype, requires_grad):
    t = lambda *s: make_tensor(*s, dtype=dtype, requires_grad=requires_grad)  # noqa: E731
    long = lambda v: retrograd.tensor(v, dtype=retrograd.int64)  # noqa: E731
    yield SampleInput(t(7, 3), args=(3,), name="uneven_sections")
    yield SampleInput(t(3, 6), args=(3, -1), name="even_sections")
    yield SampleInput(t(3, 2), args=(5,), name="more_sections")
    yield SampleInput(t(7, 3), args=([1, 5],), name="indices")
    yield SampleInput(t(7, 3), args=((5, 1, 10, -2, -20),), name="out_of_range")
    yield SampleInput(t(2, 7), args=([],), kwargs={"dim": 1}, name="no_indices")
    yield SampleInput(t(7, 3), args=(long([2, 4]),), name="index_tensor")
    yield SampleInput(t(2, 7), args=(long(2), 1), name="0d_tensor_sections")
    yield SampleInput(t(0, 3), args=(2,), name="empty")


def _tensor_split_errors():
    x = make_tensor(7, 3)
    yield ErrorInput(SampleInput(x, args=(0,)), RuntimeError, name="zero_sections")
    yield ErrorInput(SampleInput(x, args=(2, 2)), IndexError, name="dim")
    yield ErrorInput(SampleInput(x, args=([1.5],)), TypeError, name="float_indices")
    yield ErrorInput(SampleInput(x, args=(retrograd.tensor([1.0]),)), RuntimeError,
                     name="float_tensor")
    yield ErrorInput(SampleInput(x, args=(retrograd.tensor([1], dtype=retrograd.int32),)),
                     RuntimeError, name="int32_tensor")
    yield ErrorInput(SampleInput(x, args=(retrograd.tensor([[1]]),)), RuntimeError,
                     name="2d_tensor")
    yield ErrorInput(SampleInput(make_tensor(), args=(2,)), RuntimeError, name="0d_input")


def _unfold_samples(dtype, requires_grad):
    t = lambda *s, **kw: make_tensor(*s, dtype=dtype, requires_grad=requires_grad, **kw)  # noqa: E731
    yield SampleInput(t(7, 3), args=(0, 3, 2), name="overlap_gap")
    yield SampleInput(t(7, 3), args=(0, 3, 1), name="overlap")
    yield SampleInput(t(3, 8), args=(-1, 2, 3), name="gaps")
    yield SampleInput(t(2, 5, 3), args=(1, 5, 1), name="whole")
    yield SampleInput(t(3, 4, noncontiguous=True), args=(1, 2, 2), name="strided")
    yield SampleInput(_transposed(5, 3, dtype=dtype, requires_grad=requires_grad),
                      args=(0, 2, 1), name="transposed")
    yield SampleInput(t(4, 3), args=(0, 0, 2), name="size_0")
    yield SampleInput(t(), args=(0, 1, 1), name="0d")


def _unfold_errors():
    x = make_tensor(7, 3)
    yield ErrorInput(SampleInput(x, args=(0, 8, 1)), RuntimeError, name="too_big")
    yield ErrorInput(SampleInput(x, args=(0, 3, 0)), RuntimeError, name="step_0")
    yield ErrorInput(SampleInput(x, args=(0, -1, 1)), RuntimeError, name="negative_size")
    yield ErrorInput(SampleInput(x, args=(2, 1, 1)), IndexError, name="dim")
    yield ErrorInput(SampleInput(make_tensor(), args=(0, 2, 1)), RuntimeError, name="0d_size")


def _flip_samples(dtype, requires_grad):
    t = lambda *s: make_tensor(*s, dtype=dtype, requires_grad=requires_grad)  # noqa: E731
    yield SampleInput(t(2, 3, 4), args=((0, 2),))
    yield SampleInput(t(2, 3), args=([-1],), name="negative")
    yield SampleInput(t(), args=((),), name="0d")


def _flip_lr_samples(dtype, requires_grad):
    yield SampleInput(make_tensor(2, 3, 2, dtype=dtype, requires_grad=requires_grad))


def _roll_samples(dtype, requires_grad):
    t = lambda *s: make_tensor(*s, dtype=dtype, requires_grad=requires_grad)  # noqa: E731
    yield SampleInput(t(3, 4), args=(1,), name="flat")
    yield SampleInput(t(3, 4), args=(-5, 1), name="dim")
    yield SampleInput(t(3, 4), args=((1, 2), (0, -1)), name="dims")
    yield SampleInput(t(), args=(1,), name="0d")


def _narrow_samples(dtype, requires_grad):
    t = lambda *s: make_tensor(*s, dtype=dtype, requires_grad=requires_grad)  # noqa: E731
    yield SampleInput(t(5, 3), args=(0, 1, 3))
    yield SampleInput(t(3, 5), args=(-1, -2, 2), name="negative")
    yield SampleInput(t(3, 5), args=(1, 0, 5), name="full")
    yield SampleInput(t(3, 5), args=(1, 2, 0), name="empty")


def _narrow_errors():
    yield ErrorInput(SampleInput(make_tensor(3, 2), args=(0, 2, 2)), RuntimeError,
                     name="past_end")


def _select_samples(dtype, requires_grad):
    t = lambda *s: make_tensor(*s, dtype=dtype, requires_grad=requires_grad)  # noqa: E731
    yield SampleInput(t(3, 4), args=(1, -1))
    yield SampleInput(t(3, 4, 2), args=(-2, 2), name="negative_dim")


def _select_errors():
    yield ErrorInput(SampleInput(make_tensor(3, 4), args=(1, 4)), IndexError, name="range")


def _slice_scatter_samples(dtype, requires_grad):
    t = lambda *s: make_tensor(*s, dtype=dtype, requires_grad=requires_grad)  # noqa: E731
    yield SampleInput(t(4, 3), args=(t(2, 3), 0, 1, 3))
    yield SampleInput(t(4, 6), args=(t(4, 2), 1, 1, 6, 3), name="step")
    yield SampleInput(t(4, 6), args=(t(4, 2), -1, -2), name="negative")


def _select_scatter_samples(dtype, requires_grad):
    t = lambda *s: make_tensor(*s, dtype=dtype, requires_grad=requires_grad)  # noqa: E731
    yield SampleInput(t(4, 3), args=(t(3), 0, 2))
    yield SampleInput(t(2, 3, 4), args=(t(2, 4), -2, -1), name="negative")


def _diagonal_scatter_samples(dtype, requires_grad):
    t = lambda *s: make_tensor(*s, dtype=dtype, requires_grad=requires_grad)  # noqa: E731
    yield SampleInput(t(3, 3), args=(t(3),))
    yield SampleInput(t(3, 4), args=(t(3), 1), name="above")
    yield SampleInput(t(2, 3, 4), args=(t(3, 2), 1, 0, 2), name="dims")


def _view_scatter_errors(name):
    def errors():
        yield ErrorInput(SampleInput(make_tensor(4, 3), args=(make_tensor(3, 3), 0, 0)),
                         name="src_shape")
    return errors if name != "diagonal_scatter" else (
        lambda: iter([ErrorInput(SampleInput(make_tensor(3, 3), args=(make_tensor(2),)),
                                 name="src_shape")]))


def _diagonal_samples(dtype, requires_grad):
    t = lambda *s: make_tensor(*s, dtype=dtype, requires_grad=requires_grad)  # noqa: E731
    yield SampleInput(t(3, 4))
    yield SampleInput(t(3, 4), args=(1,), name="above")
    yield SampleInput(t(3, 4), args=(-2,), name="below")
    yield SampleInput(t(2, 3, 4), args=(0, -1, 0), name="dims")
    yield SampleInput(t(3, 4), args=(5,), name="outside")


def _diag_samples(dtype, requires_grad):
    t = lambda *s: make_tensor(*s, dtype=dtype, requires_grad=requires_grad)  # noqa: E731
    yield SampleInput(t(3), name="embed")
    yield SampleInput(t(3), args=(-1,), name="embed_below")
    yield SampleInput(t(3, 4), name="extract")
    yield SampleInput(t(3, 4), args=(2,), name="extract_above")


def _diag_embed_samples(dtype, requires_grad):
    t = lambda *s: make_tensor(*s, dtype=dtype, requires_grad=requires_grad)  # noqa: E731
    yield SampleInput(t(2, 3))
    yield SampleInput(t(2, 3), args=(1, 0, 2), name="dims")
    yield SampleInput(t(3), args=(-1,), name="below")


def _tri_samples(dtype, requires_grad):
    t = lambda *s: make_tensor(*s, dtype=dtype, requires_grad=requires_grad)  # noqa: E731
    yield SampleInput(t(3, 4))
    yield SampleInput(t(2, 3, 4), args=(1,), name="batched")
    yield SampleInput(t(4, 3), args=(-1,), name="below")


def _tri_errors():
    yield ErrorInput(SampleInput(make_tensor(3)), RuntimeError, name="1d")


def _clone_samples(dtype, requires_grad):
    t = lambda *s, **kw: make_tensor(*s, dtype=dtype, requires_grad=requires_grad, **kw)  # noqa: E731
    yield SampleInput(t(2, 3))
    yield SampleInput(_transposed(3, 4, dtype=dtype, requires_grad=requires_grad),
                      name="transposed")
    yield SampleInput(t(), name="0d")


def _clone_as_samples(dtype, requires_grad):
    """clone's and contiguous' samples, and copies into channels-last order."""
    yield from _clone_samples(dtype, requires_grad)
    t = make_tensor(2, 3, 4, 5, dtype=dtype, requires_grad=requires_grad)
    yield SampleInput(t, kwargs={"memory_format": retrograd.channels_last},
                      name="channels_last")


def _as_strided_samples(dtype, requires_grad):
    t = lambda *s: make_tensor(*s, dtype=dtype, requires_grad=requires_grad)  # noqa: E731
    yield SampleInput(t(3, 4), args=((2, 2), (1, 2)))
    yield SampleInput(t(3, 4), args=((3, 3), (1, 1), 1), name="overlapping")
    yield SampleInput(t(12), args=((2, 3), (3, 1), 6), name="offset")


def _as_strided_errors():
    yield ErrorInput(SampleInput(make_tensor(3, 4), args=((4, 4), (4, 1))), RuntimeError,
                     name="bounds")


def _lossy(dtype, target):
    """Finite differences through a cast to lower precision are meaningless: such
    samples are compared with PyTorch only."""
    return numpy.dtype(target).itemsize < numpy.dtype(dtype).itemsize


def _to_samples(dtype, requires_grad):
    x = make_tensor(2, 3, dtype=dtype, requires_grad=requires_grad)
    yield SampleInput(x, args=(retrograd.float64,), name="float64")
    yield SampleInput(x, args=(retrograd.float32,), name="float32",
                      nondifferentiable=_lossy(dtype, "float32"))
    yield SampleInput(x, args=(retrograd.int64,), name="int64")
    yield SampleInput(x, kwargs={"dtype": retrograd.float16}, name="float16_kw",
                      nondifferentiable=_lossy(dtype, "float16"))
    yield SampleInput(x, args=("cpu", retrograd.float64), name="device_dtype")
    yield SampleInput(x, args=(make_tensor(1, dtype="float64"),), name="other")
    yield SampleInput(x, args=(retrograd.float32,), kwargs={"copy": True}, name="copy",
                      nondifferentiable=_lossy(dtype, "float32"))
    t = make_tensor(2, 3, 4, 5, dtype=dtype, requires_grad=requires_grad)
    yield SampleInput(t, kwargs={"memory_format": retrograd.channels_last},
                      name="channels_last")
    yield SampleInput(t, args=(retrograd.float64,),
                      kwargs={"memory_format": retrograd.channels_last},
                      name="channels_last_float64")


def _cast_samples(target):
    def samples(dtype, requires_grad):
        yield SampleInput(make_tensor(2, 3, dtype=dtype, requires_grad=requires_grad),
                          nondifferentiable=_lossy(dtype, target))
    return samples


def _type_as_samples(dtype, requires_grad):
    yield SampleInput(make_tensor(2, 3, dtype=dtype, requires_grad=requires_grad),
                      args=(make_tensor(1, dtype="float64"),))


def _new_samples(dtype, requires_grad):
    x = make_tensor(2, dtype=dtype, requires_grad=requires_grad)
    yield SampleInput(x, args=(2, 3), name="varargs")
    yield SampleInput(x, args=((2, 3),), kwargs={"dtype": retrograd.int64}, name="dtype")


def _new_full_samples(dtype, requires_grad):
    x = make_tensor(2, dtype=dtype, requires_grad=requires_grad)
    yield SampleInput(x, args=((2, 3), 5))


def _fill_samples(dtype, requires_grad):
    x = make_tensor(2, 3, dtype=dtype, requires_grad=requires_grad)
    yield SampleInput(x, args=(2,), name="number")
    yield SampleInput(x, args=(make_tensor(dtype="float64", requires_grad=requires_grad),),
                      name="tensor")


def _copy_samples(dtype, requires_grad):
    x = make_tensor(2, 3, dtype=dtype, requires_grad=requires_grad)
    yield SampleInput(x, args=(make_tensor(2, 3, dtype=dtype, requires_grad=requires_grad),))
    yield SampleInput(x, args=(make_tensor(3, dtype=dtype, requires_grad=requires_grad),),
                      name="broadcast")
    yield SampleInput(x, args=(make_tensor(2, 1, dtype="float64", requires_grad=requires_grad),),
                      name="cast")


def _copy_errors():
    yield ErrorInput(SampleInput(make_tensor(2, 3), args=(make_tensor(4),)), RuntimeError,
                     name="broadcast")


def _zero_samples(dtype, requires_grad):
    yield SampleInput(make_tensor(2, 3, dtype=dtype, requires_grad=requires_grad))


def _entry(name, samples, dtypes=_ALL, **kw):
    return OpInfo(name, samples, dtypes=dtypes, **kw)


OPS = [
    _entry("reshape", _reshape_samples),
    _entry("reshape", _view_samples, method=True, variant="method"),
    _entry("view", _view_samples, method=True, error_inputs=_view_errors),
    _entry("view_as", _as_samples, method=True),
    _entry("reshape_as", _as_samples, method=True),
    _entry("flatten", _flatten_samples),
    _entry("unflatten", _unflatten_samples),
    _entry("squeeze", _squeeze_samples),
    _entry("unsqueeze", _unsqueeze_samples),
    _entry("permute", _permute_samples, error_inputs=_permute_errors),
    _entry("permute", _permute_method_samples, method=True, variant="method"),
    _entry("transpose", _transpose_samples),
    _entry("swapaxes", _transpose_samples, dtypes=_FLOAT),
    _entry("swapdims", _transpose_samples, dtypes=_FLOAT),
    _entry("t", _t_samples),
    _entry("T", _t_samples, op=lambda x: x.T, torch_op=lambda x: x.T),
    _entry("mT", _movedim_samples, op=lambda x, *a: x.mT, torch_op=lambda x, *a: x.mT,
           dtypes=_FLOAT),
    _entry("movedim", _movedim_samples),
    _entry("moveaxis", _movedim_samples, dtypes=_FLOAT),
    _entry("expand", _expand_samples, method=True, error_inputs=_expand_errors),
    _entry("expand_as", _expand_as_samples, method=True, dtypes=_FLOAT),
    _entry("broadcast_to", _broadcast_to_samples),
    _entry("broadcast_tensors", _broadcast_tensors_samples),
    _entry("repeat", _repeat_samples, method=True),
    _entry("tile", _tile_samples),
    _entry("cat", _cat_samples, error_inputs=_cat_errors),
    _entry("concat", _cat_samples, dtypes=_FLOAT),
    _entry("concatenate", _cat_samples, dtypes=_FLOAT),
    _entry("stack", _stack_samples, error_inputs=_stack_errors),
    _entry("hstack", _hstack_samples),
    _entry("vstack", _vstack_samples),
    _entry("split", _split_samples, error_inputs=_split_errors),
    _entry("split", _split_samples, method=True, variant="method"),
    _entry("chunk", _chunk_samples),
    _entry("unbind", _unbind_samples),
    _entry("tensor_split", _tensor_split_samples, error_inputs=_tensor_split_errors),
    _entry("tensor_split", _tensor_split_samples, method=True, variant="method"),
    _entry("flip", _flip_samples),
    _entry("fliplr", _flip_lr_samples),
    _entry("flipud", _flip_lr_samples),
    _entry("roll", _roll_samples),
    _entry("narrow", _narrow_samples, error_inputs=_narrow_errors),
    _entry("select", _select_samples, error_inputs=_select_errors),
    _entry("diagonal", _diagonal_samples),
    *(_entry(n, samples, error_inputs=_view_scatter_errors(n))
      for n, samples in (("slice_scatter", _slice_scatter_samples),
                         ("select_scatter", _select_scatter_samples),
                         ("diagonal_scatter", _diagonal_scatter_samples))),
    _entry("diag", _diag_samples),
    _entry("diag_embed", _diag_embed_samples),
    _entry("tril", _tri_samples, error_inputs=_tri_errors),
    _entry("triu", _tri_samples),
    _entry("contiguous", _clone_as_samples, method=True),
    _entry("clone", _clone_as_samples),
    _entry("unfold", _unfold_samples, method=True, error_inputs=_unfold_errors),
    _entry("as_strided", _as_strided_samples, error_inputs=_as_strided_errors),
    _entry("to", _to_samples, method=True),
    *(_entry(n, _cast_samples(t), method=True)
      for n, t in (("float", "float32"), ("double", "float64"), ("half", "float16"),
                   ("long", "int64"), ("int", "int32"), ("short", "int16"), ("bool", "bool"),
                   ("byte", "uint8"), ("char", "int8"))),
    _entry("type", _cast_samples("float32"), method=True, supports_grad=False,
           op=lambda x: x.type(), torch_op=lambda x: x.type()),
    _entry("type_as", _type_as_samples, method=True),
    *(_entry(n, _new_samples, method=True, supports_grad=False)
      for n in ("new_zeros", "new_ones")),
    _entry("new_full", _new_full_samples, method=True, supports_grad=False),
    _entry("zero_", _zero_samples, **_on_clone("zero_")),
    _entry("fill_", _fill_samples, **_on_clone("fill_")),
    _entry("copy_", _copy_samples, **_on_clone("copy_"), error_inputs=_copy_errors),
]
