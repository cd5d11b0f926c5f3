"""Running ops: :func:`apply` and :func:`apply_inplace` (type promotion, devices, low
precision, the node recorded for autograd, views, forward AD), and :func:`register`,
which exposes an op as ``retrograd.<name>`` and ``Tensor.<name>``. Ops are declared with
:mod:`._opdef`'s ``defop`` and ``kernel``, which the op families import from here.
"""

import numpy

from .. import _observe
from .._tensor import Tensor, wrap, _ndarray
from .._dtype import (FLOAT, LOW, OPMATH, SCALAR_NAMES, bfloat16, complex64, complex128, float32,
                      float64, get_default_dtype, is_inexact,
                      opmath_arrays, result_type)
from ..autograd import forward_ad, grad_mode
from ..autograd._batched import INPLACE, shape_of
from ..autograd._batched_xp import BatchedNumpy
from ..autograd._batched_loop import NO_RULE, per_element, top_batch
from ..autograd.node import SavedTensor, grad_accumulator, new_node, on_inplace_write, save
from ..backend import (check_writeable, device_guard, get_array_module, host_array_module,
                       joined_device, to_device)
from . import _out, _views
from ._opdef import (GPU_KERNELS, KERNELS, LEAN_INPUT, LEAN_NOTHING, LEAN_OUTPUT, defop,
                     kernel)

__all__ = ["defop", "apply", "apply_inplace", "register", "FUNCTIONS", "kernel", "KERNELS",
           "GPU_KERNELS"]

_fw_state = forward_ad.state  # one flag check per op when forward AD is off
# The usual float dtypes, told by one set lookup; the rest (half precision, another byte
# order) take the slower tests.
_FLOATING = frozenset(d.np for d in (float32, float64, complex64, complex128))
_REAL_FLOATING = frozenset((float32.np, float64.np))

FUNCTIONS = {}  # the public ``retrograd.<name>`` namespace, filled by @register
_METHODS = {}  # the Tensor methods @register has set


def _refuse_taken(names, *tables):
    """A second op of one name would silently replace the first: refuse it, before any
    name is bound."""
    for kind, table in tables:
        for name in names:
            if name in table:
                old = table[name]
                raise RuntimeError(f"{kind} {name!r} is registered twice (first by "
                                   f"{old.__module__}.{old.__qualname__})")


def register(fn=None, *, method=True, function=True, name=None, aliases=()):
    """Expose a public op as ``retrograd.<name>`` and/or ``Tensor.<name>``. A function
    that declares ``out=None`` (in PyTorch's signature) leaves it to this: its namespace
    form writes the result into ``out`` (see :mod:`._out`)."""
    def deco(f):
        fn = _out.wrap(f, name or f.__name__) if function and _out.takes_out(f) else f
        names = (name or f.__name__, *aliases)
        _refuse_taken(names, *([("function", FUNCTIONS)] if function else []),
                      *([("method", _METHODS)] if method else []))
        for n in names:
            if function:
                FUNCTIONS[n] = fn
            if method:
                _METHODS[n] = f
                setattr(Tensor, n, f)
        return f
    return deco(fn) if fn is not None else deco


def register_pair(name, fn, fn_, doc, aliases=()):
    """Expose ``fn`` as ``name`` (function and method) and ``fn_`` as the in-place method
    ``name_``, each with ``aliases``; ``doc`` is ``fn``'s docstring. Returns both."""
    fn.__name__ = fn.__qualname__ = name
    fn_.__name__ = fn_.__qualname__ = name + "_"
    fn.__doc__ = doc
    register(fn, aliases=aliases)
    register(fn_, function=False, aliases=tuple(a + "_" for a in aliases))
    return fn, fn_


_KIND_RANK = {"b": 0, "u": 1, "i": 1, "f": 2, "V": 2, "c": 3}  # "V": bfloat16 (ml_dtypes)
_SCALAR_RANK = {bool: 0, int: 1, float: 2, complex: 3}


def _promote(op, values, arrays):
    """Cast the arrays of the promoted inputs to PyTorch's result dtype.

    Fast exit for the common case: tensors of one dtype, scalars of no higher kind.
    """
    idx = op.promote
    first = values[idx[0]]
    if isinstance(first, Tensor):
        kind = first._data.dtype
        rank = _KIND_RANK[kind.kind]
        for i in idx:
            v = values[i]
            if v is first or v is None:
                continue
            if isinstance(v, Tensor):
                if v._data.dtype != kind:
                    break
            elif _SCALAR_RANK.get(type(v), 9) > rank:
                break
        else:  # nothing of another dtype or a higher kind
            if rank >= 2 or not op.to_float:
                if rank == 1:
                    _wrap_ints(arrays, idx, kind)
                return arrays
    rt = result_type(*(values[j] for j in idx if values[j] is not None))
    if op.to_float and rt.category < FLOAT:
        rt = get_default_dtype()
    target = rt.np
    for i in idx:
        a = arrays[i]
        if isinstance(values[i], Tensor):
            if a.dtype != target:
                if i == op.scalar_other and a.ndim == 0 and target in LOW:
                    target_i = OPMATH[target]  # read at its own value (see defop)
                    arrays[i] = a if a.dtype == target_i else a.astype(target_i)
                else:
                    arrays[i] = a.astype(target)
        elif isinstance(a, numpy.generic):  # NumPy scalars are weak, like Python numbers
            arrays[i] = a.item()
    if target.kind in "iu":
        _wrap_ints(arrays, idx, target)
    return arrays


def _wrap_ints(arrays, idx, dtype):
    """Python ints outside the integer ``dtype``'s range wrap into it, as PyTorch casts a
    scalar operand (uint8 + -1 subtracts 1 modulo 256; NumPy refuses the conversion).
    PyTorch reads the number as a 64-bit integer, signed or not: past those, its errors."""
    for i in idx:
        v = arrays[i]
        if type(v) is int and not 0 <= v <= 127:  # (within every integer dtype's range)
            if v >= 1 << 64:
                raise OverflowError("int too big to convert")
            if v < -(1 << 63):
                raise OverflowError("can't convert negative int to unsigned")
            span = 1 << 8 * dtype.itemsize
            low = -(span >> 1) if dtype.kind == "i" else 0
            if not low <= v < low + span:
                arrays[i] = (v - low) % span + low


def _float_inputs(arrays):
    target = get_default_dtype().np
    return [a.astype(target) if hasattr(a, "dtype") and a.dtype.kind in "biu" else a
            for a in arrays]


def _one_device(values, arrays):
    """Inputs on two devices: PyTorch's error, except that a CPU 0-d tensor joins the
    others' device (as a scalar does)."""
    devices = list(dict.fromkeys(v.device for v in values if isinstance(v, Tensor) and
                                 (v._data.ndim or v.device.type != "cpu")))
    if len(devices) > 1:
        devices = [joined_device(devices)]
    if not devices:  # CPU 0-d tensors only
        return arrays, host_array_module()
    (dev,) = devices
    arrays = [to_device(a, dev) if isinstance(v, Tensor) else a
              for v, a in zip(values, arrays, strict=True)]
    # (the innermost batch among the arrays, under vmap: its namespace makes the buffers)
    first = max((a for v, a in zip(values, arrays, strict=True) if isinstance(v, Tensor)),
                key=lambda a: getattr(a, "level", -1))
    return arrays, get_array_module(first)


# The ops whose gradient rules hold for complex values under PyTorch's conjugate convention:
# the FFTs, the real/complex reinterpretations, conj, and maps that are linear with real
# coefficients (shape ops, sums, add and sub, masking). Any other op refuses to record on
# a complex input that requires grad: its rule would give a wrong gradient silently.
COMPLEX_GRAD = frozenset("""fft_c2c fft_r2c fft_c2r view_as_real view_as_complex as_complex
conj_physical constant_pad_nd roll view _reshape_alias _unsafe_view squeeze unsqueeze permute
transpose t expand flip clone contiguous select slice alias index index_backward where add sub
neg sum sum_dim mean mean_dim _to_copy copy unfold unfold_backward""".split())


def _is_complex(v):
    return (isinstance(v, Tensor) and v._data.dtype.kind == "c") or type(v) is complex


def _refuse_complex_grad(op, v, values):
    """Refuse ``op`` on complex ``v`` (one of its ``values``) that requires grad, unless its
    rules hold for it: a COMPLEX_GRAD op, or a product (or a quotient's numerator) with a
    real constant (a real coefficient needs no conjugate; a real operand that requires grad
    would need ``v``'s conjugate in its own gradient)."""
    if op.name in COMPLEX_GRAD or not grad_mode.state.enabled:
        return
    if op.name in ("mul", "div") and len(values) == 2 and (op.name == "mul" or v is values[0]):
        other = values[1] if v is values[0] else values[0]
        if not _is_complex(other) and not getattr(other, "requires_grad", False):
            return
    if v._requires_grad if v._base is None else _views.requires_grad(v):
        raise NotImplementedError(
            f"autograd of complex tensors is not supported yet: {op.name} has no complex "
            f"gradient rule (torch.fft's transforms, view_as_real, view_as_complex, real, "
            f"imag, conj, sums and shape ops have)")


def _inputs(op, values, attrs):
    """The inputs' arrays (promoted, in their compute dtype), their array module, whether
    some input requires grad (rebuilding stale view histories on the way), the
    low-precision dtype to round results to (None when the op computes in its inputs'
    dtype: see :data:`.._dtype.OPMATH`), and whether some input has a tangent (of any
    level: ``forward_ad.propagate`` tells the active one; asking the tensors is cheaper
    than reading the thread-local level on every op)."""
    arrays = []
    grad = low = mixed = other = fw = False  # other: an input a to_float op may convert
    xp = first = None
    for v in values:
        if isinstance(v, Tensor):
            d = v._data
            arrays.append(d)
            dt = d.dtype
            if dt not in _REAL_FLOATING:
                if dt in LOW:
                    low = True
                elif dt.kind == "c":
                    _refuse_complex_grad(op, v, values)
                else:
                    other = True
            if xp is None:
                first = type(d)
                xp = numpy if first is _ndarray else get_array_module(d)
            elif type(d) is not first:
                mixed = True
            if v._requires_grad if v._base is None else _views.requires_grad(v):
                grad = True
            if v._fw is not None:
                fw = True
        else:
            arrays.append(v)
            other = True
    if mixed or (first is not _ndarray and xp is not None and len(arrays) > 1):
        arrays, xp = _one_device(values, arrays)
    if op.promote is not None:
        arrays = _promote(op, values, arrays)
    elif op.to_float and other:
        arrays = _float_inputs(arrays)
    if low:  # the float32 path pays the one identity check above
        low = None
        if op.upcast and (op.dtype_attr is None or attrs[op.dtype_attr] is None):
            if op.promote is not None:
                arrays = _half_numbers(op, arrays)
            up = opmath_arrays(arrays)
            if up is not None:
                arrays, low = up
        elif not op.upcast:
            arrays = _bfloat16_numbers(arrays)
    return arrays, xp or host_array_module(), grad, low, fw


def _half_numbers(op, arrays):
    """The numbers among ``op``'s promoted inputs rounded to a half result's dtype, as
    PyTorch's kernels see them (see ``defop``'s ``scalar_other``)."""
    low = next((arrays[i].dtype for i in op.promote
                if getattr(arrays[i], "dtype", None) in LOW), None)
    if low is None:
        return arrays
    arrays = list(arrays)
    for i in op.promote:
        a = arrays[i]
        if (type(a) is float or type(a) is int) and i != op.scalar_other:
            arrays[i] = float(low.type(a))
    return arrays


def _bfloat16_numbers(arrays):
    """Python floats among bfloat16 arrays as bfloat16 scalars, for an op computing in its
    inputs' dtype: PyTorch writes such a number in the tensor's dtype, and ml_dtypes would
    widen the result to float32 (bfloat16 with a Python float) or float64 (``where``)."""
    if any(getattr(a, "dtype", None) is _BFLOAT16 for a in arrays):
        return [_BFLOAT16.type(a) if type(a) is float else a for a in arrays]
    return arrays


def apply(op, values, attrs=(), _observed=False):
    """Run ``op`` on ``values`` (tensors, or scalars/None for optional operands).

    Returns the output Tensor (a tuple for multi-output ops), recording a node
    when grad mode is on and some input requires grad. (``_observed``: the engine
    observer's call, already inside its event.) An op on a device that is not the current
    one runs with its first input's device current (:func:`..backend.device_guard`).
    """
    first = values[0] if values else None
    d = first._data if isinstance(first, Tensor) else None
    if d is not None and type(d) is not _ndarray:
        guard = device_guard(d)
        if guard is not None:  # (with the device current, the guard is None in the call)
            with guard:
                return apply(op, values, attrs, _observed)
    # (One function rather than a guard wrapping the op: one Python call less per op.)
    obs = _observe.engine
    if obs is not None and obs.ops and not _observed:
        return obs.run_op(_run_observed, op, values, attrs, None)
    n = len(values)
    if (type(d) is _ndarray and d.dtype in _REAL_FLOATING and first._base is None
            and first._fw is None and (n == 1 or n == 2 and type(values[1]) in _NUMBERS)):
        # A float32/64 NumPy tensor alone or with a number (x.sin(), x * 0.5), not a view:
        # what _inputs would find, its arrays as they are (a number never promotes a float
        # tensor), without its loop (a quarter of the forward's Python time).
        arrays = [d] if n == 1 else [d, values[1]]
        xp, grad, low, fw = numpy, first._requires_grad, None, False
    else:
        arrays, xp, grad, low, fw = _inputs(op, values, attrs)
    try:
        # (Forwards of one or two tensors, and of two and an attribute (add's alpha), are
        # called directly: in CPython 3.11 a call with * arguments is a C-level call, some
        # 500 instructions more per op.)
        if not attrs and n == 1:
            out = op.forward(xp, arrays[0])
        elif not attrs and n == 2:
            out = op.forward(xp, arrays[0], arrays[1])
        elif n == 2 and len(attrs) == 1:
            out = op.forward(xp, arrays[0], arrays[1], attrs[0])
        else:
            out = op.forward(xp, *arrays, *attrs)
    except ValueError as e:
        raise _broadcast_error(values, e) from None
    except NO_RULE:  # under vmap: the op once per batch element, if its rule cannot batch
        top = top_batch((arrays, attrs))
        if top is None:
            raise
        out = per_element(op.name, op.forward, (xp, *arrays, *attrs), *top)
    if low:
        out = _round(out, low)
    if type(out) is tuple:
        outs = tuple(wrap(o, xp) for o in out)
    else:
        outs = wrap(out, xp)
    if op.view:
        _views.mark_view(values[0], outs)
    if grad and op.differentiable and grad_mode.state.enabled:
        _record(op, values, attrs, outs)
    if fw:
        forward_ad.propagate(op, values, arrays, attrs, outs)
    return outs


_BFLOAT16 = bfloat16.np


def _round(out, low):
    """Results computed in ``low``'s compute dtype, rounded back to ``low`` once."""
    up = OPMATH[low]
    if type(out) is tuple:
        return tuple(o.astype(low) if getattr(o, "dtype", None) is up else o for o in out)
    return out.astype(low) if out.dtype is up else out


_NO_EDGE = (None, 0)
_TWO_EDGES = (True, True)
_NUMBERS = frozenset((float, int, bool))
# The shapes and dtypes of one-input nodes (and of a tensor's with a number), shared by
# every node of a shape or dtype: such a node then keeps no tuples of its own for the
# cyclic collector to count and scan (a 1e4-op chain meets 3.8 young collections, not 6.4).
# Each maps a shape (or dtype) to ((it,), (it, None)).
_SHAPES, _DTYPES = {}, {}
_SHARED_MAX = 512  # (a program's shapes may vary without bound: the table then starts over)


def _shared(table, key):
    if len(table) >= _SHARED_MAX:
        table.clear()
    pair = table[key] = ((key,), (key, None))
    return pair


def _record(op, values, attrs, outs):
    """Create the op's node, connect it to the inputs' histories and save what it needs."""
    if op.unary or (len(values) == 2 and type(values[1]) in _NUMBERS
                    and op.edge_mask == _TWO_EDGES):
        # The common cases: one tensor input (which requires grad: apply checked), or a
        # tensor and a number (x * 0.5), which has an edge to nothing.
        v = values[0]
        d = v._data
        fn = v._grad_fn
        edge = (fn, v._output_nr) if fn is not None else (grad_accumulator(v), 0)
        shape = d.shape if type(d) is _ndarray else shape_of(d)
        if type(shape) is tuple:
            shapes = _SHAPES.get(shape) or _shared(_SHAPES, shape)
        else:  # a vmap batch's shape carries its level: never shared
            shapes = ((shape,), (shape, None))
        dtypes = _DTYPES.get(d.dtype) or _shared(_DTYPES, d.dtype)
        if op.unary:
            node = new_node(op.node_cls, (edge,))
            shapes, dtypes = shapes[0], dtypes[0]
        else:
            node = new_node(op.node_cls, (edge, _NO_EDGE))
            shapes, dtypes = shapes[1], dtypes[1]
        lean = op.lean
        if lean is not None and outs._data.dtype in _FLOATING:
            # A float result of an op whose saving _opdef read ahead: the tail below
            # without its tests (a fifth of the node's time).
            node._attrs = attrs
            node._shapes = shapes
            node._dtypes = dtypes
            node._out_meta = None
            outs._grad_fn, outs._requires_grad = node, True
            if lean is LEAN_NOTHING:
                node._saved = ()
            elif lean is LEAN_OUTPUT:
                node._saved = (save(outs, True),)
            elif lean is LEAN_INPUT:
                node._saved = (save(v, False),)
            else:  # the number, in its slot of two
                node._saved = (values[1], None) if lean == 0 else (None, values[1])
            return node
        mask = 1
    else:
        shapes, dtypes, nexts = [], [], []
        mask = 0
        edge_mask = op.edge_mask
        j = -1  # (a counter: cheaper than enumerate; zip(strict=True) parses its keyword)
        for v in values:
            j += 1
            is_edge = edge_mask[j]
            if isinstance(v, Tensor):
                d = v._data
                shapes.append(d.shape if type(d) is _ndarray else shape_of(d))
                dtypes.append(d.dtype)
                if v._requires_grad:
                    mask |= 1 << j
                    if is_edge:
                        fn = v._grad_fn
                        nexts.append((fn, v._output_nr) if fn is not None
                                     else (grad_accumulator(v), 0))
                elif is_edge:
                    nexts.append(_NO_EDGE)
            else:
                shapes.append(None)
                dtypes.append(None)
                if is_edge:
                    nexts.append(_NO_EDGE)
        if not mask:
            return None
        node = new_node(op.node_cls, tuple(nexts))
    node._attrs = attrs
    node._shapes = shapes
    node._dtypes = dtypes
    if op.wants_strides:
        node._strides = [v._data.strides if isinstance(v, Tensor) else None for v in values]
    if type(outs) is tuple:
        for i, o in enumerate(outs):
            if op.outputs[i] not in op.nondiff_outputs and is_inexact(o._data.dtype):
                o._grad_fn, o._output_nr, o._requires_grad = node, i, True
        node._out_meta = tuple((o._data.shape, o._data.dtype) for o in outs)
    else:
        dt = outs._data.dtype
        if dt in _FLOATING or is_inexact(dt):
            outs._grad_fn, outs._requires_grad = node, True
        node._out_meta = None
    plan = op._save_plan[mask]
    if plan:
        saved = [None] * len(op.saved_names)
        for k, is_output, i in plan:
            if is_output:  # (a single output is not packed in a tuple: an allocation less)
                saved[k] = save(outs[i] if type(outs) is tuple else outs, True)
            else:
                v = values[i]
                saved[k] = save(v, False) if isinstance(v, Tensor) else v
        node._saved = tuple(saved)
    else:  # (the slots stay, empty: a rule's attributes come after them in its env)
        node._saved = (None,) * len(op.saved_names)
    return node


def apply_inplace(op, self, values, attrs=(), _observed=False):
    """``self.<op>_(...)``: compute the op, write into ``self``, rebase its history.

    The node is the out-of-place op's node (``add_`` records ``AddBackward0``);
    a saved ``self`` is a copy of the value before the write. As :func:`apply`, on
    ``self``'s device made current.
    """
    if type(self._data) is not _ndarray:
        guard = device_guard(self._data)
        if guard is not None:
            with guard:
                return _apply_inplace(op, self, values, attrs, _observed)
    return _apply_inplace(op, self, values, attrs, _observed)


def _apply_inplace(op, self, values, attrs, _observed):
    obs = _observe.engine
    if obs is not None and obs.ops and not _observed:
        return obs.run_op(_run_observed, op, values, attrs, self)
    if (not grad_mode.state.enabled and _fw_state.level is None
            and on_inplace_write[0] is None and _plain_write(op, self, values, attrs)):
        return self
    values = (self, *values)
    gm = grad_mode.state.enabled
    if gm and op.differentiable and self._requires_grad:
        if self._grad_fn is None and self._base is None:
            raise RuntimeError("a leaf Variable that requires grad is being used in an "
                               "in-place operation.")
        if self._base is not None and self._base._grad_fn is None and \
                self._base._requires_grad:
            raise RuntimeError("a view of a leaf Variable that requires grad is being used "
                               "in an in-place operation.")
    dst = self._data
    if 0 in dst.strides and dst.size > 1 and any(
            n > 1 and not st for n, st in zip(dst.shape, dst.strides, strict=True)):
        raise RuntimeError("unsupported operation: more than one element of the written-to "
                           "tensor refers to a single memory location. Please clone() the "
                           "tensor before performing the operation.")
    _out.check_no_partial_overlap(dst, values[1:])
    arrays, xp, grad, low, _ = _inputs(op, values, attrs)
    if type(xp) is BatchedNumpy and xp.level > getattr(dst, "level", 0):
        raise RuntimeError(INPLACE)  # under vmap: a batched value into an unbatched tensor
    check_writeable(dst, "the tensor written in place")
    record = grad and op.differentiable and gm
    if _fw_state.level is not None:  # the tangent of the result, from the pre-write values
        tangent = forward_ad.inplace_tangent(op, values, attrs)
    if op.into is not None and arrays[0] is dst and _fits(xp, arrays, dst):
        out = None  # computed straight into dst below (an upcast self is a copy: not here)
    else:
        out = _inplace_result(op, xp, values, arrays, attrs, dst, low)
    if record:  # the pre-write value and history of self, as the node's first input
        old = wrap(dst.copy() if "self" in op.saved_names else dst, xp)
        old._requires_grad = self._requires_grad
        old._grad_fn, old._output_nr = self._grad_fn, self._output_nr
        old._fw = self._fw  # its tangent too (a forward-over-reverse backward reads it)
    if on_inplace_write[0] is not None:  # allow_mutation_on_saved_tensors
        on_inplace_write[0](self)
    version = self._vc[0]
    if out is None:
        op.into(xp, dst, *arrays, *attrs)
    else:
        xp.copyto(dst, out, casting="unsafe")
    self._vc[0] += 1
    if record:
        node = _record(op, (old, *values[1:]), attrs, self)
        if node is not None:
            self._output_nr = 0  # (self was perhaps another output of its old node)
            for s in node._saved:  # an operand aliasing self was saved before this write
                if type(s) is SavedTensor and s._vc is self._vc and not s._is_output:
                    s._version = version
            if self._base is not None:
                _views.rebase_view(self, node)
        if self._retains_grad:  # .grad is the gradient of the new value
            self.retain_grad()
    if _fw_state.level is not None and (tangent is not None or
                                          forward_ad.tangent_of(self) is not None):
        self._fw = None if tangent is None else (_fw_state.level, tangent)
        if record and self._fw is not None:  # the node's saved output keeps the tangent
            _fw_state.output_tangents[(self._grad_fn, self._output_nr)] = self._fw
        if self._base is not None:
            forward_ad.write_view_tangent(self)
    return self


def _plain_write(op, self, values, attrs):
    """An in-place op that records nothing (grad mode off, no tangents), on a float32 or
    float64 NumPy tensor from tensors of its dtype and shape or from numbers: the op's
    ``into`` kernel straight on the arrays, without the general path's promotion and
    broadcasting checks (an optimizer's updates: ``mul_`` of a small tensor 4.7 -> 2.8 us).
    False, having written nothing, where the general path must decide."""
    dst = self._data
    if (op.into is None or type(dst) is not _ndarray or dst.dtype not in _REAL_FLOATING
            or 0 in dst.strides or self._fw is not None or not dst.flags.writeable):
        return False
    arrays = [dst, dst]
    for v in values:
        if isinstance(v, Tensor):
            d = v._data
            if type(d) is not _ndarray or d.dtype is not dst.dtype or d.shape != dst.shape \
                    or v._fw is not None:
                return False
            arrays.append(d)
        elif type(v) is float or type(v) is int:
            arrays.append(v)
        else:
            return False
    _out.check_no_partial_overlap(dst, values)
    op.into(numpy, *arrays, *attrs)
    self._vc[0] += 1
    return True


def _run_observed(op, values, attrs, self_):
    """The op, run by an engine observer that has opened its event (``run_op``)."""
    if self_ is None:
        return apply(op, values, attrs, True)
    return apply_inplace(op, self_, values, attrs, True)


def _fits(xp, arrays, dst):
    """The other operands broadcast to ``dst``'s shape (so an out= kernel can write it)."""
    shape = dst.shape
    for a in arrays[1:]:
        s = getattr(a, "shape", ())
        if s != shape and (len(s) > len(shape) or any(
                n != 1 and n != m for n, m in zip(reversed(s), reversed(shape), strict=False))):
            return False
    return True


def _inplace_result(op, xp, values, arrays, attrs, dst, low):
    """The op's result for an in-place write, checked like PyTorch's out= checks: the shape
    first, then the dtype, named as the inputs' common dtype (``low`` where a float16 or
    bfloat16 one computed in float32)."""
    try:
        out = op.forward(xp, *arrays, *attrs)
    except ValueError as e:
        raise _broadcast_error(values, e) from None
    except Exception:  # a kernel's refusal comes after the checks it would fail
        _check_inplace(op, values, arrays, dst, low)
        raise
    _check_out(dst, out.shape, out.dtype, low)
    return out


def _check_out(dst, shape, dtype, low):
    if shape != dst.shape:
        raise RuntimeError(f"output with shape {list(dst.shape)} doesn't match the broadcast "
                           f"shape {list(shape)}")
    if dtype != dst.dtype and not _same_kind(dtype, dst.dtype):
        raise RuntimeError(f"result type {_pretty(low or dtype)} can't be cast to the "
                           f"desired output type {_pretty(dst.dtype)}")


def _check_inplace(op, values, arrays, dst, low):
    """The shape and dtype checks of an in-place op whose forward failed, which PyTorch's
    TensorIterator makes before its kernel can refuse a dtype (``bool_tensor.fmod_`` of a
    (2, 3) tensor names the shape): the broadcast shape from the tensors, the result dtype
    from the promoted inputs (a comparison's result is bool whatever they are)."""
    shape = inplace_shape(values)
    dtype = dst.dtype
    if op.promote is not None and op.name not in _COMPARISONS:
        dtype = next((arrays[i].dtype for i in op.promote
                      if isinstance(values[i], Tensor)), dtype)
    _check_out(dst, shape, dtype, low)


def inplace_shape(values):
    """The broadcast shape of the tensors among ``values`` (self first), checked to be
    self's as PyTorch's TensorIterator does before it picks a kernel."""
    shapes = [v._data.shape for v in values if isinstance(v, Tensor)]
    shape, conflict = _broadcast(shapes)
    if conflict is not None:
        raise conflict
    if shape != shapes[0]:
        raise RuntimeError(f"output with shape {list(shapes[0])} doesn't match the broadcast "
                           f"shape {list(shape)}")
    return shape


_COMPARISONS = frozenset(("eq", "ne", "lt", "le", "gt", "ge"))


def _same_kind(src, dst):
    return _KIND_RANK[src.kind] <= _KIND_RANK[dst.kind]


def _pretty(np_dtype):
    return SCALAR_NAMES[np_dtype.name]


def _broadcast_error(values, error):
    """PyTorch's RuntimeError for tensors whose shapes do not broadcast (NumPy raises a
    ValueError), naming the first conflict as PyTorch does, operand by operand; any other
    ``error`` is returned unchanged."""
    return _broadcast_conflict([v._data.shape for v in values if isinstance(v, Tensor)]) or error


def _broadcast_conflict(shapes):
    """The RuntimeError PyTorch raises for the first pair of ``shapes`` that do not
    broadcast, or None. Its elementwise kernels check shapes before dtypes."""
    return _broadcast(shapes)[1]


def _broadcast(shapes):
    """(the shape ``shapes`` broadcast to, None), or (None, the RuntimeError of
    :func:`_broadcast_conflict`)."""
    shape = None
    for s in shapes:
        if shape is None:
            shape = s
            continue
        n = max(len(shape), len(s))
        a, b = (1,) * (n - len(shape)) + shape, (1,) * (n - len(s)) + s
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            if x != y and x != 1 and y != 1:
                return None, RuntimeError(f"The size of tensor a ({x}) must match the size "
                                          f"of tensor b ({y}) at non-singleton dimension {i}")
        shape = tuple(y if x == 1 else x for x, y in zip(a, b, strict=True))
    return shape, None
