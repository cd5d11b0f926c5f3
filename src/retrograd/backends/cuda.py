"""``torch.backends.cuda``: not built with CUDA; ``matmul`` and the attention switches
hold PyTorch's settings and defaults."""

from . import _precision

__all__ = ["is_built", "matmul", "flash_sdp_enabled", "enable_flash_sdp",
           "mem_efficient_sdp_enabled", "enable_mem_efficient_sdp", "math_sdp_enabled",
           "enable_math_sdp", "cudnn_sdp_enabled", "enable_cudnn_sdp"]


def is_built():
    """False: this is a CPU-only build."""
    return False


def _reduction(value, name):
    """PyTorch's parse of ``allow_*_reduced_precision_reduction``: a bool, or
    ``(allow_reduced_precision[, allow_splitk])``."""
    if isinstance(value, bool):
        return value, True
    if isinstance(value, (list, tuple)):
        if not value:
            raise TypeError(f"{name} expects at least one boolean argument")
        if len(value) > 2:
            raise TypeError(f"{name} expects at most two boolean arguments")
        for v, which in zip(value, ("allow_reduced_precision", "allow_splitk"), strict=False):
            if not isinstance(v, bool):
                raise TypeError(f"{name} expects a bool for {which}, but got {type(v)!r}")
        return value[0], value[1] if len(value) == 2 else True
    raise TypeError(f"{name} expects a bool or a tuple/list of bools, but got {type(value)!r}")


class cuBLASModule:
    """``torch.backends.cuda.matmul``: ``allow_tf32`` is the float32 matmul precision
    seen as a bool; the reduced-precision reductions are (allowed, split-k) pairs."""

    _REDUCTIONS = ("allow_fp16_reduced_precision_reduction",
                   "allow_bf16_reduced_precision_reduction")

    def __init__(self):
        object.__setattr__(self, "_reduction", {n: (True, True) for n in self._REDUCTIONS})

    def __getattr__(self, name):
        if name == "allow_tf32":
            return _precision.get_float32_matmul_precision() != "highest"
        base = name.removesuffix("_split_k")
        if base in self._REDUCTIONS:
            return self._reduction[base][name != base]
        raise AttributeError("Unknown attribute " + name)

    def __setattr__(self, name, value):
        if name == "allow_tf32":
            if not isinstance(value, bool):
                raise RuntimeError(f"set_allow_tf32_cublas expects a bool, but got "
                                   f"{type(value).__name__}")
            _precision._precision = "high" if value else "highest"
        elif name in self._REDUCTIONS:
            self._reduction[name] = _reduction(value, name)
        else:
            raise AttributeError("Unknown attribute " + name)


matmul = cuBLASModule()

_sdp = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True}


def _sdp_switch(kind):
    def enabled():
        return _sdp[kind]

    def enable(enabled):
        if not isinstance(enabled, bool):
            raise RuntimeError(f"set_sdp_use_{kind} expects a bool, but got "
                               f"{type(enabled).__name__}")
        _sdp[kind] = enabled
    enabled.__name__, enable.__name__ = f"{kind}_sdp_enabled", f"enable_{kind}_sdp"
    enabled.__doc__ = f"Whether the {kind} scaled-dot-product attention kernel may be used."
    enable.__doc__ = f"Allow or forbid the {kind} attention kernel (a setting only: " \
                     "retrograd has one attention kernel)."
    return enabled, enable


flash_sdp_enabled, enable_flash_sdp = _sdp_switch("flash")
mem_efficient_sdp_enabled, enable_mem_efficient_sdp = _sdp_switch("mem_efficient")
math_sdp_enabled, enable_math_sdp = _sdp_switch("math")
cudnn_sdp_enabled, enable_cudnn_sdp = _sdp_switch("cudnn")
