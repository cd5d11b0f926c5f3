"""``backward`` and ``grad``: the engine's entry points, with PyTorch's checks of their
arguments and seed gradients. ``Tensor.backward`` is installed here, beside them."""

from .._dtype import is_inexact
from .._tensor import Tensor, warn_once, wrap
from ..backend import get_array_module
from ._batched_grad import batched_grad
from .engine import run_backward
from .graph import GradientEdge

__all__ = ["backward", "grad"]


def _tuple(x):
    if x is None:
        return None
    if isinstance(x, (Tensor, GradientEdge)):
        return (x,)
    if isinstance(x, dict):  # named inputs (PyTorch 2.13)
        return tuple(x.values())
    return tuple(x)


def _make_grads(outputs, grads, create_graph):
    """Seed gradients: ones for scalar outputs, else the caller's, shape-checked (each
    pair first, then their numbers, in PyTorch's order)."""
    res = []
    for i, (out, g) in enumerate(zip(outputs, grads, strict=False)):
        if isinstance(out, GradientEdge):  # no shape to check nor to make ones of
            if g is None:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            res.append(g if create_graph else g._data)
            continue
        if g is None:
            if not out.requires_grad:  # the engine says which element
                res.append(None)
                continue
            if out._data.size != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if not is_inexact(out._data.dtype):
                raise RuntimeError(f"grad can be implicitly created only for real scalar "
                                   f"outputs but got {out.dtype}")
            g = get_array_module(out._data).ones_like(out._data)
        else:
            if not isinstance(g, Tensor):
                raise TypeError(f"gradients can be either Tensors or None, but got "
                                f"{type(g).__name__}")
            if g._data.shape != out._data.shape:
                raise RuntimeError(
                    f"Mismatch in shape: grad_output[{i}] has a shape of {g.shape} and "
                    f"output[{i}] has a shape of {out.shape}.")
            if create_graph:
                if g.dtype is not out.dtype:
                    g = g.to(out.dtype)
                res.append(g)
                continue
            g = g._data
            if g.dtype != out._data.dtype:
                g = g.astype(out._data.dtype)
        res.append(_wrap_if(g, create_graph))
    if len(grads) != len(outputs):
        raise RuntimeError(f"got {len(outputs)} tensors and {len(grads)} gradients")
    return res


def _wrap_if(arr, create_graph):
    return wrap(arr) if create_graph else arr


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False,
             grad_variables=None, inputs=None):
    """Accumulate gradients of ``tensors`` into the ``.grad`` of graph leaves.

    >>> backward(loss)          # same as loss.backward()
    """
    if grad_variables is not None:
        grad_tensors = grad_variables
    inputs = _tuple(inputs)
    if inputs is not None and len(inputs) == 0:
        raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    tensors = _tuple(tensors)
    grads = _tuple(grad_tensors) if grad_tensors is not None else (None,) * len(tensors)
    if retain_graph is None:
        retain_graph = create_graph
    grads = _make_grads(tensors, grads, create_graph)
    if create_graph:
        warn_once("Using backward() with create_graph=True will create a reference cycle "
                  "between the parameter and its gradient which can cause a memory leak. We "
                  "recommend using autograd.grad when creating the graph to avoid this. If you "
                  "have to use this function, make sure to reset the .grad fields of your "
                  "parameters to None after use to break the cycle and avoid the leak.")
    run_backward(tensors, grads, retain_graph, create_graph, inputs=inputs,
                 accumulate_into=True)


def _tensor_backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulate d(self)/d(leaf) into each leaf's ``.grad``."""
    backward(self, gradient, retain_graph, create_graph, inputs=inputs)


Tensor.backward = _tensor_backward


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False,
         materialize_grads=False):
    """The gradients of ``outputs`` with respect to ``inputs``, returned, not accumulated
    (a dict by name when ``inputs`` is a dict of tensors).

    >>> (dx,) = grad(y.sum(), x)
    """
    if allow_unused is None:
        allow_unused = materialize_grads
    if materialize_grads and not allow_unused:
        raise ValueError("Expected allow_unused to be True or not passed when "
                         "materialize_grads=True, but got: allow_unused=False.")
    names = list(inputs) if isinstance(inputs, dict) else None
    outputs = _tuple(outputs)
    inputs = _tuple(inputs)
    grads = _tuple(grad_outputs) if grad_outputs is not None else (None,) * len(outputs)
    if retain_graph is None:
        retain_graph = create_graph
    if not inputs:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    for t in inputs:
        if isinstance(t, GradientEdge):
            if materialize_grads:
                raise RuntimeError("materialize_grads cannot be used when the given input "
                                   "is a GradientEdge")
        elif not t.requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    if is_grads_batched:  # one walk of the graph for a batch of cotangents (leading dim)
        res = batched_grad(outputs, inputs, grads, retain_graph, create_graph)
    else:
        res = run_backward(outputs, _make_grads(outputs, grads, create_graph), retain_graph,
                           create_graph, inputs=inputs, accumulate_into=False)
    out = []
    for i, (t, g) in enumerate(zip(inputs, res, strict=True)):
        if g is None:
            if materialize_grads:
                g = get_array_module(t._data).zeros_like(t._data)
            elif not allow_unused:
                raise RuntimeError(f"The differentiated Tensor at index {i} appears to not "
                                   "have been used in the graph. Set allow_unused=True if "
                                   "this is the desired behavior.")
            else:
                out.append(None)
                continue
        out.append(g if isinstance(g, Tensor) else wrap(g))
    return tuple(out) if names is None else dict(zip(names, out, strict=True))
