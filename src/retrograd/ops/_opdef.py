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

One rule may give the gradients of several inputs at once, as derivatives.yaml's
``input, weight, bias: native_batch_norm_backward(..., grad_input_mask)``: its key is the
tuple of their names, its last parameter ``grad_input_mask`` (a bool per input of the key,
whether its gradient is asked for), and it returns a gradient (or None) for each. The
engine calls it once per node for all of them: the sums they share are taken once.

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

from ..autograd._batched import Batched, BatchShape
from ..autograd.node import KernelBackward, OpNode, _tensor_operand

__all__ = ["defop", "kernel", "OpDef", "Kernel", "Joint", "KERNELS", "GPU_KERNELS"]

KERNELS = []  # every kernel() declaration, for the tests that pin each to its rule
GPU_KERNELS = []  # ... those for CuPy on a GPU


class Kernel:
    """A fast kernel for one array module, declared beside the rule it stands in for."""

    __slots__ = ("rule", "fast", "when", "module", "op", "leading")

    def __repr__(self):
        return f"<kernel for {self.rule.__qualname__} of op {self.op}>"


def kernel(rule, fast, when, module=numpy, leading=False):
    """``rule`` (a forward, vjp or jvp taking ``xp`` first), computed by ``fast`` (same
    arguments) when ``xp`` is ``module`` and ``when(*arguments after xp)`` holds: a BLAS
    path or an in-place NumPy pass for a rule that stays written once for every
    namespace. The rule keeps its signature (what the node saves is read from it).
    ``module="cupy"``: CuPy on a GPU (a fused kernel), named so that CuPy stays optional;
    such kernels are listed in ``GPU_KERNELS``, the others in ``KERNELS``.
    ``leading=True``: ``fast`` takes its arrays with more leading dims (and its shapes
    with them), so under vmap, where every array argument is a batch of ``module``'s
    arrays of the call's level, it runs on their data, the batch one more leading dim."""
    if next(iter(inspect.signature(rule).parameters)) != "xp":
        raise TypeError(f"kernel for {rule.__qualname__}: the rule must take xp first")
    k = Kernel()
    k.rule, k.fast, k.when, k.module, k.op = rule, fast, when, module, None
    k.leading = leading

    if module == "cupy":
        def run(xp, *args):
            if getattr(xp, "__name__", None) == "cupy" and k.when(*args):
                return fast(xp, *args)
            return rule(xp, *args)
        GPU_KERNELS.append(k)
    else:
        def otherwise(xp, args):
            """Not ``module``'s arrays: on a vmap batch of them, ``fast`` on its data (if
            ``leading``), else the rule."""
            if k.leading and getattr(xp, "batched", False) and xp.inner is module:
                data = _batch_data(xp, args)
                if data is not None and k.when(*data):
                    return _as_batch(fast(module, *data), xp.level)
            return rule(xp, *args)
        # (Up to three arguments are passed on as they are: in CPython 3.11 a call with *
        # arguments is a C-level call, some 500 instructions more, and ops run this wrapper
        # on every call, a kernel taken or not.)
        n = _fixed_arity(rule)
        if n == 1:
            def run(xp, a):
                if xp is module and k.when(a):
                    return fast(xp, a)
                return otherwise(xp, (a,)) if k.leading else rule(xp, a)
        elif n == 2:
            def run(xp, a, b):
                if xp is module and k.when(a, b):
                    return fast(xp, a, b)
                return otherwise(xp, (a, b)) if k.leading else rule(xp, a, b)
        elif n == 3:
            def run(xp, a, b, c):
                if xp is module and k.when(a, b, c):
                    return fast(xp, a, b, c)
                return otherwise(xp, (a, b, c)) if k.leading else rule(xp, a, b, c)
        else:
            def run(xp, *args):
                if xp is module and k.when(*args):
                    return fast(xp, *args)
                return otherwise(xp, args)
        KERNELS.append(k)
    functools.update_wrapper(run, rule)
    run.kernel = k
    return run


def _fixed_arity(rule):
    """How many arguments ``rule`` takes after ``xp``, where it takes exactly that many
    (none optional, no ``*args``); else None."""
    params = list(inspect.signature(rule).parameters.values())[1:]
    if all(p.kind is p.POSITIONAL_OR_KEYWORD and p.default is p.empty for p in params):
        return len(params)
    return None


def _batch_data(xp, args):
    """A call's arguments on batched namespace ``xp`` as its batch's data: each batch's
    array, each element shape with the batch dim; None where an argument is an array
    outside the batch or a batch of another level."""
    out = []
    for a in args:
        t = type(a)
        if t is Batched or t is BatchShape:
            if a.level != xp.level:
                return None
            a = a.data if t is Batched else (xp.batch, *a)
        elif hasattr(a, "__array_namespace__"):
            return None
        out.append(a)
    return out


def _as_batch(out, level):
    """A kernel's result on a batch's data, as batches of ``level``."""
    if type(out) is tuple:
        return tuple(Batched(o, level) for o in out)
    return Batched(out, level)


class Joint:
    """A vjp rule for several ``inputs`` together (a vjp key of their names; see the module
    docstring): ``op.vjp`` maps each of them to this."""

    __slots__ = ("rule", "inputs")

    def __init__(self, rule, inputs):
        self.rule, self.inputs = rule, tuple(inputs)

    def __repr__(self):
        return f"<joint vjp of {', '.join(self.inputs)}: {self.rule.__qualname__}>"


def _flat_vjp(vjp):
    """``vjp`` keyed by single input names: a tuple key's rule as one :class:`Joint` under
    each of its names (a mapping already flat, ``op.vjp``, stays as it is)."""
    flat = {}
    for key, rule in (vjp or {}).items():
        if type(key) is tuple:
            rule = Joint(rule, key)
            for n in key:
                flat[n] = rule
        else:
            flat[key] = rule
    return flat


class OpDef:
    __slots__ = ("name", "forward", "inputs", "attrs", "outputs", "vjp", "jvp", "node_cls",
                 "promote", "to_float", "view", "differentiable", "nondiff_outputs",
                 "saved_names", "_save_plan", "_rules", "_edge_rules", "_joint", "_has_grads",
                 "edges",
                 "edge_mask", "unary", "wants_strides", "into", "batched", "upcast",
                 "upcast_rules", "dtype_attr", "scalar_other", "lean", "kernel_backward",
                 "hooked")

    def __repr__(self):
        return f"<op {self.name}>"


# What an op's node saves when ``_registry._record`` takes its lean path (see _lean).
LEAN_NOTHING, LEAN_INPUT, LEAN_OUTPUT = "nothing", "input", "output"


def _lean(op):
    """What ``op``'s node saves, read ahead for ``_registry._record`` (None: its full
    path decides), for an op with one output whose rules need no strides. Called on one
    tensor (``x.sin()``): LEAN_NOTHING, LEAN_INPUT or LEAN_OUTPUT, its one saved slot. On a
    tensor and a number (``x * 0.5``): LEAN_NOTHING, or the slot (0 or 1, of two) that
    keeps the number."""
    if len(op.outputs) != 1 or op.nondiff_outputs or op.wants_strides:
        return None
    plan, n = op._save_plan[1], len(op.saved_names)
    if op.unary and len(plan) == n <= 1:
        return LEAN_OUTPUT if plan and plan[0][1] else LEAN_INPUT if plan else LEAN_NOTHING
    if op.edges != (0, 1) or len(op.inputs) != 2:
        return None
    if not plan and not n:
        return LEAN_NOTHING
    if n == 2 and len(plan) == 1 and plan[0][1:] == (False, 1):
        return plan[0][0]
    return None


def _camel(name):
    return "".join(p.capitalize() for p in name.strip("_").split("_"))


def defop(name, forward, *, inputs=None, vjp=None, jvp=None, node=None, outputs=("result",),
          scalars=(), into=None, batched=None, promote=None, to_float=False, view=False,
          nondiff_outputs=(), upcast=True, scalar_other=False, backward_reads=None,
          backward_node=None, node_outputs=None):
    """Declare an op; see the module docstring for the conventions.

    node:      the grad_fn class name (default ``<Name>Backward0``).
    backward_reads: the input whose value (or result) PyTorch's backward kernel for this
               op reads besides the gradient, where derivatives.yaml gives it a zero
               derivative (a pool's ``self``; relu's ``threshold_backward(grad, result)``:
               ``self``): under ``create_graph`` that input's gradient becomes the
               kernel's output (``autograd.node.KernelBackward``), named ``backward_node``
               (default: the grad_fn's name with its Backward doubled,
               ``MaxPool2DWithIndicesBackward0`` -> ``MaxPool2DWithIndicesBackwardBackward0``).
    node_outputs: the outputs of PyTorch's node, whose gradients its hooks see (a
               multi-output op's): by default the differentiable ones where the rules read
               ``grads``, else the first alone, as PyTorch's codegen makes them.
    promote:   input names promoted together by PyTorch's type rules.
    to_float:  integer/bool results become the default float dtype (exp, div, ...).
    view:      the output is a view of the first input (shares memory and version).
    into:      ``into(xp, out, *tensors, *attrs)`` computes the op into ``out``: the in-place
               form writes straight into ``self`` with it (no temporary, no copy back).
               A NumPy fast path for it is declared with :func:`kernel`, as for a rule.
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
    vjp = _flat_vjp(vjp)
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
        args = list(inspect.signature(_rule_of(rule)).parameters)
        if type(rule) is Joint:
            if args[-1:] != ["grad_input_mask"]:
                raise TypeError(f"op {name}: the joint vjp rule of {rule.inputs} must take "
                                "grad_input_mask last")
            args.pop()
        for a in args:
            if a in saveable and a not in saved:
                saved.append(a)
        rules.append((rule, args))
    op.saved_names = tuple(saved)
    env_names = ["grad", "grads", "xp", *saved, *op.attrs, *(f"{n}_shape" for n in op.inputs),
                 *(f"{n}_strides" for n in op.inputs)]
    for i, r in enumerate(rules):
        bad = [a for a in r[1] if a not in env_names] if r else ()
        if bad:
            raise TypeError(f"op {name}: vjp rule for {op.inputs[i]!r} asks for unknown {bad}")
    # (rule, env indices, a C-speed getter of its arguments, whether it takes one)
    plain = [None if r is None else _getter(r[0], tuple(env_names.index(a) for a in r[1]))
             for r in rules]
    op._has_grads = any(r is not None and 1 in r[1] for r in plain)
    # Input strides (for layout-aware rules) are kept only by the ops whose rules ask.
    first_stride = len(env_names) - len(op.inputs)
    op.wants_strides = any(r is not None and max(r[1], default=0) >= first_stride
                           for r in plain)
    op._joint, op._rules = _joint_rules(op, plain, len(env_names))
    # (edge number, input index, its rule) per graph edge, as OpNode.apply walks them
    op._edge_rules = tuple((k, i, op._rules[i]) for k, i in enumerate(op.edges))
    if op._joint and (batched or jvp == "elementwise"):
        raise TypeError(f"op {name}: a joint vjp rule takes no batched rules and no "
                        "elementwise jvp")
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
    op.lean = _lean(op)
    op.hooked = _hooked_outputs(op, node_outputs)
    for rule in (forward, *map(_rule_of, vjp.values()), jvp, into):
        while hasattr(rule, "kernel"):  # declared with kernel(): name its op for the tests
            rule.kernel.op = name         # (a GPU kernel may wrap a NumPy one)
            rule = rule.kernel.rule
    op.node_cls = type(node or f"{_camel(name)}Backward0", (OpNode,),
                       {"__slots__": (), "_op": op})
    op.kernel_backward = _kernel_backward(op, backward_reads, backward_node)
    return op


def _hooked_outputs(op, names):
    """``op.hooked``: the indices of the outputs whose gradients the node's hooks see (None:
    all, one output)."""
    if len(op.outputs) == 1:
        return None
    if names is None:
        names = ([n for n in op.outputs if n not in op.nondiff_outputs] if op._has_grads
                 else op.outputs[:1])
    return tuple(op.outputs.index(n) for n in names)


def _rule_of(rule):
    """The function of a vjp entry (a joint one's rule)."""
    return rule.rule if type(rule) is Joint else rule


def _getter(rule, idx):
    """A rule's (function, env indices, getter of its arguments, whether it takes one)."""
    return rule, idx, operator.itemgetter(*idx) if idx else (lambda env: ()), len(idx) == 1


def _joint_rules(op, plain, first):
    """``op._joint``: per joint rule, (its function, env indices, getter, takes one: as a
    plain rule's, here of its arguments but the mask) and the edges of its inputs, its
    gradients appended to the env (after the strides, at ``first`` on) by
    ``OpNode._joint_grads``; and ``op._rules``, where each input of a joint rule takes its
    gradient from those (at its place in the rule's key)."""
    joints, rules = [], list(plain)
    for i, r in enumerate(plain):
        joint = op.vjp.get(op.inputs[i])
        if type(joint) is not Joint:
            continue
        if joint.rule not in [j[0][0] for j in joints]:
            for n in joint.inputs:
                if not _tensor_operand(op, n):
                    raise TypeError(f"op {op.name}: joint vjp input {n!r} is not a "
                                    "differentiable input")
            edges = tuple(op.edges.index(op.inputs.index(n)) for n in joint.inputs)
            joints.append(((joint.rule, *r[1:]), edges))
        at = first + [j[0][0] for j in joints].index(joint.rule)
        rules[i] = _getter(operator.itemgetter(joint.inputs.index(op.inputs[i])), (at,))
    return tuple(joints), tuple(rules)


def _kernel_backward(op, reads, node):
    """(node class, edge of the input read) for ``OpNode.apply``'s ``_through_kernel``, or
    None."""
    if reads is None:
        return None
    if not _tensor_operand(op, reads):
        raise TypeError(f"op {op.name}: backward_reads {reads!r} is not a differentiable "
                        "input")
    name = node or op.node_cls.__name__.rstrip("0123456789") + "Backward0"
    return type(name, (KernelBackward,), {"__slots__": ()}), op.edges.index(
        op.inputs.index(reads))


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
