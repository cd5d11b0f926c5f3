"""Op-database entries for the pooling family of ``ops/pooling.py`` and the 1-D/3-D
convolutions of ``ops/convolution.py``: small shapes covering strides, padding, dilation,
ceil_mode, uneven adaptive bins and unpooling, so gradcheck stays quick."""

import retrograd.nn.functional as F

from ._core import (ErrorInput, OpInfo, SampleInput, make_tensor, maker as _maker,
                   torch_functional as _tf)

_FLOAT = ("float32", "float64")


def _max_pool1d_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    yield SampleInput(t(2, 3, 8), (2,), name="k2")
    yield SampleInput(t(1, 2, 9), (3, 2, 1), {"dilation": 2}, name="pad_dilation")
    yield SampleInput(t(3, 7), (2,), {"ceil_mode": True}, name="ceil_unbatched")
    yield SampleInput(t(1, 2, 7), (3, 1), {"return_indices": True}, name="indices")


def _max_pool2d_indices_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    yield SampleInput(t(2, 2, 4, 4), (2,), name="k2")
    yield SampleInput(t(1, 2, 5, 6), (3, 2, 1), name="overlap_pad")


def _max_pool3d_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    yield SampleInput(t(1, 2, 4, 4, 4), (2,), name="k2")
    yield SampleInput(t(1, 1, 5, 4, 6), ((3, 2, 3), (2, 1, 2), 1), name="overlap_pad")
    yield SampleInput(t(2, 5, 5, 3), (2,), {"ceil_mode": True}, name="ceil_unbatched")
    yield SampleInput(t(1, 1, 5, 5, 5), (2, 1, 0, 2), {"return_indices": True},
                      name="dilation_indices")


def _avg_pool1d_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    yield SampleInput(t(2, 3, 8), (2,), name="k2")
    yield SampleInput(t(1, 2, 9), (3, 2, 1), {"count_include_pad": False}, name="no_pad")
    yield SampleInput(t(3, 7), (2,), {"ceil_mode": True}, name="ceil_unbatched")


def _avg_pool3d_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    yield SampleInput(t(1, 2, 4, 4, 4), (2,), name="k2")
    yield SampleInput(t(1, 1, 5, 4, 6), ((3, 2, 3), (2, 1, 2), 1), name="overlap_pad")
    yield SampleInput(t(1, 1, 5, 5, 5), (3, 2, 1), {"count_include_pad": False,
                                                    "ceil_mode": True}, name="no_pad_ceil")
    yield SampleInput(t(2, 4, 4, 3), (2,), {"divisor_override": 3}, name="divisor_unbatched")


def _adaptive1d_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    yield SampleInput(t(2, 3, 7), (3,), name="uneven")
    yield SampleInput(t(2, 8), (4,), name="even_unbatched")
    yield SampleInput(t(1, 2, 5), (1,), name="global")


def _adaptive_max1d_samples(dtype, requires_grad):
    yield from _adaptive1d_samples(dtype, requires_grad)
    t = _maker(dtype, requires_grad)
    yield SampleInput(t(1, 2, 5), (3,), {"return_indices": True}, name="overlap_indices")


def _adaptive_max2d_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    yield SampleInput(t(2, 2, 5, 7), ((2, 3),), name="uneven")
    yield SampleInput(t(1, 2, 4, 4), (2,), name="even")
    yield SampleInput(t(2, 5, 5), ((3, None),), {"return_indices": True},
                      name="overlap_none_unbatched")
    yield SampleInput(t(1, 2, 3, 4), ((6, 5),), name="upsample")


def _adaptive3d_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    yield SampleInput(t(1, 2, 5, 4, 7), ((2, 3, 4),), name="uneven")
    yield SampleInput(t(2, 4, 4, 4), (2,), name="even_unbatched")
    yield SampleInput(t(1, 2, 3, 3, 3), ((1, None, 2),), name="none")


def _adaptive_avg3d_samples(dtype, requires_grad):
    yield from _adaptive3d_samples(dtype, requires_grad)
    t = _maker(dtype, requires_grad)
    yield SampleInput(t(1, 2, 3, 2, 3), (1,), name="global")


def _adaptive_max3d_samples(dtype, requires_grad):
    yield from _adaptive3d_samples(dtype, requires_grad)
    t = _maker(dtype, requires_grad)
    yield SampleInput(t(1, 1, 5, 3, 4), (3,), {"return_indices": True},
                      name="overlap_indices")


def _pool_indices(nd, shape, kernel, stride=None):
    """The indices of a max pooling (distinct: non-overlapping windows)."""
    pool = {1: F.max_pool1d, 2: F.max_pool2d, 3: F.max_pool3d}[nd]
    return pool(make_tensor(*shape, dtype="float64"), kernel, stride, return_indices=True)[1]


def _unpool_samples(nd):
    def samples(dtype, requires_grad):
        t = _maker(dtype, requires_grad)
        small = (4,) * nd
        ind = _pool_indices(nd, (2, 2) + small, 2)
        yield SampleInput(t(*ind.shape), (ind, 2), name="k2")
        ind = _pool_indices(nd, (1, 2) + (5,) * nd, 2)
        yield SampleInput(t(*ind.shape), (ind, 2), {"output_size": (5,) * nd},
                          name="output_size")
        ind = _pool_indices(nd, (2,) + (8,) * nd, 2, 3)
        yield SampleInput(t(*ind.shape), (ind, 2, 3), name="stride_unbatched")
    return samples


def _unpool_errors(nd):
    def errors():
        ind = _pool_indices(nd, (1, 1) + (4,) * nd, 2)
        x = make_tensor(*ind.shape)
        bad = ind.clone()
        bad.view(-1)[-1] = 100  # one bad index: PyTorch's threads report any of several
        yield ErrorInput(SampleInput(x, (bad, 2)), RuntimeError, name="bad_index")
        yield ErrorInput(SampleInput(x, (ind.float(), 2)), RuntimeError, name="float_index")
        yield ErrorInput(SampleInput(x, (ind, 2), {"output_size": (9,) * nd}), ValueError,
                         name="output_size")
    return errors


def _lp_samples(nd):
    def samples(dtype, requires_grad):
        t = _maker(dtype, requires_grad, low=0.5, high=2.0)
        yield SampleInput(t(1, 2, *(4,) * nd), (2, 2), name="p2")
        yield SampleInput(t(1, 2, *(5,) * nd), (3, 3, 2), name="p3_stride")
        yield SampleInput(t(2, *(5,) * nd), (1.5, 2), {"ceil_mode": True},
                          name="ceil_unbatched")
    return samples


def _max_pool1d_errors():
    yield ErrorInput(SampleInput(make_tensor(1, 2, 3, 4), (2,)), name="dims")
    yield ErrorInput(SampleInput(make_tensor(2, 3, 8), (2, 2, 2)), name="padding")
    yield ErrorInput(SampleInput(make_tensor(2, 3, 8), (10,)), name="too_small")
    yield ErrorInput(SampleInput(make_tensor(2, 3, 8, dtype="int64"), (2,)),
                     NotImplementedError, name="integer")


def _avg_pool1d_errors():
    yield ErrorInput(SampleInput(make_tensor(1, 2, 3, 4), (2,)), name="dims")
    yield ErrorInput(SampleInput(make_tensor(2, 3, 8), (10,)), name="too_small")


def _pool3d_errors(avg):
    def errors():
        yield ErrorInput(SampleInput(make_tensor(2, 3, 4), (2,)), name="dims")
        yield ErrorInput(SampleInput(make_tensor(1, 2, 4, 4, 4), (2, 2, 2)), name="padding")
        yield ErrorInput(SampleInput(make_tensor(1, 2, 4, 4, 4), (5,)), name="too_small")
        if avg:
            yield ErrorInput(SampleInput(make_tensor(1, 2, 4, 4, 4), (2,),
                                         {"divisor_override": 0}), name="divisor")
    return errors


def _adaptive_errors(name, shape, integer=True):
    def errors():
        yield ErrorInput(SampleInput(make_tensor(*shape), (2,)), name="dims")
        if integer:
            yield ErrorInput(SampleInput(make_tensor(*shape[1:], dtype="int64"), (2,)),
                             NotImplementedError, name="integer")
    return errors


def _conv3d_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    yield SampleInput(t(2, 2, 4, 3, 5), (t(3, 2, 2, 2, 3), t(3)), name="basic")
    yield SampleInput(t(1, 4, 5, 4, 4), (t(4, 2, 3, 2, 2),), {"stride": (2, 1, 2), "padding": 1,
                                                             "dilation": (1, 2, 1),
                                                             "groups": 2}, name="options")
    yield SampleInput(t(2, 3, 3, 4), (t(2, 2, 2, 2, 2), t(2)), {"padding": "same"},
                      name="same_unbatched")
    yield SampleInput(t(1, 1, 3, 4, 3), (t(2, 1, 1, 2, 1),), {"padding": "valid"},
                      name="valid")


def _conv_t1d_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    yield SampleInput(t(2, 2, 5), (t(2, 3, 3), t(3)), name="basic")
    yield SampleInput(t(1, 4, 4), (t(4, 1, 3),), {"stride": 2, "padding": 1,
                                                  "output_padding": 1, "groups": 2,
                                                  "dilation": 2}, name="options")
    yield SampleInput(t(2, 5), (t(2, 2, 2), t(2)), {"stride": 3}, name="unbatched")


def _conv_t3d_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    yield SampleInput(t(1, 2, 3, 2, 3), (t(2, 3, 2, 2, 2), t(3)), name="basic")
    yield SampleInput(t(1, 4, 3, 2, 2), (t(4, 1, 3, 2, 2), t(2)),
                      {"stride": (2, 1, 2), "padding": 1, "output_padding": (1, 0, 1),
                       "groups": 2, "dilation": (1, 2, 1)}, name="options")
    yield SampleInput(t(2, 2, 2, 2), (t(2, 1, 2, 2, 2),), {"stride": 2}, name="unbatched")


def _conv3d_errors():
    yield ErrorInput(SampleInput(make_tensor(1, 2, 4, 4, 4), (make_tensor(3, 3, 2, 2, 2),)),
                     name="channels")
    yield ErrorInput(SampleInput(make_tensor(1, 2, 4, 4, 4, 4), (make_tensor(3, 2, 2, 2, 2),)),
                     name="dims")
    yield ErrorInput(SampleInput(make_tensor(1, 3, 2, 2, 2), (make_tensor(3, 3, 3, 3, 3),)),
                     name="kernel_too_big")
    yield ErrorInput(SampleInput(make_tensor(1, 3, 4, 4, 4), (make_tensor(3, 3, 3, 3, 3),),
                                 {"padding": "same", "stride": 2}), name="same_strided")
    yield ErrorInput(SampleInput(make_tensor(1, 3, 4, 4, 4), (make_tensor(3, 3, 3, 3, 3),),
                                 {"padding": "foo"}), name="padding_string")


def _conv_t_errors(nd):
    def errors():
        yield ErrorInput(SampleInput(make_tensor(1, 2, *(4,) * nd),
                                     (make_tensor(3, 3, *(2,) * nd),)), name="channels")
    return errors


def _int_pool2d_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    yield SampleInput(t(2, 2, 4, 4), (2,), name="k2")
    yield SampleInput(t(1, 2, 5, 6), (3, 2, 1), name="overlap_pad")


def _int_pool1d_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    yield SampleInput(t(2, 3, 8), (2,), name="k2")
    yield SampleInput(t(1, 2, 9), (3, 2, 1), name="overlap_pad")


def _no_samples(dtype, requires_grad):
    return ()


def _int_errors(name, shape, arg, dtype="int64"):
    def errors():
        yield ErrorInput(SampleInput(make_tensor(*shape, dtype=dtype), (arg,)),
                         NotImplementedError, name=dtype)
    return errors


def _entry(name, samples, **kw):
    kw.setdefault("dtypes", _FLOAT)
    return OpInfo(name, samples, op=getattr(F, name), torch_op=_tf(name), **kw)


OPS = [
    _entry("max_pool1d", _max_pool1d_samples, error_inputs=_max_pool1d_errors),
    _entry("max_pool1d_with_indices", _max_pool1d_samples),
    _entry("max_pool2d_with_indices", _max_pool2d_indices_samples),
    _entry("max_pool3d", _max_pool3d_samples, error_inputs=_pool3d_errors(False),
           dtypes=("float32", "float64", "int64", "int32", "uint8")),
    _entry("max_pool3d_with_indices", _max_pool3d_samples),
    _entry("avg_pool1d", _avg_pool1d_samples, error_inputs=_avg_pool1d_errors),
    _entry("avg_pool3d", _avg_pool3d_samples, error_inputs=_pool3d_errors(True),
           dtypes=("float32", "float64", "int64")),
    _entry("adaptive_avg_pool1d", _adaptive1d_samples,
           error_inputs=_adaptive_errors("adaptive_avg_pool1d", (1, 2, 3, 4), False)),
    _entry("adaptive_avg_pool3d", _adaptive_avg3d_samples,
           error_inputs=_adaptive_errors("adaptive_avg_pool3d", (1, 1, 2, 3, 4, 5))),
    _entry("adaptive_max_pool1d", _adaptive_max1d_samples,
           error_inputs=_adaptive_errors("adaptive_max_pool1d", (1, 2, 3, 4), False)),
    _entry("adaptive_max_pool2d", _adaptive_max2d_samples,
           error_inputs=_adaptive_errors("adaptive_max_pool2d", (1, 2, 3, 4, 5))),
    _entry("adaptive_max_pool3d", _adaptive_max3d_samples,
           error_inputs=_adaptive_errors("adaptive_max_pool3d", (1, 1, 2, 3, 4, 5))),
    *(_entry(f"max_unpool{nd}d", _unpool_samples(nd), error_inputs=_unpool_errors(nd))
      for nd in (1, 2, 3)),
    *(_entry(f"lp_pool{nd}d", _lp_samples(nd)) for nd in (1, 2, 3)),
    # Integer pooling (PyTorch's 2-D kernels take integers; avg divides toward zero).
    _entry("max_pool2d", _int_pool2d_samples, variant="integer",
           dtypes=("int64", "int32", "uint8"), error_inputs=_int_errors(
               "max_pool2d", (1, 2, 4, 4), 2, "bool")),
    _entry("avg_pool2d", _int_pool2d_samples, variant="integer", dtypes=("int64",)),
    _entry("avg_pool1d", _int_pool1d_samples, variant="integer", dtypes=("int64",)),
    _entry("adaptive_avg_pool2d", _no_samples, variant="integer",
           error_inputs=_int_errors("adaptive_avg_pool2d", (1, 2, 4, 4), 2)),
    _entry("adaptive_avg_pool1d", _no_samples, variant="integer",
           error_inputs=_int_errors("adaptive_avg_pool1d", (1, 2, 4), 2)),
    _entry("conv3d", _conv3d_samples, atol=1e-5, rtol=1e-5, error_inputs=_conv3d_errors),
    _entry("conv_transpose1d", _conv_t1d_samples, atol=1e-5, rtol=1e-5,
           error_inputs=_conv_t_errors(1)),
    _entry("conv_transpose3d", _conv_t3d_samples, atol=1e-5, rtol=1e-5,
           error_inputs=_conv_t_errors(3)),
]
