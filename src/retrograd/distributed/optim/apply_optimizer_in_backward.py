"""PyTorch's ``torch/distributed/optim/apply_optimizer_in_backward.py``: one optimizer per
parameter, stepped by a hook on the parameter's ``AccumulateGrad`` node once its gradient
is in ``.grad``, which is then freed."""

from weakref import ref

__all__ = []


class _WeakTensorKeyDictionary:
    """A dict keyed by tensor identity that does not keep its keys alive (PyTorch's
    ``WeakTensorKeyDictionary``; ``weakref.WeakKeyDictionary`` compares keys with ``==``,
    which is elementwise for tensors)."""

    def __init__(self):
        self._data = {}  # id(key) -> (weak reference to key, value)

    def __contains__(self, key):
        entry = self._data.get(id(key))
        return entry is not None and entry[0]() is key

    def __getitem__(self, key):
        if key not in self:
            raise KeyError(key)
        return self._data[id(key)][1]

    def __setitem__(self, key, value):
        k = id(key)
        data = self._data
        data[k] = (ref(key, lambda _r: data.pop(k, None)), value)

    def __len__(self):
        return len(self._data)


# Metadata kept beside the parameter, not on it (an attribute would be serialized with it).
param_to_optim_hook_handle_map = _WeakTensorKeyDictionary()
param_to_acc_grad_map = _WeakTensorKeyDictionary()


def _apply_optimizer_in_backward(optimizer_class, params, optimizer_kwargs,
                                 register_hook=True):
    """Upon ``backward()``, the optimizer given for each parameter fires after the
    gradient has been accumulated into the parameter; the gradient is then set to None
    (so another optimizer over that parameter, not given here, is a no-op).

    ``register_hook=False`` only attaches the optimizers (for callers, such as DDP, that
    drive them their own way).

    >>> _apply_optimizer_in_backward(retrograd.optim.SGD, [w1], {"lr": 0.02})
    >>> _apply_optimizer_in_backward(retrograd.optim.Adam, rest, {"lr": 0.04})
    >>> model(x).sum().backward()  # the parameters are already updated
    """

    def _apply_optimizer_in_backward_to_param(param):
        # view_as gives a node whose next function is the parameter's (cached)
        # AccumulateGrad; one per parameter even when optimizers are attached twice.
        if param not in param_to_acc_grad_map:
            param_to_acc_grad_map[param] = param.view_as(param).grad_fn.next_functions[0][0]

        optimizer = optimizer_class([param], **optimizer_kwargs)

        if not hasattr(param, "_in_backward_optimizers"):
            param._in_backward_optimizers = []
            param._optimizer_classes = []
            param._optimizer_kwargs = []

        param._in_backward_optimizers.append(optimizer)
        param._optimizer_classes.append(optimizer_class)
        param._optimizer_kwargs.append(optimizer_kwargs)

        if not register_hook:
            return

        def optimizer_hook(*_unused):
            for opt in param._in_backward_optimizers:
                opt.step()
            param.grad = None

        handle = param_to_acc_grad_map[param].register_hook(optimizer_hook)
        if param not in param_to_optim_hook_handle_map:
            param_to_optim_hook_handle_map[param] = []
        param_to_optim_hook_handle_map[param].append(handle)

    for param in params:
        _apply_optimizer_in_backward_to_param(param)


def _get_in_backward_optimizers(module):
    """The in-backward optimizers applied to ``module``'s parameters (for checkpointing;
    not meant to have ``step`` or ``zero_grad`` called by the user)."""
    optims = []
    for param in module.parameters():
        optims.extend(getattr(param, "_in_backward_optimizers", []))
    return optims
