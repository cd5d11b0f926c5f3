"""A running module's path (``GPT.blocks.0.attn``): its caller's path and its name there.

Memory accounting names each allocation's module so, and checkpointing its determinism
errors. The path of a module called by no other is the one it had last (checkpointing
recomputes ``GPT.blocks.0`` in backward, outside ``GPT``), else its class name; a
module called by one it is not registered under is named ``<ClassName>`` there.
"""

import weakref

__all__ = ["PATHS", "ModulePaths"]


class _Ref(weakref.ref):
    __slots__ = ("key",)


class ModulePaths:
    """The paths of modules as they are called, remembered until each module dies."""

    def __init__(self):
        # id(module) -> (weak ref to it, id(caller), caller's path, name in caller, path)
        self._known = {}
        self._forget_cb = self._forget

    def path(self, module, parent=None, parent_path=""):
        """The path of ``module`` called by ``parent`` (whose path is ``parent_path``),
        or by no module (``parent`` None)."""
        k = self._known.get(id(module))
        if k is not None and k[0]() is module:
            if parent is None:
                return k[4]
            if k[1] == id(parent) and k[2] == parent_path \
                    and parent._modules.get(k[3]) is module:
                return k[4]
        if parent is None:
            name, path = "", type(module).__name__
        else:
            name = next((n for n, m in parent._modules.items() if m is module), None)
            path = f"{parent_path}.{name or '<' + type(module).__name__ + '>'}"
        ref = _Ref(module, self._forget_cb)
        ref.key = id(module)
        self._known[id(module)] = (ref, id(parent) if parent is not None else None,
                                   parent_path, name, path)
        return path

    def chain(self, modules):
        """The path of the last of ``modules``, each called by the one before it."""
        path, parent = "", None
        for m in modules:
            path = self.path(m, parent, path)
            parent = m
        return path

    def _forget(self, ref):
        k = self._known.get(ref.key)
        if k is not None and k[0] is ref:
            del self._known[ref.key]


PATHS = ModulePaths()
