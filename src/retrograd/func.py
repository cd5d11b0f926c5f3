"""``torch.func``'s function transforms on retrograd's autograd: ``grad``,
``grad_and_value``, ``vjp``, ``jvp``, ``jacrev``, ``jacfwd``, ``hessian`` and
``functional_call``. They compose (``grad(grad(f))``, ``jacrev(jacrev(f))``).

Each transform differentiates with respect to fresh aliases of the chosen arguments, so
the function sees ordinary tensors. A transform builds a differentiable result only where
something outside can use it: when an argument already requires grad (an enclosing
transform's alias, or a user's leaf) or when the function's graph reaches tensors it did
not get as arguments (a closure over parameters); otherwise the result is plain, as in
PyTorch. ``vmap`` lives in :mod:`._vmap` (tensors over batched arrays).
"""

import weakref
from contextlib import contextmanager

from . import autograd
from ._creation import eye
from ._creation import zeros_like
from ._tensor import Tensor
from .autograd import forward_ad
from .autograd.grad_mode import enable_grad
from ._vmap import vmap
from ._vmap.api import vmap_at
from .autograd._batched import new_level
from .ops.joining import stack

__all__ = ["vmap", "stack_module_state", "grad", "grad_and_value", "vjp", "jvp", "jacrev",
           "jacfwd", "hessian",
           "functional_call"]


# ---- pytrees: nested tuples, lists and dicts of tensors -------------------------------------
def _flatten(tree):
    """The tensors of ``tree`` in order, and the function that puts new leaves back."""
    if isinstance(tree, (tuple, list)):
        parts = [_flatten(x) for x in tree]
        leaves = [leaf for p in parts for leaf in p[0]]

        def build(new, kind=type(tree)):
            out, i = [], 0
            for sub, rebuild in parts:
                out.append(rebuild(new[i:i + len(sub)]))
                i += len(sub)
            return kind._make(out) if hasattr(kind, "_make") else kind(out)
        return leaves, build
    if isinstance(tree, dict):
        keys = list(tree)
        leaves, build_values = _flatten([tree[k] for k in keys])
        return leaves, lambda new: dict(zip(keys, build_values(new), strict=True))
    if isinstance(tree, Tensor):
        return [tree], lambda new: new[0]
    return [], lambda new: tree


def _check_tensors(tree):
    """Every leaf of an argument being differentiated is a Tensor (PyTorch's check)."""
    if isinstance(tree, (tuple, list)):
        for x in tree:
            _check_tensors(x)
    elif isinstance(tree, dict):
        for x in tree.values():
            _check_tensors(x)
    elif not isinstance(tree, Tensor):
        raise ValueError(f"Thing passed to transform API must be Tensor, got {type(tree)}")


def _argnums(argnums, nargs, fn):
    if isinstance(argnums, int):
        nums = (argnums,)
    elif isinstance(argnums, tuple) and argnums and all(isinstance(a, int) for a in argnums):
        nums = argnums
    else:
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    out = []
    for a in nums:
        if not -nargs <= a < nargs:
            raise RuntimeError(f"Got argnum={a}, but only {nargs} positional inputs")
        out.append(a % nargs)
    if len(set(out)) != len(out):
        raise RuntimeError(f"argnums elements must be unique, got {argnums}")
    return out


def _alias(x, fn):
    """A fresh differentiable stand-in for ``x``: a view when ``x`` requires grad (an
    enclosing transform differentiates through it), else a new leaf carrying ``x``'s
    forward-mode tangent, if any."""
    if not x.is_floating_point():
        raise RuntimeError("only Tensors of floating point dtype can require gradients")
    if x.requires_grad:
        return x.view_as(x)
    a = x.detach().requires_grad_()
    tangent = forward_ad.tangent_of(x)
    if tangent is not None:  # inside jvp/jacfwd: forward-over-reverse keeps the direction
        forward_ad.set_tangent(a, tangent)
    key = id(a)
    _ALIASES[key] = weakref.ref(a, lambda _, key=key: _ALIASES.pop(key, None))
    return a


# The leaves transforms made (id -> weak reference): a graph that reaches only these and
# no user tensor gives results that nothing outside can differentiate.
_ALIASES = {}


def _reaches_outside(outputs):
    """Whether the graph of ``outputs`` reaches a leaf that requires grad and is not a
    transform's alias (a parameter the function closed over, say)."""
    seen, stack = set(), []
    for o in outputs:
        if o.grad_fn is not None:
            stack.append(o.grad_fn)
        elif o.requires_grad and not _is_alias(o):
            return True
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        var = getattr(node, "variable", None)
        if var is not None and not _is_alias(var):
            return True
        stack.extend(n for n, _ in node.next_functions if n is not None)
    return False


def _is_alias(t):
    ref = _ALIASES.get(id(t))
    return ref is not None and ref() is t


class _Diff:
    """The chosen arguments of one call replaced by aliases: ``args`` to call the function
    with, ``leaves`` (the aliases) and ``pack`` (their results, in the arguments' shape)."""

    __slots__ = ("args", "leaves", "outer", "_builds", "_sizes", "_single")

    def __init__(self, args, argnums, fn):
        nums = _argnums(argnums, len(args), fn)
        self.args = list(args)
        self.leaves, self._builds, self._sizes = [], [], []
        self.outer = False  # results must stay differentiable (see needs_graph)
        for a in nums:
            _check_tensors(args[a])
            flat, build = _flatten(args[a])
            self.outer |= any(x.requires_grad for x in flat)
            aliases = [_alias(x, fn) for x in flat]
            # inside jvp/jacfwd, the backward must run on tensors so that tangents flow
            self.outer |= any(forward_ad.tangent_of(x) is not None for x in aliases)
            self.args[a] = build(aliases)
            self.leaves += aliases
            self._builds.append(build)
            self._sizes.append(len(aliases))
        self._single = isinstance(argnums, int)

    def pack(self, values):
        out, i = [], 0
        for build, n in zip(self._builds, self._sizes, strict=True):
            out.append(build(list(values[i:i + n])))
            i += n
        return out[0] if self._single else tuple(out)

    def needs_graph(self, outputs):
        """Whether results must be differentiable: an argument requires grad outside or
        carries a tangent, or the outputs' graph reaches tensors other than the aliases."""
        return self.outer or _reaches_outside(outputs)


def _split_aux(out, has_aux, fn):
    if not has_aux:
        return out, None
    if not (isinstance(out, tuple) and len(out) == 2):
        raise RuntimeError(f"{fn}(f, ...)(*args): output of function f should be a tuple: "
                           "(output, aux) if has_aux is True")
    return out


def _detach_tree(tree):
    leaves, build = _flatten(tree)
    return build([x.detach() for x in leaves])


def _grads(outputs, diff, cotangents, create_graph, retain_graph=None):
    """Gradients for every alias: zeros where an alias (or every output) is unused, as
    PyTorch's transforms give."""
    keep = [k for k, o in enumerate(outputs) if o.requires_grad]
    grads = [None] * len(diff.leaves)
    if keep:
        grads = autograd.grad([outputs[k] for k in keep], diff.leaves,
                              None if cotangents is None else [cotangents[k] for k in keep],
                              retain_graph=create_graph if retain_graph is None else
                              retain_graph, create_graph=create_graph, allow_unused=True)
    return [zeros_like(x) if g is None else g for g, x in zip(grads, diff.leaves, strict=True)]


def _structure(tree):
    """The shape of a pytree without its leaves (to compare cotangents with outputs)."""
    if isinstance(tree, (tuple, list)):
        return (type(tree), tuple(_structure(x) for x in tree))
    if isinstance(tree, dict):
        return (dict, tuple((k, _structure(v)) for k, v in tree.items()))
    return Tensor if isinstance(tree, Tensor) else type(tree)


# ---- reverse mode ---------------------------------------------------------------------------
def grad_and_value(func, argnums=0, has_aux=False):
    """``f``'s gradient with respect to the ``argnums`` arguments, and its value."""
    def wrapper(*args, **kwargs):
        with enable_grad():
            diff = _Diff(args, argnums, "grad_and_value")
            out, aux = _split_aux(func(*diff.args, **kwargs), has_aux, "grad_and_value")
            if not isinstance(out, Tensor):
                raise RuntimeError("grad_and_value(f)(*args): Expected f(*args) to return a "
                                   f"Tensor, got {type(out)}")
            if out.ndim != 0:
                raise RuntimeError("grad_and_value(f)(*args): Expected f(*args) to return a "
                                   f"scalar Tensor, got tensor with {out.ndim} dims. Maybe you "
                                   "wanted to use the vjp or jacrev APIs instead?")
            graph = diff.needs_graph([out])
            g = diff.pack(_grads([out], diff, None, graph))
        if not graph:
            out, aux = out.detach(), _detach_tree(aux)
        return (g, (out, aux)) if has_aux else (g, out)
    return wrapper


def grad(func, argnums=0, has_aux=False):
    """The gradient of a scalar function, as a function of the same arguments."""
    gv = grad_and_value(func, argnums, has_aux)

    def wrapper(*args, **kwargs):
        g, value = gv(*args, **kwargs)
        return (g, value[1]) if has_aux else g
    return wrapper


def vjp(func, *primals, has_aux=False):
    """``(output, vjp_fn)``: ``vjp_fn(cotangents)`` gives the cotangents of all primals."""
    with enable_grad():
        diff = _Diff(primals, tuple(range(len(primals))), "vjp") if primals else None
        if diff is None:
            raise RuntimeError("vjp(f, *primals): Expected at least one primal")
        out, aux = _split_aux(func(*diff.args), has_aux, "vjp")
        flat_out, build_out = _flatten(out)
        if not flat_out or len(flat_out) != len(_flatten_all(out)):
            raise RuntimeError("vjp(f, *primals): Expected f to be a function that has "
                               "non-empty output that is a Tensor or a (nested) tuple, list or "
                               "dict of Tensors")
        graph = diff.needs_graph(flat_out)

    def vjp_fn(cotangents, retain_graph=True, create_graph=None):
        flat_ct, _ = _flatten(cotangents)
        if _structure(cotangents) != _structure(out):
            raise RuntimeError("Expected pytree structure of cotangents to be the same as "
                               "pytree structure of outputs to the function")
        for c, o in zip(flat_ct, flat_out, strict=True):
            if tuple(c.shape) != tuple(o.shape):
                raise RuntimeError(f"Mismatch in shape: cotangent has shape {c.shape} and "
                                   f"output has shape {o.shape}")
        make = graph if create_graph is None else create_graph
        with enable_grad():
            grads = _grads(flat_out, diff, flat_ct, make, retain_graph)
        return tuple(diff.pack(grads))

    result = build_out([o if graph else o.detach() for o in flat_out])
    if has_aux:
        return result, vjp_fn, aux if graph else _detach_tree(aux)
    return result, vjp_fn


def _flatten_all(tree):
    """Every leaf of ``tree``, tensors or not (to reject non-tensor outputs)."""
    if isinstance(tree, (tuple, list)):
        return [leaf for x in tree for leaf in _flatten_all(x)]
    if isinstance(tree, dict):
        return [leaf for x in tree.values() for leaf in _flatten_all(x)]
    return [tree]


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None):
    """The Jacobian by reverse mode: one batched backward over the identity. Each output
    leaf's entry has shape ``output.shape + input.shape``."""
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")

    def wrapper(*args, **kwargs):
        # (the level of the basis batch, taken before func runs: vmaps inside func nest
        # above it, as jacrev(vmap(f)) nests vmap inside the Jacobian's batch)
        with enable_grad(), new_level() as level:
            diff = _Diff(args, argnums, "jacrev")
            out, aux = _split_aux(func(*diff.args, **kwargs), has_aux, "jacrev")
            flat_out, build_out = _flatten(out)
            graph = diff.needs_graph(flat_out)
            jacs = [diff.pack(_jacobian_rows(o, diff, graph, level)) for o in flat_out]
        jac = build_out(jacs)
        if has_aux:
            return jac, aux if graph else _detach_tree(aux)
        return jac
    return wrapper


def _jacobian_rows(out, diff, graph, level):
    """d out / d leaf for every alias leaf, shaped ``out.shape + leaf.shape``: one backward
    over the batch of basis vectors (vmap at ``level``; batched gradients when the
    Jacobian must be differentiable)."""
    n = out.nelement()
    if n == 0 or not out.requires_grad:  # nothing to differentiate: zeros, as PyTorch's
        return [zeros_like(x).expand(n, *x.shape).reshape(tuple(out.shape) + tuple(x.shape))
                for x in diff.leaves]
    basis = eye(n, dtype=out.dtype, device=out.device).reshape((n,) + tuple(out.shape))
    if graph:
        rows = autograd.grad([out], diff.leaves, [basis], retain_graph=True,
                             create_graph=True, allow_unused=True, is_grads_batched=True)
    else:
        def row(ct):
            gs = autograd.grad([out], diff.leaves, [ct], retain_graph=True, allow_unused=True)
            return [zeros_like(x) if g is None else g
                    for g, x in zip(gs, diff.leaves, strict=True)]
        rows = vmap_at(level, row)(basis)
    return [(zeros_like(x).expand(n, *x.shape) if g is None else g).reshape(
        tuple(out.shape) + tuple(x.shape)) for g, x in zip(rows, diff.leaves, strict=True)]


# ---- forward mode ---------------------------------------------------------------------------
def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """``(func(*primals), J @ tangents)`` in one forward-mode pass."""
    if not isinstance(primals, tuple):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals to be a tuple. E.g. it "
                           "should be valid to call f(*primals).")
    if not isinstance(tangents, tuple) or _structure(tangents) != _structure(primals):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals and tangents to have "
                           "the same python structure. For example, if primals is a tuple of "
                           "3 tensors, tangents also must be.")
    if strict:
        raise RuntimeError("jvp(f, primals, tangents): strict=True is not implemented")
    flat_p, build = _flatten(primals)
    flat_t, _ = _flatten(tangents)
    for p, t in zip(flat_p, flat_t, strict=True):
        if tuple(p.shape) != tuple(t.shape):
            raise RuntimeError(f"jvp(f, primals, tangents): Expected primals and tangents to "
                               f"have the same shape, got {p.shape} and {t.shape}")
    with forward_ad.dual_level():
        duals = [forward_ad.make_dual(p, t) for p, t in zip(flat_p, flat_t, strict=True)]
        out, aux = _split_aux(func(*build(duals)), has_aux, "jvp")
        flat_out, build_out = _flatten(out)
        pairs = [forward_ad.unpack_dual(o) for o in flat_out]
    primals_out = [p.primal for p in pairs]
    tangents_out = [zeros_like(p.primal) if p.tangent is None else p.tangent for p in pairs]
    if not (any(x.requires_grad for x in flat_p + flat_t)
            or _reaches_outside(primals_out + tangents_out)):
        primals_out = [x.detach() for x in primals_out]
        tangents_out = [x.detach() for x in tangents_out]
    primal_out, tangent_out = build_out(primals_out), build_out(tangents_out)
    if has_aux:
        return primal_out, tangent_out, aux
    return primal_out, tangent_out


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """The Jacobian by forward mode: every direction in one batched forward pass (tall
    Jacobians: few inputs, many outputs). Batched tangents are not differentiable again,
    so where the Jacobian itself must be (an argument requires grad, the function closes
    over tensors that do, or a forward-mode level is already active) it is taken by
    reverse mode instead: the same matrix."""
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")

    def wrapper(*args, **kwargs):
        nums = _argnums(argnums, len(args), "jacfwd")
        for a in nums:
            _check_tensors(args[a])
        flats = [_flatten(args[a]) for a in nums]
        inputs = tuple(x for flat, _ in flats for x in flat)
        for x in inputs:
            if not (x.is_floating_point() or x.is_complex()):
                raise ValueError(f"Expected primal to be floating point or complex, but got: "
                                 f"{x.dtype}")
        if _jacobian_needs_graph(func, args, kwargs, inputs, has_aux):
            return jacrev(func, argnums, has_aux=has_aux)(*args, **kwargs)
        aux_box = []

        def flat_func(*leaves):
            call, i = list(args), 0
            for a, (flat, build) in zip(nums, flats, strict=True):
                call[a] = build(list(leaves[i:i + len(flat)]))
                i += len(flat)
            out, aux = _split_aux(func(*call, **kwargs), has_aux, "jacfwd")
            aux_box.append(aux)
            flat_out, build_out = _flatten(out)
            aux_box.append(build_out)
            return tuple(flat_out)

        jac = _forward_jacobian(flat_func, inputs, randomness)
        build_out = aux_box[1]
        per_out = []
        for row in jac:
            values, i = [], 0
            for flat, build in flats:
                values.append(build(list(row[i:i + len(flat)])))
                i += len(flat)
            per_out.append(values[0] if isinstance(argnums, int) else tuple(values))
        result = build_out(per_out)
        return (result, _detach_tree(aux_box[0])) if has_aux else result
    return wrapper


def _forward_jacobian(func, inputs, randomness):
    """d output / d input for every output and input of ``func`` (``[out][in]``, shaped
    ``out.shape + in.shape``): one jvp, vmapped over the basis of all inputs' directions."""
    sizes = [x.numel() for x in inputs]
    n = sum(sizes)
    with new_level() as level:
        basis, start = [], 0
        for x, k in zip(inputs, sizes, strict=True):
            rows = eye(n, dtype=x.dtype, device=x.device)[:, start:start + k]
            basis.append(forward_ad.batched_as(rows.reshape((n,) + tuple(x.shape)), [x]))
            start += k

        def push(*tangents):
            return tuple(jvp(func, inputs, tangents)[1])
        columns = vmap_at(level, push, randomness)(*basis)
    jac = []
    for col in columns:
        per_in, start = [], 0
        for x, k in zip(inputs, sizes, strict=True):
            part = col[start:start + k].reshape(tuple(x.shape) + tuple(col.shape[1:]))
            nx = x.dim()
            per_in.append(part.permute(*range(nx, part.dim()), *range(nx)))
            start += k
        jac.append(tuple(per_in))
    return jac


def _jacobian_needs_graph(func, args, kwargs, inputs, has_aux):
    if forward_ad.state.level is not None or any(x.requires_grad for x in inputs):
        return True
    with enable_grad():  # one plain call: does the output reach a tensor requiring grad?
        out, _ = _split_aux(func(*args, **kwargs), has_aux, "jacfwd")
    return _reaches_outside(_flatten(out)[0])


def hessian(func, argnums=0):
    """The Hessian of a scalar function: the reverse-mode Jacobian of its gradient."""
    return jacrev(jacrev(func, argnums), argnums)


# ---- modules as functions -------------------------------------------------------------------
@contextmanager
def _swapped(module, values, tie_weights, strict):
    """``module`` with the named parameters and buffers in ``values`` put in place."""
    named = dict(module.named_parameters(remove_duplicate=False))
    named.update(module.named_buffers(remove_duplicate=False))
    if strict:
        missing = sorted(set(named) - set(values))
        unexpected = sorted(set(values) - set(named))
        if missing or unexpected:
            msg = []
            if unexpected:
                msg.append("Unexpected key(s): " + ", ".join(repr(k) for k in unexpected))
            if missing:
                msg.append("Missing key(s): " + ", ".join(repr(k) for k in missing))
            raise RuntimeError("Error(s) in reparametrizing for " + module._get_name() + ":\n\t"
                               + "\n\t".join(msg) + ".")
    values = dict(values)
    if tie_weights:  # a tensor shared under several names takes the given value everywhere
        by_id = {}
        for name, t in named.items():
            by_id.setdefault(id(t), []).append(name)
        for names in by_id.values():
            given = [n for n in names if n in values]
            if given:
                for n in names:
                    if n in values and values[n] is not values[given[0]]:
                        raise ValueError(f"functional_call got multiple values for keys "
                                         f"{sorted(given)}, which are tied. Consider using "
                                         "tie_weights=False")
                    values[n] = values[given[0]]
    saved = []
    try:
        for name, value in values.items():
            owner, attr = _owner(module, name)
            store = owner._parameters if attr in owner._parameters else owner._buffers \
                if attr in owner._buffers else None
            if store is None:
                old = owner.__dict__.get(attr, _MISSING)
                saved.append((owner.__dict__, attr, old))
                owner.__dict__[attr] = value
            else:
                saved.append((store, attr, store[attr]))
                store[attr] = value
        yield
    finally:
        for store, attr, old in reversed(saved):
            if old is _MISSING:
                del store[attr]
            else:
                store[attr] = old


_MISSING = object()


def _owner(module, name):
    *path, attr = name.split(".")
    for p in path:
        module = getattr(module, p)
    return module, attr


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *,
                    tie_weights=True, strict=False):
    """Call ``module`` with some of its parameters and buffers replaced (by name) for this
    call only: the module itself is left as it was."""
    if isinstance(parameter_and_buffer_dicts, dict):
        values = parameter_and_buffer_dicts
    elif isinstance(parameter_and_buffer_dicts, (list, tuple)):
        values = {}
        for d in parameter_and_buffer_dicts:
            for k, v in d.items():
                if k in values:
                    raise ValueError(f"{k} appeared in multiple dictionaries; behavior of "
                                     "functional call is ambiguous")
                values[k] = v
    else:
        raise ValueError(f"Expected parameter_and_buffer_dicts to be a dict, or a list/tuple "
                         f"of dicts, but got {type(parameter_and_buffer_dicts)}")
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _swapped(module, values, tie_weights, strict):
        return module(*args, **(kwargs or {}))


def stack_module_state(models):
    """The parameters and buffers of ``models`` (one class, one mode) stacked by name, for
    ``vmap`` over ``functional_call``: ``(params, buffers)``. Stacked parameters are new
    leaves (an optimizer can take them).

    >>> params, buffers = stack_module_state([nn.Linear(3, 3) for _ in range(5)])
    """
    if len(models) == 0:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if len({m.training for m in models}) != 1:
        raise RuntimeError("stack_module_state: Expected all models to have the same "
                           "training/eval mode.")
    if any(type(m) is not type(models[0]) for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    named = [dict(m.named_parameters()) for m in models]
    params = {k: _stacked_leaf([p[k] for p in named], k) for k in named[0]}
    named = [dict(m.named_buffers()) for m in models]
    buffers = {k: _stacked_leaf([b[k] for b in named], k) for k in named[0]}
    return params, buffers


def _stacked_leaf(tensors, name):
    grads = {t.requires_grad for t in tensors}
    if len(grads) > 1:
        raise RuntimeError(f"Expected {name} from each model to have the same .requires_grad")
    out = stack(tensors)
    return out.detach().requires_grad_() if grads == {True} else out
