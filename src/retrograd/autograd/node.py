"""Graph nodes: the base Node, op nodes, AccumulateGrad and saved tensors.

A node holds edges to the nodes of its inputs (``next_functions``), what its
op saved, and the input shapes/dtypes the engine reduces gradients to. Nodes
never point back at their outputs: an op's own output is saved as its array
and version counter and rebuilt on unpack, so graphs free by reference
counting alone.
"""

import itertools
import sys
import threading
import weakref

import numpy

from .. import _observe
from .._hooks import RemovableHandle, add_hook
from .._dtype import LEGACY_NAMES, LOW, OPMATH, opmath_arrays
from .._memory_format import is_dense
from .._tensor import Tensor, wrap
from ..backend import check_writeable, get_array_module, host_array_module, writeable
from ..backend.functions import facade, functions
from . import grad_mode
from ._batched import rule_namespace, state as _batching, unbatch
from ._batched_loop import NO_RULE, per_element, top_batch
from ._forward_state import state as _fw_state

__all__ = ["Node", "OpNode", "AccumulateGrad", "SavedTensor", "RemovableHandle", "DelayedError",
           "KernelBackward", "new_node", "save", "set_saved_hooks"]

_ndarray = numpy.ndarray  # (NumPy's module has a __getattr__: its attributes load slowly)

_seq = itertools.count()
# Nodes PyTorch writes by hand in C++: their name() carries the namespace.
_HANDWRITTEN = frozenset(("AccumulateGrad", "CopySlices", "CopyBackwards", "GraphRoot", "Error",
                          "DelayedError", "UndefinedGradBackward"))
_ACC_SEQ = sys.maxsize  # AccumulateGrad runs as soon as it is ready, as in PyTorch


class _SavedHooks(threading.local):
    stack = ()  # (pack, unpack) pairs of the active saved_tensors_hooks, innermost last


saved_hooks = _SavedHooks()
# How many threads have saved-tensor hooks active: ``save`` reads this plain global, and
# the slower thread-local stack only when it is nonzero (as ``_grad_state`` counts the
# threads in inference mode).
hooked_threads = 0
_hooks_lock = threading.Lock()


def set_saved_hooks(stack):
    """Set this thread's stack of (pack, unpack) pairs, keeping the count of threads that
    have one."""
    global hooked_threads
    if bool(stack) != bool(saved_hooks.stack):
        with _hooks_lock:
            hooked_threads += 1 if stack else -1
    saved_hooks.stack = stack

# allow_mutation_on_saved_tensors's callback, run with a tensor about to be written in place.
on_inplace_write = [None]


def current_hooks():
    """The innermost (pack, unpack) pair, or None."""
    s = saved_hooks.stack
    return s[-1] if s else None


class _NodeExtra:
    """What few nodes carry (hooks, metadata, anomaly traces): made on first use, so a
    node costs three attribute stores and the engine one check."""

    __slots__ = ("pre_hooks", "post_hooks", "tensor_pre_hooks", "retains_grad_hooks",
                 "metadata", "anomaly")

    def __init__(self):
        self.pre_hooks = self.post_hooks = self.tensor_pre_hooks = None
        self.retains_grad_hooks = self.metadata = self.anomaly = None


def _extra_attr(name):
    def get(self):
        e = self._extra
        return None if e is None else getattr(e, name)

    def set(self, value):
        e = self._extra
        if e is None:
            if value is None:
                return
            e = self._extra = _NodeExtra()
        setattr(e, name, value)
    return property(get, set)


class Node:
    """Base of every grad_fn (``torch.autograd.graph.Node``)."""

    # While memory accounting is on: _mpath, the path of the nn.Module whose forward made
    # the node; _mstack, the forward stack when history records stacks (else empty)
    __slots__ = ("next_functions", "_seq", "_extra", "_mpath", "_mstack", "__weakref__")
    # Whether apply returns only arrays it made or its input gradients (and views of
    # them), as the library's rules do; a user's backward may return arrays it keeps.
    # The engine lets AccumulateGrad steal only gradients such nodes made.
    _fresh_grads = False
    # Metadata of each output, for a node with several (whose number sizes the engine's
    # buffer of its gradients); None for one. A slot in the classes that set it.
    _out_meta = None

    def __new__(cls, *args, **kwargs):
        return new_node(cls)

    _pre_hooks = _extra_attr("pre_hooks")
    _post_hooks = _extra_attr("post_hooks")
    _tensor_pre_hooks = _extra_attr("tensor_pre_hooks")
    _retains_grad_hooks = _extra_attr("retains_grad_hooks")
    _metadata = _extra_attr("metadata")
    _anomaly = _extra_attr("anomaly")

    def name(self):
        n = type(self).__name__
        return "torch::autograd::" + n if n in _HANDWRITTEN else n

    def __repr__(self):
        return f"<{type(self).__name__} object at {hex(id(self))}>"

    @property
    def metadata(self):
        if self._metadata is None:
            self._metadata = {}
        return self._metadata

    @property
    def requires_grad(self):
        return True

    def register_hook(self, fn):
        """``fn(grad_inputs, grad_outputs)`` runs after the node; may return new grad_inputs."""
        self._post_hooks, h = add_hook(self._post_hooks, fn)
        return h

    def register_prehook(self, fn):
        """``fn(grad_outputs)`` runs before the node; may return new grad_outputs."""
        self._pre_hooks, h = add_hook(self._pre_hooks, fn)
        return h

    def _register_tensor_prehook(self, output_nr, fn):
        """A hook of the tensor that is output ``output_nr``. As in PyTorch, the hooks of
        the output that got one first run first, each output's in registration order."""
        if self._tensor_pre_hooks is None:
            self._tensor_pre_hooks = {}
        d, h = add_hook(self._tensor_pre_hooks.get(output_nr), fn)
        self._tensor_pre_hooks[output_nr] = d
        return h

    def _sequence_nr(self):
        return self._seq

    def apply(self, grads, create_graph):  # pragma: no cover - every subclass overrides
        raise NotImplementedError

    def release(self):
        """Drop what the node saved (after it ran without retain_graph)."""

    def __call__(self, *grads):
        """Run the node on gradients, as PyTorch's ``grad_fn(*grads)``."""
        create = grad_mode.state.enabled
        vals = [g if create else (g._data if g is not None else None) for g in grads]
        out = self.apply(vals, create)
        res = tuple(None if g is None else (g if create else wrap(g)) for g in out)
        return res if len(res) != 1 else res[0]


_new = object.__new__


def new_node(cls, next_functions=()):
    """A new node of class ``cls`` (``cls()`` without its arguments) with its edges: ops
    call this directly, which skips the type call's slow path into a Python ``__new__``."""
    self = _new(cls)
    self._seq = next(_seq)
    self._extra = None
    self.next_functions = next_functions
    obs = _observe.engine
    if obs is not None and obs.nodes:  # anomaly mode, memory accounting
        obs.node_created(self)
    return self


_FREED = ("Trying to backward through the graph a second time (or directly access saved "
          "tensors after they have already been freed). Saved intermediate values of the "
          "graph are freed when you call .backward() or autograd.grad(). Specify "
          "retain_graph=True if you need to backward through the graph a second time or if "
          "you need to access saved tensors after calling backward.")


_NOT_PACKED = object()  # SavedTensor._packed when no saved-tensor hooks were active


class DelayedError(Node):
    """A node that raises ``msg`` when the engine reaches it: on gradients whose own
    differentiation would be wrong (``once_differentiable``, some double backwards)."""

    def __init__(self, msg):
        self._msg = msg

    def name(self):
        return "torch::autograd::DelayedError"

    def apply(self, grads, create_graph):
        raise RuntimeError(self._msg)


class SavedTensor:
    """PyTorch's SavedVariable: a saved tensor, its version, and pack/unpack hooks.

    An op's own output is kept as (array, version counter) and rebuilt with its
    grad_fn on unpack, so the node does not own a tensor that owns the node.
    With saved-tensor hooks, what ``unpack_hook`` returns gets the saved
    tensor's autograd history back (its grad_fn, or its leaf's AccumulateGrad).
    """

    __slots__ = ("_tensor", "_data", "_vc", "_version", "_output_nr", "_packed", "_unpack",
                 "_requires_grad", "_is_output", "_history", "_node", "_mhold",
                 "__weakref__")  # _mhold: memory accounting's hold (set only then)

    def __new__(cls, t, is_output):
        return save(t, is_output)

    def _pack(self, t, pack, unpack):
        """Store ``pack(t)`` (run under no_grad, as PyTorch does) instead of ``t``."""
        self._unpack = unpack
        self._tensor = self._data = None
        self._history = None if self._is_output or not t._requires_grad else (
            t._grad_fn if t._grad_fn is not None else grad_accumulator(t))
        prev = grad_mode.state.enabled
        grad_mode.state.enabled = False
        try:
            self._packed = pack(t)
        finally:
            grad_mode.state.enabled = prev

    def register_hooks(self, pack_hook, unpack_hook):
        """Pack this saved tensor now with ``pack_hook``; ``unpack_hook`` rebuilds it in
        backward (PyTorch's ``SavedTensor.register_hooks``: one pair, before it is freed)."""
        if not callable(pack_hook) or not callable(unpack_hook):
            raise TypeError("register_hooks(): incompatible function arguments: pack_hook and "
                            "unpack_hook must be callables")
        if getattr(self, "_history", None) is _WRAPPED:
            raise NotImplementedError("register_hooks on a number saved for a tensor operand "
                                      "(x * 0.5's other) is not supported: the node keeps the "
                                      "number itself")
        ref = getattr(self, "_node", None)  # set when _raw_saved_<name> handed this out
        node = ref() if ref is not None else None
        if node is None or not node._saved or all(s is not self for s in node._saved):
            raise RuntimeError(
                "Calling register_hooks on a saved tensor after it has been freed. Saved "
                "intermediate values of the graph are freed when you call .backward() or "
                "autograd.grad(). Specify retain_graph=True if you need to backward through "
                "the graph a second time or if you need to access saved variables after "
                "calling backward.")
        if self._packed is not _NOT_PACKED:
            raise RuntimeError("Calling register_hooks on a saved tensor whose hooks have "
                               "already been set. Hint: only one pair of hooks is allowed at a "
                               "time.")
        self._pack(self.unpack(node), pack_hook, unpack_hook)

    def unpack(self, node):
        """The saved tensor; ``node`` becomes the grad_fn of a saved output."""
        if self._packed is not _NOT_PACKED:
            u = self._unpack(self._packed)
            if not isinstance(u, Tensor):
                raise TypeError(f"Output of saved tensor unpack_hook expected to be a Tensor "
                                f"but got result of type {type(u).__name__}")
            t = wrap(u._data)
            t._vc = u._vc
            if self._requires_grad:
                t._requires_grad, t._output_nr = True, self._output_nr
                h = node if self._is_output else self._history
                if type(h) is AccumulateGrad:
                    t._acc = weakref.ref(h)  # gradients reach the saved leaf
                else:
                    t._grad_fn = h
            return t
        if self._vc[0] != self._version:
            raise RuntimeError(_version_error(self, node))
        if self._tensor is not None:
            return self._tensor
        t = wrap(self._data)
        t._vc = self._vc
        # A saved output has its history and tangent back; a non-differentiable one (nll's
        # total_weight, batch norm's statistics) has none, as it had none when saved.
        if self._requires_grad:
            t._grad_fn, t._output_nr, t._requires_grad = node, self._output_nr, True
            if _fw_state.level is not None:  # (forward-over-reverse)
                t._fw = _fw_state.output_tangents.get((node, self._output_nr))
        return t

    def unpack_data(self, node):
        """The saved array (plain backward), checking the version like unpack."""
        if self._packed is _NOT_PACKED:
            if self._vc[0] != self._version:
                raise RuntimeError(_version_error(self, node))
            return self._tensor._data if self._tensor is not None else self._data
        return self.unpack(node)._data

    def __repr__(self):
        return "<retrograd SavedTensor>"


def save(t, is_output):
    """``SavedTensor(t, is_output)``: ``t`` (an op's own output when ``is_output``) saved
    for backward. The registry calls this directly, which skips the type call's slow path
    into a Python ``__new__`` (as :func:`new_node` does for nodes)."""
    self = _new(SavedTensor)
    self._vc = t._vc
    self._version = t._vc[0]
    self._is_output = is_output
    self._output_nr = t._output_nr
    self._requires_grad = t._requires_grad
    hooks = saved_hooks.stack if hooked_threads else ()
    if hooks:
        self._pack(t, *hooks[-1])
    elif is_output:
        self._tensor, self._data, self._packed = None, t._data, _NOT_PACKED
    else:
        self._tensor, self._data, self._packed = t, None, _NOT_PACKED
    if _observe.alloc is not None:  # the storage is now held by the graph
        _observe.alloc.saved(self)
    return self


def _version_error(saved, node):
    """PyTorch's message. It names the history of the saved tensor: the saving node for
    an op's own output, else the tensor's grad_fn now (after the in-place write)."""
    t = saved._tensor
    data = t._data if t is not None else saved._data
    fn, nr = (node, saved._output_nr) if t is None else (t.grad_fn, t._output_nr)
    where = f", which is output {nr} of {_forward_name(fn.name())}," if fn is not None else ""
    return (f"one of the variables needed for gradient computation has been modified by an "
            f"inplace operation: [torch.{LEGACY_NAMES[data.dtype.name]} {list(data.shape)}]"
            f"{where} is at version {saved._vc[0]}; expected version {saved._version} "
            f"instead. Hint: enable anomaly detection to find the operation that failed to "
            f"compute its gradient, with torch.autograd.set_detect_anomaly(True, "
            f"check_nan=False).")


def _forward_name(name):
    """How PyTorch's message names a node: ``ExpBackward0`` -> ``Exp``, ``PowBackward1``
    -> ``Pow1``."""
    return name[:-9] if name.endswith("Backward0") else name.replace("Backward", "")


def grad_accumulator(t):
    """The one AccumulateGrad node of a leaf; held weakly by the leaf, strongly by graphs.
    Made under a lock: two threads recording on one leaf must share its node (and so
    its accumulation lock)."""
    acc = _live(t._acc)
    if acc is None:
        with _new_acc_lock:
            acc = _live(t._acc)
            if acc is None:
                acc = AccumulateGrad(t)
                t._acc = weakref.ref(acc)
    return acc


def _live(ref):
    return ref() if ref is not None else None


_new_acc_lock = threading.Lock()


def collect_next(values, input_names):
    """Edges to the inputs' histories, and which inputs need a gradient."""
    nexts, needs = [], []
    for v in values:
        if isinstance(v, Tensor) and v._requires_grad:
            fn = v._grad_fn
            nexts.append((fn, v._output_nr) if fn is not None else (grad_accumulator(v), 0))
            needs.append(True)
        else:
            nexts.append((None, 0))
            needs.append(False)
    return tuple(nexts), needs


def _saved_arrays(node, env):
    """Append what ``node`` saved to ``env``, tensors as their (version-checked) arrays: a
    plain backward's view of the saved values. (``OpNode.apply`` calls it as a function:
    a method load on nodes of many classes is never specialized.)"""
    saved = node._saved
    if saved is None:
        raise RuntimeError(_FREED)
    for s in saved:
        if type(s) is not SavedTensor:
            env.append(s)
        elif s._packed is _NOT_PACKED and s._vc[0] == s._version:
            t = s._tensor
            env.append(t._data if t is not None else s._data)
        else:
            env.append(s.unpack_data(node))


class OpNode(Node):
    """The node of an op declared with ``defop``; subclasses carry ``_op``."""

    __slots__ = ("_saved", "_attrs", "_shapes", "_dtypes", "_out_meta", "_strides")
    _op = None
    _fresh_grads = True  # a vjp is linear in the gradient: it never returns a saved array
    _saved_arrays = _saved_arrays

    def release(self):
        if self._saved:
            self._saved = None

    def apply(self, grads, create_graph):
        """Gradients for each input from the output gradients (arrays, or Tensors when
        create_graph), reduced to each input's shape and cast to its dtype."""
        op = self._op
        g = grads[0]
        if create_graph:  # the facade for the gradients' device
            xp = facade(g if g is not None else next((x for x in grads if x is not None), None))
        elif type(g) is _ndarray:
            xp = numpy
        else:  # a device's gradients, or the first is missing
            xp = get_array_module(next((x for x in grads if x is not None), g))
        if op._has_grads:
            all_grads = self._materialize(grads, xp)
        else:
            all_grads = None
            if g is None:
                g = self._materialize(grads, xp)[0]
        env = [g, all_grads, xp]
        if op.saved_names:
            if create_graph:
                saved = self._saved
                if saved is None:
                    raise RuntimeError(_FREED)
                env += [s.unpack(self) if type(s) is SavedTensor else s for s in saved]
            else:
                _saved_arrays(self, env)
        if _batching.top and not create_graph:  # under vmap: values batched deeper?
            xp, env[0], env[1] = rule_namespace(xp, g, all_grads, (env[3:], self._attrs))
            env[2] = xp
        shapes, dtypes = self._shapes, self._dtypes
        if op.upcast_rules and not LOW.isdisjoint(dtypes):
            env = _opmath_env(env, create_graph)
        env += self._attrs
        env += shapes
        if op.wants_strides:
            env += self._strides
        nexts = self.next_functions
        if op._joint:
            self._joint_grads(env, [fn is not None for fn, _ in nexts], True)
        out = []
        for k, i, rule in op._edge_rules:
            if nexts[k][0] is None:
                out.append(None)
                continue
            try:
                # (Rules of up to three arguments are called directly: in CPython 3.11 a
                # call with * arguments is a C-level call, some 500 instructions more.)
                args = rule[2](env)
                if rule[3]:
                    gi = rule[0](args)
                elif len(args) == 2:
                    gi = rule[0](args[0], args[1])
                elif len(args) == 3:
                    gi = rule[0](args[0], args[1], args[2])
                else:
                    gi = rule[0](*args)
            except NO_RULE as e:
                gi = self._per_element(rule, env, e)
            if gi is not None:
                if type(gi) is not _ndarray and not create_graph:  # under vmap
                    gi = unbatch(gi, shapes[i])
                if gi.shape != shapes[i]:
                    gi = sum_to(xp, gi, shapes[i])
                if create_graph:
                    if gi._data.dtype != dtypes[i]:
                        gi = xp.astype(gi, dtypes[i])
                    if op.kernel_backward is not None and op.kernel_backward[1] == k:
                        gi = _through_kernel(op.kernel_backward, self, gi)
                elif gi.dtype != dtypes[i]:
                    gi = gi.astype(dtypes[i], copy=False)
            out.append(gi)
        return out

    def _joint_grads(self, env, live, per_element):
        """Append to ``env`` the gradients of each of the op's joint vjp rules (see
        ``ops._opdef``), computed once for those of its inputs whose edge is ``live``
        (None when none is); under vmap, element by element where a rule cannot batch
        (``per_element``; else its error stands)."""
        op = self._op
        if not op.wants_strides:
            env += (None,) * len(op.inputs)  # (the joint gradients' places come after)
        for (fn, _, getter, one), edges in op._joint:
            mask = tuple(live[k] for k in edges)
            if not any(mask):
                env.append(None)
                continue

            def run(*args, fn=fn, mask=mask):
                return fn(*args, mask)
            rule = (run, None, getter, one)
            args = getter(env)
            try:
                env.append(run(args) if one else run(*args))
            except NO_RULE as e:
                if not per_element:
                    raise
                env.append(self._per_element(rule, env, e))

    def _per_element(self, rule, env, error):
        """A vjp rule that cannot run on batched arrays (under vmap): once per element."""
        top = top_batch(env)
        if top is None:
            raise error

        def run(*row):
            return rule[0](rule[2](row)) if rule[3] else rule[0](*rule[2](row))
        return per_element(self.name(), run, env, *top)

    def _materialize(self, grads, xp):
        """Zeros for outputs that received no gradient (multi-output ops)."""
        meta = self._out_meta
        if meta is None:
            return grads
        return [g if g is not None else xp.zeros(meta[i][0], dtype=meta[i][1])
                for i, g in enumerate(grads)]

    def __init_subclass__(cls, **kwargs):
        """An op's node class gets PyTorch's ``_saved_<name>`` and ``_raw_saved_<name>`` as
        properties, not from a ``__getattr__``: CPython specializes attribute reads only for
        classes without one, and the engine reads node attributes on every step."""
        super().__init_subclass__(**kwargs)
        op = cls.__dict__.get("_op")
        if op is None:
            return
        for key in (*op.attrs, *(f"{n}_sym_sizes" for n in op.inputs), *op.saved_names):
            setattr(cls, "_saved_" + key, _saved_property(key, False))
            setattr(cls, "_raw_saved_" + key, _saved_property(key, True))

    def _lookup_saved(self, key, raw):
        op = type(self)._op
        if key in op.attrs:
            return self._attrs[op.attrs.index(key)]
        if key.endswith("_sym_sizes") and key[:-10] in op.inputs:
            return self._shapes[op.inputs.index(key[:-10])]
        saved = self._saved
        if saved is None:
            raise RuntimeError(_FREED)
        s = saved[op.saved_names.index(key)]
        if type(s) in _NUMBER_TYPES and _tensor_operand(op, key):
            # a number given for a tensor operand (x * 0.5): PyTorch saved it as a 0-d
            # tensor (a "wrapped number", float64 for a float), and shows that
            s = _wrapped_number(s)
        if type(s) is not SavedTensor:
            return s
        if raw:
            s._node = weakref.ref(self)  # lets register_hooks tell whether it was freed
            return s
        return s.unpack(self)

    def __dir__(self):
        """As PyTorch lists them: ``_saved_<name>`` for what the node saved, and
        ``_raw_saved_<name>`` for the saved tensors (not for saved numbers)."""
        op = type(self)._op
        names = {n for n in super().__dir__() if not n.startswith(("_saved", "_raw_saved_"))}
        for k in (*op.saved_names, *op.attrs):
            names.add("_saved_" + k)
            if k in op.outputs or k in op.inputs and (
                    self._shapes[op.inputs.index(k)] is not None or _tensor_operand(op, k)):
                names.add("_raw_saved_" + k)
        return sorted(names)


_NUMBER_TYPES = frozenset((bool, int, float, complex))


def _tensor_operand(op, name):
    """Whether input ``name`` of ``op`` is a Tensor in PyTorch's schema (a graph edge), not
    a Scalar (pow's exponent, clamp's bounds)."""
    return name in op.inputs and op.inputs.index(name) in op.edges


def _wrapped_number(value):
    """A number saved for a tensor operand, as PyTorch's saved variable: a SavedTensor of a
    0-d tensor of the number's default dtype (bool, int64, float64, complex128)."""
    t = wrap(host_array_module().asarray(value))  # (PyTorch keeps it on the host)
    saved = _new(SavedTensor)
    saved._vc, saved._version, saved._is_output, saved._output_nr = t._vc, 0, False, 0
    saved._requires_grad = False
    saved._tensor, saved._data, saved._packed = t, None, _NOT_PACKED
    saved._history = _WRAPPED
    return saved


_WRAPPED = object()  # SavedTensor._history of a wrapped number's (see register_hooks)


def _saved_property(key, raw):
    return property(lambda self: self._lookup_saved(key, raw))


def _opmath_env(env, create_graph):
    """The gradients and saved tensors of a rule's ``env`` in their compute dtype (as the
    forward ran, see ``_dtype.OPMATH``); the caller rounds each input's gradient once."""
    g, grads, xp, *saved = env
    flat = [g, *(grads or ()), *saved]
    if create_graph:  # Tensors: a differentiable cast
        flat = [xp.astype(t, OPMATH[t._data.dtype]) if t is not None and hasattr(t, "_data")
                and t._data.dtype in OPMATH else t for t in flat]
    else:
        up = opmath_arrays(flat)
        if up is None:
            return env
        flat = up[0]
    n = 1 + len(grads or ())
    return [flat[0], flat[1:n] if grads is not None else None, xp, *flat[n:]]


class KernelBackward(Node):
    """The node of PyTorch's backward kernel for an op (``threshold_backward`` for relu),
    made under ``create_graph`` where derivatives.yaml gives that kernel a zero derivative
    for the tensor it reads besides the gradient (``self: zeros_like(grad)``). Edge 0
    continues the history the op's rule built (the kernel is linear in the gradient), edge
    1 leads to the op's input's history and takes zeros: the input gradient so requires
    grad as PyTorch's does, and a second backward through it gives zeros. (Edge 1 is the
    input's edge even where PyTorch's kernel reads the op's result, as relu's: the op's own
    node may be run by a view's CopySlices after an in-place op, never twice.) One
    subclass per op, named as PyTorch's (``ThresholdBackwardBackward0``)."""

    __slots__ = ()

    def apply(self, grads, create_graph):
        g = grads[0]
        if g is None:
            return [None, None]
        xp = facade(g) if create_graph else get_array_module(g)
        return [g, xp.zeros_like(g)]


def _through_kernel(kernel, node, gi):
    """``gi`` (a Tensor), the gradient of the input that the op's backward kernel reads, as
    that kernel's output (:class:`KernelBackward`): ``kernel`` is (its node class, the
    input's edge). A forward-mode tangent of ``gi`` is the output's (the kernel is the
    identity on the gradient)."""
    cls, k = kernel
    read = node.next_functions[k]
    if read[0] is None and not gi._requires_grad:
        return gi
    out = gi.detach()
    out._grad_fn = new_node(cls, (collect_next((gi,), None)[0][0], read))
    out._requires_grad = True
    out._fw = gi._fw
    return out


class AccumulateGrad(Node):
    """Adds incoming gradients into a leaf's ``.grad`` (the seed's layout rules), then runs
    the leaf's post-accumulate-grad hooks (also for a missing gradient, as PyTorch does).

    Backward passes running in several threads share this node, and PyTorch promises
    that they accumulate exactly: its lock (PyTorch's mutex) makes each read-add-write
    of ``.grad`` whole, since NumPy's in-place add releases the GIL. The hooks run
    outside it, as in PyTorch, so a hook may itself run a backward into this leaf."""

    __slots__ = ("variable", "_lock")

    def __new__(cls, variable):
        self = Node.__new__(cls)
        self._seq = _ACC_SEQ
        self.variable = variable
        self._lock = threading.Lock()
        return self

    def apply(self, grads, create_graph, owned=False):
        """``owned``: the engine holds the only reference to ``grads[0]``, which may then
        become ``.grad`` without a copy (never true for a gradient a user or hook saw)."""
        if grads[0] is not None:
            with self._lock:
                accumulate(self.variable, grads[0], create_graph, owned)
        hooks = self.variable._post_acc_hooks
        if hooks:
            for hook in list(hooks.values()):
                hook(self.variable)
        return ()


def accumulate(var, g, create_graph, owned=False):
    """``var.grad += g`` following PyTorch's default gradient layouts: a new ``.grad`` is
    laid out like ``var``; an existing one is added into in place (keeping its layout)
    unless ``create_graph``, which replaces it by ``.grad + g`` with its graph."""
    if isinstance(g, Tensor) and not create_graph:
        g = g._data
    old = var._grad
    if old is None:
        if create_graph:  # as PyTorch's new_empty_strided(...).copy_(g): CopyBackwards
            var._grad = wrap(_grad_layout(var._data)).copy_(g)
        else:
            var._grad = wrap(_new_grad_array(var._data, g, owned))
    elif create_graph:
        var._grad = old + g
    else:
        check_writeable(old._data, "a .grad added into")
        old._data += g
        old._vc[0] += 1
        return
    if _observe.alloc is not None:  # a new .grad storage
        _observe.alloc.role(var._grad._data, _observe.GRADIENT)


def _new_grad_array(param, g, owned):
    """A fresh ``.grad`` array laid out like ``param``; ``g`` itself when it is ``owned``
    and already has that layout: all of its memory (a transposed matmul result is a view
    covering all of its base), writeable, with ``param``'s strides."""
    if owned and type(g) is type(param) and writeable(g) and g.strides == param.strides:
        base = g.base
        if base is None or (type(base) is type(param) and base.base is None
                            and base.nbytes == g.nbytes):
            return g
    out = _grad_layout(param)
    out[...] = g
    return out


def _grad_layout(param):
    """An empty array with ``param``'s strides if it is dense, else row-major."""
    if param.flags.c_contiguous or param.flags.f_contiguous or not is_dense(param):
        order = "F" if param.flags.f_contiguous and not param.flags.c_contiguous else "C"
        return get_array_module(param).empty(param.shape, dtype=param.dtype, order=order)
    return get_array_module(param).empty_like(param)  # K order: keeps a dense param's strides


def sum_to(xp, g, shape):
    """Sum ``g`` over the axes broadcasting added or stretched, giving ``shape``: the one
    place gradients are reduced back to an input's shape (on arrays, or on the facade's
    Tensors)."""
    lead = g.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, n in enumerate(shape) if n == 1 and g.shape[lead + i] != 1)
    if axes:
        g = sum_acc(xp, g, axis=axes, keepdims=True)
    if lead or tuple(g.shape) != tuple(shape):
        g = g.reshape(shape)  # (the method: numpy.reshape's wrappers run cold in a step)
    return g


def sum_acc(xp, g, axis=None, keepdims=False):
    """``xp.sum`` as PyTorch's sum: float16 and bfloat16 arrays accumulate in float32 and
    round once (NumPy's half and ml_dtypes' bfloat16 sums stall: 2048, 256)."""
    up = OPMATH.get(g.dtype)
    if up is None:
        if keepdims and isinstance(axis, tuple):
            return functions(xp).sum_kept(g, axis)
        return xp.sum(g, axis=axis, keepdims=keepdims)
    return xp.astype(xp.sum(g, axis=axis, keepdims=keepdims, dtype=up), g.dtype)
