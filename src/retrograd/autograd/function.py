"""User-defined differentiable operations: ``torch.autograd.Function``.

A subclass declares ``forward`` and ``backward`` (and optionally ``jvp``) as
static methods; ``apply`` runs forward under no_grad and records one node,
``<ClassName>Backward``, that is also the ``ctx`` the methods receive. Saved
tensors go through :class:`~.node.SavedTensor`, so saved-tensor hooks and the
version check apply to them as to any op.

>>> class Exp(Function):
...     @staticmethod
...     def forward(ctx, x):
...         y = x.exp()
...         ctx.save_for_backward(y)
...         return y
...     @staticmethod
...     def backward(ctx, g):
...         (y,) = ctx.saved_tensors
...         return g * y
>>> Exp.apply(x)
"""

import functools
import warnings

from .._tensor import Tensor, wrap
from .._dtype import from_numpy_dtype, is_inexact
from ..backend import get_array_module
from . import forward_ad, grad_mode
from ._function_vmap import NO_VMAP_STATICMETHOD, batch_level, dispatch
from .node import _FREED, DelayedError, Node, SavedTensor, collect_next

__all__ = ["Function", "FunctionCtx", "BackwardCFunction", "once_differentiable",
           "InplaceFunction", "NestedIOFunction"]


class FunctionCtx:
    """The context methods (PyTorch's mixins): what forward/setup_context tell backward."""

    def save_for_backward(self, *tensors):
        for t in tensors:
            if t is not None and not isinstance(t, Tensor):
                raise TypeError("save_for_backward can only save variables, but argument "
                                f"{tensors.index(t)} is of type {type(t).__name__}")
        self.to_save = tensors

    def save_for_forward(self, *tensors):
        for t in tensors:
            if t is not None and not isinstance(t, Tensor):
                raise AssertionError("save_for_forward expects all arguments to be tensors; "
                                     f"but got {type(t).__name__}")
        self.saved_for_forward = tensors

    def mark_dirty(self, *args):
        self.dirty_tensors = args

    def mark_non_differentiable(self, *args):
        self.non_differentiable = args

    def set_materialize_grads(self, value):
        self.materialize_grads = value


class BackwardCFunction(Node, FunctionCtx):
    """The node of a Function application; ``<ClassName>Backward`` subclasses carry
    ``_forward_cls``."""

    _forward_cls = None

    def __init__(self):
        self.to_save = ()
        self.saved_for_forward = None
        self.dirty_tensors = ()
        self.non_differentiable = ()
        self.materialize_grads = True
        self.needs_input_grad = ()
        self._saved = None
        self._out_meta = None
        self._input_meta = ()
        self._is_tensor_input = ()

    @property
    def saved_tensors(self):
        if self._in_forward_jvp:
            return self.saved_for_forward or ()
        saved = self._saved
        if saved is None:
            raise RuntimeError(_FREED)
        return tuple(s.unpack(self) if type(s) is SavedTensor else s for s in saved)

    _in_forward_jvp = False

    @property
    def saved_variables(self):
        return self.saved_tensors

    def name(self):
        return type(self).__name__

    def __repr__(self):  # PyTorch's form: the class is made per Function, in this module
        return f"<{__name__}.{type(self).__name__} object at {hex(id(self))}>"

    def release(self):
        self._saved = None

    def apply(self, grads, create_graph):
        cls = self._forward_cls
        meta = self._out_meta
        args = []
        xp = None
        for g, (shape, dtype) in zip(grads, meta, strict=True):
            if g is None:
                if self.materialize_grads and dtype is not None:  # not for non-tensor outputs
                    xp = xp or _grads_module(grads)
                    g = wrap(xp.zeros(shape, dtype=dtype))
            elif not isinstance(g, Tensor):
                g = wrap(g)
            args.append(g)
        if self._saved is None and self.to_save:
            raise RuntimeError(_FREED)
        backward = cls.vjp if cls.vjp is not Function.vjp else cls.backward
        res = backward(self, *args)
        return self._check_grads(res, create_graph)

    def _check_grads(self, res, create_graph):
        """PyTorch's validation of what backward returned: their number, shapes, and
        None for non-tensor inputs; gradients are reduced/cast like an op's."""
        if not isinstance(res, tuple):
            res = (res,)
        n = len(self._input_meta)
        name = self.name()
        if len(res) != n:
            if len(res) < n or any(r is not None for r in res[n:]):
                raise RuntimeError(f"function {name} returned an incorrect number of gradients "
                                   f"(expected {n}, got {len(res)})")
            res = res[:n]
        out = []
        for i, (g, meta, edge) in enumerate(zip(res, self._input_meta, self.next_functions,
                                                strict=True)):
            if meta is None:
                if g is not None:
                    raise RuntimeError(f"function {name} returned a gradient different than "
                                       f"None at position {i + 1}, but the corresponding "
                                       "forward input was not a Variable")
                out.append(None)
                continue
            if g is None or edge[0] is None:
                out.append(None)
                continue
            if not isinstance(g, Tensor):
                raise TypeError(f"function {name} returned a gradient that is not a Tensor "
                                f"at position {i + 1} (got {type(g).__name__})")
            shape, dtype = meta
            if g._data.shape != shape:
                if g._data.size == 1 and len(shape) == 0 or _expandable(shape, g._data.shape):
                    g = g.sum_to_size(shape) if g._data.ndim else g.reshape(shape)
                else:
                    raise RuntimeError(f"Function {name} returned an invalid gradient at index "
                                       f"{i} - got {list(g._data.shape)} but expected shape "
                                       f"compatible with {list(shape)}")
            if g._data.dtype != dtype:
                g = g.to(from_numpy_dtype(dtype))
            out.append(g if create_graph else g._data)
        return out


def _expandable(shape, gshape):
    """``gshape`` is ``shape`` broadcast (PyTorch sums such a gradient back)."""
    if len(gshape) < len(shape):
        return False
    lead = len(gshape) - len(shape)
    return all(n == m or n == 1 for n, m in zip(shape, gshape[lead:], strict=True))


def _grads_module(grads):
    """The array module of the gradients that arrived (the outputs' device), for zeros of
    those that did not."""
    g = next((g for g in grads if g is not None), None)
    return get_array_module(g._data if isinstance(g, Tensor) else g)


def once_differentiable(fn):
    """Run ``backward`` on plain values; differentiating its result again raises."""
    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with grad_mode.no_grad():
            outputs = fn(ctx, *args)
        if not grad_mode.is_grad_enabled():
            return outputs
        requires = any(isinstance(a, Tensor) and a.requires_grad for a in args)
        if not requires:
            return outputs
        single = not isinstance(outputs, tuple)
        outs = (outputs,) if single else outputs
        err = DelayedError("trying to differentiate twice a function that was marked with "
                            "@once_differentiable")
        err.next_functions = collect_next(args, None)[0]
        res = []
        for o in outs:
            if isinstance(o, Tensor):
                o = o.detach()
                if is_inexact(o._data.dtype):
                    o._grad_fn, o._requires_grad = err, True
            res.append(o)
        return res[0] if single else tuple(res)
    return wrapper


class FunctionMeta(type):
    """Gives each Function subclass its node class, ``<ClassName>Backward``."""

    def __init__(cls, name, bases, attrs):
        backward_fn = type(name + "Backward", (BackwardCFunction,), {"_forward_cls": cls})
        cls._backward_cls = backward_fn
        super().__init__(name, bases, attrs)


class Function(FunctionCtx, metaclass=FunctionMeta):
    """Base class of custom differentiable operations (use ``apply``, never instantiate)."""

    generate_vmap_rule = False

    def __init__(self, *args, **kwargs):
        warnings.warn(f"{type(self)} should not be instantiated. Methods on autograd functions "
                      "are all static, so you should invoke them on the class itself. "
                      "Instantiating an autograd function will raise an error in a future "
                      "version of PyTorch.", DeprecationWarning, stacklevel=2)

    def __call__(self, *args, **kwargs):
        raise RuntimeError("Legacy autograd function with non-static forward method is "
                           "deprecated. Please use new-style autograd function with static "
                           "forward method. (Example: "
                           "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")

    @staticmethod
    def forward(*args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom "
                                  "autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for "
                                  "your custom autograd.Function to use it with backward mode "
                                  "AD.")

    vjp = backward

    @staticmethod
    def vmap(info, in_dims, *args):
        """A batching rule: ``args`` with their batch at ``in_dims`` (0 here, or None for
        an unbatched argument); returns ``(outputs, out_dims)``."""
        raise NotImplementedError(NO_VMAP_STATICMETHOD)

    @staticmethod
    def jvp(ctx, *grad_inputs):
        raise NotImplementedError("You must implement the jvp function for custom "
                                  "autograd.Function to use it with forward mode AD.")

    @classmethod
    def apply(cls, *args, **kwargs):
        if kwargs:
            raise TypeError(f"{cls.__name__}.apply() does not take keyword arguments")
        ctx = cls._backward_cls()
        grad_on = grad_mode.state.enabled
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a.requires_grad and grad_on
                                     for a in args)
        separate = cls.setup_context is not Function.setup_context
        level = batch_level(args)
        if level is not None:  # under vmap
            out = dispatch(cls, Function, args, level, grad_on and any(ctx.needs_input_grad))
            if out is not NotImplemented:
                return out
        with grad_mode.no_grad():
            if separate:
                outputs = cls.forward(*args)
                cls.setup_context(ctx, args, outputs)
            else:
                outputs = cls.forward(ctx, *args)
        return _record(cls, ctx, args, outputs, grad_on and any(ctx.needs_input_grad))


def _record(cls, ctx, args, outputs, record):
    single = not isinstance(outputs, tuple)
    outs = [outputs] if single else list(outputs)
    dirty = {id(t) for t in ctx.dirty_tensors}
    nondiff = {id(t) for t in ctx.non_differentiable}
    input_ids = {id(a) for a in args if isinstance(a, Tensor)}
    nondiff = {k for k, o in enumerate(outs) if id(o) in nondiff}
    for k, o in enumerate(outs):  # an input returned as is: the output is a new alias
        if isinstance(o, Tensor) and id(o) in input_ids and id(o) not in dirty:
            alias = wrap(o._data)
            alias._vc = o._vc
            outs[k] = alias
    if record:
        for t in ctx.dirty_tensors:
            if t._grad_fn is None and t._requires_grad and t._base is None:
                raise RuntimeError("a leaf Variable that requires grad has been used in an "
                                   "in-place operation.")
        ctx.next_functions = collect_next(args, None)[0]
        ctx._input_meta = tuple((a._data.shape, a._data.dtype) if isinstance(a, Tensor)
                                else None for a in args)
        ctx._out_meta = tuple((o._data.shape, o._data.dtype) if isinstance(o, Tensor)
                              else ((), None) for o in outs)
        for k, o in enumerate(outs):
            if not isinstance(o, Tensor):
                continue
            if k in nondiff or not is_inexact(o._data.dtype):
                o._requires_grad = False
                continue
            o._grad_fn, o._output_nr, o._requires_grad = ctx, k, True
        out_ids = {id(o): k for k, o in enumerate(outs) if isinstance(o, Tensor)}
        ctx._saved = [None if t is None else SavedTensor(t, id(t) in out_ids
                                                         and id(t) not in input_ids)
                      for t in ctx.to_save]
    else:
        ctx._saved = [None if t is None else SavedTensor(t, False) for t in ctx.to_save]
        ctx._out_meta = tuple((o._data.shape, o._data.dtype) if isinstance(o, Tensor)
                              else ((), None) for o in outs)
    if forward_ad.state.level is not None:
        _forward(cls, ctx, args, outs)
    return outs[0] if single else tuple(outs)


def _forward(cls, ctx, args, outs):
    """Forward mode through a Function: its ``jvp`` maps input tangents to output ones."""
    tangents = [forward_ad.tangent_of(a) if isinstance(a, Tensor) else None for a in args]
    if all(t is None for t in tangents):
        return
    tangents = [t if t is not None or not isinstance(a, Tensor) or not ctx.materialize_grads
                else wrap(a._data * 0) for a, t in zip(args, tangents, strict=True)]
    ctx._in_forward_jvp = True
    try:
        if forward_ad.state.batch is None:
            res = cls.jvp(ctx, *tangents)
        else:
            # A vectorized forward-mode jacobian: the user's jvp is written for one
            # direction (it is user code, not batchable as the ops are), so it runs once
            # per direction, as PyTorch's vmap fallback does for such Functions.
            per = [cls.jvp(ctx, *(t[k] if isinstance(t, Tensor) else t for t in tangents))
                   for k in range(forward_ad.state.batch)]
            per = [p if isinstance(p, tuple) else (p,) for p in per]
            res = tuple(None if per[0][i] is None else
                        wrap(get_array_module(per[0][i]._data).stack([p[i]._data for p in per]))
                        for i in range(len(per[0])))
    finally:
        ctx._in_forward_jvp = False
    res = res if isinstance(res, tuple) else (res,)
    if len(res) != len(outs):
        raise RuntimeError(f"function {cls.__name__}Backward returned an incorrect number of "
                           f"forward gradients (expected {len(outs)}, got {len(res)})")
    for o, t in zip(outs, res, strict=True):
        if isinstance(o, Tensor) and t is not None:
            forward_ad.set_tangent(o, t)


class InplaceFunction(Function):
    """A Function with an ``inplace`` flag (legacy base class kept for compatibility)."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace


class NestedIOFunction(Function):
    """Legacy nested-input Function: not supported."""

    def __init__(self, *args, **kwargs):
        raise NotImplementedError("NestedIOFunction (legacy autograd) is not supported")
