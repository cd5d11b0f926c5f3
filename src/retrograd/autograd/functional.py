"""Higher-level autograd API: ``jacobian``, ``hessian``, ``vjp``, ``jvp``, ``vhp``, ``hvp``.

Functions take ``func`` and ``inputs`` (a Tensor or a tuple of Tensors) and
follow PyTorch's nesting of results: a Tensor for a Tensor, a tuple for a
tuple. ``vectorize=True`` computes a Jacobian with one batched backward (every
cotangent at once, ``autograd.grad(..., is_grads_batched=True)``) or, with
``strategy="forward-mode"``, one batched forward-mode pass (every direction at
once, on a leading batch dim of the tangents; same per-op batching rules).

Batched backward (:mod:`._batched`) runs each node once on gradients with a leading
batch dim; it does not run hooks.
"""

from .._tensor import Tensor, wrap
from ..backend import get_array_module
from . import forward_ad, grad_mode
from ._backward import grad as _grad
from ._batched_grad import batched_grad as _batched_grad
from ..ops.joining import stack

__all__ = ["vjp", "jvp", "jacobian", "hessian", "vhp", "hvp"]


# ---- helpers ------------------------------------------------------------------------------

def _zeros(shape, like):
    """A tensor of zeros of ``shape`` with the dtype and device of tensor ``like``."""
    a = like._data
    return wrap(get_array_module(a).zeros(shape, dtype=a.dtype))


def _identity_block(total, n, start, like):
    """Rows ``start:start + n`` of the (total, total) identity, its columns of one tensor
    of n elements: that tensor's share of every cotangent or tangent, in the dtype and
    device of tensor ``like``."""
    a = like._data
    xp = get_array_module(a)
    eye = xp.zeros((total, n), dtype=a.dtype)
    eye[start:start + n] = xp.eye(n, dtype=a.dtype)
    return eye

def _as_tuple(x, arg_name, fn_name):
    is_tuple = isinstance(x, tuple)
    if not is_tuple:
        x = (x,)
    for i, el in enumerate(x):
        if not isinstance(el, Tensor):
            if is_tuple:
                raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or "
                                f"a tuple of Tensors but the value at index {i} has type "
                                f"{type(el)}.")
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a "
                            f"tuple of Tensors but the given {arg_name} has type {type(el)}.")
    return is_tuple, x


def _tuple_postprocess(res, to_unpack):
    """Undo ``_as_tuple``: ``to_unpack`` is a bool, or a pair for nested (jacobian) results."""
    if isinstance(to_unpack, tuple):
        if not to_unpack[1]:
            res = tuple(el[0] for el in res)
        if not to_unpack[0]:
            res = res[0]
    elif not to_unpack:
        res = res[0]
    return res


def _grad_preprocess(inputs, create_graph, need_graph):
    """Inputs that require grad, detached from the caller's graph unless create_graph."""
    res = []
    for inp in inputs:
        if create_graph and inp.requires_grad:
            res.append(inp.view_as(inp) if inp._base is None else inp.clone())
        else:
            res.append(inp.detach().requires_grad_(need_graph))
    return tuple(res)


def _grad_postprocess(inputs, create_graph):
    if isinstance(inputs[0], Tensor):
        return inputs if create_graph else tuple(i.detach() for i in inputs)
    return tuple(_grad_postprocess(i, create_graph) for i in inputs)


def _validate_v(v, other, is_other_tuple):
    if len(other) != len(v):
        if is_other_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but "
                               f"got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for idx, (el_v, el_other) in enumerate(zip(v, other, strict=True)):
        if el_v.shape != el_other.shape:
            prepend = f"Entry {idx} in " if is_other_tuple else ""
            raise RuntimeError(f"{prepend}v has invalid size: should be {el_other.shape} but "
                               f"got {el_v.shape}.")


def _check_requires_grad(inputs, input_type, strict):
    if not strict:
        return
    if input_type not in ("outputs", "grad_inputs", "jacobian", "hessian"):
        raise RuntimeError("Invalid input_type to _check_requires_grad")
    for i, inp in enumerate(inputs):
        if inp is None:
            raise RuntimeError(f"The output of the user-provided function is independent of "
                               f"input {i}. This is not allowed in strict mode.")
        if not inp.requires_grad:
            if input_type == "hessian":
                raise RuntimeError(f"The hessian of the user-provided function with respect "
                                   f"to input {i} is independent of the input. This is not "
                                   "allowed in strict mode. You should ensure that your "
                                   "function is thrice differentiable and that the hessian "
                                   "depends on the inputs.")
            if input_type == "jacobian":
                raise RuntimeError(f"While computing the hessian, found that the jacobian of "
                                   f"the user-provided function with respect to input {i} is "
                                   "independent of the input. This is not allowed in strict "
                                   "mode. You should ensure that your function is twice "
                                   "differentiable and that the jacobian depends on the "
                                   "inputs (this would be violated by a linear function for "
                                   "example).")
            if input_type == "grad_inputs":
                raise RuntimeError(f"The gradient with respect to input {i} is independent of "
                                   "the inputs of the user-provided function. This is not "
                                   "allowed in strict mode.")
            raise RuntimeError(f"Output {i} of the user-provided function does not require "
                               "gradients. The outputs must be computed in a differentiable "
                               "manner from the input when running in strict mode.")


def _autograd_grad(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None,
                   is_grads_batched=False):
    """``autograd.grad`` over the outputs that require grad; None for unused inputs."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    new_outputs, new_grads = [], []
    for out, g in zip(outputs, grad_outputs, strict=True):
        if out is not None and out.requires_grad:
            new_outputs.append(out)
            new_grads.append(g)
    if not new_outputs:
        return (None,) * len(inputs)
    return _grad(new_outputs, inputs, new_grads, allow_unused=True, create_graph=create_graph,
                 retain_graph=retain_graph, is_grads_batched=is_grads_batched)


def _fill_in_zeros(grads, refs, strict, create_graph, stage):
    res = []
    for i, (g, r) in enumerate(zip(grads, refs, strict=True)):
        if g is None:
            if strict:
                if stage == "back":
                    raise RuntimeError(f"The output of the user-provided function is "
                                       f"independent of input {i}. This is not allowed in "
                                       "strict mode.")
                if stage == "back_trick":
                    raise RuntimeError(f"The gradient with respect to the input is independent "
                                       f"of entry {i} in the grad_outputs when using the double "
                                       "backward trick to compute forward mode gradients. This "
                                       "is not allowed in strict mode.")
                if stage == "double_back":
                    raise RuntimeError(f"The jacobian of the user-provided function is "
                                       f"independent of input {i}. This is not allowed in "
                                       "strict mode.")
                raise RuntimeError(f"The hessian of the user-provided function is independent "
                                   f"of entry {i} in the grad_jacobian. This is not allowed in "
                                   "strict mode as it prevents from using the double backward "
                                   "trick to replace forward mode AD.")
            g = _zeros(r.shape, r)
        res.append(g)
    return tuple(res)


# ---- vjp, jvp, vhp, hvp -------------------------------------------------------------------

def _prepare_v(v, against, is_tuple, create_graph, fn, what):
    """``v`` as a checked tuple shaped like ``against``; None only for a single
    one-element tensor (``what`` names it in PyTorch's message)."""
    if v is None:
        if len(against) != 1 or against[0].nelement() != 1:
            raise RuntimeError(f"The vector v can only be None if {what} a single Tensor with "
                               "a single element.")
        return None
    _, v = _as_tuple(v, "v", fn)
    v = _grad_preprocess(v, create_graph, False)
    _validate_v(v, against, is_tuple)
    return v


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), v^T J)``; ``v`` may be omitted for a single-element output."""
    with grad_mode.enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _grad_preprocess(inputs, create_graph, True)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function",
                                              "vjp")
        _check_requires_grad(outputs, "outputs", strict)
        v = _prepare_v(v, outputs, is_outputs_tuple, create_graph, "vjp",
                       "the user-provided function returns")
        grad_res = _autograd_grad(outputs, inputs, v, create_graph=create_graph)
        vjp_res = _fill_in_zeros(grad_res, inputs, strict, create_graph, "back")
    outputs = _grad_postprocess(outputs, create_graph)
    vjp_res = _grad_postprocess(vjp_res, create_graph)
    return (_tuple_postprocess(outputs, is_outputs_tuple),
            _tuple_postprocess(vjp_res, is_inputs_tuple))


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), J v)`` by the double-backward trick, as PyTorch's."""
    with grad_mode.enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _grad_preprocess(inputs, create_graph, True)
        v = _prepare_v(v, inputs, is_inputs_tuple, create_graph, "jvp",
                       "the input to the user-provided function is")
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function",
                                              "jvp")
        _check_requires_grad(outputs, "outputs", strict)
        grad_outputs = tuple(_zeros(o.shape, o).requires_grad_(True) for o in outputs)
        grad_inputs = _autograd_grad(outputs, inputs, grad_outputs, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict)
        grad_res = _autograd_grad(grad_inputs, grad_outputs, v, create_graph=create_graph)
        jvp_res = _fill_in_zeros(grad_res, outputs, strict, create_graph, "back_trick")
    outputs = _grad_postprocess(outputs, create_graph)
    jvp_res = _grad_postprocess(jvp_res, create_graph)
    return (_tuple_postprocess(outputs, is_outputs_tuple),
            _tuple_postprocess(jvp_res, is_outputs_tuple))


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), v^T H)`` for a scalar ``func``."""
    return _hessian_vector(func, inputs, v, create_graph, strict, "vhp", transpose=False)


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), H v)`` for a scalar ``func`` (double-backward trick)."""
    return _hessian_vector(func, inputs, v, create_graph, strict, "hvp", transpose=True)


def _hessian_vector(func, inputs, v, create_graph, strict, name, transpose):
    with grad_mode.enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", name)
        inputs = _grad_preprocess(inputs, create_graph, True)
        v = _prepare_v(v, inputs, is_inputs_tuple, create_graph, name,
                       "the input to the user-provided function is")
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function",
                                              name)
        _check_requires_grad(outputs, "outputs", strict)
        if is_outputs_tuple or not isinstance(outputs[0], Tensor):
            raise RuntimeError(f"The function given to {name} should return a single Tensor")
        if outputs[0].nelement() != 1:
            raise RuntimeError(f"The Tensor returned by the function given to {name} should "
                               "contain a single element")
        jac = _autograd_grad(outputs, inputs, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
        enable = create_graph or grad_mode.is_grad_enabled()
        if transpose:
            grad_jac = tuple(_zeros(x.shape, x).requires_grad_(True) for x in inputs)
            double_back = _autograd_grad(jac, inputs, grad_jac, create_graph=True)
            _check_requires_grad(jac, "hessian", strict)
            with grad_mode.set_grad_enabled(enable):
                grad_res = _autograd_grad(double_back, grad_jac, v, create_graph=create_graph)
                res = _fill_in_zeros(grad_res, inputs, strict, create_graph,
                                     "double_back_trick")
        else:
            with grad_mode.set_grad_enabled(enable):
                grad_res = _autograd_grad(jac, inputs, v, create_graph=create_graph)
                res = _fill_in_zeros(grad_res, inputs, strict, create_graph, "double_back")
    outputs = _grad_postprocess(outputs, create_graph)
    res = _grad_postprocess(res, create_graph)
    return (_tuple_postprocess(outputs, is_outputs_tuple),
            _tuple_postprocess(res, is_inputs_tuple))


# ---- jacobian, hessian --------------------------------------------------------------------

def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False,
             strategy="reverse-mode"):
    """The Jacobian of ``func`` at ``inputs``: entry ``[i][j]`` (for tuple outputs/inputs)
    has shape ``output_i.shape + input_j.shape``."""
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode". '
                             'Hint: If your function has more outputs than inputs, '
                             '"forward-mode" tends to be more performant. Otherwise, prefer '
                             'to use "reverse-mode".')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError("torch.autograd.functional.jacobian: `create_graph=True` "
                                      'and `strategy="forward-mode"` are not supported together '
                                      "(yet). Please either set `create_graph=False` or "
                                      '`strategy="reverse-mode"`.')
        if not vectorize:
            raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-"
                                      "reverse Hessian is only implemented for `vectorize=True`.")
    with grad_mode.enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _grad_preprocess(inputs, create_graph, True)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function",
                                              "jacobian")
        _check_requires_grad(outputs, "outputs", strict)
        if vectorize:
            if strict:
                raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and "
                                   "`vectorized=True` are not supported together. Please "
                                   "either set `strict=False` or `vectorize=False`.")
            if strategy == "forward-mode":
                jac = _jacfwd(func, inputs)
            else:
                jac = _jacrev_batched(outputs, inputs, create_graph)
            return _tuple_postprocess(jac, (is_outputs_tuple, is_inputs_tuple))
        jac = []
        for i, out in enumerate(outputs):
            rows = [[] for _ in inputs]
            flat = out.reshape(-1)
            for j in range(flat.nelement()):
                vj = _autograd_grad((flat[j],), inputs, retain_graph=True,
                                    create_graph=create_graph)
                for k, (g, x) in enumerate(zip(vj, inputs, strict=True)):
                    if g is None:
                        if strict and create_graph and not x.requires_grad:
                            raise RuntimeError(f"The jacobian of the user-provided function is "
                                               f"independent of input {k}. This is not "
                                               "allowed in strict mode when create_graph=True.")
                        if strict:
                            raise RuntimeError(f"Output {i} of the user-provided function is "
                                               f"independent of input {k}. This is not "
                                               "allowed in strict mode.")
                        g = _zeros(x.shape, x)
                    rows[k].append(g)
            jac.append(tuple(stack(r).view(out.shape + x.shape) if r else
                             _zeros(out.shape + x.shape, out)
                             for r, x in zip(rows, inputs, strict=True)))
        jac = _grad_postprocess(tuple(jac), create_graph)
        return _tuple_postprocess(jac, (is_outputs_tuple, is_inputs_tuple))


def _jacrev_batched(outputs, inputs, create_graph):
    """All rows of the Jacobian from one batched backward: the cotangents are the
    identity over the outputs' concatenated elements."""
    sizes = [o.nelement() for o in outputs]
    total = sum(sizes)
    grads, start = [], 0
    for o, n in zip(outputs, sizes, strict=True):
        eye = _identity_block(total, n, start, o)
        grads.append(wrap(eye.reshape((total,) + tuple(o.shape))))
        start += n
    diff = [(o, g) for o, g in zip(outputs, grads, strict=True) if o.requires_grad]
    if diff:
        res = _batched_grad([o for o, _ in diff], inputs, [g for _, g in diff],
                            create_graph, create_graph)  # (a graph of it keeps this one)
    else:
        res = [None] * len(inputs)
    jac = []
    start = 0
    for o, n in zip(outputs, sizes, strict=True):
        row = []
        for g, x in zip(res, inputs, strict=True):
            if g is None:
                row.append(_zeros(tuple(o.shape) + tuple(x.shape), o))
            else:  # (a Tensor with its graph under create_graph, else an array)
                g = g[start:start + n].reshape(tuple(o.shape) + tuple(x.shape))
                row.append(g if isinstance(g, Tensor) else wrap(g))
        jac.append(tuple(row))
        start += n
    return _grad_postprocess(tuple(jac), create_graph)


def _jacfwd(func, inputs):
    """All columns of the Jacobian from one forward-mode pass: each input's tangent is
    its block of the identity, with the directions on a leading batch dim (tall
    Jacobians: few inputs, many outputs)."""
    sizes = [x.nelement() for x in inputs]
    total = sum(sizes)
    with grad_mode.no_grad(), forward_ad.dual_level():
        forward_ad.state.batch = total
        try:
            duals, start = [], 0
            for x, n in zip(inputs, sizes, strict=True):
                eye = _identity_block(total, n, start, x)
                d = x.detach().view_as(x)
                forward_ad.set_tangent(d, wrap(eye.reshape((total,) + tuple(x.shape))))
                duals.append(d)
                start += n
            outs = func(*duals)
            outs = outs if isinstance(outs, tuple) else (outs,)
            tangents = [forward_ad.tangent_of(o) for o in outs]
        finally:
            forward_ad.state.batch = None
    jac = []
    for o, t in zip(outs, tangents, strict=True):
        row, start = [], 0
        for x, n in zip(inputs, sizes, strict=True):
            shape = tuple(o.shape) + tuple(x.shape)
            if t is None:
                row.append(_zeros(shape, o))
            else:
                block = t._data[start:start + n].reshape(n, -1)
                xp = get_array_module(block)
                row.append(wrap(xp.ascontiguousarray(block.T).reshape(shape)))
            start += n
        jac.append(tuple(row))
    return tuple(jac)


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False,
            outer_jacobian_strategy="reverse-mode"):
    """The Hessian of a scalar ``func``: the Jacobian of its gradient."""
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def ensure_single_output_function(*inp):
        out = func(*inp)
        is_out_tuple, t_out = _as_tuple(out, "outputs of the user-provided function",
                                        "hessian")
        _check_requires_grad(t_out, "outputs", strict)
        if is_out_tuple or not isinstance(out, Tensor):
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.nelement() != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian should "
                               "contain a single element")
        return out.squeeze()

    def jac_func(*inp):
        if outer_jacobian_strategy == "forward-mode":
            inp = tuple(t.requires_grad_(True) for t in inp)
        jac = jacobian(ensure_single_output_function, inp, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
        return jac

    res = jacobian(jac_func, inputs, create_graph=create_graph, strict=strict,
                   vectorize=vectorize, strategy=outer_jacobian_strategy)
    return _tuple_postprocess(res, (is_inputs_tuple, is_inputs_tuple))
