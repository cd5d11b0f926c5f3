"""L-BFGS, as ``torch.optim.LBFGS``: all parameters as one flat vector, a limited history
of curvature pairs, and optionally a strong-Wolfe line search. Each step re-evaluates the
loss through the closure, several times.

The arithmetic runs on the parameters' arrays; the scalars PyTorch keeps as 0-d tensors
(``t``, ``ro``, ``H_diag``, ``al`` after a dot product) are what a dot product of those
arrays returns (NumPy scalars on the CPU, 0-d arrays on a GPU), which round in the
parameters' dtype as those tensors do, and become 0-d tensors again in the state, so the
state has PyTorch's keys, types and values (and loads into it and back).
"""

from .._tensor import Tensor
from ..autograd import grad_mode
from ..backend import get_array_module
from .optimizer import Optimizer, _bump, _check_parameters_writeable, _new_state, _real, _scalar

__all__ = ["LBFGS"]


def _cubic_interpolate(x1, f1, g1, x2, f2, g2, bounds=None):
    """Minimiser of the cubic through two points with their derivatives, within bounds."""
    if bounds is not None:
        xmin_bound, xmax_bound = bounds
    else:
        xmin_bound, xmax_bound = (x1, x2) if x1 <= x2 else (x2, x1)
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 ** 2 - g1 * g2
    if d2_square >= 0:
        d2 = get_array_module(d2_square).sqrt(d2_square)
        if x1 <= x2:
            min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
        else:
            min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
        return min(max(min_pos, xmin_bound), xmax_bound)
    return (xmin_bound + xmax_bound) / 2.0


def _strong_wolfe(obj_func, x, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9,
                  max_ls=25):
    """PyTorch's line search (after minFunc): bracket a step satisfying the strong Wolfe
    conditions, then zoom in by cubic interpolation. Returns ``f, g, t, evaluations``."""
    d_norm = abs(d).max()
    g = g.copy()
    f_new, g_new = obj_func(x, t, d)
    ls_func_evals = 1
    gtd_new = g_new.dot(d)
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done = False
    ls_iter = 0
    while ls_iter < max_ls:
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev):
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.copy()], [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, bracket_f, bracket_g = [t], [f_new], [g_new]
            done = True
            break
        if gtd_new >= 0:
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.copy()], [gtd_prev, gtd_new]
            break
        min_step = t + 0.01 * (t - t_prev)
        max_step = t * 10
        tmp = t
        t = _cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new,
                               bounds=(min_step, max_step))
        t_prev, f_prev, g_prev, gtd_prev = tmp, f_new, g_new.copy(), gtd_new
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
    if ls_iter == max_ls:
        bracket, bracket_f, bracket_g = [0, t], [f, f_new], [g, g_new]

    insuf_progress = False
    low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = _cubic_interpolate(bracket[0], bracket_f[0], bracket_gtd[0],
                               bracket[1], bracket_f[1], bracket_gtd[1])
        # Too close to a bracket end, or out of it, twice running: move it inside.
        eps = 0.1 * (max(bracket) - min(bracket))
        if min(max(bracket) - t, t - min(bracket)) < eps:
            if insuf_progress or t >= max(bracket) or t <= min(bracket):
                if abs(t - max(bracket)) < abs(t - min(bracket)):
                    t = max(bracket) - eps
                else:
                    t = min(bracket) + eps
                insuf_progress = False
            else:
                insuf_progress = True
        else:
            insuf_progress = False
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
        if f_new > (f + c1 * t * gtd) or f_new >= bracket_f[low_pos]:
            bracket[high_pos], bracket_f[high_pos] = t, f_new
            bracket_g[high_pos], bracket_gtd[high_pos] = g_new.copy(), gtd_new
            low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high_pos] - bracket[low_pos]) >= 0:
                bracket[high_pos] = bracket[low_pos]
                bracket_f[high_pos] = bracket_f[low_pos]
                bracket_g[high_pos] = bracket_g[low_pos]
                bracket_gtd[high_pos] = bracket_gtd[low_pos]
            bracket[low_pos], bracket_f[low_pos] = t, f_new
            bracket_g[low_pos], bracket_gtd[low_pos] = g_new.copy(), gtd_new
    return bracket_f[low_pos], bracket_g[low_pos], bracket[low_pos], ls_func_evals


def _to_state(v):
    """A value for the state: arrays and array scalars (what has a dtype) as tensors, lists
    through."""
    if hasattr(v, "dtype"):
        return _new_state(get_array_module(v).asarray(v))
    if isinstance(v, list):
        return [_to_state(x) for x in v]
    return v


def _from_state(v):
    """The inverse of :func:`_to_state` (0-d tensors become NumPy scalars)."""
    if isinstance(v, Tensor):
        return v._data if v._data.ndim else v._data[()]
    if isinstance(v, list):
        return [_from_state(x) for x in v]
    return v


class LBFGS(Optimizer):
    """L-BFGS, as ``torch.optim.LBFGS``: one parameter group; ``step(closure)`` needs a
    closure that clears the gradients, computes the loss, calls ``backward`` and returns
    the loss.

    >>> opt = retrograd.optim.LBFGS(model.parameters(), line_search_fn="strong_wolfe")
    >>> def closure():
    ...     opt.zero_grad(); loss = loss_fn(model(x), y); loss.backward(); return loss
    >>> opt.step(closure)
    """

    # Why fuse_into_backward refuses it (see in_backward.py).
    _not_fusable = ("its step re-evaluates the loss through a closure (several forward and "
                    "backward passes per step), which an update inside one backward pass "
                    "cannot do (PyTorch's optimizer-in-backward cannot either)")

    def __init__(self, params, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-7,
                 tolerance_change=1e-9, history_size=100, line_search_fn=None):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = {"lr": lr, "max_iter": max_iter, "max_eval": max_eval,
                    "tolerance_grad": tolerance_grad, "tolerance_change": tolerance_change,
                    "history_size": history_size, "line_search_fn": line_search_fn}
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]
        self._numel_cache = None

    def __setstate__(self, state):
        super().__setstate__(state)
        self._params = self.param_groups[0]["params"]
        self._numel_cache = None

    def _numel(self):
        if self._numel_cache is None:
            self._numel_cache = sum(2 * p.numel() if p.is_complex() else p.numel()
                                    for p in self._params)
        return self._numel_cache

    def _xp(self):
        return get_array_module(self._params[0]._data)

    def _gather_flat_grad(self):
        """The gradients as one new vector (zeros for a parameter without one; complex
        ones as interleaved real and imaginary parts)."""
        xp = self._xp()
        views = []
        for p in self._params:
            a = _real(p._data if p._grad is None else p._grad._data)
            views.append(xp.zeros(a.size, a.dtype) if p._grad is None else a.ravel())
        return xp.concatenate(views)

    def _add_grad(self, step_size, update):
        xp = self._xp()
        offset = 0
        for p in self._params:
            a = _real(p._data)
            n = a.size
            a += xp.multiply(update[offset:offset + n].reshape(a.shape), step_size)
            _bump(p)
            offset += n
        if offset != self._numel():
            raise AssertionError(f"Expected offset {offset} to equal {self._numel()}")

    def _clone_param(self):
        return [p._data.copy() for p in self._params]

    def _set_param(self, params_data):
        xp = self._xp()
        for p, pdata in zip(self._params, params_data, strict=True):
            xp.copyto(p._data, pdata)
            _bump(p)

    def _directional_evaluate(self, closure, x, t, d):
        self._add_grad(t, d)
        loss = float(self._closure(closure))
        flat_grad = self._gather_flat_grad()
        self._set_param(x)
        return loss, flat_grad

    def _closure(self, closure):
        with grad_mode.enable_grad():
            return closure()

    def step(self, closure):
        """Perform one optimization step (up to ``max_iter`` iterations); ``closure``
        re-evaluates the loss and its gradients. Returns the loss before the step."""
        gm = grad_mode.state
        prev_mode, gm.enabled = gm.enabled, False
        try:
            return self._step(closure)
        finally:
            gm.enabled = prev_mode

    def _step(self, closure):
        if len(self.param_groups) != 1:
            raise AssertionError(f"Expected exactly one param_group, but got "
                                 f"{len(self.param_groups)}")
        group = self.param_groups[0]
        _check_parameters_writeable(self._params)  # (before the closure's first evaluation)
        lr = _scalar(group["lr"])
        max_iter, max_eval = group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        line_search_fn, history_size = group["line_search_fn"], group["history_size"]

        # The state is kept with the first parameter.
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        orig_loss = self._closure(closure)
        loss = float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1
        xp = self._xp()
        flat_grad = self._gather_flat_grad()
        if xp.abs(flat_grad).max() <= tolerance_grad:  # already optimal
            return orig_loss

        d, t = _from_state(state.get("d")), _from_state(state.get("t"))
        old_dirs, old_stps = _from_state(state.get("old_dirs")), _from_state(
            state.get("old_stps"))
        ro, h_diag = _from_state(state.get("ro")), _from_state(state.get("H_diag"))
        prev_flat_grad = _from_state(state.get("prev_flat_grad"))
        prev_loss = state.get("prev_loss")
        al = None
        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            # The descent direction.
            if state["n_iter"] == 1:
                d = xp.negative(flat_grad)
                old_dirs, old_stps, ro = [], [], []
                h_diag = 1
            else:
                # Update the memory with the new curvature pair, if it is one.
                y = xp.subtract(flat_grad, prev_flat_grad)
                s = xp.multiply(d, t)
                ys = y.dot(s)
                if ys > 1e-10:
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    h_diag = ys / y.dot(y)
                # The two-loop recursion: d = -H g.
                num_old = len(old_dirs)
                if al is None:
                    al = _from_state(state.setdefault("al", [None] * history_size))
                q = xp.negative(flat_grad)
                for i in range(num_old - 1, -1, -1):
                    al[i] = old_stps[i].dot(q) * ro[i]
                    q += xp.multiply(old_dirs[i], -al[i])
                d = r = xp.multiply(q, h_diag)
                for i in range(num_old):
                    be_i = old_dirs[i].dot(r) * ro[i]
                    r += xp.multiply(old_stps[i], al[i] - be_i)

            if prev_flat_grad is None:
                prev_flat_grad = flat_grad.copy()
            else:
                xp.copyto(prev_flat_grad, flat_grad)
            prev_loss = loss

            # The step length.
            if state["n_iter"] == 1:
                t = min(1.0, 1.0 / xp.abs(flat_grad).sum()) * lr
            else:
                t = lr
            gtd = flat_grad.dot(d)
            if gtd > -tolerance_change:  # no descent along d
                break

            ls_func_evals = 0
            if line_search_fn is not None:
                if line_search_fn != "strong_wolfe":
                    raise RuntimeError("only 'strong_wolfe' is supported")
                x_init = self._clone_param()

                def obj_func(x, t, d):
                    return self._directional_evaluate(closure, x, t, d)

                loss, flat_grad, t, ls_func_evals = _strong_wolfe(
                    obj_func, x_init, t, d, loss, flat_grad, gtd,
                    max_ls=max_eval - current_evals)
                self._add_grad(t, d)
                opt_cond = xp.abs(flat_grad).max() <= tolerance_grad
            else:
                self._add_grad(t, d)
                if n_iter != max_iter:
                    loss = float(self._closure(closure))
                    flat_grad = self._gather_flat_grad()
                    opt_cond = xp.abs(flat_grad).max() <= tolerance_grad
                    ls_func_evals = 1
            current_evals += ls_func_evals
            state["func_evals"] += ls_func_evals

            # The stopping conditions.
            if n_iter == max_iter or current_evals >= max_eval or opt_cond:
                break
            if xp.abs(xp.multiply(d, t)).max() <= tolerance_change:
                break
            if abs(loss - prev_loss) < tolerance_change:
                break

        if al is not None:
            state["al"] = _to_state(al)
        state["d"] = _to_state(d)
        state["t"] = _to_state(t)
        state["old_dirs"] = _to_state(old_dirs)
        state["old_stps"] = _to_state(old_stps)
        state["ro"] = _to_state(ro)
        state["H_diag"] = _to_state(h_diag)
        state["prev_flat_grad"] = _to_state(prev_flat_grad)
        state["prev_loss"] = prev_loss
        return orig_loss
