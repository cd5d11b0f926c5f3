"""retrograd: a PyTorch-compatible autograd engine on NumPy.

>>> import retrograd as torch
>>> x = torch.tensor([2., 3.], requires_grad=True)
>>> (3 * x ** 3).sum().backward()
>>> x.grad
tensor([36., 81.])
"""

from . import _dtype
from ._dtype import (bfloat16, bool, cdouble, cfloat, complex64, complex128, double, dtype, float,  # noqa: A004
                     float16, float32, float64, get_default_dtype, half, int, int8, int16,
                     int32, int64, long, promote_types, result_type, set_default_dtype,
                     short, uint8)
from ._tensor import Size, Tensor
from ._layout import (jagged, layout, sparse_bsc, sparse_bsr, sparse_coo,  # noqa: F401
                      sparse_csc, sparse_csr, strided)
from ._memory_format import (channels_last, channels_last_3d,  # noqa: F401
                             contiguous_format, legacy_contiguous_format, memory_format,
                             preserve_format)
from .backend import Device as device
from .backend import get_default_device, set_default_device  # noqa: F401
from ._deterministic import (are_deterministic_algorithms_enabled,  # noqa: F401
                             get_deterministic_debug_mode,
                             is_deterministic_algorithms_warn_only_enabled,
                             set_deterministic_debug_mode, use_deterministic_algorithms)
from .backends._precision import (get_float32_matmul_precision,  # noqa: F401
                                  set_float32_matmul_precision)
from . import _tensor_types
from ._creation import *  # noqa: F401,F403
from ._random import (Generator, default_generator, get_rng_state, initial_seed,  # noqa: F401
                      manual_seed, seed, set_rng_state)
from . import autograd
from . import serialization
from .serialization import load, save
from .autograd import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled
from .autograd.grad_mode import is_inference_mode_enabled
from .autograd.anomaly_mode import is_anomaly_check_nan_enabled, is_anomaly_enabled  # noqa: F401
from . import ops as _ops
from . import return_types  # noqa: F401 (retrograd.return_types)
from . import memory, cuda  # noqa: F401 (memory accounting; torch.cuda.memory's names)
from . import accelerator, backends, compiler, _dynamo  # noqa: F401
from .compiler import compile  # noqa: F401,A004 (torch.compile: runs eagerly)
from ._tensor_str import set_printoptions  # noqa: F401
from math import e, inf, nan, pi  # noqa: F401 (reprs print inf, nan bare: tensor([inf, nan]))
newaxis = None  # torch.newaxis, as NumPy's: x[:, newaxis]

globals().update(_ops.FUNCTIONS)
globals().update(_tensor_types.cpu_types)  # FloatTensor, LongTensor, ...
from . import nn  # noqa: E402 (needs the ops above)
from .nn._aten_functions import *  # noqa: E402,F401,F403 (torch.dropout, ...)
from . import optim  # noqa: E402 (retrograd.optim; swa_utils needs nn)
from . import futures  # noqa: E402 (retrograd.futures, as torch.futures)
from . import amp, cpu  # noqa: E402 (torch.amp, torch.cpu; GradScaler needs optim)
from . import random  # noqa: E402,A004 (torch.random; fork_rng needs cuda and cpu)
from .cuda import amp as _cuda_amp  # noqa: E402,F401 (torch.cuda.amp)
from .amp import autocast  # noqa: E402
from .amp.autocast_mode import (autocast_decrement_nesting,  # noqa: E402,F401
                                autocast_increment_nesting, clear_autocast_cache,
                                get_autocast_dtype, is_autocast_cache_enabled,
                                is_autocast_enabled, set_autocast_cache_enabled,
                                set_autocast_dtype, set_autocast_enabled)
from . import distributed  # noqa: E402 (retrograd.distributed, as torch.distributed)
from . import linalg  # noqa: E402 (retrograd.linalg, as torch.linalg)
from . import special  # noqa: E402 (retrograd.special, as torch.special)
from . import distributions  # noqa: E402 (retrograd.distributions, as torch.distributions)
from . import fft  # noqa: E402 (retrograd.fft, as torch.fft)
from . import profiler  # noqa: E402 (retrograd.profiler, as torch.profiler)
from .torch_version import __version__  # noqa: E402 (also retrograd.version, as torch's)
from ._install import install_as_torch  # noqa: E402
from ._vmap import vmap  # noqa: E402 (torch.vmap; its ops need the registry above)


def is_tensor(obj):
    return isinstance(obj, Tensor)


def numel(input):
    return input.numel()


def is_floating_point(input):
    return input.is_floating_point()


def is_complex(input):
    return input.is_complex()


def __getattr__(name):
    """``retrograd.models``, ``func``, ``utils`` and ``testing`` are imported on
    first use so ``import retrograd`` stays fast."""
    if name in ("models", "func", "utils", "testing"):
        import importlib
        return importlib.import_module("." + name, __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

