"""Autocast's state and its one cast, below the ops that it wraps.

PyTorch puts autocast at the entry of an aten op (its Autocast dispatch key sits above
the composite decompositions), so ``linear`` is cast once as ``linear``, not as the
``mm`` and ``add`` it becomes, and a float32 loss's inner ``log_softmax`` stays float32.
Retrograd's public ops are the same entries: :func:`policy` wraps one with PyTorch's
CPU policy for its name (``"lower"``: floating inputs to the autocast dtype, the model's
float32 leaves cast once per region and cached; ``"fp32"``: to float32; ``"promote"``:
to the widest floating input), then runs its body with autocast off, as PyTorch's
kernels run with the Autocast key excluded. Off, a wrapped op pays one global read
(:data:`threads_on`, the count of threads inside an enabled region); other ops nothing.
"""

import contextlib
import functools
import threading
import weakref

from . import _dtype
from ._tensor import Tensor

__all__ = ["policy", "is_enabled", "set_enabled", "get_dtype", "set_dtype", "excluded"]

DEFAULT_DTYPES = {"cpu": _dtype.bfloat16, "cuda": _dtype.float16}
AVAILABLE = frozenset(DEFAULT_DTYPES)


class _State(threading.local):
    """Per thread, as PyTorch's: enabled and dtype per device type, the cache, nesting."""

    def __init__(self):
        self.enabled = dict.fromkeys(DEFAULT_DTYPES, False)
        self.dtype = dict(DEFAULT_DTYPES)
        self.cache_enabled = True
        self.nesting = 0
        self.cache = {}  # id(float32 leaf) -> (weakref to it, its cast)


state = _State()
threads_on = 0  # threads with some device type enabled: the off path reads only this
_lock = threading.Lock()


def _count(before, after):
    global threads_on
    if before != after:
        with _lock:
            threads_on += 1 if after else -1


def is_enabled(device_type):
    return state.enabled.get(device_type, False)


def set_enabled(device_type, enabled):
    before = any(state.enabled.values())
    state.enabled[device_type] = bool(enabled)
    _count(before, any(state.enabled.values()))


@contextlib.contextmanager
def excluded():
    """Autocast off on this thread for the block: a call with ``out=`` runs so (PyTorch's
    autocast wraps the functional overloads only: ``mm(a, b, out=c)`` stays float32)."""
    enabled = state.enabled
    saved = dict(enabled)
    enabled.update(dict.fromkeys(enabled, False))
    try:
        yield
    finally:
        enabled.update(saved)


def get_dtype(device_type):
    return state.dtype.get(device_type, _dtype.float32)


def set_dtype(device_type, dtype):
    state.dtype[device_type] = dtype


# PyTorch's CPU lists (aten/src/ATen/autocast_mode.cpp, AutocastCPU), by public name.
LOWER = frozenset({
    "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
    "bmm", "mm", "linalg_vecdot", "baddbmm", "addmm", "addbmm", "linear", "matmul", "prelu",
    "scaled_dot_product_attention"})
PROMOTE = frozenset({"cat", "stack", "index_copy"})
FP32 = frozenset({
    "avg_pool3d", "binary_cross_entropy", "grid_sampler", "polar", "prod", "quantile",
    "nanquantile", "stft", "cdist", "trace", "view_as_complex", "cholesky", "cholesky_inverse",
    "cholesky_solve", "inverse", "lu_solve", "orgqr", "ormqr", "pinverse", "max_pool3d",
    "max_unpool2d", "max_unpool3d", "adaptive_avg_pool3d", "reflection_pad1d",
    "reflection_pad2d", "replication_pad1d", "replication_pad2d", "replication_pad3d",
    "mse_loss", "cosine_embedding_loss", "nll_loss", "nll_loss2d", "hinge_embedding_loss",
    "poisson_nll_loss", "smooth_l1_loss", "cross_entropy_loss", "l1_loss", "huber_loss",
    "margin_ranking_loss", "soft_margin_loss", "triplet_margin_loss", "multi_margin_loss",
    "ctc_loss", "kl_div", "multilabel_margin_loss", "binary_cross_entropy_with_logits",
    "fft_fft", "fft_ifft", "fft_fft2", "fft_ifft2", "fft_fftn", "fft_ifftn", "fft_rfft",
    "fft_irfft", "fft_rfft2", "fft_irfft2", "fft_rfftn", "fft_irfftn", "fft_hfft",
    "fft_ihfft", "linalg_cond", "linalg_matrix_rank", "linalg_solve", "linalg_cholesky",
    "linalg_svdvals", "linalg_eigvals", "linalg_eigvalsh", "linalg_inv",
    "linalg_householder_product",
    "linalg_tensorinv", "linalg_tensorsolve", "fake_quantize_per_tensor_affine", "geqrf",
    "_lu_with_info", "qr", "svd", "triangular_solve", "fractional_max_pool2d",
    "fractional_max_pool3d", "adaptive_max_pool3d", "multilabel_margin_loss_forward",
    "linalg_qr", "linalg_cholesky_ex", "linalg_svd", "linalg_eig", "linalg_eigh",
    "linalg_lstsq", "linalg_inv_ex", "grid_sampler_2d", "grid_sampler_3d"})


def _kind(name):
    for kind, names in (("lower", LOWER), ("fp32", FP32), ("promote", PROMOTE)):
        if name in names:
            return kind
    raise ValueError(f"{name!r} is on none of autocast's CPU lists")


def policy(name):
    """Wrap a public op with autocast's policy for the aten op ``name``.

    >>> @policy("mm")
    ... def mm(input, mat2): ...
    """
    kind = _kind(name)

    def deco(fn):
        @functools.wraps(fn)
        def autocast_entry(*args, **kwargs):
            if not threads_on:
                return fn(*args, **kwargs)
            device_type = _device_type(args, kwargs)
            if device_type is None or not state.enabled.get(device_type):
                return fn(*args, **kwargs)
            args, kwargs = _cast_all(kind, device_type, args, kwargs)
            enabled = state.enabled  # the body runs as PyTorch's kernels do: excluded
            enabled[device_type] = False
            try:
                return fn(*args, **kwargs)
            finally:
                enabled[device_type] = True
        autocast_entry.autocast_policy = kind
        return autocast_entry
    return deco


def _tensors(args, kwargs):
    for a in (*args, *kwargs.values()):
        if isinstance(a, Tensor):
            yield a
        elif isinstance(a, (list, tuple)):
            yield from (t for t in a if isinstance(t, Tensor))


def _device_type(args, kwargs):
    for t in _tensors(args, kwargs):
        return t.device.type
    return None


def _eligible(t, device_type):
    return isinstance(t, Tensor) and t.dtype.is_floating_point and \
        t.device.type == device_type


def _promote_target(device_type, args, kwargs):
    """PyTorch's ``promote_type``: from the autocast dtype, float32 wins, float64 is
    ignored, and another low dtype is an error."""
    low = state.dtype[device_type]
    target = low
    for t in _tensors(args, kwargs):
        if not _eligible(t, device_type) or t.dtype is _dtype.float64:
            continue
        if t.dtype is _dtype.float32 or target is _dtype.float32:
            target = _dtype.float32
        elif t.dtype is not low or target is not low:
            raise RuntimeError("Unexpected floating ScalarType in at::autocast::prioritize")
    return target


def _cast_all(kind, device_type, args, kwargs):
    low = state.dtype[device_type]
    if kind == "lower":
        target = low
    elif kind == "fp32":
        target = _dtype.float32
    else:
        target = _promote_target(device_type, args, kwargs)
    cache = state.cache_enabled and target is low

    def cast(a):
        if isinstance(a, (list, tuple)):
            return type(a)(cast(t) for t in a)
        if not _eligible(a, device_type) or a.dtype is _dtype.float64 or a.dtype is target:
            return a
        if cache and a.dtype is _dtype.float32 and a.requires_grad and a.is_leaf and \
                not a._is_view():
            return _cached(a, target)
        return a.to(target)
    return tuple(cast(a) for a in args), {k: cast(v) for k, v in kwargs.items()}


def _cached(leaf, target):
    """A float32 leaf (a weight) cast once per outermost region, as PyTorch caches it."""
    hit = state.cache.get(id(leaf))
    if hit is not None and hit[0]() is leaf and hit[1].dtype is target:
        return hit[1]
    out = leaf.to(target)
    state.cache[id(leaf)] = (weakref.ref(leaf), out)
    return out


def clear_cache():
    state.cache.clear()
