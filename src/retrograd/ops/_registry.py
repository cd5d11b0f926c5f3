"""One entry per op: PyTorch's derivatives.yaml in plain Python.

An op is declared once with :func:`defop`::

    mul = defop("mul", lambda xp, self, other: self * other,
                vjp={"self": lambda grad, other: grad * other,
                     "other": lambda grad, self: grad * self},
                promote=("self", "other"))

``forward(xp, *tensors, *attrs)`` computes on backend arrays: its parameters
after ``xp`` are the op's tensor inputs (``inputs=``, by default the keys of
``vjp``) followed by its non-tensor attributes. Each vjp rule names what it
needs and gets exactly that: ``grad`` (the output's gradient; ``grads`` for
all outputs of a multi-output op), ``xp``, any input, ``result`` (or the names
given by ``outputs=``), any attribute, and ``<input>_shape``. What the rules
of the inputs that require grad name is what the node saves, in that order
(so an op never keeps more than its backward needs, and pack hooks see saved
tensors in PyTorch's order).

Rules are written once against the namespace ``xp`` they receive and never ask which
it is: backend arrays (NumPy, a device's), the differentiable facade over Tensors
(:mod:`._tensor_xp`, under ``create_graph=True``, so every rule is itself
differentiable), or batched arrays (``autograd._batched``, for ``is_grads_batched``).
Rules therefore use only ``xp.<function>`` calls, Python operators and
``.shape``/``.ndim``, never array methods; a buffer a rule writes gradients into
comes from ``xp`` (``xp.zeros``) or is made like the gradient. What differs between
namespaces is a backend function (``backend.functions.functions(xp)``: running an op
from a rule, constants, recomputed statistics, kernel-or-composite rules, ...). A
NumPy-only fast path is declared with :func:`kernel` beside the rule it stands in for,
and ``tests/ops/test_kernels.py`` pins the two together.

Broadcasting is undone by the engine (``autograd.node.sum_to``), never by a rule;
a rule may return a gradient of the broadcast shape.

Low precision is one policy here, not in rules (``_dtype.OPMATH``): when an op's float
inputs are float16 or bfloat16, its forward, vjp and jvp rules get them as float32 arrays,
and its results (and the gradients, in ``OpNode.apply``) are rounded back once, as
PyTorch's CPU kernels compute half and bfloat16 in float (NumPy's own bfloat16 loops are
slow or accumulate in bfloat16). What a node saves stays in the low dtype. Ops that are
exact in any dtype or that PyTorch computes natively in half declare ``upcast=False``.

Forward mode (``jvp=``) sits beside the vjp rules, in one of five forms:

- ``"elementwise"``: the output tangent is the sum over inputs with a tangent of
  that input's vjp rule with ``grad`` replaced by the tangent (right when each
  vjp rule multiplies ``grad`` by the local derivative, as for exp or mul);
- ``"linear"``: the op is linear in its tensor inputs jointly (sum, reshape,
  cat, neg, getitem): the tangent is ``forward`` applied to the tangents
  (zeros for inputs without one);
- ``"multilinear"``: the op is linear in each tensor input separately (matmul,
  outer, einsum): the tangent is the sum over inputs with a tangent of ``forward``
  with that input replaced by its tangent;
- ``"transpose"``: the tangent is found by differentiating the vjp rules with
  respect to ``grad`` (the double-backward trick): right for any op whose rules are
  differentiable, at the cost of two backward passes (prod, norm, var, ...);
- a callable naming what it needs: ``<input>_t`` (that input's tangent, None
  when it has none), ``xp``, inputs, ``result`` (or the ``outputs=`` names),
  attributes, ``<input>_shape``; it returns the output tangent (a tuple for a
  multi-output op, None for an output without one).
"""

import functools
import inspect
import operator

import numpy

from .. import _observe
from .._tensor import Tensor, wrap, _ndarray
from .._dtype import (FLOAT, LOW, OPMATH, SCALAR_NAMES, bfloat16, get_default_dtype, is_inexact,
                      opmath_arrays, result_type)
from ..autograd import forward_ad, grad_mode
from ..autograd._batched import INPLACE, BatchedNumpy, shape_of
from ..autograd._batched_loop import NO_RULE, per_element, top_batch
from ..autograd.node import OpNode, SavedTensor, grad_accumulator, on_inplace_write
from ..backend import get_array_module, joined_device, to_device
from . import _out, _views

__all__ = ["defop", "apply", "apply_inplace", "register", "FUNCTIONS", "kernel", "KERNELS",
           "GPU_KERNELS"]

_fw_state = forward_ad.state  # one flag check per op when forward AD is off

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
        fn = _out.wrap(f, f.__name__) if function and _out.takes_out(f) else f
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


KERNELS = []  # every kernel() declaration, for the tests that pin each to its rule
GPU_KERNELS = []  # ... those for CuPy on a GPU


class Kernel:
    """A fast kernel for one array module, declared beside the rule it stands in for."""

    __slots__ = ("rule", "fast", "when", "module", "op")

    def __repr__(self):
        return f"<kernel for {self.rule.__qualname__} of op {self.op}>"


def kernel(rule, fast, when, module=numpy):
    """``rule`` (a forward, vjp or jvp taking ``xp`` first), computed by ``fast`` (same
    arguments) when ``xp`` is ``module`` and ``when(*arguments after xp)`` holds: a BLAS
    path or an in-place NumPy pass for a rule that stays written once for every
    namespace. The rule keeps its signature (what the node saves is read from it).
    ``module="cupy"``: CuPy on a GPU (a fused kernel), named so that CuPy stays optional;
    such kernels are listed in ``GPU_KERNELS``, the others in ``KERNELS``."""
    if next(iter(inspect.signature(rule).parameters)) != "xp":
        raise TypeError(f"kernel for {rule.__qualname__}: the rule must take xp first")
    k = Kernel()
    k.rule, k.fast, k.when, k.module, k.op = rule, fast, when, module, None

    if module == "cupy":
        def run(xp, *args):
            if getattr(xp, "__name__", None) == "cupy" and k.when(*args):
                return fast(xp, *args)
            return rule(xp, *args)
        GPU_KERNELS.append(k)
    else:
        def run(xp, *args):
            if xp is module and k.when(*args):
                return fast(xp, *args)
            return rule(xp, *args)
        KERNELS.append(k)
    functools.update_wrapper(run, rule)
    run.kernel = k
    return run


class OpDef:
    __slots__ = ("name", "forward", "inputs", "attrs", "outputs", "vjp", "jvp", "node_cls",
                 "promote", "to_float", "view", "differentiable", "nondiff_outputs",
                 "saved_names", "_save_plan", "_rules", "_has_grads", "edges",
                 "edge_mask", "unary", "wants_strides", "into", "batched", "upcast",
                 "upcast_rules", "dtype_attr", "scalar_other")

    def __repr__(self):
        return f"<op {self.name}>"

    def apply(self, values, attrs=()):
        """:func:`apply` of this op: how forward AD, below the registry, records the ops
        of a differentiable tangent."""
        return apply(self, values, attrs)


def _camel(name):
    return "".join(p.capitalize() for p in name.strip("_").split("_"))


def defop(name, forward, *, inputs=None, vjp=None, jvp=None, node=None, outputs=("result",),
          scalars=(), into=None, batched=None, promote=None, to_float=False, view=False,
          nondiff_outputs=(), upcast=True, scalar_other=False):
    """Declare an op; see the module docstring for the conventions.

    node:      the grad_fn class name (default ``<Name>Backward0``).
    promote:   input names promoted together by PyTorch's type rules.
    to_float:  integer/bool results become the default float dtype (exp, div, ...).
    view:      the output is a view of the first input (shares memory and version).
    into:      ``into(xp, out, *tensors, *attrs)`` computes the op into ``out``: the in-place
               form writes straight into ``self`` with it (no temporary, no copy back).
    batched:   per input, a vjp rule for a batch of gradients (``is_grads_batched``), for
               rules that cannot run on ``autograd._batched``'s arrays: named like the vjp
               rule, with ``grad`` a plain array whose axis 0 is the batch (``batch`` its
               size), returning the gradients with that axis.
    upcast:    float16 and bfloat16 inputs compute in float32, results rounded once (the
               default, as PyTorch's CPU kernels); False for an op PyTorch computes natively
               in half or that is exact anyway (copies, selections, comparisons), where
               upcasting only costs memory and time; "forward" when only the forward is one
               kernel and PyTorch's backward is a composite of half ops (its rules then see
               the rounded values they compare with ``result``). Views never upcast; nor does a
               call given a ``dtype`` attribute (``sum(dtype=...)`` computes in that dtype).
               A number among the promoted inputs of an upcast op is rounded to a half
               result's dtype first, as PyTorch casts it to the common dtype (``x + 0.1``
               adds bfloat16's 0.1), and a 0-d tensor of another dtype with it, except:
    scalar_other: the second input, a number or a 0-d tensor, enters a half op's float32
               compute at its own value (PyTorch's mul and div kernels read such a CPU
               scalar in the compute type: ``x * 0.1`` multiplies by float32's 0.1).
    """
    op = OpDef()
    op.name = name
    op.forward = forward
    vjp = dict(vjp or {})
    params = list(inspect.signature(forward).parameters)[1:]
    inputs = tuple(inputs if inputs is not None else vjp)
    for n in inputs:
        if n not in params:
            raise TypeError(f"op {name}: input {n!r} is not a parameter of forward")
    op.inputs = tuple(p for p in params if p in inputs)
    # Graph edges: the differentiable inputs (PyTorch makes none for index tensors, masks
    # or Scalar-overload operands such as pow's exponent).
    op.edges = tuple(i for i, n in enumerate(op.inputs) if n in vjp and n not in scalars)
    op.edge_mask = tuple(i in op.edges for i in range(len(op.inputs)))
    op.unary = op.edges == (0,) and len(op.inputs) == 1
    op.attrs = tuple(p for p in params if p not in inputs)
    op.outputs = tuple(outputs)
    op.vjp = vjp
    op.jvp = jvp
    op.differentiable = bool(vjp)
    op.nondiff_outputs = frozenset(nondiff_outputs)
    op.promote = tuple(op.inputs.index(n) for n in promote) if promote else None
    op.to_float = to_float
    op.view = view
    op.into = into
    op.upcast = bool(upcast) and not view
    op.upcast_rules = upcast is True and not view  # vjp and jvp rules too
    op.dtype_attr = op.attrs.index("dtype") if "dtype" in op.attrs else None
    op.scalar_other = 1 if scalar_other else None
    # Names a rule may ask for, and where the engine finds them (see OpNode.apply).
    saveable = set(op.inputs) | set(op.outputs)
    saved, rules = [], []
    for inp in op.inputs:
        rule = vjp.get(inp)
        if rule is None:
            rules.append(None)
            continue
        args = list(inspect.signature(rule).parameters)
        for a in args:
            if a in saveable and a not in saved:
                saved.append(a)
        rules.append((rule, args))
    op.saved_names = tuple(saved)
    env_names = ["grad", "grads", "xp", *saved, *op.attrs, *(f"{n}_shape" for n in op.inputs),
                 *(f"{n}_strides" for n in op.inputs)]
    op._rules = []
    for i, r in enumerate(rules):
        if r is None:
            op._rules.append(None)
            continue
        rule, args = r
        bad = [a for a in args if a not in env_names]
        if bad:
            raise TypeError(f"op {name}: vjp rule for {op.inputs[i]!r} asks for unknown {bad}")
        idx = tuple(env_names.index(a) for a in args)
        # (rule, env indices, a C-speed getter of its arguments, whether it takes one)
        op._rules.append((rule, idx, operator.itemgetter(*idx) if idx else (lambda env: ()),
                          len(idx) == 1))
    op._rules = tuple(op._rules)
    op._has_grads = any(r is not None and 1 in r[1] for r in op._rules)
    # Input strides (for layout-aware rules) are kept only by the ops whose rules ask.
    first_stride = len(env_names) - len(op.inputs)
    op.wants_strides = any(r is not None and max(r[1], default=0) >= first_stride
                           for r in op._rules)
    op.batched = _batched_rules(op, batched, rules, env_names) if batched else None
    # What to save for each set of inputs needing grad (bit i = input i): the saved names
    # that those inputs' rules use, each as (slot, is_output, index).
    needed = [{saved.index(a) for a in r[1] if a in saved} if r else set() for r in rules]
    op._save_plan = []
    for mask in range(1 << len(op.inputs)):
        slots = set().union(*(needed[i] for i in range(len(op.inputs)) if mask >> i & 1))
        op._save_plan.append(tuple(
            (k, saved[k] in op.outputs,
             op.outputs.index(saved[k]) if saved[k] in op.outputs else op.inputs.index(saved[k]))
            for k in sorted(slots)))
    op._save_plan = tuple(op._save_plan)
    for rule in (forward, *vjp.values(), jvp):
        while hasattr(rule, "kernel"):  # declared with kernel(): name its op for the tests
            rule.kernel.op = name         # (a GPU kernel may wrap a NumPy one)
            rule = rule.kernel.rule
    op.node_cls = type(node or f"{_camel(name)}Backward0", (OpNode,),
                       {"__slots__": (), "_op": op})
    return op


def _batched_rules(op, batched, rules, env_names):
    """``(rule, argument getter, takes one)`` per input: the env of the vjp rules (strides
    always in it), plus ``batch``; a batched rule may use only what the vjp rules keep."""
    unknown = set(batched) - {n for n, r in zip(op.inputs, rules, strict=True) if r}
    if unknown:
        raise TypeError(f"op {op.name}: batched rules for {sorted(unknown)}, which have no "
                        "vjp rule")
    names = [*env_names, "batch"]
    out = []
    for inp, r in zip(op.inputs, rules, strict=True):
        rule = batched.get(inp)
        if rule is None:
            out.append(None)
            continue
        args = list(inspect.signature(rule).parameters)
        bad = [a for a in args if a not in names or a in op.saved_names and a not in r[1]
               or a.endswith("_strides") and not op.wants_strides]
        if bad:
            raise TypeError(f"op {op.name}: batched rule for {inp!r} asks for {bad}, which its "
                            "vjp rule does not keep")
        out.append((rule, operator.itemgetter(*(names.index(a) for a in args)) if args
                    else (lambda env: ()), len(args) == 1))
    return tuple(out)


_KIND_RANK = {"b": 0, "u": 1, "i": 1, "f": 2, "V": 2, "c": 3}  # "V": bfloat16 (ml_dtypes)
_SCALAR_RANK = {bool: 0, int: 1, float: 2, complex: 3}


def _promote(op, values, arrays):
    """Cast the arrays of the promoted inputs to PyTorch's result dtype.

    Fast exit for the common case: tensors of one dtype, scalars of no higher kind.
    """
    idx = op.promote
    kind = getattr(arrays[idx[0]], "dtype", None)
    slow = kind is None or not isinstance(values[idx[0]], Tensor)
    if not slow:
        rank = _KIND_RANK[kind.kind]
        for i in idx[1:]:
            v = values[i]
            if v is None:
                continue
            if isinstance(v, Tensor):
                if v._data.dtype != kind:
                    slow = True
                    break
            elif _SCALAR_RANK.get(type(v), 9) > rank:
                slow = True
                break
        if not slow and (rank >= 2 or not op.to_float):
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
    return arrays


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
        return arrays, numpy
    (dev,) = devices
    arrays = [to_device(a, dev) if isinstance(v, Tensor) else a
              for v, a in zip(values, arrays, strict=True)]
    # (the innermost batch among the arrays, under vmap: its namespace makes the buffers)
    first = max((a for v, a in zip(values, arrays, strict=True) if isinstance(v, Tensor)),
                key=lambda a: getattr(a, "level", -1))
    return arrays, get_array_module(first)


def _inputs(op, values, attrs):
    """The inputs' arrays (promoted, in their compute dtype), their array module, whether
    some input requires grad (rebuilding stale view histories on the way), and the
    low-precision dtype to round results to (None when the op computes in its inputs'
    dtype: see :data:`.._dtype.OPMATH`)."""
    arrays = []
    grad = low = mixed = False
    xp = first = None
    for v in values:
        if isinstance(v, Tensor):
            d = v._data
            arrays.append(d)
            if d.dtype in LOW:
                low = True
            if xp is None:
                first = type(d)
                xp = numpy if first is _ndarray else get_array_module(d)
            elif type(d) is not first:
                mixed = True
            if v._requires_grad if v._base is None else _views.requires_grad(v):
                grad = True
        else:
            arrays.append(v)
    if mixed or (first is not _ndarray and xp is not None and len(arrays) > 1):
        arrays, xp = _one_device(values, arrays)
    if op.promote is not None:
        arrays = _promote(op, values, arrays)
    elif op.to_float:
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
    return arrays, xp or numpy, grad, low


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
    observer's call, already inside its event.)
    """
    obs = _observe.engine
    if obs is not None and obs.ops and not _observed:
        return obs.run_op(_run_observed, op, values, attrs, None)
    arrays, xp, grad, low = _inputs(op, values, attrs)
    try:
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
    if _fw_state.level is not None:
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


def _record(op, values, attrs, outs):
    """Create the op's node, connect it to the inputs' histories and save what it needs."""
    if op.unary:  # one tensor input that requires grad (apply checked): the common case
        v = values[0]
        d = v._data
        fn = v._grad_fn
        node = op.node_cls()
        node.next_functions = ((fn, v._output_nr) if fn is not None
                               else (grad_accumulator(v), 0),)
        shapes = (d.shape if type(d) is _ndarray else shape_of(d),)
        dtypes, mask = (d.dtype,), 1
    else:
        shapes, dtypes, nexts = [], [], []
        mask, bit = 0, 1
        for v, is_edge in zip(values, op.edge_mask, strict=True):
            if isinstance(v, Tensor):
                d = v._data
                shapes.append(d.shape if type(d) is _ndarray else shape_of(d))
                dtypes.append(d.dtype)
                if v._requires_grad:
                    mask |= bit
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
            bit <<= 1
        if not mask:
            return None
        node = op.node_cls()
        node.next_functions = tuple(nexts)
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
        if is_inexact(outs._data.dtype):
            outs._grad_fn, outs._requires_grad = node, True
        node._out_meta = None
        outs = (outs,)
    plan = op._save_plan[mask]
    if plan:
        saved = [None] * len(op.saved_names)
        for k, is_output, i in plan:
            if is_output:
                saved[k] = SavedTensor(outs[i], True)
            else:
                v = values[i]
                saved[k] = SavedTensor(v, False) if isinstance(v, Tensor) else v
        node._saved = saved
    else:
        node._saved = ()
    return node


def apply_inplace(op, self, values, attrs=(), _observed=False):
    """``self.<op>_(...)``: compute the op, write into ``self``, rebase its history.

    The node is the out-of-place op's node (``add_`` records ``AddBackward0``);
    a saved ``self`` is a copy of the value before the write.
    """
    obs = _observe.engine
    if obs is not None and obs.ops and not _observed:
        return obs.run_op(_run_observed, op, values, attrs, self)
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
    arrays, xp, grad, low = _inputs(op, values, attrs)
    if type(xp) is BatchedNumpy and xp.level > getattr(dst, "level", 0):
        raise RuntimeError(INPLACE)  # under vmap: a batched value into an unbatched tensor
    record = grad and op.differentiable and gm
    if _fw_state.level is not None:  # the tangent of the result, from the pre-write values
        tangent = forward_ad.inplace_tangent(op, values, attrs)
    if op.into is not None and arrays[0] is dst and _fits(xp, arrays, dst):
        out = None  # computed straight into dst below (an upcast self is a copy: not here)
    else:
        out = _inplace_result(op, xp, values, arrays, attrs, dst)
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


def _inplace_result(op, xp, values, arrays, attrs, dst):
    """The op's result for an in-place write, checked like PyTorch's out= checks."""
    try:
        out = op.forward(xp, *arrays, *attrs)
    except ValueError as e:
        raise _broadcast_error(values, e) from None
    if out.dtype != dst.dtype and not _same_kind(out.dtype, dst.dtype):
        raise RuntimeError(f"result type {_pretty(out.dtype)} can't be cast to the desired "
                           f"output type {_pretty(dst.dtype)}")
    if out.shape != dst.shape:
        raise RuntimeError(f"output with shape {list(dst.shape)} doesn't match the broadcast "
                           f"shape {list(out.shape)}")
    return out


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
    shape = None
    for s in shapes:
        if shape is None:
            shape = s
            continue
        n = max(len(shape), len(s))
        a, b = (1,) * (n - len(shape)) + shape, (1,) * (n - len(s)) + s
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            if x != y and x != 1 and y != 1:
                return RuntimeError(f"The size of tensor a ({x}) must match the size of tensor "
                                    f"b ({y}) at non-singleton dimension {i}")
        shape = tuple(y if x == 1 else x for x, y in zip(a, b, strict=True))
    return None
