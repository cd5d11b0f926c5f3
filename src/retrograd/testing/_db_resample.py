"""Op database entries for resampling and rearranging (``ops/resample.py`` and the
functions over it): ``interpolate`` per mode, over 1-3 spatial dims, sizes and scales that
up- and downsample, align_corners, and the argument errors PyTorch raises."""

import retrograd.nn.functional as F

from .op_db import ErrorInput, OpInfo, SampleInput, make_tensor

_FLOAT = ("float32", "float64")


def _tf(name):
    def call(*args, **kwargs):
        import torch
        return getattr(torch.nn.functional, name)(*args, **kwargs)
    return call


def _maker(dtype, requires_grad):
    def t(*shape, **kw):
        return make_tensor(*shape, dtype=dtype, requires_grad=requires_grad, **kw)
    return t


_DIMS = {"nearest": (1, 2, 3), "nearest-exact": (1, 2, 3), "area": (1, 2, 3),
         "linear": (1,), "bilinear": (2,), "bicubic": (2,), "trilinear": (3,)}
_SHAPES = {1: (2, 3, 5), 2: (2, 2, 4, 5), 3: (1, 2, 3, 2, 4)}


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
                yield SampleInput(t(*shape), (), {"scale_factor": 1.7, **kw},
                                  name=f"{k}d_x1.7_{ac}")
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
            x = t(1, 2, 6, 7)
            yield SampleInput(x, (), {"size": (3, 4), "mode": mode, "antialias": True},
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


OPS = [
    *(OpInfo("interpolate", _interpolate_samples(mode), op=F.interpolate,
             torch_op=_tf("interpolate"), variant=mode, dtypes=_FLOAT,
             error_inputs=_interpolate_errors if mode == "nearest" else None)
      for mode in ("nearest", "nearest-exact", "linear", "bilinear", "bicubic", "trilinear",
                   "area")),
]
