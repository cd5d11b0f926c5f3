"""Op database entries for resampling and rearranging (``ops/resample.py`` and the
functions over it): ``interpolate`` per mode, over 1-3 spatial dims, sizes and scales that
up- and downsample, align_corners, and the argument errors PyTorch raises."""

import retrograd.nn.functional as F

from ._core import (ErrorInput, OpInfo, SampleInput, make_tensor, maker as _maker,
                   torch_functional as _tf)

_FLOAT = ("float32", "float64")


_DIMS = {"nearest": (1, 2, 3), "nearest-exact": (1, 2, 3), "area": (1, 2, 3),
         "linear": (1,), "bilinear": (2,), "bicubic": (2,), "trilinear": (3,)}
_SHAPES = {1: (2, 2, 5), 2: (1, 2, 3, 4), 3: (1, 1, 2, 2, 3)}


def _interpolate_samples(mode):
    def samples(dtype, requires_grad):
        t = _maker(dtype, requires_grad)
        corners = (False, True) if mode in ("linear", "bilinear", "bicubic", "trilinear") \
            else (None,)
        for k in _DIMS[mode]:
            shape = _SHAPES[k]
            for ac in corners:
                kw = {"mode": mode} if ac is None else {"mode": mode, "align_corners": ac}
                yield SampleInput(t(*shape), (), {"scale_factor": 2, **kw}, name=f"{k}d_x2_{ac}")
                if not ac:
                    yield SampleInput(t(*shape), (), {"scale_factor": 1.7, **kw},
                                      name=f"{k}d_x1.7")
                sizes = (7, 3, 5)[:k] if k > 1 else 3
                yield SampleInput(t(*shape), (), {"size": sizes, **kw}, name=f"{k}d_size_{ac}")
            yield SampleInput(t(*shape), (), {"scale_factor": 0.6, "mode": mode,
                                              "recompute_scale_factor": True},
                              name=f"{k}d_recompute")
            scales = tuple(1.5 + 0.5 * i for i in range(k))
            if mode != "area":
                yield SampleInput(t(*shape, noncontiguous=True), (),
                                  {"scale_factor": scales, "mode": mode,
                                   "recompute_scale_factor": False}, name=f"{k}d_scales")
        if mode == "area":
            yield SampleInput(t(2, 3, 4, 4), (), {"size": 1, "mode": mode}, name="global")
        if mode in ("bilinear", "bicubic"):
            yield SampleInput(t(1, 1, 6, 7), (), {"size": (3, 4), "mode": mode, "antialias": True},
                              name="antialias_down")
            yield SampleInput(t(1, 2, 3, 4), (), {"scale_factor": 1.5, "mode": mode,
                                                  "antialias": True}, name="antialias_up")
            yield SampleInput(t(1, 1, 5, 5), (), {"size": (2, 3), "mode": mode,
                                                  "antialias": True, "align_corners": True},
                              name="antialias_corners")
        if mode == "nearest":
            yield SampleInput(t(3, 2, 4), (), {"size": 9, "mode": mode}, name="size_int")
    return samples


def _interpolate_errors():
    t = make_tensor
    cases = [
        ((t(1, 2, 4, 5),), {"scale_factor": 2, "align_corners": True}, ValueError, "corners"),
        ((t(1, 2, 4, 5),), {"size": 3, "scale_factor": 2}, ValueError, "both"),
        ((t(1, 2, 4, 5),), {}, ValueError, "neither"),
        ((t(1, 2, 4, 5),), {"size": (2, 3, 4)}, ValueError, "size_len"),
        ((t(1, 2, 4, 5),), {"size": (2.0, 3)}, TypeError, "size_type"),
        ((t(1, 2, 4, 5),), {"scale_factor": (2, 3, 4)}, ValueError, "scale_len"),
        ((t(1, 2, 4, 5),), {"size": 3, "recompute_scale_factor": True}, ValueError,
         "recompute_size"),
        ((t(1, 2, 4, 5),), {"scale_factor": 2, "mode": "foo"}, NotImplementedError, "mode"),
        ((t(1, 2, 4, 5),), {"scale_factor": 2, "mode": "linear"}, NotImplementedError,
         "linear_4d"),
        ((t(1, 2, 4),), {"scale_factor": 2, "mode": "bilinear"}, NotImplementedError,
         "bilinear_3d"),
        ((t(1, 2, 4, 5),), {"scale_factor": 2, "mode": "trilinear"}, NotImplementedError,
         "trilinear_4d"),
        ((t(2, 3),), {"scale_factor": 2}, NotImplementedError, "rank2"),
        ((t(1, 2, 4),), {"scale_factor": 2, "mode": "linear", "antialias": True}, ValueError,
         "antialias"),
        ((t(1, 2, 4, 5),), {"size": (0, 3), "mode": "bilinear"}, RuntimeError, "size0"),
        ((t(1, 2, 4, 5),), {"scale_factor": -1.0}, RuntimeError, "negative"),
        ((t(1, 2, 4),), {"scale_factor": 0.1, "mode": "linear"}, RuntimeError, "empty_1d"),
        ((t(1, 1, 2, 3, 4),), {"scale_factor": 0.1, "mode": "nearest-exact"}, RuntimeError,
         "empty_3d"),
        ((t(1, 0, 3, 3),), {"scale_factor": 2, "mode": "bilinear"}, RuntimeError,
         "no_channels"),
        ((t(1, 2, 2, 2, dtype="int64"),), {"scale_factor": 2, "mode": "bicubic"},
         NotImplementedError, "int_bicubic"),
        ((t(1, 2, 3, dtype="int64"),), {"scale_factor": 2, "mode": "nearest-exact"},
         NotImplementedError, "int_nearest"),
        ((t(1, 2, 3, 3, dtype="int32"),), {"scale_factor": 2, "mode": "bilinear"},
         NotImplementedError, "int_bilinear"),
        ((t(1, 2, 3, 3, 3, dtype="int64"),), {"scale_factor": 2, "mode": "trilinear"},
         NotImplementedError, "int_trilinear"),
        ((t(1, 2, 3, dtype="int64"),), {"size": 2, "mode": "area"}, NotImplementedError,
         "int_area"),
        ((t(1, 2, 3, 3, 3, dtype="int64"),), {"size": 2, "mode": "area"},
         NotImplementedError, "int_area_3d"),
        ((t(1, 2, 3, 3, dtype="int64"),), {"size": 2, "mode": "bicubic", "antialias": True},
         NotImplementedError, "int_antialias"),
    ]
    for args, kw, err, name in cases:
        yield ErrorInput(SampleInput(args[0], args[1:], kw), err, name=name)


def _pixel_shuffle_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    yield SampleInput(t(2, 8, 2, 3), (2,), name="batched")
    yield SampleInput(t(9, 2, 2), (3,), name="unbatched")
    yield SampleInput(t(2, 1, 4, 1, 2, noncontiguous=True), (2,), name="more_dims")
    yield SampleInput(t(1, 4, 2, 2), (1,), name="factor1")


def _pixel_unshuffle_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    yield SampleInput(t(2, 2, 4, 6), (2,), name="batched")
    yield SampleInput(t(1, 3, 6), (3,), name="unbatched")
    yield SampleInput(t(2, 1, 1, 2, 4, noncontiguous=True), (2,), name="more_dims")


def _shuffle_errors(name):
    def errors():
        t = make_tensor
        yield ErrorInput(SampleInput(t(8), (2,)), RuntimeError, name="rank1")
        yield ErrorInput(SampleInput(t(1, 8, 2, 2), (0,)), RuntimeError, name="zero")
        yield ErrorInput(SampleInput(t(1, 8, 2, 2), (-1,)), RuntimeError, name="negative")
        if name == "pixel_shuffle":
            yield ErrorInput(SampleInput(t(1, 8, 2, 2), (3,)), RuntimeError, name="channels")
        else:
            yield ErrorInput(SampleInput(t(1, 8, 3, 4), (2,)), RuntimeError, name="height")
            yield ErrorInput(SampleInput(t(1, 8, 4, 3), (2,)), RuntimeError, name="width")
    return errors


def _channel_shuffle_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    yield SampleInput(t(2, 6, 2, 2), (2,), name="4d")
    yield SampleInput(t(2, 6, 3), (3,), name="3d")
    yield SampleInput(t(1, 4, 1, 2, 2, noncontiguous=True), (4,), name="5d")
    yield SampleInput(t(2, 3, 2), (1,), name="one_group")


def _channel_shuffle_errors():
    t = make_tensor
    yield ErrorInput(SampleInput(t(2, 4), (2,)), RuntimeError, name="rank2")
    yield ErrorInput(SampleInput(t(1, 8, 2, 2), (0,)), RuntimeError, name="zero")
    yield ErrorInput(SampleInput(t(1, 8, 2, 2), (3,)), RuntimeError, name="divisible")


def _unfold_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    yield SampleInput(t(2, 2, 4, 5), (2,), name="basic")
    yield SampleInput(t(2, 3, 4), ((2, 3),), {"padding": 1, "stride": (2, 1)},
                      name="unbatched_pad_stride")
    yield SampleInput(t(1, 2, 5, 5, noncontiguous=True), (2,), {"dilation": (2, 1),
                                                                "padding": (0, 1)},
                      name="dilation")


def _fold_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    yield SampleInput(t(2, 8, 12), ((4, 5), 2), name="basic")
    yield SampleInput(t(6, 8), ((3, 4), (2, 3)), {"padding": 1, "stride": (2, 1)},
                      name="unbatched_pad_stride")
    yield SampleInput(t(1, 8, 18), ((5, 5), 2), {"dilation": (2, 1), "padding": (0, 1)},
                      name="dilation")


def _unfold_errors():
    t = make_tensor
    yield ErrorInput(SampleInput(t(1, 2, 3, 3, 3), (2,)), RuntimeError, name="rank5")
    yield ErrorInput(SampleInput(t(1, 2, 3, 3), (4,)), RuntimeError, name="too_big")
    yield ErrorInput(SampleInput(t(1, 2, 3, 3), (0,)), RuntimeError, name="kernel0")
    yield ErrorInput(SampleInput(t(1, 2, 3, 3), (2,), {"stride": 0}), RuntimeError,
                     name="stride0")
    yield ErrorInput(SampleInput(t(1, 2, 3, 3), (2,), {"padding": -1}), RuntimeError,
                     name="negative_pad")
    yield ErrorInput(SampleInput(t(1, 2, 3, 3), (2,), {"dilation": 0}), RuntimeError,
                     name="dilation0")
    yield ErrorInput(SampleInput(t(1, 2, 3, 3), ((2, 2, 2),)), RuntimeError, name="kernel3")


def _fold_errors():
    t = make_tensor
    yield ErrorInput(SampleInput(t(2, 7, 4), ((3, 3), 2)), RuntimeError, name="channels")
    yield ErrorInput(SampleInput(t(2, 8, 5), ((3, 3), 2)), RuntimeError, name="blocks")
    yield ErrorInput(SampleInput(t(2, 8, 4, 1), ((3, 3), 2)), RuntimeError, name="rank4")
    yield ErrorInput(SampleInput(t(2, 8, 4), ((3, 3, 3), 2)), RuntimeError, name="size3")
    yield ErrorInput(SampleInput(t(2, 8, 4), ((3, 3), 0)), RuntimeError, name="kernel0")


def _grid(*shape, dtype, requires_grad, low=-1.3, high=1.3):
    return make_tensor(*shape, dtype=dtype, low=low, high=high, requires_grad=requires_grad)


def _grid_sample_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)

    def g(*shape, **kw):
        return _grid(*shape, dtype=dtype, requires_grad=requires_grad, **kw)
    for mode in ("bilinear", "nearest"):
        for pad in ("zeros", "border", "reflection"):
            for ac in (False, True):
                yield SampleInput(t(2, 2, 3, 4), (g(2, 2, 3, 2),),
                                  {"mode": mode, "padding_mode": pad, "align_corners": ac},
                                  name=f"{mode}_{pad}_{ac}",
                                  nondifferentiable=mode == "nearest")
    yield SampleInput(t(1, 1, 1, 3), (g(1, 2, 2, 2, low=-3.0, high=3.0),),
                      {"padding_mode": "reflection", "align_corners": True}, name="unit_height")
    for mode, pad, ac in (("bilinear", "zeros", False), ("bilinear", "reflection", True),
                          ("bilinear", "border", False), ("nearest", "zeros", True)):
        yield SampleInput(t(1, 2, 2, 3, 2), (g(1, 2, 1, 2, 3),),
                          {"mode": mode, "padding_mode": pad, "align_corners": ac},
                          name=f"3d_{mode}_{pad}_{ac}", nondifferentiable=mode == "nearest")


def _grid_sample_errors():
    t = make_tensor
    yield ErrorInput(SampleInput(t(1, 1, 3, 3), (t(1, 2, 2, 2),), {"mode": "foo"}),
                     ValueError, name="mode")
    yield ErrorInput(SampleInput(t(1, 1, 3, 3), (t(1, 2, 2, 2),), {"padding_mode": "foo"}),
                     ValueError, name="padding")
    yield ErrorInput(SampleInput(t(2, 1, 3, 3), (t(1, 2, 2, 2),), {"align_corners": False}),
                     RuntimeError, name="batch")
    yield ErrorInput(SampleInput(t(1, 1, 3, 3), (t(1, 2, 2, 3),), {"align_corners": False}),
                     RuntimeError, name="last_dim")
    yield ErrorInput(SampleInput(t(1, 1, 3, 3), (t(1, 2, 2),), {"align_corners": False}),
                     RuntimeError, name="rank")
    yield ErrorInput(SampleInput(t(1, 1, 3, 3, 3), (t(1, 2, 2, 2, 2),),
                                 {"align_corners": False}), RuntimeError, name="size_3d")
    yield ErrorInput(SampleInput(t(1, 1, 3, 3), (t(1, 2, 2, 2, dtype="float64"),),
                                 {"align_corners": False}), RuntimeError, name="dtype")


def _affine_grid_samples(dtype, requires_grad):
    t = _maker(dtype, requires_grad)
    for ac in (False, True):
        yield SampleInput(t(2, 2, 3), ((2, 3, 4, 5),), {"align_corners": ac}, name=f"2d_{ac}")
        yield SampleInput(t(1, 3, 4), ((1, 2, 2, 3, 4),), {"align_corners": ac},
                          name=f"3d_{ac}")
    yield SampleInput(t(2, 2, 3), ((2, 1, 1, 3),), {"align_corners": False}, name="unit")


def _affine_grid_errors():
    t = make_tensor
    yield ErrorInput(SampleInput(t(2, 2, 3, dtype="int64"), ((2, 1, 3, 4),),
                                 {"align_corners": False}), ValueError, name="int")
    yield ErrorInput(SampleInput(t(2, 3, 3), ((2, 1, 3, 4),), {"align_corners": False}),
                     ValueError, name="shape_2d")
    yield ErrorInput(SampleInput(t(2, 2, 3), ((2, 1, 2, 3, 4),), {"align_corners": False}),
                     ValueError, name="shape_3d")
    yield ErrorInput(SampleInput(t(2, 2, 3), ((2, 3, 4),), {"align_corners": False}),
                     NotImplementedError, name="size_len")
    yield ErrorInput(SampleInput(t(2, 2, 3), ((2, 1, 0, 4),), {"align_corners": False}),
                     ValueError, name="empty")
    yield ErrorInput(SampleInput(t(2, 2, 3), ((1, 1, 3, 4),), {"align_corners": False}),
                     RuntimeError, name="batch")


OPS = [
    *(OpInfo("interpolate", _interpolate_samples(mode), op=F.interpolate,
             torch_op=_tf("interpolate"), variant=mode, dtypes=_FLOAT,
             error_inputs=_interpolate_errors if mode == "nearest" else None)
      for mode in ("nearest", "nearest-exact", "linear", "bilinear", "bicubic", "trilinear",
                   "area")),
    OpInfo("pixel_shuffle", _pixel_shuffle_samples, dtypes=_FLOAT + ("int64",),
           error_inputs=_shuffle_errors("pixel_shuffle")),
    OpInfo("pixel_unshuffle", _pixel_unshuffle_samples, dtypes=_FLOAT + ("int64",),
           error_inputs=_shuffle_errors("pixel_unshuffle")),
    OpInfo("channel_shuffle", _channel_shuffle_samples, op=F.channel_shuffle,
           torch_op=_tf("channel_shuffle"), dtypes=_FLOAT + ("int64",),
           error_inputs=_channel_shuffle_errors),
    # variant: Tensor.unfold (the shape op) has the entry named "unfold"
    OpInfo("unfold", _unfold_samples, op=F.unfold, torch_op=_tf("unfold"), dtypes=_FLOAT,
           error_inputs=_unfold_errors, variant="im2col"),
    OpInfo("fold", _fold_samples, op=F.fold, torch_op=_tf("fold"), dtypes=_FLOAT,
           error_inputs=_fold_errors),
    OpInfo("grid_sample", _grid_sample_samples, op=F.grid_sample, torch_op=_tf("grid_sample"),
           dtypes=_FLOAT, error_inputs=_grid_sample_errors),
    OpInfo("affine_grid", _affine_grid_samples, op=F.affine_grid, torch_op=_tf("affine_grid"),
           dtypes=_FLOAT, error_inputs=_affine_grid_errors),
]
