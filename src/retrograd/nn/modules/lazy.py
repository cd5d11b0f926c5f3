"""Lazy modules: layers whose parameter shapes come from their first input.

A lazy module holds UninitializedParameters (and UninitializedBuffers) until its first
call; a forward pre-hook then asks it to ``initialize_parameters`` from the call's
arguments, removes itself, and turns the module into its ``cls_to_become`` (LazyLinear
into Linear). The parameters stay the same objects, so an optimizer made before the first
call updates the materialized ones.
"""

from ..parameter import is_lazy

__all__ = ["LazyModuleMixin"]


class LazyModuleMixin:
    """Mixed in before a layer class: ``class LazyLinear(LazyModuleMixin, Linear)``.

    >>> m = retrograd.nn.LazyLinear(2); m.has_uninitialized_params()
    True
    >>> _ = m(retrograd.ones(3, 4)); type(m).__name__, m.weight.shape
    ('Linear', torch.Size([2, 4]))
    """

    cls_to_become = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._initialize_hook = self.register_forward_pre_hook(_infer_parameters,
                                                               with_kwargs=True)

    def initialize_parameters(self, *args, **kwargs):
        """Materialize and initialize the parameters for a call with these arguments."""
        raise NotImplementedError(f"initialize_parameters is not implemented for "
                                  f"{type(self).__name__}")

    def has_uninitialized_params(self):
        """Whether a parameter or buffer of this module (not its children) is lazy."""
        return any(is_lazy(t) for t in (*self._parameters.values(), *self._buffers.values()))


def _infer_parameters(module, args, kwargs):
    """The forward pre-hook of a lazy module: initialize it once, then make it eager."""
    module.initialize_parameters(*args, **kwargs)
    if module.has_uninitialized_params():
        raise RuntimeError(f"module {module._get_name()} has not been fully initialized")
    module._initialize_hook.remove()
    del module._initialize_hook
    if module.cls_to_become is not None:
        module.__class__ = module.cls_to_become
