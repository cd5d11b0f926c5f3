"""``torch.testing.assert_close``: compare tensors, arrays, numbers and their containers
with PyTorch's per-dtype tolerances and its failure messages."""

import cmath
import collections.abc
import numbers

import numpy

from .. import _dtype
from .._tensor import Tensor, wrap

__all__ = ["assert_close"]

# dtype -> (rtol, atol), PyTorch's defaults; other dtypes compare exactly.
_PRECISIONS = {"float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5), "float32": (1.3e-6, 1e-5),
               "float64": (1e-7, 1e-7), "complex64": (1.3e-6, 1e-5), "complex128": (1e-7, 1e-7)}
_NUMBER_DTYPES = {bool: "bool", int: "int64", float: "float64", complex: "complex128"}


class _Mismatch(Exception):
    """A failed comparison: the exception type PyTorch raises and its message."""

    def __init__(self, type_, msg):
        super().__init__(msg)
        self.type, self.msg = type_, msg


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None,
                 equal_nan=False, check_device=True, check_dtype=True, check_layout=True,
                 check_stride=False, msg=None):
    """Raise AssertionError unless ``actual`` and ``expected`` are close:
    ``|actual - expected| <= atol + rtol * |expected|`` elementwise, with matching shape,
    dtype and device. Sequences and mappings are compared item by item.

    >>> assert_close(retrograd.tensor([1., 2.]), retrograd.tensor([1., 2.0000001]))
    """
    if (rtol is None) != (atol is None):
        raise ValueError(f"Both 'rtol' and 'atol' must be either specified or omitted, but "
                         f"got no {'atol' if atol is None else 'rtol'}.")
    opts = dict(rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=check_device,
                check_dtype=check_dtype, check_stride=check_stride)
    try:
        _compare(actual, expected, (), opts)
    except _Mismatch as e:
        text, path = e.msg, getattr(e, "path", ())
        if not isinstance(msg, str):
            if path:
                text += f"\n\nThe failure occurred for item {''.join(str([k]) for k in path)}"
            text = msg(text) if callable(msg) else text
        else:
            text = msg
        raise e.type(text) from None


def _compare(actual, expected, path, opts):
    try:
        _compare_leaf_or_container(actual, expected, path, opts)
    except _Mismatch as e:
        if not hasattr(e, "path"):
            e.path = path
        raise


def _compare_leaf_or_container(actual, expected, path, opts):
    if actual is None or expected is None:
        if actual is not expected:
            raise _Mismatch(AssertionError, f"None mismatch: {actual} is not {expected}")
    elif isinstance(actual, bool) and isinstance(expected, bool):
        if actual is not expected:
            raise _Mismatch(AssertionError, f"Booleans mismatch: {actual} is not {expected}")
    elif _tensor_pair(actual, expected):
        _compare_tensors(_as_tensor(actual), _as_tensor(expected), opts)
    elif _is_number(actual) and _is_number(expected):
        _compare_numbers(actual, expected, opts)
    elif _is_sequence(actual) and _is_sequence(expected):
        if len(actual) != len(expected):
            raise _Mismatch(AssertionError, f"The length of the sequences mismatch: "
                                            f"{len(actual)} != {len(expected)}")
        for i, (a, e) in enumerate(zip(actual, expected, strict=True)):
            _compare(a, e, (*path, i), opts)
    elif isinstance(actual, collections.abc.Mapping) and \
            isinstance(expected, collections.abc.Mapping):
        if set(actual) != set(expected):
            raise _Mismatch(AssertionError, _keys_message(actual, expected))
        for k in actual:
            _compare(actual[k], expected[k], (*path, k), opts)
    else:
        raise _Mismatch(TypeError, f"No comparison pair was able to handle inputs of type "
                                   f"{_type_repr(actual)} and {_type_repr(expected)}.")


def _tensor_pair(actual, expected):
    """Two tensors, or two NumPy arrays (PyTorch compares no tensor with an array)."""
    return all(isinstance(x, Tensor) for x in (actual, expected)) or \
        all(isinstance(x, numpy.ndarray) for x in (actual, expected))


def _type_repr(x):
    return "<class 'torch.Tensor'>" if isinstance(x, Tensor) else str(type(x))


def _keys_message(actual, expected):
    a, e = set(actual), set(expected)
    return (f"The keys of the mappings do not match:\n"
            f"Missing keys in the actual mapping: {sorted(e - a, key=repr)}\n"
            f"Additional keys in the actual mapping: {sorted(a - e, key=repr)}")


def _is_number(x):
    return isinstance(x, (numbers.Number, numpy.number)) and not isinstance(x, Tensor)


def _is_sequence(x):
    return isinstance(x, collections.abc.Sequence) and not isinstance(x, str)


def _as_tensor(x):
    return x.detach() if isinstance(x, Tensor) else wrap(x)


def _tolerances(dtypes, opts):
    if opts["rtol"] is not None:
        return opts["rtol"], opts["atol"]
    pairs = [_PRECISIONS.get(d, (0.0, 0.0)) for d in dtypes]
    return max(p[0] for p in pairs), max(p[1] for p in pairs)


def _compare_numbers(actual, expected, opts):
    actual, expected = (x.item() if isinstance(x, numpy.number) else x
                        for x in (actual, expected))
    if opts["check_dtype"] and type(actual) is not type(expected):
        raise _Mismatch(AssertionError, f"The (d)types do not match: {type(actual)} != "
                                        f"{type(expected)}.")
    if actual == expected:
        return
    if opts["equal_nan"] and cmath.isnan(actual) and cmath.isnan(expected):
        return
    rtol, atol = _tolerances([_NUMBER_DTYPES.get(type(x), "float64")
                              for x in (actual, expected)], opts)
    diff = abs(actual - expected)
    if not (cmath.isfinite(diff) and diff <= atol + rtol * abs(expected)):
        rel = float("inf") if expected == 0 else diff / abs(expected)
        raise _Mismatch(AssertionError, _message("Scalars", f"Expected {expected} but got "
                                                 f"{actual}.", diff, None, atol, rel, None,
                                                 rtol))


def _compare_tensors(actual, expected, opts):
    def mismatch(attr, a, e):
        raise _Mismatch(AssertionError, f"The values for attribute '{attr}' do not match: "
                                        f"{a} != {e}.")
    if actual.shape != expected.shape:
        mismatch("shape", actual.shape, expected.shape)
    if opts["check_stride"] and actual.stride() != expected.stride():
        mismatch("stride()", actual.stride(), expected.stride())
    if opts["check_device"] and actual.device != expected.device:
        mismatch("device", actual.device, expected.device)
    if opts["check_dtype"] and actual.dtype is not expected.dtype:
        mismatch("dtype", actual.dtype, expected.dtype)
    if "meta" in (actual.device.type, expected.device.type):
        return  # no values to compare (PyTorch's rule)
    rtol, atol = _tolerances([actual.dtype.name, expected.dtype.name], opts)
    common = _dtype.promote_types(actual.dtype, expected.dtype).np
    # compared on the host (PyTorch too moves both to the CPU when their devices differ)
    a, e = (t.cpu()._data.astype(common) for t in (actual, expected))
    matches = numpy.isclose(a, e, rtol=rtol, atol=atol, equal_nan=opts["equal_nan"])
    if matches.all():
        return
    if a.ndim == 0:
        msg = _message("Scalars", f"Expected {e.item()} but got {a.item()}.",
                       abs(a.item() - e.item()), None, atol,
                       _scalar_rel(a.item(), e.item()), None, rtol)
    else:
        msg = _tensor_message(a, e, matches, rtol, atol)
    raise _Mismatch(AssertionError, msg)


def _scalar_rel(a, e):
    return float("inf") if e == 0 else abs(a - e) / abs(e)


def _tensor_message(a, e, matches, rtol, atol):
    """Mismatch count, greatest absolute and relative differences and their indices,
    computed as PyTorch does (integers in int64, their ratio in float32)."""
    n = matches.size
    bad = n - int(matches.sum())
    if not _dtype.is_inexact(a.dtype):
        a, e = a.astype(numpy.int64), e.astype(numpy.int64)
    abs_diff = numpy.abs(a - e).ravel()
    abs_diff[matches.ravel()] = 0
    rel_diff = abs_diff / numpy.abs(e.ravel())
    if not _dtype.is_inexact(a.dtype):
        rel_diff = rel_diff.astype(numpy.float32)
    rel_diff[matches.ravel()] = 0
    i, j = _argmax_nan(abs_diff), _argmax_nan(rel_diff)
    return _message("Tensor-likes", f"Mismatched elements: {bad} / {n} ({bad / n:.1%})",
                    abs_diff[i].item(), numpy.unravel_index(i, a.shape), atol,
                    rel_diff[j].item(), numpy.unravel_index(j, a.shape), rtol)


def _argmax_nan(x):
    """The index of the greatest value, a NaN counting as greatest (as torch.max)."""
    nan = numpy.flatnonzero(numpy.isnan(x))
    return int(nan[0]) if nan.size else int(numpy.argmax(x))


def _message(what, extra, abs_diff, abs_idx, atol, rel_diff, rel_idx, rtol):
    equality = rtol == 0 and atol == 0

    def line(kind, diff, idx, tol):
        text = (f"{kind.title()} difference: {diff}" if idx is None else
                f"Greatest {kind} difference: {diff} at index {tuple(int(k) for k in idx)}")
        return text + ("" if equality else f" (up to {tol} allowed)")
    return (f"{what} are not {'equal' if equality else 'close'}!\n\n{extra}\n"
            f"{line('absolute', abs_diff, abs_idx, atol)}\n"
            f"{line('relative', rel_diff, rel_idx, rtol)}")
