"""The backward engine: what PyTorch's C++ engine does, iteratively, in Python.

1. Count, for every node reachable from the roots, how many gradients it will
   receive (its dependencies).
2. Sum gradients arriving for a node in its input buffer; when its count
   reaches zero it is ready. Ready nodes run highest sequence number first
   (the reverse of creation order); AccumulateGrad runs as soon as it is ready.
3. Around each node: tensor pre-hooks, retains-grad hooks, node pre-hooks, the
   node, node post-hooks. Saved tensors are released right after the node runs
   unless ``retain_graph``; the node's input buffer dies when it is consumed.

Gradients are backend arrays in a plain backward and Tensors under
``create_graph`` (so the backward itself is recorded).
"""

import heapq

from .._tensor import Tensor, wrap
from . import grad_mode
from .node import AccumulateGrad, grad_accumulator

__all__ = ["run_backward"]


def _root_edge(t, i):
    if t._grad_fn is not None or t._base is not None and t.grad_fn is not None:
        return (t._grad_fn, t._output_nr)
    if t._requires_grad:
        return (grad_accumulator(t), 0)
    raise RuntimeError(f"element {i} of tensors does not require grad and does not have a "
                       "grad_fn")


def _dependencies(roots):
    deps = {}
    seen = set(roots)
    stack = list(seen)
    while stack:
        node = stack.pop()
        for nxt, _ in node.next_functions:
            if nxt is not None:
                deps[nxt] = deps.get(nxt, 0) + 1
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append(nxt)
    return deps, seen


def _needed(nodes, targets):
    """Nodes from which some target is reachable through next_functions."""
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


def _as_tensor(g):
    return g if isinstance(g, Tensor) or g is None else wrap(g)


def _check_hook_result(new, old, what):
    if new._data.shape != old.shape:
        raise RuntimeError(f"hook {what} has changed the size of value: expected "
                           f"{list(old.shape)} but got {list(new._data.shape)}")
    if new._data.dtype != old.dtype:
        raise RuntimeError(f"hook {what} has changed the type of value: expected "
                           f"{old.dtype} but got {new._data.dtype}")


def _run_tensor_hooks(hooks, g, create_graph, what):
    for hook in list(hooks.values()):
        t = _as_tensor(g)
        res = hook(t)
        if res is not None:
            _check_hook_result(res, t._data if isinstance(t, Tensor) else g, what(hook))
            g = res if create_graph else res._data
    return g


def _hook_name(hook):
    return f"'{getattr(hook, '__name__', repr(hook))}'"


def _pre_hooks(node, buf, create_graph):
    """Tensor pre-hooks, retains-grad hooks and node pre-hooks, in PyTorch's order."""
    if isinstance(node, AccumulateGrad):
        hooks = node.variable._hooks
        if hooks and buf[0] is not None:
            buf[0] = _run_tensor_hooks(
                hooks, buf[0], create_graph,
                lambda h: f"{_hook_name(h)} registered on a leaf tensor of shape "
                          f"{list(node.variable._data.shape)}")
    if node._tensor_pre_hooks:
        for nr, hooks in node._tensor_pre_hooks.items():
            if hooks and buf[nr] is not None:
                buf[nr] = _run_tensor_hooks(
                    hooks, buf[nr], create_graph,
                    lambda h: f"{_hook_name(h)} registered on output {nr} of {node.name()}")
    if node._retains_grad_hooks:
        for nr, ref in node._retains_grad_hooks.items():
            t = ref()
            if t is not None and buf[nr] is not None and t._grad_fn is node:
                _retain(t, buf[nr], create_graph)
    if node._pre_hooks:
        for hook in list(node._pre_hooks.values()):
            res = hook(tuple(_as_tensor(g) for g in buf))
            if res is not None:
                buf[:] = [r if create_graph or r is None else r._data for r in res]


def _retain(t, g, create_graph):
    if t._grad is None:
        t._grad = g if create_graph else wrap(g.copy())
    else:
        t._grad = t._grad + _as_tensor(g)


def _post_hooks(node, outs, buf, create_graph):
    grad_inputs = tuple(_as_tensor(g) for g in outs)
    grad_outputs = tuple(_as_tensor(g) for g in buf)
    for hook in list(node._post_hooks.values()):
        res = hook(grad_inputs, grad_outputs)
        if res is not None:
            grad_inputs = tuple(res)
    return [g if create_graph or g is None else g._data for g in grad_inputs]


def run_backward(roots, root_grads, keep_graph, create_graph, inputs=None, accumulate_into=True):
    """Run backward from ``roots`` (tensors) seeded with ``root_grads`` (arrays or Tensors).

    inputs: tensors whose gradients are wanted; with ``accumulate_into`` they are
    accumulated into ``.grad`` (``backward(inputs=...)``), else returned (``grad``).
    """
    root_edges = [_root_edge(t, i) for i, t in enumerate(roots)]
    root_nodes = {fn for fn, _ in root_edges}
    deps, reachable = _dependencies(root_nodes)
    captures = {}     # node -> [(output_nr, input index)]
    run = None        # nodes to execute; None means all reachable
    if inputs is not None:
        exec_targets = set()
        for k, t in enumerate(inputs):
            fn = t._grad_fn
            if fn is None:
                if not t._requires_grad:
                    raise RuntimeError("One of the differentiated Tensors does not require "
                                       "grad")
                fn = grad_accumulator(t)
                if accumulate_into:
                    exec_targets.add(fn)
                    continue
            captures.setdefault(fn, []).append((t._output_nr, k))
        needed = _needed(root_nodes, exec_targets | set(captures))
        run = {n for n in reachable
               if n in exec_targets or any(needed.get(nx, False)
                                           for nx, _ in n.next_functions if nx is not None)}
    captured = [None] * (len(inputs) if inputs is not None else 0)

    buffers = {}
    for (fn, nr), g in zip(root_edges, root_grads):
        buf = buffers.get(fn)
        if buf is None:
            buf = buffers[fn] = [None] * _n_outputs(fn)
        buf[nr] = g if buf[nr] is None else buf[nr] + g
    heap = []
    tie = 0
    for fn in root_nodes:
        if deps.get(fn, 0) == 0:
            heapq.heappush(heap, (-fn._seq, tie, fn))
            tie += 1

    prev_mode = grad_mode.state.enabled
    grad_mode.state.enabled = create_graph
    try:
        while heap:
            node = heapq.heappop(heap)[2]
            buf = buffers.pop(node)
            _pre_hooks(node, buf, create_graph)
            cap = captures.get(node)
            if cap:
                for nr, k in cap:
                    captured[k] = buf[nr]
            if run is not None and node not in run:
                continue
            if all(g is None for g in buf):
                outs = [None] * len(node.next_functions)
            else:
                outs = node.apply(buf, create_graph)
                if type(node) is AccumulateGrad:
                    _after_accumulate(node.variable)
            if node._post_hooks:
                outs = _post_hooks(node, outs, buf, create_graph)
            del buf
            if not keep_graph:
                node.release()
            for (nxt, nr), g in zip(node.next_functions, outs):
                if nxt is None:
                    continue
                if run is not None and nxt not in run and nxt not in captures:
                    continue
                b = buffers.get(nxt)
                if b is None:
                    b = buffers[nxt] = [None] * _n_outputs(nxt)
                if g is not None:
                    b[nr] = g if b[nr] is None else b[nr] + g
                d = deps[nxt] - 1
                deps[nxt] = d
                if d == 0:
                    heapq.heappush(heap, (-nxt._seq, tie, nxt))
                    tie += 1
    finally:
        grad_mode.state.enabled = prev_mode
    if inputs is not None and accumulate_into:
        for t, g in zip(inputs, captured):
            if t._grad_fn is not None and g is not None:
                _retain(t, g, create_graph)
    return captured


def _after_accumulate(var):
    hooks = var._post_acc_hooks
    if hooks:
        for hook in list(hooks.values()):
            hook(var)


def _n_outputs(node):
    meta = getattr(node, "_out_meta", None)
    return len(meta) if meta else 1
