"""Run one case in retrograd and in PyTorch and name every disagreement.

A disagreement is a ``Mismatch(cls, detail)``. Its *class* is a short, stable phrase
for the kind of disagreement ("dtype differs: retrograd float64 vs torch float16",
"grad: NaN where torch gives a number"), so that mismatches group, and registry
entries can name them; the detail says where and what, for one example.
"""

import dataclasses
import warnings

import numpy

import retrograd

from .cases import TensorSpec

# (atol, rtol) per dtype, the loosest of the case's input and result dtypes (PyTorch
# computes some mixed-precision gradients at the lower precision). atol scales with the
# largest finite magnitude of torch's result and, for ops that sum (``spec.sums``), of
# the inputs: summed in another order, 1e300 - 1e300 + 2 is 0 or 2, and both are right.
TOLERANCE = {"float16": (2e-3, 2e-3), "float32": (2e-5, 2e-5), "float64": (1e-10, 1e-9)}


@dataclasses.dataclass(frozen=True)
class Mismatch:
    cls: str
    detail: str


@dataclasses.dataclass
class Outcome:
    """What one library did: result or exception, warnings, gradients or their exception."""
    result: object = None
    error: BaseException | None = None
    warnings: tuple = ()
    grads: list | None = None
    grad_error: BaseException | None = None


def _materialize(v, lib, leaves):
    if isinstance(v, TensorSpec):
        leaf, view = v.make(lib)
        if v.requires_grad:
            leaves.append(leaf)
        return view
    if isinstance(v, list):
        return [_materialize(x, lib, leaves) for x in v]
    return v


def _tensors(result):
    """The tensors of a result (a tensor, or a tuple of them), in order."""
    if isinstance(result, (tuple, list)):
        return [t for r in result for t in _tensors(r)]
    return [result] if hasattr(result, "grad_fn") else []


def run(spec, case, lib):
    """Call the op in ``lib`` (``retrograd`` or ``torch``), then backpropagate a random
    cotangent (seeded by the case) into every input that requires grad."""
    out = Outcome()
    leaves = []
    args = [_materialize(a, lib, leaves) for a in case.args]
    kwargs = {k: _materialize(v, lib, leaves) for k, v in case.kwargs.items()}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out.result = spec.call(lib, *args, **kwargs)
        except Exception as e:  # noqa: BLE001 - the exception is what is compared
            out.error = e
        out.warnings = tuple(sorted({w.category.__name__ for w in caught
                                     if not issubclass(w.category, DeprecationWarning)}))
    diff = [t for t in _tensors(out.result) if t.requires_grad and t.grad_fn is not None]
    if out.error is not None or not diff or not leaves:
        return out
    rng = numpy.random.default_rng(case.seed)
    cot = [lib.tensor(rng.standard_normal(tuple(t.shape)).astype(_np_dtype(t)))
           for t in diff]
    try:
        grads = lib.autograd.grad(diff, leaves, cot, allow_unused=True)
        out.grads = [None if g is None else _numpy(g) for g in grads]
    except Exception as e:  # noqa: BLE001
        out.grad_error = e
    return out


def _np_dtype(t):
    return str(t.dtype).removeprefix("torch.")


def _numpy(t):
    return numpy.array(t.detach().numpy(), copy=True)


def _err(e):
    """The exception's class name; torch.linalg.LinAlgError's is ``_LinAlgError``."""
    return type(e).__name__.removeprefix("_")


def _exceptions(r, t, where):
    if r is None and t is None:
        return []
    prefix = "backward: " if where == "grad" else ""
    if r is not None and t is not None:
        if _err(r) == _err(t):
            return []
        cls = f"{prefix}exception type differs: retrograd {_err(r)} vs torch {_err(t)}"
    elif r is not None:
        cls = f"{prefix}retrograd raises {_err(r)}, torch does not"
    else:
        cls = f"{prefix}torch raises {_err(t)}, retrograd does not"
    return [Mismatch(cls, f"retrograd: {_err(r) if r else '-'}: {str(r)[:160] if r else ''} | "
                          f"torch: {_err(t) if t else '-'}: {str(t)[:160] if t else ''}")]


def compare_arrays(a, b, prefix, path, dtypes=(), scale=1.0):
    """Mismatches between retrograd's array ``a`` and torch's ``b`` (same shape)."""
    if a.dtype.kind == "b" or a.dtype.kind in "iu":
        if not numpy.array_equal(a, b):
            return [Mismatch(f"{prefix}integer values differ", f"{path}: {a!r} vs {b!r}")]
        return []
    a64, b64 = a.astype("float64"), b.astype("float64")
    an, bn = numpy.isnan(a64), numpy.isnan(b64)
    found = []
    if (an & ~bn).any():
        found.append(f"{prefix}NaN where torch gives a number")
    if (bn & ~an).any():
        found.append(f"{prefix}a number where torch gives NaN")
    ok = ~(an | bn)
    ai, bi = numpy.isinf(a64) & ok, numpy.isinf(b64) & ok
    if ((ai | bi) & ~((a64 == b64) & ai)).any():
        found.append(f"{prefix}infinity differs")
    fin = ok & ~(ai | bi)
    atol, rtol = max(TOLERANCE.get(d, (0, 0)) for d in {b.dtype.name, *dtypes})
    scale = max(scale, float(numpy.abs(b64[fin]).max(initial=0)))
    if not numpy.allclose(a64[fin], b64[fin], atol=atol * scale, rtol=rtol):
        found.append(f"{prefix}values differ ({b.dtype.name})")
    return [Mismatch(cls, f"{path}: retrograd {a!r} vs torch {b!r}") for cls in found]


def _results(r, t, path, tol):
    """Mismatches between retrograd's result ``r`` and torch's ``t``."""
    if type(t).__name__ == "Tensor" and not isinstance(t, retrograd.Tensor):
        if not isinstance(r, retrograd.Tensor):
            return [Mismatch(f"result type differs: {type(r).__name__} vs Tensor", path)]
        rd, td = _np_dtype(r), _np_dtype(t)
        if rd != td:
            return [Mismatch(f"dtype differs: retrograd {rd} vs torch {td}", path)]
        if tuple(r.shape) != tuple(t.shape):
            return [Mismatch("shape differs", f"{path}: {tuple(r.shape)} vs {tuple(t.shape)}")]
        return compare_arrays(_numpy(r), t.detach().numpy(), "", path, *tol)
    if isinstance(t, (tuple, list)):
        if not isinstance(r, (tuple, list)) or len(r) != len(t):
            return [Mismatch("result structure differs", f"{path}: {r!r} vs {t!r}")]
        return [m for k, (x, y) in enumerate(zip(r, t, strict=True))
                for m in _results(x, y, f"{path}[{k}]", tol)]
    if type(r) is not type(t) or r != t:
        return [Mismatch("result differs", f"{path}: {r!r} vs {t!r}")]
    return []


def _input_scale(case):
    """The largest finite magnitude among the case's inputs (at least 1)."""
    arrays = [t.array.astype("float64") for t in case.tensors if t.bound is None]
    return max([1.0] + [float(numpy.abs(a[numpy.isfinite(a)]).max(initial=0)) for a in arrays])


def _grads(r, t, tol):
    found = []
    for k, (a, b) in enumerate(zip(r, t, strict=True)):
        if (a is None) != (b is None):
            found.append(Mismatch("grad: None vs tensor",
                                  f"input {k}: retrograd {'None' if a is None else 'tensor'}"))
        elif a is not None:
            if a.shape != b.shape or a.dtype != b.dtype:
                found.append(Mismatch("grad: dtype or shape differs",
                                      f"input {k}: {a.dtype}{a.shape} vs {b.dtype}{b.shape}"))
            else:
                found += compare_arrays(a, b, "grad: ", f"input {k}", *tol)
    return found


def _set(kw, name, default):
    return kw.get(name, default) not in (default, (default,) * 2, (default,) * 3)


def crashes_torch(case):
    """Cases PyTorch 2.13 itself crashes on (a segfault or heap corruption would end the
    test process), which are not run: its CPU float16 convolution with stride 2,
    padding 1 and dilation 2 over a length-1 input (conservatively: every float16
    convolution that is strided, padded and dilated at once), and max pools with a
    window wholly in padding (see ``_window_in_padding``)."""
    kw, op = case.kwargs, case.op
    if op.startswith("conv") and "float16" in case.dtypes:
        return _set(kw, "stride", 1) and _set(kw, "padding", 0) and _set(kw, "dilation", 1)
    if op.startswith("max_pool"):
        return _window_in_padding(case)
    return False


def _window_in_padding(case):
    """A max pool window that holds no input element (dilated, padded): PyTorch's index
    for it points outside its plane (heap corruption in backward) or at another element
    (a wrong gradient)."""
    kw, x = case.kwargs, case.tensors[0]
    nd = int(case.op[-2])
    def per_dim(name, default):
        v = kw.get(name, default)
        return (v,) * nd if v is None or isinstance(v, int) else tuple(v)
    k = per_dim("kernel_size", 1)
    s = tuple(ki if si is None else si for ki, si in zip(k, per_dim("stride", None),
                                                          strict=True))
    p, d = per_dim("padding", 0), per_dim("dilation", 1)
    for n, ki, si, pi, di in zip(x.shape[-nd:], k, s, p, d, strict=True):
        span = n + 2 * pi - di * (ki - 1) - 1
        out = (-(-span // si) if kw.get("ceil_mode") else span // si) + 1
        if kw.get("ceil_mode") and (out - 1) * si >= n + pi:
            out -= 1
        for o in range(max(out, 0)):
            if not any(0 <= o * si - pi + j * di < n for j in range(ki)):
                return True
    return False


def compare(spec, case, torch):
    """Every mismatch between retrograd and ``torch`` on ``case``, each class once."""
    if crashes_torch(case):
        return []
    r, t = run(spec, case, retrograd), run(spec, case, torch)
    scale = _input_scale(case)
    broadcasts = len({x.shape for x in case.tensors}) > 1  # gradients sum over broadcast dims
    tol = (case.dtypes, scale if spec.sums else 1.0)
    grad_tol = (case.dtypes, scale if spec.sums or broadcasts else 1.0)
    found = _exceptions(r.error, t.error, "forward")
    if r.error is None and t.error is None:
        found += _results(r.result, t.result, "result", tol)
        if not found:
            found += _exceptions(r.grad_error, t.grad_error, "grad")
            if r.grads is not None and t.grads is not None:
                found += _grads(r.grads, t.grads, grad_tol)
            elif (r.grads is None) != (t.grads is None) and not (r.grad_error or t.grad_error):
                found.append(Mismatch("grad: one library has no graph", ""))
        found += [Mismatch(f"retrograd warns {w}, torch does not", "") for w in r.warnings
                  if w not in t.warnings]
        found += [Mismatch(f"torch warns {w}, retrograd does not", "") for w in t.warnings
                  if w not in r.warnings]
    seen, unique = set(), []
    for m in found:
        if m.cls not in seen:
            seen.add(m.cls)
            unique.append(m)
    return unique
