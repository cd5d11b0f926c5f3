"""The batched backward walk: ``autograd.grad(..., is_grads_batched=True)``.

The graph is walked once with cotangents that carry a leading batch dim, each node
running its rules once on the whole batch of :class:`~._batched.Batched` gradients
(see ``_batched``). Nodes of custom ``autograd.Function`` classes (Python backward code
on Tensors) and AccumulateGrad cannot run batched; batched backward runs no hooks.
Nodes other than op nodes (views rewritten in place, list ops) carry their batched form
as a ``_batched_apply(walk, grads)`` method, so this walk knows no op family.
"""

from ..backend import get_array_module, writeable
from ..backend.functions import facade
from . import grad_mode
from ._batched import Batched
from ._batched_loop import NO_RULE
from ._batched_xp import BatchedNumpy
from .engine import _dependencies, _exec_plan, _pop, _push, _root_edge, run_backward
from .node import AccumulateGrad, DelayedError, KernelBackward, OpNode, sum_to

__all__ = ["batched_grad"]


def _rows(outputs, inputs, grad_outputs, retain_graph, batch):
    """``create_graph`` with a batch of cotangents: the batched walk runs rules on arrays,
    a graph of the gradients needs them run on Tensors, so this is one differentiable
    backward per row, stacked (not vectorized)."""
    per = []
    for b in range(batch):
        per.append(run_backward(outputs, [g[b] for g in grad_outputs],
                                retain_graph or b < batch - 1, True, inputs=inputs,
                                accumulate_into=False))
    return [None if per[0][i] is None else facade(per[0][i]).stack([p[i] for p in per])
            for i in range(len(inputs))]


def batched_grad(outputs, inputs, grad_outputs, retain_graph, create_graph):
    """Gradients of ``outputs`` w.r.t. ``inputs`` for a batch of cotangents (leading dim
    of each ``grad_outputs`` entry): the graph is walked once, each node run once on the
    batch. Returns one batched gradient array (or None) per input; with ``create_graph``
    differentiable Tensors (see :func:`_rows`)."""
    batch = None
    for o, g in zip(outputs, grad_outputs, strict=True):
        if g is None:
            raise RuntimeError("is_grads_batched=True needs a grad_output for every output")
        s = g._data.shape
        if batch is None:
            batch = s[0]
        if s[0] != batch or s[1:] != o._data.shape:
            raise RuntimeError(f"If `is_grads_batched=True`, we interpret the first dimension "
                               f"of each grad_output as the batch dimension. The sizes of the "
                               f"remaining dimensions are expected to match the shape of "
                               f"corresponding output, but a mismatch was detected: "
                               f"grad_output has a shape of {list(s)} and output has a shape of "
                               f"{list(o._data.shape)}.")
    if create_graph:
        return _rows(outputs, inputs, grad_outputs, retain_graph, batch)
    root_edges = [_root_edge(t, i) for i, t in enumerate(outputs)]
    pending = {}
    for fn, _ in root_edges:
        pending[fn] = pending.get(fn, 0) + 1
    deps, reachable = _dependencies(pending)
    run, captures = _exec_plan(inputs, False, pending, reachable)
    captured = [None] * len(inputs)
    buffers, heap = {}, []
    for (fn, nr), g, o in zip(root_edges, grad_outputs, outputs, strict=True):
        buf = buffers.setdefault(fn, [None] * _n_outputs(fn))
        arr = g._data
        if arr.dtype != o._data.dtype:
            arr = arr.astype(o._data.dtype)
        buf[nr] = arr if buf[nr] is None else buf[nr] + arr
        pending[fn] -= 1
        if not pending[fn] and fn not in deps:
            _push(heap, (fn._seq, fn))
    walk = _Walk(batch, run, captures, get_array_module(grad_outputs[0]._data))
    prev = grad_mode.state.enabled
    grad_mode.state.enabled = False
    try:
        while heap:
            node = _pop(heap)[1]
            buf = buffers.pop(node)
            for nr, k in captures.get(node, ()):
                captured[k] = _owned(buf[nr])
            if node not in run:
                continue
            outs = walk.apply(node, buf)
            if not retain_graph:
                node.release()
            for (nxt, nr), g in zip(node.next_functions, outs, strict=True):
                if nxt is None or nxt not in run and nxt not in captures:
                    continue
                b = buffers.setdefault(nxt, [None] * _n_outputs(nxt))
                if g is not None:
                    b[nr] = g if b[nr] is None else b[nr] + g
                deps[nxt] -= 1
                if not deps[nxt]:
                    _push(heap, (nxt._seq, nxt))
    finally:
        grad_mode.state.enabled = prev
    return captured


def _n_outputs(node):
    meta = getattr(node, "_out_meta", None)
    return len(meta) if meta else 1


def _owned(a):
    """A gradient handed to the caller: its own writable memory (not a broadcast view)."""
    if a is None or a.base is None and writeable(a):
        return a
    return get_array_module(a).array(a)


class _Walk:
    """Runs nodes on batched gradients (data arrays with the batch on axis 0, of array
    module ``arrays``)."""

    def __init__(self, batch, run, captures, arrays):
        self.batch, self.run, self.captures, self.arrays = batch, run, captures, arrays
        self.xp = BatchedNumpy(batch, 0, arrays)

    def needed(self, fn):
        return fn is not None and (fn in self.run or fn in self.captures)

    def apply(self, node, buf, every_edge=False):
        """The batched gradients of ``node``'s inputs (None where not needed)."""
        if all(g is None for g in buf):
            return [None] * len(node.next_functions)
        if isinstance(node, OpNode):
            return self._op(node, buf, every_edge)
        batched = getattr(node, "_batched_apply", None)
        if batched is not None:
            return batched(self, buf)
        if type(node) is AccumulateGrad:
            raise RuntimeError("is_grads_batched=True cannot accumulate into .grad")
        if getattr(node, "_forward_cls", None) is not None:  # a custom Function's node
            raise NotImplementedError(
                f"is_grads_batched=True: {node.name()} is the node of a custom "
                f"autograd.Function, whose backward is Python code on Tensors that retrograd "
                f"cannot run batched; compute the gradients one cotangent at a time instead")
        if isinstance(node, (DelayedError, KernelBackward)):  # (no rule: the arrays do)
            return node.apply(buf, False)
        raise NotImplementedError(f"is_grads_batched=True: {node.name()} cannot run batched")

    def grads(self, buf, meta):
        """``buf`` as :class:`Batched` gradients; with ``meta`` (the outputs' shapes and
        dtypes), zeros for the outputs that received none."""
        grads = [None if g is None else Batched(g) for g in buf]
        if meta is not None:
            grads = [g if g is not None else self.xp.zeros(m[0], dtype=m[1])
                     for g, m in zip(grads, meta, strict=True)]
        return grads

    def settle(self, g, shape, dtype):
        """A rule's result as batched data of the input's ``shape`` and ``dtype``."""
        if type(g) is not Batched:  # a result that does not depend on the gradient
            g = self.arrays.asarray(g)
            g = Batched(self.arrays.broadcast_to(g, (self.batch,) + g.shape))
        if g.shape != shape:
            g = sum_to(self.xp, g, shape)
        d = g.data
        return d if d.dtype == dtype else d.astype(dtype)

    def _op(self, node, buf, every_edge):
        """An op node: its vjp rules, run on :class:`Batched` gradients (see OpNode.apply)."""
        op = node._op
        grads = self.grads(buf, node._out_meta)
        env = [grads[0], grads, self.xp]
        if op.saved_names:
            node._saved_arrays(env)
        env += node._attrs
        env += node._shapes
        if op.wants_strides:
            env += node._strides
        live = [fn is not None if every_edge else self.needed(fn)
                for fn, _ in node.next_functions]
        if op._joint:
            try:
                node._joint_grads(env, live, False)
            except NO_RULE as e:
                raise _cannot_batch(node, e) from e
        out, env_b = [], None
        shapes, dtypes, rules = node._shapes, node._dtypes, op._rules
        for k, i in enumerate(op.edges):
            rule = rules[i]
            if rule is None or not live[k]:
                out.append(None)
                continue
            if op.batched is not None and op.batched[i] is not None:
                # the op's own batched rule: plain arrays, the batch on axis 0
                rule = op.batched[i]
                if env_b is None:
                    raw = [g.data for g in grads]
                    pad = () if op.wants_strides else (None,) * len(op.inputs)
                    env_b = [raw[0], raw, self.arrays, *env[3:], *pad, self.batch]
                gi = rule[0](rule[1](env_b)) if rule[2] else rule[0](*rule[1](env_b))
                out.append(self.settle(Batched(gi), shapes[i], dtypes[i]))
                continue
            try:
                gi = rule[0](rule[2](env)) if rule[3] else rule[0](*rule[2](env))
            except NO_RULE as e:  # no batching rule
                raise _cannot_batch(node, e) from e
            out.append(None if gi is None else self.settle(gi, shapes[i], dtypes[i]))
        return out


def _cannot_batch(node, error):
    return NotImplementedError(f"is_grads_batched=True: {node.name()} cannot run batched "
                               f"({error})")
