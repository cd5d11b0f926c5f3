"""The device-named forms (``torch.cuda.amp.*``, ``torch.cpu.amp.*``): PyTorch keeps them
with a FutureWarning pointing at ``torch.amp``."""

import functools
import warnings

from .. import _dtype
from . import autocast_mode, grad_scaler


def _warn(old, new):
    warnings.warn(f"`{old}(args...)` is deprecated. Please use `{new}` instead.",
                  FutureWarning, stacklevel=3)


def device_classes(device, default_dtype):
    """``autocast`` and ``GradScaler`` bound to ``device``, warning on construction."""
    prefix = f"torch.{device}.amp"

    class autocast(autocast_mode.autocast):
        __doc__ = f"See :class:`retrograd.autocast` (device_type={device!r})."

        def __init__(self, enabled=True, dtype=default_dtype, cache_enabled=True):
            _warn(f"{prefix}.autocast", f"torch.amp.autocast('{device}', args...)")
            super().__init__(device, enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)

    class GradScaler(grad_scaler.GradScaler):
        __doc__ = f"See :class:`retrograd.amp.GradScaler` (device={device!r})."

        def __init__(self, init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5,
                     growth_interval=2000, enabled=True):
            _warn(f"{prefix}.GradScaler", f"torch.amp.GradScaler('{device}', args...)")
            super().__init__(device, init_scale=init_scale, growth_factor=growth_factor,
                             backoff_factor=backoff_factor, growth_interval=growth_interval,
                             enabled=enabled)

    autocast.__module__ = GradScaler.__module__ = f"retrograd.{device}.amp"
    autocast.__qualname__, GradScaler.__qualname__ = "autocast", "GradScaler"
    return autocast, GradScaler


def cuda_custom_fwd(fwd=None, *, cast_inputs=None):
    """``torch.cuda.amp.custom_fwd``: :func:`retrograd.amp.custom_fwd` for CUDA."""
    _warn("torch.cuda.amp.custom_fwd", "torch.amp.custom_fwd(args..., device_type='cuda')")
    return functools.partial(autocast_mode.custom_fwd, device_type="cuda")(
        fwd=fwd, cast_inputs=cast_inputs)


def cuda_custom_bwd(bwd):
    """``torch.cuda.amp.custom_bwd``: :func:`retrograd.amp.custom_bwd` for CUDA."""
    _warn("torch.cuda.amp.custom_bwd", "torch.amp.custom_bwd(args..., device_type='cuda')")
    return autocast_mode.custom_bwd(bwd, device_type="cuda")


CUDA = device_classes("cuda", _dtype.float16)
CPU = device_classes("cpu", _dtype.bfloat16)
