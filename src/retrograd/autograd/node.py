"""Graph nodes: the base Node, op nodes, AccumulateGrad and saved tensors.

A node holds edges to the nodes of its inputs (``next_functions``), what its
op saved, and the input shapes/dtypes the engine reduces gradients to. Nodes
never point back at their outputs: an op's own output is saved as its array
and version counter and rebuilt on unpack, so graphs free by reference
counting alone.
"""

import itertools
import sys
import weakref
from collections import OrderedDict

import numpy

from . import grad_mode

__all__ = ["Node", "OpNode", "AccumulateGrad", "SavedTensor", "RemovableHandle"]

_seq = itertools.count()
_ACC_SEQ = sys.maxsize  # AccumulateGrad runs as soon as it is ready, as in PyTorch


class RemovableHandle:
    """Returned by every ``register_*hook``; ``remove()`` is safe during backward."""

    __slots__ = ("_ref", "id")
    _ids = itertools.count()

    def __init__(self, hooks_dict):
        self._ref = weakref.ref(hooks_dict)
        self.id = next(RemovableHandle._ids)

    def remove(self):
        d = self._ref()
        if d is not None:
            d.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def _add_hook(d, fn):
    if d is None:
        d = OrderedDict()
    h = RemovableHandle(d)
    d[h.id] = fn
    return d, h


class Node:
    """Base of every grad_fn (``torch.autograd.graph.Node``)."""

    __slots__ = ("next_functions", "_seq", "_pre_hooks", "_post_hooks", "_tensor_pre_hooks",
                 "_retains_grad_hooks", "_metadata", "_anomaly", "__weakref__")

    def __new__(cls, *args, **kwargs):
        self = object.__new__(cls)
        self._seq = next(_seq)
        self._pre_hooks = self._post_hooks = None
        self._tensor_pre_hooks = self._retains_grad_hooks = None
        self._metadata = None
        self._anomaly = None
        self.next_functions = ()
        return self

    def name(self):
        return type(self).__name__

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
        self._post_hooks, h = _add_hook(self._post_hooks, fn)
        return h

    def register_prehook(self, fn):
        """``fn(grad_outputs)`` runs before the node; may return new grad_outputs."""
        self._pre_hooks, h = _add_hook(self._pre_hooks, fn)
        return h

    def _register_tensor_prehook(self, output_nr, fn):
        if self._tensor_pre_hooks is None:
            self._tensor_pre_hooks = {}
        d, h = _add_hook(self._tensor_pre_hooks.get(output_nr), fn)
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
        from .._tensor import wrap
        create = grad_mode.state.enabled
        vals = [g if create else (g._data if g is not None else None) for g in grads]
        out = self.apply(vals, create)
        res = tuple(None if g is None else (g if create else wrap(g)) for g in out)
        return res if len(res) != 1 else res[0]


_FREED = ("Trying to backward through the graph a second time (or directly access saved "
          "tensors after they have already been freed). Saved intermediate values of the "
          "graph are freed when you call .backward() or autograd.grad(). Specify "
          "retain_graph=True if you need to backward through the graph a second time or if "
          "you need to access saved tensors after calling backward.")


class SavedTensor:
    """PyTorch's SavedVariable: a saved tensor, its version, and pack/unpack hooks.

    An op's own output is kept as (array, version counter) and rebuilt with its
    grad_fn on unpack, so the node does not own a tensor that owns the node.
    """

    __slots__ = ("_tensor", "_data", "_vc", "_version", "_output_nr", "_packed", "_unpack",
                 "_requires_grad", "_is_output")

    def __init__(self, t, is_output):
        from . import graph
        self._vc = t._vc
        self._version = t._vc[0]
        self._is_output = is_output
        self._output_nr = t._output_nr
        self._requires_grad = t._requires_grad
        hooks = graph.current_hooks()
        if hooks is not None:
            pack, self._unpack = hooks
            self._tensor = self._data = None
            self._packed = pack(t)
        elif is_output:
            self._tensor, self._data, self._packed = None, t._data, None
        else:
            self._tensor, self._data, self._packed = t, None, None

    def unpack(self, node, op_name):
        """The saved tensor; ``node`` becomes the grad_fn of a saved output."""
        from .._tensor import Tensor, wrap
        if self._packed is not None:
            t = self._unpack(self._packed)
            if not isinstance(t, Tensor):
                raise TypeError(f"Output of saved tensor unpack_hook expected to be a Tensor "
                                f"but got result of type {type(t).__name__}")
            if self._is_output and t._grad_fn is None and self._requires_grad:
                t = wrap(t._data)
                t._grad_fn, t._output_nr, t._requires_grad = node, self._output_nr, True
            return t
        if self._vc[0] != self._version:
            raise RuntimeError(_version_error(self, node, op_name))
        if self._tensor is not None:
            return self._tensor
        t = wrap(self._data)
        t._vc = self._vc
        t._grad_fn, t._output_nr, t._requires_grad = node, self._output_nr, self._requires_grad
        return t

    def unpack_data(self, node, op_name):
        """The saved array (plain backward), checking the version like unpack."""
        if self._packed is None:
            if self._vc[0] != self._version:
                raise RuntimeError(_version_error(self, node, op_name))
            return self._tensor._data if self._tensor is not None else self._data
        return self.unpack(node, op_name)._data

    def __repr__(self):
        return "<retrograd SavedTensor>"


def _version_error(saved, node, op_name):
    data = saved._tensor._data if saved._tensor is not None else saved._data
    kind = {"float32": "Float", "float64": "Double", "float16": "Half"}.get(data.dtype.name,
                                                                          data.dtype.name)
    where = (f", which is output {saved._output_nr} of {node.name()}," if saved._is_output
             else "")
    return (f"one of the variables needed for gradient computation has been modified by an "
            f"inplace operation: [torch.{kind}Tensor {list(data.shape)}]{where} is at version "
            f"{saved._vc[0]}; expected version {saved._version} instead. Hint: the "
            f"operation {op_name} saved this tensor; enable anomaly detection with "
            f"torch.autograd.set_detect_anomaly(True) to find the forward call.")


def grad_accumulator(t):
    """The one AccumulateGrad node of a leaf; held weakly by the leaf, strongly by graphs."""
    ref = t._acc
    acc = ref() if ref is not None else None
    if acc is None:
        acc = AccumulateGrad(t)
        t._acc = weakref.ref(acc)
    return acc


def collect_next(values, input_names):
    """Edges to the inputs' histories, and which inputs need a gradient."""
    from .._tensor import Tensor
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


class OpNode(Node):
    """The node of an op declared with ``defop``; subclasses carry ``_op``."""

    __slots__ = ("_saved", "_attrs", "_shapes", "_dtypes", "_out_meta")
    _op = None

    def release(self):
        if self._saved:
            self._saved = None

    def _saved_values(self, create_graph):
        saved = self._saved
        if saved is None:
            raise RuntimeError(_FREED)
        name = self._op.name
        if create_graph:
            return [s.unpack(self, name) if type(s) is SavedTensor else s for s in saved]
        return [s.unpack_data(self, name) if type(s) is SavedTensor else s for s in saved]

    def apply(self, grads, create_graph):
        """Gradients for each input from the output gradients (arrays, or Tensors when
        create_graph), reduced to each input's shape and cast to its dtype."""
        op = self._op
        if create_graph:
            from ..ops import _tensor_xp as xp
        else:
            xp = numpy
        g = grads[0]
        if op._has_grads:
            all_grads = self._materialize(grads, xp)
        else:
            all_grads = None
            if g is None:
                g = self._materialize(grads, xp)[0]
        env = [g, all_grads, xp]
        if op.saved_names:
            env += self._saved_values(create_graph)
        env += self._attrs
        env += self._shapes
        out = []
        for (fn, nr), rule, shape, dt in zip(self.next_functions, op._rules, self._shapes,
                                             self._dtypes):
            if fn is None or rule is None:
                out.append(None)
                continue
            gi = rule[0](*[env[k] for k in rule[1]])
            if gi is not None:
                if gi.shape != shape:
                    gi = _sum_to(xp, gi, shape)
                if gi.dtype != dt:
                    gi = xp.astype(gi, dt) if create_graph else gi.astype(dt, copy=False)
            out.append(gi)
        return out

    def _materialize(self, grads, xp):
        """Zeros for outputs that received no gradient (multi-output ops)."""
        meta = self._out_meta
        if meta is None:
            return grads
        return [g if g is not None else xp.zeros(meta[i][0], dtype=meta[i][1])
                for i, g in enumerate(grads)]

    def __getattr__(self, name):
        op = type(self)._op
        for prefix, raw in (("_saved_", False), ("_raw_saved_", True)):
            if name.startswith(prefix):
                key = name[len(prefix):]
                return self._saved_attr(op, key, raw)
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def _saved_attr(self, op, key, raw):
        if key in op.attrs:
            return self._attrs[op.attrs.index(key)]
        if key.endswith("_sym_sizes") and key[:-10] in op.inputs:
            return self._shapes[op.inputs.index(key[:-10])]
        if key in op.saved_names:
            saved = self._saved
            if saved is None:
                raise RuntimeError(_FREED)
            s = saved[op.saved_names.index(key)]
            if type(s) is not SavedTensor:
                return s
            return s if raw else s.unpack(self, op.name)
        raise AttributeError(f"'{type(self).__name__}' object has no attribute "
                             f"'{'_raw_saved_' if raw else '_saved_'}{key}'")

    def __dir__(self):
        op = type(self)._op
        names = set(super().__dir__())
        for k in (*op.saved_names, *op.attrs):
            names.add("_saved_" + k)
            if k in op.saved_names:
                names.add("_raw_saved_" + k)
        return sorted(names)


def _sum_to(xp, g, shape):
    """Undo broadcasting: sum ``g`` down to ``shape``."""
    from ..ops._broadcast import sum_to
    return sum_to(xp, g, shape)


class AccumulateGrad(Node):
    """Adds incoming gradients into a leaf's ``.grad`` (the seed's layout rules)."""

    __slots__ = ("variable",)

    def __new__(cls, variable):
        self = Node.__new__(cls)
        self._seq = _ACC_SEQ
        self.variable = variable
        return self

    def apply(self, grads, create_graph):
        accumulate(self.variable, grads[0], create_graph)
        return ()


def accumulate(var, g, create_graph):
    """``var.grad += g`` following PyTorch's default gradient layouts."""
    from .._tensor import Tensor, wrap
    if isinstance(g, Tensor) and not create_graph:
        g = g._data
    old = var._grad
    if old is None:
        if create_graph:
            var._grad = g if isinstance(g, Tensor) else wrap(g)
        else:
            var._grad = wrap(_new_grad_array(var._data, g))
    elif create_graph:
        var._grad = old + g
    elif old._requires_grad:  # a graph-carrying .grad from an earlier create_graph
        var._grad = wrap((old._data + g).astype(old._data.dtype, copy=False))
    else:
        old._data += g
        old._vc[0] += 1


def _new_grad_array(param, g):
    """A fresh ``.grad`` array laid out like ``param``; steals ``g`` when nothing else holds it."""
    if (type(g) is numpy.ndarray and g.base is None and g.flags.writeable
            and g.strides == param.strides and sys.getrefcount(g) <= _STEAL_REFS):
        return g
    if param.flags.c_contiguous or param.flags.f_contiguous or not _dense(param):
        order = "F" if param.flags.f_contiguous and not param.flags.c_contiguous else "C"
        out = numpy.empty(param.shape, dtype=param.dtype, order=order)
    else:
        out = numpy.empty_like(param)  # K order: keeps a dense param's strides
    out[...] = g
    return out


# References to a gradient that is owned by nobody else when _new_grad_array sees it:
# the engine's local, accumulate's argument, _new_grad_array's argument, getrefcount's own.
_STEAL_REFS = 4


def _dense(a):
    """Non-overlapping and dense: some permutation of the axes is contiguous."""
    if a.size <= 1:
        return True
    dims = sorted((abs(s), n) for s, n in zip(a.strides, a.shape) if n != 1)
    expected = a.itemsize
    for s, n in dims:
        if s != expected:
            return False
        expected *= n
    return True
