"""Flags of the backend submodules: bools checked on assignment, set for a block."""

import contextlib
import types

__all__ = ["Flag", "FlagModule"]


class Flag:
    """A module attribute holding a bool that refuses other types, with PyTorch's
    message naming its C++ setter (``set_benchmark_cudnn expects a bool, ...``)."""

    def __init__(self, default, setter):
        self.default, self.setter = default, setter

    def __set_name__(self, owner, name):
        self.name = "_" + name

    def __get__(self, obj, objtype=None):
        return self if obj is None else obj.__dict__.get(self.name, self.default)

    def __set__(self, obj, value):
        if not isinstance(value, bool):
            raise RuntimeError(f"{self.setter} expects a bool, but got "
                               f"{type(value).__name__}")
        obj.__dict__[self.name] = value


class FlagModule(types.ModuleType):
    """The class a backend submodule takes (``sys.modules[__name__].__class__ = ...``) so
    that its flags are checked properties, as PyTorch's ``PropModule``."""

    @contextlib.contextmanager
    def _set(self, **values):
        """Set some flags for a ``with`` block, then restore them."""
        old = {k: getattr(self, k) for k in values}
        try:
            for k, v in values.items():
                setattr(self, k, v)
            yield
        finally:
            for k, v in old.items():
                setattr(self, k, v)
