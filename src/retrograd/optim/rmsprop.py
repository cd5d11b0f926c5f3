"""RMSprop, with momentum, centering, weight decay and maximize."""

from ..backend import get_array_module
from ..backend.functions import functions
from .adam import _lerp_into
from .optimizer import (Optimizer, _bump, _check_lr, _count_step, _directed_grad, _real,
                        _scalar, _step_tensor, _zeros_like)

__all__ = ["RMSprop", "rmsprop_update"]


def rmsprop_update(param, grad, state, group):
    """One parameter's RMSprop step, in PyTorch's order of operations::

        step += 1;  g = -grad if maximize else grad;  g = g + weight_decay * param
        square_avg = alpha * square_avg + (1 - alpha) * g * g
        avg = sqrt(square_avg - grad_avg**2) (centered, grad_avg.lerp_(g, 1 - alpha)
              first) or sqrt(square_avg), plus eps
        buf = momentum * buf + g / avg; param -= lr * buf  (momentum > 0)
        param -= lr * g / avg                              (otherwise)
    """
    alpha, momentum, wd = group["alpha"], group["momentum"], group["weight_decay"]
    lr = _scalar(group["lr"])
    p, g = param._data, grad._data
    xp = get_array_module(p)
    _count_step(state)
    g = _directed_grad(p, g, group["maximize"], wd)
    square_avg = state["square_avg"]
    sq, p, g = _real(square_avg._data), _real(p), _real(g)
    sq *= alpha
    tmp = xp.multiply(g, 1 - alpha, out=xp.empty_like(sq))
    functions(xp).fused_mul_add(tmp, g, sq, out=sq)  # (addcmul_)
    written = [param, square_avg]
    if group["centered"]:
        grad_avg = state["grad_avg"]
        ga = _real(grad_avg._data)
        _lerp_into(xp, ga, g, xp.subtract(g, ga, out=tmp), 1 - alpha)
        functions(xp).fused_mul_add(xp.negative(ga), ga, sq, out=tmp)  # (addcmul with value -1)
        xp.sqrt(tmp, out=tmp)
        written.append(grad_avg)
    else:
        xp.sqrt(sq, out=tmp)
    tmp += group["eps"]
    if momentum > 0:
        buf_t = state["momentum_buffer"]
        buf = _real(buf_t._data)
        buf *= momentum
        buf += xp.divide(g, tmp, out=tmp)  # (addcdiv_ of value 1)
        functions(xp).fused_mul_add(buf, -lr, p, out=p)
        written.append(buf_t)
    else:  # (addcdiv_: the value times the numerator first)
        p += xp.divide(xp.multiply(g, -lr), tmp, out=tmp)
    _bump(*written)


class RMSprop(Optimizer):
    """RMSprop, as ``torch.optim.RMSprop``.

    >>> opt = retrograd.optim.RMSprop(params, lr=1e-2, alpha=0.99)
    """

    _update = staticmethod(rmsprop_update)
    _group_defaults = (("momentum", 0), ("centered", False), ("foreach", None),
                       ("maximize", False), ("differentiable", False), ("capturable", False))
    _has_step = True

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
                 centered=False, capturable=False, foreach=None, maximize=False,
                 differentiable=False):
        _check_lr(lr)
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        defaults = {"lr": lr, "momentum": momentum, "alpha": alpha, "eps": eps,
                    "centered": centered, "weight_decay": weight_decay,
                    "capturable": capturable, "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def _init_state(self, p, group):
        state = self.state[p]
        if len(state) == 0:
            state["step"] = _step_tensor()
            state["square_avg"] = _zeros_like(p)
            if group["momentum"] > 0:
                state["momentum_buffer"] = _zeros_like(p)
            if group["centered"]:
                state["grad_avg"] = _zeros_like(p)
        return state

    def step(self, closure=None):
        """Perform one optimization step; ``closure`` re-evaluates the loss."""
        return self._run_step(closure)
