"""Finite-difference checks of gradients: PyTorch's ``gradcheck`` and ``gradgradcheck``.

The numerical Jacobian perturbs each element of every input that requires grad
by +-eps in its array (central differences); the analytical one comes from
``autograd.grad`` with one-hot cotangents, row by row (slow mode), or both are
reduced to one random projection ``v^T J u`` (fast mode). Jacobians are float64
arrays of the input's array module (on its device, as PyTorch's), laid out as
PyTorch's: (input numel, output numel); the random vectors are drawn on the host,
from a generator seeded 0, so a device checks the CPU's projections.

>>> x = retrograd.randn(3, dtype=retrograd.float64, requires_grad=True)
>>> gradcheck(retrograd.sin, (x,))
True
"""

import itertools
import warnings

from .. import _dtype
from .._random import Generator, default_generator
from .._tensor import Size, Tensor, wrap
from ..backend import get_array_module
from ..backend.functions import functions
from . import forward_ad as fwAD
from ._backward import grad

__all__ = ["GradcheckError", "gradcheck", "gradgradcheck"]


class GradcheckError(RuntimeError):
    """Error raised by :func:`gradcheck` and :func:`gradgradcheck`."""


def _as_tuple(x):
    if isinstance(x, tuple):
        return x
    if isinstance(x, list):
        return tuple(x)
    return (x,)


def _is_diff(o):
    return isinstance(o, Tensor) and o.requires_grad


def _check_inputs(inputs):
    found = False
    for idx, inp in enumerate(inputs):
        if not _is_diff(inp):
            continue
        if inp.dtype not in (_dtype.float64, _dtype.complex128):
            warnings.warn(f"Input #{idx} requires gradient and is not a double precision "
                          "floating point or complex. This check will likely fail if all the "
                          "inputs are not of double precision floating point or complex. ",
                          stacklevel=4)
        a = inp._data
        if a.size and any(st == 0 and n > 1 for st, n in zip(a.strides, a.shape, strict=True)):
            raise RuntimeError(f"The {idx}th input has a dimension with stride 0. gradcheck "
                               "only supports inputs that are non-overlapping to be able to "
                               "compute the numerical gradients correctly. You should call "
                               ".contiguous on the input before passing it to gradcheck.")
        found = True
    if not found:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, "
                         "but none of them have requires_grad=True.")


def _eval(func, inputs, xp):
    """The outputs' arrays, copied (an output may be a view of a perturbed input); other
    outputs (numbers) as arrays of ``xp``."""
    return [o._data.copy() if isinstance(o, Tensor) else xp.asarray(o)
            for o in _as_tuple(func(*inputs))]


def _numels(func_out, xp):
    return [o._data.size if isinstance(o, Tensor) else xp.asarray(o).size for o in func_out]


def _indices(shape):
    """Every index of an array of ``shape``, in C order."""
    return itertools.product(*(range(n) for n in shape))


def _host_rng():
    """The generator of fast mode's random vectors: NumPy's default_rng(0), on the host
    whatever the device."""
    return Generator().manual_seed(0)._rng


def _check_same(a, b, eps, idx=None):
    on = f"on index {idx} " if idx is not None else ""
    if a.shape != b.shape:
        raise AssertionError(f"Expected `func` to return outputs with the same shape when "
                             f"inputs are perturbed {on}by {eps}, but got: shapes "
                             f"{Size(a.shape)} and {Size(b.shape)}.")
    if a.dtype != b.dtype:
        raise AssertionError(f"Expected `func` to return outputs with the same dtype when "
                             f"inputs are perturbed {on}by {eps}, but got: dtypes "
                             f"{_dtype.from_numpy_dtype(a.dtype)} and "
                             f"{_dtype.from_numpy_dtype(b.dtype)}.")


def _central_diff(func, inputs, x, delta, eps, idx=None):
    """(f(x + delta) - f(x - delta)) / (2 eps) for every output, flattened; ``x`` is the
    perturbed input's array, ``delta`` a scalar at ``idx`` or an array over all of x."""
    xp = get_array_module(x)
    where = idx if idx is not None else Ellipsis
    orig = x[where].copy()
    x[where] = orig - delta
    outa = _eval(func, inputs, xp)
    x[where] = orig + delta
    outb = _eval(func, inputs, xp)
    x[where] = orig
    res = []
    for a, b in zip(outa, outb, strict=True):
        _check_same(a, b, eps, idx)
        res.append(xp.subtract(b, a, dtype=_dtype.float64.np).reshape(-1) / (2 * eps))
    return res


def _numerical_jacobians(func, inputs, diff_idx, n_outs, eps):
    """``[input][output]`` Jacobians for every output, differentiable or not."""
    jacs = []
    for i in diff_idx:
        x = inputs[i]._data
        xp = get_array_module(x)
        cols = [_central_diff(func, inputs, x, eps, eps, idx) for idx in _indices(x.shape)]
        jacs.append([xp.stack([c[k] for c in cols]) if cols
                     else xp.zeros((0, n_outs[k])) for k in range(len(n_outs))])
    return jacs


def _vjp(output, diff, cotangent):
    return grad(output, diff, wrap(cotangent), retain_graph=True, allow_unused=True)


def _stack_rows(rows, diff, n_out, check_grad_dtypes):
    """Place ``rows[j][i]`` (the gradient of input i for cotangent j) in column j of the
    input's Jacobian, checking sizes and dtypes as PyTorch does."""
    jacs = [get_array_module(t._data).zeros((t._data.size, n_out)) for t in diff]
    for j, grads in enumerate(rows):
        for i, g in enumerate(grads):
            if g is None:
                continue
            if g._data.shape != diff[i]._data.shape:
                raise GradcheckError("Analytical gradient has incorrect size")
            if check_grad_dtypes and g._data.dtype != diff[i]._data.dtype:
                raise GradcheckError("Gradient has dtype mismatch")
            jacs[i][:, j] = g._data.reshape(-1)
    return jacs


_NONDET = ("Backward is not reentrant, i.e., running backward with same input and "
           "grad_output multiple times gives different values, although analytical gradient "
           "matches numerical gradient.The tolerance for nondeterminism was {}.")


def _analytical_jacobians(output, diff, nondet_tol, check_grad_dtypes, v=None):
    """Jacobians of ``output`` for each input in ``diff`` (slow mode: one backward per
    output element), or the single row ``v^T J`` (fast mode), computed twice to catch a
    backward that is not reentrant."""
    shape, dt = output._data.shape, output._data.dtype
    n = output._data.size
    xp = get_array_module(output._data)

    def rows():
        if v is not None:
            return [_vjp(output, diff, v.reshape(shape).astype(dt))]
        res = []
        for j in range(n):
            e = xp.zeros(n, dtype=dt)
            e[j] = 1
            res.append(_vjp(output, diff, e.reshape(shape)))
        return res

    n_cols = 1 if v is not None else n
    j1 = _stack_rows(rows(), diff, n_cols, check_grad_dtypes)
    j2 = _stack_rows(rows(), diff, n_cols, check_grad_dtypes)
    for a, b in zip(j1, j2, strict=True):
        if a.size and xp.abs(a - b).max() > nondet_tol:
            raise GradcheckError(_NONDET.format(nondet_tol))
    return j1


def _mismatch(analytical, numerical, out_idx, in_idx):
    return (f"Jacobian mismatch for output {out_idx:d} with respect to input {in_idx:d},\n"
            f"numerical:{numerical}\nanalytical:{analytical}\n")


def _slow_gradcheck(func, func_out, inputs, diff_idx, out_mask, eps, rtol, atol, nondet_tol,
                    check_grad_dtypes):
    xp = get_array_module(inputs[diff_idx[0]]._data)
    numerical = _numerical_jacobians(func, inputs, diff_idx, _numels(func_out, xp), eps)
    if not any(out_mask):
        if any(xp.any(j != 0) for per_in in numerical for j in per_in):
            raise GradcheckError("Numerical gradient for function expected to be zero")
        return
    diff = [inputs[i] for i in diff_idx]
    outputs = [o for o, m in zip(func_out, out_mask, strict=True) if m]
    numerical = [[per_in[k] for k, m in enumerate(out_mask) if m] for per_in in numerical]
    for i, o in enumerate(outputs):
        analytical = _analytical_jacobians(o, diff, nondet_tol, check_grad_dtypes)
        for j, a in enumerate(analytical):
            n = numerical[j][i]
            if not xp.allclose(a, n, rtol=rtol, atol=atol):
                raise GradcheckError(_mismatch(wrap(a), wrap(n), i, j))


def _unit(rng, n, xp):
    """A random unit vector of ``n`` elements, drawn on the host, as an array of ``xp``."""
    u = functions(xp).draw(rng, "random", (), n)
    norm = xp.sqrt(u @ u)
    return u / norm if norm else u


def _fast_gradcheck(func, func_out, inputs, diff_idx, out_mask, eps, rtol, atol, nondet_tol,
                    check_grad_dtypes):
    """PyTorch's fast mode: compare ``v^T J u`` for random unit vectors u, v."""
    rng = _host_rng()
    diff = [inputs[i] for i in diff_idx]
    all_u = [_unit(rng, t._data.size, get_array_module(t._data)) for t in diff]
    outputs = [o for o, m in zip(func_out, out_mask, strict=True) if m]
    all_v = [_unit(rng, o._data.size, get_array_module(o._data)) for o in outputs]
    numerical = []  # [input][output] of v^T (J u)
    for t, u in zip(diff, all_u, strict=True):
        x = t._data
        ju = _central_diff(func, inputs, x, eps * u.reshape(x.shape), eps)
        if not outputs:
            if any(j.size and get_array_module(j).abs(j).max() > nondet_tol for j in ju):
                raise GradcheckError("Numerical gradient for function expected to be zero")
            continue
        ju = [j for j, m in zip(ju, out_mask, strict=True) if m]
        numerical.append([v @ j for v, j in zip(all_v, ju, strict=True)])
    for k, (o, v) in enumerate(zip(outputs, all_v, strict=True)):
        vj = _analytical_jacobians(o, diff, nondet_tol, check_grad_dtypes, v=v)
        for i, u in enumerate(all_u):
            a, n = vj[i][:, 0] @ u, numerical[i][k]
            tol = atol * u.sum() * v.sum()
            if not get_array_module(a).allclose(a, n, rtol=rtol, atol=tol):
                raise GradcheckError(
                    _mismatch(float(a), float(n), k, i)
                    + _slow_mode_report(func, inputs, diff_idx, out_mask, i, k, eps, rtol,
                                        atol))


def _slow_mode_report(func, inputs, diff_idx, out_mask, in_idx, out_idx, eps, rtol, atol):
    """Fast mode failed: the full Jacobians of the failing pair, to show where."""
    func_out = _as_tuple(func(*inputs))
    xp = get_array_module(inputs[diff_idx[in_idx]]._data)
    numerical = _numerical_jacobians(func, inputs, diff_idx[in_idx:in_idx + 1],
                                     _numels(func_out, xp), eps)
    n = [j for j, m in zip(numerical[0], out_mask, strict=True) if m][out_idx]
    output = [o for o, m in zip(func_out, out_mask, strict=True) if m][out_idx]
    a = _analytical_jacobians(output, [inputs[diff_idx[in_idx]]], float("inf"), False)[0]
    msg = ("\nThe above quantities relating the numerical and analytical jacobians are "
           "computed \nin fast mode. See: https://github.com/pytorch/pytorch/issues/53876 for "
           "more background \nabout fast mode. Below, we recompute numerical and analytical "
           f"jacobians in slow mode:\n\nNumerical:\n {wrap(n)}\nAnalytical:\n{wrap(a)}\n\n"
           f"The max per-element difference (slow mode) is: {xp.abs(n - a).max()}.\n")
    if xp.allclose(a, n, rtol=rtol, atol=atol):
        msg += ("Fast gradcheck failed but element-wise differences are small. This means "
                "that the test might've passed in slow_mode!")
    return msg


def _check_zero_grad_output(outputs, diff, masked):
    """A zero cotangent must give zero gradients of the inputs' dtypes and shapes."""
    grads = grad(outputs, diff, [wrap(get_array_module(o._data).zeros_like(o._data))
                                 for o in outputs],
                          allow_unused=True)
    for g, x in zip(grads, diff, strict=True):
        if g is None:
            continue
        zero = get_array_module(g._data).allclose(g._data, 0) if masked else not g._data.any()
        if not zero:
            raise GradcheckError("backward not multiplied by grad_output")
        if g._data.dtype != x._data.dtype:
            raise GradcheckError("grad is incorrect type")
        if g._data.shape != x._data.shape:
            raise GradcheckError("grad is incorrect size")


def _check_undefined_grad(func, inputs, diff):
    """Each output of a multi-output function in turn gets no gradient (the engine passes
    the node zeros for it); the other outputs get zeros; every input gradient must then be
    undefined or zero. A node whose outputs all lack gradients is never run by the engine,
    so that case needs no check."""
    n = sum(1 for o in _as_tuple(func(*inputs)) if _is_diff(o))
    for skip in range(n if n > 1 else 0):
        outs = [o for o in _as_tuple(func(*inputs)) if _is_diff(o)]
        rest = [o for k, o in enumerate(outs) if k != skip]
        try:
            grads = grad(rest, diff, [wrap(get_array_module(o._data).zeros_like(o._data))
                                      for o in rest],
                                  allow_unused=True)
        except RuntimeError as e:
            raise GradcheckError("Expected backward function to handle undefined output "
                                 "grads.") from e
        if any(g is not None and g._data.any() for g in grads):
            raise GradcheckError("Expected all input grads to be undefined or zero when all "
                                 "output grads are undefined or zero.")


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
              nondet_tol=0.0, check_undefined_grad=True, check_grad_dtypes=False,
              check_batched_grad=False, check_batched_forward_grad=False,
              check_forward_ad=False, check_backward_ad=True, fast_mode=False, masked=None):
    """Check analytical gradients of ``func`` at ``inputs`` against central finite differences.

    Every float input with ``requires_grad=True`` is perturbed; elements must satisfy
    ``|analytical - numerical| <= atol + rtol * |numerical|``. Raises :class:`GradcheckError`
    on a mismatch, or returns False when ``raise_exception=False``.

    >>> x = retrograd.rand(2, 3, dtype=retrograd.float64, requires_grad=True)
    >>> gradcheck(lambda t: (t * t).exp(), x)
    True
    """
    if not (check_forward_ad or check_backward_ad):
        raise AssertionError("Expected at least one of check_forward_ad or check_backward_ad "
                             "to be True")
    if check_batched_grad and not check_backward_ad:
        raise AssertionError("Setting check_batched_grad=True requires check_backward_ad to "
                             "be True")
    if check_batched_forward_grad and not check_forward_ad:
        raise AssertionError("Setting check_batched_forward_grad=True requires "
                             "check_forward_ad to be True")
    if check_batched_grad:
        raise NotImplementedError("check_batched_grad needs vmap, which is not implemented "
                                  "yet")
    try:
        if check_forward_ad:
            _forward_ad_check(func, _as_tuple(inputs), eps, atol, rtol, fast_mode)
        if not check_backward_ad:
            return True
        return _gradcheck(func, inputs, eps, atol, rtol, nondet_tol, check_undefined_grad,
                          check_grad_dtypes, fast_mode, bool(masked))
    except GradcheckError:
        if raise_exception:
            raise
        return False


def _gradcheck(func, inputs, eps, atol, rtol, nondet_tol, check_undefined_grad,
               check_grad_dtypes, fast_mode, masked):
    inputs = _as_tuple(inputs)
    _check_inputs(inputs)
    func_out = _as_tuple(func(*inputs))
    if any(isinstance(o, Tensor) and o.is_complex() for o in func_out):
        raise NotImplementedError("gradcheck of complex outputs is not supported: complex "
                                  "autograd is not implemented yet")
    out_mask = [_is_diff(o) for o in func_out]
    diff_idx = [i for i, x in enumerate(inputs) if _is_diff(x)]
    check = _fast_gradcheck if fast_mode else _slow_gradcheck
    check(func, func_out, inputs, diff_idx, out_mask, eps, rtol, atol, nondet_tol,
          check_grad_dtypes)
    outputs = [o for o, m in zip(func_out, out_mask, strict=True) if m]
    diff = [inputs[i] for i in diff_idx]
    if outputs:
        _check_zero_grad_output(outputs, diff, masked)
    if check_undefined_grad:
        _check_undefined_grad(func, inputs, diff)
    return True


def _forward_ad_check(func, inputs, eps, atol, rtol, fast_mode):
    """Forward-mode Jacobians (one dual pass per input element, or one random direction ``u``
    in fast mode) against central differences, shown side by side on a mismatch."""
    _check_inputs(inputs)
    diff_idx = [i for i, x in enumerate(inputs) if _is_diff(x)]
    func_out = _as_tuple(func(*inputs))
    out_mask = [isinstance(o, Tensor) and _dtype.is_inexact(o._data.dtype) for o in func_out]
    xp = get_array_module(inputs[diff_idx[0]]._data)
    n_outs = _numels(func_out, xp)

    def tangents_for(i, t):
        with fwAD.dual_level():
            duals = [fwAD.make_dual(x.detach(), wrap(t if k == i else
                                                     get_array_module(x._data).zeros_like(
                                                         x._data)))
                     if k in diff_idx else x for k, x in enumerate(inputs)]
            outs = _as_tuple(func(*duals))
            res = []
            for o, n in zip(outs, n_outs, strict=True):
                tan = fwAD.unpack_dual(o).tangent if isinstance(o, Tensor) else None
                res.append(xp.zeros(n) if tan is None else
                           tan._data.astype(_dtype.float64.np).reshape(-1))
            return res

    rng = _host_rng()
    for j, i in enumerate(diff_idx):
        x = inputs[i]._data
        xp = get_array_module(x)
        if fast_mode:
            u = _unit(rng, x.size, xp).reshape(x.shape)
            numerical = [_central_diff(func, inputs, x, eps * u, eps)]
            analytical = [tangents_for(i, u.astype(x.dtype))]
        else:
            numerical, analytical = [], []
            for idx in _indices(x.shape):
                numerical.append(_central_diff(func, inputs, x, eps, eps, idx))
                e = xp.zeros_like(x)
                e[idx] = 1
                analytical.append(tangents_for(i, e))
        for k, m in enumerate(out_mask):
            if not m:
                continue
            a = xp.stack([c[k] for c in analytical]) if analytical else xp.zeros((0,))
            n = xp.stack([c[k] for c in numerical]) if numerical else xp.zeros((0,))
            if not xp.allclose(a, n, rtol=rtol, atol=atol):
                raise GradcheckError("While considering the forward AD: "
                                     + _mismatch(wrap(a), wrap(n), k, j))


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
                  check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
                  check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False,
                  masked=False):
    """Check second derivatives: gradcheck of the first backward, built with
    ``create_graph=True``, with respect to the inputs and the output gradients.

    >>> x = retrograd.rand(3, dtype=retrograd.float64, requires_grad=True)
    >>> gradgradcheck(retrograd.tanh, (x,))
    True
    """
    if not (check_fwd_over_rev or check_rev_over_rev):
        raise AssertionError("Expected at least one of check_fwd_over_rev or "
                             "check_rev_over_rev to be True")
    if check_undefined_grad and not check_rev_over_rev:
        raise AssertionError("Setting check_undefined_grad=True requires check_rev_over_rev "
                             "to be True")
    if check_batched_grad and not check_rev_over_rev:
        raise AssertionError("Setting check_batched_grad=True requires check_rev_over_rev to "
                             "be True")
    inputs = _as_tuple(inputs)
    if grad_outputs is None:
        outputs = [o for o in _as_tuple(func(*inputs)) if _is_diff(o)]
        grad_outputs = tuple(_random_grad_output(o, gen_non_contig_grad_outputs)
                             for o in outputs)
    else:
        grad_outputs = _as_tuple(grad_outputs)
    n_out = len(grad_outputs)
    diff_in = {i for i, x in enumerate(inputs) if _is_diff(x)}

    def first_backward(*args):
        ins, gos = args[:len(args) - n_out], args[len(args) - n_out:]
        # restore requires_grad (forward-AD checks pass detached dual inputs)
        ins = tuple(x.requires_grad_() if i in diff_in and not x.requires_grad else x
                    for i, x in enumerate(ins))
        outs = [o for o in _as_tuple(func(*ins)) if _is_diff(o)]
        grads = grad(outs, [x for i, x in enumerate(ins) if i in diff_in], gos,
                              create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(first_backward, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol,
                     check_undefined_grad=check_undefined_grad,
                     check_grad_dtypes=check_grad_dtypes, check_batched_grad=check_batched_grad,
                     fast_mode=fast_mode, check_forward_ad=check_fwd_over_rev,
                     check_backward_ad=check_rev_over_rev, masked=masked)


def _random_grad_output(out, non_contiguous):
    """Uniform in [-1, 1) like PyTorch's make_tensor, from retrograd's generator."""
    xp = get_array_module(out._data)
    dt = out._data.dtype if _dtype.is_inexact(out._data.dtype) else _dtype.float64.np
    shape = out._data.shape
    if non_contiguous and out._data.size > 1:
        a = xp.empty(shape + (2,), dtype=dt)[..., 0]
    else:
        a = xp.empty(shape, dtype=dt)
    a[...] = functions(xp).draw(default_generator._rng, "uniform", (-1.0, 1.0), shape)
    g = wrap(a)
    g.requires_grad_(True)
    return g
