"""PyTorch's printed form of tensors, character for character.

This follows ``torch/_tensor_str.py`` on NumPy arrays: one formatter per
tensor (per real and imaginary part for complex) fixes the element width
and notation from the finite nonzero values (integer-valued floats print
as ``1.``; scientific notation when max/min > 1000, max > 1e8 or
min < 1e-4), rows wrap at ``linewidth`` and tensors over ``threshold``
elements are summarized to ``edgeitems`` per edge. The suffixes (dtype when
it cannot be inferred from the values, grad_fn or requires_grad) are added
the way PyTorch adds them, so ``repr`` of the same values is identical and
evaluates back (``inf``/``nan``/``tensor``/``torch.float64`` all resolve in
the ``retrograd`` namespace when it is imported as ``torch``). This module installs
``Tensor.__repr__``.
"""

import math
import sys
from dataclasses import dataclass

import numpy

from . import _dtype
from ._tensor import Tensor, wrap

__all__ = ["set_printoptions", "tensor_repr"]


@dataclass
class _PrinterOptions:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None


PRINT_OPTS = _PrinterOptions()

_PROFILES = {"default": (4, 1000, 3, 80), "short": (2, 1000, 2, 80),
             "full": (4, math.inf, 3, 80)}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None,
                     profile=None, sci_mode=None):
    """Set how tensors print, as ``torch.set_printoptions`` (``sci_mode`` is always reset).

    >>> set_printoptions(precision=2)
    >>> tensor([1.12345])
    tensor([1.12])
    >>> set_printoptions(profile="default")
    """
    opts = PRINT_OPTS
    if profile is not None and profile in _PROFILES:
        opts.precision, opts.threshold, opts.edgeitems, opts.linewidth = _PROFILES[profile]
    if precision is not None:
        opts.precision = precision
    if threshold is not None:
        opts.threshold = threshold
    if edgeitems is not None:
        opts.edgeitems = edgeitems
    if linewidth is not None:
        opts.linewidth = linewidth
    opts.sci_mode = sci_mode


class _Formatter:
    """Width and notation shared by every element of one (real) array."""

    __slots__ = ("floating", "int_mode", "sci_mode", "max_width", "fmt")

    def __init__(self, a):
        p = PRINT_OPTS.precision
        self.floating = _dtype.is_float(a.dtype)
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        self.fmt = None
        if not self.floating:
            if a.size:  # widest text: at the extremes (False is wider than True)
                ends = (a.min().item(), a.max().item())
                self.max_width = max(len(str(v)) for v in ends)
            return
        flat = a.reshape(-1)
        vals = flat[numpy.isfinite(flat) & (flat != 0)]
        if not vals.size:
            return
        mag = numpy.abs(vals).astype(numpy.float64)
        lo, hi = mag.min(), mag.max()
        self.int_mode = bool((numpy.ceil(vals) == vals).all())
        if PRINT_OPTS.sci_mode is None:
            self.sci_mode = bool(hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4)
        else:
            self.sci_mode = PRINT_OPTS.sci_mode
        if self.sci_mode:
            self.fmt, extra = f".{p}e", 0
        elif self.int_mode:
            self.fmt, extra = ".0f", 1  # room for the trailing "."
        else:
            self.fmt, extra = f".{p}f", 0
        # Text length grows with |v| for each sign (the exponent's with |log10 |v||), so
        # the widest text is among the largest and smallest magnitudes of either sign.
        pos, neg = vals[vals > 0], vals[vals < 0]
        ends = [x.item() for part in (pos, neg) if part.size for x in (part.min(), part.max())]
        self.max_width = max(len(format(v, self.fmt)) + extra for v in ends)

    def format(self, value):
        if not self.floating:
            ret = f"{value}"
        elif self.sci_mode or not self.int_mode:
            ret = format(value, self.fmt)
        else:
            ret = f"{value:.0f}"
            if not (math.isinf(value) or math.isnan(value)):
                ret += "."
        return ret.rjust(self.max_width)


def _join_complex(real_str, imag_str):
    imag_str = (imag_str + "j").lstrip()
    if imag_str[0] in "+-":  # negative numbers, +0.0, -0.0
        return real_str + imag_str
    return real_str + "+" + imag_str


def _format_values(values, f1, f2):
    if f2 is None:
        return [f1.format(v) for v in values]
    return [_join_complex(f1.format(v.real), f2.format(v.imag)) for v in values]


def _vector_str(a, indent, summarize, f1, f2):
    element_length = f1.max_width + 2
    if f2 is not None:
        element_length += f2.max_width + 1
    per_line = max(1, math.floor((PRINT_OPTS.linewidth - indent) / element_length))
    e = PRINT_OPTS.edgeitems
    if summarize and not e:
        data = ["..."]
    elif summarize and a.shape[0] > 2 * e:
        data = (_format_values(a[:e].tolist(), f1, f2) + [" ..."]
                + _format_values(a[-e:].tolist(), f1, f2))
    else:
        data = _format_values(a.tolist(), f1, f2)
    lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _str_with_formatter(a, indent, summarize, f1, f2):
    dim = a.ndim
    if dim == 0:
        v = a.item()
        if f2 is None:
            return f1.format(v)
        return _join_complex(f1.format(v.real), f2.format(v.imag))
    if dim == 1:
        return _vector_str(a, indent, summarize, f1, f2)
    e = PRINT_OPTS.edgeitems
    n = a.shape[0]
    if summarize and n > 2 * e:
        rows = ([_str_with_formatter(a[i], indent + 1, summarize, f1, f2) for i in range(e)]
                + ["..."]
                + [_str_with_formatter(a[i], indent + 1, summarize, f1, f2)
                   for i in range(n - e, n)])
    else:
        rows = [_str_with_formatter(a[i], indent + 1, summarize, f1, f2) for i in range(n)]
    return "[" + ("," + "\n" * (dim - 1) + " " * (indent + 1)).join(rows) + "]"


def _summarized_data(a):
    """The elements a summarized print shows: ``edgeitems`` at each end of every dim."""
    e = PRINT_OPTS.edgeitems
    if a.ndim == 0:
        return a
    if not e and a.ndim > 1:
        return a[(slice(0, 0),) * a.ndim]
    for axis, n in enumerate(a.shape):
        if n > 2 * e:
            keep = numpy.r_[0:e, n - e:n] if e else numpy.arange(n)
            a = a.take(keep, axis=axis)
    return a


def _tensor_str(a, indent):
    if a.size == 0:
        return "[]"
    summarize = a.size > PRINT_OPTS.threshold
    shown = _summarized_data(a) if summarize else a
    if a.dtype.kind == "c":
        f1, f2 = _Formatter(shown.real), _Formatter(shown.imag)
    else:
        f1, f2 = _Formatter(shown), None
    return _str_with_formatter(a, indent, summarize, f1, f2)


def _add_suffixes(tensor_str, suffixes, indent):
    parts = [tensor_str]
    last_line_len = len(tensor_str) - tensor_str.rfind("\n") + 1
    for suffix in suffixes:
        if last_line_len + len(suffix) + 2 > PRINT_OPTS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line_len += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


def tensor_repr(t, *, tensor_contents=None):
    """``repr(t)`` exactly as PyTorch prints a tensor of the same values, dtype and flags.

    >>> tensor([[1., 2.5], [-3., 1e-5]], requires_grad=True)
    tensor([[ 1.0000e+00,  2.5000e+00],
            [-3.0000e+00,  1.0000e-05]], requires_grad=True)
    """
    level = getattr(t._data, "level", None)
    if level is not None:  # inside vmap: the batch it holds, as PyTorch's BatchedTensor
        inner = repr(wrap(t._data.data)).replace("\n", "\n    ")
        return f"BatchedTensor(lvl={level}, bdim=0, value=\n    {inner}\n)"
    cls = type(t)
    # Tensor and nn.Parameter print as ``tensor(``; other subclasses under their own name.
    param = getattr(sys.modules.get("retrograd.nn"), "Parameter", None)
    plain = cls is Tensor or cls is param
    prefix = "tensor(" if plain else cls.__name__ + "("
    indent = len(prefix)
    suffixes = []
    a = t._data
    if t.device.type == "meta":  # no values: the shape and dtype stand for them
        suffixes.append(f"device='meta', size={tuple(a.shape)}")
        if t.dtype is not _dtype.get_default_dtype():
            suffixes.append(f"dtype={t.dtype}")
        return _finish_repr(t, cls, prefix, "...", suffixes, indent, param, plain)
    if t.device.type != "cpu":
        suffixes.append(f"device='{t.device}'")
        a = a.get()
    default = _dtype.get_default_dtype()
    dt = t.dtype
    body = tensor_contents
    if a.size == 0:
        if a.ndim != 1:
            suffixes.append(f"size={tuple(a.shape)}")
        if dt is not default:
            suffixes.append(f"dtype={dt}")
        if body is None:
            body = "[]"
    else:
        if not PRINT_OPTS.edgeitems:
            suffixes.append(f"size={tuple(a.shape)}")
        if dt not in (default, default.to_complex(), _dtype.int64, _dtype.bool):
            suffixes.append(f"dtype={dt}")
        if body is None:
            body = _tensor_str(a, indent)
    return _finish_repr(t, cls, prefix, body, suffixes, indent, param, plain)


def _finish_repr(t, cls, prefix, body, suffixes, indent, param, plain):
    """The autograd suffix, and the wrapping of a Parameter subclass."""
    grad_fn = t.grad_fn
    if grad_fn is not None:
        suffixes.append(f"grad_fn=<{grad_fn.name()}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    out = _add_suffixes(prefix + body, suffixes, indent)
    if param is not None and not plain and isinstance(t, param):
        out = f"Parameter({out})"
    return out


Tensor.__repr__ = tensor_repr
