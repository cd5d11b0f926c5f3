"""The argument checks of the class-index losses and of embedding, in PyTorch's order
and words. They run before any work (or in-place renorm) is done, so bad input leaves
nothing half-written; an index is never allowed to wrap around as NumPy's would.
"""

from .._dtype import can_cast, is_float, is_inexact, result_type
from ..backend import get_array_module
from ..backend.functions import functions
from ._registry import _broadcast_error, _pretty
from .._dtype import legacy_type_name

_TARGET_DTYPES = ("int64", "uint8")
_INDEX_DTYPES = ("int64", "int32")


def _dims(shape):
    return "[" + ", ".join(str(s) for s in shape) + "]"


def check_targets(target, classes, ignore_index):
    """ATen's per-element check of class targets: every one not ignored lies in
    [0, classes); the first that does not (in memory order) is named."""
    t = target._data
    bad = (t != ignore_index) & ((t < 0) | (t >= classes))
    if functions(get_array_module(t)).any_true(bad):
        raise IndexError(f"Target {int(t[bad].reshape(-1)[0])} is out of bounds.")


def check_nll(input, target, weight, ignore_index):
    """``nll_loss_nd`` and the nll_loss / nll_loss2d kernels' checks, in their order."""
    if input.ndim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.ndim})")
    batch = target.shape[0] if target.ndim else 0
    if input.ndim != 1 and input.shape[0] != batch:
        raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target "
                         f"batch_size ({batch}).")
    if input.ndim == 3 or input.ndim > 4:  # viewed as 4-D for nll_loss2d
        spatial = tuple(input.shape[2:])
        if tuple(target.shape[1:]) != spatial:
            raise RuntimeError(f"Expected target size {_dims((input.shape[0],) + spatial)}, "
                               f"got {_dims(target.shape)}")
    spatial = input.ndim > 2
    if spatial:
        if target.ndim != input.ndim - 1:
            raise RuntimeError(f"only batches of spatial targets supported (3D tensors) but "
                               f"got targets of dimension: {target.ndim}")
    elif target.ndim > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    tdt = target._data.dtype
    if tdt.name not in _TARGET_DTYPES:
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {_pretty(tdt)}")
    if spatial:
        if tuple(target.shape) != (input.shape[0],) + tuple(input.shape[2:]):
            raise RuntimeError(f"size mismatch (got input: {_dims(input.shape)} , target: "
                               f"{_dims(target.shape)}")
    elif input.ndim == 1 and target.ndim == 1 and target.shape[0] != 1:
        raise ValueError(f"For 1D input, 1D target must have size 1, but got target size: "
                         f"{target.shape[0]}")
    elif input.ndim != 1 and input.shape[0] != target.shape[0]:
        raise RuntimeError(f"size mismatch (got input: {_dims(input.shape)}, target: "
                           f"{_dims(target.shape)})")
    classes = input.shape[1 if input.ndim > 1 else 0]
    if weight is not None and (weight.numel() != classes or not spatial and weight.ndim != 1):
        if spatial:
            raise RuntimeError("weight tensor should be defined either for all or no classes")
        raise RuntimeError(f"weight tensor should be defined either for all {classes} classes "
                           f"or no classes but got weight tensor of shape: "
                           f"{_dims(weight.shape)}")
    dt = input._data.dtype
    if not is_float(dt):
        kernel = "nll_loss2d_forward_out_frame" if spatial else "nll_loss_out_frame"
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_pretty(dt)}'")
    if weight is not None and weight._data.dtype != dt:
        raise RuntimeError(f"expected scalar type {_pretty(dt)} but found "
                           f"{_pretty(weight._data.dtype)}")
    if spatial and tdt.name != "int64":  # nll_loss2d's kernel takes Long only
        raise RuntimeError(f"expected scalar type Long but found {_pretty(tdt)}")
    check_targets(target, classes, ignore_index)


def check_embedding(indices, weight, max_norm):
    """``embedding`` (and ``embedding_renorm_``)'s checks. With ``max_norm``, PyTorch walks
    the sorted indices and fails at the first out of range (after renorming the rows before
    it); here nothing is renormed when any index is bad."""
    fn = "embedding_renorm_" if max_norm is not None else "embedding"
    if weight.ndim != 2:
        if max_norm is None:
            raise RuntimeError("'weight' must be 2-D")
        raise RuntimeError(f"Expected 2-dimensional tensor, but got {weight.ndim}-dimensional "
                           f"tensor for argument #1 'self' (while checking arguments for {fn})")
    dt = indices._data.dtype
    if dt.name not in _INDEX_DTYPES:
        raise RuntimeError(f"Expected tensor for argument #{1 + (max_norm is not None)} "
                           f"'indices' to have one of the "
                           f"following scalar types: Long, Int; but got "
                           f"{legacy_type_name(indices.dtype)} instead (while "
                           f"checking arguments for {fn})")
    n, idx = weight.shape[0], indices._data
    if not idx.size:
        return
    if max_norm is not None:
        if not is_inexact(weight._data.dtype):
            raise RuntimeError(f"norm(): input dtype should be either floating point or "
                               f"complex. Got {_pretty(weight._data.dtype)} instead.")
        outside = (idx < -n) | (idx >= n)
        if functions(get_array_module(idx)).any_true(outside):
            raise IndexError(f"select(): index {int(idx[outside].min())} out of range for tensor "
                             f"of size {_dims(weight.shape)} at dimension 0")
    if n == 0:
        raise RuntimeError("index_select(): self indexing axis dim should be positive")
    if functions(get_array_module(idx)).any_true((idx < 0) | (idx >= n)):
        raise IndexError("index out of range in self")


def check_float_kernel(kernel, input, target):
    """A kernel PyTorch has for floating types only, run in the promoted dtype."""
    common = result_type(input, target)
    if not common.is_floating_point:
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_pretty(common.np)}'")


def check_output(out, *operands):
    """An in-place write into ``out``: the operands (tensors, in the order the op names
    them) must broadcast, and not to a shape wider than ``out``'s."""
    try:
        full = get_array_module(out._data).broadcast_shapes(out.shape,
                                                            *(x.shape for x in operands))
    except ValueError as e:
        raise _broadcast_error(operands, e) from None
    if tuple(full) != tuple(out.shape):
        raise RuntimeError(f"output with shape {list(out.shape)} doesn't match the broadcast "
                           f"shape {list(full)}")


def check_cast(common, out):
    """An in-place result of dtype ``common`` written into one of dtype ``out``."""
    if not can_cast(common, out):
        raise RuntimeError(f"result type {_pretty(common.np)} can't be cast to the desired "
                           f"output type {_pretty(out.np)}")


def check_bce(input, target, weight):
    """binary_cross_entropy's kernel: one dtype, a floating one, values in [0, 1]."""
    if target.dtype != input.dtype:
        raise RuntimeError(f"Found dtype {_pretty(target.dtype.np)} but expected "
                           f"{_pretty(input.dtype.np)}")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"binary_cross_entropy\" not implemented for "
                                  f"'{_pretty(input.dtype.np)}'")
    if weight is not None:
        check_output(input, input, weight)
    for name, x in (("input", input), ("target", target)):
        a = x._data
        if functions(get_array_module(a)).any_true(~((a >= 0) & (a <= 1))):
            raise RuntimeError(f"all elements of {name} should be between 0 and 1")


def check_bce_logits(input, target, weight, pos_weight):
    """ATen's binary_cross_entropy_with_logits composite, step by step: log_sigmoid of the
    input, ``1 - target``, then in-place products written into the target's dtype and
    shape. Returns that dtype."""
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"log_sigmoid_cpu\" not implemented for "
                                  f"'{_pretty(input.dtype.np)}'")
    if pos_weight is not None:
        check_output(input, pos_weight, target)
    if target.dtype.name == "bool":
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not "
                           "supported. Use the `^` or `logical_xor()` operator instead.")
    check_cast(result_type(target, input), target.dtype)
    if weight is not None:
        check_output(target, target, weight)
    return target.dtype
