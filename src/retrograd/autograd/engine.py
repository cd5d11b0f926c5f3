"""The backward engine: what PyTorch's C++ engine does, iteratively, in Python.

1. Count, for every node reachable from the roots, how many gradients it will
   receive (its dependencies).
2. Sum gradients arriving for a node in its input buffer; when its count
   reaches zero it is ready. Ready nodes run highest sequence number first
   (the reverse of creation order); AccumulateGrad runs as soon as it is ready.
3. Around each node: tensor pre-hooks, retains-grad hooks, node pre-hooks, the
   node, node post-hooks. Saved tensors are released right after the node runs
   unless ``retain_graph``; the node's input buffer dies when it is consumed.

With ``inputs`` only the nodes on a path to them run (PyTorch's ``exec_info``):
``backward(inputs=...)`` runs the inputs' nodes (a non-leaf input retains its
grad), ``grad()`` captures the gradient flowing into them instead.

Gradients are backend arrays in a plain backward and Tensors under
``create_graph`` (so the backward itself is recorded). A plain backward also knows
which gradients only it holds (``_ownership``): AccumulateGrad makes such a gradient
a leaf's ``.grad`` without a copy.

The engine observer (``retrograd._observe.engine``: memory accounting, anomaly
mode, the profiler) is shown each backward and each node it runs.
"""

import functools
import itertools
import threading

from .. import _observe
from .._dtype import LEGACY_NAMES
from ..backend import cpu_kernels, device_guard
from .._tensor import Tensor, _ndarray, wrap
from . import _collector, grad_mode
from ._batched import Batched
from ._ownership import Owners
from .node import AccumulateGrad, grad_accumulator

__all__ = ["run_backward", "GraphTask", "current_graph_task", "queue_callback"]


class GraphTask:
    """One running backward: its id and what it will execute (for multi-grad hooks, as
    PyTorch's ``_current_graph_task_id`` and ``_will_engine_execute_node``)."""

    __slots__ = ("id", "run", "captures", "reachable", "callbacks")
    _ids = itertools.count()

    def __init__(self, run, captures, reachable):
        self.id = next(GraphTask._ids)
        self.run, self.captures, self.reachable = run, captures, reachable
        self.callbacks = []  # queue_callback's, run once every node has run

    def will_execute(self, node):
        """Whether ``node`` runs (or captures a gradient) in this backward."""
        if self.run is None:
            return node in self.reachable
        return node in self.run or node in self.captures


class _Current(threading.local):
    task = None  # the GraphTask of the innermost backward running on this thread


_current = _Current()


def current_graph_task():
    """The GraphTask of the backward running on this thread, or None."""
    return _current.task


def queue_callback(callback):
    """Run ``callback()`` when the backward running on this thread has run every node
    (PyTorch's ``Variable._execution_engine.queue_callback``; DDP waits for its gradient
    reductions there)."""
    task = _current.task
    if task is None:
        raise RuntimeError("Final callbacks can only be installed during backward pass.")
    task.callbacks.append(callback)


def _root_edge(t, i):
    if isinstance(t, tuple):  # a GradientEdge
        return (t.node, t.output_nr)
    if t._grad_fn is not None or t._base is not None and t.grad_fn is not None:
        return (t._grad_fn, t._output_nr)
    if t._requires_grad:
        return (grad_accumulator(t), 0)
    raise RuntimeError(f"element {i} of tensors does not require grad and does not have a "
                       "grad_fn")


def _dependencies(roots):
    """For each node reachable from ``roots`` (a dict keyed by the root nodes): how many
    edges point at it; and the set of nodes reachable, roots included."""
    deps = {}
    stack = list(roots)
    while stack:
        for nxt, _ in stack.pop().next_functions:
            if nxt is not None:
                n = deps.get(nxt)
                if n is None:  # first seen (a root is walked from the start)
                    deps[nxt] = 1
                    if nxt not in roots:
                        stack.append(nxt)
                else:
                    deps[nxt] = n + 1
    return deps, roots.keys() | deps.keys()


def _should_execute(nodes, targets):
    """Nodes from which some target is reachable through next_functions (inclusive)."""
    memo = {}
    for start in nodes:
        if start in memo:
            continue
        stack = [(start, iter(start.next_functions))]
        memo[start] = start in targets
        while stack:
            node, it = stack[-1]
            for nxt, _ in it:
                if nxt is None:
                    continue
                if nxt not in memo:
                    memo[nxt] = nxt in targets
                    stack.append((nxt, iter(nxt.next_functions)))
                    break
                if memo[nxt]:
                    memo[node] = True
            else:
                stack.pop()
                if stack and memo[node]:
                    memo[stack[-1][0]] = True
    return memo


def _exec_plan(inputs, accumulate_into, root_nodes, reachable):
    """Which nodes run and which capture a gradient, for a call given ``inputs``.

    A node runs when it is an input's node of ``backward(inputs=...)`` or a path
    leads from it to a node that runs or captures (PyTorch's ``needed_``).
    """
    targets, captures = set(), {}
    for k, t in enumerate(inputs):
        if isinstance(t, tuple):  # a GradientEdge: its gradient is captured, never stored
            if not accumulate_into:
                captures.setdefault(t.node, []).append((t.output_nr, k))
            continue
        if accumulate_into:
            t.retain_grad()  # as PyTorch: raises for a leaf that does not require grad
        fn = t.grad_fn
        if fn is None:
            if not t._requires_grad:
                raise RuntimeError("One of the differentiated Tensors does not require grad")
            fn = grad_accumulator(t)
        if accumulate_into:
            targets.add(fn)
        else:
            captures.setdefault(fn, []).append((t._output_nr, k))
    should = _should_execute(root_nodes, targets | captures.keys())
    run = {n for n in reachable
           if n in targets or any(should.get(nx, False) for nx, _ in n.next_functions)}
    return run, captures


# The ready queue: a binary heap ordered by sequence number, operated exactly as
# libstdc++'s std::priority_queue is in PyTorch's engine, so that nodes of equal
# priority (AccumulateGrad) come out in the same order as in PyTorch.

def _push(heap, item):
    heap.append(item)
    hole = len(heap) - 1
    key = item[0]
    while hole > 0:
        parent = (hole - 1) >> 1
        p = heap[parent]
        if not p[0] < key:
            break
        heap[hole] = p
        hole = parent
    heap[hole] = item


def _pop(heap):
    top = heap[0]
    value = heap.pop()
    n = len(heap)
    if n:
        hole = child = 0
        while child < (n - 1) >> 1:  # move the hole to a leaf, preferring right children
            child = 2 * child + 2
            if heap[child][0] < heap[child - 1][0]:
                child -= 1
            heap[hole] = heap[child]
            hole = child
        if not n & 1 and child == (n - 2) >> 1:
            child = 2 * child + 1
            heap[hole] = heap[child]
            hole = child
        key = value[0]
        while hole > 0:  # then sift the last element up from there
            parent = (hole - 1) >> 1
            if not heap[parent][0] < key:
                break
            heap[hole] = heap[parent]
            hole = parent
        heap[hole] = value
    return top


def _as_tensor(g):
    return g if isinstance(g, Tensor) or g is None else wrap(g)


def _checked(hook, new, old, create_graph):
    """A hook's replacement for gradient ``old``, validated as PyTorch does; an array
    (a Tensor under ``create_graph``)."""
    if not isinstance(new, Tensor):
        raise TypeError(f"expected Variable, but hook returned '{type(new).__name__}'")
    if old is not None:
        a, b = new._data, old._data if isinstance(old, Tensor) else old
        if a.shape != b.shape:
            raise RuntimeError(f"hook '{_hook_name(hook)}' has changed the size of value")
        if a.dtype != b.dtype:
            raise RuntimeError(f"hook '{_hook_name(hook)}' has changed the type of value (was "
                               f"torch.{LEGACY_NAMES[b.dtype.name]} got "
                               f"torch.{LEGACY_NAMES[a.dtype.name]})")
    return new if create_graph else new._data


def _checked_tuple(hook, res, old, create_graph):
    """A node hook's replacement tuple for the gradients ``old``."""
    if not isinstance(res, tuple):
        raise TypeError(f"expected tuple, but hook returned '{type(res).__name__}'")
    if len(res) != len(old):
        raise RuntimeError(f"hook '{_hook_name(hook)}' has returned an incorrect number of "
                           f"values (got {len(res)}, but expected {len(old)})")
    return [None if r is None else _checked(hook, r, o, create_graph)
            for r, o in zip(res, old, strict=True)]


def _hook_name(hook):
    return getattr(hook, "__name__", None) or repr(hook)


def _run_tensor_hook(hook, g, create_graph):
    """One tensor hook; like PyTorch it also sees an undefined (None) gradient."""
    res = hook(_as_tensor(g))
    if res is None:
        return g
    if g is None:
        raise RuntimeError("can't replace a None gradient with a non-None value")
    return _checked(hook, res, g, create_graph)


def _tensor_pre_hooks(node, buf, create_graph):
    """Tensor hooks of the node's outputs (a leaf's for AccumulateGrad), then retains-grad."""
    if type(node) is AccumulateGrad:
        hooks = node.variable._hooks
        if hooks:
            for hook in list(hooks.values()):
                buf[0] = _run_tensor_hook(hook, buf[0], create_graph)
    if node._tensor_pre_hooks:
        for nr, hooks in list(node._tensor_pre_hooks.items()):
            for hook in list(hooks.values()):
                buf[nr] = _run_tensor_hook(hook, buf[nr], create_graph)
    if node._retains_grad_hooks:
        for nr, ref in node._retains_grad_hooks.items():
            t = ref()
            if t is not None and buf[nr] is not None and t._grad_fn is node:
                _retain(t, buf[nr], create_graph)


def _retain(t, g, create_graph):
    """The retains-grad hook: a contiguous copy first, out-of-place sums after."""
    if t._grad is None:
        t._grad = g.clone() if create_graph else wrap(g.copy())
    else:
        t._grad = t._grad + _as_tensor(g)


def _hooks_see(node, buf):
    """The indices of the output gradients the node's hooks see: PyTorch's node of an op
    has its differentiable outputs, only the first where its formulas read ``grad`` alone
    (max's values, batch norm's result; ``ops._opdef``'s ``node_outputs``)."""
    op = getattr(node, "_op", None)
    return range(len(buf)) if op is None or op.hooked is None else op.hooked


def _node_pre_hooks(node, buf, create_graph):
    seen = _hooks_see(node, buf)
    for hook in list(node._pre_hooks.values()):
        res = hook(tuple(_as_tensor(buf[i]) for i in seen))
        if res is not None:
            new = _checked_tuple(hook, res, [buf[i] for i in seen], create_graph)
            for i, g in zip(seen, new, strict=True):
                buf[i] = g


def _post_hooks(node, outs, buf, create_graph):
    task = _current.task
    if task.run is not None:  # as PyTorch: no gradient for an input this call does not need
        outs = [g if task.will_execute(nxt) else None
                for (nxt, _), g in zip(node.next_functions, outs, strict=True)]
    grad_inputs = tuple(_as_tensor(g) for g in outs)
    grad_outputs = tuple(_as_tensor(buf[i]) for i in _hooks_see(node, buf))
    for hook in list(node._post_hooks.values()):
        res = hook(grad_inputs, grad_outputs)
        if res is not None:
            grad_inputs = tuple(_as_tensor(g) for g in
                                _checked_tuple(hook, res, grad_inputs, create_graph))
    return [g if create_graph or g is None else g._data for g in grad_inputs]


def _call(node, buf, create_graph, owned=False):
    """Run one node with its hooks, in PyTorch's order; returns its output gradients.
    ``owned``: the node is an AccumulateGrad whose gradient only the engine holds."""
    _tensor_pre_hooks(node, buf, create_graph)
    if node._pre_hooks:
        _node_pre_hooks(node, buf, create_graph)
    if buf[0] is None and type(node) is not AccumulateGrad and all(g is None for g in buf):
        outs = [None] * len(node.next_functions)
    else:  # AccumulateGrad runs on a missing gradient too: its post-accumulate hooks do
        apply = _apply_owned if owned else _apply
        obs = _observe.engine
        outs = (apply(node, buf, create_graph) if obs is None
                else obs.apply_node(apply, node, buf, create_graph))
    if node._post_hooks:
        outs = _post_hooks(node, outs, buf, create_graph)
    return outs


def _apply(node, buf, create_graph):
    return node.apply(buf, create_graph)


def _apply_owned(node, buf, create_graph):
    return node.apply(buf, create_graph, True)


def _step(node, buf, create_graph):
    """One node as the engine runs it unobserved: straight to ``apply`` when it has no
    hooks (the common case), else through ``_call``."""
    if node._extra is None and buf[0] is not None and type(node) is not AccumulateGrad:
        return node.apply(buf, create_graph)
    return _call(node, buf, create_graph)


_call_owned = functools.partial(_call, owned=True)


def _hooked(node):
    """Whether some hook of the node may see its gradients."""
    e = node._extra
    return e is not None and bool(e.pre_hooks or e.post_hooks or e.tensor_pre_hooks
                                  or e.retains_grad_hooks) or (
        type(node) is AccumulateGrad and bool(node.variable._hooks))


def _added(a, b):
    """Two gradients of one input summed, a batch (vmap) on the left: a device array's
    operators refuse a batched right operand (CuPy's defer only to ``__array_ufunc__ =
    None``), and the sum commutes exactly. Large float32 NumPy ones by the compiled pass on
    OpenBLAS's threads (a residual block's gradients)."""
    if type(b) is Batched and type(a) is not Batched:
        return b + a
    if type(a) is _ndarray and cpu_kernels.broadcasts(a, b) and a.shape == b.shape:
        return cpu_kernels.broadcast("add", a, b)
    return a + b


def _grads_guard(grads):
    """The device guard of the first gradient present among ``grads`` (arrays, or
    Tensors under create_graph): None where its device is current, or the host's. A
    node's runs with it, as PyTorch runs each node with its device current, and the
    roots' for the whole pass."""
    for g in grads:
        if g is not None:
            return device_guard(g._data if isinstance(g, Tensor) else g)
    return None


def run_backward(roots, root_grads, keep_graph, create_graph, inputs=None, accumulate_into=True):
    """Run backward from ``roots`` (tensors) seeded with ``root_grads`` (arrays or Tensors).

    inputs: tensors whose gradients are wanted; with ``accumulate_into`` they are
    accumulated into ``.grad`` (``backward(inputs=...)``), else returned (``grad``).
    """
    root_edges = [_root_edge(t, i) for i, t in enumerate(roots)]
    pending = {}
    for fn, _ in root_edges:
        pending[fn] = pending.get(fn, 0) + 1
    deps, reachable = _dependencies(pending)
    run = captures = None
    if inputs is not None:
        run, captures = _exec_plan(inputs, accumulate_into, pending, reachable)
        captured = [None] * len(inputs)

    buffers = {}
    heap = []
    for (fn, nr), g in zip(root_edges, root_grads, strict=True):  # what PyTorch's GraphRoot does
        buf = buffers.get(fn)
        if buf is None:
            buf = buffers[fn] = [None] * _n_outputs(fn)
        buf[nr] = g if buf[nr] is None else _added(buf[nr], g)
        pending[fn] -= 1
        if not pending[fn] and fn not in deps:
            _push(heap, (fn._seq, fn))
    buf = g = None
    own = None if create_graph else Owners(root_grads)

    prev_mode, prev_task = grad_mode.state.enabled, _current.task
    grad_mode.state.enabled = create_graph
    _current.task = GraphTask(run, captures, reachable)
    # The root gradient's device is current for the pass, and each node's while it runs
    # (PyTorch runs a device's nodes on that device's thread, its device set): the rules
    # allocate on the current device.
    guard = _grads_guard(root_grads)
    if guard is not None:
        guard.__enter__()
    watcher = _observe.engine
    if watcher is not None:
        watcher.backward_begin()
    try:
        while heap:
            # (a lone ready node, a chain's common case, needs no sifting)
            node = (heap.pop() if len(heap) == 1 else _pop(heap))[1]
            buf = buffers.pop(node)
            if run is not None:
                cap = captures.get(node)
                if node not in run:  # only captured: tensor pre-hooks apply, nothing runs
                    _tensor_pre_hooks(node, buf, create_graph)
                    for nr, k in cap or ():
                        captured[k] = buf[nr]
                    if own is not None and own.shared:
                        own.consume(buf)
                    continue
                for nr, k in cap or ():
                    captured[k] = buf[nr]
                if cap and own is not None:  # handed to the caller of grad()
                    own.expose(buf)
            # A node on a device that is not the current one runs with its device current.
            node_guard = None if type(buf[0]) is _ndarray else _grads_guard(buf)
            if node_guard is not None:
                node_guard.__enter__()
            try:
                if (node._extra is None and buf[0] is not None and node._fresh_grads
                        and (own is None or not own.shared)):  # a library rule, no hooks:
                    obs = _observe.engine                     # the common case
                    if obs is None:
                        outs = node.apply(buf, create_graph)
                    else:  # (its class's apply itself: no Python frame between)
                        outs = obs.run_node(_call if obs.applies else type(node).apply, node,
                                            buf, create_graph)
                else:
                    outs = _run_node(node, buf, create_graph, own)
            finally:
                if node_guard is not None:
                    node_guard.__exit__(None, None, None)
            buf = None
            if not keep_graph:
                node.release()
            placed = []
            k = -1  # (a counter: cheaper than enumerate; zip(strict=True) parses its keyword)
            for nxt, nr in node.next_functions:
                k += 1
                g = outs[k]
                if nxt is None or run is not None and nxt not in run and nxt not in captures:
                    continue
                b = buffers.get(nxt)
                if b is None:
                    meta = nxt._out_meta
                    b = buffers[nxt] = [None] * (len(meta) if meta else 1)
                if g is not None:
                    if b[nr] is None:
                        b[nr] = g
                        placed.append(g)
                    else:
                        if own is not None and own.shared:
                            own.consume((b[nr],))
                        b[nr] = _added(b[nr], g)
                d = deps[nxt] - 1
                deps[nxt] = d
                if not d:
                    if heap:
                        _push(heap, (nxt._seq, nxt))
                    else:
                        heap.append((nxt._seq, nxt))
            if own is not None and (len(placed) > 1 or placed and own.shared):
                own.place(placed)
            # Gradient buffers die the moment they are consumed: drop the loop's references.
            outs = g = b = placed = None
        for callback in _current.task.callbacks:  # the loop also reaches ones queued here
            callback()
    finally:
        grad_mode.state.enabled, _current.task = prev_mode, prev_task
        _collector.backward_ran()
        if watcher is not None:
            watcher.backward_end()
        if guard is not None:
            guard.__exit__(None, None, None)
    return captured if inputs is not None else None


def _run_node(node, buf, create_graph, own):
    """Run one node (through the engine observer, if any) and note which of its output
    gradients the engine alone holds (``own``: None under ``create_graph``); returns
    them."""
    obs = _observe.engine
    if own is None:
        return _step(node, buf, create_graph) if obs is None else \
            obs.run_node(_call if obs.applies else _step, node, buf, create_graph)
    if own.shared:
        own.consume(buf)
    if type(node) is AccumulateGrad:
        call = _call_owned if (buf[0] is not None and not _hooked(node)
                               and own.sole(buf[0])) else _call
        return call(node, buf, create_graph) if obs is None else \
            obs.run_node(call, node, buf, create_graph)
    outs = _step(node, buf, create_graph) if obs is None else \
        obs.run_node(_call if obs.applies else _step, node, buf, create_graph)
    if not node._fresh_grads or node._extra is not None and _hooked(node):
        own.expose(buf)
        own.expose(outs)
    return outs


def _n_outputs(node):
    meta = node._out_meta
    return len(meta) if meta else 1
