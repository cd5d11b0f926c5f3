"""A module's backward hooks: the full ones (``register_full_backward_hook`` and its
pre-hooks) on identity nodes around its tensor inputs and outputs, and the deprecated
non-full ones (``register_backward_hook``) on the node that made its output."""

import warnings

from ... import _observe
from ..._creation import zeros
from ..._tensor import Tensor
from ...autograd.engine import current_graph_task
from ...ops._registry import apply, defop

__all__ = ["BackwardHookState", "register_non_full_hooks"]

# The identity PyTorch wraps a module's inputs and outputs in for full backward hooks.
_hook_identity = defop("backward_hook", lambda xp, self: self,
                       vjp={"self": lambda grad: grad}, jvp="linear",
                       node="BackwardHookFunctionBackward")


class BackwardHookState:
    """Identity nodes around one call's tensor inputs and outputs that require grad. In
    each backward, the pre-hooks run once every output identity that this backward runs
    has its gradient (None for the others: an output that takes no part), and the full
    hooks once every input identity it runs has; an input that requires grad but gets
    none has zeros (PyTorch's BackwardHook). grad_input and grad_output have an entry per
    positional argument and per output, None where no gradient flows. With several
    inputs (outputs), a returned grad_input (grad_output) replaces the last one computed
    only."""

    def __init__(self, module, full_hooks, pre_hooks):
        self.module, self.full_hooks, self.pre_hooks = module, full_hooks, pre_hooks
        self.in_nodes, self.in_meta, self.out_nodes = [], [], []
        self.task = None  # the id of the backward whose gradients are gathering

    def wrap_inputs(self, args):
        out = []
        for i, a in enumerate(args):
            node = meta = None
            if isinstance(a, Tensor) and a.requires_grad:
                meta = (tuple(a.shape), a.dtype, a.device)
                a = apply(_hook_identity, (a,))
                a.register_hook(self._input_hook(i))
                node = a.grad_fn
            self.in_nodes.append(node)
            self.in_meta.append(meta)
            out.append(a)
        return tuple(out)

    def wrap_outputs(self, out):
        single = isinstance(out, Tensor)
        outs = (out,) if single else out
        if not isinstance(outs, tuple):
            return out
        wrapped = []
        for k, o in enumerate(outs):
            node = None
            if isinstance(o, Tensor) and o.requires_grad:
                o = apply(_hook_identity, (o,))
                o.register_hook(self._output_hook(k))
                node = o.grad_fn
            self.out_nodes.append(node)
            wrapped.append(o)
        return wrapped[0] if single else tuple(wrapped)

    def _begin(self):
        """Start gathering for the running backward, the first time one of its gradients
        arrives: which identities it will run."""
        task = current_graph_task()
        if self.task == task.id:
            return
        self.task = task.id
        self.grad_outputs = [None] * len(self.out_nodes)
        self.grad_inputs = [None] * len(self.in_nodes)
        self.outs_due = {k for k, n in enumerate(self.out_nodes)
                         if n is not None and task.will_execute(n)}
        self.ins_due = {i for i, n in enumerate(self.in_nodes)
                        if n is not None and task.will_execute(n)}

    def _output_hook(self, k):
        def hook(grad):
            self._begin()
            self.grad_outputs[k] = grad
            self.outs_due.discard(k)
            if self.outs_due:
                return None
            self.grad_outputs = self._call_pre(tuple(self.grad_outputs))
            if not any(self.in_nodes):
                self._call_without_inputs()
            return self.grad_outputs[k] if self.grad_outputs[k] is not grad else None
        return hook

    def _input_hook(self, i):
        def hook(grad):
            self._begin()
            self.grad_inputs[i] = grad
            self.ins_due.discard(i)
            if self.ins_due:
                return None
            for j, node in enumerate(self.in_nodes):  # required but reached by none
                if node is not None and self.grad_inputs[j] is None and j != i:
                    shape, dtype, device = self.in_meta[j]
                    self.grad_inputs[j] = zeros(shape, dtype=dtype, device=device)
            res = self._call_full(tuple(self.grad_inputs))
            return None if res is None else res[i]
        return hook

    def _call_pre(self, grad_outputs):
        """The backward pre-hooks, global ones first: each may replace grad_output (the
        gradients still to flow: with several outputs, the last one to arrive's)."""
        for hook in self.pre_hooks:
            r = hook(self.module, grad_outputs)
            if r is not None:
                if len(r) != len(grad_outputs):
                    raise RuntimeError(f"Backward pre hook returned an invalid number of "
                                       f"grad_output, got {len(r)}, but expected "
                                       f"{len(grad_outputs)}")
                grad_outputs = tuple(r)
        return grad_outputs

    def _call_full(self, grad_input):
        res = None
        grad_output = tuple(self.grad_outputs)
        for hook in self.full_hooks:
            r = hook(self.module, grad_input, grad_output)
            if r is not None:
                res = grad_input = tuple(r)
        return res

    def _call_without_inputs(self):
        """No input requires grad: the full hooks run from the outputs' side, with
        grad_input all None, and may not replace it."""
        warnings.warn("Full backward hook is firing when gradients are computed with respect "
                      "to module outputs since no inputs require gradients. See "
                      "https://docs.pytorch.org/docs/main/generated/torch.nn.Module.html"
                      "#torch.nn.Module.register_full_backward_hook for more details.",
                      stacklevel=_observe.user_stacklevel())
        grad_input = (None,) * len(self.in_nodes)
        for hook in self.full_hooks:
            r = hook(self.module, grad_input, tuple(self.grad_outputs))
            if r is not None and not (isinstance(r, tuple) and all(g is None for g in r)):
                raise RuntimeError("Backward hook for Modules where no input requires gradient "
                                   "should always return None or None for all gradients.")


def register_non_full_hooks(module, hooks, args, result):
    """The deprecated ``register_backward_hook`` hooks: ``hook(module, grad_input,
    grad_output)`` on the node that made the first tensor of ``result``, with that node's
    gradients (PyTorch's warnings name what the hook then misses)."""
    var = result
    while not isinstance(var, Tensor):
        var = next(v for v in var.values() if isinstance(v, Tensor)) \
            if isinstance(var, dict) else var[0]
    node = var.grad_fn
    if node is None:
        return
    for hook in hooks:
        node.register_hook(lambda grad_inputs, grad_outputs, hook=hook:
                           hook(module, grad_inputs, grad_outputs))
    _warn_non_full(args, result, node)


def _warn_non_full(inputs, result, node):
    def warn(message):
        warnings.warn(message, FutureWarning, stacklevel=_observe.user_stacklevel())

    def tensors(x):
        return (x,) if isinstance(x, Tensor) else x if isinstance(x, tuple) and all(
            isinstance(e, Tensor) for e in x) else None

    result, inputs = tensors(result), tensors(inputs)
    if result is None:
        return warn("Using non-full backward hooks on a Module that does not return a single "
                    "Tensor or a tuple of Tensors is deprecated and will be removed in future "
                    "versions. This hook will be missing some of the grad_output. Please use "
                    "register_full_backward_hook to get the documented behavior.")
    if inputs is None:
        return warn("Using non-full backward hooks on a Module that does not take as input a "
                    "single Tensor or a tuple of Tensors is deprecated and will be removed in "
                    "future versions. This hook will be missing some of the grad_input. Please "
                    "use register_full_backward_hook to get the documented behavior.")
    made_by = {r.grad_fn for r in result if r.grad_fn is not None}
    if not made_by or (len(made_by) == 1 and node not in made_by):
        warn("Using a non-full backward hook when outputs are nested in python data structure "
             "is deprecated and will be removed in future versions. This hook will be missing "
             "some grad_output.")
    elif len(made_by) > 1:
        warn("Using a non-full backward hook when outputs are generated by different autograd "
             "Nodes is deprecated and will be removed in future versions. This hook will be "
             "missing some grad_output. Please use register_full_backward_hook to get the "
             "documented behavior.")
    elif {i.grad_fn for i in inputs if i.grad_fn is not None} != {
            n for n, _ in node.next_functions}:
        warn("Using a non-full backward hook when the forward contains multiple autograd Nodes "
             "is deprecated and will be removed in future versions. This hook will be missing "
             "some grad_input. Please use register_full_backward_hook to get the documented "
             "behavior.")
