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

Rules are written once and run in two modes: on backend arrays with
``xp = numpy`` (plain backward), and on Tensors with ``xp`` the differentiable
facade in :mod:`._tensor_xp` (``create_graph=True``), so every rule is itself
differentiable. Rules therefore use only ``xp.<function>`` calls, Python
operators and ``.shape``/``.ndim``, never array methods.

Broadcasting is undone by the engine (``_broadcast.sum_to``), never by a rule;
a rule may return a gradient of the broadcast shape.
"""

import inspect

from .._tensor import Tensor, wrap
from .._dtype import FLOAT, get_default_dtype, result_type
from ..autograd import grad_mode
from ..autograd.node import OpNode, SavedTensor, collect_next
from . import _views

__all__ = ["defop", "apply", "apply_inplace", "register", "FUNCTIONS"]

FUNCTIONS = {}  # the public ``retrograd.<name>`` namespace, filled by @register


def register(fn=None, *, method=True, function=True, name=None, aliases=()):
    """Expose a public op as ``retrograd.<name>`` and/or ``Tensor.<name>``."""
    def deco(f):
        for n in (name or f.__name__, *aliases):
            if function:
                FUNCTIONS[n] = f
            if method:
                setattr(Tensor, n, f)
        return f
    return deco(fn) if fn is not None else deco


class OpDef:
    __slots__ = ("name", "forward", "inputs", "attrs", "outputs", "vjp", "jvp", "node_cls",
                 "promote", "to_float", "view", "differentiable", "nondiff_outputs",
                 "saved_names", "_save_plan", "_rules", "_has_grads")

    def __repr__(self):
        return f"<op {self.name}>"


def _camel(name):
    return "".join(p.capitalize() for p in name.strip("_").split("_"))


def defop(name, forward, *, inputs=None, vjp=None, jvp=None, node=None, outputs=("result",),
          promote=None, to_float=False, view=False, nondiff_outputs=()):
    """Declare an op; see the module docstring for the conventions.

    node:      the grad_fn class name (default ``<Name>Backward0``).
    promote:   input names promoted together by PyTorch's type rules.
    to_float:  integer/bool results become the default float dtype (exp, div, ...).
    view:      the output is a view of the first input (shares memory and version).
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
    op.attrs = tuple(p for p in params if p not in inputs)
    op.outputs = tuple(outputs)
    op.vjp = vjp
    op.jvp = jvp
    op.differentiable = bool(vjp)
    op.nondiff_outputs = frozenset(nondiff_outputs)
    op.promote = tuple(op.inputs.index(n) for n in promote) if promote else None
    op.to_float = to_float
    op.view = view
    # Names a rule may ask for, and where the engine finds them (see OpNode.apply).
    saveable = set(op.inputs) | set(op.outputs)
    saved, rules = [], []
    for i, inp in enumerate(op.inputs):
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
    env_names = ["grad", "grads", "xp", *saved, *op.attrs, *(f"{n}_shape" for n in op.inputs)]
    op._rules = []
    for i, r in enumerate(rules):
        if r is None:
            op._rules.append(None)
            continue
        rule, args = r
        bad = [a for a in args if a not in env_names]
        if bad:
            raise TypeError(f"op {name}: vjp rule for {op.inputs[i]!r} asks for unknown {bad}")
        op._rules.append((rule, tuple(env_names.index(a) for a in args)))
    op._rules = tuple(op._rules)
    op._has_grads = any(r is not None and 1 in r[1] for r in op._rules)
    # Which saved names each input's rule needs: saved only when that input needs grad.
    op._save_plan = tuple(
        frozenset(saved.index(a) for a in r[1] if a in saved) if r else frozenset()
        for r in rules)
    op.node_cls = type(node or f"{_camel(name)}Backward0", (OpNode,),
                       {"__slots__": (), "_op": op})
    return op


_KIND_RANK = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}
_SCALAR_RANK = {bool: 0, int: 1, float: 2, complex: 3}


def _promote(op, values, arrays):
    """Cast the arrays of the promoted inputs to PyTorch's result dtype.

    Fast exit for the common case: tensors of one dtype, scalars of no higher kind.
    """
    idx = op.promote
    first = arrays[idx[0]]
    kind = getattr(first, "dtype", None)
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
    if slow:
        rt = result_type(*(values[j] for j in idx if values[j] is not None))
    else:
        rt = values[idx[0]].dtype
    if op.to_float and rt.category < FLOAT:
        rt = get_default_dtype()
    target = rt.np
    for i in idx:
        a = arrays[i]
        if isinstance(values[i], Tensor) and a.dtype != target:
            arrays[i] = a.astype(target)
    return arrays


def _float_inputs(arrays):
    target = get_default_dtype().np
    return [a.astype(target) if hasattr(a, "dtype") and a.dtype.kind in "biu" else a
            for a in arrays]


def apply(op, values, attrs=()):
    """Run ``op`` on ``values`` (tensors, or scalars/None for optional operands).

    Returns the output Tensor (a tuple for multi-output ops), recording a node
    when grad mode is on and some input requires grad.
    """
    arrays = [v._data if isinstance(v, Tensor) else v for v in values]
    if op.promote is not None:
        arrays = _promote(op, values, arrays)
    elif op.to_float:
        arrays = _float_inputs(arrays)
    xp = _views.xp_of(values)
    out = op.forward(xp, *arrays, *attrs)
    record = op.differentiable and grad_mode.state.enabled and any(
        isinstance(v, Tensor) and (v._requires_grad if v._base is None
                                   else _views.requires_grad(v)) for v in values)
    if type(out) is tuple:
        outs = tuple(wrap(o, xp) for o in out)
    else:
        outs = wrap(out, xp)
    if op.view:
        _views.mark_view(values[0], outs)
    if record:
        _record(op, values, attrs, outs)
    return outs


def _record(op, values, attrs, outs):
    """Create the op's node, connect it to the inputs' histories and save what it needs."""
    node = op.node_cls()
    nexts, needs = collect_next(values, op.inputs)
    if not any(needs):
        return None
    node.next_functions = nexts
    node._attrs = attrs
    node._shapes = tuple(v._data.shape if isinstance(v, Tensor) else None for v in values)
    node._dtypes = tuple(v._data.dtype if isinstance(v, Tensor) else None for v in values)
    multi = type(outs) is tuple
    out_list = outs if multi else (outs,)
    for i, o in enumerate(out_list):
        if op.outputs[i] not in op.nondiff_outputs and o._data.dtype.kind in "fc":
            o._grad_fn = node
            o._output_nr = i
            o._requires_grad = True
    node._out_meta = tuple((o._data.shape, o._data.dtype) for o in out_list) if multi else None
    names = op.saved_names
    if names:
        want = set()
        for i, need in enumerate(needs):
            if need:
                want |= op._save_plan[i]
        saved = [None] * len(names)
        for k in sorted(want):
            n = names[k]
            if n in op.inputs:
                v = values[op.inputs.index(n)]
                saved[k] = SavedTensor(v, False) if isinstance(v, Tensor) else v
            else:
                saved[k] = SavedTensor(out_list[op.outputs.index(n)], True)
        node._saved = saved
    else:
        node._saved = ()
    return node


def apply_inplace(op, self, values, attrs=()):
    """``self.<op>_(...)``: compute the op, write into ``self``, rebase its history.

    The node is the out-of-place op's node (``add_`` records ``AddBackward0``);
    a saved ``self`` is a copy of the value before the write.
    """
    values = (self, *values)
    gm = grad_mode.state.enabled
    if gm and self._requires_grad:
        if self._grad_fn is None and self._base is None:
            raise RuntimeError("a leaf Variable that requires grad is being used in an "
                               "in-place operation.")
        if self._base is not None and self._base._grad_fn is None and \
                self._base._requires_grad:
            raise RuntimeError("a view of a leaf Variable that requires grad is being used "
                               "in an in-place operation.")
    record = op.differentiable and gm and any(
        isinstance(v, Tensor) and (v._requires_grad if v._base is None
                                   else _views.requires_grad(v)) for v in values)
    dst = self._data
    arrays = [v._data if isinstance(v, Tensor) else v for v in values]
    if op.promote is not None:
        arrays = _promote(op, values, arrays)
    elif op.to_float:
        arrays = _float_inputs(arrays)
    xp = _views.xp_of(values)
    out = op.forward(xp, *arrays, *attrs)
    if out.dtype != dst.dtype and not _same_kind(out.dtype, dst.dtype):
        raise RuntimeError(f"result type {_pretty(out.dtype)} can't be cast to the desired "
                           f"output type {_pretty(dst.dtype)}")
    if out.shape != dst.shape:
        raise RuntimeError(f"output with shape {list(dst.shape)} doesn't match the broadcast "
                           f"shape {list(out.shape)}")
    if record:  # the pre-write value and history of self, as the node's first input
        old = wrap(dst.copy() if "self" in op.saved_names else dst, xp)
        old._requires_grad = self._requires_grad
        old._grad_fn, old._output_nr = self._grad_fn, self._output_nr
    xp.copyto(dst, out, casting="unsafe")
    self._vc[0] += 1
    if record:
        node = _record(op, (old, *values[1:]), attrs, self)
        if node is not None and self._base is not None:
            _views.rebase_view(self, node)
    return self


def _same_kind(src, dst):
    return _KIND_RANK[src.kind] <= _KIND_RANK[dst.kind]


def _pretty(np_dtype):
    return {"float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long",
            "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool",
            "complex64": "ComplexFloat", "complex128": "ComplexDouble"}[np_dtype.name]
