"""Forward-mode AD: dual tensors carry a tangent that every op pushes forward.

Inside ``with dual_level():`` a tensor made by ``make_dual(primal, tangent)``
carries ``tangent``; each op's jvp rule (declared beside its vjp in the op's
``defop``) gives its output's tangent, and ``unpack_dual`` reads it back.
Outside a level nothing is tracked: ops check one flag. One level at a time,
as PyTorch supports today.

>>> with dual_level():
...     y = make_dual(x, v).sin()
...     jvp = unpack_dual(y).tangent      # cos(x) * v
"""

import inspect
from collections import namedtuple

from .._dtype import is_inexact, opmath_arrays
from .._tensor import Tensor, wrap
from ..backend import get_array_module, host_array_module, to_device
from ..backend.functions import facade, functions
from . import grad_mode
from ._backward import grad as _grad
from ._batched import INPLACE, Batched, _broadcast_to, levels_of
from ._batched_xp import BatchedNumpy, covering_namespace
from ._forward_state import state

__all__ = ["dual_level", "make_dual", "unpack_dual", "enter_dual_level", "exit_dual_level",
           "UnpackedDualTensor"]


class _Level:
    """A level's token: tangents stored under another token are not seen."""

    __slots__ = ("idx",)

    def __init__(self, idx):
        self.idx = idx


def enter_dual_level():
    """Open a forward-AD level; returns its index (0: nesting is not supported)."""
    if state.level is not None:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    state.level = _Level(0)
    state.output_tangents = {}
    return 0


def exit_dual_level(*, level=None):
    """Close the level: every tangent made in it is dropped."""
    if state.level is None or level not in (None, state.level.idx):
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that "
                           "was created. This is not supported.")
    state.level = None
    state.output_tangents = None


class dual_level:
    """Context manager of a forward-AD level (``with dual_level(): ...``)."""

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, *exc):
        exit_dual_level()


def _check_level(level):
    if state.level is None:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level "
                           "exists, make sure to enter_dual_level() first.")
    if level not in (None, state.level.idx):
        raise RuntimeError(f"Invalid level {level}: only level {state.level.idx} is active "
                           "(nested forward mode AD is not supported)")


def tangent_of(t):
    """``t``'s tangent at the active level, or None."""
    fw = t._fw
    if fw is None or fw[0] is not state.level:
        return None
    return fw[1]


def set_tangent(t, tangent):
    t._fw = (state.level, tangent)


def make_dual(tensor, tangent, *, level=None):
    """A view of ``tensor`` whose tangent is ``tangent`` (same shape and dtype)."""
    _check_level(level)
    if not isinstance(tensor, Tensor) or not isinstance(tangent, Tensor):
        raise TypeError("make_dual expects Tensors for the primal and the tangent")
    if not tensor.is_floating_point() and not tensor.is_complex():
        raise ValueError(f"Expected primal to be floating point or complex, but got: "
                         f"{tensor.dtype}")
    if not tangent.is_floating_point() and not tangent.is_complex():
        raise ValueError(f"Expected tangent to be floating point or complex, but got: "
                         f"{tangent.dtype}")
    if tangent.shape != tensor.shape:
        raise RuntimeError(f"Trying to set a forward gradient that has a different size than "
                           f"that of the original Tensor, this is not supported. Tensor is of "
                           f"size {list(tensor.shape)} while the given forward gradient is of "
                           f"size {list(tangent.shape)}.")
    if tangent.dtype is not tensor.dtype:
        tangent = tangent.to(tensor.dtype)
    prev, tensor._fw = tensor._fw, None
    try:
        out = tensor.view_as(tensor)
    finally:
        tensor._fw = prev
    set_tangent(out, tangent)
    return out


UnpackedDualTensor = namedtuple("UnpackedDualTensor", ["primal", "tangent"])
UnpackedDualTensor.__doc__ = "``unpack_dual``'s result: the primal (a view) and the tangent."


def unpack_dual(tensor, *, level=None):
    """``(primal, tangent)``: the primal is a view without tangent; tangent None if none."""
    if state.level is None:
        return UnpackedDualTensor(tensor, None)
    _check_level(level)
    tangent = tangent_of(tensor)
    if tangent is None:
        return UnpackedDualTensor(tensor, None)
    tensor._fw = None
    try:
        primal = tensor.view_as(tensor)
    finally:
        set_tangent(tensor, tangent)
    return UnpackedDualTensor(primal, tangent)


# ---- tangent propagation through ops (called by ops._registry.apply when a level is on) --

_SIGS = {}


def _params(fn):
    p = _SIGS.get(fn)
    if p is None:
        p = _SIGS[fn] = tuple(inspect.signature(fn).parameters)
    return p


def propagate(op, values, arrays, attrs, outs):
    """Set the tangents of ``outs`` from the inputs' tangents with ``op``'s jvp rule.

    Rules run on arrays (``xp``: their array module), or on Tensors through the differentiable
    facade when grad mode is on and a primal or tangent requires grad, so tangents
    can be differentiated again (forward-over-reverse). They run with the level off:
    a tangent has no tangent of its own.
    """
    tangents = [tangent_of(v) if isinstance(v, Tensor) else None for v in values]
    if all(t is None for t in tangents):
        return
    jvp = op.jvp
    if jvp is None:
        if not op.differentiable:
            return
        raise NotImplementedError(f"Trying to use forward AD with {op.name} that does not "
                                  "support it because it has not been implemented yet.")
    single = type(outs) is not tuple
    outs_t = (outs,) if single else outs
    level, state.level = state.level, None
    try:
        if state.batch is not None:
            t_out = _batched(op, jvp, values, arrays, attrs, outs_t, tangents, single)
        elif jvp == "transpose":
            t_out = _transpose(op, values, tangents, attrs, outs_t)
        else:
            t_out = _tangents(op, jvp, values, arrays, attrs, outs_t, tangents, single)
    finally:
        state.level = level
    for o, t in zip(outs_t, t_out, strict=True):
        if t is not None:
            if _reads_primals(op):
                t = batched_as(t, values)
            set_tangent(o, t)
            if o._grad_fn is not None:
                state.output_tangents[(o._grad_fn, o._output_nr)] = o._fw


def _namespace(tangents, batch):
    """The ``xp`` of jvp rules on batched ``tangents``: over their data's module."""
    first = next((t for t in tangents if type(t) is Batched), None)
    return BatchedNumpy(batch) if first is None else first.batched_namespace()


def _batched(op, jvp, values, arrays, attrs, outs_t, tangents, single):
    """Tangents with a leading batch dim (one forward pass for every direction): the jvp
    rule runs once on :class:`~._batched.Batched` tangents, which map each NumPy call
    past the batch dim, as ``vmap`` does. They are not differentiable again."""
    if jvp == "transpose":
        return _transpose(op, values, tangents, attrs, outs_t, state.batch)
    ts = [None if t is None else Batched(t._data) for t in tangents]
    try:
        return _tangents(op, jvp, values, arrays, attrs, outs_t, ts, single,
                         _namespace(ts, state.batch))
    except (TypeError, AttributeError, NotImplementedError) as e:  # no batching rule
        raise NotImplementedError(f"vectorized forward mode: the jvp of {op.name} cannot run "
                                  f"batched ({e})") from e


def inplace_tangent(op, values, attrs):
    """The tangent an in-place op gives ``values[0]``: its out-of-place form's, computed
    before the write (None when no input has a tangent). A differentiable tangent (see
    :func:`propagate`) is computed from a copy of ``values[0]``, which the write leaves
    as it was for the tangent's backward."""
    if all(not isinstance(v, Tensor) or tangent_of(v) is None for v in values):
        return None
    old = tangent_of(values[0])
    if grad_mode.state.enabled and any(isinstance(v, Tensor) and v.requires_grad
                                       for v in values):
        values = (values[0].clone(), *values[1:])
    tangent = tangent_of(_record(op, values, attrs))
    if old is not None and tangent is not None and \
            levels_of(tangent._data) - levels_of(old._data):
        raise RuntimeError(INPLACE)  # (PyTorch copies the tangent into self's)
    return tangent


_READS = {}


def _reads_primals(op):
    """Whether ``op``'s tangent rule reads a primal input or output (a linear op's does
    not)."""
    reads = _READS.get(op)
    if reads is None:
        jvp, names = op.jvp, {*op.inputs, *op.outputs}
        if jvp == "elementwise":
            reads = any(names.intersection(_params(r)) for r in op.vjp.values())
        elif callable(jvp):
            reads = bool(names.intersection(_params(jvp)))
        else:
            reads = jvp != "linear"
        _READS[op] = reads
    return reads


def batched_as(t, primals):
    """Tensor ``t``, batched (with zeros) over the vmap levels of the tensors among
    ``primals`` that it lacks, as PyTorch's tangents are: its formulas combine every
    primal (``other_t * self_p`` for ``mul(x, 2.0)``: batched where ``x`` is, even though
    the term is zero), and its jacfwd's basis is made by ``new_zeros`` of the primal.
    That decides where a later in-place op can write the tangent (see
    :func:`inplace_tangent`)."""
    have = levels_of(t._data)
    for v in primals:
        if isinstance(v, Tensor) and levels_of(v._data) - have:
            a = v._data
            xp = get_array_module(a)
            t = t + wrap(xp.zeros_like(xp.sum(a[(slice(0, 1),) * a.ndim]),
                                       dtype=t._data.dtype))
            have = levels_of(t._data)
    return t


def _env(op, xp, ins, res, attrs, values):
    """What a rule may name (see the ops._registry docstring)."""
    env = {"xp": xp}
    env.update(zip(op.inputs, ins, strict=True))
    env.update(zip(op.outputs, res, strict=False))
    env.update(zip(op.attrs, attrs, strict=True))
    for n, v in zip(op.inputs, values, strict=True):
        env[n + "_shape"] = v._data.shape if isinstance(v, Tensor) else None
        env[n + "_strides"] = v._data.strides if isinstance(v, Tensor) else None
    return env


def _elementwise(op, env, tangents):
    """Each input's vjp rule with ``grad`` replaced by its tangent, summed."""
    t_out = None
    for n, t in zip(op.inputs, tangents, strict=True):
        rule = op.vjp.get(n)
        if t is None or rule is None:
            continue
        env["grad"] = t
        ti = rule(*(env[a] for a in _params(rule)))
        t_out = ti if t_out is None else t_out + ti
    return t_out


def _tangents(op, jvp, values, arrays, attrs, outs_t, tangents, single, bxp=None):
    """The outputs' tangents by ``op``'s jvp rule; ``bxp``: the ``xp`` of batched
    tangents (see :func:`_batched`), whose rules run on arrays."""
    diff = bxp is None and grad_mode.state.enabled and any(
        isinstance(v, Tensor) and v.requires_grad for v in (*values, *tangents))
    if diff:
        xp = facade(outs_t[0])
        ins = list(values)
        res = outs_t
    else:
        ins = arrays  # in their compute dtype (see _dtype.OPMATH): so are the tangents
        res = tuple(o._data for o in outs_t)
        if bxp is None:
            tangents = [None if t is None else t._data for t in tangents]
            if op.upcast_rules:
                up = opmath_arrays(tangents)
                tangents = tangents if up is None else up[0]
            # (under vmap, over the tangents' batch levels too: the buffers a rule makes
            # must hold the tangents it writes there)
            xp = covering_namespace(res[0], *tangents)
        else:
            xp = bxp
    if jvp == "linear":  # (on the tangents alone: theirs is the namespace, batched under
        # vmap while the primals are not, as jacfwd's)
        lxp = next((get_array_module(t) for t in tangents if type(t) is Batched), xp)
        t_out = _linear(op, values, ins, tangents, attrs, diff, xp if diff else lxp)
    elif jvp == "multilinear":  # one term per input with a tangent, the others primal
        t_out = None
        for k, t in enumerate(tangents):
            if t is not None and op.inputs[k] in op.vjp:
                args = list(ins)
                args[k] = t
                term = _run(op, args, attrs, diff, xp)
                t_out = term if t_out is None else t_out + term
    else:
        env = _env(op, xp, ins, res, attrs, values)
        if jvp == "elementwise":
            t_out = _elementwise(op, env, tangents)
        else:
            env.update((n + "_t", t) for n, t in zip(op.inputs, tangents, strict=True))
            t_out = jvp(*(env[a] for a in _params(jvp)))
    result = []
    for o, t in zip(outs_t, (t_out,) if single else t_out, strict=True):
        if t is None or not is_inexact(o._data.dtype):
            result.append(None)
        elif bxp is not None:
            result.append(wrap(_settle(bxp, t, o._data)))
        elif diff:
            if tuple(t.shape) != o._data.shape:
                t = xp.broadcast_to(t, o._data.shape)
            result.append(t if t.dtype is o.dtype else t.to(o.dtype))
        else:
            if t.shape != o._data.shape:
                t = xp.broadcast_to(t, o._data.shape)
            result.append(wrap(t.astype(o._data.dtype, copy=False) if t.dtype != o._data.dtype
                               else t))
    return result


def _settle(bxp, t, o):
    """A batched rule's result as data of the batch of ``o``-shaped, ``o``-typed tangents
    (a result that does not depend on the tangents is the same for every direction)."""
    if type(t) is not Batched:
        xp = get_array_module(o)
        t = xp.asarray(t)
        t = Batched(xp.broadcast_to(t, (bxp.batch,) + t.shape))
    if t.shape != o.shape:
        t = _broadcast_to(t, o.shape)
    d = t.data
    return d if d.dtype == o.dtype else d.astype(o.dtype)


def _linear(op, values, ins, tangents, attrs, diff, xp):
    """A linear op's tangent: the op applied to the tangents (zeros where none)."""
    args = []
    for n, v, a, t in zip(op.inputs, values, ins, tangents, strict=True):
        if n in op.vjp and isinstance(v, Tensor):
            if t is None:
                t = xp.zeros_like(a)
            args.append(t)
        else:
            args.append(a)
    return _run(op, args, attrs, diff, xp)


def _run(op, args, attrs, diff, xp):
    """``op``'s forward on ``args``: recorded (differentiable) in diff mode, where ``xp``
    is the facade."""
    if diff:
        return functions(xp).call(op, args, attrs)
    return op.forward(xp, *args, *attrs)


def _record(op, values, attrs):
    """``op`` run on Tensors ``values`` and recorded by autograd, the way a rule under
    ``create_graph`` runs an op: through the differentiable facade (the registry, which
    calls forward AD, is above it)."""
    first = next((v for v in values if isinstance(v, Tensor)), None)
    return functions(facade(first)).call(op, values, attrs)


def propagate_list(node_cls, inputs, outs, attrs):
    """Tangents through a list op (cat, stack, split, unbind): its node class's ``_jvp``
    on the tangents (zeros for inputs without one). The ops are linear, so the tangents
    depend on the input tangents alone: when one of those requires grad (and grad mode
    is on) the rule runs on Tensors, so the result can be differentiated again."""
    tangents = [tangent_of(v) for v in inputs]
    if all(t is None for t in tangents):
        return
    batch = state.batch
    multi = type(outs) is tuple
    out_list = outs if multi else (outs,)
    primals = [o._data for o in out_list]
    if batch is None and _differentiable(*tangents):
        ts = [wrap(_zeros_like(v._data)) if t is None else t
              for v, t in zip(inputs, tangents, strict=True)]
        res = node_cls._jvp(facade(out_list[0]), ts, primals, *attrs)
        for o, t in zip(out_list, res if multi else (res,), strict=True):
            if is_inexact(o._data.dtype):
                set_tangent(o, t if t.dtype is o.dtype else t.to(o.dtype))
        return
    if batch is None:
        ts = [_zeros_like(v._data) if t is None else t._data
              for v, t in zip(inputs, tangents, strict=True)]
        # (over the tangents' batch levels too, as propagate's)
        res = node_cls._jvp(covering_namespace(primals[0], *ts), ts, primals, *attrs)
    else:  # once for every direction, on Batched tangents (see _batched)
        ts = [_zeros_like(v._data) if t is None else Batched(t._data)
              for v, t in zip(inputs, tangents, strict=True)]
        xp = _namespace(ts, batch)
        try:
            res = node_cls._jvp(xp, ts, primals, *attrs)
        except (TypeError, AttributeError, NotImplementedError) as e:
            raise NotImplementedError(f"vectorized forward mode: the jvp of "
                                      f"{node_cls.__name__} cannot run batched ({e})") from e
        res = [r.data for r in res] if multi else res.data
    for o, t in zip(out_list, res if multi else (res,), strict=True):
        if is_inexact(o._data.dtype):  # (batched, under vmap, where its tangents were)
            set_tangent(o, wrap(t if t.dtype == o._data.dtype else t.astype(o._data.dtype)))


def _transpose(op, values, tangents, attrs, outs, batch=None):
    """``J v`` as the derivative of ``u -> J^T u`` (the op's vjp rules, run on Tensors)
    applied to ``v``: the double-backward trick, for ops whose forward rule would only
    repeat the vjp's algebra. With a ``batch`` of directions (tangents with a leading
    batch dim) the second backward runs once for all of them (``is_grads_batched``).
    When grad mode is on and a primal or tangent requires grad, both backwards build
    graphs from the primals themselves, so the tangent can be differentiated again
    (reverse-over-forward), as the other jvp forms allow."""
    again = batch is None and grad_mode.state.enabled and any(
        isinstance(v, Tensor) and v.requires_grad for v in (*values, *tangents))
    with grad_mode.enable_grad():
        ins = [v if t is None else v.view_as(v) if again and v.requires_grad
               else v.detach().requires_grad_(True) for v, t in zip(values, tangents,
                                                                    strict=True)]
        res = _record(op, ins, attrs)
        res = res if type(res) is tuple else (res,)
        keep = [k for k, o in enumerate(res) if o.requires_grad]
        us = [wrap(_zeros_like(res[k]._data)).requires_grad_(True) for k in keep]
        diff = [x for x, t in zip(ins, tangents, strict=True) if t is not None]
        vs = [t if again else t.detach() for t in tangents if t is not None]
        g = _grad([res[k] for k in keep], diff, us, create_graph=True, allow_unused=True)
        pairs = [(gi, v) for gi, v in zip(g, vs, strict=True)
                 if gi is not None and gi.requires_grad]
        jv = (_grad([p[0] for p in pairs], us, [p[1] for p in pairs], allow_unused=True,
                    create_graph=again, is_grads_batched=batch is not None)
              if pairs else [None] * len(us))
    lead = () if batch is None else (batch,)
    out = [None] * len(outs)
    for k, t in zip(keep, jv, strict=True):
        if t is None:
            d = outs[k]._data
            t = wrap(get_array_module(d).zeros(lead + d.shape, d.dtype))
        out[k] = t if again else t.detach()
    return out


def _zeros_like(a):
    return get_array_module(a).zeros_like(a)


def _differentiable(*tangents):
    """Grad mode is on and a tangent requires grad: it must be built as a graph."""
    return grad_mode.state.enabled and any(t is not None and t.requires_grad for t in tangents)


def _write_view_tangent_graph(base, view, t, bt):
    """As :func:`write_view_tangent`, by out-of-place ops on tensors: recorded by autograd
    (reverse-over-forward), and batched under vmap whichever of the primal and the
    tangents is. The view's tangent is scattered into the base's (or zeros) at the
    places of the view's elements in the base's (C-contiguous) memory."""
    bd, vd = base._data, view._data
    size = bd.itemsize
    address = functions(get_array_module(bd)).address
    offset = (address(vd) - address(bd)) // size
    host = host_array_module()
    flat = host.arange(bd.size)[offset:]  # each element's place in the base's memory
    ids = host.lib.stride_tricks.as_strided(
        flat, vd.shape, tuple(st // size * flat.itemsize for st in vd.strides))
    ids = wrap(to_device(host.ascontiguousarray(ids).reshape(-1), base.device))
    old = (wrap(_zeros_like(bd)) if bt is None else bt).reshape(-1)
    src = (view.new_zeros(vd.shape) if t is None else t).reshape(-1)
    set_tangent(base, old.scatter(0, ids, src).reshape(bd.shape))


def write_view_tangent(view):
    """After an in-place op on a view, its tangent lands in its base's tangent (the base
    gets a zero tangent first if it had none), at the view's place in memory: the
    tangent arrays mirror the memory layout of the arrays they describe (each direction
    of a batch of tangents in its own copy of that memory)."""
    base, t = view._base, tangent_of(view)
    bd = base._data
    bt = tangent_of(base)
    by_ops = state.batch is None and bd.flags.c_contiguous
    if any(type(a) is Batched for a in (bd, *(x._data for x in (t, bt) if x is not None))):
        if not by_ops:  # (under vmap, no memory of one batch element to lay it in)
            raise NotImplementedError("forward AD under vmap of an in-place op on a view of "
                                      "a tensor that is not contiguous is not supported")
        _write_view_tangent_graph(base, view, t, bt)
        return
    xp = get_array_module(bd)
    root = bd
    while isinstance(root.base, xp.ndarray):
        root = root.base
    if not root.flags.c_contiguous:
        raise NotImplementedError("forward AD of an in-place op on a view whose memory is not "
                                  "contiguous is not supported")
    if by_ops and _differentiable(t, bt):
        _write_view_tangent_graph(base, view, t, bt)
        return
    lead = () if state.batch is None else (state.batch,)
    buf = xp.zeros(lead + (root.size,), dtype=bd.dtype)
    address = functions(xp).address

    def like(a):  # ``a``'s place in root's memory, in buf (in each direction's copy)
        off = (address(a) - address(root)) // a.itemsize
        return xp.lib.stride_tricks.as_strided(buf[..., off:], lead + a.shape,
                                               buf.strides[:len(lead)] + a.strides)
    out = like(bd)
    if bt is not None:
        out[...] = bt._data
    like(view._data)[...] = 0 if t is None else t._data
    set_tangent(base, wrap(out))
